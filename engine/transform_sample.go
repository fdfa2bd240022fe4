package engine

import (
	"context"
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"

	"glle/kernels"
	"glle/parallel"
)

// TransformSample embeds new points (one per row of Xnew) out of sample with sampled weights:
// generation `generation` of the new points, drawn with covariance scale a. It is
// TransformSampleOnto with the base embedding of the training points; see there.
func (m *Model) TransformSample(ctx context.Context, Xnew *mat.Dense, seed uint64, generation int, a float64) (*mat.Dense, error) {
	return m.TransformSampleOnto(ctx, Xnew, nil, seed, generation, a)
}

// TransformSampleOnto embeds new points (one per row of Xnew) with weights drawn from the
// model's weight family, y = sum_j w_j y_j over the K nearest training points, where y_j are
// the rows of Ytrain (N x Dim): the embedding of the training points in the same generation
// (the Y that Generate(ctx, seed, generation, a) returns), or the base embedding when Ytrain
// is nil. Ytrain may be a strided view; only the rows of the new points' neighbours are read
// (a call costs O(rows(Xnew) K), not O(N)), and a non-finite value in one of them is an
// *InputError. A new point at distance 0 from a training point gets that point's row of Ytrain,
// as Transform does. With a = 0 the draw is the mean, so TransformSampleOnto(X, nil, ., ., 0)
// equals Transform(X).
//
// Each new point's weights are drawn around its LLE weights w^LLE (Eq. (9), the model's ridge)
// from the distribution the method would have fitted for it:
//
//   - EM: N(w^LLE, a sigma Pi) with Pi the fibre projector of the new point's neighbourhood
//     (same rank rule and local-PCA fallback as the fit) and sigma = ||w^LLE - 1/k||^2 / r, the
//     fixed point of the EM iteration of the fit.
//   - Direct: N(w^LLE, a Gamma) with Gamma the sum-to-one conditioned inverse of
//     G/s_x^2 + V^T V/s_y^2 + (R/s_x^2) I, using the fit's s_x^2 and s_y^2 (Report.SX2, SY2;
//     recomputed from the model's weights in the engine's internal units, so a restored model
//     draws the same) and the offsets V of the neighbours' base embeddings from
//     y = sum_j w^LLE_j y_j.
//   - DirectPaper: Gamma = (X^T X + Y^T Y + ridge I)^{-1} of Eq. (35) with the raw neighbour
//     coordinates and their base embeddings (a singular matrix without the model's explicit
//     ridge is a *DegenerateError, as in the fit).
//   - EMPaper: N(w^LLE, a |sigma| (I - V V^T)) with V the right singular vectors of the raw
//     neighbour matrix (Eq. (22)); Eq. (29)'s sigma needs fit-wide sums the model does not
//     keep, so sigma is the mean |sigma_j| of the K training neighbours.
//
// Draws come from kernels.NewStream(seed, generation, N + i) for row i of Xnew: a key space
// disjoint from the training points' (0 .. N-1), so a new point's draw depends only on (seed,
// generation, its row index) and not on the worker count. The method must be generative.
func (m *Model) TransformSampleOnto(ctx context.Context, Xnew, Ytrain *mat.Dense, seed uint64, generation int, a float64) (*mat.Dense, error) {
	dst := &mat.Dense{}
	if err := m.TransformSampleTo(ctx, dst, Xnew, Ytrain, seed, generation, a); err != nil {
		return nil, err
	}
	return dst, nil
}

// TransformSampleTo is TransformSampleOnto writing the embedding of the new points into dst,
// which must be empty (it then becomes rows(Xnew) x Dim, in the capacity a Reset kept if
// large enough) or rows(Xnew) x Dim, and must not share memory with the model's Embedding.
// dst is left unchanged when TransformSampleTo returns an error, and may be Ytrain itself.
func (m *Model) TransformSampleTo(ctx context.Context, dst, Xnew, Ytrain *mat.Dense, seed uint64, generation int, a float64) error {
	if err := checkCtx(ctx); err != nil {
		return err
	}
	if err := m.usable(); err != nil {
		return err
	}
	if !m.Method.Generative() {
		return inputErr("method %s has no stochastic weights to sample: use Transform, or fit em, direct, em-paper or direct-paper", m.Method)
	}
	if err := checkScale(a); err != nil {
		return err
	}
	if generation < 0 {
		return inputErr("generation %d: must be non-negative", generation)
	}
	ytr := m.Embedding
	if Ytrain != nil {
		if r, c := Ytrain.Dims(); r != m.N || c != m.Dim {
			return inputErr("Ytrain, the training embedding, is %dx%d, want N x Dim = %dx%d: pass the model's Embedding or a Generate result of this model (or nil for the base embedding)", r, c, m.N, m.Dim)
		}
		ytr = Ytrain
	}
	xq, q, err := m.newPoints(Xnew)
	if err != nil {
		return err
	}
	if err := m.checkTransformDst("TransformSampleTo", dst, q); err != nil {
		return err
	}
	k, p, d := m.K, m.Dim, m.D
	// Ytrain is read in place, with its stride, and only in the rows the new points'
	// neighbours use: a call costs O(q k) however large N is.
	yraw := ytr.RawMatrix()
	yt, ys := yraw.Data, yraw.Stride
	buf, err := m.queryTrain(ctx, xq, q)
	if err != nil {
		return err
	}
	defer m.putTransformBuf(buf)
	idx, dist, out := buf.idx, buf.dist, buf.out
	var sx2, sy2 float64
	if m.Method == Direct {
		sx2, sy2 = m.st.sx2, m.st.sy2
	}
	// Per-worker counts and first singular rows: the ranges are contiguous and ascending in
	// the worker index, so the error's example is the lowest row for every worker count.
	part := make([]int, parallel.Workers(m.st.workers))
	first := make([]int, len(part))
	badY := make([]int, len(part)) // per worker, the lowest row of Ytrain read that is not finite
	// Direct and DirectPaper read the base embedding's rows too (their Gamma), whatever Ytrain:
	// per worker, the lowest such row that is not finite.
	badBase := make([]int, len(part))
	base := m.Embedding.RawMatrix().Data
	checkBase := Ytrain != nil && (m.Method == Direct || m.Method == DirectPaper)
	for w := range badY {
		// -1 before the loop: parallel.For runs fewer ranges than workers when q is small.
		first[w], badY[w], badBase[w] = -1, -1, -1
	}
	err = parallel.For(ctx, q, m.st.workers, func(ctx context.Context, w, lo, hi int) error {
		s := newSampleScratch(k, d, p)
		next := lo // the next point at which ctx is checked (every cancelStride(k, max(d, p)) points)
		for i := lo; i < hi; i++ {
			if i == next {
				next += cancelStride(k, max(d, p))
				if err := ctx.Err(); err != nil {
					return err
				}
			}
			nbr := idx[i*k : (i+1)*k]
			yo := out[i*p : (i+1)*p]
			for _, nb := range nbr {
				r := int(nb)
				if (badY[w] < 0 || r < badY[w]) && hasNonFinite(yt[r*ys:r*ys+p]) {
					badY[w] = r
				}
				if checkBase && (badBase[w] < 0 || r < badBase[w]) && hasNonFinite(base[r*p:r*p+p]) {
					badBase[w] = r
				}
			}
			if dist[i*k] == 0 {
				copy(yo, yt[int(nbr[0])*ys:int(nbr[0])*ys+p])
				continue
			}
			st := kernels.NewStream(seed, generation, m.N+i)
			if !m.drawNew(s, &st, xq[i*d:(i+1)*d], nbr, a, sx2, sy2) {
				if part[w] == 0 {
					first[w] = i
				}
				part[w]++
				continue
			}
			for j, nb := range nbr {
				for c := 0; c < p; c++ {
					yo[c] += s.w[j] * yt[int(nb)*ys+c]
				}
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	if r := minRow(badBase); r >= 0 {
		return embeddingEdited(base, p, []int32{int32(r)})
	}
	if r := minRow(badY); r >= 0 {
		if Ytrain == nil {
			return embeddingEdited(yt, p, []int32{int32(r)})
		}
		c, _ := firstNonFiniteIn(yt[r*ys : r*ys+p])
		return inputErr("the training embedding has a non-finite value (%v) at row %d, column %d, a neighbour of the new points: pass the embedding Generate returned", yt[r*ys+c], r, c)
	}
	nb, ex := 0, -1
	for w, c := range part {
		if c > 0 && ex < 0 {
			ex = first[w]
		}
		nb += c
	}
	if nb > 0 && m.Method == Direct {
		return &DegenerateError{Kind: "singular-gamma", Count: nb, Example: ex,
			Msg: fmt.Sprintf("direct: the precision matrix could not be factored for %d new points (e.g. row %d): check those rows for extreme values, or refit with a larger reg", nb, ex)}
	}
	if nb > 0 {
		return &DegenerateError{Kind: "singular-gamma", Count: nb, Example: ex,
			Msg: fmt.Sprintf("direct-paper: X^T X + Y^T Y is singular for %d new points (e.g. row %d): refit with an explicit ridge (DirectRidge / -direct-ridge) or use the default direct method", nb, ex)}
	}
	if i, ok := firstNonFiniteIn(out); ok {
		if m.Method == EMPaper {
			// The draws read the neighbours' sigma_i: a non-finite one was edited in (the
			// O(N) fingerprint of Sigma is left to Generate; a call here costs O(q k)).
			for _, nb := range idx[i/p*k : (i/p+1)*k] {
				if v := m.Sigma[nb]; math.IsNaN(v) || math.IsInf(v, 0) {
					return inputErr("the model's Sigma[%d] is %v (edited after the fit), a neighbour's of new point %d: refit, or restore from a copy of Saved made before the edit (Saved shares the model's slices)", nb, v, i/p)
				}
			}
		}
		return inputErr("new point %d: its drawn weights overflow float64 at covariance scale a = %g: use a smaller covariance scale", i/p, a)
	}
	commitRows(dst, out, q, p)
	return nil
}

// newPoints validates the new points and returns them row-major.
func (m *Model) newPoints(Xnew *mat.Dense) ([]float64, int, error) {
	if Xnew == nil || Xnew.IsEmpty() {
		return nil, 0, inputErr("no points to transform: pass at least one row")
	}
	q, d := Xnew.Dims()
	if d != m.D {
		return nil, 0, inputErr("the new points have %d columns but the model was fitted on %d: pass data with the training columns", d, m.D)
	}
	if i, c, v, bad := firstNonFinite(Xnew); bad {
		return nil, 0, inputErr("new point %d has a non-finite value (%v) in column %d: remove or impute it", i, v, c)
	}
	xq, err := m.scaleQuery(mat.DenseCopyOf(Xnew).RawMatrix().Data, d)
	if err != nil {
		return nil, 0, err
	}
	return xq, q, nil
}

// sampleScratch is one worker's scratch space for TransformSampleOnto.
type sampleScratch struct {
	ws    *work
	w     []float64 // the drawn weights (k)
	basis []float64 // fibre / right singular basis, k x rmax
	ud    []float64 // left singular vectors (EMPaper), d x min(d, k)
	sq    []float64 // Gamma^{1/2} (DirectPaper), k x k
	y     []float64 // the new point's base embedding (Direct), p
	l     []float64 // packed Cholesky factor (Direct), (k-1)k/2
}

func newSampleScratch(k, d, p int) *sampleScratch {
	rmax := max(k, d, p)
	return &sampleScratch{ws: newWork(k, d), w: make([]float64, k), basis: make([]float64, k*rmax),
		ud: make([]float64, d*min(d, k)), sq: make([]float64, k*k), y: make([]float64, p), l: make([]float64, k*k)}
}

// drawNew writes one draw of the weights of the new point xi with neighbours nbr into s.w. It
// returns false when DirectPaper's matrix is singular without an explicit ridge, or when
// Direct's precision matrix cannot be factored (as Fit, which fails then too).
func (m *Model) drawNew(s *sampleScratch, st *kernels.Stream, xi []float64, nbr []int32, a, sx2, sy2 float64) bool {
	ws, w := s.ws, s.w
	k, d, p := m.K, m.D, m.Dim
	zero, _ := lleWeights(ws, w, m.st.x, d, xi, nbr, m.Reg, m.RegMode) // leaves the offsets in ws.z
	switch m.Method {
	case EM:
		if zero {
			return true // no geometry: sigma = 0, as in the fit
		}
		r, _ := fibreBasis(ws, s.basis, p)
		if r == 0 {
			return true
		}
		inv := 1 / float64(k)
		c := 0.0
		for _, v := range w {
			c += (v - inv) * (v - inv)
		}
		xi := ws.xi[:k]
		st.Normals(xi)
		projectFibre(xi, s.basis, k, r)
		f := math.Sqrt(a * c / float64(r))
		for j := range w {
			w[j] += f * xi[j]
		}
	case EMPaper:
		sig := 0.0
		for _, nb := range nbr {
			sig += math.Abs(m.Sigma[nb])
		}
		sig /= float64(k)
		r := paperSVD(ws, m.st.x, d, nbr, s.basis, s.ud)
		xi := ws.xi[:k]
		st.Normals(xi)
		for q := 0; q < r; q++ { // (I - V V^T) xi
			v := s.basis[q*k : (q+1)*k]
			t := 0.0
			for j, b := range v {
				t += b * xi[j]
			}
			for j, b := range v {
				xi[j] -= t * b
			}
		}
		f := math.Sqrt(a * sig)
		for j := range w {
			w[j] += f * xi[j]
		}
	case Direct:
		yb := m.Embedding.RawMatrix().Data
		yn := s.y
		for c := range yn {
			yn[c] = 0
		}
		for j, nb := range nbr {
			for c := 0; c < p; c++ {
				yn[c] += w[j] * yb[int(nb)*p+c]
			}
		}
		km1 := k - 1
		l := s.l[:km1*k/2]
		if _, ok := directPoint(ws, &m.st.perp, m.st.x, d, xi, yb, p, yn, nbr, m.Reg, m.RegMode, sx2, sy2, l); !ok {
			return false // a zero or non-finite precision matrix, or one jitter cannot fix
		}
		z := ws.x2[:km1]
		st.Normals(z)
		ltSolvePacked(l, km1, z)
		u := ws.xi[:k]
		m.st.perp.FromPerp(u, z)
		f := math.Sqrt(a)
		for j := range w {
			w[j] += f * u[j]
		}
	case DirectPaper:
		if directPaperPoint(ws, m.st.x, d, m.Embedding.RawMatrix().Data, p, nbr, m.directRidge) && m.directRidge == 0 {
			return false
		}
		symSqrtInv(s.sq, ws.e, ws.v, k)
		xi := ws.xi[:k]
		st.Normals(xi)
		f := math.Sqrt(a)
		for j := 0; j < k; j++ {
			t := 0.0
			for q, v := range s.sq[j*k : (j+1)*k] {
				t += v * xi[q]
			}
			w[j] += f * t
		}
	}
	return true
}

// hasNonFinite reports whether y holds a NaN or an infinite value.
func hasNonFinite(y []float64) bool {
	_, bad := firstNonFiniteIn(y)
	return bad
}

// minRow returns the smallest non-negative entry of rows, or -1 when there is none.
func minRow(rows []int) int {
	m := -1
	for _, r := range rows {
		if r >= 0 && (m < 0 || r < m) {
			m = r
		}
	}
	return m
}
