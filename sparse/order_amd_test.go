package sparse

import (
	"context"
	"fmt"
	"math"
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

// TestAMDDenseVerticesLast: vertices of degree above denseDegree(n) are ordered last without
// being eliminated (a hub made AMD quadratic: 12 s at n = 100k before session 31, 0.1 s
// after), AMD then leaves the column counts to the analysis (cc[0] = -1), and the factor of a
// matrix with such rows still solves to round-off.
func TestAMDDenseVerticesLast(t *testing.T) {
	rng := rand.New(rand.NewPCG(41, 42))
	const n = 2000
	base := randomSPD(rng, n, 6, false)
	var is, js []int
	var vs []float64
	diag := make([]float64, n)
	for i := 0; i < n; i++ {
		for q := base.rowPtr[i]; q < base.rowPtr[i+1]; q++ {
			if j := base.colIdx[q]; j < i {
				is, js, vs = append(is, i), append(js, j), append(vs, base.val[q])
				diag[i] += math.Abs(base.val[q])
				diag[j] += math.Abs(base.val[q])
			}
		}
	}
	hubs := []int{5, 1717}
	for h, hub := range hubs {
		for j := 0; j < n; j += 1 + h { // hub 5 touches every vertex, 1717 every other one
			if j == hub {
				continue
			}
			v := 0.1 * (rng.Float64() - 0.5)
			i, jj := max(hub, j), min(hub, j)
			is, js, vs = append(is, i), append(js, jj), append(vs, v)
			diag[i] += math.Abs(v)
			diag[jj] += math.Abs(v)
		}
	}
	for i := 0; i < n; i++ {
		is, js, vs = append(is, i), append(js, i), append(vs, diag[i]+1)
	}
	a := csrFromTriplets(n, is, js, vs, true)
	for _, rule := range []pivotRule{ruleDegree, ruleMeanFill} {
		cc := make([]int32, n)
		p, err := amdOrderCounts(context.Background(), buildGraph(n, a.rowPtr, a.colIdx), make([]int32, 0, n), nil, cc, rule)
		if err != nil {
			t.Fatal(err)
		}
		seen := make([]bool, n)
		for _, v := range p {
			seen[v] = true
		}
		if len(p) != n || slices.Contains(seen, false) {
			t.Fatalf("rule %d: not a permutation of 0..%d", rule, n-1)
		}
		last := []int{int(p[n-2]), int(p[n-1])}
		slices.Sort(last)
		if !slices.Equal(last, hubs) || cc[0] != -1 {
			t.Errorf("rule %d: last two pivots %v (want the dense vertices %v), cc[0] = %d (want -1)", rule, last, hubs, cc[0])
		}
	}
	for _, o := range []Ordering{OrderingAMD, OrderingAMF} {
		for _, full := range []bool{true, false} {
			m := a
			if !full {
				m = csrFromTriplets(n, is, js, vs, false)
			}
			_, f := factorOrFatal(t, m, SymbolicOptions{Ordering: o, Workers: 2}, -0.5)
			b := randVec(rng, n)
			x := make([]float64, n)
			f.Solve(x, b)
			if r := relResidual(m, -0.5, x, b); r > residualTol {
				t.Errorf("%v full=%v: residual %g", o, full, r)
			}
		}
	}
}

// BenchmarkAMDHub orders a banded pattern (10 neighbours per vertex) with and without a hub
// adjacent to every vertex: the hub's cost is the dense-vertex rule's (denseDegree).
func BenchmarkAMDHub(b *testing.B) {
	for _, n := range []int{100000} {
		for _, hub := range []bool{false, true} {
			rowPtr, colIdx := []int{0}, []int{}
			for i := 0; i < n; i++ {
				for j := max(i-5, 0); j <= min(i+5, n-1); j++ {
					colIdx = append(colIdx, j)
				}
				if hub && i > 6 {
					colIdx = append(colIdx, 0)
				}
				if hub && i == 0 {
					for j := 6; j < n; j++ {
						colIdx = append(colIdx, j)
					}
				}
				rowPtr = append(rowPtr, len(colIdx))
			}
			b.Run(fmt.Sprintf("n=%d/hub=%v", n, hub), func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					g := buildGraph(n, rowPtr, colIdx)
					if _, err := amdOrder(context.Background(), g); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
