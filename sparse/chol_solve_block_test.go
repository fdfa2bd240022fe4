package sparse

import (
	"math"
	"math/rand/v2"
	"testing"

	"glle/cgo"
	"glle/kernels"
)

// TestSolveBlock checks the block solves against column-by-column Solve through the Go loops
// (gonum's backend) and the selected backend's native kernels, for block widths around the C
// kernels' specialisations (1-4, then the generic loop) and for factors with and without
// subtree-parallel solves: each column agrees with Solve to rounding, the parallel block solve
// has the bits of the sequential one, SolveMany (row-major) the bits of SolveBlock
// (column-major), and an aliased call the bits of a non-aliased one; one right-hand side gives
// Solve's bits.
func TestSolveBlock(t *testing.T) {
	cur := kernels.Current()
	defer kernels.Use(cur)
	if _, ok := cur.(kernels.SupernodalBlockSolver); cgo.Enabled && !ok {
		t.Errorf("backend %s has no native block solve kernels", cur.Name())
	}
	rng := rand.New(rand.NewPCG(43, 44))
	knn, _ := knnLLE(rng, 20000, 10)
	cases := []struct {
		name  string
		a     *testCSR
		shift float64
	}{
		{"dense130", randomSPD(rng, 130, 129, true), -0.5},
		{"sparse1000", randomSPD(rng, 1000, 6, true), -0.5},
		{"grid31x23", gridLaplacian(31, 23, true), -0.01},
		{"knn20000", knn, -1e-6}, // condition number ~1e6; subtree-parallel
	}
	for _, c := range cases {
		_, f := factorOrFatal(t, c.a, SymbolicOptions{Workers: 2}, c.shift)
		if c.name == "knn20000" && !f.parallelSolve() {
			t.Fatalf("%s: the schedule has no parallel subtrees", c.name)
		}
		n := c.a.n
		for _, nrhs := range []int{1, 2, 3, 4, 5, 8} {
			b := randVec(rng, n*nrhs)
			for _, be := range []kernels.Backend{kernels.Native, cur} {
				kernels.Use(be)
				x := make([]float64, n*nrhs)
				f.SolveBlock(x, b, nrhs)
				xc := make([]float64, n)
				for r := 0; r < nrhs; r++ {
					f.Solve(xc, b[r*n:(r+1)*n])
					for i := range xc {
						// Rounding of a solve with condition number <= 1e6 (knn case): the
						// block loops sum in another order than Solve's.
						if d := math.Abs(xc[i] - x[r*n+i]); d > 1e-9*(1+math.Abs(xc[i])) {
							t.Fatalf("%s %s nrhs=%d: column %d row %d: %g vs Solve %g", c.name, be.Name(), nrhs, r, i, x[r*n+i], xc[i])
						}
					}
				}
				if nrhs == 1 {
					// One right-hand side goes to Solve: same bits.
					f.Solve(xc, b)
					for i := range xc {
						if math.Float64bits(xc[i]) != math.Float64bits(x[i]) {
							t.Fatalf("%s %s: SolveBlock with one right-hand side differs from Solve at %d", c.name, be.Name(), i)
						}
					}
					continue
				}
				// Sequential block solve: same bits as the (possibly parallel) one.
				y := make([]float64, n*nrhs)
				for k, o := range f.s.perm {
					for r := 0; r < nrhs; r++ {
						y[k*nrhs+r] = b[r*n+o]
					}
				}
				tmp := make([]float64, f.s.maxUpdate*nrhs)
				f.forwardRangeBlock(be, 0, f.s.ns, y, tmp, nrhs, nil, nil)
				f.backwardRangeBlock(be, 0, f.s.ns, y, tmp, nrhs)
				for k, o := range f.s.perm {
					for r := 0; r < nrhs; r++ {
						if math.Float64bits(y[k*nrhs+r]) != math.Float64bits(x[r*n+o]) {
							t.Fatalf("%s %s nrhs=%d: parallel block solve differs from the sequential one", c.name, be.Name(), nrhs)
						}
					}
				}
				// Row-major SolveMany and aliasing.
				bm := make([]float64, n*nrhs)
				for i := 0; i < n; i++ {
					for r := 0; r < nrhs; r++ {
						bm[i*nrhs+r] = b[r*n+i]
					}
				}
				f.SolveMany(bm, bm, nrhs)
				al := append([]float64(nil), b...)
				f.SolveBlock(al, al, nrhs)
				for i := 0; i < n; i++ {
					for r := 0; r < nrhs; r++ {
						if bm[i*nrhs+r] != x[r*n+i] || al[r*n+i] != x[r*n+i] {
							t.Fatalf("%s %s nrhs=%d: SolveMany or aliased SolveBlock differs at row %d", c.name, be.Name(), nrhs, i)
						}
					}
				}
			}
		}
	}
}

// TestSolveBlockWorkersAgree: the block solve's bits do not depend on the worker count.
func TestSolveBlockWorkersAgree(t *testing.T) {
	rng := rand.New(rand.NewPCG(45, 46))
	a, _ := knnLLE(rng, 6000, 10)
	const nrhs = 3
	rhs := randVec(rng, a.n*nrhs)
	var ref []float64
	for _, w := range []int{1, 2, 3, 7} {
		_, f := factorOrFatal(t, a, SymbolicOptions{Ordering: OrderingND, Workers: w}, -1e-5)
		x := make([]float64, a.n*nrhs)
		f.SolveBlock(x, rhs, nrhs)
		if ref == nil {
			ref = x
			continue
		}
		for i := range x {
			if math.Float64bits(x[i]) != math.Float64bits(ref[i]) {
				t.Fatalf("workers=%d: block solve differs from workers=1 at %d", w, i)
			}
		}
	}
}
