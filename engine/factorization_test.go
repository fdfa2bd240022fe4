package engine

import (
	"context"
	"errors"
	"math"
	"strings"
	"sync"
	"testing"

	"glle/bench"
	"glle/sparse"
)

// TestSparseFactorizations fits the Swiss roll through the LU path (SolverSparse: B = I - W),
// the Cholesky path (SolverSparseCholesky: M - sigma I) and the dense oracle, and checks that
// they agree: eigenvalues, embeddings as subspaces, and a generation.
func TestSparseFactorizations(t *testing.T) {
	X, _ := bench.SwissRoll(1500, 21)
	ctx := context.Background()
	// The paper modes' weights need not sum to one: they always factor M (their embeddings
	// are not compared: the EMPaper spectrum is degenerate at the bottom).
	for _, meth := range []Method{EMPaper, DirectPaper} {
		m, err := Fit(ctx, X, Settings{Method: meth, DirectRidge: 1e-3})
		if err != nil {
			t.Fatal(err)
		}
		if f := m.Report.Eigen.Factorization; f != "cholesky" {
			t.Errorf("%v: factorization %q, want cholesky", meth, f)
		}
	}
	for _, meth := range []Method{LLE, EM, Direct} {
		fits := map[Solver]*Model{}
		for _, solver := range []Solver{SolverSparse, SolverSparseCholesky, SolverDense} {
			m, err := Fit(ctx, X, Settings{Method: meth, Solver: solver})
			if err != nil {
				t.Fatalf("%v %v: %v", meth, solver, err)
			}
			fits[solver] = m
		}
		want := map[Solver]string{SolverSparse: "lu", SolverSparseCholesky: "cholesky"}
		dense := fits[SolverDense]
		for solver, f := range want {
			m := fits[solver]
			if got := m.Report.Eigen.Factorization; got != f || m.Report.Eigen.LUFallback != "" {
				t.Errorf("%v %v: factorization %q (fallback %q), want %q", meth, solver, got, m.Report.Eigen.LUFallback, f)
			}
			for j, v := range m.Eigenvalues {
				// Dense and sparse resolve eigenvalues ~1e-8 to about 1e-16 ||M|| / lambda
				// relative; 1e-5 leaves room for the dense oracle's own error.
				if d := math.Abs(v - dense.Eigenvalues[j]); d > 1e-5*dense.Eigenvalues[j] {
					t.Errorf("%v %v: eigenvalue %d = %g, dense %g", meth, solver, j, v, dense.Eigenvalues[j])
				}
			}
			// Tolerance as in TestBackendsAgree.
			if s := maxPrincipalSine(m.Embedding, dense.Embedding); s > 1e-6 {
				t.Errorf("%v %v: embedding differs from the dense solver's: sine %g", meth, solver, s)
			}
		}
		if meth == LLE {
			continue
		}
		ya, _, err := fits[SolverSparse].Generate(ctx, 5, 0, 1)
		if err != nil {
			t.Fatal(err)
		}
		yb, rb, err := fits[SolverSparseCholesky].Generate(ctx, 5, 0, 1)
		if err != nil {
			t.Fatal(err)
		}
		if rb.Eigen.Factorization != "cholesky" {
			t.Errorf("%v: SolverSparseCholesky generation used %q", meth, rb.Eigen.Factorization)
		}
		if s := maxPrincipalSine(ya, yb); s > 1e-6 {
			t.Errorf("%v generation: LU and Cholesky paths differ: sine %g", meth, s)
		}
	}
}

// TestLUFallback makes the LU eigensolve fail and checks that the fit and a generation fall
// back to M's Cholesky factor, report it, and give the same embeddings.
func TestLUFallback(t *testing.T) {
	X, _ := bench.SwissRoll(2000, 22)
	ctx := context.Background()
	ref, err := Fit(ctx, X, Settings{Method: EM})
	if err != nil {
		t.Fatal(err)
	}
	yref, _, err := ref.Generate(ctx, 2, 0, 1)
	if err != nil {
		t.Fatal(err)
	}
	luFailHook = func() error { return &sparse.PivotError{Column: 7, Pivot: 1e-12} }
	defer func() { luFailHook = nil }()
	var events []Progress
	var mu sync.Mutex
	m, err := Fit(ctx, X, Settings{Method: EM, Progress: func(p Progress) {
		mu.Lock()
		events = append(events, p)
		mu.Unlock()
	}})
	if err != nil {
		t.Fatal(err)
	}
	// Each eigensolve attempt opens and closes its stage: before session 36 the LU attempt
	// opened it and the Cholesky attempt opened it again, with one close for both.
	open, attempts := false, 0
	for _, p := range events {
		if p.Stage != "eigensolve" {
			continue
		}
		if p.Final == !open {
			t.Fatalf("eigensolve events %v: an attempt opens before the last closed, or closes twice", events)
		}
		open = !p.Final
		if !p.Final {
			attempts++
		}
	}
	if open || attempts != 2 {
		t.Errorf("eigensolve events %v: want two attempts, each opened and closed", events)
	}
	er := m.Report.Eigen
	if er.Factorization != "cholesky" || er.LUFallback == "" || er.NNZM == 0 {
		t.Fatalf("factorization %q, fallback %q, nnz(M) %d: want the Cholesky fallback reported", er.Factorization, er.LUFallback, er.NNZM)
	}
	// The report counts the failed LU attempt too: its factorization at shift 0 and its
	// products (the hook fails it after a full solve, the one ref ran). Before session 31
	// the Cholesky run's counts replaced them.
	lu := ref.Report.Eigen
	if er.Factorizations < 2 || len(er.Shifts) != er.Factorizations || er.Shifts[0] != 0 || er.OpApplies <= lu.OpApplies {
		t.Errorf("fallback report: %d factorizations, shifts %v, %d products; want the LU attempt's (shift 0, %d products) included",
			er.Factorizations, er.Shifts, er.OpApplies, lu.OpApplies)
	}
	if s := maxPrincipalSine(m.Embedding, ref.Embedding); s > 1e-6 { // as TestBackendsAgree
		t.Errorf("fallback embedding differs: sine %g", s)
	}
	y, rep, err := m.Generate(ctx, 2, 0, 1)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Eigen.Factorization != "cholesky" || rep.Eigen.LUFallback == "" {
		t.Errorf("generation: factorization %q, fallback %q", rep.Eigen.Factorization, rep.Eigen.LUFallback)
	}
	if s := maxPrincipalSine(y, yref); s > 1e-6 {
		t.Errorf("fallback generation differs: sine %g", s)
	}
}

// TestDenseFallback: when the sparse Cholesky path fails to converge on a problem of at most
// denseFallbackN points, the generation falls back to the dense solver and returns its
// embedding, the one a SolverDense model gives.
func TestDenseFallback(t *testing.T) {
	X, _ := bench.SwissRoll(600, 23)
	ctx := context.Background()
	dense, err := Fit(ctx, X, Settings{Method: EM, Solver: SolverDense})
	if err != nil {
		t.Fatal(err)
	}
	yref, _, err := dense.Generate(ctx, 4, 1, 1)
	if err != nil {
		t.Fatal(err)
	}
	m, err := Fit(ctx, X, Settings{Method: EM, Solver: SolverSparseCholesky})
	if err != nil {
		t.Fatal(err)
	}
	cholFailHook = func() error { return &sparse.NotConvergedError{NEV: 2, Residual: 1} }
	defer func() { cholFailHook = nil }()
	y, rep, err := m.Generate(ctx, 4, 1, 1)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Eigen.Solver != "dense" || !strings.Contains(rep.Eigen.DenseFallback, "did not converge") {
		t.Fatalf("generation solver %q, reason %q: want the dense fallback, with its reason (reported since session 31)", rep.Eigen.Solver, rep.Eigen.DenseFallback)
	}
	if s := maxPrincipalSine(y, yref); s > 1e-6 { // as TestBackendsAgree
		t.Errorf("fallback generation differs from the dense solver's: sine %g", s)
	}
}

// TestFitNotConvergedAdvice: a fit above the dense fallback's size whose sparse eigensolve
// does not converge names the dense solver; the advice to lower the covariance scale, which a
// fit does not have, is for generations (a user trial, session 31).
func TestFitNotConvergedAdvice(t *testing.T) {
	X, _ := bench.SwissRoll(denseFallbackN+100, 24)
	cholFailHook = func() error { return &sparse.NotConvergedError{NEV: 2, Residual: 1} }
	defer func() { cholFailHook = nil }()
	_, err := Fit(context.Background(), X, Settings{Method: EM, Solver: SolverSparseCholesky})
	if err == nil || !strings.Contains(err.Error(), "-solver dense") || strings.Contains(err.Error(), "covariance scale") {
		t.Fatalf("got %v, want the advice to use the dense solver", err)
	}
	// Typed (a library user trial: the errors were untyped, and the binary exited 1 as for an
	// internal failure): the fit's geometry, or a generation's covariance scale.
	var de *DegenerateError
	if !errors.As(err, &de) || de.Kind != "no-spectral-gap" {
		t.Errorf("the fit's error %T %v, want a no-spectral-gap DegenerateError", err, err)
	}
	cholFailHook = nil
	m, err := Fit(context.Background(), X, Settings{Method: EM, Solver: SolverSparseCholesky})
	if err != nil {
		t.Fatal(err)
	}
	cholFailHook = func() error { return &sparse.NotConvergedError{NEV: 2, Residual: 1} }
	_, _, err = m.Generate(context.Background(), 1, 0, 1)
	var ie *InputError
	if !errors.As(err, &ie) || !strings.Contains(err.Error(), "try a smaller covariance scale") {
		t.Errorf("a generation's error %T %v, want an InputError advising a smaller covariance scale", err, err)
	}
}
