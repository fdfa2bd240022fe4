package sparse

import (
	"context"
	"errors"
	"math"
	"time"
)

// ShiftInvert is the shift-invert Operator over a symmetric CSR matrix and the package's sparse
// Cholesky factorization: SetShift(sigma) factors A - sigma I numerically (the symbolic analysis,
// done once by NewShiftInvert, is reused), Apply solves (A - sigma I) dst = x.
//
// The operator references the matrix's slices: after the values change in place (e.g.
// MPattern.Fill) the next SetShift factors the new values. Not safe for concurrent use.
type ShiftInvert struct {
	a     CSRMatrix
	sym   *Symbolic
	fac   *Factor
	ctx   context.Context
	sigma float64
	ok    bool
}

// NewShiftInvert analyses the pattern of a (full symmetric CSR, both triangles, or its lower
// triangle; sorted columns) for the Cholesky factorization with the given options. ctx bounds
// the analysis and every later factorization (see SetContext).
func NewShiftInvert(ctx context.Context, a CSRMatrix, opts ...SymbolicOptions) (*ShiftInvert, error) {
	var o SymbolicOptions
	if len(opts) > 1 {
		panic("sparse: NewShiftInvert: more than one SymbolicOptions")
	}
	if len(opts) == 1 {
		o = opts[0]
	}
	o.PrepareFactor = true
	sym, err := Analyze(ctx, a.Dim, a.RowPtr, a.ColIdx, o)
	if err != nil {
		return nil, err
	}
	return &ShiftInvert{a: a, sym: sym, fac: NewFactor(sym), ctx: ctx}, nil
}

// NewShiftInvertPattern is NewShiftInvert for M's pattern p (the matrix p.Matrix()), which is
// symmetric, sorted and free of duplicates by construction: the analysis skips the pattern
// checks and builds its adjacency graph on opts.Workers goroutines instead of one (at
// n = 200k about 25 ms less on the ordering's sequential path). opts.Symmetric is implied.
// The result is that of NewShiftInvert(ctx, p.Matrix(), opts).
func NewShiftInvertPattern(ctx context.Context, p *MPattern, opts SymbolicOptions) (*ShiftInvert, error) {
	opts.PrepareFactor = true
	opts.Symmetric = true
	t0 := time.Now()
	g := p.graph(opts.Workers)
	dt := time.Since(t0)
	sym, err := analyze(ctx, p.n, p.rowPtr, p.colIdx, opts, g)
	if err != nil {
		return nil, err
	}
	sym.orderTime += dt
	fac := NewFactor(sym)
	fac.pf.colMap = p.order // nil for a pattern in point order; NotPositiveDefiniteError names the point
	return &ShiftInvert{a: p.Matrix(), sym: sym, fac: fac, ctx: ctx}, nil
}

// SetContext sets the context that bounds later factorizations.
func (s *ShiftInvert) SetContext(ctx context.Context) { s.ctx = ctx }

// Symbolic returns the symbolic analysis (ordering, fill) the operator uses.
func (s *ShiftInvert) Symbolic() *Symbolic { return s.sym }

// N is the order of the matrix.
func (s *ShiftInvert) N() int { return s.a.Dim }

// Shift is the shift of the current factorization.
func (s *ShiftInvert) Shift() float64 { return s.sigma }

// SetShift factors A - sigma I with the matrix's current values. It returns the factorization's
// error (a *NotPositiveDefiniteError when A - sigma I is not positive definite, or the context's
// error); Apply must not be used after a failed SetShift.
func (s *ShiftInvert) SetShift(sigma float64) error {
	s.ok = false
	if math.IsNaN(sigma) || math.IsInf(sigma, 0) {
		return errors.New("sparse: ShiftInvert: non-finite shift")
	}
	n, nnz := s.sym.n, s.sym.nnzIn
	if len(s.a.RowPtr) != n+1 || s.a.RowPtr[n] != nnz || len(s.a.ColIdx) < nnz || len(s.a.Val) < nnz {
		panic("sparse: ShiftInvert: the matrix's pattern changed since the analysis")
	}
	if err := s.fac.factorize(s.ctx, s.a.Val, sigma); err != nil {
		return err
	}
	s.sigma, s.ok = sigma, true
	return nil
}

// Apply sets dst = (A - sigma I)^{-1} x.
func (s *ShiftInvert) Apply(dst, x []float64) {
	if !s.ok {
		panic("sparse: ShiftInvert.Apply without a successful SetShift")
	}
	s.fac.Solve(dst, x)
}
