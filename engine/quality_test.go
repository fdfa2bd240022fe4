package engine_test

import (
	"context"
	"fmt"
	"math"
	"testing"

	"gonum.org/v1/gonum/mat"

	"glle/bench"
	"glle/engine"
)

// qualityN is the dataset size of the unfolding tests (the paper uses 5,000 before removal).
const qualityN = 5000

// Thresholds of the engine-core issue: trustworthiness (k = 10) >= 0.99 and max |Spearman| of an
// axis with the manifold coordinate >= 0.98 (the math notes' prototype reached >= 0.997 / 0.994).
const (
	minTrust    = 0.99
	minSpearman = 0.98
)

// Generations are random. Weight noise at a = 1 occasionally mixes M's bottom eigenvectors
// (LLE's spectral gaps are ~1e-9 relative): within the embedding's eigenspace, which only
// rotates the embedding and which Generate's default base frame undoes, and now and then with
// a higher mode, which folds it. Measured at n = 5000 over 480 generations (4 datasets x dataset
// seeds 1-3 x em/direct x 20, generation seed 1): 29 missed the thresholds in the eigenvector
// frame, 21 in the base frame (4.4%; generation seeds 0 and 7: 20 and 22), all but one on
// trustworthiness (a severed-sphere generation at 0.9988 had max |Spearman| 0.9721); dataset
// seeds 0-2 give 13. Session 23 measured 19 of 720 (2.6%) on other
// seeds (docs/performance.md, "Weight noise and folded generations"). This test's seeds give 1
// miss of 32 in both builds (scurve/direct/gen2, trustworthiness 0.9842). Over generation seeds
// 1-100 on this test's realizations (dataset seed 0; session 27) 96 of 3,200 generations missed
// (3.0%); the 100 seeds had 0, 1, 2, 3 and 4 misses 37, 40, 14, 8 and 1 times, so at most
// genMissAllowed of the 32 may miss the full thresholds (on dataset seeds 1-5, 30 generation
// seeds each, one of the 150 had 6). Every generation must clear the floors, which sit below the
// worst folds seen over those 8,000 generations (trustworthiness 0.9142 on this realization,
// Swiss roll with hole, generation seed 69; max |Spearman| 0.9505, S-curve dataset seed 5) and
// above what a broken model gives (the authors' EM: |Spearman| 0.29-0.83; their direct sampling:
// trustworthiness 0.57-0.59, reference notes).
const (
	floorTrust     = 0.90
	floorSpearman  = 0.94
	genMissAllowed = 4
)

// strictScale is the covariance scale at which every generation of the unfolding test must
// meet the full thresholds. On the test's realizations (dataset seed 0) all 3,200 generations
// over generation seeds 1-100 met them at a = 0.1 (session 27), against 6 misses at a = 0.25
// (all Swiss roll with hole, em) and 96 at a = 1; so a change of the draws does not trip this
// check by chance. On realizations where LLE's own embedding is half folded no scale tried
// makes every generation pass (docs/performance.md, session 26).
const strictScale = 0.1

// quality reports whether Y unfolds the manifold (full thresholds) and fails the test when it
// is below the floors (or below the full thresholds when strict).
func quality(t *testing.T, what string, X, Y *mat.Dense, color []float64, strict bool) bool {
	t.Helper()
	tr := bench.Trustworthiness(X, Y, 10)
	sp := bench.MaxAbsSpearman(Y, color)
	ok := tr >= minTrust && sp >= minSpearman
	switch {
	case strict && !ok:
		t.Errorf("%s: trustworthiness %.4f (>= %.2f), max |Spearman| %.4f (>= %.2f)", what, tr, minTrust, sp, minSpearman)
	case tr < floorTrust || sp < floorSpearman:
		t.Errorf("%s: trustworthiness %.4f (floor %.2f), max |Spearman| %.4f (floor %.2f)", what, tr, floorTrust, sp, floorSpearman)
	default:
		t.Logf("%s: trustworthiness %.4f, max |Spearman| %.4f", what, tr, sp)
	}
	return ok
}

func TestDefaultMethodsUnfoldPaperDatasets(t *testing.T) {
	if testing.Short() {
		t.Skip("unfolding tests take a few seconds")
	}
	ctx := context.Background()
	misses := 0
	for _, name := range bench.DatasetNames() {
		X, color, err := bench.Dataset(name, qualityN, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, meth := range []engine.Method{engine.LLE, engine.EM, engine.Direct} {
			m, err := engine.Fit(ctx, X, engine.Settings{Method: meth})
			if err != nil {
				t.Fatalf("%s %v: %v", name, meth, err)
			}
			quality(t, name+"/"+meth.String()+"/base", X, m.Embedding, color, true)
			if !meth.Generative() {
				continue
			}
			// Four generations at a = 1 (at most genMissAllowed misses over all datasets), then
			// the same four at strictScale, where every one must meet the full thresholds.
			for _, a := range []float64{1, strictScale} {
				strict := a == strictScale
				for g := 0; g < 4; g++ {
					Y, _, err := m.Generate(ctx, 1, g, a)
					if err != nil {
						t.Fatalf("%s %v generation %d at a = %g: %v", name, meth, g, a, err)
					}
					what := fmt.Sprintf("%s/%v/gen%d", name, meth, g)
					if strict {
						what += fmt.Sprintf("/a=%g", a)
					}
					if !quality(t, what, X, Y, color, strict) && !strict {
						misses++
					}
				}
			}
		}
	}
	if misses > genMissAllowed {
		t.Errorf("%d of 32 generations missed the thresholds (allowed %d)", misses, genMissAllowed)
	}
	t.Logf("%d of 32 generations missed trustworthiness %.2f / Spearman %.2f", misses, minTrust, minSpearman)
}

// TestGenerateFrames checks that both frames return the same eigenspace, that the base frame
// is the eigenvector frame times an orthogonal matrix, and that it is the closest such
// rotation of the generation to the base embedding.
func TestGenerateFrames(t *testing.T) {
	ctx := context.Background()
	X, _ := bench.SwissRoll(2000, 6)
	m, err := engine.Fit(ctx, X, engine.Settings{Method: engine.EM})
	if err != nil {
		t.Fatal(err)
	}
	ye, _, err := m.GenerateIn(ctx, 3, 1, 1, engine.FrameEigen)
	if err != nil {
		t.Fatal(err)
	}
	yb, _, err := m.GenerateIn(ctx, 3, 1, 1, engine.FrameBase)
	if err != nil {
		t.Fatal(err)
	}
	yd, _, err := m.Generate(ctx, 3, 1, 1)
	if err != nil {
		t.Fatal(err)
	}
	if !mat.Equal(yb, yd) {
		t.Error("Generate does not default to the base frame")
	}
	// R = Ye^T Yb (the columns of Ye are orthonormal) must be orthogonal and Ye R = Yb.
	var r, rr, back mat.Dense
	r.Mul(ye.T(), yb)
	rr.Mul(r.T(), &r)
	// Round-off of orthonormal n = 2000 columns and a 2 x 2 SVD: ~1e-14; 1e-10 leaves room.
	if !mat.EqualApprox(&rr, eye(2), 1e-10) {
		t.Errorf("Ye^T Yb is not orthogonal: R^T R = %v", mat.Formatted(&rr))
	}
	back.Mul(ye, &r)
	if !mat.EqualApprox(&back, yb, 1e-10) {
		t.Error("the base-frame generation is not the eigenvector-frame generation times Ye^T Yb")
	}
	// Closest to the base embedding: no small rotation of Yb gets closer.
	dist := func(y mat.Matrix) float64 {
		var d mat.Dense
		d.Sub(y, m.Embedding)
		return mat.Norm(&d, 2)
	}
	d0 := dist(yb)
	for _, th := range []float64{-1e-3, 1e-3} {
		c, s := math.Cos(th), math.Sin(th)
		var rot mat.Dense
		rot.Mul(yb, mat.NewDense(2, 2, []float64{c, -s, s, c}))
		// Rotating by 1e-3 raised the distance by 4.8e-6 (measured); the two 2-norms round at
		// about n u ||.|| = 2000 * 1.1e-16 * 0.2 = 4.4e-14, which 1e-12 absorbs.
		if d := dist(&rot); d < d0-1e-12 {
			t.Errorf("rotating the base-frame generation by %g brings it closer to the base: %g < %g", th, d, d0)
		}
	}
	if _, _, err := m.GenerateIn(ctx, 3, 1, 1, engine.Frame(7)); err == nil {
		t.Error("unknown frame accepted")
	}
}

func eye(n int) *mat.Dense {
	e := mat.NewDense(n, n, nil)
	for i := 0; i < n; i++ {
		e.Set(i, i, 1)
	}
	return e
}

func TestAffineInvariance(t *testing.T) {
	ctx := context.Background()
	X, _ := bench.SwissRoll(1500, 3)
	n, d := X.Dims()
	Xt := mat.NewDense(n, d, nil)
	shift := []float64{250, -75, 1e3}
	Xt.Apply(func(i, j int, v float64) float64 { return 3.7*v + shift[j] }, X)
	for _, meth := range []engine.Method{engine.LLE, engine.EM, engine.Direct} {
		a, err := engine.Fit(ctx, X, engine.Settings{Method: meth})
		if err != nil {
			t.Fatal(err)
		}
		b, err := engine.Fit(ctx, Xt, engine.Settings{Method: meth})
		if err != nil {
			t.Fatal(err)
		}
		// Issue tolerance: Procrustes disparity <= 1e-6 for x -> c x + b.
		if dd := bench.ProcrustesDisparity(a.Embedding, b.Embedding); dd > 1e-6 {
			t.Errorf("%v base: disparity %g after x -> 3.7 x + b", meth, dd)
		}
		if !meth.Generative() {
			continue
		}
		ya, _, err := a.Generate(ctx, 9, 0, 1)
		if err != nil {
			t.Fatal(err)
		}
		yb, _, err := b.Generate(ctx, 9, 0, 1)
		if err != nil {
			t.Fatal(err)
		}
		// 1e-6, as for the base: the draws are keyed by (seed, generation, point) and
		// basis-independent, and the default methods' Gamma_i and sigma_i are scale-free, so a
		// generation of the transformed data differs from the original only by round-off
		// carried through the same eigensolve.
		if dd := bench.ProcrustesDisparity(ya, yb); dd > 1e-6 {
			t.Errorf("%v generation: disparity %g after x -> 3.7 x + b", meth, dd)
		}
	}
}

func TestCovarianceScale(t *testing.T) {
	ctx := context.Background()
	X, _ := bench.SwissRoll(2000, 4)
	for _, meth := range []engine.Method{engine.EM, engine.Direct} {
		m, err := engine.Fit(ctx, X, engine.Settings{Method: meth})
		if err != nil {
			t.Fatal(err)
		}
		prev := -1.0
		for _, a := range []float64{0.01, 1, 10} {
			Y, _, err := m.Generate(ctx, 5, 0, a)
			if err != nil {
				t.Fatal(err)
			}
			dd := bench.ProcrustesDisparity(m.Embedding, Y)
			t.Logf("%v a=%g: disparity to LLE %.3g", meth, a, dd)
			// Math notes: a = 0.01 is Procrustes-identical to LLE (disparity <= 0.01).
			if a == 0.01 && dd > 0.01 {
				t.Errorf("%v a=0.01: disparity %g > 0.01", meth, dd)
			}
			if dd < prev {
				t.Errorf("%v: disparity fell from %g to %g as a grew to %g", meth, prev, dd, a)
			}
			prev = dd
		}
	}
}

// TestSparseLLEUnrolls50k runs LLE through the sparse path at n = 50,000, past the dense
// solver's reach, and checks the Swiss roll is unrolled (sparse-solver issue: max |Spearman| of
// an axis with the roll angle >= 0.99) and that the eigenpairs meet the solver tolerance.
func TestSparseLLEUnrolls50k(t *testing.T) {
	if testing.Short() {
		t.Skip("n = 50,000")
	}
	X, angle := bench.SwissRoll(50000, 5)
	m, err := engine.Fit(context.Background(), X, engine.Settings{})
	if err != nil {
		t.Fatal(err)
	}
	sp := bench.MaxAbsSpearman(m.Embedding, angle)
	er := m.Report.Eigen
	t.Logf("n=50000: Spearman %.5f, eigenvalues %v, %d solves, nnz(L)/row %.1f, residual %.2g, stages %v",
		sp, m.Eigenvalues, er.OpApplies, float64(er.NNZL)/50000, er.MaxResidual, m.Report.Stages)
	if sp < 0.99 {
		t.Errorf("max |Spearman| %.4f < 0.99", sp)
	}
	// 1e-10 is the eigensolver's own stopping tolerance (sparseTol in engine/sparse_embed.go).
	if er.Solver != "sparse" || er.MaxResidual > 1e-10 {
		t.Errorf("solver %q, relative residual %g (want sparse, <= 1e-10)", er.Solver, er.MaxResidual)
	}
}
