package engine

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"glle/parallel"
	"glle/sparse"
)

// sparseEmbed holds the sparse path's reusable state: M's pattern (it depends only on the kNN
// graph), the ordering and symbolic analysis inside the shift-invert operator, and the
// eigensolver with its adapted shift. A generation only refills M's values and refactors.
type sparseEmbed struct {
	m   *Model
	pat *sparse.MPattern
	// The LU path (weights summing to one, luPath): B's pattern, the operator M^+ over B's LU
	// factor and its Lanczos process. nil on the Cholesky path.
	cholesky bool // SolverSparseCholesky: never the LU path
	bp       *sparse.BPattern
	lu       *sparse.GramLU
	lz       *sparse.Lanczos
	op       *sparse.ShiftInvert
	es       *sparse.Eigensolver
	ones     [][]float64
	// warm holds the warm-start vectors in the internal order, reused by every generation.
	warm [][]float64
	// vecBuf receives the eigenvectors (internal order) of every solve before they are mapped
	// out, so that generations reuse its memory.
	vecBuf [][]float64
	// baseShift is the shift the base fit's eigensolve adapted to; generations start there, so
	// every generation is a function of its weights alone (not of earlier generations).
	baseShift float64
	// pend is the analysis running on its own goroutine (see start), nil once solve has taken
	// its result; patTime is the pattern's build time not yet reported (part of "assemble").
	pend    *pendingAnalysis
	patTime time.Duration
}

// pendingAnalysis is an ordering and symbolic analysis running on its own goroutine: op and
// err are set, and mem when the memory check ran, before done is closed.
type pendingAnalysis struct {
	done   chan struct{}
	help   chan struct{} // closed when the fit waits: the analysis may then use a second core
	cancel context.CancelFunc
	op     *sparse.ShiftInvert // the Cholesky path's operator
	lu     *sparse.GramLU      // the LU path's operator
	mem    *MemoryEstimate
	err    error
	panic  parallel.PanicBox // a panic of the analysis goroutine, raised again by wait
}

// start builds M's pattern, which depends only on the kNN graph, and starts the fill-reducing
// ordering and the symbolic analysis of it on their own goroutine, so that they run beside
// the weight stages: the analysis is sequential (at n = 200k about 0.7 s on one core, the
// longest serial part of a fit), and the weight stages leave it a core until it is done
// (state.forWeights). solve waits for it; stop cancels it.
func (s *sparseEmbed) start(ctx context.Context, prog func(Progress)) error {
	prog(Progress{Stage: "pattern"})
	nc := 0
	if s.luPath() {
		if err := s.bPattern(ctx); err != nil {
			return err
		}
		nc = s.bp.Components()
	} else {
		if err := s.pattern(ctx); err != nil {
			return err
		}
		nc = s.pat.Components()
	}
	if nc > 1 {
		return disconnectedError(s.m.K, nc)
	}
	prog(Progress{Stage: "pattern", Final: true})
	s.launch(ctx, s.luPath())
	return nil
}

// luFailHook, when set (tests), replaces a successful LU eigensolve's nil error, so that the
// fallback to M's Cholesky factor can be exercised.
var luFailHook func() error

// cholFailHook, when set (tests only), replaces a successful Cholesky-path eigensolve's result
// with its error, to exercise the dense fallback of small problems.
var cholFailHook func() error

// luPath reports whether the embedding factors B = I - W (GramLU) rather than M - sigma I:
// for the methods whose weights sum to one, where B has the constant vector as its only null
// vector (M's Cholesky factor stays the fallback).
func (s *sparseEmbed) luPath() bool {
	if s.cholesky {
		return false
	}
	switch s.m.Method {
	case LLE, EM, Direct:
		return true
	}
	return false
}

// bPattern builds B's pattern, timed into patTime.
func (s *sparseEmbed) bPattern(ctx context.Context) error {
	t0 := time.Now()
	m := s.m
	bp, err := sparse.NewBPattern(ctx, m.N, m.K, m.Neighbors, m.st.workers)
	if err != nil {
		return err
	}
	s.bp = bp
	s.patTime += time.Since(t0)
	return nil
}

// pattern builds M's pattern, timed into patTime.
func (s *sparseEmbed) pattern(ctx context.Context) error {
	m := s.m
	t0 := time.Now()
	// Breadth-first relabelling: the sparse stages touch memory locally whatever the input
	// order (vectors are mapped in and out in solve).
	p, err := sparse.NewMPatternLocal(ctx, m.N, m.K, m.Neighbors, m.st.workers)
	if err != nil {
		return err
	}
	s.pat = p
	s.patTime += time.Since(t0)
	return nil
}

// launch starts the analysis of B's pattern (lu) or M's on its own goroutine.
func (s *sparseEmbed) launch(ctx context.Context, lu bool) {
	m, p, bp := s.m, s.pat, s.bp
	actx, cancel := context.WithCancel(ctx)
	a := &pendingAnalysis{done: make(chan struct{}), help: make(chan struct{}), cancel: cancel}
	s.pend = a
	// The memory check with the exact nnz(L) runs inside the analysis, before the factor's
	// storage is allocated; it reads only what the fit fixed before the weights.
	var nnzM int64
	if lu {
		nnzM = int64(bp.NNZ()) // B's pattern takes M's place
	} else {
		nnzM = int64(p.NNZ())
	}
	check, limit := m.st.memCheck, m.st.memLimit
	// After B needed pivoting, the LU path's structures stay (generations try it again, as
	// each generation's B may factor): the Cholesky path's estimate counts them.
	var retained int64
	if pm := m.Report.Memory; !lu && s.lu != nil && pm != nil && pm.Factorization == "lu" {
		// What the LU path's eigensolve stage holds: the ordering's adjacency (4 bytes an
		// entry) was freed after its analysis, as estimateMemory counts it.
		retained = pm.M + pm.Symbolic - 4*pm.NNZM + pm.L + pm.Krylov
	}
	n, d, k, dim, meth := m.N, m.D, m.K, m.Dim, m.Method
	opts := sparse.SymbolicOptions{Workers: m.st.workers, Symmetric: true,
		CheckFactor: func(nnzL int64) error {
			if !check {
				return nil
			}
			if lu {
				nnzL *= 2 // the panels of L and of U
			}
			sv := SolverSparse // the LU of B
			if !lu {
				sv = SolverSparseCholesky // M's Cholesky factor (also an LU's fallback)
			}
			e := estimateMemory(n, d, k, dim, meth, sv, nnzM, nnzL)
			e.retain(retained)
			a.mem = &e
			return checkMemory(e, limit)
		}}
	if m.st.workers > 1 {
		opts.Helper = a.help
	}
	go func() {
		defer close(a.done)
		defer func() { a.panic.Record(recover()) }() // raised again by wait
		if lu {
			a.lu, a.err = sparse.NewGramLU(actx, bp, opts)
		} else {
			a.op, a.err = sparse.NewShiftInvertPattern(actx, p, opts)
		}
	}()
}

// wait returns the started analysis's operator (Cholesky or LU path), recording its memory
// estimate in the fit's report.
func (s *sparseEmbed) wait() (*sparse.ShiftInvert, *sparse.GramLU, error) {
	a := s.pend
	close(a.help) // the fit has nothing else to do: the analysis may use this core too
	<-a.done
	a.cancel()
	s.pend = nil
	a.panic.Repanic()
	if a.mem != nil {
		s.m.Report.Memory = a.mem
	}
	return a.op, a.lu, a.err
}

// stop cancels a started analysis that nobody will wait for and waits until its goroutine
// has ended (Fit's error paths).
func (s *sparseEmbed) stop() {
	if a := s.pend; a != nil {
		a.cancel()
		<-a.done
		s.pend = nil
		a.panic.Repanic() // a bug in the analysis is not hidden behind the fit's error
	}
}

func newSparseEmbed(m *Model, s Solver) *sparseEmbed {
	return &sparseEmbed{m: m, cholesky: s == SolverSparseCholesky}
}

// sparseTol is the eigensolver's residual tolerance: ||M u - lambda u|| <= 1e-10 ||M||_inf.
const sparseTol = 1e-10

// denseFallbackN is the largest n for which an unconverged sparse eigensolve is retried with
// the dense solver.
const denseFallbackN = 3000

// solve computes the nev smallest eigenpairs of M = (I - W)^T (I - W) (Eq. (39)) for weights w
// with Lanczos: over the LU factor of B = I - W at shift 0 (GramLU) when the weights sum to one
// (luPath), else, or when B needs pivoting, over a sparse Cholesky factor of M - sigma I.
// The eigenvectors (n x nev, row-major) are written into dst when it has length n*nev, else
// into a new slice; dst is only written once the solve has succeeded.
func (s *sparseEmbed) solve(ctx context.Context, dst, w []float64, nev int, deflate bool, warm []float64, wp int, prog func(Progress), rep *Report) ([]float64, []float64, EigenReport, error) {
	m := s.m
	n, k := m.N, m.K
	er := EigenReport{Solver: "sparse", Deflated: deflate}
	lu := s.luPath() && deflate
	if err := s.assemble(ctx, w, lu, prog, rep); err != nil {
		return nil, nil, er, err
	}
	if s.ones == nil {
		one := make([]float64, n)
		for i := range one {
			one[i] = 1
		}
		s.ones = [][]float64{one}
	}
	opts := sparse.EigOptions{NEV: nev, Tol: sparseTol, Workers: m.st.workers}
	if deflate {
		opts.Deflate = s.ones
	}
	for len(s.vecBuf) < nev {
		s.vecBuf = append(s.vecBuf, make([]float64, n))
	}
	opts.Vectors = s.vecBuf[:nev] // read out by fromInternal below
	toInternal, fromInternal := s.maps(lu)
	if warm != nil {
		for len(s.warm) < wp {
			s.warm = append(s.warm, make([]float64, n))
		}
		toInternal(s.warm[:wp], warm)
		opts.Start = s.warm[:wp]
	}
	var (
		res, luRes sparse.EigResult // luRes: a failed LU attempt, counted in the report too
		err        error
		sym        *sparse.Symbolic
	)
	if lu {
		if s.lu == nil {
			if err := s.analysis(ctx, true, prog, rep); err != nil {
				return nil, nil, er, err
			}
		}
		s.lu.SetContext(ctx)
		if s.lz == nil {
			s.lz = sparse.NewLanczos(n)
		}
		prog(Progress{Stage: "eigensolve"})
		res, err = s.lz.SolveAt(ctx, s.bp, s.lu, 0, opts)
		if err == nil && luFailHook != nil {
			err = luFailHook()
		}
		sym = s.lu.Symbolic()
		er.Factorization = "lu"
		er.NNZL = 2 * sym.NNZ()
		er.Flops = 2 * sym.Flops()
		er.NNZB = int64(s.bp.NNZ())
		rep.Stages = append(rep.Stages,
			StageTime{Name: "factor", Seconds: res.FactorTime.Seconds()},
			StageTime{Name: "eigensolve", Seconds: (res.TotalTime - res.FactorTime).Seconds()})
		var pe *sparse.PivotError
		var nc *sparse.NotConvergedError
		switch {
		case err == nil:
		case ctx.Err() != nil:
			return nil, nil, er, ctx.Err()
		case errors.As(err, &pe) || errors.As(err, &nc):
			// B needs pivoting, or the operator was too inaccurate to converge: M's Cholesky
			// factor decides.
			er.LUFallback = err.Error()
			lu, luRes = false, res
			// The LU attempt's stage closes here: the Cholesky attempt assembles M and
			// analyses its pattern first, then opens its own.
			prog(Progress{Stage: "eigensolve", Final: true})
		default:
			return nil, nil, er, fmt.Errorf("eigensolver: %w", err)
		}
	}
	if !lu {
		if er.LUFallback != "" {
			// M and its pattern were not needed so far.
			if err := s.assemble(ctx, w, false, prog, rep); err != nil {
				return nil, nil, er, err
			}
			toInternal, fromInternal = s.maps(false)
			if warm != nil {
				toInternal(s.warm[:wp], warm)
			}
		}
		if s.op == nil {
			if err := s.analysis(ctx, false, prog, rep); err != nil {
				return nil, nil, er, err
			}
			s.es = sparse.NewEigensolver(s.pat.Matrix(), s.op)
		}
		s.op.SetContext(ctx)
		if warm != nil {
			opts.StartShift = s.baseShift
		}
		prog(Progress{Stage: "eigensolve"})
		res, err = s.es.Smallest(ctx, opts)
		if err == nil && cholFailHook != nil {
			err = cholFailHook()
		}
		sym = s.op.Symbolic()
		er.Factorization = "cholesky"
		er.NNZL = sym.NNZ()
		er.Flops = sym.Flops()
		er.NNZM = int64(s.pat.NNZ())
		rep.Stages = append(rep.Stages,
			StageTime{Name: "factor", Seconds: res.FactorTime.Seconds()},
			StageTime{Name: "eigensolve", Seconds: (res.TotalTime - res.FactorTime).Seconds()})
	}
	// The counts cover both attempts when the LU one fell back (luRes is zero otherwise).
	er.Iterations = luRes.Iterations + res.Iterations
	er.OpApplies = luRes.OpApplies + res.OpApplies
	er.Factorizations = luRes.Factorizations + res.Factorizations
	er.Shifts = append(slices.Clone(luRes.Shifts), res.Shifts...)
	er.Shift = res.Shift
	for _, r := range res.Residuals {
		if res.NormA > 0 {
			er.MaxResidual = math.Max(er.MaxResidual, r/res.NormA)
		}
	}
	prog(Progress{Stage: "eigensolve", Final: true})
	if err != nil {
		if ctx.Err() != nil {
			return nil, nil, er, ctx.Err()
		}
		var nc *sparse.NotConvergedError
		var se *sparse.ShiftError
		if (errors.As(err, &nc) || errors.As(err, &se)) && n <= denseFallbackN {
			// Weights drawn with huge variances (the paper modes) can leave M without a usable
			// spectral gap; small problems fall back to the dense solver, which ends in a full
			// eigendecomposition if it must.
			vecs, vals, der, derr := denseSmallest(ctx, n, k, m.Neighbors, w, nev, deflate, warm, wp)
			der.NNZM = er.NNZM
			der.DenseFallback = err.Error()
			return vecs, vals, der, derr
		}
		// Typed errors (a library user trial: a generation at a = 1e300 failed with an untyped
		// error, and the binary exited 1 as for an internal failure): the geometry of the
		// fit, or the covariance scale the caller chose.
		if warm == nil { // the fit: no covariance scale is involved
			return nil, nil, er, &DegenerateError{Kind: "no-spectral-gap", Example: -1,
				Msg: fmt.Sprintf("eigensolver: %v (M has no usable spectral gap for the sparse solver: try the dense solver, -solver dense / Settings.Solver = SolverDense, for n <= %d, or a larger k)", err, denseMaxN)}
		}
		hint, fitDegenerate := generationHint(m.Eigenvalues, k, m.D)
		msg := fmt.Sprintf("eigensolver: %v (%s)", err, hint)
		if fitDegenerate {
			return nil, nil, er, &DegenerateError{Kind: "no-spectral-gap", Example: -1, Msg: msg}
		}
		return nil, nil, er, &InputError{Msg: msg}
	}
	if warm == nil && er.Factorization == "cholesky" {
		s.baseShift = res.Shift
	}
	vecs := dst
	if len(vecs) != n*nev {
		vecs = make([]float64, n*nev)
	}
	fromInternal(vecs, res.Vectors)
	return vecs, append([]float64(nil), res.Values...), er, nil
}

// generationHint is the advice of a generation's failed eigensolve. When the fit's own
// eigenvalues (vals) are not positive, M was already singular beyond the embedding to working
// accuracy (e.g. k = 5 on the 3-D Swiss roll: eigenvalues near -3e-16, trustworthiness 0.90),
// and no covariance scale helps: the fix is a larger k.
// It reports whether the fit itself was degenerate (the hint is then not the scale's).
func generationHint(vals []float64, k, d int) (string, bool) {
	for _, v := range vals {
		if !(v > 0) {
			return fmt.Sprintf("the fit's own eigenvalues %s are not positive: M = (I - W)^T (I - W) has more null vectors than the embedding uses, to working accuracy, so neither the base embedding nor its generations are determined by the data; k = %d is likely too small for %d-dimensional data: use a larger k", fmtVals(vals), k, d), true
		}
	}
	return "try a smaller covariance scale", false
}

// fmtVals writes values as "[v1 v2 ...]" with 3 significant digits.
func fmtVals(vals []float64) string {
	var b strings.Builder
	b.WriteByte('[')
	for i, v := range vals {
		if i > 0 {
			b.WriteByte(' ')
		}
		fmt.Fprintf(&b, "%.3g", v)
	}
	b.WriteByte(']')
	return b.String()
}

// analysis takes the ordering and symbolic analysis of B's pattern (lu) or M's, started beside
// the weight stages (start) or now, and reports its stages.
func (s *sparseEmbed) analysis(ctx context.Context, lu bool, prog func(Progress), rep *Report) error {
	prog(Progress{Stage: "analyze"})
	tw := time.Now()
	if s.pend == nil { // not started beside the weights (one worker, a restored model, a fallback)
		s.launch(ctx, lu)
	}
	op, gl, err := s.wait()
	if err != nil {
		return err
	}
	var sym *sparse.Symbolic
	if lu {
		s.lu, sym = gl, gl.Symbolic()
	} else {
		s.op, sym = op, op.Symbolic()
	}
	// The analysis ran beside the stages since start: its times are background stages,
	// and what the fit waited for it here is the foreground stage "analysis wait".
	ot, st := sym.Times()
	rep.Stages = append(rep.Stages, StageTime{Name: "ordering", Seconds: ot.Seconds(), Background: true},
		StageTime{Name: "symbolic", Seconds: st.Seconds(), Background: true})
	rep.stage("analysis wait", tw)
	prog(Progress{Stage: "analyze", Final: true})
	return nil
}

// maps returns the maps between the row-major point-order n x p matrices and p internal-order
// columns, for the LU path's pattern (lu) or M's; both use the same breadth-first relabelling.
func (s *sparseEmbed) maps(lu bool) (toInternal func(dst [][]float64, x []float64), fromInternal func(dst []float64, x [][]float64)) {
	if lu {
		return s.bp.ToInternalCols, s.bp.FromInternalCols
	}
	return s.pat.ToInternalCols, s.pat.FromInternalCols
}

// assemble builds B's pattern (lu) or M's if needed and fills its values for w, reporting
// the stage "assemble" (with the pattern's build time when start built it earlier).
func (s *sparseEmbed) assemble(ctx context.Context, w []float64, lu bool, prog func(Progress), rep *Report) error {
	m := s.m
	t0 := time.Now()
	// A pattern built earlier (by start, beside the fit) is part of this stage; one built
	// below is inside time.Since(t0) already (it was counted twice, so the first generation
	// of a restored model reported more stage time than its wall time).
	earlier := s.patTime
	prog(Progress{Stage: "assemble"})
	if lu {
		if s.bp == nil {
			if err := s.bPattern(ctx); err != nil {
				return err
			}
		}
		if err := s.bp.Fill(ctx, w, m.st.fgWorkers()); err != nil {
			return fillError(ctx, err, "B = I - W")
		}
	} else {
		if s.pat == nil {
			if err := s.pattern(ctx); err != nil {
				return err
			}
		}
		if err := s.pat.Fill(ctx, w, m.st.fgWorkers()); err != nil {
			return fillError(ctx, err, "M")
		}
		if m.Method.Generative() {
			// Generations refill M: precompute where every contribution lands (once).
			if err := s.pat.PrepareRefill(ctx, m.st.fgWorkers()); err != nil {
				return err
			}
		}
	}
	rep.Stages = append(rep.Stages, StageTime{Name: "assemble", Seconds: (time.Since(t0) + earlier).Seconds()})
	s.patTime = 0
	prog(Progress{Stage: "assemble", Final: true})
	return nil
}

// fillError is the error of a failed assembly of the matrix what (non-finite weights, or
// values overflowing).
func fillError(ctx context.Context, err error, what string) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return &DegenerateError{Kind: "nonfinite", Count: 1, Example: -1,
		Msg: fmt.Sprintf("assembling %s failed: %v (weights too large)", what, err)}
}
