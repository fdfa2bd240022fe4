package engine

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"glle/sparse"
)

// sparseEmbed holds the sparse path's reusable state: M's pattern (it depends only on the kNN
// graph), the ordering and symbolic analysis inside the shift-invert operator, and the
// eigensolver with its adapted shift. A generation only refills M's values and refactors.
type sparseEmbed struct {
	m    *Model
	pat  *sparse.MPattern
	op   *sparse.ShiftInvert
	es   *sparse.Eigensolver
	ones [][]float64
	// warm holds the warm-start vectors in the internal order and col a column buffer, reused
	// by every generation.
	warm [][]float64
	col  []float64
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
	op     *sparse.ShiftInvert
	mem    *MemoryEstimate
	err    error
}

// start builds M's pattern, which depends only on the kNN graph, and starts the fill-reducing
// ordering and the symbolic analysis of it on their own goroutine, so that they run beside
// the weight stages: the analysis is sequential (at n = 200k about 0.7 s on one core, the
// longest serial part of a fit), and the weight stages leave it a core until it is done
// (state.forWeights). solve waits for it; stop cancels it.
func (s *sparseEmbed) start(ctx context.Context, prog func(Progress)) error {
	prog(Progress{Stage: "pattern"})
	if err := s.pattern(ctx); err != nil {
		return err
	}
	if nc := s.pat.Components(); nc > 1 {
		return disconnectedError(s.m.K, nc)
	}
	prog(Progress{Stage: "pattern", Final: true})
	s.launch(ctx)
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

// launch starts the analysis of the pattern on its own goroutine.
func (s *sparseEmbed) launch(ctx context.Context) {
	m, p := s.m, s.pat
	actx, cancel := context.WithCancel(ctx)
	a := &pendingAnalysis{done: make(chan struct{}), help: make(chan struct{}), cancel: cancel}
	s.pend = a
	// The memory check with the exact nnz(L) runs inside the analysis, before the factor's
	// storage is allocated; it reads only what the fit fixed before the weights.
	nnzM := int64(p.NNZ())
	check, limit := m.st.memCheck, m.st.memLimit
	n, d, k, dim, meth := m.N, m.D, m.K, m.Dim, m.Method
	opts := sparse.SymbolicOptions{Workers: m.st.workers, Symmetric: true,
		CheckFactor: func(nnzL int64) error {
			if !check {
				return nil
			}
			e := estimateMemory(n, d, k, dim, meth, SolverSparse, nnzM, nnzL)
			a.mem = &e
			return checkMemory(e, limit)
		}}
	if m.st.workers > 1 {
		opts.Helper = a.help
	}
	go func() {
		defer close(a.done)
		a.op, a.err = sparse.NewShiftInvertPattern(actx, p, opts)
	}()
}

// wait returns the started analysis's operator, recording its memory estimate in the fit's
// report.
func (s *sparseEmbed) wait() (*sparse.ShiftInvert, error) {
	a := s.pend
	close(a.help) // the fit has nothing else to do: the analysis may use this core too
	<-a.done
	a.cancel()
	s.pend = nil
	if a.mem != nil {
		s.m.Report.Memory = a.mem
	}
	return a.op, a.err
}

// stop cancels a started analysis that nobody will wait for and waits until its goroutine
// has ended (Fit's error paths).
func (s *sparseEmbed) stop() {
	if s.pend != nil {
		s.pend.cancel()
		<-s.pend.done
		s.pend = nil
	}
}

func newSparseEmbed(m *Model) *sparseEmbed { return &sparseEmbed{m: m} }

// sparseTol is the eigensolver's residual tolerance: ||M u - lambda u|| <= 1e-10 ||M||_inf.
const sparseTol = 1e-10

// denseFallbackN is the largest n for which an unconverged sparse eigensolve is retried with
// the dense solver.
const denseFallbackN = 3000

// solve computes the nev smallest eigenpairs of M = (I - W)^T (I - W) (Eq. (43)) for weights w
// with shift-invert Lanczos over a sparse Cholesky factor.
func (s *sparseEmbed) solve(ctx context.Context, w []float64, nev int, deflate bool, warm []float64, wp int, prog func(Progress), rep *Report) ([]float64, []float64, EigenReport, error) {
	m := s.m
	n, k := m.N, m.K
	er := EigenReport{Solver: "sparse", Deflated: deflate}
	t0 := time.Now()
	prog(Progress{Stage: "assemble"})
	if s.pat == nil {
		if err := s.pattern(ctx); err != nil {
			return nil, nil, er, err
		}
	}
	if err := s.pat.Fill(ctx, w, m.st.fgWorkers()); err != nil {
		if ctx.Err() != nil {
			return nil, nil, er, ctx.Err()
		}
		return nil, nil, er, &DegenerateError{Kind: "nonfinite", Count: 1, Example: -1,
			Msg: fmt.Sprintf("assembling M failed: %v (weights too large: lower the covariance scale)", err)}
	}
	if m.Method.Generative() {
		// Generations refill M: precompute where every contribution lands (once).
		if err := s.pat.PrepareRefill(ctx, m.st.fgWorkers()); err != nil {
			return nil, nil, er, err
		}
	}
	// The pattern's build time, spent earlier when start built it, is part of the stage.
	rep.Stages = append(rep.Stages, StageTime{Name: "assemble", Seconds: (time.Since(t0) + s.patTime).Seconds()})
	s.patTime = 0
	prog(Progress{Stage: "assemble", Final: true})
	if s.op == nil {
		prog(Progress{Stage: "analyze"})
		tw := time.Now()
		if s.pend == nil { // not started beside the weights (one worker, a restored model)
			s.launch(ctx)
		}
		op, err := s.wait()
		if err != nil {
			return nil, nil, er, err
		}
		s.op = op
		s.es = sparse.NewEigensolver(s.pat.Matrix(), op)
		one := make([]float64, n)
		for i := range one {
			one[i] = 1
		}
		s.ones = [][]float64{one}
		// The analysis ran beside the stages since start: its times are background stages,
		// and what the fit waited for it here is the foreground stage "analysis wait".
		ot, st := op.Symbolic().Times()
		rep.Stages = append(rep.Stages, StageTime{Name: "ordering", Seconds: ot.Seconds(), Background: true},
			StageTime{Name: "symbolic", Seconds: st.Seconds(), Background: true})
		rep.stage("analysis wait", tw)
		prog(Progress{Stage: "analyze", Final: true})
	}
	s.op.SetContext(ctx)
	opts := sparse.EigOptions{NEV: nev, Tol: sparseTol, Workers: m.st.workers}
	if warm != nil {
		opts.StartShift = s.baseShift
	}
	if deflate {
		opts.Deflate = s.ones
	}
	if len(s.col) != n {
		s.col = make([]float64, n)
	}
	col := s.col
	if warm != nil {
		for len(s.warm) < wp {
			s.warm = append(s.warm, make([]float64, n))
		}
		for j := 0; j < wp; j++ {
			for i := range col {
				col[i] = warm[i*wp+j]
			}
			s.pat.ToInternal(s.warm[j], col)
		}
		opts.Start = s.warm[:wp]
	}
	prog(Progress{Stage: "eigensolve"})
	res, err := s.es.Smallest(ctx, opts)
	sym := s.op.Symbolic()
	er.NNZM = int64(s.pat.NNZ())
	er.NNZL = sym.NNZ()
	er.Flops = sym.Flops()
	er.Iterations = res.Iterations
	er.OpApplies = res.OpApplies
	er.Factorizations = res.Factorizations
	er.Shifts = res.Shifts
	er.Shift = res.Shift
	for _, r := range res.Residuals {
		if res.NormA > 0 {
			er.MaxResidual = math.Max(er.MaxResidual, r/res.NormA)
		}
	}
	rep.Stages = append(rep.Stages,
		StageTime{Name: "factor", Seconds: res.FactorTime.Seconds()},
		StageTime{Name: "eigensolve", Seconds: (res.TotalTime - res.FactorTime).Seconds()})
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
			return vecs, vals, der, derr
		}
		return nil, nil, er, fmt.Errorf("eigensolver: %w (try a smaller covariance scale)", err)
	}
	if warm == nil {
		s.baseShift = res.Shift
	}
	vecs := make([]float64, n*nev)
	for j, v := range res.Vectors {
		s.pat.FromInternal(col, v)
		for i := 0; i < n; i++ {
			vecs[i*nev+j] = col[i]
		}
	}
	return vecs, append([]float64(nil), res.Values...), er, nil
}
