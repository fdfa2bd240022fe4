package engine

import (
	"context"
	"fmt"
	"math"
	"slices"
	"unsafe"

	"gonum.org/v1/gonum/mat"

	"glle/engine/knn"
	"glle/kernels"
	"glle/parallel"
)

// Transform embeds new points (one per row of Xnew) out of sample: each gets LLE weights
// (Eq. (9), the model's ridge) on its K nearest training points and the same combination of
// their base embeddings. A new point that coincides with a training point (distance 0) gets that
// point's embedding, so Transform(X) reproduces the fit's embedding of X (a point's own
// reconstruction from its neighbours is not the point's embedding). With duplicate rows in X
// this is not exact: every copy gets the embedding of the lowest-index copy, and the copies'
// own embeddings differ, since each copy has the others among its neighbours and so its own
// LLE weights (by an amount that grows with the ridge, not the eigensolver's accuracy: about
// 1e-6 at reg = 1e-3 and 6e-5 at reg = 0.1 on a Swiss roll of unit-norm eigenvectors).
//
// The first transform of a model builds a search tree over the training points (for D <= 16;
// above, every new point is compared with every training point by blocked brute force); later
// calls reuse it, so small batches cost little more than their own points.
func (m *Model) Transform(ctx context.Context, Xnew *mat.Dense) (*mat.Dense, error) {
	dst := &mat.Dense{}
	if err := m.TransformTo(ctx, dst, Xnew); err != nil {
		return nil, err
	}
	return dst, nil
}

// TransformTo is Transform writing the embedding of the new points into dst, which must be
// empty (it then becomes rows(Xnew) x Dim, in the capacity a Reset kept if large enough) or
// rows(Xnew) x Dim, and must not share memory with the model's Embedding. dst is left
// unchanged when TransformTo returns an error.
func (m *Model) TransformTo(ctx context.Context, dst, Xnew *mat.Dense) error {
	if err := checkCtx(ctx); err != nil {
		return err
	}
	if err := m.usable(); err != nil {
		return err
	}
	xq, q, err := m.newPoints(Xnew)
	if err != nil {
		return err
	}
	if err := m.checkTransformDst("TransformTo", dst, q); err != nil {
		return err
	}
	k, p, d := m.K, m.Dim, m.D
	buf, err := m.queryTrain(ctx, xq, q)
	if err != nil {
		return err
	}
	defer m.putTransformBuf(buf)
	idx, dist, out := buf.idx, buf.dist, buf.out
	y := m.Embedding.RawMatrix().Data
	err = parallel.For(ctx, q, m.st.workers, func(ctx context.Context, _, lo, hi int) error {
		ws := newWork(k, d)
		w := make([]float64, k)
		next := lo // the next point at which ctx is checked (every cancelStride(k, d) points)
		for i := lo; i < hi; i++ {
			if i == next {
				next += cancelStride(k, d)
				if err := ctx.Err(); err != nil {
					return err
				}
			}
			nbr := idx[i*k : (i+1)*k]
			yo := out[i*p : (i+1)*p]
			if dist[i*k] == 0 {
				copy(yo, y[int(nbr[0])*p:int(nbr[0])*p+p])
				continue
			}
			lleWeights(ws, w, m.st.x, d, xq[i*d:(i+1)*d], nbr, m.Reg, m.RegMode)
			for j, nb := range nbr {
				for c := 0; c < p; c++ {
					yo[c] += w[j] * y[int(nb)*p+c]
				}
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	if i, bad := firstNonFiniteIn(out); bad {
		// The LLE weights are finite: a neighbour's row of the Embedding is not.
		return embeddingEdited(y, p, idx[(i/p)*k:(i/p+1)*k])
	}
	commitRows(dst, out, q, p)
	return nil
}

// embeddingEdited names the first non-finite row of the model's Embedding (row-major y of width
// p) among rows (all rows when nil): a value edited in place after the fit.
func embeddingEdited(y []float64, p int, rows []int32) error {
	at := func(r int) error {
		c, _ := firstNonFiniteIn(y[r*p : r*p+p])
		return inputErr("the model's Embedding has a non-finite value (%v) at row %d, column %d (edited after the fit): refit, or restore from a copy of Saved made before the change (Saved shares the model's slices)", y[r*p+c], r, c)
	}
	if rows == nil {
		if i, bad := firstNonFiniteIn(y); bad {
			return at(i / p)
		}
		return nil
	}
	best := -1
	for _, r := range rows {
		if (best < 0 || int(r) < best) && hasNonFinite(y[int(r)*p:int(r)*p+p]) {
			best = int(r)
		}
	}
	if best < 0 {
		return inputErr("a new point's embedding is not finite although its weights and neighbours are: please report this")
	}
	return at(best)
}

// transformBuf is the scratch of one out-of-sample transform: the neighbours and squared
// distances of the new points (q*K) and their embedding (q*Dim, zeroed), reused through
// state.tfBufs.
type transformBuf struct {
	idx  []int32
	dist []float64
	out  []float64
}

// queryTrain returns scratch holding the K nearest training points of the q new points xq
// (internal units) and a zeroed q x Dim output; the caller hands it back to putTransformBuf.
// The training points' index is built on the first call (concurrent first calls wait for
// that one build).
func (m *Model) queryTrain(ctx context.Context, xq []float64, q int) (*transformBuf, error) {
	m.st.tfMu.Lock()
	ix := m.st.tfIndex
	if ix == nil {
		var err error
		ix, err = knn.NewIndex(ctx, m.st.x, m.N, m.D, knn.Options{Workers: m.st.workers})
		if err != nil {
			m.st.tfMu.Unlock()
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			// The fit checked these rows: the paper modes search the model's own X, which a
			// caller can edit in place (the others search a rescaled copy).
			return nil, inputErr("the model's training data X cannot be searched (%v; edited after the fit?): refit, or restore from a copy of Saved made before the change (Saved shares the model's slices)", err)
		}
		m.st.tfIndex = ix
	}
	m.st.tfMu.Unlock()
	buf, _ := m.st.tfBufs.Get().(*transformBuf)
	if buf == nil {
		buf = &transformBuf{}
	}
	k, p := m.K, m.Dim
	buf.idx = slices.Grow(buf.idx[:0], q*k)[:q*k]
	buf.dist = slices.Grow(buf.dist[:0], q*k)[:q*k]
	buf.out = slices.Grow(buf.out[:0], q*p)[:q*p]
	clear(buf.out)
	if err := ix.QueryTo(ctx, buf.idx, buf.dist, xq, q, k, m.st.workers); err != nil {
		m.putTransformBuf(buf)
		return nil, err
	}
	return buf, nil
}

// maxPooledTransform is the largest transform scratch (entries of idx) kept for reuse: the
// scratch of a larger batch is left to the garbage collector, so that one big transform does
// not pin its buffers (about 130 bytes per point at K = 10) through later small ones.
const maxPooledTransform = 1 << 16

// putTransformBuf returns buf to the model's pool unless it is larger than maxPooledTransform.
func (m *Model) putTransformBuf(buf *transformBuf) {
	if cap(buf.idx) <= maxPooledTransform {
		m.st.tfBufs.Put(buf)
	}
}

// checkTransformDst checks the destination of an out-of-sample transform of q points: empty
// or q x Dim, and not sharing memory with the model's Embedding (which the transform reads and
// must not alter), also through a view or the capacity a Reset kept.
func (m *Model) checkTransformDst(fn string, dst *mat.Dense, q int) error {
	if dst == nil {
		return inputErr("%s: dst is nil: pass an empty *mat.Dense or a %d x %d one", fn, q, m.Dim)
	}
	raw := dst.RawMatrix()
	written := raw.Data // the memory commitRows writes
	if dst.IsEmpty() {
		written = nil // ReuseAs allocates when the capacity is short
		if cap(raw.Data) >= q*m.Dim {
			written = raw.Data[:q*m.Dim]
		}
	} else if r, c := dst.Dims(); r != q || c != m.Dim {
		return inputErr("%s: dst is %d x %d but the new points' embedding is %d x %d: pass an empty *mat.Dense or a %d x %d one", fn, r, c, q, m.Dim, q, m.Dim)
	}
	if part := m.sharedWith(written); part != "" {
		return inputErr("%s: dst shares memory with the model's %s, which the model reads: pass another matrix", fn, part)
	}
	return nil
}

// sharedWith names the part of the model whose float64 storage the memory written overlaps
// (Embedding, X, Weights, Sigma), or returns "": a destination there would corrupt the model.
func (m *Model) sharedWith(written []float64) string {
	if m.Embedding != nil && overlaps(written, m.Embedding.RawMatrix().Data) {
		return "base embedding (Embedding)"
	}
	if m.X != nil && overlaps(written, m.X.RawMatrix().Data) {
		return "training data (X)"
	}
	if overlaps(written, m.Weights) {
		return "mean weights (Weights)"
	}
	if overlaps(written, m.Sigma) {
		return "variances (Sigma)"
	}
	return ""
}

// overlaps reports whether the elements of a and b share memory (any element of one lies
// between the first and the last element of the other).
func overlaps(a, b []float64) bool {
	if len(a) == 0 || len(b) == 0 {
		return false
	}
	a0, a1 := uintptr(unsafe.Pointer(&a[0])), uintptr(unsafe.Pointer(&a[len(a)-1]))
	b0, b1 := uintptr(unsafe.Pointer(&b[0])), uintptr(unsafe.Pointer(&b[len(b)-1]))
	return a0 <= b1 && b0 <= a1
}

// commitRows copies the row-major q x p result out into dst (empty: reshaped in place,
// reusing its capacity; else q x p, any stride).
func commitRows(dst *mat.Dense, out []float64, q, p int) {
	if dst.IsEmpty() {
		dst.ReuseAs(q, p)
	}
	raw := dst.RawMatrix()
	for i := 0; i < q; i++ {
		copy(raw.Data[i*raw.Stride:i*raw.Stride+p], out[i*p:(i+1)*p])
	}
}

// Restore rebuilds a Model from saved parts, recomputing the per-point factors the samplers
// need (fibre bases, Cholesky factors, square roots) exactly as Fit computed them, so the
// restored model generates the same embeddings for the same seed. workers <= 0 means
// GOMAXPROCS; solver selects the eigensolver of later generations. The model owns copies of
// every part of sv (checked after copying), so sv may be reused or edited afterwards.
func Restore(ctx context.Context, sv Saved, workers int, solver Solver) (*Model, error) {
	if err := checkCtx(ctx); err != nil {
		return nil, err
	}
	if sv.X == nil || sv.Embedding == nil {
		return nil, inputErr("incomplete model: the training data and the embedding are required")
	}
	if sv.X.IsEmpty() || sv.Embedding.IsEmpty() {
		// A JSON round trip of Saved does this: encoding/json writes a mat.Dense as {}.
		return nil, inputErr("incomplete model: X or Embedding is an empty matrix (encoding/json keeps no mat.Dense data: persist Saved with encoding/gob)")
	}
	if sv.K == 0 || sv.Dim == 0 || sv.Reg == 0 {
		// Settings' zero values mean defaults, but a Saved's are the fit's values: a zero one
		// was lost, and the default would silently replace it (a user trial: Reg 0 restored as
		// 1e-3, changing Transform's weights).
		return nil, inputErr("incomplete model: K = %d, Dim = %d, Reg = %g: a saved model carries the fit's values, none of them 0: take them from Model.Saved or the model's settings", sv.K, sv.Dim, sv.Reg)
	}
	sv.Neighbors, sv.Weights, sv.Sigma = slices.Clone(sv.Neighbors), slices.Clone(sv.Weights), slices.Clone(sv.Sigma)
	sv.Eigenvalues = slices.Clone(sv.Eigenvalues)
	n, d := sv.X.Dims()
	s := Settings{Method: sv.Method, K: sv.K, Dim: sv.Dim, Reg: sv.Reg, RegMode: sv.RegMode, Scaling: sv.Scaling,
		DirectRidge: sv.DirectRidge, Workers: workers, Solver: solver}.withDefaults()
	if err := s.validate(n, d); err != nil {
		return nil, fmt.Errorf("incompatible model: %w", err)
	}
	k, p := s.K, s.Dim
	if en, ep := sv.Embedding.Dims(); en != n || ep != p {
		return nil, inputErr("incompatible model: embedding is %dx%d, want %dx%d", en, ep, n, p)
	}
	if len(sv.Neighbors) != n*k || len(sv.Weights) != n*k {
		return nil, inputErr("incompatible model: neighbours/weights have %d/%d entries, want n*k = %d", len(sv.Neighbors), len(sv.Weights), n*k)
	}
	if i, j, dup, ok := badNeighbor(sv.Neighbors, k); !ok {
		v := sv.Neighbors[i*k+j]
		if dup {
			return nil, inputErr("incompatible model: point %d lists neighbour %d twice", i, v)
		}
		return nil, inputErr("incompatible model: neighbour entry %d (point %d) is %d, outside [0, %d) or the point itself", i*k+j, i, v, n)
	}
	if nc, _ := knn.Components(n, k, sv.Neighbors); nc > 1 {
		// Fit refuses such a graph (disconnected-graph); generations on it were accepted.
		return nil, inputErr("incompatible model: the neighbour graph has %d connected components, which no fit produces: restore the saved neighbours", nc)
	}
	if i, bad := firstNonFiniteIn(sv.Weights); bad {
		return nil, inputErr("incompatible model: weight entry %d is %v", i, sv.Weights[i])
	}
	if sv.Method != EMPaper { // the other methods' mean weights are LLE weights: rows sum to 1
		for i := 0; i < n; i++ {
			s := 0.0
			for _, v := range sv.Weights[i*k : (i+1)*k] {
				s += v
			}
			if !(math.Abs(s-1) <= 1e-9) { // saved weights sum to 1 to round-off (about 1e-15)
				return nil, inputErr("incompatible model: the weights of point %d sum to %g, not 1", i, s)
			}
		}
	}
	em := sv.Method == EM || sv.Method == EMPaper
	if em != (sv.Sigma != nil) || (em && len(sv.Sigma) != n) {
		return nil, inputErr("incompatible model: method %s needs %s sigma values, got %d", sv.Method, map[bool]string{true: fmt.Sprint(n), false: "no"}[em], len(sv.Sigma))
	}
	for i, v := range sv.Sigma {
		if math.IsNaN(v) || math.IsInf(v, 0) || (sv.Method == EM && v < 0) {
			return nil, inputErr("incompatible model: sigma of point %d is %v (want a finite value, non-negative for em)", i, v)
		}
	}
	// Shift is what Saved reported: finite and <= 0 (0: unknown). Another value was ignored and
	// the restored model generated differently from the fitted one.
	if math.IsNaN(sv.Shift) || math.IsInf(sv.Shift, 0) || sv.Shift > 0 {
		return nil, inputErr("incompatible model: eigensolver shift %v (want the saved value: finite and <= 0, or 0 if unknown)", sv.Shift)
	}
	if len(sv.Eigenvalues) != 0 && len(sv.Eigenvalues) != p {
		return nil, inputErr("incompatible model: %d eigenvalues for an embedding of dimension %d (want %d, or none)", len(sv.Eigenvalues), p, p)
	}
	if i, bad := firstNonFiniteIn(sv.Eigenvalues); bad {
		return nil, inputErr("incompatible model: eigenvalue %d is %v", i, sv.Eigenvalues[i])
	}
	for _, A := range []struct {
		name string
		m    *mat.Dense
	}{{"training data X", sv.X}, {"embedding", sv.Embedding}} {
		if i, j, v, bad := firstNonFinite(A.m); bad {
			return nil, inputErr("incompatible model: the %s has a non-finite value (%v) at row %d, column %d", A.name, v, i, j)
		}
	}
	x := mat.DenseCopyOf(sv.X)
	m := &Model{
		Method: s.Method, K: k, Dim: p, Reg: s.Reg, RegMode: s.RegMode, Scaling: s.Scaling, N: n, D: d, X: x,
		Neighbors: sv.Neighbors, Weights: sv.Weights, Sigma: sv.Sigma, Embedding: mat.DenseCopyOf(sv.Embedding),
		Eigenvalues: sv.Eigenvalues, directRidge: s.DirectRidge,
	}
	xs, scaleExp, err := prepareScale(x.RawMatrix().Data, n, d, s)
	if err != nil {
		return nil, fmt.Errorf("incompatible model: %w", err)
	}
	m.st = state{workers: parallel.Workers(workers), x: xs, scaleExp: scaleExp}
	m.st.perp = kernels.NewPerp(k)
	m.Report = Report{Method: s.Method.String(), Backend: kernels.Current().Name(), N: n, D: d, K: k, Dim: p, Workers: m.st.workers}
	switch s.Method {
	case EM:
		err = m.weightPass(ctx, s, false)
	case EMPaper:
		if err = m.paperBases(ctx); err == nil {
			m.countNoiseFree()
		}
	case Direct:
		err = m.fitDirect(ctx, s, func(Progress) {})
	case DirectPaper:
		err = m.fitDirectPaper(ctx, s, func(Progress) {})
	}
	if err != nil {
		return nil, err
	}
	m.st.emb = newEmbedCache(m, s.Solver)
	if sv.Shift < 0 {
		m.st.emb.sp = newSparseEmbed(m, s.Solver)
		m.st.emb.sp.baseShift = sv.Shift
	}
	m.seal()
	return m, nil
}
