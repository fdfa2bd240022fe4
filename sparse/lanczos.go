package sparse

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"time"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/lapack"
	lapackgonum "gonum.org/v1/gonum/lapack/gonum"

	"glle/parallel"
)

// Lanczos owns the Krylov basis of a thick-restart Lanczos process (Wu and Simon, "Thick-restart
// Lanczos method for large symmetric eigenvalue problems", SIAM J. Matrix Anal. Appl. 22(2),
// 2000) with full reorthogonalisation, applied to a shift-invert operator
// T = (A - sigma I)^{-1}. It finds the largest eigenvalues nu of T, i.e. the eigenvalues
// lambda = sigma + 1/nu of A closest above sigma. The basis (NCV+1 contiguous vectors of
// length N, so that orthogonalising against the first m vectors reads m vectors, not the
// whole basis) is reused across calls.
//
// A Lanczos is not safe for concurrent use.
type Lanczos struct {
	n     int
	basis []float64   // ld vectors of length n; vector j is basis[j*n:(j+1)*n]
	x     []float64   // work vector of length n (start vector, then residual products)
	c     []float64   // reorthogonalisation coefficients
	bas   [][]float64 // deflation and basis vectors of the current orthogonalisation
	ops   vecOps      // parallel vector operations
	rtmp  []float64   // restart scratch, one block per worker
	au    [][]float64 // products A u of the Ritz vectors (true residuals), reused by every call
	dc    deflCache   // the last orthonormalised deflation basis
}

// NewLanczos returns a Lanczos process for operators of order n; the basis is allocated on
// first use.
func NewLanczos(n int) *Lanczos {
	if n < 1 {
		panic("sparse: NewLanczos: n < 1")
	}
	return &Lanczos{n: n, x: make([]float64, n)}
}

// SolveAt factors op at the fixed shift sigma (op.SetShift) and runs Solve: the eigenproblem
// of Eq. (41) for M of Eq. (39) is SolveAt(ctx, M, op, 0, opts) with a GramLU op (B = I - W
// factored, M^+ applied) and opts.Deflate holding the constant vector. The result counts the
// one factorization and its time; errors as Solve, plus SetShift's.
func (l *Lanczos) SolveAt(ctx context.Context, a SymMatrix, op Operator, sigma float64, opts EigOptions) (EigResult, error) {
	t0 := time.Now()
	if err := op.SetShift(sigma); err != nil {
		return EigResult{Factorizations: 1, Shifts: []float64{sigma}, FactorTime: time.Since(t0), TotalTime: time.Since(t0)}, err
	}
	ft := time.Since(t0)
	res, err := l.Solve(ctx, a, op, sigma, opts)
	res.Factorizations = 1
	res.FactorTime = ft
	res.TotalTime = time.Since(t0)
	return res, err
}

// Solve runs the Lanczos process on op, whose shift sigma must already be set (op.SetShift),
// for the opts.NEV eigenpairs of a closest above sigma and orthogonal to opts.Deflate, without
// any shift selection (Eigensolver.Smallest adds it). opts.Shift is ignored. Errors as for
// Eigensolver.Smallest, except *ShiftError; a non-finite ||A||_inf (NaN or infinite entries)
// returns an error wrapping ErrNonFinite.
func (l *Lanczos) Solve(ctx context.Context, a SymMatrix, op Operator, sigma float64, opts EigOptions) (EigResult, error) {
	t0 := time.Now()
	var res EigResult
	if a.N() != l.n || op.N() != l.n {
		panic("sparse: Lanczos.Solve: size mismatch")
	}
	cfg, err := resolveOptionsCached(l.n, opts, &l.dc)
	if err != nil {
		return res, err
	}
	res.NormA = a.NormInf()
	normA := res.NormA
	if math.IsNaN(normA) || math.IsInf(normA, 0) {
		// Every residual test r <= tol * normA would pass: reject, as Smallest does.
		return res, fmt.Errorf("sparse: Lanczos.Solve: ||A||_inf = %g: %w", normA, ErrNonFinite)
	}
	if normA == 0 {
		normA = 1 // the zero matrix: any shift works
	}
	run := l.run(ctx, a, op, sigma, normA, cfg, cfg.start, nil)
	res.Iterations, res.OpApplies, res.ApplyTime = run.restarts, run.ops, run.applyTime
	res.ResidualProducts = run.residualProducts
	fillResult(&res, run, sigma, l.n)
	res.Shifts = []float64{sigma}
	res.TotalTime = time.Since(t0)
	if run.err != nil {
		return res, run.err
	}
	if run.converged < cfg.nev {
		worst := 0.0
		for _, r := range res.Residuals {
			worst = max(worst, r/normA)
		}
		return res, &NotConvergedError{NEV: cfg.nev, Converged: run.converged, OpApplies: run.ops,
			Iterations: run.restarts, Residual: worst, Shift: sigma, Stalled: run.stalled}
	}
	return res, nil
}

// looseTol is the relative Lanczos residual estimate at which the Ritz values are trusted for
// the re-shift decision of the shift rule (ShiftScale): the Ritz values then carry a relative error of about
// looseTol^2, enough to place the new shift within a small factor of the eigenvalue scale.
const looseTol = 1e-1

// rhoSkip is the margin by which the last exact residual factor rho must predict convergence
// for Lanczos to go straight to the true residuals without a new product with A.
const rhoSkip = 0.25

// reshiftHook is consulted when the wanted Ritz pairs have loosely converged; lam holds the
// estimates sigma + 1/theta of the NEV+1 smallest eigenvalues, ascending. It returns a new
// shift and true to stop this run for a re-shift.
type reshiftHook func(lam []float64) (float64, bool)

// ErrNonFinite is wrapped by the errors of assemblies and eigensolves that met non-finite
// values: in the weights or the matrix, or produced by its factorization (overflow, e.g. from
// weights of enormous magnitude).
var ErrNonFinite = errors.New("non-finite values in the matrix or its factorization (overflow)")

type lanczosRun struct {
	values, residuals []float64
	vectors           [][]float64
	converged         int
	ops, restarts     int
	residualProducts  int // products with A for exact residual norms
	applyTime         time.Duration
	reshift           float64 // nonzero: stopped for a re-shift; vectors are NEV+1 Ritz vectors
	// stalled: stopped because the true residuals stopped falling while the Lanczos
	// estimates had converged (see stallChecks); converged < NEV.
	stalled bool
	err     error
}

// stallChecks and stallGain define a stalled run: stallChecks true-residual tests in a row,
// each taken because the Lanczos estimates say the wanted pairs have converged, that fail
// and do not lower the worst true residual below stallGain times the best so far. The
// estimates then keep shrinking while the true residual sits at the floor set by the
// operator's accuracy (for a Cholesky operator, round-off amplified by
// ||(A - sigma I)^{-1}||, large when sigma is very close to an exactly deflated null
// eigenvalue), and more iterations cannot help: the run stops instead of using the whole
// MaxOps budget.
const (
	stallChecks = 5
	stallGain   = 0.9
)

// run is the thick-restart Lanczos iteration. T V_m = V_m H_m + beta v_{m} e_m^T, where after a
// restart H_m is the arrowhead matrix diag(theta_kept) bordered by the couplings
// s_i = beta y_{m,i} to the residual vector, followed by the tridiagonal Lanczos part.
func (l *Lanczos) run(ctx context.Context, a SymMatrix, op Operator, sigma, normA float64, cfg eigConfig,
	start [][]float64, hook reshiftHook) (out lanczosRun) {
	n, ncv, nev := l.n, cfg.ncv, cfg.nev
	ld := ncv + 1
	if len(l.basis) < n*ld {
		l.basis = make([]float64, n*ld)
	}
	V := l.basis[:n*ld]
	if len(l.c) < ld {
		l.c = make([]float64, ld)
	}
	x := l.x
	rng := rand.New(rand.NewPCG(cfg.seed, 0x9e3779b97f4a7c15))
	// The projected matrix is at most NCV x NCV (20-40): gonum's native Dsyev in both builds
	// costs microseconds, removes one source of difference between the OpenBLAS and purego
	// builds (the operator's kernels remain one), and avoids a cgo call per Lanczos step.
	lap := lapackgonum.Implementation{}

	col := func(j int) []float64 { return V[j*n : (j+1)*n] }
	vo := &l.ops
	vo.workers = cfg.workers
	vo.setConsts(cfg.defl)
	// orth makes v orthogonal to the first m basis vectors (two classical Gram-Schmidt passes,
	// "twice is enough") and to the deflation space.
	// It returns v's first-pass coefficient on basis vector ia (ia < m; 0 for ia < 0) and its
	// norm afterwards (vecOps.orthNorm).
	orth := func(v []float64, m, ia int) (float64, float64) {
		l.bas = append(l.bas[:0], cfg.defl...)
		for t := 0; t < m; t++ {
			l.bas = append(l.bas, col(t))
		}
		if len(l.c) < len(l.bas) {
			l.c = make([]float64, len(l.bas))
		}
		if ia >= 0 {
			ia += len(cfg.defl)
		}
		return vo.orthNorm(v, l.bas, len(cfg.defl), l.c, ia)
	}
	// randomOrth fills v with a random unit vector orthogonal to the first m basis vectors and
	// the deflation space.
	randomOrth := func(v []float64, m int) {
		for try := 0; try < 3; try++ {
			for r := range v {
				v[r] = rng.NormFloat64()
			}
			nv0 := vo.norm(v)
			if _, nv := orth(v, m, -1); nv > 1e-8*nv0 {
				vo.scal(1/nv, v)
				return
			}
		}
		panic("sparse: Lanczos: could not extend the Krylov basis") // cannot happen: NCV < N - len(Deflate)
	}

	// Start vector: the normalised sum of the warm-start vectors, else random.
	clear(x)
	for _, s := range start {
		if ns := vo.norm(s); ns > 0 {
			vo.axpy(1/ns, s, x)
		}
	}
	nx0 := vo.norm(x)
	nx := 0.0
	if nx0 > 0 {
		_, nx = orth(x, 0, -1)
	}
	// warm: the run starts from the caller's vectors. If their Krylov space closes (a
	// breakdown: it is an invariant subspace, e.g. the start is an eigenvector), its exact
	// Ritz pairs need not be the wanted ones, and the run starts again from a random vector.
	// From a random start a breakdown means the space holds every distinct eigenvalue, so the
	// continuation below (a new random direction, for the multiple ones) is sound.
	warm := nx0 > 0 && nx > 1e-8*nx0
	if warm {
		// scal into the basis directly (x is scratch from here on)
		v0, f := col(0), 1/nx
		vo.each(n, func(_, lo, hi int) {
			for i, v := range x[lo:hi] {
				v0[lo+i] = v * f
			}
		})
	} else {
		randomOrth(x, 0)
		copy(col(0), x)
	}

	H := make([]float64, ncv*ncv)
	hw := make([]float64, ncv*ncv)
	theta := make([]float64, ncv)
	work := make([]float64, 1)
	lap.Dsyev(lapack.EVCompute, blas.Upper, ncv, hw, ncv, theta, work, -1)
	work = make([]float64, int(work[0]))
	// eig computes the eigenpairs of the leading m x m block of H into hw (eigenvectors in
	// columns, row-major with stride ncv) and theta, ordered by decreasing theta.
	eig := func(m int) {
		for i := 0; i < m; i++ {
			copy(hw[i*ncv:i*ncv+m], H[i*ncv:i*ncv+m])
		}
		if !lap.Dsyev(lapack.EVCompute, blas.Upper, m, hw, ncv, theta[:m], work, len(work)) {
			panic("sparse: Lanczos: dense eigensolver failed on the projected matrix")
		}
		for i := 0; i < m/2; i++ { // ascending -> descending
			theta[i], theta[m-1-i] = theta[m-1-i], theta[i]
			for r := 0; r < m; r++ {
				hw[r*ncv+i], hw[r*ncv+m-1-i] = hw[r*ncv+m-1-i], hw[r*ncv+i]
			}
		}
	}
	// ritz returns the Ritz vectors for columns 0..cnt-1 of hw from the first m basis vectors.
	// The final NEV vectors go to cfg.dst when the caller gave buffers.
	ritz := func(m, cnt int) [][]float64 {
		u := make([][]float64, cnt)
		for t := range u {
			if cnt == nev && t < len(cfg.dst) {
				u[t] = cfg.dst[t]
			} else {
				u[t] = make([]float64, n)
			}
		}
		norms := vo.combine(u, V, n, m, func(q, t int) float64 { return hw[q*ncv+t] })
		for t, ut := range u {
			if nu := norms[t]; nu > 0 {
				vo.scal(1/nu, ut)
			}
		}
		return u
	}
	// finish fills out with the top cnt Ritz pairs of the first m vectors and true residuals.
	finish := func(m, cnt int) {
		cnt = min(cnt, m)
		out.vectors = ritz(m, cnt)
		out.values = make([]float64, cnt)
		out.residuals = make([]float64, cnt)
		for len(l.au) < cnt {
			l.au = append(l.au, make([]float64, n))
		}
		au := l.au[:cnt]
		vo.mulVecs(a, au, out.vectors)
		for t := 0; t < cnt; t++ {
			out.values[t] = sigma + 1/theta[t]
			out.residuals[t] = vo.residualNorm(au[t], out.vectors[t], out.values[t])
		}
	}

	tnorm := 0.0      // running estimate of ||T||
	scratch := x      // x is free once the start vector is in the basis
	rho := -1.0       // last ||(A - sigma I) v_{m+1}||, -1 before the first
	rhoStale := false // a prediction from rho failed: take the product again
	j, beta := 0, 0.0
	loose := false
	stallBest, stallCount := math.Inf(1), 0
	for {
		for ; j < ncv; j++ {
			if err := ctx.Err(); err != nil {
				out.err = err
				return out
			}
			if out.ops >= cfg.maxOps {
				eig(j)
				finish(j, nev)
				out.converged = 0
				return out
			}
			// The product goes straight into the next basis slot: it is orthogonalised and
			// normalised there.
			x, y := col(j), col(j+1)
			t := time.Now()
			op.Apply(y, x)
			out.applyTime += time.Since(t)
			out.ops++
			// alpha = v_j . T v_j is orthogonalisation's first coefficient on v_j; beta the norm
			// after it.
			alpha, nrm := orth(y, j+1, j)
			H[j*ncv+j] = alpha
			beta = nrm
			tnorm = max(tnorm, math.Abs(alpha), beta)
			breakdown := !(beta > 1e-12*tnorm) // invariant subspace (or NaN, caught below)
			if math.IsNaN(alpha) || math.IsNaN(beta) || math.IsInf(alpha, 0) || math.IsInf(beta, 0) {
				out.err = fmt.Errorf("sparse: Lanczos: the operator produced a non-finite vector: %w", ErrNonFinite)
				return out
			}
			if breakdown && warm {
				// Start again, cold: col(0) a random unit vector, H and the estimates reset.
				// (Before session 31 the start's exact pairs were accepted: NEV = 1 from
				// e_10 of diag(1..300) returned 11.)
				warm = false
				randomOrth(y, 0)
				copy(col(0), y)
				clear(H)
				tnorm, rho, rhoStale, loose = 0, -1, false, false
				stallBest, stallCount = math.Inf(1), 0
				j = -1
				continue
			}
			if breakdown {
				beta = 0
				randomOrth(y, j+1)
			} else {
				vo.scal(1/beta, y)
			}
			if j+1 < ncv {
				H[j*ncv+j+1], H[(j+1)*ncv+j] = beta, beta
			}
			m := j + 1
			if m < nev {
				continue
			}
			// Convergence test: the Ritz estimates |beta y_{m,i}| <= tol theta_i, or the exact
			// residual norms below; then the true residuals of the Ritz vectors (finish).
			eig(m)
			ok, looseOK := true, true
			worst := 0.0 // largest |beta y_m,t| / theta_t
			for t := 0; t < min(nev, m); t++ {
				est := math.Abs(beta * hw[(m-1)*ncv+t])
				if !(est <= cfg.tol*theta[t]) || theta[t] <= 0 {
					ok = false
				}
				if !(est <= looseTol*theta[t]) || theta[t] <= 0 {
					looseOK = false
				}
				if theta[t] > 0 {
					worst = max(worst, est/theta[t])
				} else {
					worst = math.Inf(1) // not a wanted pair yet
				}
			}
			if !ok && beta > 0 && worst <= math.Sqrt(cfg.tol) && !cfg.boundOnly {
				// The estimate above bounds ||A u - lambda u|| by ||A - sigma I|| |beta y_m,t| /
				// theta_t; the exact value is ||(A - sigma I) v_{m+1}|| |beta y_m,t| / theta_t
				// (apply A - sigma I to (A - sigma I)^{-1} V y = theta V y + beta y_m v_{m+1}),
				// usually 1e3-1e4 times smaller. One product with A gives it: taken at the first
				// test and whenever the last value predicts convergence within 10x. When the
				// last value predicts convergence with a margin of rhoSkip, the product is skipped:
				// finish's true residuals decide (rho moved by 0.8-1.25x from one step to the
				// next in the runs measured), and a miss makes the next test take it again.
				if rho >= 0 && !rhoStale && worst*rho <= rhoSkip*cfg.tol*normA {
					ok = true
					rhoStale = true
				} else if rho < 0 || worst*rho <= 10*cfg.tol*normA {
					rhoStale = false
					v := col(j + 1)
					vo.mulVec(a, scratch, v)
					vo.axpy(-sigma, v, scratch)
					rho = vo.norm(scratch)
					out.residualProducts++
					ok = worst*rho <= cfg.tol*normA
				}
			}
			if hook != nil && !ok && looseOK && m >= nev+1 && !loose {
				lam := make([]float64, nev+1)
				for t := range lam {
					lam[t] = sigma + 1/theta[t]
				}
				if s, re := hook(lam); re {
					finish(m, nev+1)
					out.reshift = s
					return out
				}
				loose = true // ask once per run: the estimates only tighten afterwards
			}
			if !ok {
				continue
			}
			finish(m, nev)
			out.converged = 0
			for _, r := range out.residuals {
				if r <= cfg.tol*normA {
					out.converged++
				}
			}
			if out.converged == nev {
				return out
			}
			worstTrue := 0.0
			for _, r := range out.residuals {
				worstTrue = max(worstTrue, r)
			}
			if worstTrue < stallGain*stallBest {
				stallBest, stallCount = worstTrue, 0
			} else if stallCount++; stallCount >= stallChecks {
				out.stalled = true
				return out
			}
		}
		// Thick restart: keep the top `keep` Ritz vectors, append the residual vector.
		eig(ncv)
		keep := min(nev+(ncv-nev)/2, ncv-1)
		nw := max(1, cfg.workers)
		if len(l.rtmp) < nw*keep*vecChunk {
			l.rtmp = make([]float64, nw*keep*vecChunk)
		}
		_ = parallel.Chunks(ctx, n, vecChunk, cfg.workers, func(_ context.Context, wk, _, r0, r1 int) error {
			w := r1 - r0
			tmp := l.rtmp[wk*keep*vecChunk : (wk+1)*keep*vecChunk]
			clear(tmp)
			for q := 0; q < ncv; q++ {
				vq := V[q*n+r0 : q*n+r1]
				for t := 0; t < keep; t++ {
					axpy(hw[q*ncv+t], vq, tmp[t*w:t*w+w])
				}
			}
			for t := 0; t < keep; t++ {
				copy(V[t*n+r0:t*n+r1], tmp[t*w:t*w+w])
			}
			return nil
		})
		if err := ctx.Err(); err != nil {
			out.err = err
			return out
		}
		copy(col(keep), col(ncv))
		clear(H)
		for t := 0; t < keep; t++ {
			H[t*ncv+t] = theta[t]
			s := beta * hw[(ncv-1)*ncv+t]
			H[t*ncv+keep], H[keep*ncv+t] = s, s
		}
		j = keep
		out.restarts++
	}
}
