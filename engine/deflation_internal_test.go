package engine

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"glle/bench"
	"glle/sparse"
)

// eigResidual returns max over the columns y of Y (unit norm) of ||M y - lambda y|| /
// ||M||_inf, M = (I - W)^T (I - W) of the weights w (Eq. (39)), lambda the Rayleigh quotient.
func eigResidual(t *testing.T, m *Model, w []float64, Y []float64, p int) float64 {
	t.Helper()
	n, k := m.N, m.K
	y := make([]float64, n)
	my := make([]float64, n)
	u := make([]float64, n)
	normInf := 0.0
	{
		// ||M||_inf <= ||(I-W)^T||_inf ||I-W||_inf: enough for a relative scale.
		colSum := make([]float64, n)
		rowMax := 0.0
		for i := 0; i < n; i++ {
			r := 1.0
			colSum[i]++
			for j := 0; j < k; j++ {
				r += math.Abs(w[i*k+j])
				colSum[m.Neighbors[i*k+j]] += math.Abs(w[i*k+j])
			}
			rowMax = math.Max(rowMax, r)
		}
		cm := 0.0
		for _, v := range colSum {
			cm = math.Max(cm, v)
		}
		normInf = rowMax * cm
	}
	worst := 0.0
	for c := 0; c < p; c++ {
		for i := range y {
			y[i] = Y[i*p+c]
		}
		nrm := math.Sqrt(dotF(y, y))
		for i := range y {
			y[i] /= nrm
		}
		mulM(my, y, u, k, m.Neighbors, w)
		lam := dotF(y, my)
		r := 0.0
		for i := range y {
			d := my[i] - lam*y[i]
			r += d * d
		}
		worst = math.Max(worst, math.Sqrt(r)/normInf)
	}
	return worst
}

func dotF(a, b []float64) float64 {
	s := 0.0
	for i := range a {
		s += a[i] * b[i]
	}
	return s
}

// TestDirectPaperGenerationNotDeflated: DirectPaper draws w_i ~ N(w_i^LLE, Gamma_i) (Eq. (36))
// without the sum-to-one condition, so the constant vector is not M's null vector and must not
// be deflated: the generation takes the Dim+1 smallest eigenvectors of M and drops the
// smallest, as the paper and the authors' code do. With the constant deflated the sparse
// solver could not converge (true residuals stalled at 1e-4 ||M||) and failed above the dense
// fallback's n = 3000; n = 3200 here keeps that fallback out.
func TestDirectPaperGenerationNotDeflated(t *testing.T) {
	ctx := context.Background()
	X, _ := bench.SwissRoll(3200, 3)
	m, err := Fit(ctx, X, Settings{Method: DirectPaper, DirectRidge: 1e-3, Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	if !m.Report.Eigen.Deflated {
		t.Fatal("the base embedding of the LLE weights (which sum to one) was not deflated")
	}
	w := make([]float64, m.N*m.K)
	if err := m.SampleWeights(ctx, w, 1, 0, 1); err != nil {
		t.Fatal(err)
	}
	worstSum := 0.0
	for i := 0; i < m.N; i++ {
		s := -1.0
		for _, v := range w[i*m.K : (i+1)*m.K] {
			s += v
		}
		worstSum = math.Max(worstSum, math.Abs(s))
	}
	// The premise: drawn rows are far from summing to one (measured: off by up to 1.96 here).
	if worstSum < 1e-3 {
		t.Fatalf("direct-paper draws sum to one within %.3g: the test premise no longer holds", worstSum)
	}
	Y, rep, err := m.Generate(ctx, 1, 0, 1)
	if err != nil {
		t.Fatalf("direct-paper generation: %v", err)
	}
	if rep.Eigen.Deflated || rep.Eigen.Solver != "sparse" {
		t.Fatalf("generation eigensolve %+v: want the sparse solver without deflation", rep.Eigen)
	}
	// The columns are eigenvectors of the drawn weights' M itself; 1e-8 leaves two orders of
	// magnitude over the solver's own tolerance (1e-10 ||M||_inf, sparseTol), since this bound
	// of ||M||_inf may be smaller than the solver's.
	if r := eigResidual(t, m, w, Y.RawMatrix().Data, m.Dim); !(r <= 1e-8) {
		t.Fatalf("relative eigen-residual of the generation %.3g, want <= 1e-8", r)
	}
}

// TestStalledShiftMovesAway: when the deflated vector is only nearly M's null vector (rows
// summing to one within ~1e-9 instead of round-off), shift-invert Lanczos at the automatic
// shift -1e-14 ||M||_inf reaches true residuals of only about 1e-10 ||M||_inf, at the solver's
// tolerance, however many restarts it takes (measured: 500 operator applications, then
// failure). The stall rule (sparse.StallMargin) stops such a run and moves the shift to
// -lambda_1 / 10, where the same weights converge. The LU path at shift 0 stalls first and
// falls back to the Cholesky path, which recovers.
func TestStalledShiftMovesAway(t *testing.T) {
	ctx := context.Background()
	X, _, err := bench.Dataset("swissroll-hole", 5000, 0)
	if err != nil {
		t.Fatal(err)
	}
	m, err := Fit(ctx, X, Settings{Method: Direct, Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	w := make([]float64, m.N*m.K)
	if err := m.SampleWeights(ctx, w, 3, 2, 1); err != nil {
		t.Fatal(err)
	}
	// Row sums off by N(0, (5e-8)^2): the stall was found with weights drawn through a square
	// root that clipped the round-off eigenvalues of the conditioned covariance (row sums off
	// by up to 5e-8); here 1e-8 stalls only the LU path, 3e-8 and 1e-7 both.
	rng := rand.New(rand.NewPCG(7, 8))
	for i := 0; i < m.N; i++ {
		w[i*m.K] += 5e-8 * rng.NormFloat64()
	}
	Y, _, er, err := m.st.emb.embed(ctx, nil, w, true, m.Embedding, func(Progress) {}, &Report{})
	if err != nil {
		t.Fatalf("embed: %v", err)
	}
	if len(er.Shifts) < 2 || !(er.Shifts[len(er.Shifts)-1] < 10*er.Shifts[0]) {
		t.Fatalf("shifts %v: want a move away from zero by the stall rule", er.Shifts)
	}
	if er.OpApplies > 100 {
		t.Fatalf("%d operator applications: the stalled run was not stopped early", er.OpApplies)
	}
	_ = Y
}

// TestDenseFullFallback checks denseFull, the full eigendecomposition denseSmallest falls back
// to when subspace iteration has not converged after 300 steps (spectra with no gap, which no
// fit of real data produces, so no end-to-end test reaches it): on an EM fit (n = 80) its
// eigenvalues equal the subspace iteration's, its vectors are eigenvectors, and with deflate
// the constant direction is excluded while without it the smallest pair is (0, constant).
func TestDenseFullFallback(t *testing.T) {
	ctx := context.Background()
	X, _ := bench.SwissRoll(80, 5)
	m, err := Fit(ctx, X, Settings{Method: EM, Solver: SolverDense, Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	n, k, w := m.N, m.K, m.Weights
	norm := denseNormInf(denseM(n, k, m.Neighbors, w), n)
	for _, deflate := range []bool{true, false} {
		nev := 3
		_, wantVals, _, err := denseSmallest(ctx, n, k, m.Neighbors, w, nev, deflate, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		u := make([]float64, n)
		got, vals, er, err := denseFull(ctx, denseM(n, k, m.Neighbors, w), n, nev, deflate, norm, EigenReport{},
			func(dst, v []float64) { mulM(dst, v, u, k, m.Neighbors, w) })
		if err != nil {
			t.Fatal(err)
		}
		if er.Solver != "dense-full" || len(got) != n*nev || len(vals) != nev {
			t.Fatalf("deflate %v: solver %q, %d vector entries, %d values", deflate, er.Solver, len(got), len(vals))
		}
		for j := range vals {
			// Both are backward stable to about n eps ||M|| (Dsyev) and 1e-12 ||M|| (the
			// subspace iteration's residual tolerance): 1e-11 ||M|| bounds their difference.
			if d := math.Abs(vals[j] - wantVals[j]); d > 1e-11*norm {
				t.Errorf("deflate %v: eigenvalue %d: %g, subspace iteration %g", deflate, j, vals[j], wantVals[j])
			}
		}
		// Dsyev's vectors are orthonormal to round-off: residual ~ n eps ||M||.
		r := eigResidual(t, m, w, got, nev)
		t.Logf("deflate %v: values %g, subspace %g, norm %g, residual %g, reported %g", deflate, vals, wantVals, norm, r, er.MaxResidual)
		if r > 1e-12 {
			t.Errorf("deflate %v: relative residual %g", deflate, r)
		}
		// The report's residual is the pairs' own, relative to ||M||_inf (it was 0 whatever
		// they were before session 33): round-off, above 0 and within the same n eps bound.
		if !(er.MaxResidual > 0 && er.MaxResidual <= 1e-12) {
			t.Errorf("deflate %v: reported residual %g, measured %g", deflate, er.MaxResidual, r)
		}
		// The constant's share of each vector: none with deflate; all of the first without.
		for j := 0; j < nev; j++ {
			s, q := 0.0, 0.0
			for i := 0; i < n; i++ {
				s += got[i*nev+j]
				q += got[i*nev+j] * got[i*nev+j]
			}
			share := s * s / (float64(n) * q)
			// Deflation projects the constant out exactly up to round-off: the sum of a unit
			// vector's entries is then O(sqrt(n) eps) ~ 1e-14, a share of ~1e-28 (1e-20 leaves
			// margin); without deflation the first vector is the constant to the solver's
			// accuracy, a share within 1e-12 of 1.
			switch {
			case deflate && share > 1e-20:
				t.Errorf("deflate: vector %d has constant share %g", j, share)
			case !deflate && j == 0 && math.Abs(share-1) > 1e-12:
				t.Errorf("no deflation: the smallest vector's constant share is %g, want 1", share)
			}
		}
		if !deflate && math.Abs(vals[0]) > 1e-13*norm {
			t.Errorf("no deflation: smallest eigenvalue %g, want 0 (weights sum to one)", vals[0])
		}
	}
}

// TestFitOverflowError: weights whose scale overflows M fail the dense eigensolve with
// ErrNonFinite; a fit reports that as a DegenerateError naming |w| and the ridge (it was an
// untyped error advising a covariance scale before session 32).
func TestFitOverflowError(t *testing.T) {
	n, k := 30, 3
	nbr := make([]int32, n*k)
	w := make([]float64, n*k)
	for i := 0; i < n; i++ {
		for j := 0; j < k; j++ {
			nbr[i*k+j] = int32((i + j + 1) % n)
			w[i*k+j] = 1e300
		}
	}
	_, _, _, err := denseSmallest(context.Background(), n, k, nbr, w, 3, false, nil, 0)
	if !errors.Is(err, sparse.ErrNonFinite) {
		t.Fatalf("dense eigensolve of overflowing weights: %v", err)
	}
	var de *DegenerateError
	got := fitOverflow(err, w)
	if !errors.As(got, &de) || de.Kind != "nonfinite" || !strings.Contains(got.Error(), "|w| = 1e+300") ||
		!strings.Contains(got.Error(), "raise the ridge") || strings.Contains(got.Error(), "covariance") {
		t.Errorf("fit error %T %v", got, got)
	}
	if fitOverflow(nil, w) != nil {
		t.Error("fitOverflow(nil) is not nil")
	}
}
