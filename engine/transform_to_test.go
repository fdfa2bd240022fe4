package engine_test

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"

	"gonum.org/v1/gonum/mat"

	"glle/bench"
	"glle/engine"
)

// transformOracle embeds the rows of Q the way Transform is specified, with nothing shared
// with the engine: neighbours by a linear scan of the training rows (squared distance, ties
// to the lower index), LLE weights (Eq. (9)) from gonum's dense solve of
// (G + reg tr(G) I) w = 1, normalised to sum 1, and y = sum_j w_j y_j; a query at distance 0
// gets its neighbour's embedding.
func transformOracle(t *testing.T, m *engine.Model, Q *mat.Dense) *mat.Dense {
	t.Helper()
	q, d := Q.Dims()
	k := m.K
	Y := mat.NewDense(q, m.Dim, nil)
	type cand struct {
		dist float64
		j    int
	}
	cs := make([]cand, m.N)
	for i := 0; i < q; i++ {
		for j := 0; j < m.N; j++ {
			s := 0.0
			for c := 0; c < d; c++ {
				v := Q.At(i, c) - m.X.At(j, c)
				s += v * v
			}
			cs[j] = cand{s, j}
		}
		slices.SortFunc(cs, func(a, b cand) int { return cmp.Or(cmp.Compare(a.dist, b.dist), cmp.Compare(a.j, b.j)) })
		if cs[0].dist == 0 {
			Y.SetRow(i, m.Embedding.RawRowView(cs[0].j))
			continue
		}
		Z := mat.NewDense(k, d, nil)
		for a := 0; a < k; a++ {
			for c := 0; c < d; c++ {
				Z.Set(a, c, m.X.At(cs[a].j, c)-Q.At(i, c))
			}
		}
		var G mat.Dense
		G.Mul(Z, Z.T())
		r := m.Reg * mat.Trace(&G)
		for a := 0; a < k; a++ {
			G.Set(a, a, G.At(a, a)+r)
		}
		ones := mat.NewVecDense(k, nil)
		for a := 0; a < k; a++ {
			ones.SetVec(a, 1)
		}
		var w mat.VecDense
		if err := w.SolveVec(&G, ones); err != nil {
			t.Fatalf("oracle: point %d: %v", i, err)
		}
		w.ScaleVec(1/mat.Sum(&w), &w)
		for a := 0; a < k; a++ {
			for c := 0; c < m.Dim; c++ {
				Y.Set(i, c, Y.At(i, c)+w.AtVec(a)*m.Embedding.At(cs[a].j, c))
			}
		}
	}
	return Y
}

// TestTransformToOracle checks Transform and TransformTo against the oracle on a k-d tree
// dataset (d = 3) and a brute-force one (d = 20 > 16), with batches on one model of 1, 7
// and 300 points (the first builds the search index, the others reuse it; 1 and 7 are below
// the k-d query's n/16 switch to a comparison sort), into every kind of destination.
func TestTransformToOracle(t *testing.T) {
	ctx := context.Background()
	roll, _ := bench.SwissRoll(600, 4)
	r := rand.New(rand.NewPCG(3, 3))
	cloud := mat.NewDense(500, 20, nil)
	for i := 0; i < 500; i++ {
		for c := 0; c < 20; c++ {
			cloud.Set(i, c, r.NormFloat64()+float64(c%3)*float64(i%2))
		}
	}
	for _, X := range []*mat.Dense{roll, cloud} {
		n, d := X.Dims()
		m, err := engine.Fit(ctx, X, engine.Settings{Dim: 2})
		if err != nil {
			t.Fatal(err)
		}
		for _, q := range []int{1, 7, 300} {
			Q := mat.NewDense(q, d, nil)
			for i := 0; i < q; i++ {
				src := r.IntN(n)
				for c := 0; c < d; c++ {
					v := X.At(src, c)
					if i%5 != 0 { // every fifth query is a training point itself
						v += 0.05 * r.NormFloat64()
					}
					Q.Set(i, c, v)
				}
			}
			want := transformOracle(t, m, Q)
			got, err := m.Transform(ctx, Q)
			if err != nil {
				t.Fatal(err)
			}
			// The oracle solves the same k x k systems by LU instead of Cholesky and sums in
			// another order: with R = 1e-3 tr(G) the systems' condition number is at most
			// about 1e3 k, so the weights agree to about 1e-12 (measured 2.8e-15 at most).
			if !mat.EqualApprox(got, want, 1e-10) {
				t.Fatalf("d=%d q=%d: Transform differs from the oracle", d, q)
			}
			// Destinations: q x Dim, a strided view, an emptied matrix whose memory is reused.
			full := mat.NewDense(q, m.Dim, nil)
			wide := mat.NewDense(q, m.Dim+3, nil)
			view := wide.Slice(0, q, 1, 1+m.Dim).(*mat.Dense)
			var reused mat.Dense
			reused.ReuseAs(q, m.Dim)
			reused.Reset()
			before := &reused.RawMatrix().Data[:1][0]
			for name, dst := range map[string]*mat.Dense{"q x Dim": full, "strided view": view, "emptied": &reused} {
				if err := m.TransformTo(ctx, dst, Q); err != nil {
					t.Fatalf("d=%d q=%d %s: %v", d, q, name, err)
				}
				if !mat.Equal(dst, got) {
					t.Fatalf("d=%d q=%d %s: TransformTo differs from Transform", d, q, name)
				}
			}
			if &reused.RawMatrix().Data[0] != before {
				t.Errorf("d=%d q=%d: TransformTo did not reuse the emptied matrix's memory", d, q)
			}
			for i := 0; i < q; i++ { // the view wrote only its own columns
				if wide.At(i, 0) != 0 || wide.At(i, m.Dim+1) != 0 || wide.At(i, m.Dim+2) != 0 {
					t.Fatalf("d=%d q=%d: TransformTo wrote outside the view", d, q)
				}
			}
		}
	}
}

// TestTransformToConcurrent runs transforms of one model from several goroutines; the first
// of them builds the shared search index. Each must equal the serial result (run with -race
// to check the index and the pooled scratch).
func TestTransformToConcurrent(t *testing.T) {
	ctx := context.Background()
	X, _ := bench.SwissRoll(800, 2)
	m, err := engine.Fit(ctx, X, engine.Settings{Method: engine.EM})
	if err != nil {
		t.Fatal(err)
	}
	Q := jitter(X.Slice(0, 50, 0, 3).(*mat.Dense), 0.01, 4)
	ref, err := engine.Restore(ctx, m.Saved(), 1, engine.SolverAuto)
	if err != nil {
		t.Fatal(err)
	}
	want, err := ref.Transform(ctx, Q)
	if err != nil {
		t.Fatal(err)
	}
	wantS, err := ref.TransformSample(ctx, Q, 3, 1, 1)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make(chan string, 8)
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var Y mat.Dense
			for rep := 0; rep < 5; rep++ {
				if g%2 == 0 {
					if err := m.TransformTo(ctx, &Y, Q); err != nil || !mat.Equal(&Y, want) {
						errs <- "TransformTo differs from a serial transform"
						return
					}
				} else {
					if err := m.TransformSampleTo(ctx, &Y, Q, nil, 3, 1, 1); err != nil || !mat.Equal(&Y, wantS) {
						errs <- "TransformSampleTo differs from a serial transform"
						return
					}
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}

// TestTransformToErrors: a destination of the wrong shape, nil or the model's embedding is an
// InputError naming the fix, and a failing transform leaves dst as it was.
func TestTransformToErrors(t *testing.T) {
	ctx := context.Background()
	X, _ := bench.SwissRoll(300, 1)
	m, err := engine.Fit(ctx, X, engine.Settings{Method: engine.Direct})
	if err != nil {
		t.Fatal(err)
	}
	Q := jitter(X.Slice(0, 4, 0, 3).(*mat.Dense), 0.01, 2)
	var ie *engine.InputError
	for name, c := range map[string]struct {
		err  error
		want string
	}{
		"shape":          {m.TransformTo(ctx, mat.NewDense(3, 2, nil), Q), "dst is 3 x 2 but the new points' embedding is 4 x 2"},
		"nil":            {m.TransformTo(ctx, nil, Q), "dst is nil"},
		"embedding":      {m.TransformTo(ctx, m.Embedding, X), "dst shares memory with the model's base embedding"},
		"sample shape":   {m.TransformSampleTo(ctx, mat.NewDense(4, 3, nil), Q, nil, 1, 0, 1), "dst is 4 x 3"},
		"sample base":    {m.TransformSampleTo(ctx, m.Embedding, X, nil, 1, 0, 1), "dst shares memory with the model's base embedding"},
		"new point NaN":  {m.TransformTo(ctx, mat.NewDense(2, 2, nil), mat.NewDense(2, 3, []float64{0, 1, 2, 3, math.NaN(), 5})), "non-finite"},
		"sample columns": {m.TransformSampleTo(ctx, mat.NewDense(2, 2, nil), mat.NewDense(2, 2, nil), nil, 1, 0, 1), "columns"},
	} {
		if !errors.As(c.err, &ie) || !strings.Contains(c.err.Error(), c.want) {
			t.Errorf("%s: %v, want an InputError containing %q", name, c.err, c.want)
		}
	}

	// Views of the embedding that do not start at its first element, and an emptied view
	// whose kept capacity lies inside it, are refused too; the embedding stays as it was.
	base := mat.DenseCopyOf(m.Embedding)
	offset := m.Embedding.Slice(5, 9, 0, 2).(*mat.Dense)
	emptied := m.Embedding.Slice(7, 20, 0, 2).(*mat.Dense)
	emptied.Reset()
	for name, dst := range map[string]*mat.Dense{"offset view": offset, "emptied view": emptied} {
		if err := m.TransformTo(ctx, dst, Q); !errors.As(err, &ie) || !strings.Contains(err.Error(), "shares memory") {
			t.Errorf("TransformTo into an %s of the embedding: %v, want an InputError", name, err)
		}
		if err := m.TransformSampleTo(ctx, dst, Q, nil, 1, 0, 1); !errors.As(err, &ie) || !strings.Contains(err.Error(), "shares memory") {
			t.Errorf("TransformSampleTo into an %s of the embedding: %v, want an InputError", name, err)
		}
	}
	if !mat.Equal(base, m.Embedding) {
		t.Fatal("a transform wrote into the model's embedding")
	}
	// The model's other storage is refused as a destination too: a view of X, its weights as
	// SampleWeights' buffer, a GenerateTo into X; all stay as they were.
	em, err := engine.Fit(ctx, X, engine.Settings{Method: engine.EM})
	if err != nil {
		t.Fatal(err)
	}
	x0, w0, s0 := mat.DenseCopyOf(em.X), slices.Clone(em.Weights), slices.Clone(em.Sigma)
	xview := em.X.Slice(0, 4, 0, 2).(*mat.Dense)
	sigmaView := mat.NewDense(4, 2, em.Sigma[:8])
	for name, err := range map[string]error{
		"TransformTo into X":         em.TransformTo(ctx, xview, Q),
		"TransformSampleTo into X":   em.TransformSampleTo(ctx, xview, Q, nil, 1, 0, 1),
		"TransformTo into Sigma":     em.TransformTo(ctx, sigmaView, Q),
		"SampleWeights into Weights": em.SampleWeights(ctx, em.Weights, 1, 0, 1),
		"GenerateTo into X (N x Dim)": func() error {
			_, err := em.GenerateTo(ctx, mat.NewDense(em.N, 2, em.X.RawMatrix().Data[:em.N*2]), 1, 0, 1, engine.FrameBase)
			return err
		}(),
	} {
		if !errors.As(err, &ie) || !strings.Contains(err.Error(), "shares memory with the model's") {
			t.Errorf("%s: %v, want an InputError naming the model's storage", name, err)
		}
	}
	if !mat.Equal(x0, em.X) || !slices.Equal(w0, em.Weights) || !slices.Equal(s0, em.Sigma) {
		t.Fatal("a refused call wrote into the model's X, Weights or Sigma")
	}
	// A matrix next to the embedding in memory is not mistaken for it.
	whole := mat.NewDense(m.N+4, 2, nil)
	m2, err := engine.Restore(ctx, m.Saved(), 0, engine.SolverAuto)
	if err != nil {
		t.Fatal(err)
	}
	whole.Slice(0, m.N, 0, 2).(*mat.Dense).Copy(m.Embedding)
	m2.Embedding = mat.NewDense(m.N, 2, whole.RawMatrix().Data[:m.N*2])
	if err := m2.TransformTo(ctx, mat.NewDense(4, 2, whole.RawMatrix().Data[m.N*2:]), Q); err != nil {
		t.Errorf("TransformTo into the memory right after the embedding: %v", err)
	}

	// Failures after validation leave dst untouched: a cancelled context, and a new point
	// whose precision matrix cannot be factored (as in TestTransformSampleDirectUnfactorable).
	dst := mat.NewDense(4, 2, []float64{1, 2, 3, 4, 5, 6, 7, 8})
	keep := mat.DenseCopyOf(dst)
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if err := m.TransformTo(cctx, dst, Q); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled TransformTo: %v", err)
	}
	if err := m.TransformSampleTo(cctx, dst, Q, nil, 1, 0, 1); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled TransformSampleTo: %v", err)
	}
	far := mat.DenseCopyOf(Q)
	far.Set(2, 0, 1e153)
	if err := m.TransformSampleTo(ctx, dst, far, nil, 1, 0, 1); err == nil {
		t.Error("a point at 1e153: TransformSampleTo succeeded")
	}
	if !mat.Equal(dst, keep) {
		t.Error("a failed transform changed dst")
	}
}

func ExampleModel_TransformTo() {
	ctx := context.Background()
	X, _ := bench.SwissRoll(2000, 1)
	m, err := engine.Fit(ctx, X, engine.Settings{})
	if err != nil {
		panic(err)
	}
	// New points arrive in batches; one matrix receives every batch's embedding. An axis
	// of it orders the new points along the roll as their angle t does.
	var Y mat.Dense
	for batch := uint64(2); batch <= 4; batch++ {
		Xnew, tnew := bench.SwissRoll(100, batch)
		Y.Reset()
		if err := m.TransformTo(ctx, &Y, Xnew); err != nil {
			panic(err)
		}
		r, c := Y.Dims()
		fmt.Printf("batch %d: %d x %d, max |Spearman| with t >= 0.99: %v\n", batch, r, c, bench.MaxAbsSpearman(&Y, tnew) >= 0.99)
	}
	// Output:
	// batch 2: 100 x 2, max |Spearman| with t >= 0.99: true
	// batch 3: 100 x 2, max |Spearman| with t >= 0.99: true
	// batch 4: 100 x 2, max |Spearman| with t >= 0.99: true
}

// TestTransformSampleYtrainRows: TransformSampleOnto reads Ytrain in place and only in the
// rows of the new points' neighbours. A strided view gives the same bits as a contiguous
// copy; a NaN in a row no neighbour uses changes nothing; a NaN in a used row is an
// *InputError naming the lowest such row, for 1, 2 and 8 workers alike (8 > the 5 new
// points: some workers get no range, which once reported row 0 as non-finite).
func TestTransformSampleYtrainRows(t *testing.T) {
	ctx := context.Background()
	X, _ := bench.SwissRoll(400, 3)
	Q, _ := bench.SwissRoll(5, 4)
	for _, w := range []int{1, 2, 8} {
		m, err := engine.Fit(ctx, X, engine.Settings{Method: engine.EM, Workers: w})
		if err != nil {
			t.Fatal(err)
		}
		Yg, _, err := m.Generate(ctx, 9, 1, 1)
		if err != nil {
			t.Fatal(err)
		}
		want, err := m.TransformSampleOnto(ctx, Q, Yg, 9, 1, 1)
		if err != nil {
			t.Fatal(err)
		}
		// Yg inside a wider matrix: row stride 5.
		wide := mat.NewDense(m.N, 5, nil)
		wide.Slice(0, m.N, 1, 3).(*mat.Dense).Copy(Yg)
		// One new point on 2 or 8 workers: fewer ranges than workers.
		if _, err := m.TransformSampleOnto(ctx, mat.DenseCopyOf(Q.Slice(0, 1, 0, 3)), Yg, 9, 1, 1); err != nil {
			t.Errorf("workers %d: one new point: %v", w, err)
		}
		got, err := m.TransformSampleOnto(ctx, Q, wide.Slice(0, m.N, 1, 3).(*mat.Dense), 9, 1, 1)
		if err != nil {
			t.Fatal(err)
		}
		if !mat.Equal(got, want) {
			t.Errorf("workers %d: a strided Ytrain gave other values than its contiguous copy", w)
		}
		// The rows the new points' neighbours use, by a linear scan.
		used := map[int]bool{}
		for i := 0; i < 5; i++ {
			idx := make([]int, m.N)
			d2 := make([]float64, m.N)
			for j := range idx {
				idx[j] = j
				for c := 0; c < 3; c++ {
					v := Q.At(i, c) - X.At(j, c)
					d2[j] += v * v
				}
			}
			slices.SortFunc(idx, func(a, b int) int { return cmp.Or(cmp.Compare(d2[a], d2[b]), cmp.Compare(a, b)) })
			for _, j := range idx[:m.K] {
				used[j] = true
			}
		}
		unused, lo, hi := -1, m.N, -1
		for j := 0; j < m.N; j++ {
			if used[j] {
				lo, hi = min(lo, j), max(hi, j)
			} else if unused < 0 {
				unused = j
			}
		}
		Y := mat.DenseCopyOf(Yg)
		Y.Set(unused, 0, math.NaN())
		got, err = m.TransformSampleOnto(ctx, Q, Y, 9, 1, 1)
		if err != nil || !mat.Equal(got, want) {
			t.Errorf("workers %d: a NaN in unused row %d: err %v, equal output %v", w, unused, err, err == nil && mat.Equal(got, want))
		}
		Y.Set(hi, 1, math.Inf(-1))
		Y.Set(lo, 0, math.NaN())
		_, err = m.TransformSampleOnto(ctx, Q, Y, 9, 1, 1)
		var ie *engine.InputError
		if !errors.As(err, &ie) || !strings.Contains(ie.Msg, fmt.Sprintf("at row %d, column 0", lo)) {
			t.Errorf("workers %d: NaN in used rows %d and %d: %v, want an InputError naming row %d", w, lo, hi, err, lo)
		}
	}
}
