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

// bruteTrain is the training side of the blocked brute force, computed once per training set
// (n x d, row-major): the mean, the mean-centred rows, their squared norms and the norms'
// error bounds. An Index keeps it, so its queries skip the O(n d) pass and its memory.
type bruteTrain struct {
	train    []float64 // the original rows, for the exact re-ranking
	n, d     int
	mu       []float64 // mean of the rows, summed in row order
	tc, tn   []float64 // centred rows (n x d) and their squared norms
	tlo, thi []float64 // tn minus and plus its error bound
	maxN     float64   // largest of tn
}

// bruteRel and bruteAbs are the relative and absolute error bounds (c and tiny in search) of a
// squared norm and of a GEMM distance in dimension d.
func bruteRel(d int) float64 { return float64(8*d+32) * 0x1p-52 }
func bruteAbs(d int) float64 { return float64(8*d+32) * 0x1p-1022 }

// centre returns the rows of x (rows x d) minus mu and their squared norms.
func centre(x []float64, rows, d int, mu []float64) (c, nrm []float64) {
	c = make([]float64, rows*d)
	nrm = make([]float64, rows)
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

// normBounds returns nrm minus and plus its error bound.
func normBounds(nrm []float64, d int) (lo, hi []float64) {
	rel, abs := bruteRel(d), bruteAbs(d)
	lo = make([]float64, len(nrm))
	hi = make([]float64, len(nrm))
	for i, v := range nrm {
		lo[i] = v - rel*v - abs
		hi[i] = v + rel*v + abs
	}
	return lo, hi
}

func newBruteTrain(train []float64, n, d int) *bruteTrain {
	bt := &bruteTrain{train: train, n: n, d: d, mu: make([]float64, d)}
	for i := 0; i < n; i++ {
		for j, v := range train[i*d : i*d+d] {
			bt.mu[j] += v
		}
	}
	for j := range bt.mu {
		bt.mu[j] /= float64(n)
	}
	bt.tc, bt.tn = centre(train, n, d, bt.mu)
	for _, v := range bt.tn {
		bt.maxN = math.Max(bt.maxN, v)
	}
	bt.tlo, bt.thi = normBounds(bt.tn, d)
	return bt
}

// bruteSearch finds, for each of the m rows of q, the k nearest rows of train (n x d). With
// self set, q is train and row i never reports itself.
func bruteSearch(ctx context.Context, train []float64, n, d int, q []float64, m, k int, self bool, workers int, outIdx []int32, outDist []float64) error {
	return newBruteTrain(train, n, d).search(ctx, q, m, k, self, workers, outIdx, outDist)
}

// search finds, for each of the m rows of q, the k nearest training rows. With self set, q is
// the training set and row i never reports itself.
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
func (bt *bruteTrain) search(ctx context.Context, q []float64, m, k int, self bool, workers int, outIdx []int32, outDist []float64) error {
	train, n, d := bt.train, bt.n, bt.d
	tc, tlo, thi := bt.tc, bt.tlo, bt.thi
	qc, qlo, qhi := tc, tlo, thi
	maxN := bt.maxN
	if !self {
		var qn []float64
		qc, qn = centre(q, m, d, bt.mu)
		for _, v := range qn {
			maxN = math.Max(maxN, v)
		}
		qlo, qhi = normBounds(qn, d)
	}
	if !(maxN < 1e290) {
		return errUseTree
	}

	bl := kernels.Current().BLAS()
	nb := (m + bruteRows - 1) / bruteRows
	ws := make([]*bruteWork, parallel.Workers(workers))
	return parallel.For(ctx, nb, workers, func(ctx context.Context, w, blo, bhi int) error {
		base := 2*k + 64
		wk := ws[w]
		if wk == nil {
			br := min(bruteRows, m) // a small batch needs no full-height block
			wk = &bruteWork{
				c:     make([]float64, br*min(bruteCols, n)),
				ub:    make([]float64, br*k),
				cands: make([][]cand, br),
				limit: make([]int, br),
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
						if len(cs) > wk.limit[r]/2 {
							// The bounds do not prune: ties at the k-th distance, or bounds
							// too loose for the points' norms (far groups). Rank the
							// candidates by sqDist now and keep the k best: a later column
							// (a higher index) can only beat them by a smaller sqDist, and
							// the k-th of them bounds it as U does. Without this a row kept
							// O(n) candidates (355 MB at n = 20000, two far clusters).
							cs, u = pruneExact(cs, q[i*d:i*d+d], train, d, &wk.h, ub)
						}
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

// pruneExact replaces the candidates cs of the query qi by the k of least (sqDist, index),
// each with its sqDist as lower bound, sets the upper-bound heap ub to their sqDists and
// returns them with the new bound ub[0]. h is scratch; len(cs) > k.
func pruneExact(cs []cand, qi, train []float64, d int, h *topK, ub []float64) ([]cand, float64) {
	h.reset()
	for _, c := range cs {
		h.push(sqDist(qi, train[int(c.j)*d:int(c.j)*d+d]), c.j)
	}
	cs = cs[:0]
	for t, j := range h.idx {
		cs = append(cs, cand{j, h.dist[t]})
	}
	// h orders by (distance, index) as a max-heap, or as a descending array for small k:
	// either way its distances form a max-heap of float64s.
	copy(ub, h.dist)
	return cs, ub[0]
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
