package engine

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"glle/bench"
)

// TestModelRegChanged: editing Reg or RegMode after the fit is refused by every call that
// reads them. A NaN Reg used to panic inside a Transform worker, which crashed the process.
func TestModelRegChanged(t *testing.T) {
	ctx := context.Background()
	X, _ := bench.SwissRoll(300, 1)
	Q, _ := bench.SwissRoll(5, 2)
	for _, meth := range []Method{LLE, Direct} {
		m, err := Fit(ctx, X, Settings{Method: meth})
		if err != nil {
			t.Fatal(err)
		}
		m.Reg = math.NaN()
		_, err = m.Transform(ctx, Q)
		wantInputError(t, meth.String()+": Transform with a NaN Reg", err, "Reg or RegMode was changed")
		if meth.Generative() {
			_, err = m.TransformSample(ctx, Q, 1, 0, 1)
			wantInputError(t, meth.String()+": TransformSample with a NaN Reg", err, "Reg or RegMode was changed")
		}
		m.Reg = 1e-3
		m.RegMode = RegAbsolute
		_, err = m.Transform(ctx, Q)
		wantInputError(t, meth.String()+": Transform with another RegMode", err, "Reg or RegMode was changed")
		m.RegMode = RegTrace
		if _, err := m.Transform(ctx, Q); err != nil {
			t.Errorf("%s: Transform after restoring Reg and RegMode: %v", meth, err)
		}
	}
}

// randomData returns n points in d dimensions, standard normal, seeded.
func randomData(n, d int, seed uint64) *mat.Dense {
	rng := rand.New(rand.NewPCG(seed, 7))
	x := make([]float64, n*d)
	for i := range x {
		x[i] = rng.NormFloat64()
	}
	return mat.NewDense(n, d, x)
}

// drawsOffFibre returns the largest |Z_i^T (w - w^LLE)| / (||Z_i|| ||w - w^LLE||) over the
// points of one draw, and the largest |w - w^LLE|: EM's draws must lie in the fibre
// (the offsets' null space), so the first is at round-off level.
func drawsOffFibre(t *testing.T, m *Model, X *mat.Dense) (off, moved float64) {
	t.Helper()
	n, k, d := m.N, m.K, m.D
	w := make([]float64, n*k)
	if err := m.SampleWeights(context.Background(), w, 3, 0, 1); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < n; i++ {
		xi := X.RawRowView(i)
		zn, en := 0.0, 0.0
		e := make([]float64, k)
		for j := 0; j < k; j++ {
			e[j] = w[i*k+j] - m.Weights[i*k+j]
			en += e[j] * e[j]
			moved = math.Max(moved, math.Abs(e[j]))
		}
		proj := make([]float64, d)
		for j, nb := range m.Neighbors[i*k : (i+1)*k] {
			xj := X.RawRowView(int(nb))
			for c := 0; c < d; c++ {
				z := xj[c] - xi[c]
				zn += z * z
				proj[c] += z * e[j]
			}
		}
		for _, v := range proj {
			if en > 0 {
				off = math.Max(off, math.Abs(v)/math.Sqrt(zn*en))
			}
		}
	}
	return off, moved
}

// TestEMRankAbove127: the fibre's rank is stored per point; with d >= 128 and k > d + 1 it
// used to wrap around in an int8, so the draws left the fibre.
func TestEMRankAbove127(t *testing.T) {
	if testing.Short() {
		t.Skip("fits 131 points in 128 dimensions")
	}
	X := randomData(131, 128, 1)
	m, err := Fit(context.Background(), X, Settings{Method: EM, K: 130})
	if err != nil {
		t.Fatal(err)
	}
	off, moved := drawsOffFibre(t, m, X)
	// Round-off of the projection onto a 128-dimensional basis: about 128 * 2^-52 relative,
	// 1e-10 leaves four orders of margin; the draws themselves move by about 0.1 at a = 1.
	if off > 1e-10 || !(moved > 1e-3) {
		t.Errorf("EM, d = 128, k = 130: draws leave the fibre by %.3g (want <= 1e-10) and move the weights by %.3g (want > 1e-3)", off, moved)
	}
}

// TestEMEmptyFibreNeedsSmallDim: with d >= k - 1 EM samples in the fibre of the local
// dim-dimensional PCA, which is empty for dim >= k - 1: Fit refuses that, and with dim <= k - 2
// the draws really move. Before the check, dim = 3 with k = 4 sampled nothing while reporting
// sigma > 0, and dim >= k read outside the eigenvector matrix.
func TestEMEmptyFibreNeedsSmallDim(t *testing.T) {
	ctx := context.Background()
	X := randomData(200, 6, 2)
	for _, dim := range []int{3, 5} {
		_, err := Fit(ctx, X, Settings{Method: EM, K: 4, Dim: dim})
		wantInputError(t, "EM, d = 6, k = 4, dim = "+string(rune('0'+dim)), err, "needs dim <= k - 2")
	}
	// The same settings with the direct method and LLE are fine.
	for _, meth := range []Method{LLE, Direct} {
		if _, err := Fit(ctx, X, Settings{Method: meth, K: 4, Dim: 3}); err != nil {
			t.Errorf("%s, d = 6, k = 4, dim = 3: %v", meth, err)
		}
	}
	m, err := Fit(ctx, X, Settings{Method: EM, K: 4, Dim: 2})
	if err != nil {
		t.Fatal(err)
	}
	w := make([]float64, m.N*m.K)
	if err := m.SampleWeights(ctx, w, 3, 0, 1); err != nil {
		t.Fatal(err)
	}
	moved := 0.0
	for i, v := range w {
		moved = math.Max(moved, math.Abs(v-m.Weights[i]))
	}
	// At a = 1 the draws move the weights by about 0.1 (docs/performance.md, issue 2 section).
	if !(moved > 1e-3) {
		t.Errorf("EM, d = 6, k = 4, dim = 2: the draws move the weights by only %.3g", moved)
	}
	// A saved model with the refused settings is refused by Restore too.
	sv := m.Saved()
	sv.Dim = 3
	sv.Embedding = mat.NewDense(m.N, 3, nil)
	_, err = Restore(ctx, sv, 1, SolverAuto)
	wantInputError(t, "Restore EM, d = 6, k = 4, dim = 3", err, "needs dim <= k - 2")
}

// TestGammaToAllocatesNothing: GammaTo with caller scratch gives Gamma's bits and allocates
// nothing; a short scratch is refused.
func TestGammaToAllocatesNothing(t *testing.T) {
	X, _ := bench.SwissRoll(300, 1)
	for _, s := range []Settings{{Method: Direct}, {Method: DirectPaper, DirectRidge: 1e-3}} {
		m, err := Fit(context.Background(), X, s)
		if err != nil {
			t.Fatal(err)
		}
		k := m.K
		want, got := make([]float64, k*k), make([]float64, k*k)
		scratch := make([]float64, GammaScratch(k))
		for _, i := range []int{0, 17, m.N - 1} {
			if !m.Gamma(i, want) || !m.GammaTo(got, scratch, i) {
				t.Fatalf("%s: Gamma or GammaTo returned false for point %d", m.Method, i)
			}
			for j := range want {
				if got[j] != want[j] {
					t.Fatalf("%s: point %d: GammaTo differs from Gamma at %d: %v against %v", m.Method, i, j, got[j], want[j])
				}
			}
		}
		if a := testing.AllocsPerRun(20, func() { m.GammaTo(got, scratch, 5) }); a != 0 {
			t.Errorf("%s: GammaTo allocates %v times per call", m.Method, a)
		}
		if m.GammaTo(got, scratch[:GammaScratch(k)-1], 5) {
			t.Errorf("%s: GammaTo accepted a scratch one value short", m.Method)
		}
	}
}

// TestTransformSampleDirectUnfactorable: a new point whose precision matrix cannot be factored
// gives a typed error naming it, not a silent draw of the mean weights.
func TestTransformSampleDirectUnfactorable(t *testing.T) {
	ctx := context.Background()
	X, _ := bench.SwissRoll(300, 1)
	m, err := Fit(ctx, X, Settings{Method: Direct})
	if err != nil {
		t.Fatal(err)
	}
	Q, _ := bench.SwissRoll(4, 2)
	far := 1e153
	Q.Set(2, 0, far)
	_, err = m.TransformSample(ctx, Q, 1, 0, 1)
	var de *DegenerateError
	var ie *InputError
	switch {
	case errors.As(err, &de):
		if de.Kind != "singular-gamma" || de.Example != 2 {
			t.Errorf("far point: got %v (kind %q, example %d), want singular-gamma for row 2", err, de.Kind, de.Example)
		}
	case errors.As(err, &ie):
		t.Logf("far point refused before the draw: %v", err)
	default:
		t.Errorf("far point at %g: got %v, want a DegenerateError or an InputError", far, err)
	}
}

// TestDirectPaperSingularMessage: DirectPaper without a ridge fails with a *DegenerateError
// whose reason fits the case: with k > d + p the rank bound, otherwise (k = 4 <= d + p = 5,
// where the bound does not apply but the raw-coordinate Gram matrices are still numerically
// singular on the Swiss roll) linear dependence; it said "rank <= 5 < k = 4" before.
func TestDirectPaperSingularMessage(t *testing.T) {
	ctx := context.Background()
	X, _ := bench.SwissRoll(1000, 1)
	for _, c := range []struct {
		k         int
		want, not string
	}{{10, "rank <= d + p = 5 < k = 10", "linearly dependent"}, {4, "numerically linearly dependent", "< k"}} {
		_, err := Fit(ctx, X, Settings{Method: DirectPaper, K: c.k})
		var de *DegenerateError
		if !errors.As(err, &de) || de.Kind != "singular-gamma" || !strings.Contains(de.Msg, c.want) || strings.Contains(de.Msg, c.not) {
			t.Errorf("k = %d: %v, want a singular-gamma DegenerateError saying %q", c.k, err, c.want)
		}
	}
	// The rank bound follows from the shapes: CheckFit refuses it before any work (it
	// returned nil, and Fit failed only after the whole fit, before session 32).
	err := CheckFit(200000, 3, Settings{Method: DirectPaper})
	var de *DegenerateError
	if !errors.As(err, &de) || de.Kind != "singular-gamma" || de.Count != 200000 || !strings.Contains(de.Msg, "rank <= d + p = 5 < k = 10") {
		t.Errorf("CheckFit(200000, 3, DirectPaper): %v", err)
	}
	if err := CheckFit(200000, 3, Settings{Method: DirectPaper, DirectRidge: 1e-6}); err != nil {
		t.Errorf("CheckFit with a ridge: %v", err)
	}
}

// TestDimNearN: Dim close to n, where the sparse solvers' Lanczos basis does not fit (it needs
// n >= Dim + 4): SolverAuto uses the dense solver and fits; an explicit sparse solver is an
// *InputError naming the limit (both were an untyped "NEV too large" error from the eigensolver).
// Also: direct with k = 1 (nothing to sample) and a non-finite EMTol are refused up front.
func TestDimNearN(t *testing.T) {
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(70, 80))
	X := mat.NewDense(70, 80, nil)
	for i := 0; i < 70; i++ {
		for j := 0; j < 80; j++ {
			X.Set(i, j, rng.NormFloat64())
		}
	}
	m, err := Fit(ctx, X, Settings{Dim: 66})
	if err != nil {
		t.Fatalf("SolverAuto, n = 70, dim = 66: %v", err)
	}
	if m.Report.Eigen.Solver != "dense" {
		t.Errorf("SolverAuto, n = 70, dim = 66: solver %q, want dense", m.Report.Eigen.Solver)
	}
	var ie *InputError
	for _, s := range []Settings{
		{Dim: 67, Solver: SolverSparse},
		{Dim: 67, Solver: SolverSparseCholesky, Method: EMPaper},
	} {
		if _, err := Fit(ctx, X, s); !errors.As(err, &ie) || !strings.Contains(ie.Msg, "needs n >= dim + 5") {
			t.Errorf("%+v: %v, want an InputError naming the limit", s, err)
		}
	}
	if _, err := Fit(ctx, X, Settings{Dim: 65, Solver: SolverSparse}); err != nil {
		t.Errorf("n = 70, dim = 65 (= n - sparseRoom), SolverSparse: %v", err)
	}
	// EMTol >= 1 passed before session 33 and stopped EM after one iteration as converged.
	for _, s := range []Settings{{Method: Direct, K: 1}, {Method: EM, EMTol: math.Inf(1)}, {Method: EM, EMTol: 1}, {Method: EM, EMTol: 5}} {
		if _, err := Fit(ctx, X, s); !errors.As(err, &ie) {
			t.Errorf("%+v: %v, want an InputError", s, err)
		}
	}
}

// TestRegUpperLimit: a finite but huge reg made the ridge (or direct's R_i / s_x^2)
// overflow and the fit failed with the advice to increase reg (direct) or to lower a
// covariance scale it does not have (lle); it is refused up front, and the limit itself
// (maxReg relative, maxAbsReg absolute) fits. Direct with an absolute ridge on tiny data,
// where reg / s_x^2 overflows, gets an InputError naming s_x^2.
func TestRegUpperLimit(t *testing.T) {
	ctx := context.Background()
	X, _ := bench.SwissRoll(300, 1)
	for _, meth := range []Method{LLE, Direct, EM} {
		for _, mode := range []RegMode{RegTrace, RegAbsolute} {
			s := Settings{Method: meth, Reg: 1e306, RegMode: mode}
			_, err := Fit(ctx, X, s)
			wantInputError(t, fmt.Sprintf("%v %v reg 1e306", meth, mode), err, "is too large")
			if err := CheckFit(300, 3, s); err == nil {
				t.Errorf("%v %v: CheckFit accepted reg 1e306", meth, mode)
			}
			s.Reg = maxReg
			if mode == RegAbsolute {
				s.Reg = maxAbsReg(3, 10)
			}
			if _, err := Fit(ctx, X, s); err != nil {
				t.Errorf("%v %v reg = %g (the limit): %v", meth, mode, s.Reg, err)
			}
		}
	}
	tiny := mat.DenseCopyOf(X)
	tiny.Scale(1e-140, tiny) // s_x^2 about 1e-284: reg 1e30 / s_x^2 overflows
	_, err := Fit(ctx, tiny, Settings{Method: Direct, RegMode: RegAbsolute, Reg: 1e30})
	wantInputError(t, "direct, absolute reg 1e30 on data of 1e-140", err, "s_x^2")
}

// TestRawMagnitudeLimit: the methods on raw coordinates accept data up to maxRawFitMagnitude
// (about 5e75 here) and give there the draws they give at scale 1 (the ridge scaled along);
// above it they refuse the data. Up to session 30 they accepted 2.9e152 and from about 1e78
// em-paper's sigma_i and em's fibre projectors (absolute ridge) came out wrong silently.
func TestRawMagnitudeLimit(t *testing.T) {
	ctx := context.Background()
	X, _ := bench.SwissRoll(300, 1) // max |x| about 18.4
	big := func(c float64) *mat.Dense {
		Y := mat.DenseCopyOf(X)
		Y.Scale(c, Y)
		return Y
	}
	for _, meth := range []Method{EM, EMPaper} {
		settings := func(c float64) Settings {
			if meth == EM {
				return Settings{Method: EM, RegMode: RegAbsolute, Reg: 1e-3 * c * c}
			}
			return Settings{Method: EMPaper}
		}
		var ref []float64
		for _, c := range []float64{1, 2e74} { // 2e74 * 18.4 = 3.7e75, just below the limit
			m, err := Fit(ctx, big(c), settings(c))
			if err != nil {
				t.Fatalf("%v at scale %g: %v", meth, c, err)
			}
			w := make([]float64, m.N*m.K)
			if err := m.SampleWeights(ctx, w, 1, 0, 1); err != nil {
				t.Fatal(err)
			}
			if ref == nil {
				ref = w
				continue
			}
			d := 0.0
			for i := range w {
				d = math.Max(d, math.Abs(w[i]-ref[i]))
			}
			// Weights of size ~0.1-5: only the scaling's round-off differs (observed 9e-14);
			// the silent failure was O(1).
			if d > 1e-10 {
				t.Errorf("%v at scale %g: draws differ from scale 1 by %g", meth, c, d)
			}
		}
		var ie *InputError
		if _, err := Fit(ctx, big(1e75), settings(1e75)); !errors.As(err, &ie) || !strings.Contains(ie.Msg, "too large") {
			t.Errorf("%v at scale 1e75 (max |x| 1.8e76): %v, want an InputError", meth, err)
		}
	}
}

// TestTransformFarPointRange: a new point too far out to transform is refused with the
// training data's range, for the methods on rescaled data and on raw coordinates alike
// (em-paper's message said 2^0 for a Swiss roll reaching 18.4 = 0.575 * 2^5).
func TestTransformFarPointRange(t *testing.T) {
	X, _ := bench.SwissRoll(300, 1)
	far := mat.NewDense(1, 3, []float64{1e200, 0, 0})
	for _, meth := range []Method{EM, EMPaper} {
		m, err := Fit(context.Background(), X, Settings{Method: meth})
		if err != nil {
			t.Fatal(err)
		}
		_, err = m.Transform(context.Background(), far)
		var ie *InputError
		if !errors.As(err, &ie) || !strings.Contains(ie.Msg, "(max |x| about 2^5)") {
			t.Errorf("%v: a point at 1e200: %v, want an InputError giving the range 2^5", meth, err)
		}
	}
}
