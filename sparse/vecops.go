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
	coef    []float64 // orth's coefficients of the pass being subtracted
	// consts[t] is the value of every entry of orth's basis vector t when that vector is
	// constant, else NaN (vectors beyond len(consts) are not constant).
	consts []float64
}

// setConsts records which of the leading basis vectors q are constant (see consts).
func (o *vecOps) setConsts(q [][]float64) {
	o.consts = o.consts[:0]
	for _, v := range q {
		c := math.NaN()
		if len(v) > 0 {
			c = v[0]
			for _, x := range v {
				if x != c {
					c = math.NaN()
					break
				}
			}
		}
		o.consts = append(o.consts, c)
	}
}

// dotConst is dot(x, y) for x whose every entry is c: the same products and partial sums.
func dotConst(c float64, y []float64) float64 {
	var s0, s1, s2, s3 float64
	i := 0
	for ; i+4 <= len(y); i += 4 {
		s0 += c * y[i]
		s1 += c * y[i+1]
		s2 += c * y[i+2]
		s3 += c * y[i+3]
	}
	for ; i < len(y); i++ {
		s0 += c * y[i]
	}
	return (s0 + s1) + (s2 + s3)
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

// sum returns the sum of x's entries.
func (o *vecOps) sum(x []float64) float64 {
	n := len(x)
	p := o.partials(n, 1)
	o.each(n, func(c, lo, hi int) {
		s := 0.0
		for _, v := range x[lo:hi] {
			s += v
		}
		p[c] = s
	})
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

// combine sets dst[t] = sum_q coef(q, t) V_q over the first m vectors, for every t, in one
// sweep over the rows (each chunk of the basis is read once for all of dst), and returns
// ||dst[t]|| summed over the chunks as norm sums them (the same bits as o.norm(dst[t])
// afterwards, without its sweeps).
func (o *vecOps) combine(dst [][]float64, V []float64, n, m int, coef func(q, t int) float64) []float64 {
	nt := len(dst)
	p := o.partials(n, nt)
	o.each(n, func(ch, lo, hi int) {
		for t, dt := range dst {
			d := dt[lo:hi]
			clear(d)
			for q := 0; q < m; q++ {
				axpy(coef(q, t), V[q*n+lo:q*n+hi], d)
			}
			p[ch*nt+t] = dot(d, d)
		}
	})
	norms := make([]float64, nt)
	for ch := 0; ch < len(p)/max(nt, 1); ch++ {
		for t := range norms {
			norms[t] += p[ch*nt+t]
		}
	}
	for t := range norms {
		norms[t] = math.Sqrt(norms[t])
	}
	return norms
}

// residualNorm returns ||au - lambda u|| without storing the difference: the same bits as
// o.axpy(-lambda, u, au) followed by o.norm(au), but au is left unchanged.
func (o *vecOps) residualNorm(au, u []float64, lambda float64) float64 {
	n := len(au)
	a := -lambda
	p := o.partials(n, 1)
	o.each(n, func(c, lo, hi int) {
		x, y := au[lo:hi], u[lo:hi]
		y = y[:len(x)]
		var s0, s1, s2, s3 float64
		i := 0
		for ; i+4 <= len(x); i += 4 {
			d0, d1, d2, d3 := x[i]+a*y[i], x[i+1]+a*y[i+1], x[i+2]+a*y[i+2], x[i+3]+a*y[i+3]
			s0 += d0 * d0
			s1 += d1 * d1
			s2 += d2 * d2
			s3 += d3 * d3
		}
		for ; i < len(x); i++ {
			d := x[i] + a*y[i]
			s0 += d * d
		}
		p[c] = (s0 + s1) + (s2 + s3)
	})
	s := 0.0
	for _, v := range p {
		s += v
	}
	return math.Sqrt(s)
}

// mulVecs sets dst[t] = A x[t] for every t: in one call when A can (a multiVecMatrix), else
// one mulVec each.
func (o *vecOps) mulVecs(a SymMatrix, dst, x [][]float64) {
	if mv, ok := a.(multiVecMatrix); ok {
		mv.MulVecs(dst, x)
		return
	}
	for t := range dst {
		o.mulVec(a, dst[t], x[t])
	}
}

// multiVecMatrix is a SymMatrix that multiplies several vectors in one pass over its entries.
type multiVecMatrix interface {
	MulVecs(dst, x [][]float64)
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

// orth makes v orthogonal to the vectors of basis (orthonormal; the first nq of them are the
// deflation vectors) with two classical Gram-Schmidt passes ("twice is enough") and a last
// projection off the deflation vectors, in four sweeps over the rows instead of seven: each
// chunk's subtraction is followed at once by the next pass's dot products, while the chunk and
// the basis rows it just read are still in cache. Reductions sum per-chunk partials in chunk
// order, so the result has the same bits for any worker count. c has room for len(basis).
func (o *vecOps) orth(v []float64, basis [][]float64, nq int, c []float64) {
	o.orthNorm(v, basis, nq, c, -1)
}

// orthNorm is orth that also returns basis[ia] . v before the orthogonalisation (the first
// pass's coefficient; 0 when ia < 0) and ||v|| after it, summed in the last sweep: the same
// bits as o.dot(basis[ia], v) before orth and o.norm(v) after it, without their two sweeps.
func (o *vecOps) orthNorm(v []float64, basis [][]float64, nq int, c []float64, ia int) (alpha, nrm float64) {
	n, m := len(v), len(basis)
	c = c[:m]
	p := o.partials(n, m)
	nch := parallel.NumChunks(n, vecChunk)
	sum := func(dst []float64, width int) {
		clear(dst)
		for ch := 0; ch < nch; ch++ {
			for t, pt := range p[ch*width : ch*width+width] {
				dst[t] += pt
			}
		}
	}
	// A constant vector (the deflated null vector of M, usually) is not read: its entry
	// stands in for it, with the same products and sums (the same bits).
	cst := o.consts
	dots := func(pc []float64, vc []float64, lo, hi int, bs [][]float64) {
		for t, b := range bs {
			if t < len(cst) && cst[t] == cst[t] {
				pc[t] = dotConst(cst[t], vc)
				continue
			}
			pc[t] = dot(b[lo:hi], vc)
		}
	}
	sub := func(vc []float64, lo, hi int, bs [][]float64, cs []float64) {
		for t, b := range bs {
			if t < len(cst) && cst[t] == cst[t] {
				p := -cs[t] * cst[t]
				for i := range vc {
					vc[i] += p
				}
				continue
			}
			axpy(-cs[t], b[lo:hi], vc)
		}
	}
	// Pass 1: the projections.
	o.each(n, func(ch, lo, hi int) { dots(p[ch*m:ch*m+m], v[lo:hi], lo, hi, basis) })
	sum(c, m)
	if ia >= 0 {
		alpha = c[ia]
	}
	// Pass 1's subtraction with pass 2's projections.
	if cap(o.coef) < m {
		o.coef = make([]float64, m)
	}
	c1 := o.coef[:m]
	copy(c1, c)
	o.each(n, func(ch, lo, hi int) {
		vc := v[lo:hi]
		sub(vc, lo, hi, basis, c1)
		dots(p[ch*m:ch*m+m], vc, lo, hi, basis)
	})
	sum(c, m)
	// Pass 2's subtraction with the last projections on the deflation vectors (or, without
	// them, the squared norms of the finished chunks).
	copy(c1, c)
	q := basis[:nq]
	p = p[:nch*max(nq, 1)]
	o.each(n, func(ch, lo, hi int) {
		vc := v[lo:hi]
		sub(vc, lo, hi, basis, c1)
		if nq > 0 {
			dots(p[ch*nq:ch*nq+nq], vc, lo, hi, q)
		} else {
			p[ch] = dot(vc, vc)
		}
	})
	if nq > 0 {
		sum(c[:nq], nq)
		o.each(n, func(ch, lo, hi int) {
			vc := v[lo:hi]
			sub(vc, lo, hi, q, c[:nq])
			p[ch] = dot(vc, vc)
		})
	}
	ss := 0.0
	for _, v := range p[:nch] {
		ss += v
	}
	return alpha, math.Sqrt(ss)
}
