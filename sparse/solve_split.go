package sparse

import (
	"runtime"
	"sync/atomic"

	"glle/kernels"
)

// splitter lends a second goroutine to the top supernodes' steps of a parallel one-vector
// solve, which otherwise run on one goroutine while the other workers idle: with the
// backend's split kernels (kernels.SupernodalSplitter) the calling goroutine and the helper
// each stream part of a wide supernode's below-diagonal block. The parts perform exactly the
// whole step's operations, so the solve keeps its bits. The helper spins between parts (the
// top phase is short and its core otherwise idle); a part it has not claimed yet when the
// caller finishes its own is run by the caller, so a descheduled helper only costs time.
type splitter struct {
	sp      kernels.SupernodalSplitter
	sn      *kernels.Supernodes // the panels of the step being split
	y, tmp  []float64           // the vector and the helper's scratch
	acc     []float64           // the backward steps' accumulator (BackwardHigh)
	accp    *[]float64          // where acc is kept between solves (nil: not kept)
	seq     atomic.Int64
	claimed atomic.Bool
	done    atomic.Bool
	quit    atomic.Bool
	kind    int // 1: ForwardRows, 2: BackwardHigh
	t, a, b int
}

// newSplitter starts the helper goroutine, or returns nil when the backend has no split
// kernels or fewer than two goroutines may run.
// acc, when not nil, holds the backward steps' accumulator between solves (grown as needed).
func newSplitter(be kernels.Backend, y, tmp []float64, acc *[]float64, conc int) *splitter {
	sp, ok := be.(kernels.SupernodalSplitter)
	if !ok || conc < 2 || runtime.GOMAXPROCS(0) < 2 {
		return nil
	}
	h := &splitter{sp: sp, y: y, tmp: tmp, accp: acc}
	if acc != nil {
		h.acc = *acc
	}
	h.claimed.Store(true)
	if !splitNoHelper {
		go h.loop()
	}
	return h
}

// splitNoHelper (tests) starts no helper goroutine: the calling goroutine runs every part.
var splitNoHelper bool

func (h *splitter) loop() {
	last := int64(0)
	for spins := 0; ; spins++ {
		if h.quit.Load() {
			return
		}
		s := h.seq.Load()
		if s == last {
			if spins&1023 == 1023 {
				runtime.Gosched()
			}
			continue
		}
		last = s
		if h.claimed.CompareAndSwap(false, true) {
			h.part()
			h.done.Store(true)
		}
	}
}

func (h *splitter) part() {
	if h.kind == 1 {
		h.sp.ForwardRows(h.sn, h.y, h.tmp, h.t, h.a, h.b)
	} else {
		h.sp.BackwardHigh(h.sn, h.y, h.tmp, h.acc[:h.a], h.t)
	}
}

// post offers the part (kind, t, [a, b)) to the helper.
func (h *splitter) post(kind, t, a, b int) {
	h.kind, h.t, h.a, h.b = kind, t, a, b
	h.done.Store(false)
	h.claimed.Store(false)
	h.seq.Add(1)
}

// wait returns when the posted part is done, running it here if the helper has not claimed it.
func (h *splitter) wait() {
	if h.claimed.CompareAndSwap(false, true) {
		h.part()
		return
	}
	for spins := 0; !h.done.Load(); spins++ {
		if spins&1023 == 1023 {
			runtime.Gosched()
		}
	}
}

// stop ends the helper goroutine (nil: nothing to do).
func (h *splitter) stop() {
	if h != nil {
		h.quit.Store(true)
	}
}

// splits reports whether supernode t's step is split (a splitter exists and the backend
// splits the step).
func (h *splitter) splits(s *Symbolic, t int) bool {
	if h == nil {
		return false
	}
	w := int(s.sFirst[t+1] - s.sFirst[t])
	return h.sp.Splits(w, int(s.sRowPtr[t+1]-s.sRowPtr[t])-w)
}

// forward performs supernode t's forward step on f's panels: the diagonal block here, then
// the below-rows halved between this goroutine (tmp) and the helper.
func (h *splitter) forward(f *Factor, t int, tmp []float64) {
	s := f.s
	w := int(s.sFirst[t+1] - s.sFirst[t])
	mu := int(s.sRowPtr[t+1]-s.sRowPtr[t]) - w
	h.sn = &f.sn
	h.sp.ForwardDiag(h.sn, h.y, t)
	half := mu / 2
	h.post(1, t, half, mu)
	h.sp.ForwardRows(h.sn, h.y, tmp, t, 0, half)
	h.wait()
}

// backward performs supernode t's backward step on f's panels: the helper sums the upper half
// of the below-rows into its accumulator while this goroutine (tmp) subtracts the lower half
// from the columns, then the accumulator is added and the diagonal block solved here.
func (h *splitter) backward(f *Factor, t int, tmp []float64) {
	s := f.s
	w := int(s.sFirst[t+1] - s.sFirst[t])
	if cap(h.acc) < w {
		h.acc = make([]float64, w)
		if h.accp != nil {
			*h.accp = h.acc
		}
	}
	h.sn = &f.sn
	h.post(2, t, w, 0)
	h.sp.BackwardLow(h.sn, h.y, tmp, t)
	h.wait()
	h.sp.BackwardFinish(h.sn, h.y, h.acc[:w], t)
}
