package kernels

import (
	"sync/atomic"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/gonum"
	"gonum.org/v1/gonum/lapack"
	lapackgonum "gonum.org/v1/gonum/lapack/gonum"
)

// Backend is the BLAS/LAPACK implementation the large dense kernels run on (GEMM blocks of the
// brute-force kNN, supernodal blocks of the sparse Cholesky, the dense eigensolver oracle).
// The default is gonum's native Go; the cgo package registers OpenBLAS/LAPACKE unless the
// build has the purego tag. Small per-point kernels (k around 10) are hand-written Go in
// both builds: at that size a cgo call costs more than the arithmetic.
type Backend interface {
	// Name identifies the backend in reports ("gonum" or "openblas").
	Name() string
	BLAS() blas.Float64
	LAPACK() lapack.Float64
}

type native struct{}

func (native) Name() string           { return "gonum" }
func (native) BLAS() blas.Float64     { return gonum.Implementation{} }
func (native) LAPACK() lapack.Float64 { return lapackgonum.Implementation{} }

// Native is gonum's pure-Go backend.
var Native Backend = native{}

var current atomic.Value

func init() { current.Store(&holder{Native}) }

type holder struct{ b Backend }

// Use selects the backend for every later call. It is meant to be called from an init
// function (the cgo package does); it is safe for concurrent use.
func Use(b Backend) {
	if b == nil {
		panic("kernels: nil backend")
	}
	current.Store(&holder{b})
}

// Current returns the selected backend.
func Current() Backend { return current.Load().(*holder).b }

// Supernodes describes a supernodal Cholesky factor L for the triangular-solve kernels of
// SupernodalSolver (the sparse package fills it). Supernode t holds columns
// [First[t], First[t+1]); its rows are Rows[RowPtr[t]:RowPtr[t+1]], its own columns first; its
// values are the m x w row-major panel LX[LXPtr[t]:LXPtr[t+1]] (m rows, w columns), the
// lower-triangular diagonal block first.
type Supernodes struct {
	LX     []float64
	LXPtr  []int64
	First  []int32
	RowPtr []int64
	Rows   []int32
}

// SupernodalSolver is implemented by backends with native kernels for the supernode steps of
// the triangular solves with a Supernodes factor; the sparse package uses its Go loops and
// BLAS-2 calls otherwise. Both methods work in place on y (the permuted right-hand side) and
// use tmp (at least the largest number of below-diagonal rows of a supernode) as scratch.
type SupernodalSolver interface {
	// ForwardSupernodes performs the steps of L y = y of supernodes t0, ..., t1-1 in that
	// order: solve the diagonal block, then subtract the products with the rows below from y.
	// With split non-nil, the products for the below-rows from index split[t] on are instead
	// stored in recs[recOff[t]:recOff[t+1]] (applied later by the caller).
	ForwardSupernodes(s *Supernodes, y, tmp []float64, t0, t1 int, split []int32, recOff []int64, recs []float64)
	// BackwardSupernodes performs the steps of L^T y = y of supernodes t1-1, ..., t0 in that
	// order: subtract the products of the rows below with y, then solve with the transposed
	// diagonal block.
	BackwardSupernodes(s *Supernodes, y, tmp []float64, t0, t1 int)
}

// SupernodalSplitter is implemented by backends whose native supernode steps (SupernodalSolver)
// can be split between two goroutines for the supernodes it accepts (Splits(w, mu): w columns,
// mu below-rows): the parts together perform exactly the operations of the whole step, in the
// same order for every entry of y, so a split step has the whole step's bits.
//   - Forward step: ForwardDiag, then ForwardRows over disjoint ranges [k0, k1) of the
//     below-rows, concurrently (tmp: k1-k0 entries of the caller's scratch).
//   - Backward step: BackwardHigh (the below-rows [mu/2, mu), summed into acc, w entries) and
//     BackwardLow (the rows [0, mu/2), subtracted from the columns) concurrently, then
//     BackwardFinish (acc added, the diagonal block solved). tmp: mu entries each.
type SupernodalSplitter interface {
	ForwardDiag(s *Supernodes, y []float64, t int)
	ForwardRows(s *Supernodes, y, tmp []float64, t, k0, k1 int)
	BackwardHigh(s *Supernodes, y, tmp, acc []float64, t int)
	BackwardLow(s *Supernodes, y, tmp []float64, t int)
	BackwardFinish(s *Supernodes, y, acc []float64, t int)
	Splits(w, mu int) bool
}

// PanelSolver is implemented by backends with a native kernel for the triangular solves of the
// sparse factorizations' panels, b = b L^{-T} with a narrow lower triangle L; the sparse package
// calls the BLAS's Dtrsm otherwise (and for triangles wider than PanelMaxN).
type PanelSolver interface {
	// TrsmRLT overwrites the m x n row-major b (leading dimension ldb) with b L^{-T} for the
	// n x n lower triangular row-major l (ldl), with a unit diagonal when unit (its stored
	// diagonal is then not read). Every row's result is independent of m and of the other rows.
	TrsmRLT(m, n int, l []float64, ldl int, b []float64, ldb int, unit bool)
	// PanelMaxN is the largest n TrsmRLT accepts.
	PanelMaxN() int
}

// PanelLUer is implemented by backends with a native kernel for the unpivoted LU of a sparse
// LU factorization's diagonal blocks (and of whole narrow panels); the sparse package runs its Go
// kernel otherwise.
type PanelLUer interface {
	// PanelLU factors columns [0, w) of the m-row panels pl (L) and pu (U^T), leading dimension
	// lda, in place in Crout's order: rows [0, w) hold the diagonal block (L11 below its
	// diagonal, U's pivots on it; U11^T in pu), rows [w, m) receive L21 and U12^T. It returns
	// col = -1, or the first column whose pivot magnitude is below tol and that pivot. With
	// last, the last column's pivot is returned as lastPivot and replaced by 1.
	PanelLU(pl, pu []float64, m, lda, w int, tol float64, last bool) (col int, pivot, lastPivot float64)
}

// NarrowGemmer is implemented by backends with a native kernel for the small dense products of
// the sparse factorizations' narrow supernodes, c = -a b^T with a short inner dimension; the
// sparse package calls the BLAS's Dgemm otherwise (and for k above GemmMaxKNarrow).
type NarrowGemmer interface {
	// GemmNTNeg sets the m x n row-major c (leading dimension ldc) to -a b^T for the m x k
	// row-major a (lda) and the n x k row-major b (ldb).
	GemmNTNeg(m, n, k int, a []float64, lda int, b []float64, ldb int, c []float64, ldc int)
	// GemmMaxKNarrow is the largest k GemmNTNeg accepts.
	GemmMaxKNarrow() int
}

// SupernodalBlockSolver is implemented by backends with native kernels for the supernode steps
// of the triangular solves with a block of nrhs right-hand sides, stored interleaved: entry
// (row i, right-hand side r) at y[i*nrhs+r]. tmp needs nrhs times the largest number of
// below-diagonal rows of a supernode; recOff counts rows, so supernode t's records are
// recs[recOff[t]*nrhs : recOff[t+1]*nrhs]. Otherwise as SupernodalSolver.
type SupernodalBlockSolver interface {
	ForwardSupernodesBlock(s *Supernodes, y, tmp []float64, nrhs, t0, t1 int, split []int32, recOff []int64, recs []float64)
	BackwardSupernodesBlock(s *Supernodes, y, tmp []float64, nrhs, t0, t1 int)
}
