package engine

import (
	"context"
	"fmt"
	"math"
	"slices"
	"sync"
	"time"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/lapack"
	"gonum.org/v1/gonum/mat"

	"glle/kernels"
	"glle/parallel"
	"glle/sparse"
)

// embedCache owns what the linear embedding reuses between the fit and every generation.
type embedCache struct {
	mu     sync.Mutex
	m      *Model
	solver Solver
	sp     *sparseEmbed // sparse path state, built on first use
}

func newEmbedCache(m *Model, s Solver) *embedCache {
	if s == SolverAuto && (m.N <= autoDenseN || m.N < m.Dim+sparseRoom) {
		s = SolverDense // Lanczos needs more room than a tiny problem has (robustness, issue 6)
	}
	return &embedCache{m: m, solver: s}
}

// start begins the sparse path's pattern and analysis before the weights exist (see
// sparseEmbed.start) when there are at least two workers; the dense solver has nothing to
// prepare. counted reports that the pattern was built, so that the kNN graph was found
// connected (an error otherwise); when false the caller checks connectivity itself.
func (c *embedCache) start(ctx context.Context, prog func(Progress)) (counted bool, err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.solver == SolverDense {
		return false, nil
	}
	c.sp = newSparseEmbed(c.m, c.solver)
	if parallel.Workers(c.m.st.workers) < 2 {
		return false, nil // one worker: the analysis runs in turn, inside embed
	}
	return true, c.sp.start(ctx, prog)
}

// stop cancels and waits for an analysis that start began and no embed took.
func (c *embedCache) stop() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.sp != nil {
		c.sp.stop()
	}
}

// autoDenseN is the largest n for which SolverAuto uses the dense solver: the Lanczos basis of
// the sparse solver (NCV + 1 vectors, NCV >= 20) does not fit into a smaller space.
const autoDenseN = 64

// sparseRoom: the sparse solvers need n >= Dim + sparseRoom. Their Lanczos basis holds the
// wanted vectors, 2 more and the residual vector, orthogonal to the deflated constant: n >=
// Dim + 4 (sparse.EigOptions' check, the same for the paper modes' Dim + 1 undeflated
// vectors); one more for margin. SolverAuto uses the dense solver below it.
const sparseRoom = 5

// shift returns the base fit's adapted shift of the sparse solver (0 if none).
func (c *embedCache) shift() float64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.sp == nil {
		return 0
	}
	return c.sp.baseShift
}

// denseMaxN is the largest n the dense solver accepts: it stores M densely (8 n^2 bytes) and
// factors it in O(n^3).
const denseMaxN = 20000

// embed returns the linear embedding of weights w (Section V): the Dim eigenvectors of
// M = (I - W)^T (I - W) (Eq. (39)) with smallest eigenvalues above the trivial one. When the
// weights sum to one (sumToOne), the constant vector is M's exact null vector and is deflated;
// otherwise (EMPaper's weights, DirectPaper's draws) the Dim+1 smallest are computed and the
// smallest dropped, as the paper and the authors' code do.
// Eigenvectors have unit norm (or norm sqrt(n), (1/n) Y^T Y = I, Eq. (37), with PaperScaling)
// and their sign makes the entry of largest magnitude positive. The embedding is written into
// dst when it has length N*Dim (row-major N x Dim, the returned matrix then shares it), else
// into new memory; dst is not touched when embed fails.
func (c *embedCache) embed(ctx context.Context, dst, w []float64, sumToOne bool, warm *mat.Dense, prog func(Progress), rep *Report) (*mat.Dense, []float64, EigenReport, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	m := c.m
	n, p := m.N, m.Dim
	deflate := sumToOne
	nev := p
	if !deflate {
		nev = p + 1
	}
	var warmData []float64
	if warm != nil {
		warmData = warm.RawMatrix().Data
	}
	var (
		vecs []float64
		vals []float64
		er   EigenReport
		err  error
	)
	if c.solver == SolverDense {
		if n > denseMaxN {
			return nil, nil, er, inputErr("the dense solver stores M densely and is limited to n <= %d (n = %d): use the sparse solver", denseMaxN, n)
		}
		t0 := time.Now()
		prog(Progress{Stage: "eigensolve"})
		vecs, vals, er, err = denseSmallest(ctx, n, m.K, m.Neighbors, w, nev, deflate, warmData, p)
		rep.stage("eigensolve", t0)
		prog(Progress{Stage: "eigensolve", Final: true})
	} else {
		if c.sp == nil {
			c.sp = newSparseEmbed(m, c.solver)
		}
		var into []float64
		if deflate {
			into = dst // the solver's vectors are the embedding's columns
		}
		vecs, vals, er, err = c.sp.solve(ctx, into, w, nev, deflate, warmData, p, prog, rep)
	}
	if err != nil {
		return nil, nil, er, err
	}
	if !deflate {
		// Drop the smallest eigenpair (column 0).
		out := dst
		if len(out) != n*p {
			out = make([]float64, n*p)
		}
		for i := 0; i < n; i++ {
			copy(out[i*p:(i+1)*p], vecs[i*nev+1:(i+1)*nev])
		}
		vecs, vals = out, vals[1:]
	} else if len(dst) == n*p && &vecs[0] != &dst[0] {
		copy(dst, vecs) // the dense solver and the sparse path's dense fallback allocate their own
		vecs = dst
	}
	fixSigns(vecs, n, p, m.st.workers)
	if m.Scaling == PaperScaling {
		f := math.Sqrt(float64(n))
		for i := range vecs {
			vecs[i] *= f
		}
	}
	er.Values = vals
	return mat.NewDense(n, p, vecs), vals, er, nil
}

// rowChunk is the fixed chunk of rows over which fixSigns and rotateOnto reduce (their results
// then do not depend on the worker count).
const rowChunk = 1 << 13

// fixSigns flips each column of the row-major n x p matrix so that its entry of largest
// magnitude (lowest index on ties) is positive: eigenvectors are defined up to sign only.
// It runs on workers goroutines over fixed chunks of rows, whose maxima are compared in chunk
// order, so the choice does not depend on workers.
func fixSigns(v []float64, n, p, workers int) {
	const chunk = rowChunk
	nc := parallel.NumChunks(n, chunk)
	best := make([]float64, nc*p) // per chunk and column: the largest magnitude and its row
	at := make([]int, nc*p)
	_ = parallel.Chunks(context.Background(), n, chunk, workers, func(_ context.Context, _, c, lo, hi int) error {
		bc, ac := best[c*p:c*p+p], at[c*p:c*p+p]
		for j := range bc {
			bc[j], ac[j] = -1, lo
		}
		for i := lo; i < hi; i++ {
			for j, x := range v[i*p : i*p+p] {
				if a := math.Abs(x); a > bc[j] {
					bc[j], ac[j] = a, i
				}
			}
		}
		return nil
	})
	flip := make([]bool, p)
	for j := 0; j < p; j++ {
		b, bi := -1.0, 0
		for c := 0; c < nc; c++ {
			if best[c*p+j] > b {
				b, bi = best[c*p+j], at[c*p+j]
			}
		}
		flip[j] = v[bi*p+j] < 0
	}
	if !slices.Contains(flip, true) {
		return
	}
	_ = parallel.For(context.Background(), n, workers, func(_ context.Context, _, lo, hi int) error {
		for i := lo; i < hi; i++ {
			for j, f := range flip {
				if f {
					v[i*p+j] = -v[i*p+j]
				}
			}
		}
		return nil
	})
}

// mulM computes dst = M v = (I - W)^T (I - W) v for one vector (Eq. (39)); u is scratch (n).
func mulM(dst, v, u []float64, k int, nbr []int32, w []float64) {
	n := len(v)
	for i := 0; i < n; i++ {
		s := v[i]
		for j, nb := range nbr[i*k : (i+1)*k] {
			s -= w[i*k+j] * v[nb]
		}
		u[i] = s
	}
	copy(dst, u)
	for i := 0; i < n; i++ {
		ui := u[i]
		for j, nb := range nbr[i*k : (i+1)*k] {
			dst[nb] -= w[i*k+j] * ui
		}
	}
}

// denseM returns M = (I - W)^T (I - W) (Eq. (39)) as a dense row-major n x n matrix: the sum over rows i of
// I - W of the outer products (e_i - w_i)(e_i - w_i)^T.
func denseM(n, k int, nbr []int32, w []float64) []float64 {
	mm := make([]float64, n*n)
	idx := make([]int, k+1)
	val := make([]float64, k+1)
	for i := 0; i < n; i++ {
		idx[0], val[0] = i, 1
		for j := 0; j < k; j++ {
			idx[j+1], val[j+1] = int(nbr[i*k+j]), -w[i*k+j]
		}
		for a := range idx {
			row := mm[idx[a]*n:]
			for b := range idx {
				row[idx[b]] += val[a] * val[b]
			}
		}
	}
	return mm
}

// denseNormInf returns the largest absolute row sum of the row-major n x n matrix mm.
func denseNormInf(mm []float64, n int) float64 {
	norm := 0.0
	for i := 0; i < n; i++ {
		s := 0.0
		for _, v := range mm[i*n : (i+1)*n] {
			s += math.Abs(v)
		}
		norm = math.Max(norm, s)
	}
	return norm
}

// denseSmallest finds the nev smallest eigenpairs of M (orthogonal to the constant vector when
// deflate is set) by block inverse (subspace) iteration with a dense Cholesky factor of
// M - sigma I and Rayleigh-Ritz. It is the oracle for the sparse solver and the explicit dense
// option. warm (n x wp, row-major) seeds the first columns of the block.
func denseSmallest(ctx context.Context, n, k int, nbr []int32, w []float64, nev int, deflate bool, warm []float64, wp int) ([]float64, []float64, EigenReport, error) {
	er := EigenReport{Solver: "dense", Deflated: deflate}
	mm := denseM(n, k, nbr, w)
	norm := denseNormInf(mm, n)
	if math.IsNaN(norm) || math.IsInf(norm, 0) {
		// Weights so large that M overflows (a generation at a huge covariance scale): the
		// factorization and the full eigendecomposition would return NaNs or fail to converge.
		return nil, nil, er, fmt.Errorf("dense eigensolver: ||M||_inf = %g: %w", norm, sparse.ErrNonFinite)
	}
	if err := ctx.Err(); err != nil {
		return nil, nil, er, err
	}
	lap := kernels.Current().LAPACK()
	bl := kernels.Current().BLAS()
	// Shift below M's smallest eigenvalue (0 or round-off) by a margin far above round-off
	// (n eps ||M||) and far below the eigenvalues sought (>= 1e-9 ||M|| up to n = 5000).
	sigma := -1e-10 * norm
	var fac []float64
	for try := 0; ; try++ {
		fac = append(fac[:0], mm...)
		for i := 0; i < n; i++ {
			fac[i*n+i] -= sigma
		}
		if lap.Dpotrf(blas.Lower, n, fac, n) {
			break
		}
		if try == 3 {
			return nil, nil, er, fmt.Errorf("dense eigensolver: M - sigma I is not positive definite even at sigma = %g", sigma)
		}
		sigma *= 100
	}
	er.Shift = sigma
	avail := n
	if deflate {
		avail--
	}
	if nev > avail {
		return nil, nil, er, inputErr("cannot compute %d eigenvectors from %d points", nev, n)
	}
	b := min(avail, 2*nev+6)
	V := make([]float64, n*b)
	for j := 0; j < b; j++ {
		if j < wp && warm != nil {
			for i := 0; i < n; i++ {
				V[i*b+j] = warm[i*wp+j]
			}
			continue
		}
		st := kernels.NewStream(0x5eed, 0, j)
		for i := 0; i < n; i++ {
			V[i*b+j] = st.Float64() - 0.5
		}
	}
	col := make([]float64, n)
	mv := make([]float64, n)
	u := make([]float64, n)
	MV := make([]float64, n*b)
	H := make([]float64, b*b)
	ev := make([]float64, b)
	U := make([]float64, b*b)
	tmp := make([]float64, n*b)
	tol := 1e-12 * norm
	// Subspace iteration converges at the rate (lambda_nev - sigma) / (lambda_b+1 - sigma);
	// spectra with no gap there (weights drawn with huge variances) fall back to a full
	// eigendecomposition.
	const maxIter = 300
	for it := 1; it <= maxIter; it++ {
		if err := ctx.Err(); err != nil {
			return nil, nil, er, err
		}
		if it > 1 {
			bl.Dtrsm(blas.Left, blas.Lower, blas.NoTrans, blas.NonUnit, n, b, 1, fac, n, V, b)
			bl.Dtrsm(blas.Left, blas.Lower, blas.Trans, blas.NonUnit, n, b, 1, fac, n, V, b)
			er.OpApplies += b
		}
		if deflate {
			deflateConstant(V, n, b)
		}
		orthonormalize(V, n, b)
		orthonormalize(V, n, b)
		for j := 0; j < b; j++ {
			for i := 0; i < n; i++ {
				col[i] = V[i*b+j]
			}
			mulM(mv, col, u, k, nbr, w)
			for i := 0; i < n; i++ {
				MV[i*b+j] = mv[i]
			}
		}
		bl.Dgemm(blas.Trans, blas.NoTrans, b, b, n, 1, V, b, MV, b, 0, H, b)
		for a := 0; a < b; a++ {
			for c := 0; c < a; c++ {
				s := (H[a*b+c] + H[c*b+a]) / 2
				H[a*b+c], H[c*b+a] = s, s
			}
		}
		kernels.SymEigen(H, b, ev, U)
		// Ascending order: reverse the columns.
		for a := 0; a < b/2; a++ {
			ev[a], ev[b-1-a] = ev[b-1-a], ev[a]
			for r := 0; r < b; r++ {
				U[r*b+a], U[r*b+b-1-a] = U[r*b+b-1-a], U[r*b+a]
			}
		}
		bl.Dgemm(blas.NoTrans, blas.NoTrans, n, b, b, 1, V, b, U, b, 0, tmp, b)
		copy(V, tmp)
		bl.Dgemm(blas.NoTrans, blas.NoTrans, n, b, b, 1, MV, b, U, b, 0, tmp, b)
		worst := 0.0
		for j := 0; j < nev; j++ {
			s := 0.0
			for i := 0; i < n; i++ {
				r := tmp[i*b+j] - ev[j]*V[i*b+j]
				s += r * r
			}
			worst = math.Max(worst, math.Sqrt(s))
		}
		er.Iterations = it
		er.MaxResidual = worst / norm
		if worst <= tol {
			vecs := make([]float64, n*nev)
			for i := 0; i < n; i++ {
				copy(vecs[i*nev:(i+1)*nev], V[i*b:i*b+nev])
			}
			return vecs, append([]float64(nil), ev[:nev]...), er, nil
		}
	}
	return denseFull(ctx, mm, n, nev, deflate, norm, er, func(dst, v []float64) { mulM(dst, v, u, k, nbr, w) })
}

// denseFull computes all eigenpairs of M (with the constant direction moved to the top of the
// spectrum when deflating) and returns the nev smallest. mm is overwritten; mulM applies M
// (dst = M v) for the report's residuals, measured on the returned pairs.
func denseFull(ctx context.Context, mm []float64, n, nev int, deflate bool, norm float64, er EigenReport, mulM func(dst, v []float64)) ([]float64, []float64, EigenReport, error) {
	if err := ctx.Err(); err != nil {
		return nil, nil, er, err
	}
	er.Solver = "dense-full"
	if deflate {
		// P M P + ||M|| 11^T/n, P = I - 11^T/n.
		rm := make([]float64, n)
		all := 0.0
		for i := 0; i < n; i++ {
			s := 0.0
			for _, v := range mm[i*n : (i+1)*n] {
				s += v
			}
			rm[i] = s / float64(n)
			all += s
		}
		all /= float64(n * n)
		for i := 0; i < n; i++ {
			for j := 0; j < n; j++ {
				mm[i*n+j] += -rm[i] - rm[j] + all + norm/float64(n)
			}
		}
	}
	w := make([]float64, n)
	lap := kernels.Current().LAPACK()
	wk := make([]float64, 1)
	lap.Dsyev(lapack.EVCompute, blas.Lower, n, mm, n, w, wk, -1)
	wk = make([]float64, int(wk[0]))
	if !lap.Dsyev(lapack.EVCompute, blas.Lower, n, mm, n, w, wk, len(wk)) {
		return nil, nil, er, fmt.Errorf("dense eigensolver: the full eigendecomposition did not converge")
	}
	vecs := make([]float64, n*nev)
	for i := 0; i < n; i++ {
		copy(vecs[i*nev:(i+1)*nev], mm[i*n:i*n+nev])
	}
	// The residuals ||M u - lambda u|| / ||M||_inf of the returned pairs (reported as 0 before
	// session 33, whatever they were).
	col, mv := make([]float64, n), make([]float64, n)
	er.MaxResidual = 0
	for j := 0; j < nev; j++ {
		for i := range col {
			col[i] = vecs[i*nev+j]
		}
		mulM(mv, col)
		s := 0.0
		for i, v := range mv {
			r := (v - w[j]*col[i]) / norm // scaled first: at ||M|| ~ 1e250 the squares overflow
			s += r * r
		}
		er.MaxResidual = math.Max(er.MaxResidual, math.Sqrt(s))
	}
	return vecs, append([]float64(nil), w[:nev]...), er, nil
}

// deflateConstant removes the mean of every column of the row-major n x b block.
func deflateConstant(v []float64, n, b int) {
	for j := 0; j < b; j++ {
		s := 0.0
		for i := 0; i < n; i++ {
			s += v[i*b+j]
		}
		s /= float64(n)
		for i := 0; i < n; i++ {
			v[i*b+j] -= s
		}
	}
}

// orthonormalize makes the columns of the row-major n x b block orthonormal by modified
// Gram-Schmidt (call twice for full accuracy). A column that vanishes is replaced by a unit
// vector orthogonalised in the next pass.
func orthonormalize(v []float64, n, b int) {
	for j := 0; j < b; j++ {
		for q := 0; q < j; q++ {
			s := 0.0
			for i := 0; i < n; i++ {
				s += v[i*b+q] * v[i*b+j]
			}
			for i := 0; i < n; i++ {
				v[i*b+j] -= s * v[i*b+q]
			}
		}
		s := 0.0
		for i := 0; i < n; i++ {
			s += v[i*b+j] * v[i*b+j]
		}
		s = math.Sqrt(s)
		if s == 0 {
			v[(j%n)*b+j] = 1
			continue
		}
		for i := 0; i < n; i++ {
			v[i*b+j] /= s
		}
	}
}
