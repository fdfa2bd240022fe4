package sparse

import (
	"glle/kernels"
)

// SolveBlock sets dst = (A - shift I)^{-1} b for nrhs right-hand sides stored one after the
// other (column-major n x nrhs: right-hand side r is b[r*n:(r+1)*n]). It reads the factor once
// for all of them: at n = 100k two right-hand sides cost 1.5 times one Solve, four 1.8 times
// (the OpenBLAS build's C loops). Each column equals Solve of that column up to rounding (one
// right-hand side is Solve). dst may alias b. The first call with a given nrhs allocates
// n*nrhs workspace that later calls reuse. It panics if the factor is not valid or the lengths
// differ from n*nrhs.
func (f *Factor) SolveBlock(dst, b []float64, nrhs int) { f.solveBlock(dst, b, nrhs, true) }

// SolveMany solves (A - shift I) X = B for the row-major n x nrhs blocks dst = X and b = B
// (right-hand side r of row i at b[i*nrhs+r]); otherwise as SolveBlock.
func (f *Factor) SolveMany(dst, b []float64, nrhs int) { f.solveBlock(dst, b, nrhs, false) }

// solveBlock is SolveBlock (cols) and SolveMany (!cols).
func (f *Factor) solveBlock(dst, b []float64, nrhs int, cols bool) {
	s := f.s
	if !f.valid {
		panic("sparse: block solve without a successful Factorize")
	}
	if nrhs < 0 || len(dst) != s.n*nrhs || len(b) != s.n*nrhs {
		panic("sparse: block solve length mismatch")
	}
	switch nrhs {
	case 0:
		return
	case 1:
		f.Solve(dst, b)
		return
	}
	if cap(f.ym) < s.n*nrhs {
		f.ym = make([]float64, s.n*nrhs)
	}
	y := f.ym[:s.n*nrhs]
	n := s.n
	for k, o := range s.perm {
		yk := y[k*nrhs : k*nrhs+nrhs]
		if cols {
			for r := range yk {
				yk[r] = b[r*n+o]
			}
		} else {
			copy(yk, b[o*nrhs:(o+1)*nrhs])
		}
	}
	f.solveInterleaved(y, nrhs)
	for k, o := range s.perm {
		yk := y[k*nrhs : k*nrhs+nrhs]
		if cols {
			for r, v := range yk {
				dst[r*n+o] = v
			}
		} else {
			copy(dst[o*nrhs:(o+1)*nrhs], yk)
		}
	}
}

// solveInterleaved solves L L^T y = y for nrhs interleaved right-hand sides (permuted
// numbering; nrhs = 1 is Solve's single vector), with the subtrees on the workers when the
// schedule has them: the subtrees' forward steps run on the workers, recording their updates
// to the top supernodes' rows (solvePlan), which are then applied in supernode order between
// the top supernodes' own steps; the backward steps run the top first, then the subtrees. Every
// entry of y receives the subtractions of the sequential solve in the same order, so the
// result has the same bits for any number of workers.
func (f *Factor) solveInterleaved(y []float64, nrhs int) { f.solvePair(f, y, nrhs) }

// solvePair is solveInterleaved with the forward steps on f's panels and the backward steps on
// b's (the same Symbolic): b = f solves with L L^T, and an LU factor's views solve with L U or
// U^T L^T (LUFactor). f's solve plan and buffers serve both.
func (f *Factor) solvePair(b *Factor, y []float64, nrhs int) {
	if !f.parallelSolve() {
		s := f.s
		be := kernels.Current()
		tmp := f.tmpBuf(blockTmpLen(s.maxUpdate, nrhs))
		f.forwardRangeBlock(be, 0, s.ns, y, tmp, nrhs, nil, nil)
		b.backwardRangeBlock(be, 0, s.ns, y, tmp, nrhs)
		return
	}
	f.forwardAll(y, nrhs)
	f.backwardAll(b, y, nrhs)
}

// forwardHalf is solvePair's forward half: every forward step on f's panels, with the
// parallel plan when the schedule has one.
func (f *Factor) forwardHalf(y []float64, nrhs int) {
	if !f.parallelSolve() {
		s := f.s
		f.forwardRangeBlock(kernels.Current(), 0, s.ns, y, f.tmpBuf(blockTmpLen(s.maxUpdate, nrhs)), nrhs, nil, nil)
		return
	}
	f.forwardAll(y, nrhs)
}

// forwardAll performs every forward step on f's panels (solvePair's first half) with the
// parallel plan.
func (f *Factor) forwardAll(y []float64, nrhs int) {
	s := f.s
	be := kernels.Current()
	sc := &s.sched
	p := f.plan()
	recs, tmps := p.buffers(nrhs, s.maxUpdate)
	f.eachSubtreeList(func(w int, roots []int32) {
		for _, r := range roots {
			f.forwardRangeBlock(be, int(sc.sDesc[r]), int(r)+1, y, tmps[w], nrhs, p, recs)
		}
	})
	tmp := tmps[0]
	var h *splitter
	if nrhs == 1 {
		h = newSplitter(be, y, tmps[1], nil, s.conc)
		defer h.stop()
	}
	for t := 0; t < s.ns; t++ {
		if p.rootOf[t] < 0 {
			if h.splits(s, t) {
				h.forward(f, t, tmp)
			} else {
				f.forwardRangeBlock(be, t, t+1, y, tmp, nrhs, nil, nil)
			}
			continue
		}
		rec := recs[p.recOff[t]*int64(nrhs) : p.recOff[t+1]*int64(nrhs)]
		if len(rec) == 0 {
			continue
		}
		w := int64(s.sFirst[t+1] - s.sFirst[t])
		rows := s.sRows[s.sRowPtr[t]+w+int64(p.split[t]) : s.sRowPtr[t+1]]
		for k, r := range rows {
			yr := y[int(r)*nrhs : int(r)*nrhs+nrhs]
			for j, v := range rec[k*nrhs : k*nrhs+nrhs] {
				yr[j] -= v
			}
		}
	}
}

// backwardAll performs every backward step on b's panels (solvePair's second half; f, of the
// same Symbolic, lends its plan and buffers), the top supernodes first, then the subtrees on
// the workers.
func (f *Factor) backwardAll(b *Factor, y []float64, nrhs int) {
	s := f.s
	be := kernels.Current()
	sc := &s.sched
	if !f.parallelSolve() {
		b.backwardRangeBlock(be, 0, s.ns, y, f.tmpBuf(blockTmpLen(s.maxUpdate, nrhs)), nrhs)
		return
	}
	p := f.plan()
	_, tmps := p.buffers(nrhs, s.maxUpdate)
	tmp := tmps[0]
	var h *splitter
	if nrhs == 1 {
		h = newSplitter(be, y, tmps[1], &p.acc, s.conc)
	}
	for t := s.ns - 1; t >= 0; t-- {
		if p.rootOf[t] < 0 {
			if h.splits(s, t) {
				h.backward(b, t, tmp)
			} else {
				b.backwardRangeBlock(be, t, t+1, y, tmp, nrhs)
			}
		}
	}
	h.stop()
	f.eachSubtreeList(func(w int, roots []int32) {
		for _, r := range roots {
			b.backwardRangeBlock(be, int(sc.sDesc[r]), int(r)+1, y, tmps[w], nrhs)
		}
	})
}

// forwardRangeBlock performs the forward steps of supernodes t0, ..., t1-1 for nrhs
// interleaved right-hand sides, with the backend's native kernels when it has them (one
// right-hand side: forwardRange).
func (f *Factor) forwardRangeBlock(be kernels.Backend, t0, t1 int, y, tmp []float64, nrhs int, p *solvePlan, recs []float64) {
	if nrhs == 1 {
		f.forwardRange(be, t0, t1, y, tmp, p, recs)
		return
	}
	if nat, ok := be.(kernels.SupernodalBlockSolver); ok {
		if p == nil {
			nat.ForwardSupernodesBlock(&f.sn, y, tmp, nrhs, t0, t1, nil, nil, nil)
		} else {
			nat.ForwardSupernodesBlock(&f.sn, y, tmp, nrhs, t0, t1, p.split, p.recOff, recs)
		}
		return
	}
	for t := t0; t < t1; t++ {
		if p == nil {
			f.forwardNodeBlock(t, y, tmp, nrhs, -1, nil)
		} else {
			f.forwardNodeBlock(t, y, tmp, nrhs, int(p.split[t]), recs[p.recOff[t]*int64(nrhs):p.recOff[t+1]*int64(nrhs)])
		}
	}
}

// backwardRangeBlock performs the backward steps of supernodes t1-1, ..., t0 for nrhs
// interleaved right-hand sides (one: backwardRange).
func (f *Factor) backwardRangeBlock(be kernels.Backend, t0, t1 int, y, tmp []float64, nrhs int) {
	if nrhs == 1 {
		f.backwardRange(be, t0, t1, y, tmp)
		return
	}
	if nat, ok := be.(kernels.SupernodalBlockSolver); ok {
		nat.BackwardSupernodesBlock(&f.sn, y, tmp, nrhs, t0, t1)
		return
	}
	for t := t1 - 1; t >= t0; t-- {
		f.backwardNodeBlock(t, y, tmp, nrhs)
	}
}

// forwardNodeBlock is forwardNode for nrhs interleaved right-hand sides (from < 0: apply all
// updates).
func (f *Factor) forwardNodeBlock(t int, y, tmp []float64, nrhs, from int, rec []float64) {
	c0, w, rows, p := f.solvePanel(t)
	mu := len(rows)
	xc := y[c0*nrhs : (c0+w)*nrhs]
	for i := 0; i < w; i++ {
		li := p[i*w : i*w+i]
		xi := xc[i*nrhs : i*nrhs+nrhs]
		for j, l := range li {
			xj := xc[j*nrhs : j*nrhs+nrhs]
			for r := range xi {
				xi[r] -= l * xj[r]
			}
		}
		d := p[i*w+i]
		for r := range xi {
			xi[r] /= d
		}
	}
	tv := tmp[:mu*nrhs]
	blockProducts(tv, p[w*w:], xc, mu, w, nrhs)
	if from < 0 {
		from = mu
	}
	for k, row := range rows[:from] {
		yr := y[int(row)*nrhs : int(row)*nrhs+nrhs]
		for r, v := range tv[k*nrhs : k*nrhs+nrhs] {
			yr[r] -= v
		}
	}
	copy(rec, tv[from*nrhs:])
}

// backwardNodeBlock is backwardNode for nrhs interleaved right-hand sides.
func (f *Factor) backwardNodeBlock(t int, y, tmp []float64, nrhs int) {
	c0, w, rows, p := f.solvePanel(t)
	xc := y[c0*nrhs : (c0+w)*nrhs]
	if nrhs <= 4 {
		// Last row to first, each from its end (see backwardNode): at n = 100k 7% faster than
		// first to last for 4 right-hand sides (benchstat, 6 runs, p = 0.04; for 2: 9%,
		// p = 0.18); for 8 the descending order was 25-37% slower.
		for k := len(rows) - 1; k >= 0; k-- {
			row := int(rows[k])
			blockSubtract(xc, p[(w+k)*w:(w+k)*w+w], y[row*nrhs:row*nrhs+nrhs])
		}
	} else {
		for k, row := range rows {
			blockSubtract(xc, p[(w+k)*w:(w+k)*w+w], y[int(row)*nrhs:int(row)*nrhs+nrhs])
		}
	}
	v := tmp[:nrhs]
	for i := w - 1; i >= 0; i-- {
		xi := xc[i*nrhs : i*nrhs+nrhs]
		d := p[i*w+i]
		for r := range xi {
			xi[r] /= d
			v[r] = xi[r]
		}
		for j, l := range p[i*w : i*w+i] {
			xj := xc[j*nrhs : j*nrhs+nrhs]
			for r := range xj {
				xj[r] -= l * v[r]
			}
		}
	}
}

// blockProducts sets t[k*nrhs+r] = sum_j l[k*w+j] x[j*nrhs+r] for the mu x w row-major l and
// the w interleaved rows of x (unrolled for 2 and 4 right-hand sides: the same operations in
// the same order as the general loop).
func blockProducts(t, l, x []float64, mu, w, nrhs int) {
	x = x[:w*nrhs]
	switch nrhs {
	case 2:
		for k := 0; k < mu; k++ {
			var a0, a1 float64
			for j, v := range l[k*w : k*w+w] {
				xj := (*[2]float64)(x[2*j:])
				a0 += v * xj[0]
				a1 += v * xj[1]
			}
			t[2*k], t[2*k+1] = a0, a1
		}
	case 4:
		for k := 0; k < mu; k++ {
			var a0, a1, a2, a3 float64
			for j, v := range l[k*w : k*w+w] {
				xj := (*[4]float64)(x[4*j:])
				a0 += v * xj[0]
				a1 += v * xj[1]
				a2 += v * xj[2]
				a3 += v * xj[3]
			}
			tk := (*[4]float64)(t[4*k:])
			tk[0], tk[1], tk[2], tk[3] = a0, a1, a2, a3
		}
	default:
		clear(t[:mu*nrhs])
		for k := 0; k < mu; k++ {
			tk := t[k*nrhs : k*nrhs+nrhs]
			for j, v := range l[k*w : k*w+w] {
				xj := x[j*nrhs : j*nrhs+nrhs]
				for r := range tk {
					tk[r] += v * xj[r]
				}
			}
		}
	}
}

// blockSubtract sets x[j*nrhs+r] -= lk[j] yr[r] for the w interleaved rows of x (unrolled for
// 2 and 4 right-hand sides, as blockProducts).
func blockSubtract(x, lk, yr []float64) {
	nrhs := len(yr)
	x = x[:len(lk)*nrhs]
	switch nrhs {
	case 2:
		y0, y1 := yr[0], yr[1]
		for j := len(lk) - 1; j >= 0; j-- {
			v := lk[j]
			xj := (*[2]float64)(x[2*j:])
			xj[0] -= v * y0
			xj[1] -= v * y1
		}
	case 4:
		y0, y1, y2, y3 := yr[0], yr[1], yr[2], yr[3]
		for j := len(lk) - 1; j >= 0; j-- {
			v := lk[j]
			xj := (*[4]float64)(x[4*j:])
			xj[0] -= v * y0
			xj[1] -= v * y1
			xj[2] -= v * y2
			xj[3] -= v * y3
		}
	default:
		for j, v := range lk {
			xj := x[j*nrhs : j*nrhs+nrhs]
			for r, yv := range yr {
				xj[r] -= v * yv
			}
		}
	}
}
