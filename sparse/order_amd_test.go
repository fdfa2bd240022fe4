package sparse

import (
	"context"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestAMDColumnCounts checks the column counts AMD records as it eliminates (amdOrderCounts:
// the pivot block's size plus the weight of its element) against the row-subtree algorithm
// (colCounts) on the postordered elimination tree of the same ordering, for both pivot rules
// (degree and mean fill): random patterns of all densities, kNN matrices as the engine builds
// them, and a grid.
func TestAMDColumnCounts(t *testing.T) {
	for _, rule := range []pivotRule{ruleDegree, ruleMeanFill} {
		testAMDColumnCounts(t, rule)
	}
}

func testAMDColumnCounts(t *testing.T, rule pivotRule) {
	rng := rand.New(rand.NewPCG(5, 6))
	check := func(a *testCSR, what string) {
		n := a.n
		cc := make([]int32, n)
		p, err := amdOrderCounts(context.Background(), buildGraph(n, a.rowPtr, a.colIdx), make([]int32, 0, n), nil, cc, rule)
		if err != nil {
			t.Fatal(err)
		}
		adj := adjacency[int]{a.rowPtr, a.colIdx}
		ip := make([]int32, n)
		for k, v := range p {
			ip[v] = int32(k)
		}
		parent := make([]int32, n)
		etree(adj, p, ip, parent, make([]int32, n))
		// colCounts needs a postordered tree: renumber the ordering by a postorder.
		p2, post := postorderRelabel(p, ip, parent, make([]int32, n))
		got := make([]int32, n)
		for k, j := range post {
			got[k] = cc[j]
		}
		want := colCounts(adj, p2, ip, parent)
		if !slices.Equal(got, want) {
			bad := 0
			for k := range got {
				if got[k] != want[k] {
					bad++
				}
			}
			t.Errorf("rule %d, %s, n = %d: %d of %d column counts from AMD differ from colCounts'", rule, what, n, bad, n)
		}
	}
	for trial := 0; trial < 200; trial++ {
		n := 1 + rng.IntN(500)
		check(randomSPD(rng, n, rng.IntN(16), true), "random pattern")
	}
	sizes := []int{1000, 20000, 100000}
	if testing.Short() {
		sizes = sizes[:2]
	}
	for _, n := range sizes {
		a, _ := knnLLE(rng, n, 10)
		check(a, "kNN matrix")
	}
	check(gridLaplacian(60, 70, true), "grid Laplacian")
}

// TestAMFFewerFlops checks the reason OrderingAMF is the default: on the matrices of kNN graphs
// of 2-D manifolds (k = 10) from n = 50000 on it needs fewer factorization flops and no more
// entries of L than AMD. The gain grows with n (the LU of the Swiss roll's B = I - W: 2.92 ->
// 2.20 GFlop at n = 200k, 40.2 -> 29.2 at 1M); at n = 5000 the two orderings are within a few
// percent of each other either way, and on a 100 x 120 grid Laplacian AMF needs 2% more flops
// for 2% fewer entries.
func TestAMFFewerFlops(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	ctx := context.Background()
	compare := func(what string, analyse func(o Ordering) *Symbolic) {
		var flops [2]float64
		var nnz [2]int64
		for i, o := range []Ordering{OrderingAMD, OrderingAMF} {
			s := analyse(o)
			if s.Ordering() != o {
				t.Fatalf("%s: the analysis used %v, want %v", what, s.Ordering(), o)
			}
			flops[i], nnz[i] = s.Flops(), s.ExactNNZ()
		}
		t.Logf("%s: AMD %.4g flops, %d entries of L; AMF %.4g flops, %d entries", what, flops[0], nnz[0], flops[1], nnz[1])
		if !(flops[1] < flops[0]) || nnz[1] > nnz[0] {
			t.Errorf("%s: AMF %.4g flops and %d entries of L against AMD's %.4g and %d", what, flops[1], nnz[1], flops[0], nnz[0])
		}
	}
	const n = 50000
	a, _ := knnLLE(rng, n, 10)
	compare("M of a kNN graph, n = 50000", func(o Ordering) *Symbolic {
		s, err := Analyze(ctx, a.n, a.rowPtr, a.colIdx, SymbolicOptions{Ordering: o})
		if err != nil {
			t.Fatal(err)
		}
		return s
	})
	// B + B^T's pattern, which the engine's LU path orders.
	_, nb, w := knnWeights(rng, n, 10, 0.1)
	bp, err := NewBPattern(ctx, n, 10, nb, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := bp.Fill(ctx, w, 0); err != nil {
		t.Fatal(err)
	}
	compare("B + B^T of a kNN graph, n = 50000", func(o Ordering) *Symbolic {
		g, err := NewGramLU(ctx, bp, SymbolicOptions{Ordering: o})
		if err != nil {
			t.Fatal(err)
		}
		return g.Symbolic()
	})
}
