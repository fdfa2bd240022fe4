package engine

import (
	"context"
	"math"
	"testing"

	"glle/bench"
	"glle/kernels"
)

// TestBackendsAgree fits the same problems with the registered backend (OpenBLAS in the default
// build) and with gonum's native Go, in one process. Per-point kernels are the same Go code in
// both, so weights and draws must be identical; embeddings go through different BLAS/LAPACK
// and must agree as subspaces.
func TestBackendsAgree(t *testing.T) {
	X, _ := bench.SwissRoll(1500, 11)
	cur := kernels.Current()
	skipOneBackend(t, cur)
	defer kernels.Use(cur)
	for _, meth := range []Method{LLE, EM, Direct} {
		for _, solver := range []Solver{SolverSparse, SolverDense, SolverSparseCholesky} {
			kernels.Use(cur)
			a, err := Fit(context.Background(), X, Settings{Method: meth, Solver: solver})
			if err != nil {
				t.Fatal(err)
			}
			kernels.Use(kernels.Native)
			b, err := Fit(context.Background(), X, Settings{Method: meth, Solver: solver})
			if err != nil {
				t.Fatal(err)
			}
			for i := range a.Weights {
				if a.Weights[i] != b.Weights[i] {
					t.Fatalf("%v: weights differ between backends at %d", meth, i)
				}
			}
			// Eigensolver tolerance 1e-10 ||M|| over a spectral gap of ~1e-8 ||M|| bounds the
			// subspace angle near 1e-2 in theory; measured agreement is far tighter (at most
			// 4.1e-10 over the methods and solvers here, session 32), so 1e-6 keeps a margin of
			// 2000x and still fails on a real backend difference.
			if s := maxPrincipalSine(a.Embedding, b.Embedding); s > 1e-6 {
				t.Errorf("%v %v: embeddings differ between %s and gonum: sine %g", meth, solver, cur.Name(), s)
			}
			if meth == LLE {
				continue
			}
			kernels.Use(cur)
			ya, _, err := a.Generate(context.Background(), 3, 0, 1)
			if err != nil {
				t.Fatal(err)
			}
			kernels.Use(kernels.Native)
			yb, _, err := b.Generate(context.Background(), 3, 0, 1)
			if err != nil {
				t.Fatal(err)
			}
			if s := maxPrincipalSine(ya, yb); s > 1e-6 {
				t.Errorf("%v %v generation: sine %g between backends", meth, solver, s)
			}
		}
	}
}

// TestPaperModesAcrossBackends states what the paper-exact modes guarantee across backends.
// Their per-point parameters are well conditioned and agree closely; em-paper's embedding is
// not determined by the data (its M has several eigenvalues at round-off: the authors' ridge,
// see docs/robustness.md), so only its eigenvalues and residuals are compared, never its
// vectors; direct-paper's base embeddings agree as subspaces, and a generation from one model
// agrees across backends to 1e-4, while generations of two separate fits agree less closely,
// to 1e-3 (Gamma_i amplifies the base embeddings' round-off difference, measured sine 1.5e-4
// at n = 5000).
func TestPaperModesAcrossBackends(t *testing.T) {
	X, _ := bench.SwissRoll(1500, 11)
	cur := kernels.Current()
	skipOneBackend(t, cur)
	defer kernels.Use(cur)
	ctx := context.Background()
	fit := func(be kernels.Backend, s Settings) *Model {
		kernels.Use(be)
		m, err := Fit(ctx, X, s)
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	// em-paper. Its weights and sigma_i to 1e-8 relative: the tolerance issue 2 sets for them
	// against the authors' code (fixtures), which a backend's round-off must not exceed.
	s := Settings{Method: EMPaper}
	a, b := fit(cur, s), fit(kernels.Native, s)
	for i := range a.Weights {
		if d := math.Abs(a.Weights[i] - b.Weights[i]); d > 1e-8*(1+math.Abs(a.Weights[i])) {
			t.Fatalf("em-paper: mean weight %d differs between backends: %g vs %g", i, a.Weights[i], b.Weights[i])
		}
	}
	for i := range a.Sigma {
		if d := math.Abs(a.Sigma[i] - b.Sigma[i]); d > 1e-8*math.Abs(a.Sigma[i]) {
			t.Fatalf("em-paper: sigma %d differs between backends: %g vs %g", i, a.Sigma[i], b.Sigma[i])
		}
	}
	// The eigenvalues agree to round-off (measured |difference| 8e-17 and 3.3e-16 on values
	// -3.8e-16 and 2.1e-8, session 35) and both eigensolves meet their tolerance (relative
	// residuals 5.8e-12 against the solver's 1e-10); the vectors differ (sine 0.35 here, up
	// to 0.97 at n = 5000), as any basis of the round-off eigenspace is as good as another.
	for j := range a.Eigenvalues {
		if d := math.Abs(a.Eigenvalues[j] - b.Eigenvalues[j]); d > 1e-12 {
			t.Errorf("em-paper eigenvalue %d: %g (%s) vs %g (gonum)", j, a.Eigenvalues[j], cur.Name(), b.Eigenvalues[j])
		}
	}
	if ra, rb := a.Report.Eigen.MaxResidual, b.Report.Eigen.MaxResidual; !(ra <= 1e-9 && rb <= 1e-9) {
		t.Errorf("em-paper residuals %g (%s), %g (gonum): want <= 1e-9", ra, cur.Name(), rb)
	}
	// direct-paper.
	s = Settings{Method: DirectPaper, DirectRidge: 1e-6}
	a, b = fit(cur, s), fit(kernels.Native, s)
	sb := maxPrincipalSine(a.Embedding, b.Embedding)
	kernels.Use(cur)
	ya, _, err := a.Generate(ctx, 3, 0, 1)
	if err != nil {
		t.Fatal(err)
	}
	yb, _, err := b.Generate(ctx, 3, 0, 1)
	if err != nil {
		t.Fatal(err)
	}
	kernels.Use(kernels.Native)
	yn, _, err := a.Generate(ctx, 3, 0, 1)
	if err != nil {
		t.Fatal(err)
	}
	// Measured (session 35): base 8.7e-11, one model's generation 3.8e-6, separate fits'
	// generations 2.8e-5 (n = 1500); at n = 5000 a trial measured 6e-8 and 1.5e-4 through
	// the binary. The generation's eigensolve (tolerance 1e-10 ||M|| over its spectral gap)
	// bounds one model's agreement; separate fits add Gamma_i's amplification of the base
	// embeddings' difference. The limits keep a margin of 10-30x.
	if sb > 1e-6 {
		t.Errorf("direct-paper base embeddings: sine %g between %s and gonum", sb, cur.Name())
	}
	if s := maxPrincipalSine(ya, yn); s > 1e-4 {
		t.Errorf("direct-paper generation of one model: sine %g between %s and gonum", s, cur.Name())
	}
	if s := maxPrincipalSine(ya, yb); s > 1e-3 {
		t.Errorf("direct-paper generations of separate fits: sine %g between %s and gonum", s, cur.Name())
	}
}

// skipOneBackend skips a cross-backend comparison in a build with gonum's native backend only
// (purego), where it would compare the backend with itself; the default build runs it.
func skipOneBackend(t *testing.T, cur kernels.Backend) {
	t.Helper()
	if cur.Name() == kernels.Native.Name() {
		t.Skip("one backend in this build (gonum's native): the OpenBLAS build compares the two")
	}
}
