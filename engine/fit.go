package engine

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sort"
	"sync"
	"time"

	"gonum.org/v1/gonum/mat"

	_ "glle/cgo" // registers OpenBLAS unless built with -tags purego
	"glle/engine/knn"
	"glle/kernels"
	"glle/parallel"
	"glle/sparse"
)

// state holds the per-point factors the samplers need (filled by Fit or Restore).
type state struct {
	workers int
	x       []float64 // training data, row-major N x D, times 2^-scaleExp (aliases Model.X's storage when scaleExp = 0)
	// scaleExp is the exact power-of-two rescaling of the data (robust.go): 0 for the methods
	// that work on raw coordinates.
	scaleExp int

	// memLimit and memCheck: the fit checks its refined memory estimate against memLimit
	// (bytes, 0 = none) after the symbolic analysis (memory.go).
	memLimit int64
	memCheck bool

	// EM and EMPaper: orthonormal basis (k x rank[i], stride k*rmax) of the directions the
	// posterior pins; EM draws sqrt(a sigma_i) Pi_i xi, EMPaper sqrt(a |sigma_i|)(I - V V^T) xi.
	rank  []int32
	basis []float64
	rmax  int

	// Direct: packed lower Cholesky factor L_i of Q^T A_i Q ((k-1)k/2 per point) and the
	// temperatures s_x^2, s_y^2 in internal units.
	chol     []float64
	sx2, sy2 float64
	// DirectPaper: symmetric square root of Gamma_i (k x k per point).
	sqrt []float64

	perp kernels.Perp
	emb  *embedCache
	// made records what Fit or Restore built the state for (Model.usable).
	made madeFor

	// genMu guards genW, the weight buffer Generate reuses (N*K; fresh memory costs page
	// faults: 0.12 s for the 80 MB at n = 1M on the reference machine).
	genMu sync.Mutex
	genW  []float64

	// tfMu guards tfIndex, the nearest-neighbour index over x that the out-of-sample
	// transforms query; the first transform builds it (the k-d tree: about 0.04 s per 200000
	// points) and later ones reuse it. tfBufs pools their scratch (*transformBuf).
	tfMu    sync.Mutex
	tfIndex *knn.Index
	tfBufs  sync.Pool
}

// analysisDone returns the channel that closes when the sparse analysis running beside the
// fit ends (nil when none runs).
func (st *state) analysisDone() <-chan struct{} {
	if st.emb == nil || st.emb.sp == nil || st.emb.sp.pend == nil {
		return nil
	}
	return st.emb.sp.pend.done
}

// fgWorkers is the number of workers of a foreground stage: one fewer than workers while the
// analysis runs beside it (see embedCache.start).
func (st *state) fgWorkers() int {
	w := parallel.Workers(st.workers)
	if done := st.analysisDone(); done != nil && w > 1 {
		select {
		case <-done:
		default:
			return w - 1
		}
	}
	return w
}

// pointChunk is the number of points a weight-stage worker claims at a time while the
// analysis runs beside the stage (parallel.ForJoin).
const pointChunk = 4096

// forWeights runs fn over contiguous ranges of [0, n) for the per-point weight stages: with
// parallel.For, or, while the sparse analysis runs beside the fit, with parallel.ForJoin, so
// that the analysis keeps a core to itself and that core helps once it is done. fn writes
// per-point results and per-worker integer counts only.
func (st *state) forWeights(ctx context.Context, n int, fn func(ctx context.Context, w, lo, hi int) error) error {
	if done := st.analysisDone(); done != nil {
		return parallel.ForJoin(ctx, n, pointChunk, st.workers, done, fn)
	}
	return parallel.For(ctx, n, st.workers, fn)
}

// pointFunc processes points [lo, hi) with worker-owned scratch ws.
type pointFunc func(ctx context.Context, ws *work, lo, hi int) error

// cancelStride is how many points a per-point loop with K = k on d-dimensional data processes
// between checks of its context: about 2^22 / (k^2 max(k, d)) (4194 at k = 10, d <= 10; 19 at
// k = 60; 1 from k = 162), since a point's dense work (a k x k solve, eigendecomposition or
// square root, and the k x d offsets, Gram matrix or SVD) grows as k^2 max(k, d). A
// cancellation then waits for a few milliseconds of work at any k and d; a fixed count of
// 4096 points kept direct-paper at k = 60, n = 20000 running for 47 s after one (session 33),
// and k^3 alone ignored d (Restore of an em-paper model at d = 4000: 4194 SVDs of 4000 x 10
// between checks, session 34's review).
func cancelStride(k, d int) int {
	return max(1, int(float64(1<<22)/(float64(k)*float64(k)*float64(max(k, d)))))
}

// forPoints runs fn over contiguous ranges of [0, n) with one workspace per worker, checking
// ctx every cancelStride(k, d) points.
func forPoints(ctx context.Context, n, k, d, workers int, fn pointFunc) error {
	return parallel.For(ctx, n, workers, func(ctx context.Context, _, lo, hi int) error {
		ws := newWork(k, d)
		step := cancelStride(k, d)
		for a := lo; a < hi; a += step {
			if err := ctx.Err(); err != nil {
				return err
			}
			b := a + step
			if b > hi {
				b = hi
			}
			if err := fn(ctx, ws, a, b); err != nil {
				return err
			}
		}
		return nil
	})
}

// CheckFit returns the error Fit would return for an n x d data matrix and settings s before
// it reads the data: invalid settings, or a predicted peak memory (EstimateMemory) above the
// limit of s.MaxMemory. Callers that generate or load large data can call it first.
func CheckFit(n, d int, s Settings) error {
	s = s.withDefaults()
	err := s.validate(n, d)
	if err != nil && !isSingularGamma(err) {
		return err
	}
	// direct-paper's singular matrices (known from the shapes) come after the memory limit:
	// Fit runs the kNN search before reporting them (graphFirst), which the limit must guard.
	if merr := checkMemory(estimateMemory(n, d, s.K, s.Dim, s.Method, s.Solver, -1, -1), memoryLimit(s)); merr != nil {
		return merr
	}
	return err
}

// isSingularGamma reports whether err is direct-paper's shapes-known singular-matrix refusal.
func isSingularGamma(err error) bool {
	var de *DegenerateError
	return errors.As(err, &de) && de.Kind == "singular-gamma"
}

func (s Settings) validate(n, d int) error {
	switch {
	case !s.Method.valid():
		return inputErr("unknown method %d: use LLE, EM, Direct, EMPaper or DirectPaper", int(s.Method))
	case s.K < 1:
		return inputErr("k = %d: the number of neighbours must be at least 1", s.K)
	case n <= s.K:
		return inputErr("n = %d points but k = %d neighbours: need n > k (use a smaller k or more points)", n, s.K)
	case n > math.MaxInt32:
		return inputErr("n = %d points: at most %d (neighbour indices are 32-bit): fit a subsample and Transform the rest", n, math.MaxInt32)
	case s.Dim < 1:
		return inputErr("dim = %d: the embedding dimension must be at least 1", s.Dim)
	case s.Dim >= d:
		return inputErr("dim = %d but the data has only d = %d columns: need dim < d", s.Dim, d)
	case s.Dim >= n-1:
		return inputErr("dim = %d needs more than %d points: use more points or a smaller dim", s.Dim, s.Dim+1)
	case (s.Solver == SolverSparse || s.Solver == SolverSparseCholesky) && n < s.Dim+sparseRoom:
		return inputErr("dim = %d with n = %d points: the sparse solvers' Lanczos basis needs n >= dim + %d: use SolverDense (or SolverAuto), more points or a smaller dim", s.Dim, n, sparseRoom)
	case s.Method == Direct && s.K < 2:
		return inputErr("direct with k = %d: a single neighbour's weight is fixed at 1, so there is nothing to sample: use k >= 2", s.K)
	case s.Method == EM && d >= s.K-1 && s.Dim >= s.K-1:
		// With d >= k - 1 a point's fibre is empty and EM falls back to the fibre of its
		// local dim-dimensional PCA (fibreBasis), which is empty too unless dim <= k - 2.
		// Only the remedies that exist (a user trial: at dim = 1 no smaller dim exists, and
		// direct refuses k = 1).
		fix := fmt.Sprintf("use k >= %d", s.Dim+2)
		if s.Dim > 1 && s.K >= 3 { // dim <= k - 2 needs k >= 3
			fix += ", a smaller dim"
		}
		if s.K >= 2 {
			fix += ", or the direct method"
		}
		return inputErr("em with d = %d >= k - 1 = %d needs dim <= k - 2 (dim = %d): %s", d, s.K-1, s.Dim, fix)
	case !(s.Reg > 0) || math.IsInf(s.Reg, 0):
		return inputErr("reg = %v: the regularization must be a positive finite number", s.Reg)
	case s.RegMode == RegTrace && s.Reg > maxReg:
		// The ridge R_i = reg tr(G_i) and direct's R_i / s_x^2 overflowed, and the fit failed
		// with advice to raise reg; the weights are 1/k long before this.
		return inputErr("reg = %g is too large (at most %g): the weights are uniform (1/k) long before that, and the ridge overflows; use a smaller reg", s.Reg, maxReg)
	case s.RegMode == RegAbsolute && s.Reg > maxAbsReg(d, s.K):
		// An absolute ridge is in squared data units: the square of the largest coordinate
		// the raw-coordinate fits accept bounds every Gram entry they can meet.
		return inputErr("reg = %g is too large for an absolute ridge (at most %g, the square of the largest coordinate accepted, %g): use a smaller reg", s.Reg, maxAbsReg(d, s.K), maxRawFitMagnitude(d, s.K))
	case s.EMIters < 1:
		return inputErr("em-iters = %d: must be at least 1", s.EMIters)
	case !(s.EMTol > 0 && s.EMTol < 1):
		// A relative change: a tolerance of 1 or more stopped EM after its first iteration,
		// reported as converged (sigma 40 times its fixed point in a user trial).
		return inputErr("em-tol = %v: must be a relative tolerance in (0, 1), such as the default 1e-10", s.EMTol)
	case s.DirectRidge < 0 || math.IsNaN(s.DirectRidge) || math.IsInf(s.DirectRidge, 0):
		return inputErr("direct-ridge = %v: must be a non-negative finite number", s.DirectRidge)
	case s.RegMode != RegTrace && s.RegMode != RegAbsolute:
		return inputErr("unknown regularization mode %d: use RegTrace or RegAbsolute", int(s.RegMode))
	case s.Scaling != UnitNorm && s.Scaling != PaperScaling:
		return inputErr("unknown scaling %d: use UnitNorm or PaperScaling", int(s.Scaling))
	case s.Solver < SolverAuto || s.Solver > SolverSparseCholesky:
		return inputErr("unknown solver %d: use SolverAuto, SolverDense, SolverSparse or SolverSparseCholesky", int(s.Solver))
	case s.Method == DirectPaper && s.DirectRidge == 0 && d+s.Dim < s.K:
		// Eq. (35)'s k x k matrix X_i^T X_i + Y_i^T Y_i has rank <= d + p < k at every point:
		// known from the shapes, so refused before the fit, after every settings error (Fit
		// then names data and graph problems no ridge mends, graphFirst) (it failed after the whole fit,
		// 3 s at n = 200k, before session 32).
		return &DegenerateError{Kind: "singular-gamma", Count: n, Example: 0,
			Msg: fmt.Sprintf("direct-paper: X_i^T X_i + Y_i^T Y_i is singular for %d of %d points (it has rank <= d + p = %d < k = %d at every point): pass an explicit ridge (DirectRidge / -direct-ridge) or use the default direct method", n, n, d+s.Dim, s.K)}
	}
	return nil
}

// checkData rejects non-finite values and data whose points are all identical.
func checkData(x []float64, n, d int) error {
	for i := 0; i < n; i++ {
		for c := 0; c < d; c++ {
			if v := x[i*d+c]; math.IsNaN(v) || math.IsInf(v, 0) {
				return &DegenerateError{Kind: "nonfinite", Count: 1, Example: i,
					Msg: fmt.Sprintf("the data has a non-finite value (%v) at row %d, column %d: remove or impute it", v, i, c)}
			}
		}
	}
	for c := 0; c < d; c++ {
		for i := 1; i < n; i++ {
			if x[i*d+c] != x[c] {
				return nil
			}
		}
	}
	return &DegenerateError{Kind: "identical-points", Count: n, Example: 0,
		Msg: fmt.Sprintf("all %d points are identical: there is no geometry to embed; check that the right file and columns were read", n)}
}

// Fit computes the neighbourhood graph, the weight model of s.Method and the base embedding of X
// (one point per row). X is not modified.
func Fit(ctx context.Context, X *mat.Dense, s Settings) (*Model, error) {
	tFit := time.Now()
	if err := checkCtx(ctx); err != nil {
		return nil, err
	}
	if X == nil || X.IsEmpty() {
		return nil, inputErr("the data matrix is empty: pass at least k+1 points (k = %d)", s.withDefaults().K)
	}
	n, d := X.Dims()
	s = s.withDefaults()
	if err := CheckFit(n, d, s); err != nil {
		if isSingularGamma(err) {
			// Data no ridge can help (non-finite values, all points identical) is named
			// first: the ridge the singular-gamma error asks for led to that error next (a
			// user trial).
			raw := mat.DenseCopyOf(X).RawMatrix().Data
			if derr := checkData(raw, n, d); derr != nil {
				return nil, derr
			}
			// So is a graph no ridge can help: a disconnected one, or points with more
			// duplicates than k (the same user trial; the kNN search, within the memory limit
			// CheckFit applied, is cheap next to the fit the refusal saves).
			if gerr := graphFirst(ctx, raw, n, d, s); gerr != nil {
				return nil, gerr
			}
		}
		return nil, err
	}
	memEst := estimateMemory(n, d, s.K, s.Dim, s.Method, s.Solver, -1, -1)
	memLimit := memoryLimit(s)
	workers := parallel.Workers(s.Workers)
	x := mat.DenseCopyOf(X)
	raw := x.RawMatrix().Data
	if err := checkData(raw, n, d); err != nil {
		return nil, err
	}
	xs, scaleExp, err := prepareScale(raw, n, d, s)
	if err != nil {
		return nil, err
	}
	m := &Model{
		Method: s.Method, K: s.K, Dim: s.Dim, Reg: s.Reg, RegMode: s.RegMode, Scaling: s.Scaling,
		N: n, D: d, X: x, directRidge: s.DirectRidge,
	}
	m.st = state{workers: workers, x: xs, scaleExp: scaleExp, perp: kernels.NewPerp(s.K), memLimit: memLimit, memCheck: true}
	m.Report = Report{Method: s.Method.String(), Backend: kernels.Current().Name(), N: n, D: d, K: s.K, Dim: s.Dim, Workers: workers}
	m.Report.Memory = &memEst
	prog := progressFunc(s.Progress)

	t0 := time.Now()
	prog(Progress{Stage: "knn"})
	idx, dups, err := searchGraph(ctx, xs, raw, n, d, s.K, workers)
	if err != nil {
		return nil, err
	}
	m.Report.DuplicatePoints = dups
	m.Neighbors = idx
	m.Report.stage("knn", t0)
	prog(Progress{Stage: "knn", Final: true})

	// The sparse path's ordering and symbolic analysis need only the kNN graph: they run on
	// their own goroutine beside the weight stages (embedCache.start). Building M's pattern
	// there counts the graph's connected components on the way.
	m.st.emb = newEmbedCache(m, s.Solver)
	counted, err := m.st.emb.start(ctx, prog)
	if err != nil {
		return nil, err
	}
	defer m.st.emb.stop()
	if !counted {
		if nc, _ := knn.Components(n, s.K, idx); nc > 1 {
			return nil, disconnectedError(s.K, nc)
		}
	}
	switch s.Method {
	case EMPaper:
		err = m.fitEMPaper(ctx, s, prog)
	default:
		err = m.fitLLEWeights(ctx, s, prog)
	}
	if err != nil {
		return nil, err
	}
	// Base embedding: the linear embedding of the mean weights (Section V).
	Y, vals, er, err := m.st.emb.embed(ctx, nil, m.Weights, m.meanSumsToOne(), nil, prog, &m.Report)
	m.st.memCheck = false
	if err := fitOverflow(err, m.Weights); err != nil {
		return nil, err
	}
	m.Embedding, m.Eigenvalues, m.Report.Eigen = Y, vals, er
	switch s.Method {
	case Direct:
		err = m.fitDirect(ctx, s, prog)
	case DirectPaper:
		err = m.fitDirectPaper(ctx, s, prog)
	}
	if err != nil {
		return nil, err
	}
	m.Report.closeStages(tFit)
	m.seal()
	return m, nil
}

// fitOverflow returns the error of the base embedding's eigensolve err (nil for nil). The
// weights are finite (lleWeights grows the ridge until they are), so a non-finite M means
// their scale overflowed it: a typed error that names |w| and the ridge. Before session 32
// this was an untyped error on the dense path and advised a covariance scale, which a fit
// does not have.
func fitOverflow(err error, w []float64) error {
	var de *DegenerateError
	if errors.Is(err, sparse.ErrNonFinite) || (errors.As(err, &de) && de.Kind == "nonfinite") {
		return &DegenerateError{Kind: "nonfinite", Count: 1, Example: -1,
			Msg: fmt.Sprintf("the weights reach |w| = %.3g and overflow the eigensolve (%v): raise the ridge (Settings.Reg, -reg)", maxAbs(w), err)}
	}
	return err
}

// graphFirst runs the kNN search of s on the raw n x d data x and returns the error Fit would
// report for its graph (too many duplicates, a disconnected graph, a cancelled context), or nil.
// Fit calls it before refusing direct-paper without a ridge, whose advice cannot mend these.
func graphFirst(ctx context.Context, x []float64, n, d int, s Settings) error {
	xs, _, err := prepareScale(x, n, d, s)
	if err != nil {
		return err
	}
	prog := progressFunc(s.Progress)
	prog(Progress{Stage: "knn"})
	idx, _, err := searchGraph(ctx, xs, x, n, d, s.K, parallel.Workers(s.Workers))
	if err != nil {
		return err
	}
	prog(Progress{Stage: "knn", Final: true})
	if nc, _ := knn.Components(n, s.K, idx); nc > 1 {
		return disconnectedError(s.K, nc)
	}
	return nil
}

// searchGraph finds the k nearest neighbours of the n x d points xs (raw: the caller's values,
// for the error message) and checks their neighbourhoods: it returns the neighbour indices and
// the count of points with a coincident neighbour, or the error Fit reports for them.
func searchGraph(ctx context.Context, xs, raw []float64, n, d, k, workers int) ([]int32, int, error) {
	idx, dist, err := knn.Graph(ctx, xs, n, d, k, knn.Options{Workers: workers})
	if err != nil {
		return nil, 0, err
	}
	dups, err := checkNeighbourhoods(dist, n, k)
	if err != nil {
		return nil, 0, underflowedGram(err, raw, idx, n, d, k)
	}
	return idx, dups, nil
}

// disconnectedError is the error for a kNN graph with nc > 1 connected components.
func disconnectedError(k, nc int) error {
	return &DegenerateError{Kind: "disconnected-graph", Count: nc, Example: -1,
		Msg: fmt.Sprintf("the %d-nearest-neighbour graph has %d connected components, so the embedding would be meaningless: use a larger k", k, nc)}
}

func progressFunc(f func(Progress)) func(Progress) {
	if f == nil {
		return func(Progress) {}
	}
	return f
}

// fitLLEWeights computes the LLE weights (Eq. (9)) of every point, and for EM also the fibre
// bases and the sigma_i of Alg. 1.
func (m *Model) fitLLEWeights(ctx context.Context, s Settings, prog func(Progress)) error {
	t0 := time.Now()
	prog(Progress{Stage: "weights"})
	m.Weights = make([]float64, m.N*m.K)
	if err := m.weightPass(ctx, s, true); err != nil {
		return err
	}
	m.Report.stage("weights", t0)
	prog(Progress{Stage: "weights", Final: true})
	if s.Method == EM {
		return m.fitEM(ctx, s, prog)
	}
	return nil
}

// weightPass computes, per point, the LLE weights (when computeWeights is set) and, for EM,
// the fibre basis; Restore runs it without the weights.
func (m *Model) weightPass(ctx context.Context, s Settings, computeWeights bool) error {
	n, d, k := m.N, m.D, m.K
	em := s.Method == EM
	if em {
		m.st.rmax = max(min(d, k-1), s.Dim)
		m.st.rank = make([]int32, n)
		m.st.basis = make([]float64, n*k*m.st.rmax)
	}
	type counts struct{ zero, extra, fallback int }
	part := make([]counts, parallel.Workers(m.st.workers))
	wss := make([]*work, len(part)) // one workspace per worker, made on its first range
	x := m.st.x
	err := m.st.forWeights(ctx, n, func(ctx context.Context, w, lo, hi int) error {
		if wss[w] == nil {
			wss[w] = newWork(k, d)
		}
		ws := wss[w]
		c := &part[w]
		next := lo // the next point at which ctx is checked (every cancelStride(k, d) points)
		for i := lo; i < hi; i++ {
			if i == next {
				next += cancelStride(k, d)
				if err := ctx.Err(); err != nil {
					return err
				}
			}
			nbr := m.Neighbors[i*k : (i+1)*k]
			zero := false
			if computeWeights {
				var extra bool
				zero, extra = lleWeights(ws, m.Weights[i*k:(i+1)*k], x, d, x[i*d:(i+1)*d], nbr, s.Reg, s.RegMode)
				if extra {
					c.extra++
				}
			} else {
				kernels.NeighborOffsets(ws.z, x, d, x[i*d:(i+1)*d], nbr)
				kernels.Gram(ws.g, ws.z, k, d)
				zero = kernels.Trace(ws.g, k) == 0
			}
			if zero {
				c.zero++
			}
			if em {
				if zero {
					m.st.rank[i] = 0 // no geometry: sigma_i = 0, no randomness
					continue
				}
				r, fb := fibreBasis(ws, m.st.basis[i*k*m.st.rmax:(i+1)*k*m.st.rmax], s.Dim)
				m.st.rank[i] = int32(r)
				if fb {
					c.fallback++
				}
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	var tot counts
	for _, c := range part {
		tot.zero += c.zero
		tot.extra += c.extra
		tot.fallback += c.fallback
	}
	m.Report.RegularizedPoints = tot.zero + tot.extra
	m.Report.FallbackPoints = tot.fallback
	return nil
}

// fitEM runs Alg. 1 for the fibre model: the E-step posterior is N(w_i^LLE, sigma_i Pi_i)
// (its mean does not depend on sigma_i), and the M-step (the paper's Eq. (29) structure on the
// (k-1)-dimensional sum-to-one plane) is
//
//	sigma_i <- (||w_i^LLE - 1/k||^2 + sigma_i tr(Pi_i)) / (k - 1),  tr(Pi_i) = k - 1 - r_i,
//
// starting from Omega_i = I. It contracts to ||w_i^LLE - 1/k||^2 / r_i, the exact marginal
// maximum-likelihood estimate. Points without geometry (zero Gram matrix) get sigma_i = 0.
func (m *Model) fitEM(ctx context.Context, s Settings, prog func(Progress)) error {
	n, k := m.N, m.K
	t0 := time.Now()
	c := make([]float64, n)
	m.Sigma = make([]float64, n)
	inv := 1 / float64(k)
	for i := 0; i < n; i++ {
		w := m.Weights[i*k : (i+1)*k]
		q := 0.0
		for _, v := range w {
			q += (v - inv) * (v - inv)
		}
		c[i] = q
		if m.st.rank[i] > 0 {
			m.Sigma[i] = 1
		}
	}
	km1 := float64(k - 1)
	it := 0
	converged := false
	prog(Progress{Stage: "em", Total: s.EMIters})
	for it < s.EMIters {
		if err := ctx.Err(); err != nil {
			return err
		}
		it++
		change := 0.0
		for i := 0; i < n; i++ {
			r := int(m.st.rank[i])
			if r == 0 {
				continue
			}
			old := m.Sigma[i]
			nw := (c[i] + old*float64(k-1-r)) / km1
			m.Sigma[i] = nw
			if dd := math.Abs(nw-old) / math.Max(nw, math.SmallestNonzeroFloat64); dd > change {
				change = dd
			}
		}
		prog(Progress{Stage: "em", Done: it, Total: s.EMIters})
		if change < s.EMTol {
			converged = true
			break
		}
	}
	m.Report.EMIterations = it
	m.Report.EMConverged = converged
	m.Report.Sigma = sigmaStats(m.Sigma, false)
	m.Report.stage("em", t0)
	prog(Progress{Stage: "em", Done: it, Total: s.EMIters, Final: true})
	return nil
}

func sigmaStats(sig []float64, abs bool) *SigmaStats {
	s := append([]float64(nil), sig...)
	sort.Float64s(s)
	st := &SigmaStats{Min: s[0], Max: s[len(s)-1], SampledAsAbs: abs}
	h := len(s) / 2
	if len(s)%2 == 1 {
		st.Median = s[h]
	} else {
		st.Median = (s[h-1] + s[h]) / 2
	}
	for _, v := range sig {
		if v <= 0 {
			st.NonPositive++
		}
	}
	return st
}
