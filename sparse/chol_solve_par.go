package sparse

import (
	"context"
	"sort"

	"gonum.org/v1/gonum/blas"

	"glle/parallel"
)

// solvePlan lets Solve run the elimination subtrees of the schedule on the workers. A subtree
// node's updates to rows inside its subtree are applied at once; its updates to rows above the
// subtree root (the top supernodes) are recorded and applied afterwards in supernode order, so
// every entry of y receives exactly the subtractions of the sequential solve in the same order:
// the result is bit-identical to the sequential solve, whatever the number of workers.
type solvePlan struct {
	rootOf []int32     // subtree root of each supernode, -1 for top supernodes
	split  []int32     // per supernode: index of its first below-row above its subtree root
	recOff []int64     // per supernode: offset (in rows) of its recorded top-row updates
	recs   []float64   // the records, nrhs values per row (grown for the widest block solved)
	tmps   [][]float64 // per-worker gather buffers (as recs)
	acc    []float64   // the split backward steps' accumulator (splitter), grown on first use
}

// blockTmpLen is the gather buffer a block solve needs: the update rows of the widest
// supernode, and at least one row, which the backward step uses for the solved row even when
// no supernode has update rows (a dense matrix is one supernode).
func blockTmpLen(maxUpdate, nrhs int) int { return max(maxUpdate, 1) * nrhs }

// buffers returns the records and the per-worker gather buffers for nrhs right-hand sides,
// growing them on the first solve of a wider block.
func (p *solvePlan) buffers(nrhs, maxUpdate int) (recs []float64, tmps [][]float64) {
	nr := int(p.recOff[len(p.recOff)-1]) * nrhs
	if cap(p.recs) < nr {
		p.recs = make([]float64, nr)
	}
	for w := range p.tmps {
		if cap(p.tmps[w]) < blockTmpLen(maxUpdate, nrhs) {
			p.tmps[w] = make([]float64, blockTmpLen(maxUpdate, nrhs))
		}
	}
	return p.recs[:nr], p.tmps
}

func (f *Factor) plan() *solvePlan {
	if f.sp != nil {
		return f.sp
	}
	s := f.s
	sc := &s.sched
	p := &solvePlan{
		rootOf: make([]int32, s.ns),
		split:  make([]int32, s.ns),
		recOff: make([]int64, s.ns+1),
	}
	for t := range p.rootOf {
		p.rootOf[t] = -1
	}
	for _, roots := range sc.subtrees {
		for _, r := range roots {
			for t := sc.sDesc[r]; t <= r; t++ {
				p.rootOf[t] = r
			}
		}
	}
	for t := 0; t < s.ns; t++ {
		w := int64(s.sFirst[t+1] - s.sFirst[t])
		rows := s.sRows[s.sRowPtr[t]+w : s.sRowPtr[t+1]]
		n := 0
		if r := p.rootOf[t]; r >= 0 {
			last := s.sFirst[r+1] - 1 // last column of the subtree
			k := sort.Search(len(rows), func(i int) bool { return rows[i] > last })
			p.split[t] = int32(k)
			n = len(rows) - k
		}
		p.recOff[t+1] = p.recOff[t] + int64(n)
	}
	p.tmps = make([][]float64, len(sc.subtrees))
	f.sp = p
	return p
}

// parallelSolve reports whether Solve should use the subtree workers.
func (f *Factor) parallelSolve() bool {
	sc := &f.s.sched
	if len(sc.subtrees) < 2 {
		return false
	}
	return f.s.conc >= 2
}

// eachSubtreeList runs fn(w, roots) for every worker's subtree list, f.s.conc at a time.
func (f *Factor) eachSubtreeList(fn func(w int, roots []int32)) {
	sc := &f.s.sched
	_ = parallel.ForJoin(context.Background(), len(sc.subtrees), 1, f.s.conc, nil, func(_ context.Context, _, lo, hi int) error {
		for w := lo; w < hi; w++ {
			fn(w, sc.subtrees[w])
		}
		return nil
	})
}

// forwardNode performs supernode t's step of L y = y: it solves its diagonal block and
// subtracts its updates from the rows below, except those from index `from` on, whose values
// are written to rec instead (rec nil: all are applied).
func (f *Factor) forwardNode(bl blas.Float64, t int, y, tmp []float64, from int, rec []float64) {
	c0, w, rows, p := f.solvePanel(t)
	mu := len(rows)
	xc := y[c0 : c0+w]
	tv := tmp[:mu]
	if w < solveBLASWidth {
		for i := range xc {
			li := p[i*w : i*w+i]
			v := xc[i]
			for j, l := range li {
				v -= l * xc[j]
			}
			xc[i] = v / p[i*w+i]
		}
		for k := range rows {
			li := p[(w+k)*w : (w+k)*w+w]
			v := 0.0
			for j, l := range li {
				v += l * xc[j]
			}
			tv[k] = v
		}
	} else {
		bl.Dtrsv(blas.Lower, blas.NoTrans, blas.NonUnit, w, p, w, xc, 1)
		if mu > 0 {
			bl.Dgemv(blas.NoTrans, mu, w, 1, p[w*w:], w, xc, 1, 0, tv, 1)
		}
	}
	if rec == nil {
		from = mu
	}
	for k, r := range rows[:from] {
		y[r] -= tv[k]
	}
	copy(rec, tv[from:])
}

// backwardNode performs supernode t's step of L^T y = y.
func (f *Factor) backwardNode(bl blas.Float64, t int, y, tmp []float64) {
	c0, w, rows, p := f.solvePanel(t)
	mu := len(rows)
	xc := y[c0 : c0+w]
	if w < solveBLASWidth {
		// Last row to first and each row from its end, as the C kernel: one descending
		// stream through the panel for the prefetcher.
		for k := mu - 1; k >= 0; k-- {
			axpyDown(xc, p[(w+k)*w:(w+k)*w+w], -y[rows[k]])
		}
		for i := w - 1; i >= 0; i-- {
			xc[i] /= p[i*w+i]
			axpyDown(xc[:i], p[i*w:i*w+i], -xc[i])
		}
		return
	}
	if mu > 0 {
		tv := tmp[:mu]
		for k, r := range rows {
			tv[k] = y[r]
		}
		bl.Dgemv(blas.Trans, mu, w, -1, p[w*w:], w, tv, 1, 1, xc, 1)
	}
	bl.Dtrsv(blas.Lower, blas.Trans, blas.NonUnit, w, p, w, xc, 1)
}

// axpyDown adds a x[j] to y[j] for j = len(y)-1 down to 0 (len(x) >= len(y)).
func axpyDown(y, x []float64, a float64) {
	x = x[:len(y)]
	for j := len(y) - 1; j >= 0; j-- {
		y[j] += a * x[j]
	}
}
