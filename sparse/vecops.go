package sparse

import (
	"context"
	"math"

	"glle/parallel"
)

// vecOps runs the eigensolver's long-vector operations on the worker pool. Rows are split into
// fixed chunks of vecChunk; reductions sum one partial per chunk in chunk order, so every
// result has the same bits for any worker count (and equals the sequential chunked loop).
type vecOps struct {
	workers int
	part    []float64 // per-chunk partial sums
}

// vecChunk is the row chunk of vecOps: a chunk of the vector being orthogonalised stays in the
// L1 cache while the basis vectors stream past.
const vecChunk = 512

// vecParMin is the vector length below which vecOps runs the chunks on the calling goroutine
// (same chunks, same order, same bits).
const vecParMin = 1 << 15

func (o *vecOps) each(n int, fn func(chunk, lo, hi int)) {
	if n < vecParMin || o.workers <= 1 {
		for c, lo := 0, 0; lo < n; c, lo = c+1, lo+vecChunk {
			fn(c, lo, min(lo+vecChunk, n))
		}
		return
	}
	_ = parallel.Chunks(context.Background(), n, vecChunk, o.workers, func(_ context.Context, _, c, lo, hi int) error {
		fn(c, lo, hi)
		return nil
	})
}

func (o *vecOps) partials(n, width int) []float64 {
	need := parallel.NumChunks(n, vecChunk) * width
	if cap(o.part) < need {
		o.part = make([]float64, need)
	}
	return o.part[:need]
}

// dot returns x . y.
func (o *vecOps) dot(x, y []float64) float64 {
	n := len(x)
	p := o.partials(n, 1)
	o.each(n, func(c, lo, hi int) { p[c] = dot(x[lo:hi], y[lo:hi]) })
	s := 0.0
	for _, v := range p {
		s += v
	}
	return s
}

// norm returns ||x||.
func (o *vecOps) norm(x []float64) float64 { return math.Sqrt(o.dot(x, x)) }

// axpy sets y += a x.
func (o *vecOps) axpy(a float64, x, y []float64) {
	o.each(len(x), func(_, lo, hi int) { axpy(a, x[lo:hi], y[lo:hi]) })
}

// scal sets x *= a.
func (o *vecOps) scal(a float64, x []float64) {
	o.each(len(x), func(_, lo, hi int) { scal(a, x[lo:hi]) })
}

// project sets c[t] = V_t . v for the first len(c) vectors V_t = V[t*n:(t+1)*n].
func (o *vecOps) project(c, V []float64, n int, v []float64) {
	m := len(c)
	p := o.partials(n, m)
	o.each(n, func(ch, lo, hi int) {
		pc := p[ch*m : ch*m+m]
		vc := v[lo:hi]
		for t := range pc {
			pc[t] = dot(V[t*n+lo:t*n+hi], vc)
		}
	})
	clear(c)
	for ch := 0; ch*m < len(p); ch++ {
		for t, pt := range p[ch*m : ch*m+m] {
			c[t] += pt
		}
	}
}

// subtract sets v -= sum_t c[t] V_t.
func (o *vecOps) subtract(v, V []float64, n int, c []float64) {
	o.each(n, func(_, lo, hi int) {
		vc := v[lo:hi]
		for t, ct := range c {
			axpy(-ct, V[t*n+lo:t*n+hi], vc)
		}
	})
}

// combine sets dst = sum_q coef(q) V_q over the first m vectors.
func (o *vecOps) combine(dst, V []float64, n, m int, coef func(q int) float64) {
	o.each(n, func(_, lo, hi int) {
		d := dst[lo:hi]
		clear(d)
		for q := 0; q < m; q++ {
			axpy(coef(q), V[q*n+lo:q*n+hi], d)
		}
	})
}

// mulVec sets dst = A x for a CSRMatrix (rows in parallel), else calls a.MulVec.
func (o *vecOps) mulVec(a SymMatrix, dst, x []float64) {
	c, ok := a.(CSRMatrix)
	if !ok {
		a.MulVec(dst, x)
		return
	}
	o.each(c.Dim, func(_, lo, hi int) { c.mulRows(dst, x, lo, hi) })
}
