package sparse

import (
	"glle/kernels"
)

// solveBLASWidth: without native kernels (kernels.SupernodalSolver, which the OpenBLAS build
// has), supernodes at least this wide use BLAS-2 calls in Solve, narrower ones Go loops. The row-major panels make the BLAS-2 calls dot products of length w, where the
// call overhead and OpenBLAS's short-vector code lose to the Go loops up to w ~ 128
// (measured on the Swiss roll at n = 200k, one solve: 39.8 ms at width 8, 36.2 ms at 32,
// 34.2 ms at 128; at n = 1M about 250 -> 225 ms).
const solveBLASWidth = 128

// Solve sets dst = (A - shift I)^{-1} b using the last successful factorization: the
// triangular solves L y = P b, L^T z = y, dst = P^T z, supernode by supernode. dst may alias
// b. It panics if the factor is not valid or the lengths differ from n.
func (f *Factor) Solve(dst, b []float64) {
	s := f.s
	if !f.valid {
		panic("sparse: Solve without a successful Factorize")
	}
	if len(dst) != s.n || len(b) != s.n {
		panic("sparse: Solve length mismatch")
	}
	y := f.y
	for k, o := range s.perm {
		y[k] = b[o]
	}
	f.solveInterleaved(y, 1)
	for k, o := range s.perm {
		dst[o] = y[k]
	}
}

func (f *Factor) tmpBuf(n int) []float64 {
	if cap(f.tmp) < n {
		f.tmp = make([]float64, n)
	}
	return f.tmp[:n]
}

// forwardRange performs the forward steps of supernodes t0, ..., t1-1 with the backend's
// native kernels when it has them, else with forwardNode. With p non-nil, updates to rows
// above each supernode's subtree root are recorded in recs (see solvePlan).
func (f *Factor) forwardRange(be kernels.Backend, t0, t1 int, y, tmp []float64, p *solvePlan, recs []float64) {
	if nat, ok := be.(kernels.SupernodalSolver); ok {
		if p == nil {
			nat.ForwardSupernodes(&f.sn, y, tmp, t0, t1, nil, nil, nil)
		} else {
			nat.ForwardSupernodes(&f.sn, y, tmp, t0, t1, p.split, p.recOff, recs)
		}
		return
	}
	bl := be.BLAS()
	for t := t0; t < t1; t++ {
		if p == nil {
			f.forwardNode(bl, t, y, tmp, 0, nil)
		} else {
			f.forwardNode(bl, t, y, tmp, int(p.split[t]), recs[p.recOff[t]:p.recOff[t+1]])
		}
	}
}

// backwardRange performs the backward steps of supernodes t1-1, ..., t0 with the backend's
// native kernels when it has them, else with backwardNode.
func (f *Factor) backwardRange(be kernels.Backend, t0, t1 int, y, tmp []float64) {
	if nat, ok := be.(kernels.SupernodalSolver); ok {
		nat.BackwardSupernodes(&f.sn, y, tmp, t0, t1)
		return
	}
	bl := be.BLAS()
	for t := t1 - 1; t >= t0; t-- {
		f.backwardNode(bl, t, y, tmp)
	}
}

// solvePanel returns supernode t's first column c0, its width w, the rows below its diagonal
// block and its m x w row-major panel of L (diagonal block first).
func (f *Factor) solvePanel(t int) (c0, w int, rows []int32, p []float64) {
	s := f.s
	c0 = int(s.sFirst[t])
	w = int(s.sFirst[t+1]) - c0
	return c0, w, s.sRows[s.sRowPtr[t]+int64(w) : s.sRowPtr[t+1]], f.lx[s.lxPtr[t]:s.lxPtr[t+1]]
}
