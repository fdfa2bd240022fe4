package sparse

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"glle/parallel"
)

// Operator is a shift-invert operator for a symmetric matrix A: after SetShift(sigma) it applies
// dst = (A - sigma I)^{-1} x. The operator owns its factorization; SetShift refactors (reusing
// whatever depends only on the sparsity pattern) and returns an error when A - sigma I cannot
// be factored (for a Cholesky operator: not positive definite). Apply must not be called before
// a successful SetShift; dst and x have length N and do not overlap.
type Operator interface {
	N() int
	SetShift(sigma float64) error
	Apply(dst, x []float64)
}

// SymMatrix is the symmetric matrix A whose eigenpairs are wanted. The eigensolver uses it for
// true residuals ||A u - lambda u|| and for the norm estimate NormInf (max absolute row sum,
// an upper bound of ||A||_2). CSRMatrix and *MPattern implement it.
type SymMatrix interface {
	N() int
	MulVec(dst, x []float64)
	NormInf() float64
}

// EigOptions configures the smallest-eigenpair solvers. The zero value asks for one eigenpair
// with the defaults below.
type EigOptions struct {
	// NEV is the number of wanted eigenpairs (orthogonal to Deflate). Default 1.
	NEV int
	// Deflate holds known exact eigenvectors to project out (e.g. the constant vector, M's null
	// vector when the weights sum to one). They need not be normalised or orthogonal but must be
	// linearly independent; the solver orthonormalises a copy. The result holds only eigenpairs
	// orthogonal to their span. Default none.
	Deflate [][]float64
	// Start holds warm-start vectors (e.g. the previous embedding's eigenvectors): the Krylov
	// process starts from their normalised sum, projected off Deflate. Default: a random start
	// vector drawn from Seed.
	Start [][]float64
	// Tol is the convergence tolerance. An eigenpair (lambda, u), ||u|| = 1, is accepted when
	// the true residual ||A u - lambda u|| <= Tol * ||A||_inf and the Lanczos residual estimate
	// in the shift-inverted space is <= sqrt(Tol) * nu (nu = 1/(lambda - sigma); the
	// ARPACK/Spectra criterion at the looser level, which keeps the vectors resolving clusters
	// relative to the shifted gaps). The iteration stops as soon as the exact residual norms,
	// obtained from the Lanczos relation with one product with A, pass. Default 1e-10; values
	// below 1e-14 are raised to 1e-14 (the round-off level of A u).
	Tol float64
	// MaxOps bounds the number of operator applications (linear solves) over all shifts.
	// Default 500.
	MaxOps int
	// NCV is the Krylov basis size (number of Lanczos vectors kept before a thick restart).
	// Default max(2 NEV + 10, 20), capped at N - len(Deflate). At least NEV + 2.
	NCV int
	// Seed seeds the random start vector (and the random vectors that continue the process
	// after an invariant subspace is found). Default 0, a fixed seed.
	Seed uint64
	// Shift fixes the shift sigma; 0 selects it automatically (see ShiftScale). A fixed shift is
	// never adapted, but still retried once more negative if the factorization fails: a
	// negative shift at 1000 times its value, a positive one at the automatic start
	// -ShiftScale ||A||_inf (for a positive semidefinite A, a positive shift above the smallest
	// eigenvalue makes A - sigma I indefinite, and a larger one cannot mend that).
	Shift float64
	// Workers is the number of goroutines of the long-vector operations (orthogonalisation,
	// Ritz vectors, residuals); <= 0 means GOMAXPROCS. The results do not depend on it.
	Workers int
	// StartShift, when negative and Shift is 0, starts the automatic rule at this shift instead
	// of -ShiftScale ||A||_inf if it is closer to zero (e.g. the shift the base fit adapted to,
	// for a generation of similar spectrum). The result is then a function of the matrix and the
	// options only: the solver keeps no state between calls that changes an answer.
	// Default 0 (unused).
	StartShift float64

	// Vectors, when set, holds buffers (length N each) for the eigenvectors: the result's
	// Vectors[i] is Vectors[i] for i < len(Vectors), so that a caller solving repeatedly
	// reuses their memory. They may be the Start vectors. Default nil: fresh vectors.
	Vectors [][]float64

	boundOnly bool // tests: stop on the residual bound only (see Tol)
	// tests: the automatic rule starts at -startScale ||A||_inf (0: ShiftScale). With
	// ShiftFloor = ShiftScale a re-shift never moves towards zero from the default start
	// (its target is at most -ShiftFloor ||A||_inf), so only a larger start reaches it.
	startScale float64
}

// ShiftScale, ShiftFloor and MaxReshifts parameterise the automatic shift rule of
// Eigensolver.Smallest (used when EigOptions.Shift is 0).
//
// The eigenvalues wanted are the smallest of a positive semidefinite M whose nontrivial
// eigenvalues are tiny (~1e-9 at n = 10k, 1e-13..1e-16 at n = 200k..1M on the Swiss roll).
// Shift-invert Lanczos converges at the rate set by the ratio
// (lambda_{nev+1} - sigma) / (lambda_nev - sigma); a shift far below the wanted eigenvalues
// (e.g. -1e-5) makes this ratio ~1 and needs hundreds of solves, a shift at the scale of the
// wanted eigenvalues gives the ratio lambda_{nev+1}/lambda_nev and ~20 solves. So:
//  1. start with sigma0 = -ShiftScale * ||A||_inf (ShiftScale = 1e-14): below the round-off
//     level of the computed A's eigenvalues (an entrywise perturbation of ~30 entries per row
//     moves them by ~1e-15 ||A||), so A - sigma I is positive definite, yet at or below the
//     scale of the wanted eigenvalues up to n = 1M (measured there: one factorization instead
//     of three with a start at 1e-10);
//  2. once the wanted Ritz pairs have loosely converged (Lanczos residual estimate <= 0.1
//     theta, with at least NEV+1 Krylov vectors), the Ritz values give estimates
//     lambda_i = sigma + 1/theta_i, which only overestimate the true eigenvalues. If the
//     shift dominates the wanted eigenvalues (|sigma| > lambda_NEV estimate), re-shift to
//     sigma = -max(lambda_1 estimate / 10, ShiftFloor * ||A||_inf) (ShiftFloor = 1e-14, above
//     the round-off level of the computed A's eigenvalues) and warm-start the new Lanczos
//     process from the current Ritz vectors; at most MaxReshifts = 2 times;
//  3. a call with EigOptions.StartShift (e.g. the base fit's final shift, for a generation of
//     similar spectrum) begins there instead of sigma0 when it is closer to zero;
//  4. if a factorization fails (not positive definite), retry once with a shift 1000 times
//     more negative, or at -ShiftScale ||A||_inf when the failed shift was not negative (an
//     EigOptions.Shift >= 0); for an adaptive re-shift: fall back to the previous, working
//     shift and stop adapting. A second failure returns a *ShiftError.
//  5. if a run stalls (its true residuals stop falling while the Lanczos estimates have
//     converged: the factorization of A - sigma I is too inaccurate for the tolerance, as when
//     sigma is within round-off of a deflated null eigenvalue) and the smallest Ritz value
//     exceeds StallMargin |sigma|, move the shift away from zero, to -lambda_1 estimate / 10,
//     and continue from the current Ritz vectors; once per call.
const (
	ShiftScale  = 1e-14
	ShiftFloor  = 1e-14
	MaxReshifts = 2
	StallMargin = 100
)

// EigResult holds the eigenpairs found by the smallest-eigenpair solvers, in ascending order.
type EigResult struct {
	Values    []float64   // eigenvalues, ascending
	Vectors   [][]float64 // unit eigenvectors, Vectors[i] belongs to Values[i], orthogonal to Deflate
	Residuals []float64   // true residuals ||A u_i - lambda_i u_i||
	NormA     float64     // ||A||_inf, the scale of the residual test
	Shift     float64     // the shift of the final Lanczos run
	Shifts    []float64   // every shift factored, in order (including failed ones)

	Iterations     int // thick restarts over all shifts
	OpApplies      int // operator applications (linear solves)
	Factorizations int // calls of Operator.SetShift
	// ResidualProducts counts the products with A that the convergence test takes for exact
	// residual norms (a few per run; each costs about a tenth of an operator application).
	ResidualProducts int

	FactorTime time.Duration // time in SetShift
	ApplyTime  time.Duration // time in Apply
	TotalTime  time.Duration
}

// NotConvergedError reports that MaxOps operator applications did not produce NEV eigenpairs
// satisfying the tolerance, or that the last run stalled before (Stalled). The EigResult returned with it holds the current approximations
// (not eigenpairs to rely on).
type NotConvergedError struct {
	NEV, Converged int     // wanted and converged eigenpairs
	OpApplies      int     // operator applications used
	Iterations     int     // thick restarts
	Residual       float64 // worst relative true residual ||A u - lambda u|| / ||A|| of the wanted pairs
	Shift          float64 // shift of the last run
	// Stalled reports that the last run stopped early because its true residuals had stopped
	// falling while the Lanczos estimates had converged (the operator is too inaccurate at
	// this shift for the tolerance), rather than because MaxOps ran out.
	Stalled bool
}

func (e *NotConvergedError) Error() string {
	why := ""
	if e.Stalled {
		why = " (the residuals stalled at the operator's accuracy)"
	}
	return fmt.Sprintf("sparse: eigensolver did not converge: %d of %d eigenpairs after %d operator applications (%d restarts), worst relative residual %.3g, shift %.3g%s",
		e.Converged, e.NEV, e.OpApplies, e.Iterations, e.Residual, e.Shift, why)
}

// ShiftError reports that A - sigma I could not be factored at the chosen shift nor at the
// safer retry shift.
type ShiftError struct {
	Shift, Retry  float64 // the shift tried first and the retry shift
	Err, RetryErr error   // the factorization errors
}

func (e *ShiftError) Error() string {
	return fmt.Sprintf("sparse: shift-invert factorization failed at shift %.3g (%v) and at retry shift %.3g (%v)", e.Shift, e.Err, e.Retry, e.RetryErr)
}

// Unwrap returns both factorization errors.
func (e *ShiftError) Unwrap() []error { return []error{e.Err, e.RetryErr} }

// Eigensolver computes the smallest eigenpairs of a symmetric positive semidefinite matrix by
// shift-invert Lanczos. It keeps the operator (and so the symbolic factorization) and the
// Krylov basis between calls: after the matrix values change (e.g. MPattern.Fill of a new GLLE
// generation) call Smallest again, warm-started from the previous vectors.
type Eigensolver struct {
	a  SymMatrix
	op Operator
	lz *Lanczos
}

// NewEigensolver returns a solver for the matrix a through the shift-invert operator op (which
// must invert a - sigma I for the same a).
func NewEigensolver(a SymMatrix, op Operator) *Eigensolver {
	if a == nil || op == nil {
		panic("sparse: NewEigensolver: nil matrix or operator")
	}
	if a.N() != op.N() {
		panic("sparse: NewEigensolver: matrix and operator sizes differ")
	}
	return &Eigensolver{a: a, op: op, lz: NewLanczos(a.N())}
}

// Smallest computes the opts.NEV smallest eigenpairs of the matrix orthogonal to opts.Deflate:
// for M = (I - W)^T (I - W) of paper Eq. (39) with the constant vector deflated, the
// eigenproblem M Y = Y (Lambda / n) of Eq. (41) whose eigenvectors are the embedding. It
// chooses the shift by the rule documented at ShiftScale unless opts.Shift is set. The
// eigenvalues are back-transformed from the Ritz values nu of (A - sigma I)^{-1} as
// lambda = sigma + 1/nu. Errors:
// *NotConvergedError (result holds the unconverged approximations), *ShiftError, context
// errors, and plain errors for invalid options.
func (e *Eigensolver) Smallest(ctx context.Context, opts EigOptions) (res EigResult, err error) {
	t0 := time.Now()
	defer func() { res.TotalTime = time.Since(t0) }() // on every return, errors included
	n := e.a.N()
	cfg, err := resolveOptionsCached(n, opts, &e.lz.dc)
	if err != nil {
		return res, err
	}
	if c, ok := e.op.(interface{ SetContext(context.Context) }); ok {
		c.SetContext(ctx)
	}
	res.NormA = e.a.NormInf()
	normA := res.NormA
	if normA == 0 || math.IsNaN(normA) || math.IsInf(normA, 0) {
		if normA != 0 {
			return res, fmt.Errorf("sparse: Smallest: %w", ErrNonFinite)
		}
		normA = 1 // the zero matrix: any shift works
	}

	setShift := func(sigma float64) error {
		t := time.Now()
		err := e.op.SetShift(sigma)
		res.FactorTime += time.Since(t)
		res.Factorizations++
		res.Shifts = append(res.Shifts, sigma)
		return err
	}
	isCtx := func(err error) bool {
		return errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
	}
	// moveShift factors at the shift to and reports true; when that factorization fails, it
	// factors at the current, working shift again and reports false. The errors are the
	// context's and a *ShiftError when the working shift fails too.
	var sigma float64
	moveShift := func(to float64) (bool, error) {
		err := setShift(to)
		if err == nil {
			sigma = to
			return true, nil
		}
		if isCtx(err) {
			return false, err
		}
		if rerr := setShift(sigma); rerr != nil {
			return false, &ShiftError{Shift: to, Retry: sigma, Err: err, RetryErr: rerr}
		}
		return false, nil
	}

	auto := opts.Shift == 0
	sigma = opts.Shift
	if auto {
		scale := ShiftScale
		if opts.startScale > 0 {
			scale = opts.startScale
		}
		sigma = -scale * normA
		if opts.StartShift < 0 && opts.StartShift > sigma {
			sigma = opts.StartShift // e.g. the base fit's adapted shift, for a generation
		}
	}
	if err := setShift(sigma); err != nil {
		if isCtx(err) {
			return res, err
		}
		// Retry more negative. A - sigma I is positive definite for every sigma below the
		// smallest eigenvalue of the positive semidefinite A, so a failed sigma >= 0 (a fixed
		// shift above that eigenvalue: A - sigma I indefinite) is retried below zero, at the
		// automatic start, not at 1000 sigma, which would move it further into the spectrum.
		retry := sigma * 1000
		if sigma >= 0 {
			retry = -ShiftScale * normA
		}
		if rerr := setShift(retry); rerr != nil {
			return res, &ShiftError{Shift: sigma, Retry: retry, Err: err, RetryErr: rerr}
		}
		sigma, auto = retry, false
	}

	start := cfg.start
	reshifts := 0
	movedAway := false // the stall rule (StallMargin) moved the shift away from zero
	for {
		if err := ctx.Err(); err != nil {
			return res, err
		}
		var hook reshiftHook
		if auto && reshifts < MaxReshifts {
			hook = func(lam []float64) (float64, bool) {
				// lam: Ritz estimates of the NEV+1 smallest eigenvalues (ascending) at this shift.
				if -sigma <= lam[cfg.nev-1] {
					return 0, false
				}
				s := -max(lam[0]/10, ShiftFloor*normA)
				if s <= sigma*0.9 { // not a real move towards zero: keep the shift
					return 0, false
				}
				return s, true
			}
		}
		run := e.lz.run(ctx, e.a, e.op, sigma, normA, cfg, start, hook)
		res.Iterations += run.restarts
		res.OpApplies += run.ops
		res.ResidualProducts += run.residualProducts
		res.ApplyTime += run.applyTime
		cfg.maxOps -= run.ops
		if run.err != nil {
			fillResult(&res, run, sigma, n)
			return res, run.err
		}
		if run.reshift != 0 && cfg.maxOps < cfg.nev {
			// The run stopped for a re-shift with (almost) the whole budget used: a new run
			// could not take the NEV steps it needs for NEV Ritz pairs (with none left it would
			// return none). Return this run's approximations instead, without re-factoring.
			keepWanted(&run, cfg)
			fillResult(&res, run, sigma, n)
			return res, notConverged(res, cfg, run.converged, normA, sigma, false)
		}
		if run.reshift != 0 {
			reshifts++
			moved, err := moveShift(run.reshift)
			if err != nil {
				return res, err
			}
			if !moved {
				auto = false // stay at the previous, working shift and stop adapting
			}
			start = run.vectors // warm start from the current Ritz vectors
			continue
		}
		if run.stalled && auto && !movedAway && cfg.maxOps >= cfg.nev && run.values[0] > StallMargin*(-sigma) {
			// The shift sits far closer to zero than the wanted eigenvalues, and the run
			// stalled at the accuracy of the factorization there: move it away from zero,
			// to the target of the re-shift rule, and continue from the current Ritz vectors.
			movedAway = true
			moved, err := moveShift(-run.values[0] / 10)
			if err != nil {
				return res, err
			}
			if moved {
				start = run.vectors
				continue
			}
			// Back at the previous shift: report this run's stall below.
		}
		fillResult(&res, run, sigma, n)
		if run.converged < cfg.nev {
			return res, notConverged(res, cfg, run.converged, normA, sigma, run.stalled)
		}
		return res, nil
	}
}

// notConverged returns the *NotConvergedError for the result res of a solve whose last run (at
// shift sigma) converged on `converged` pairs.
func notConverged(res EigResult, cfg eigConfig, converged int, normA, sigma float64, stalled bool) error {
	worst := 0.0
	for _, r := range res.Residuals {
		worst = max(worst, r/normA)
	}
	return &NotConvergedError{NEV: cfg.nev, Converged: converged, OpApplies: res.OpApplies,
		Iterations: res.Iterations, Residual: worst, Shift: sigma, Stalled: stalled}
}

// keepWanted reduces the NEV+1 Ritz pairs of a run stopped for a re-shift to the NEV smallest
// (the first NEV: theta descends, so sigma + 1/theta ascends), their vectors in the caller's
// buffers (cfg.dst) where given, as a run's final pairs are.
func keepWanted(run *lanczosRun, cfg eigConfig) {
	k := min(cfg.nev, len(run.values))
	run.values, run.residuals, run.vectors = run.values[:k], run.residuals[:k], run.vectors[:k]
	for t := range run.vectors {
		if t < len(cfg.dst) {
			copy(cfg.dst[t], run.vectors[t])
			run.vectors[t] = cfg.dst[t]
		}
	}
}

func fillResult(res *EigResult, run lanczosRun, sigma float64, n int) {
	res.Shift = sigma
	res.Values = run.values
	res.Vectors = run.vectors
	res.Residuals = run.residuals
}

// SmallestEigs is the convenience entry: the nev = opts.NEV smallest eigenpairs of the symmetric
// positive semidefinite matrix a (full CSR, both triangles, sorted columns; e.g.
// MPattern.Matrix()), orthogonal to opts.Deflate, by shift-invert Lanczos over the sparse
// Cholesky factorization with the automatic shift rule documented at ShiftScale. It analyses the pattern on
// every call: to reuse the symbolic analysis across GLLE generations keep a ShiftInvert and an
// Eigensolver instead.
func SmallestEigs(ctx context.Context, a CSRMatrix, opts EigOptions) (EigResult, error) {
	op, err := NewShiftInvert(ctx, a)
	if err != nil {
		return EigResult{}, err
	}
	return NewEigensolver(a, op).Smallest(ctx, opts)
}

// eigConfig is EigOptions with defaults applied and the deflation basis orthonormalised.
type eigConfig struct {
	nev, ncv, maxOps int
	workers          int
	tol              float64
	seed             uint64
	defl             [][]float64 // orthonormal
	dst              [][]float64 // EigOptions.Vectors
	start            [][]float64
	boundOnly        bool // tests: stop on the bound ||A - sigma I|| |beta y_m| / theta only
}

// deflCache keeps the last orthonormalised deflation basis with copies of the vectors it came
// from, so that repeated solves with the same Deflate (every GLLE generation) skip the copy and
// the sequential passes: one comparison of the vectors' bits replaces them.
type deflCache struct {
	src, out [][]float64
}

// get returns the cached basis when d holds exactly the vectors it was made from.
func (c *deflCache) get(d [][]float64, workers int) ([][]float64, bool) {
	if c == nil || len(d) == 0 || len(d) != len(c.src) {
		return nil, false
	}
	for i, v := range d {
		if len(v) != len(c.src[i]) || !sameBits(v, c.src[i], workers) {
			return nil, false
		}
	}
	return c.out, true
}

// put records the basis out made from d.
func (c *deflCache) put(d, out [][]float64) {
	if c == nil {
		return
	}
	c.src = c.src[:0]
	for _, v := range d {
		c.src = append(c.src, append([]float64(nil), v...))
	}
	c.out = out
}

// sameBits reports whether x and y hold the same bits, comparing chunks on the workers.
func sameBits(x, y []float64, workers int) bool {
	o := vecOps{workers: workers}
	n := len(x)
	p := o.partials(n, 1)
	o.each(n, func(c, lo, hi int) {
		p[c] = 0
		for i, v := range x[lo:hi] {
			if math.Float64bits(v) != math.Float64bits(y[lo+i]) {
				p[c] = 1
				return
			}
		}
	})
	for _, v := range p {
		if v != 0 {
			return false
		}
	}
	return true
}

func resolveOptions(n int, o EigOptions) (eigConfig, error) { return resolveOptionsCached(n, o, nil) }

// resolveOptionsCached is resolveOptions reusing the deflation basis kept in dc (nil: none).
// It adds the Lanczos size rules (NEV + 3 <= n - len(Deflate), NCV < n - len(Deflate)) to
// resolveCommon.
func resolveOptionsCached(n int, o EigOptions, dc *deflCache) (eigConfig, error) {
	c, err := resolveCommon(n, o, dc)
	if err != nil {
		return c, err
	}
	room := n - len(c.defl)
	if c.nev+3 > room {
		return c, fmt.Errorf("sparse: eigensolver options: NEV = %d too large for n = %d with %d deflated vectors (Lanczos needs NEV + 3 <= n - deflated: use DenseSmallest)", c.nev, n, len(c.defl))
	}
	if c.ncv == 0 {
		c.ncv = max(2*c.nev+10, 20)
	}
	// The basis holds NCV+1 vectors orthogonal to the deflation space, so NCV < room.
	c.ncv = min(c.ncv, room-1)
	if c.ncv < c.nev+2 {
		return c, fmt.Errorf("sparse: eigensolver options: NCV = %d, need at least NEV + 2 = %d (n = %d with %d deflated vectors is too small for Lanczos: use DenseSmallest)", c.ncv, c.nev+2, n, len(c.defl))
	}
	return c, nil
}

// resolveCommon applies the defaults, validates the options and orthonormalises the
// deflation vectors (reusing dc's basis when it holds them).
func resolveCommon(n int, o EigOptions, dc *deflCache) (eigConfig, error) {
	if o.NEV < 0 || o.NCV < 0 || o.MaxOps < 0 || o.Tol < 0 || math.IsNaN(o.Tol) {
		return eigConfig{}, fmt.Errorf("sparse: eigensolver options: negative NEV, NCV, MaxOps or Tol")
	}
	c := eigConfig{nev: o.NEV, ncv: o.NCV, maxOps: o.MaxOps, tol: o.Tol, seed: o.Seed, start: o.Start,
		workers: parallel.Workers(o.Workers), boundOnly: o.boundOnly}
	if c.nev == 0 {
		c.nev = 1
	}
	if c.tol == 0 {
		c.tol = 1e-10
	}
	c.tol = max(c.tol, 1e-14)
	if c.maxOps == 0 {
		c.maxOps = 500
	}
	for _, d := range o.Deflate {
		if len(d) != n {
			return c, fmt.Errorf("sparse: eigensolver options: deflation vector of length %d, want %d", len(d), n)
		}
	}
	cached, hit := dc.get(o.Deflate, c.workers)
	if hit {
		c.defl = cached
	}
	for _, d := range o.Deflate {
		if hit {
			break
		}
		v := make([]float64, n)
		copy(v, d)
		for pass := 0; pass < 2; pass++ {
			for _, q := range c.defl {
				axpy(-dot(q, v), q, v)
			}
		}
		nv := norm(v)
		if !(nv > 1e-8*norm(d)) {
			return c, fmt.Errorf("sparse: eigensolver options: deflation vectors are linearly dependent or zero")
		}
		scal(1/nv, v)
		c.defl = append(c.defl, v)
	}
	if !hit && len(c.defl) > 0 {
		dc.put(o.Deflate, c.defl)
	}
	for _, s := range o.Start {
		if len(s) != n {
			return c, fmt.Errorf("sparse: eigensolver options: start vector of length %d, want %d", len(s), n)
		}
	}
	for _, v := range o.Vectors {
		if len(v) != n {
			return c, fmt.Errorf("sparse: eigensolver options: eigenvector buffer of length %d, want %d", len(v), n)
		}
	}
	c.dst = o.Vectors
	return c, nil
}

// dot returns x . y with four partial sums (a single sum is bound by the addition's latency:
// the reorthogonalisation, which is mostly dot products, took 26 ms per Lanczos step at
// n = 1M and m = 8 that way; BenchmarkOrth).
func dot(x, y []float64) float64 {
	y = y[:len(x)]
	var s0, s1, s2, s3 float64
	i := 0
	for ; i+4 <= len(x); i += 4 {
		s0 += x[i] * y[i]
		s1 += x[i+1] * y[i+1]
		s2 += x[i+2] * y[i+2]
		s3 += x[i+3] * y[i+3]
	}
	for ; i < len(x); i++ {
		s0 += x[i] * y[i]
	}
	return (s0 + s1) + (s2 + s3)
}

func norm(x []float64) float64 {
	// Scaled two-pass free version: the vectors here are O(1), plain sum of squares is safe.
	return math.Sqrt(dot(x, x))
}

func axpy(a float64, x, y []float64) {
	for i, v := range x {
		y[i] += a * v
	}
}

func scal(a float64, x []float64) {
	for i := range x {
		x[i] *= a
	}
}
