package knn

import (
	"context"
	"errors"
	"math"

	"gonum.org/v1/gonum/blas"

	"glle/kernels"
	"glle/parallel"
)

// Block sizes of the brute-force search: bruteRows query rows against bruteCols training
// rows per GEMM, so the distance block (bruteRows x bruteCols float64) stays cache sized.
const (
	bruteRows = 256
	bruteCols = 2048
)

// errUseTree tells the caller that the GEMM error bound is unusable (norms too large) and the
// k-d tree, which computes every distance directly, must answer instead.
var errUseTree = errors.New("knn: brute force bound not finite")

type cand struct {
	j  int32
	lb float64 // lower bound of the exact squared distance
}

// bruteWork is one worker's reusable workspace.
type bruteWork struct {
	c     []float64 // distance block, row-major rows x cols
	ub    []float64 // per row: max-heap of the k smallest distance upper bounds
	cands [][]cand  // per row: candidates whose lower bound is within the k-th upper bound
	limit []int     // per row: candidate count that triggers compaction
	h     topK
}

// bruteSearch finds, for each of the m rows of q, the k nearest rows of train (n x d). With
// self set, q is train and row i never reports itself.
//
// Distance blocks come from GEMM as ||a||^2 + ||b||^2 - 2 a.b on mean-centred copies. That
// value differs from the direct sum of squared differences (sqDist) by at most
// delta = c*(||a||^2 + ||b||^2) + tiny, with c a generous multiple of d*eps covering the
// centring, the norms, any GEMM summation order and sqDist's own rounding. Per row we keep U,
// the k-th smallest upper bound approx+delta seen (so U bounds the k-th smallest sqDist from
// above), and every column whose lower bound approx-delta is <= U: this set contains every
// row that can rank in the top k, including all ties. The candidates are then re-ranked with
// sqDist on the original data under the (distance, index) order, so the result is exact and
// identical to the k-d tree's and to a linear scan's.
func bruteSearch(ctx context.Context, train []float64, n, d int, q []float64, m, k int, self bool, workers int, outIdx []int32, outDist []float64) error {
	// Mean of the training rows, summed in row order.
	mu := make([]float64, d)
	for i := 0; i < n; i++ {
		for j, v := range train[i*d : i*d+d] {
			mu[j] += v
		}
	}
	for j := range mu {
		mu[j] /= float64(n)
	}
	center := func(x []float64, rows int) ([]float64, []float64) {
		c := make([]float64, rows*d)
		nrm := make([]float64, rows)
		for i := 0; i < rows; i++ {
			s := 0.0
			for j, v := range x[i*d : i*d+d] {
				t := v - mu[j]
				c[i*d+j] = t
				s += float64(t * t)
			}
			nrm[i] = s
		}
		return c, nrm
	}
	tc, tn := center(train, n)
	qc, qn := tc, tn
	if !self {
		qc, qn = center(q, m)
	}
	maxN := 0.0
	for _, v := range tn {
		maxN = math.Max(maxN, v)
	}
	for _, v := range qn {
		maxN = math.Max(maxN, v)
	}
	if !(maxN < 1e290) {
		return errUseTree
	}
	rel := float64(8*d+32) * 0x1p-52
	abs := float64(8*d+32) * 0x1p-1022
	bounds := func(nrm []float64) (lo, hi []float64) {
		lo = make([]float64, len(nrm))
		hi = make([]float64, len(nrm))
		for i, v := range nrm {
			lo[i] = v - rel*v - abs
			hi[i] = v + rel*v + abs
		}
		return lo, hi
	}
	tlo, thi := bounds(tn)
	qlo, qhi := tlo, thi
	if !self {
		qlo, qhi = bounds(qn)
	}

	bl := kernels.Current().BLAS()
	nb := (m + bruteRows - 1) / bruteRows
	ws := make([]*bruteWork, parallel.Workers(workers))
	return parallel.For(ctx, nb, workers, func(ctx context.Context, w, blo, bhi int) error {
		base := 2*k + 64
		wk := ws[w]
		if wk == nil {
			wk = &bruteWork{
				c:     make([]float64, bruteRows*bruteCols),
				ub:    make([]float64, bruteRows*k),
				cands: make([][]cand, bruteRows),
				limit: make([]int, bruteRows),
				h:     newTopK(k),
			}
			// Each row's candidate list starts at the capacity of its first pruning limit, so
			// the per-point loop appends without growing it in the common case.
			for r := range wk.cands {
				wk.cands[r] = make([]cand, 0, base)
			}
			ws[w] = wk
		}
		for b := blo; b < bhi; b++ {
			i0 := b * bruteRows
			rows := min(bruteRows, m-i0)
			for r := 0; r < rows; r++ {
				ub := wk.ub[r*k : r*k+k]
				for j := range ub {
					ub[j] = math.Inf(1)
				}
				wk.cands[r] = wk.cands[r][:0]
				wk.limit[r] = base
			}
			for j0 := 0; j0 < n; j0 += bruteCols {
				if err := ctx.Err(); err != nil {
					return err
				}
				cols := min(bruteCols, n-j0)
				c := wk.c[:rows*cols]
				bl.Dgemm(blas.NoTrans, blas.Trans, rows, cols, d, -2, qc[i0*d:], d, tc[j0*d:], d, 0, c, cols)
				tl := tlo[j0 : j0+cols]
				th := thi[j0 : j0+cols]
				for r := 0; r < rows; r++ {
					i := i0 + r
					ql, qh := qlo[i], qhi[i]
					ub := wk.ub[r*k : r*k+k]
					u := ub[0]
					cs := wk.cands[r]
					crow := c[r*cols : r*cols+cols]
					for jj, g := range crow {
						lb := ql + tl[jj] + g
						if lb <= u {
							j := j0 + jj
							if self && j == i {
								continue
							}
							cs = append(cs, cand{int32(j), lb})
							if hb := qh + th[jj] + g; hb < u {
								siftDownF(ub, hb)
								u = ub[0]
							}
						}
					}
					if len(cs) > wk.limit[r] {
						cs = compact(cs, u)
						wk.limit[r] = max(base, 2*len(cs))
					}
					wk.cands[r] = cs
				}
			}
			// Exact re-ranking.
			for r := 0; r < rows; r++ {
				i := i0 + r
				cs := compact(wk.cands[r], wk.ub[r*k])
				wk.cands[r] = cs
				qi := q[i*d : i*d+d]
				h := &wk.h
				h.reset()
				for _, cd := range cs {
					j := int(cd.j)
					h.push(sqDist(qi, train[j*d:j*d+d]), cd.j)
				}
				h.sortTo(outIdx[i*k:i*k+k], outDist[i*k:i*k+k])
			}
		}
		return nil
	})
}

// compact drops the candidates whose lower bound exceeds u, keeping order.
func compact(cs []cand, u float64) []cand {
	out := cs[:0]
	for _, c := range cs {
		if c.lb <= u {
			out = append(out, c)
		}
	}
	return out
}
