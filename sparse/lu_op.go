package sparse

import (
	"context"
	"errors"
	"time"

	"glle/parallel"
)

// GramLU is the Operator x -> M^+ x for M = B^T B (paper Eq. (39)), B = I - W the matrix of a
// BPattern, for x orthogonal to the constant vector: the shift-invert operator at shift 0 of M
// restricted to the complement of its null vector, for weights that sum to one (each row of B
// sums to zero) on a connected graph. Lanczos.SolveAt(ctx, M, g, 0, opts) solves with it the embedding eigenproblem
// M Y = Y (Lambda / n) of Eq. (41). It factors B itself (LUFactor, no pivoting) on the pattern of B + B^T,
// whose fill is several times smaller than that of M's Cholesky factor, and whose condition
// number is the square root of M's: the operator is also more accurate than (M - sigma I)^{-1}.
//
// B has rank n-1 and the factorization replaces its last pivot by 1, giving the factors of
// B' = B + c e_r e_r^T (c != 0, r the last pivot). For x orthogonal to the constant vector 1
// (B's null vector), z = B'^{-T} x solves B^T z = x; projecting it orthogonally to u = B'^{-T} e_r,
// which spans the null space of B^T, gives z in B's range, and y = B'^{-1} z solves B y = z;
// projecting y orthogonally to 1 gives y = B^+ B^{+T} x = M^+ x.
//
// SetShift accepts only sigma = 0 and factors B's current values. Not safe for concurrent use.
type GramLU struct {
	b   *BPattern
	sym *Symbolic
	fac *LUFactor
	ctx context.Context
	u   []float64 // u = B'^{-T} e_r in the factor's order
	uu  float64   // u . u
	y   []float64 // workspace in the factor's order
	y2  []float64 // x's and u's backward pass interleaved (the first Apply after a factorization)
	vo  vecOps    // Apply's long-vector operations on the pattern's workers
	ok  bool
	// uNext: u is not computed yet for the current factors (the next Apply computes it).
	uNext bool
}

// NewGramLU analyses the pattern of b for the LU factorization (the ordering and symbolic
// analysis of its symmetric pattern, which is sorted and free of duplicates by construction:
// the pattern checks are skipped and the adjacency graph is built on b's workers). ctx bounds the analysis and every later factorization
// (see SetContext). opts.Symmetric and opts.PrepareFactor are implied.
func NewGramLU(ctx context.Context, b *BPattern, opts SymbolicOptions) (*GramLU, error) {
	opts.Symmetric = true
	opts.PrepareFactor = true
	opts.luFactor = true
	t0 := time.Now()
	g := b.graph()
	dt := time.Since(t0)
	sym, err := analyze(ctx, b.n, b.rowPtr, b.colIdx, opts, g)
	if err != nil {
		return nil, err
	}
	sym.orderTime += dt
	fac := NewLUFactor(sym, b.rowPtr, b.colIdx)
	fac.pf.colMap = b.order // PivotError names the caller's point
	return &GramLU{b: b, sym: sym, fac: fac, ctx: ctx,
		u: make([]float64, b.n), y: make([]float64, b.n)}, nil
}

// SetContext sets the context that bounds later factorizations.
func (g *GramLU) SetContext(ctx context.Context) { g.ctx = ctx }

// Symbolic returns the symbolic analysis of B's pattern.
func (g *GramLU) Symbolic() *Symbolic { return g.sym }

// Factor returns the LU factor (pivot statistics of the last factorization).
func (g *GramLU) Factor() *LUFactor { return g.fac }

// N is the order of B.
func (g *GramLU) N() int { return g.b.n }

// SetShift factors B with its current values; sigma must be 0. It returns a *PivotError when
// B needs pivoting (see LUFactor.Factorize; its Column is the caller's point), or the
// context's error.
func (g *GramLU) SetShift(sigma float64) error {
	g.ok = false
	if sigma != 0 {
		return errors.New("sparse: GramLU: only shift 0 is supported")
	}
	if err := g.fac.Factorize(g.ctx, g.b.val, g.b.valT, true); err != nil {
		return err
	}
	g.ok, g.uNext = true, true
	return nil
}

// Apply sets dst = M^+ x for x orthogonal to the constant vector (its component along the
// constant vector is ignored); dst is orthogonal to the constant vector.
func (g *GramLU) Apply(dst, x []float64) {
	if !g.ok {
		panic("sparse: GramLU.Apply without a successful SetShift")
	}
	n := g.b.n
	if len(dst) != n || len(x) != n {
		panic("sparse: GramLU.Apply length mismatch")
	}
	perm, y, conc := g.sym.perm, g.y, g.sym.conc
	g.vo.workers = conc
	_ = parallel.For(context.Background(), n, conc, func(_ context.Context, _, lo, hi int) error {
		for k := lo; k < hi; k++ {
			y[k] = x[perm[k]]
		}
		return nil
	})
	if g.uNext {
		// u = B'^{-T} e_r: (L U')^T u = U'^T L^T u = e_{n-1} in the factor's order. U'^T is
		// lower triangular with last diagonal entry 1 (the replaced pivot), so its forward
		// solve maps e_{n-1} to itself: u is one backward pass with L^T, taken beside x's
		// backward pass as a second right-hand side (one read of L^T for both).
		g.fac.u.forwardHalf(y, 1)
		if len(g.y2) < 2*n {
			g.y2 = make([]float64, 2*n)
		}
		y2 := g.y2[:2*n]
		_ = parallel.For(context.Background(), n, conc, func(_ context.Context, _, lo, hi int) error {
			for k := lo; k < hi; k++ {
				y2[2*k], y2[2*k+1] = y[k], 0
			}
			return nil
		})
		y2[2*n-1] = 1
		g.fac.u.backwardAll(g.fac.l, y2, 2)
		_ = parallel.For(context.Background(), n, conc, func(_ context.Context, _, lo, hi int) error {
			for k := lo; k < hi; k++ {
				y[k], g.u[k] = y2[2*k], y2[2*k+1]
			}
			return nil
		})
		g.uu = g.vo.dot(g.u, g.u)
		g.uNext = false
	} else {
		g.fac.u.solvePair(g.fac.l, y, 1) // (L U')^T z = x
	}
	g.vo.axpy(-g.vo.dot(g.u, y)/g.uu, g.u, y)
	g.fac.l.solvePair(g.fac.u, y, 1) // L U' y = z
	s := g.vo.sum(y) / float64(n)
	_ = parallel.For(context.Background(), n, conc, func(_ context.Context, _, lo, hi int) error {
		for k := lo; k < hi; k++ {
			dst[perm[k]] = y[k] - s
		}
		return nil
	})
}
