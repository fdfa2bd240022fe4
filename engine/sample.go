package engine

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/lapack"
	"gonum.org/v1/gonum/mat"

	"glle/kernels"
	"glle/parallel"
	"glle/sparse"
)

// drawPoint writes one draw of point i's weights with covariance scale a into dst (length k),
// using ws.xi and ws.x1 as scratch. Every draw is basis independent: a projector (EM), a fixed
// Householder basis with a Cholesky factor (Direct) or a symmetric square root (DirectPaper)
// times standard normals, never an eigenvector basis.
func (m *Model) drawPoint(ws *work, i int, st *kernels.Stream, a float64, dst []float64) {
	k := m.K
	mean := m.Weights[i*k : (i+1)*k]
	switch m.Method {
	case EM, EMPaper:
		r := int(m.st.rank[i])
		xi := ws.xi[:k]
		st.Normals(xi)
		basis := m.st.basis[i*k*m.st.rmax : (i+1)*k*m.st.rmax]
		sig := m.Sigma[i]
		if m.Method == EM {
			projectFibre(xi, basis, k, r) // Pi_i xi
		} else {
			sig = math.Abs(sig)
			for q := 0; q < r; q++ { // (I - V V^T) xi
				v := basis[q*k : (q+1)*k]
				s := 0.0
				for j, b := range v {
					s += b * xi[j]
				}
				for j, b := range v {
					xi[j] -= s * b
				}
			}
		}
		f := math.Sqrt(a * sig)
		for j := range dst[:k] {
			dst[j] = mean[j] + f*xi[j]
		}
	case Direct:
		km1 := k - 1
		z := ws.x2[:km1]
		st.Normals(z)
		stride := km1 * k / 2
		ltSolvePacked(m.st.chol[i*stride:(i+1)*stride], km1, z)
		u := ws.xi[:k]
		m.st.perp.FromPerp(u, z)
		f := math.Sqrt(a)
		for j := range dst[:k] {
			dst[j] = mean[j] + f*u[j]
		}
	case DirectPaper:
		xi := ws.xi[:k]
		st.Normals(xi)
		sq := m.st.sqrt[i*k*k : (i+1)*k*k]
		f := math.Sqrt(a)
		for j := 0; j < k; j++ {
			s := 0.0
			for q, v := range sq[j*k : (j+1)*k] {
				s += v * xi[q]
			}
			dst[j] = mean[j] + f*s
		}
	default:
		copy(dst[:k], mean)
	}
}

func checkScale(a float64) error {
	if !(a >= 0) || math.IsInf(a, 0) {
		return inputErr("covariance scale %v: must be a non-negative finite number", a)
	}
	return nil
}

// SampleWeights draws the weights of every point for one generation with covariance scale a
// into dst (length N*K, aligned with Neighbors). Point i's draw depends only on
// (seed, generation, i).
func (m *Model) SampleWeights(ctx context.Context, dst []float64, seed uint64, generation int, a float64) error {
	if err := checkCtx(ctx); err != nil {
		return err
	}
	if err := m.usable(); err != nil {
		return err
	}
	if err := checkScale(a); err != nil {
		return err
	}
	if generation < 0 {
		return inputErr("generation %d: must be non-negative", generation)
	}
	if !m.Method.Generative() {
		return inputErr("method %s has no stochastic weights to draw: use em, direct, em-paper or direct-paper", m.Method)
	}
	if len(dst) != m.N*m.K {
		return inputErr("weights buffer has length %d, want N*K = %d", len(dst), m.N*m.K)
	}
	if part := m.sharedWith(dst); part != "" {
		return inputErr("SampleWeights: the weights buffer shares memory with the model's %s, which the draws read: pass another slice", part)
	}
	if err := m.paramsIntact(); err != nil {
		return err
	}
	return m.drawWeights(ctx, dst, seed, generation, a)
}

// drawWeights is SampleWeights after its checks, which the caller has made (GenerateTo).
func (m *Model) drawWeights(ctx context.Context, dst []float64, seed uint64, generation int, a float64) error {
	return forPoints(ctx, m.N, m.K, max(m.D, m.Dim), m.st.workers, func(_ context.Context, ws *work, lo, hi int) error {
		for i := lo; i < hi; i++ {
			st := kernels.NewStream(seed, generation, i)
			m.drawPoint(ws, i, &st, a, dst[i*m.K:(i+1)*m.K])
		}
		// While the draws are in cache: sqrt(a sigma_i) or sqrt(a) times a draw can overflow
		// (edited, non-finite Sigma or Weights were refused above, paramsIntact).
		if _, bad := firstNonFiniteIn(dst[lo*m.K : hi*m.K]); bad {
			return inputErr("generation %d: the weights drawn at covariance scale a = %g overflow float64: use a smaller covariance scale", generation, a)
		}
		return nil
	})
}

// firstNonFiniteIn returns the index of the first NaN or infinite value of x.
func firstNonFiniteIn(x []float64) (int, bool) {
	for i, v := range x {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return i, true
		}
	}
	return 0, false
}

// firstNonFinite returns the position and value of the first NaN or infinite entry of A.
func firstNonFinite(A *mat.Dense) (i, j int, v float64, bad bool) {
	r, c := A.Dims()
	for i = 0; i < r; i++ {
		for j = 0; j < c; j++ {
			if v = A.At(i, j); math.IsNaN(v) || math.IsInf(v, 0) {
				return i, j, v, true
			}
		}
	}
	return 0, 0, 0, false
}

// Frame selects the basis in which Generate returns a generated embedding.
type Frame int

const (
	// FrameBase (default): the generation's eigenvectors rotated (or reflected) onto the base
	// embedding by orthogonal Procrustes, Y R with R = argmin ||Y R - Embedding||_F over
	// orthogonal R. The columns stay an orthonormal basis of the same eigenspace. LLE's bottom
	// eigenvalues lie close together (gaps ~1e-9 relative), so weight noise mixes the
	// generation's eigenvectors within that space: at a = 1 on the four datasets at n = 5000
	// (dataset seeds 1-3, em and direct, 480 generations) 29 generations missed
	// trustworthiness 0.99 or max |Spearman| 0.98 of an axis in the eigenvector frame, 21 in
	// the base frame, all but one of those folds (README, docs/performance.md). Generations in the base frame are directly comparable with the base
	// embedding and with each other; their columns are not individual eigenvectors.
	FrameBase Frame = iota
	// FrameEigen: the generation's eigenvectors as computed (each with the sign that makes its
	// largest entry positive), which is what the paper's algorithms output.
	FrameEigen
)

var frameNames = [...]string{"base", "eigen"}

// String returns the frame's command-line name.
func (f Frame) String() string { return enumName(frameNames[:], int(f), "Frame") }

// ParseFrame parses a command-line frame name (base, eigen).
func ParseFrame(s string) (Frame, error) {
	i, err := parseEnum(frameNames[:], s, "frame")
	return Frame(i), err
}

// Generate draws new weights from the fitted distributions with covariance scale a (Section
// VI-C: a Omega_i or a Gamma_i) and returns their linear embedding (N x Dim) in the base
// embedding's frame (FrameBase) and a report of the eigensolve. Draws come from a
// counter-based stream keyed by (seed, generation, point), so the result does not depend on
// the worker count or on which other generations were drawn. The eigensolver is warm-started
// from the base embedding and reuses the fit's symbolic analysis. Concurrent calls are
// serialised (each uses all workers); the model keeps the N*K weight buffer of the draws for
// the next call.
func (m *Model) Generate(ctx context.Context, seed uint64, generation int, a float64) (*mat.Dense, *Report, error) {
	return m.GenerateIn(ctx, seed, generation, a, FrameBase)
}

// GenerateIn is Generate with the frame of the returned embedding chosen by frame. The
// report's eigenvalues belong to the eigenvectors whose span the embedding is.
func (m *Model) GenerateIn(ctx context.Context, seed uint64, generation int, a float64, frame Frame) (*mat.Dense, *Report, error) {
	Y := &mat.Dense{}
	rep, err := m.GenerateTo(ctx, Y, seed, generation, a, frame)
	if err != nil {
		return nil, nil, err
	}
	return Y, rep, nil
}

// GenerateTo is GenerateIn writing the embedding into dst, which must be empty (it then
// becomes N x Dim, in the capacity a Reset kept if large enough) or N x Dim, and must not be
// the model's Embedding.
// Loops over many generations reuse one dst: with a contiguous dst (stride Dim) the sparse
// solver writes its eigenvectors straight into it for EM and Direct, so the N x Dim result is
// not allocated again (EMPaper's and DirectPaper's draws do not sum to one: their solver
// returns Dim+1 vectors, an N x (Dim+1) array per generation, copied into dst). dst is left
// unchanged when GenerateTo returns an error.
func (m *Model) GenerateTo(ctx context.Context, dst *mat.Dense, seed uint64, generation int, a float64, frame Frame) (*Report, error) {
	if err := checkCtx(ctx); err != nil {
		return nil, err
	}
	if err := m.usable(); err != nil {
		return nil, err
	}
	if dst == nil {
		return nil, inputErr("GenerateTo: dst is nil: pass an empty *mat.Dense or an N x Dim one")
	}
	if frame != FrameBase && frame != FrameEigen {
		return nil, inputErr("unknown frame %d: use FrameBase or FrameEigen", int(frame))
	}
	if !m.Method.Generative() {
		return nil, inputErr("method %s has no stochastic weights to generate from: use em, direct, em-paper or direct-paper", m.Method)
	}
	if err := checkScale(a); err != nil {
		return nil, err
	}
	if generation < 0 {
		return nil, inputErr("generation %d: must be non-negative", generation)
	}
	np := m.N * m.Dim
	raw := dst.RawMatrix()
	empty := dst.IsEmpty()
	var into []float64 // the embedding's memory: dst's own when contiguous, else nil (copied in)
	switch {
	case empty && cap(raw.Data) >= np:
		into = raw.Data[:np] // the capacity an earlier Reset kept; dst stays empty until success
	case empty:
		into = make([]float64, np)
	default:
		if r, c := dst.Dims(); r != m.N || c != m.Dim {
			return nil, inputErr("GenerateTo: dst is %d x %d but the embedding is %d x %d: pass an empty *mat.Dense or an N x Dim one", r, c, m.N, m.Dim)
		}
		if raw.Stride == m.Dim {
			into = raw.Data[:np]
		}
	}
	written := into // the memory the result goes to: into, or dst's own when copied in
	if into == nil {
		written = raw.Data
	}
	if part := m.sharedWith(written); part != "" {
		return nil, inputErr("GenerateTo: dst shares memory with the model's %s, which the generation needs: pass another matrix", part)
	}
	// The O(N K) checks after the argument checks, once (the draws below skip
	// SampleWeights's repeat of them).
	if err := m.neighborsIntact(); err != nil {
		return nil, err
	}
	if err := m.paramsIntact(); err != nil {
		return nil, err
	}
	// The warm start and the rotation onto the base frame read every row (a NaN made every
	// generation NaN without an error before session 33).
	if err := embeddingEdited(m.Embedding.RawMatrix().Data, m.Dim, nil); err != nil {
		return nil, err
	}
	m.st.genMu.Lock()
	defer m.st.genMu.Unlock()
	tGen := time.Now() // after the lock: waiting for another generation is not this one's time
	if len(m.st.genW) != m.N*m.K {
		m.st.genW = make([]float64, m.N*m.K)
	}
	w := m.st.genW
	rep := &Report{Method: m.Method.String(), Backend: kernels.Current().Name(), N: m.N, D: m.D, K: m.K, Dim: m.Dim, Workers: m.st.workers}
	tDraw := time.Now()
	if err := m.drawWeights(ctx, w, seed, generation, a); err != nil {
		return nil, err
	}
	rep.stage("draw", tDraw)
	Y, vals, er, err := m.st.emb.embed(ctx, into, w, m.drawsSumToOne(), m.Embedding, func(Progress) {}, rep)
	var de *DegenerateError
	if errors.Is(err, sparse.ErrNonFinite) || (errors.As(err, &de) && de.Kind == "nonfinite") {
		// The drawn weights are finite (SampleWeights checked them): their scale overflowed
		// the assembly of M, the factorization or the eigensolve.
		// Name the magnitude that overflowed, and the variances behind it: a restored model
		// whose sigma_i were edited overflows at a = 1, where the fix is the model, not a.
		wmax := maxAbs(w)
		cause := ""
		if smax := maxAbs(m.Sigma); smax > 0 {
			cause = fmt.Sprintf(", or refit: the model's largest variance sigma_i is %.3g", smax)
		}
		return nil, &InputError{Msg: fmt.Sprintf("generation %d: the weights drawn at covariance scale a = %g reach |w| = %.3g and overflow the eigensolve (%v): use a smaller covariance scale%s", generation, a, wmax, err, cause)}
	}
	if err != nil {
		return nil, fmt.Errorf("generation %d: %w", generation, err)
	}
	er.Values = vals
	rep.Eigen = er
	if frame == FrameBase {
		rotateOnto(Y, m.Embedding, m.st.workers)
	}
	switch {
	case empty:
		dst.SetRawMatrix(blas64.General{Rows: m.N, Cols: m.Dim, Stride: m.Dim, Data: into})
	case into == nil:
		dst.Copy(Y)
	}
	rep.closeStages(tGen)
	return rep, nil
}

// rotateOnto replaces Y (n x p) by Y R, R = U V^T from the SVD U S V^T of Y^T B: the
// orthogonal R minimising ||Y R - B||_F (orthogonal Procrustes, no translation or scaling).
// Both passes run on workers goroutines; Y^T B is summed over fixed chunks of rows and the
// chunks' sums added in chunk order, so the result does not depend on workers.
func rotateOnto(Y, B *mat.Dense, workers int) {
	n, p := Y.Dims()
	if bn, bp := B.Dims(); bn != n || bp != p {
		panic("engine: rotateOnto: shapes differ")
	}
	const chunk = rowChunk
	pp := p * p
	part := make([]float64, parallel.NumChunks(n, chunk)*pp)
	_ = parallel.Chunks(context.Background(), n, chunk, workers, func(_ context.Context, _, c, lo, hi int) error {
		pc := part[c*pp : c*pp+pp]
		for i := lo; i < hi; i++ {
			bi := B.RawRowView(i)
			for a, ya := range Y.RawRowView(i) {
				for b, v := range bi {
					pc[a*p+b] += ya * v
				}
			}
		}
		return nil
	})
	cd := make([]float64, pp)
	for q := 0; q < len(part); q += pp {
		for t, v := range part[q : q+pp] {
			cd[t] += v
		}
	}
	// The rotation is the orthogonal polar factor U V^T of C = U S V^T, through the
	// selected backend's LAPACK.
	lp := kernels.Current().LAPACK()
	sv, u, vt := make([]float64, p), make([]float64, pp), make([]float64, pp)
	work := []float64{0}
	lp.Dgesvd(lapack.SVDAll, lapack.SVDAll, p, p, cd, p, sv, u, p, vt, p, work, -1)
	work = make([]float64, max(int(work[0]), 1))
	if !lp.Dgesvd(lapack.SVDAll, lapack.SVDAll, p, p, cd, p, sv, u, p, vt, p, work, len(work)) {
		return // no convergence (not seen for a p x p matrix of finite values): keep the eigenvector frame
	}
	rd := make([]float64, pp) // R = U V^T, row-major p x p
	mulSquare(rd, u, vt, p)
	_ = parallel.For(context.Background(), n, workers, func(_ context.Context, _, lo, hi int) error {
		row := make([]float64, p)
		for i := lo; i < hi; i++ {
			yi := Y.RawRowView(i)
			for j := range row {
				s := 0.0
				for q, y := range yi {
					s += y * rd[q*p+j]
				}
				row[j] = s
			}
			copy(yi, row)
		}
		return nil
	})
}

// Gamma writes point i's weight covariance Gamma_i (K x K, row-major) into dst for the direct
// methods: Q (Q^T A_i Q)^{-1} Q^T for Direct, (X_i^T X_i + Y_i^T Y_i + ridge I)^{-1} (Eq. (35))
// for DirectPaper. It returns false, leaving dst alone, for the other methods, for i outside
// [0, N), for dst shorter than K*K and for a model not made by Fit or Restore. It allocates
// its scratch; loops over many points should use GammaTo with one scratch per goroutine.
func (m *Model) Gamma(i int, dst []float64) bool {
	if m == nil {
		return false
	}
	return m.GammaTo(dst, make([]float64, GammaScratch(m.K)), i)
}

// GammaScratch is the length of the scratch GammaTo needs for k neighbours (0 for k < 1).
func GammaScratch(k int) int { return 2 * max(k, 0) * max(k, 0) }

// GammaTo is Gamma with caller-owned scratch of at least GammaScratch(K) values (it allocates
// nothing). It returns false, leaving dst alone, where Gamma does and for a shorter scratch.
func (m *Model) GammaTo(dst, scratch []float64, i int) bool {
	if m.usable() != nil { // first: it also refuses a nil m
		return false
	}
	k := m.K
	if len(dst) < k*k || len(scratch) < GammaScratch(k) || i < 0 || i >= m.N {
		return false
	}
	switch m.Method {
	case Direct:
		km1 := k - 1
		stride := km1 * k / 2
		l := m.st.chol[i*stride : (i+1)*stride]
		// C = (L L^T)^{-1}, column by column; then Gamma = Q C Q^T. Scratch: C ((k-1)^2),
		// T (k (k-1)), one column (k-1) and one full vector (k): 2 k^2 - k values.
		c := scratch[:km1*km1]
		col := scratch[km1*km1 : km1*km1+km1]
		for j := 0; j < km1; j++ {
			for t := range col {
				col[t] = 0
			}
			col[j] = 1
			lSolvePacked(l, km1, col)
			ltSolvePacked(l, km1, col)
			for t := 0; t < km1; t++ {
				c[t*km1+j] = col[t]
			}
		}
		// T = Q C (k x (k-1)), column by column; then Gamma = Q T^T (T^T rows are C's rows).
		t := scratch[km1*km1+km1 : km1*km1+km1+k*km1]
		full := scratch[km1*km1+km1+k*km1 : km1*km1+km1+k*km1+k]
		for j := 0; j < km1; j++ {
			for r := 0; r < km1; r++ {
				col[r] = c[r*km1+j]
			}
			m.st.perp.FromPerp(full, col)
			for r := 0; r < k; r++ {
				t[r*km1+j] = full[r]
			}
		}
		for r := 0; r < k; r++ {
			m.st.perp.FromPerp(full, t[r*km1:(r+1)*km1])
			copy(dst[r*k:(r+1)*k], full)
		}
		return true
	case DirectPaper:
		sq := m.st.sqrt[i*k*k : (i+1)*k*k]
		mulSquare(dst[:k*k], sq, sq, k)
		return true
	}
	return false
}

// mulSquare writes the product a b of two row-major n x n matrices into dst (which must not
// overlap them), each entry summed over q in increasing order.
func mulSquare(dst, a, b []float64, n int) {
	for i := 0; i < n; i++ {
		ai := a[i*n : (i+1)*n]
		for j := 0; j < n; j++ {
			t := 0.0
			for q, v := range ai {
				t += v * b[q*n+j]
			}
			dst[i*n+j] = t
		}
	}
}

// meanSumsToOne reports whether the mean weights sum to one in every row: the LLE weights
// (Eq. (9)) of every method but EMPaper, whose E[w_i] of Eq. (21) are not constrained.
func (m *Model) meanSumsToOne() bool { return m.Method != EMPaper }

// drawsSumToOne reports whether drawn weights sum to one in every row: EM's fibre and
// Direct's conditioned Gamma_i keep 1^T w = 1, while EMPaper's means do not sum to one and
// DirectPaper's draws from N(w_i^LLE, Gamma_i) of Eq. (36) are not conditioned on it.
func (m *Model) drawsSumToOne() bool { return m.Method == EM || m.Method == Direct }
