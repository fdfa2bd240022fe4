package sparse

import (
	"context"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestAMDColumnCounts checks the column counts AMD records as it eliminates (amdOrderCounts:
// the pivot block's size plus the weight of its element) against the row-subtree algorithm
// (colCounts) on the postordered elimination tree of the same ordering: random patterns of
// all densities, kNN matrices as the engine builds them, and a grid.
func TestAMDColumnCounts(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	check := func(a *testCSR, what string) {
		n := a.n
		cc := make([]int32, n)
		p, err := amdOrderCounts(context.Background(), buildGraph(n, a.rowPtr, a.colIdx), make([]int32, 0, n), nil, cc)
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
			t.Errorf("%s, n = %d: %d of %d column counts from AMD differ from colCounts'", what, n, bad, n)
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
