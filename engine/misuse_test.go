package engine

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"gonum.org/v1/gonum/mat"

	"glle/bench"
)

// wantInputError fails unless err is an *InputError whose message contains want.
func wantInputError(t *testing.T, what string, err error, want string) {
	t.Helper()
	var ie *InputError
	if !errors.As(err, &ie) || !strings.Contains(ie.Msg, want) {
		t.Errorf("%s: got %v (%T), want an InputError mentioning %q", what, err, err, want)
	}
}

// within runs fn and fails the test when it does not return within d (a hang, not a result).
func within(t *testing.T, what string, d time.Duration, fn func() error) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- fn() }()
	select {
	case err := <-done:
		return err
	case <-time.After(d):
		t.Fatalf("%s did not return within %v", what, d)
		return nil
	}
}

// TestModelMisuse: a zero-value Model, a fitted Model whose exported fields were edited, and
// out-of-range arguments give an *InputError (or false from Gamma), never a panic.
func TestModelMisuse(t *testing.T) {
	ctx := context.Background()
	X, _ := bench.SwissRoll(300, 1)
	Q, _ := bench.SwissRoll(10, 2)

	var zero Model
	_, _, err := zero.Generate(ctx, 1, 0, 1)
	wantInputError(t, "zero Model Generate", err, "not made by Fit or Restore")
	_, err = zero.Transform(ctx, Q)
	wantInputError(t, "zero Model Transform", err, "not made by Fit or Restore")
	_, err = (&Model{Method: EM, N: 50, D: 3, K: 10, Dim: 2}).TransformSample(ctx, Q, 1, 0, 1)
	wantInputError(t, "hand-built Model TransformSample", err, "not made by Fit or Restore")
	err = (&Model{Method: EM, N: 50, D: 3, K: 10, Dim: 2}).SampleWeights(ctx, make([]float64, 500), 1, 0, 1)
	wantInputError(t, "hand-built Model SampleWeights", err, "not made by Fit or Restore")
	if zero.Gamma(0, make([]float64, 100)) {
		t.Error("zero Model: Gamma returned true")
	}
	_ = zero.Saved() // must not panic

	m := mustFit(t, X, settingsFor(LLE))
	m.Method = EM
	_, _, err = m.Generate(ctx, 1, 0, 1)
	wantInputError(t, "LLE model edited to EM", err, "changed after the fit")
	m = mustFit(t, X, settingsFor(LLE))
	m.Method = Direct
	_, err = m.TransformSample(ctx, Q, 1, 0, 1)
	wantInputError(t, "LLE model edited to Direct", err, "changed after the fit")

	m = mustFit(t, X, settingsFor(EM))
	emb := m.Embedding
	m.Embedding = nil
	_, err = m.Transform(ctx, Q)
	wantInputError(t, "Embedding removed", err, "Embedding was removed")
	m.Embedding = mat.NewDense(10, 2, nil)
	_, _, err = m.Generate(ctx, 1, 0, 1)
	wantInputError(t, "Embedding replaced", err, "10x2")
	// A strided view holding the same values: the samplers and Transform read the raw data
	// with stride Dim, so a view must be refused, not misread.
	wide := mat.NewDense(m.N, 3, nil)
	view := wide.Slice(0, m.N, 0, 2).(*mat.Dense)
	view.Copy(emb)
	m.Embedding = view
	_, err = m.Transform(ctx, Q)
	wantInputError(t, "Embedding replaced by a strided view", err, "row stride 3")
	m.Embedding = emb
	x := m.X
	m.X = mat.NewDense(m.N, 2, nil)
	_, err = m.Transform(ctx, Q)
	wantInputError(t, "X replaced", err, "X was replaced")
	m.X = nil
	_, err = m.Transform(ctx, Q)
	wantInputError(t, "X removed", err, "X was removed")
	m.X = x

	// Edited neighbour indices: out of range, negative, the point itself. The dense solver
	// (n <= 64) indexed M by them and panicked before.
	small := mustFit(t, mat.DenseCopyOf(X.Slice(0, 50, 0, 3)), settingsFor(EM))
	for _, v := range []int32{int32(small.N + 5), -1, 3} {
		old := small.Neighbors[3*small.K+2]
		small.Neighbors[3*small.K+2] = v
		_, _, err = small.Generate(ctx, 1, 0, 1)
		wantInputError(t, fmt.Sprintf("neighbour edited to %d", v), err, "entry 2 of point 3")
		small.Neighbors[3*small.K+2] = old
	}
	// Valid indices that differ from the fit's (a duplicate, a swap within a row): the sparse
	// pattern was built from the originals, so these are refused too (a restored model
	// reported "lists neighbour J twice" from the graph code before, with no fix named).
	nb := small.Neighbors[3*small.K : 4*small.K]
	orig := append([]int32(nil), nb...)
	for _, edit := range []func(){func() { nb[2] = nb[1] }, func() { nb[0], nb[1] = nb[1], nb[0] }} {
		edit()
		_, _, err = small.Generate(ctx, 1, 0, 1)
		wantInputError(t, "neighbours edited within range", err, "edited after the fit")
		copy(nb, orig)
	}
	if _, _, err = small.Generate(ctx, 1, 0, 1); err != nil {
		t.Errorf("restored neighbours: %v", err)
	}

	// Edited weights and sigma values (a user trial: Generate drew around Weights[3] = 5, whose
	// row no longer sums to one, and a negative sigma was reported as an overflow). Each edit
	// is refused by the generations and SampleWeights; em-paper's TransformSample, whose draws
	// read the neighbours' sigma_i (O(q k) per call, so no fingerprint of all N), names a
	// non-finite one instead of blaming the covariance scale.
	paperM := mustFit(t, mat.DenseCopyOf(X.Slice(0, 50, 0, 3)), settingsFor(EMPaper))
	for _, c := range []struct {
		name string
		m    *Model
		v    *float64
		to   float64
		want string
	}{
		{"weight edited to 5", small, &small.Weights[3], 5, "Weights were edited"},
		{"weight edited by one ulp", small, &small.Weights[7], math.Nextafter(small.Weights[7], 2), "Weights were edited"},
		{"sigma edited to -1", small, &small.Sigma[3], -1, "Sigma was edited"},
		{"em-paper sigma edited to 1e300", paperM, &paperM.Sigma[0], 1e300, "Sigma was edited"},
	} {
		old := *c.v
		*c.v = c.to
		_, _, err = c.m.Generate(ctx, 1, 0, 1)
		wantInputError(t, c.name+": Generate", err, c.want)
		// The argument checks come before the O(N K) ones, which find the edit.
		_, _, err = c.m.Generate(ctx, 1, 0, -1)
		wantInputError(t, c.name+": Generate at a = -1", err, "covariance scale -1")
		_, _, err = c.m.Generate(ctx, 1, -1, 1)
		wantInputError(t, c.name+": Generate of generation -1", err, "generation -1")
		err = c.m.SampleWeights(ctx, make([]float64, c.m.N*c.m.K), 1, 0, 1)
		wantInputError(t, c.name+": SampleWeights", err, c.want)
		*c.v = old
		if _, _, err = c.m.Generate(ctx, 1, 0, 1); err != nil {
			t.Errorf("%s, then restored: %v", c.name, err)
		}
	}
	// One sigma_j at a time made NaN: TransformSample names it exactly when j is among a new
	// point's K nearest training points (a linear scan), and then names such a point.
	owners := make([][]int, paperM.N) // owners[j]: the new points whose neighbour j is
	for i := 0; i < Q.RawMatrix().Rows; i++ {
		order := make([]int, paperM.N)
		dist := make([]float64, paperM.N)
		for j := range order {
			order[j] = j
			for c := 0; c < paperM.D; c++ {
				dist[j] += math.Pow(Q.At(i, c)-paperM.X.At(j, c), 2)
			}
		}
		slices.SortFunc(order, func(a, b int) int { return cmp.Compare(dist[a], dist[b]) })
		for _, j := range order[:paperM.K] {
			owners[j] = append(owners[j], i)
		}
	}
	named := 0
	for j := range paperM.Sigma {
		old := paperM.Sigma[j]
		paperM.Sigma[j] = math.NaN()
		_, err = paperM.TransformSample(ctx, Q, 1, 0, 1)
		paperM.Sigma[j] = old
		if len(owners[j]) == 0 {
			if err != nil {
				t.Errorf("em-paper TransformSample with Sigma[%d] NaN, no new point's neighbour: %v", j, err)
			}
			continue
		}
		named++
		want := fmt.Sprintf("the model's Sigma[%d] is NaN (edited after the fit), a neighbour's of new point ", j)
		wantInputError(t, "em-paper TransformSample after a NaN Sigma", err, want)
		if err != nil {
			var i int
			if _, serr := fmt.Sscanf(err.Error()[strings.Index(err.Error(), "new point ")+len("new point "):], "%d", &i); serr != nil || !slices.Contains(owners[j], i) {
				t.Errorf("Sigma[%d] NaN: %v names a new point outside %v", j, err, owners[j])
			}
			if !strings.HasSuffix(err.Error(), ": refit, or restore from a copy of Saved made before the edit (Saved shares the model's slices)") {
				t.Errorf("Sigma[%d] NaN: %v, want the refit advice", j, err)
			}
		}
	}
	if named == 0 || named == paperM.N {
		t.Errorf("%d of %d training points neighbour the new points: the check above tests nothing", named, paperM.N)
	}

	for _, c := range []struct {
		i, n int
	}{{-1, 100}, {m.N, 100}, {0, 5}} {
		if m.Gamma(c.i, make([]float64, c.n)) {
			t.Errorf("Gamma(%d, len %d) returned true", c.i, c.n)
		}
	}
	if Method(99).Generative() || Method(-1).Generative() {
		t.Error("an unknown method reports itself generative")
	}

	// A training embedding with NaNs (in every row, so in the rows the new points use: rows
	// no neighbour reads are not checked, TestTransformSampleYtrainRows).
	Y := mat.DenseCopyOf(m.Embedding)
	for i := 0; i < m.N; i++ {
		Y.Set(i, 1, math.NaN())
	}
	_, err = m.TransformSampleOnto(ctx, Q, Y, 1, 0, 1)
	wantInputError(t, "NaN training embedding", err, "non-finite")
	// A Ytrain of the wrong shape: the message names the argument and what to pass (a user
	// trial: "the training embedding is 5x2" named neither).
	_, err = m.TransformSampleOnto(ctx, Q, mat.NewDense(5, m.Dim, nil), 1, 0, 1)
	wantInputError(t, "Ytrain of the wrong shape", err, "Ytrain, the training embedding, is 5x2, want N x Dim = 300x2: pass the model's Embedding or a Generate result")
}

// TestNilModelAndContext: a nil *Model and a nil context give an *InputError from every
// exported method (Gamma returns false, Saved the zero Saved), never a panic.
func TestNilModelAndContext(t *testing.T) {
	ctx := context.Background()
	X, _ := bench.SwissRoll(200, 1)
	Q, _ := bench.SwissRoll(5, 2)
	var nilM *Model
	_, _, err := nilM.Generate(ctx, 1, 0, 1)
	wantInputError(t, "nil Model Generate", err, "model is nil")
	_, err = nilM.Transform(ctx, Q)
	wantInputError(t, "nil Model Transform", err, "model is nil")
	_, err = nilM.TransformSample(ctx, Q, 1, 0, 1)
	wantInputError(t, "nil Model TransformSample", err, "model is nil")
	wantInputError(t, "nil Model SampleWeights", nilM.SampleWeights(ctx, make([]float64, 10), 1, 0, 1), "model is nil")
	if nilM.Gamma(0, make([]float64, 100)) || nilM.GammaTo(make([]float64, 100), make([]float64, 200), 0) {
		t.Error("nil Model: Gamma returned true")
	}
	_, err = Restore(ctx, nilM.Saved(), 1, SolverAuto)
	wantInputError(t, "Restore of a nil Model's Saved", err, "incomplete model")

	//lint:ignore SA1012 a nil context is the misuse under test
	var nilCtx context.Context
	_, err = Fit(nilCtx, X, settingsFor(EM))
	wantInputError(t, "Fit with a nil context", err, "context is nil")
	m := mustFit(t, X, settingsFor(EM))
	_, _, err = m.Generate(nilCtx, 1, 0, 1)
	wantInputError(t, "Generate with a nil context", err, "context is nil")
	_, err = m.Transform(nilCtx, Q)
	wantInputError(t, "Transform with a nil context", err, "context is nil")
	_, err = m.TransformSample(nilCtx, Q, 1, 0, 1)
	wantInputError(t, "TransformSample with a nil context", err, "context is nil")
	wantInputError(t, "SampleWeights with a nil context", m.SampleWeights(nilCtx, make([]float64, m.N*m.K), 1, 0, 1), "context is nil")
	_, err = Restore(nilCtx, m.Saved(), 1, SolverAuto)
	wantInputError(t, "Restore with a nil context", err, "context is nil")
}

// TestEditedModelValues: values edited in place in a fitted Model, and implausible Saved
// parts, give an *InputError naming them (session 33, a library user trial). Before: a NaN in
// Embedding made Generate and Transform return NaN embeddings with a nil error and
// TransformSample blame the covariance scale; a NaN in a paper model's X gave an untyped kNN
// error; an edited Scaling changed the generations silently; Restore accepted a NaN or
// positive Shift (and the restored model generated differently) and eigenvalues of any
// length or value.
func TestEditedModelValues(t *testing.T) {
	ctx := context.Background()
	X, _ := bench.SwissRoll(300, 1)
	Q := mat.DenseCopyOf(X.Slice(0, 3, 0, 3))
	Q.Set(0, 0, Q.At(0, 0)+1e-3) // near point 0, not on it
	for _, meth := range []Method{LLE, EM, Direct, EMPaper, DirectPaper} {
		m := mustFit(t, X, settingsFor(meth))
		m.Embedding.Set(5, 1, math.NaN())
		m.Embedding.Set(0, 0, math.Inf(1))
		_, err := m.Transform(ctx, Q)
		wantInputError(t, meth.String()+" Transform after a NaN in Embedding", err, "Embedding has a non-finite value")
		if meth.Generative() {
			_, _, err = m.Generate(ctx, 1, 0, 1)
			wantInputError(t, meth.String()+" Generate after a NaN in Embedding", err, "Embedding has a non-finite value (+Inf) at row 0, column 0")
			_, err = m.TransformSample(ctx, Q, 1, 0, 1)
			wantInputError(t, meth.String()+" TransformSample after a NaN in Embedding", err, "Embedding has a non-finite value")
			if meth == Direct || meth == DirectPaper {
				// With a finite Ytrain they still read the base embedding (their Gamma): direct
				// blamed the new points and direct-paper returned a finite, wrong result before
				// a review of session 33.
				Y := mat.NewDense(m.N, m.Dim, nil)
				_, err = m.TransformSampleOnto(ctx, Q, Y, 1, 0, 1)
				wantInputError(t, meth.String()+" TransformSampleOnto after a NaN in Embedding", err, "Embedding has a non-finite value")
			}
		}
		m = mustFit(t, X, settingsFor(meth))
		m.Scaling = PaperScaling
		_, err = m.Transform(ctx, Q)
		wantInputError(t, meth.String()+" Transform after a Scaling edit", err, "Scaling was changed")
	}
	for _, meth := range []Method{EMPaper, DirectPaper} {
		m := mustFit(t, X, settingsFor(meth))
		m.X.Set(0, 0, math.NaN())
		_, err := m.Transform(ctx, Q)
		wantInputError(t, meth.String()+" Transform after a NaN in X", err, "training data X cannot be searched")
	}
	m := mustFit(t, X, settingsFor(EMPaper))
	for _, shift := range []float64{math.NaN(), math.Inf(-1), math.Inf(1), 1} {
		sv := m.Saved()
		sv.Shift = shift
		_, err := Restore(ctx, sv, 1, SolverAuto)
		wantInputError(t, fmt.Sprintf("Restore with Shift %v", shift), err, "eigensolver shift")
	}
	sv := m.Saved()
	sv.Eigenvalues = []float64{1, 2, 3}
	_, err := Restore(ctx, sv, 1, SolverAuto)
	wantInputError(t, "Restore with 3 eigenvalues", err, "3 eigenvalues for an embedding of dimension 2")
	sv.Eigenvalues = []float64{1, math.NaN()}
	_, err = Restore(ctx, sv, 1, SolverAuto)
	wantInputError(t, "Restore with a NaN eigenvalue", err, "eigenvalue 1 is NaN")
	sv.Eigenvalues = nil // unknown: accepted
	if _, err := Restore(ctx, sv, 1, SolverAuto); err != nil {
		t.Errorf("Restore without eigenvalues: %v", err)
	}
	// Two halves whose neighbours stay within their half: a graph no fit produces.
	lm := mustFit(t, X, settingsFor(LLE))
	sv = lm.Saved()
	n, k := lm.N, lm.K
	nb := make([]int32, n*k)
	for i := 0; i < n; i++ {
		base := i / (n / 2) * (n / 2)
		for j := 0; j < k; j++ {
			nb[i*k+j] = int32(base + (i-base+1+j)%(n/2))
		}
	}
	sv.Neighbors = nb
	_, err = Restore(ctx, sv, 1, SolverAuto)
	wantInputError(t, "Restore of a disconnected graph", err, "2 connected components")

	// A Saved whose K, Dim or Reg was lost (zero) is incomplete, not a request for the
	// defaults (a user trial: Reg 0 was restored as 1e-3 and K 0 as 10).
	for _, edit := range []func(*Saved){func(s *Saved) { s.K = 0 }, func(s *Saved) { s.Dim = 0 }, func(s *Saved) { s.Reg = 0 }} {
		sv = lm.Saved()
		edit(&sv)
		_, err = Restore(ctx, sv, 1, SolverAuto)
		wantInputError(t, "Restore with a zero K, Dim or Reg", err, "incomplete model")
	}
}

// TestHugeCovarianceScale: scales so large that the draws, the assembly or the eigensolve
// overflow give an InputError naming the covariance scale (the Lanczos iteration panicked on
// NaN before). Whether a = 1e115-1e200 overflows depends on the backend's LU (OpenBLAS's
// does, gonum's native one did not), so there a finite embedding is accepted too; a =
// MaxFloat64 overflows in both.
func TestHugeCovarianceScale(t *testing.T) {
	ctx := context.Background()
	X, _ := bench.SwissRoll(300, 1)
	Q, _ := bench.SwissRoll(20, 2)
	for _, c := range []struct {
		meth  Method
		a     float64
		dense bool
	}{{EM, 1e125, false}, {Direct, 1e115, false}, {EM, 1e200, false}, {EM, 1e250, false}, {EMPaper, math.MaxFloat64, false},
		{Direct, math.MaxFloat64, false}, {EM, math.MaxFloat64, false},
		// The dense solver: M overflows to Inf; it returned a NaN residual without an error
		// (em, direct) or an untyped "did not converge" (direct-paper) before session 30.
		{EM, math.MaxFloat64, true}, {Direct, math.MaxFloat64, true}, {DirectPaper, 1e306, true}} {
		s := settingsFor(c.meth)
		if c.dense {
			s.Solver = SolverDense
		}
		m := mustFit(t, X, s)
		Y, rep, err := m.Generate(ctx, 1, 0, c.a)
		what := fmt.Sprintf("%v Generate at a = %g (dense %v)", c.meth, c.a, c.dense)
		if err == nil && math.IsNaN(rep.Eigen.MaxResidual) {
			t.Errorf("%s: no error but a NaN residual", what)
		}
		// A result's residual is measured, whichever solver ended the search: em at a = 1e250
		// falls back to the full dense eigendecomposition, which reported 0 before session 33
		// (and the product's squares overflowed to +Inf once measured). Relative to ||M||,
		// round-off: 1e-10 is the sparse solver's own acceptance bound.
		if err == nil && !(rep.Eigen.MaxResidual > 0 && rep.Eigen.MaxResidual <= 1e-10) {
			t.Errorf("%s: solver %s reports the residual %g", what, rep.Eigen.Solver, rep.Eigen.MaxResidual)
		}
		// One error type for every overflow: an InputError naming the covariance scale (the
		// sparse assembly's overflow was a DegenerateError "nonfinite" before session 30).
		var ie *InputError
		switch {
		case err == nil && c.a < math.MaxFloat64:
			allFinite(t, what, Y)
		case errors.As(err, &ie) && strings.Contains(ie.Msg, "covariance scale"):
		default:
			t.Errorf("%s: got %v (%T), want a finite embedding or an InputError naming the covariance scale", what, err, err)
		}
		if c.meth == EMPaper {
			err = m.SampleWeights(ctx, make([]float64, m.N*m.K), 1, 0, c.a)
			wantInputError(t, "em-paper SampleWeights at MaxFloat64", err, "overflow")
			_, err = m.TransformSample(ctx, Q, 1, 0, c.a)
			wantInputError(t, "em-paper TransformSample at MaxFloat64", err, "overflow")
		}
	}
}

// TestRestoreRejectsCorruptParts: Restore checks every part it is given (these hung in the
// direct sampler's jitter loop, or surfaced later as panics or untyped errors).
func TestRestoreRejectsCorruptParts(t *testing.T) {
	ctx := context.Background()
	X, _ := bench.SwissRoll(300, 1)
	fits := map[Method]*Model{}
	for _, meth := range []Method{EM, Direct} {
		fits[meth] = mustFit(t, X, settingsFor(meth))
	}
	cases := []struct {
		name string
		meth Method
		edit func(sv *Saved)
		want string
	}{
		{"Inf in X", Direct, func(sv *Saved) { sv.X = mat.DenseCopyOf(sv.X); sv.X.Set(3, 1, math.Inf(1)) }, "training data X has a non-finite value"},
		{"weights x 1e300", Direct, func(sv *Saved) {
			w := append([]float64(nil), sv.Weights...)
			for i := range w {
				w[i] *= 1e300
			}
			sv.Weights = w
		}, "sum to"},
		{"NaN in the embedding", EM, func(sv *Saved) { sv.Embedding = mat.DenseCopyOf(sv.Embedding); sv.Embedding.Set(0, 0, math.NaN()) }, "embedding has a non-finite value"},
		{"negative sigma", EM, func(sv *Saved) { sv.Sigma = append([]float64(nil), sv.Sigma...); sv.Sigma[5] = -1 }, "sigma of point 5"},
		{"repeated neighbour", EM, func(sv *Saved) {
			nb := append([]int32(nil), sv.Neighbors...)
			nb[7*sv.K+3] = nb[7*sv.K+1]
			sv.Neighbors = nb
		}, "point 7 lists neighbour"},
		{"neighbour out of range", EM, func(sv *Saved) {
			nb := append([]int32(nil), sv.Neighbors...)
			nb[4*sv.K+2] = int32(len(nb))
			sv.Neighbors = nb
		}, "neighbour entry 42 (point 4)"},
		// What a JSON round trip of Saved gives (encoding/json writes a mat.Dense as {}): the
		// error blamed k ("n = 0 points but k = 10") before session 32.
		{"empty X", EM, func(sv *Saved) { sv.X = &mat.Dense{} }, "X or Embedding is an empty matrix"},
		{"empty embedding", EM, func(sv *Saved) { sv.Embedding = &mat.Dense{} }, "encoding/gob"},
		{"point its own neighbour", Direct, func(sv *Saved) {
			nb := append([]int32(nil), sv.Neighbors...)
			nb[9*sv.K] = 9
			sv.Neighbors = nb
		}, "neighbour entry 90 (point 9) is 9"},
	}
	for _, c := range cases {
		sv := fits[c.meth].Saved()
		c.edit(&sv)
		err := within(t, c.name, 20*time.Second, func() error {
			_, err := Restore(ctx, sv, 2, SolverAuto)
			return err
		})
		wantInputError(t, c.name, err, c.want)
	}
}

// TestMemoryEstimateSaturates: sizes whose byte counts overflow int64 give a saturated
// estimate, which CheckFit refuses (they were reported as a few MiB before).
func TestMemoryEstimateSaturates(t *testing.T) {
	if e := EstimateMemory(1<<30, 3, 1<<30-1, 2, Direct); e.Peak != math.MaxInt64 {
		t.Errorf("EstimateMemory(2^30, k = 2^30 - 1): peak %d, want saturation", e.Peak)
	}
	for _, c := range []struct {
		n, d int
		s    Settings
	}{
		{1 << 20, 3, Settings{K: 1<<20 - 1, Method: DirectPaper, DirectRidge: 1e-6, MaxMemory: 1 << 30}},
		{1000, 1 << 58, Settings{MaxMemory: 1 << 30}},
	} {
		wantInputError(t, "CheckFit of an impossible size", CheckFit(c.n, c.d, c.s), "memory limit")
	}
	// Ordinary sizes are not affected: n = 1M, k = 10 fits in a few GiB.
	if e := EstimateMemory(1_000_000, 3, 10, 2, EM); e.Peak <= 0 || e.Peak > 16<<30 {
		t.Errorf("EstimateMemory(1M, 3, 10): peak %d", e.Peak)
	}
}

// TestRestoreOwnsItsParts: a restored model keeps copies of the Saved slices, so editing
// them afterwards (here all of Sigma x100 and a weight) changes neither the restored model's
// generations nor the original's; before, both changed silently and the edit bypassed
// Restore's checks.
func TestRestoreOwnsItsParts(t *testing.T) {
	ctx := context.Background()
	X, _ := bench.SwissRoll(300, 2)
	m := mustFit(t, X, settingsFor(EM))
	want, _, err := m.Generate(ctx, 4, 0, 1)
	if err != nil {
		t.Fatal(err)
	}
	sv := m.Saved()
	sv.Sigma, sv.Weights = slices.Clone(sv.Sigma), slices.Clone(sv.Weights) // the original stays intact
	r, err := Restore(ctx, sv, 0, SolverAuto)
	if err != nil {
		t.Fatal(err)
	}
	for i := range sv.Sigma {
		sv.Sigma[i] *= 100
	}
	sv.Weights[0] += 0.5
	got, _, err := r.Generate(ctx, 4, 0, 1)
	if err != nil {
		t.Fatal(err)
	}
	if !mat.Equal(got, want) {
		t.Error("editing the Saved slices after Restore changed the restored model's generation")
	}
}

// TestRestoredHugeVariance: a restored em model whose sigma_i were edited to 1e308 overflows
// at a = 1; the error must name the variance, the real cause, and not only the covariance
// scale (before session 31 it told the user to lower a = 1).
func TestRestoredHugeVariance(t *testing.T) {
	ctx := context.Background()
	X, _ := bench.SwissRoll(300, 2)
	m := mustFit(t, X, settingsFor(EM))
	sv := m.Saved()
	sv.Sigma = slices.Clone(sv.Sigma)
	for i := range sv.Sigma {
		// Weights of about 1e154: their squares, M's entries, overflow in every backend
		// (1e200 overflowed OpenBLAS's LU but not gonum's: see TestHugeCovarianceScale).
		sv.Sigma[i] = 1e308
	}
	r, err := Restore(ctx, sv, 0, SolverAuto)
	if err != nil {
		t.Fatal(err)
	}
	_, _, err = r.Generate(ctx, 1, 0, 1)
	var ie *InputError
	if !errors.As(err, &ie) || !strings.Contains(ie.Msg, "largest variance sigma_i is 1e+308") || !strings.Contains(ie.Msg, "|w| = ") {
		t.Fatalf("got %T %v, want an InputError naming the largest sigma_i and the weights' size", err, err)
	}
}

// TestSampleWeightsMisuse: SampleWeights on an LLE model returned nil with the mean weights
// (Generate refuses it), and a model whose Sigma was edited to NaN blamed the covariance scale
// (before session 32).
func TestSampleWeightsMisuse(t *testing.T) {
	ctx := context.Background()
	X, _ := bench.SwissRoll(300, 1)
	lle := mustFit(t, X, settingsFor(LLE))
	w := make([]float64, lle.N*lle.K)
	wantInputError(t, "SampleWeights on lle", lle.SampleWeights(ctx, w, 1, 0, 1), "no stochastic weights")
	for _, meth := range []Method{EM, Direct} {
		m := mustFit(t, X, settingsFor(meth))
		part := "Weights[3]"
		if meth == EM {
			m.Sigma[3] = math.NaN()
			part = "Sigma[3]"
		} else {
			m.Weights[3] = math.NaN()
		}
		_, _, err := m.Generate(ctx, 1, 0, 1)
		wantInputError(t, meth.String()+" with "+part+" = NaN", err, "the model's "+part+" is NaN")
	}
}
