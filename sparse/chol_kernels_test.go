package sparse

import (
	"math"
	"math/rand/v2"
	"testing"

	"glle/cgo"
	"glle/kernels"
)

// TestSolveKernelsAgree solves with one factor through the Go supernode loops (gonum's
// backend) and through the selected backend's native kernels (the C loops of the OpenBLAS
// build): for each, the parallel solve has the same bits as the sequential one, and the two
// agree to rounding.
func TestSolveKernelsAgree(t *testing.T) {
	cur := kernels.Current()
	defer kernels.Use(cur)
	if _, ok := cur.(kernels.SupernodalSolver); cgo.Enabled && !ok {
		t.Errorf("backend %s has no native supernodal solve kernels", cur.Name())
	}
	if _, ok := cur.(kernels.PanelSolver); cgo.Enabled && !ok {
		t.Errorf("backend %s has no native panel solve kernel", cur.Name())
	}
	if _, ok := cur.(kernels.NarrowGemmer); cgo.Enabled && !ok {
		t.Errorf("backend %s has no native narrow-product kernel", cur.Name())
	}
	if _, ok := cur.(kernels.SupernodalSplitter); cgo.Enabled && !ok {
		t.Errorf("backend %s has no split supernode kernels", cur.Name())
	}
	rng := rand.New(rand.NewPCG(41, 42))
	knn, _ := knnLLE(rng, 20000, 10)
	cases := []struct {
		name  string
		a     *testCSR
		shift float64
	}{
		// Widths around the Go path's BLAS edge (solveBLASWidth 128) and the C loops' 4/8 blocks.
		{"dense127", randomSPD(rng, 127, 126, true), -0.5},
		{"dense130", randomSPD(rng, 130, 129, true), -0.5},
		{"sparse1000", randomSPD(rng, 1000, 6, true), -0.5},
		// Large enough for subtree-parallel solves; the shift gives a condition number ~1e6.
		{"knn20000", knn, -1e-6},
	}
	for _, c := range cases {
		_, f := factorOrFatal(t, c.a, SymbolicOptions{Workers: 2}, c.shift)
		if c.name == "knn20000" && !f.parallelSolve() {
			t.Fatalf("%s: the schedule has no parallel subtrees", c.name)
		}
		if sp, ok := cur.(kernels.SupernodalSplitter); ok && c.name == "knn20000" {
			// The parallel solve splits the steps of the large top supernodes (splitter).
			splits := 0
			for _, top := range f.s.sched.top {
				w := int(f.s.sFirst[top+1] - f.s.sFirst[top])
				if sp.Splits(w, int(f.s.sRowPtr[top+1]-f.s.sRowPtr[top])-w) {
					splits++
				}
			}
			if splits == 0 {
				t.Fatalf("%s: no top supernode splits", c.name)
			}
		}
		n := c.a.n
		b := randVec(rng, n)
		var sols [][]float64
		for _, be := range []kernels.Backend{kernels.Native, cur} {
			kernels.Use(be)
			par, seq := make([]float64, n), make([]float64, n)
			f.Solve(par, b) // subtree-parallel when the schedule has subtrees
			y := f.y
			for k, o := range f.s.perm {
				y[k] = b[o]
			}
			f.forward(y)
			f.backward(y)
			for k, o := range f.s.perm {
				seq[o] = y[k]
			}
			for i := range par {
				if math.Float64bits(par[i]) != math.Float64bits(seq[i]) {
					t.Fatalf("%s %s: parallel solve %v differs from sequential %v at %d (parallel %v)",
						c.name, be.Name(), par[i], seq[i], i, f.parallelSolve())
				}
			}
			if r := relResidual(c.a, c.shift, par, b); r > residualTol {
				t.Fatalf("%s %s: residual %g", c.name, be.Name(), r)
			}
			sols = append(sols, par)
		}
		xn := 0.0
		for _, v := range sols[0] {
			xn = math.Max(xn, math.Abs(v))
		}
		for i := range sols[0] {
			// Forward error of either solve <= cond * eps * ||x|| (cond <= ~1e6 here).
			if d := math.Abs(sols[0][i] - sols[1][i]); d > 1e-9*xn {
				t.Fatalf("%s: Go loops %v vs %s kernels %v at %d", c.name, sols[0][i], cur.Name(), sols[1][i], i)
			}
		}
	}
}
