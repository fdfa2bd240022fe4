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
		// Breadth-first relabelling: the sparse stages touch memory locally whatever the
		// input order (vectors are mapped in and out below).
		p, err := sparse.NewMPatternLocal(ctx, n, k, m.Neighbors, m.st.workers)
		if err != nil {
			return nil, nil, er, err
		}
		s.pat = p
	}
	if err := s.pat.Fill(ctx, w, m.st.workers); err != nil {
		if ctx.Err() != nil {
			return nil, nil, er, ctx.Err()
		}
		return nil, nil, er, &DegenerateError{Kind: "nonfinite", Count: 1, Example: -1,
			Msg: fmt.Sprintf("assembling M failed: %v (weights too large: lower the covariance scale)", err)}
	}
	if m.Method.Generative() {
		// Generations refill M: precompute where every contribution lands (once).
		if err := s.pat.PrepareRefill(ctx, m.st.workers); err != nil {
			return nil, nil, er, err
		}
	}
	rep.stage("assemble", t0)
	prog(Progress{Stage: "assemble", Final: true})
	if s.op == nil {
		prog(Progress{Stage: "analyze"})
		// The memory check with the exact nnz(L) runs inside the analysis, before the factor's
		// storage is allocated.
		nnzM := int64(s.pat.NNZ())
		op, err := sparse.NewShiftInvert(ctx, s.pat.Matrix(), sparse.SymbolicOptions{Workers: m.st.workers,
			Symmetric: true, CheckFactor: func(nnzL int64) error { return m.refineMemory(nnzM, nnzL) }})
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
		ot, st := op.Symbolic().Times()
		rep.Stages = append(rep.Stages, StageTime{Name: "ordering", Seconds: ot.Seconds()},
			StageTime{Name: "symbolic", Seconds: st.Seconds()})
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
