package engine

import (
	"context"
	"errors"
	"math"
	"runtime"
	"slices"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"glle/bench"
)

// TestGenerateToMatchesGenerate: GenerateTo gives the bits of GenerateIn for every kind of
// destination (empty, N x Dim, an N x Dim view with a wider stride, an emptied matrix whose
// capacity is reused) on both eigensolvers, both frames and a non-deflated method (em-paper
// drops its smallest eigenvector into dst); it writes only dst's N x Dim elements and reuses
// dst's memory from one generation to the next.
func TestGenerateToMatchesGenerate(t *testing.T) {
	ctx := context.Background()
	X, _ := bench.SwissRoll(600, 3)
	for _, c := range []struct {
		name string
		set  Settings
	}{
		{"em/sparse", settingsFor(EM)},
		{"direct/dense", Settings{Method: Direct, Solver: SolverDense}},
		{"em-paper/sparse", settingsFor(EMPaper)},
	} {
		m := mustFit(t, X, c.set)
		n, p := m.N, m.Dim
		for _, frame := range []Frame{FrameBase, FrameEigen} {
			for g := 0; g < 2; g++ {
				want, _, err := m.GenerateIn(ctx, 5, g, 1, frame)
				if err != nil {
					t.Fatalf("%s: GenerateIn: %v", c.name, err)
				}
				// GenerateIn itself runs through GenerateTo, so it is checked on its own too: its
				// columns are orthonormal eigenvectors in either frame (a rotation keeps that);
				// 1e-9 leaves room for the solver's 1e-10 residual tolerance and round-off.
				for j := 0; j < p; j++ {
					if nrm := mat.Norm(want.ColView(j), 2); math.Abs(nrm-1) > 1e-9 {
						t.Fatalf("%s %v generation %d: column %d of GenerateIn's result has norm %g", c.name, frame, g, j, nrm)
					}
				}
				check := func(what string, got mat.Matrix) {
					t.Helper()
					if !mat.Equal(got, want) {
						t.Fatalf("%s %v generation %d, %s: GenerateTo differs from GenerateIn", c.name, frame, g, what)
					}
				}

				var empty mat.Dense
				if _, err := m.GenerateTo(ctx, &empty, 5, g, 1, frame); err != nil {
					t.Fatalf("%s: GenerateTo(empty): %v", c.name, err)
				}
				check("empty dst", &empty)

				full := mat.NewDense(n, p, nil)
				before := &full.RawMatrix().Data[0]
				for _, gen := range []int{g + 7, g} { // a first generation, then the one compared
					if _, err := m.GenerateTo(ctx, full, 5, gen, 1, frame); err != nil {
						t.Fatalf("%s: GenerateTo(N x Dim): %v", c.name, err)
					}
				}
				check("N x Dim dst", full)
				check("empty dst after another generation", &empty) // no memory shared with full
				if &full.RawMatrix().Data[0] != before {
					t.Fatalf("%s: GenerateTo replaced an N x Dim dst's memory", c.name)
				}

				// A view of the first p columns of an N x (p+2) matrix: the other columns keep
				// their sentinel.
				wide := mat.NewDense(n, p+2, nil)
				for i := range wide.RawMatrix().Data {
					wide.RawMatrix().Data[i] = -7
				}
				view := wide.Slice(0, n, 0, p).(*mat.Dense)
				if _, err := m.GenerateTo(ctx, view, 5, g, 1, frame); err != nil {
					t.Fatalf("%s: GenerateTo(view): %v", c.name, err)
				}
				check("strided view", view)
				for i := 0; i < n; i++ {
					for j := p; j < p+2; j++ {
						if wide.At(i, j) != -7 {
							t.Fatalf("%s: GenerateTo wrote outside its view at (%d, %d)", c.name, i, j)
						}
					}
				}

				full.Reset() // empty, but keeps its memory
				if _, err := m.GenerateTo(ctx, full, 5, g, 1, frame); err != nil {
					t.Fatalf("%s: GenerateTo(reset dst): %v", c.name, err)
				}
				check("reset dst", full)
				if &full.RawMatrix().Data[0] != before {
					t.Fatalf("%s: GenerateTo did not reuse the capacity a Reset kept", c.name)
				}
			}
		}
	}
}

// TestGenerateToErrors: a nil, mis-shaped or aliased dst, a method without weight noise and a
// bad covariance scale give an *InputError and leave dst as it was.
func TestGenerateToErrors(t *testing.T) {
	ctx := context.Background()
	X, _ := bench.SwissRoll(300, 1)
	m := mustFit(t, X, settingsFor(EM))
	n, p := m.N, m.Dim

	_, err := m.GenerateTo(ctx, nil, 1, 0, 1, FrameBase)
	wantInputError(t, "nil dst", err, "dst is nil")

	wrong := mat.NewDense(n, p+1, nil)
	wrong.Set(3, 1, 42)
	_, err = m.GenerateTo(ctx, wrong, 1, 0, 1, FrameBase)
	wantInputError(t, "N x (Dim+1) dst", err, "pass an empty *mat.Dense or an N x Dim one")
	if wrong.At(3, 1) != 42 {
		t.Error("a rejected dst was written")
	}

	base := mat.DenseCopyOf(m.Embedding)
	_, err = m.GenerateTo(ctx, m.Embedding, 1, 0, 1, FrameBase)
	wantInputError(t, "dst = Embedding", err, "base embedding")
	if !mat.Equal(base, m.Embedding) {
		t.Error("the base embedding changed")
	}

	var empty mat.Dense
	_, err = m.GenerateTo(ctx, &empty, 1, 0, -1, FrameBase)
	wantInputError(t, "negative scale", err, "covariance scale")
	if !empty.IsEmpty() {
		t.Error("a failed GenerateTo sized an empty dst")
	}
	ok := mat.NewDense(n, p, nil)
	ok.Set(0, 0, 5)
	_, err = m.GenerateTo(ctx, ok, 1, 0, 1, Frame(9))
	wantInputError(t, "unknown frame", err, "unknown frame")
	if ok.At(0, 0) != 5 {
		t.Error("a failed GenerateTo wrote dst")
	}

	// A failure after the draw: at a = MaxFloat64 the weights overflow the assembly or the
	// eigensolve (TestHugeCovarianceScale), after the solver has been handed dst.
	ok.Set(0, 0, 5)
	_, err = m.GenerateTo(ctx, ok, 1, 0, math.MaxFloat64, FrameBase)
	var ie *InputError
	var de *DegenerateError
	if !(errors.As(err, &ie) && strings.Contains(ie.Msg, "covariance scale") ||
		errors.As(err, &de) && strings.Contains(de.Msg, "covariance scale")) {
		t.Fatalf("a = MaxFloat64: got %v (%T), want a typed error naming the covariance scale", err, err)
	}
	for i, v := range ok.RawMatrix().Data {
		if v != 0 && !(i == 0 && v == 5) {
			t.Fatalf("a failed eigensolve wrote dst (element %d = %g)", i, v)
		}
	}
	if ok.At(0, 0) != 5 {
		t.Error("a failed eigensolve wrote dst")
	}

	lle := mustFit(t, X, settingsFor(LLE))
	_, err = lle.GenerateTo(ctx, ok, 1, 0, 1, FrameBase)
	wantInputError(t, "LLE model", err, "no stochastic weights")
}

// TestGenerateToSavesTheResult: with a reused contiguous dst a generation allocates at least
// the N x Dim result less than GenerateIn does (the sparse solver writes into dst). The
// allocations of one generation are deterministic (same draws, same iterations), so the two
// byte counts differ by about 8 N Dim; 7/8 of it leaves room for the runtime's own small
// allocations.
func TestGenerateToSavesTheResult(t *testing.T) {
	ctx := context.Background()
	X, _ := bench.SwissRoll(4000, 2)
	m := mustFit(t, X, settingsFor(EM))
	dst := mat.NewDense(m.N, m.Dim, nil)
	if _, err := m.GenerateTo(ctx, dst, 1, 0, 1, FrameBase); err != nil { // warm the caches
		t.Fatal(err)
	}
	allocated := func(fn func() error) uint64 {
		var a, b runtime.MemStats
		runtime.ReadMemStats(&a)
		if err := fn(); err != nil {
			t.Fatal(err)
		}
		runtime.ReadMemStats(&b)
		return b.TotalAlloc - a.TotalAlloc
	}
	viaIn := allocated(func() error { _, _, err := m.GenerateIn(ctx, 1, 1, 1, FrameBase); return err })
	viaTo := allocated(func() error { _, err := m.GenerateTo(ctx, dst, 1, 1, 1, FrameBase); return err })
	result := uint64(8 * m.N * m.Dim)
	if viaTo+result*7/8 > viaIn {
		t.Errorf("GenerateTo allocated %d bytes, GenerateIn %d: want at least %d (7/8 of the %d x %d result) less",
			viaTo, viaIn, result*7/8, m.N, m.Dim)
	}
	t.Logf("bytes allocated by one generation: GenerateIn %d, GenerateTo %d (result %d)", viaIn, viaTo, result)
	want, _, err := m.GenerateIn(ctx, 1, 1, 1, FrameBase)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(dst.RawMatrix().Data, want.RawMatrix().Data) {
		t.Error("GenerateTo's generation 1 differs from Generate's")
	}
}
