package engine

import (
	"math"

	"glle/kernels"
)

// work is one worker's scratch space, sized once for (k, d) and reused for every point:
// per-point loops allocate nothing.
type work struct {
	k, d int
	z    []float64 // k x d neighbour offsets (or raw neighbour coordinates)
	g    []float64 // k x k
	a    []float64 // k x k
	t    []float64 // k x k + k (Perp.Restrict)
	v    []float64 // max(k,d) x max(k,d) eigenvectors / right singular vectors
	e    []float64 // max(k,d) eigenvalues / singular values
	c    []float64 // max(k,d) x max(k,d) small Gram
	x1   []float64 // max(k,d)
	x2   []float64 // max(k,d)
	xi   []float64 // k normals
	r    []float64 // (k-1) x (k-1)
}

func newWork(k, d int) *work {
	m := k
	if d > m {
		m = d
	}
	return &work{
		k: k, d: d,
		z:  make([]float64, k*d),
		g:  make([]float64, k*k),
		a:  make([]float64, k*k),
		t:  make([]float64, k*(k+1)),
		v:  make([]float64, m*m),
		e:  make([]float64, m),
		c:  make([]float64, m*m),
		x1: make([]float64, m),
		x2: make([]float64, m),
		xi: make([]float64, k),
		r:  make([]float64, k*k),
	}
}

// ridge returns R_i for a Gram matrix of trace tr (Eq. (9) with scikit-learn's ridge).
func ridge(tr, reg float64, mode RegMode) float64 {
	if mode == RegAbsolute || tr <= 0 {
		return reg
	}
	return reg * tr
}

// lleWeights writes w_i of paper Eq. (9), w = (G + R I)^{-1} 1 / (1^T (G + R I)^{-1} 1), for
// the point xi into dst (length k). G_i (Eq. (8)) is left in ws.g and the offsets in ws.z. It reports
// whether the Gram matrix was zero (all neighbours at the point itself) and whether the
// ridged Gram matrix needed extra regularization to be factored.
func lleWeights(ws *work, dst []float64, x []float64, d int, xi []float64, nbr []int32, reg float64, mode RegMode) (zeroGram, extra bool) {
	k := ws.k
	kernels.NeighborOffsets(ws.z, x, d, xi, nbr)
	kernels.Gram(ws.g, ws.z, k, d)
	tr := kernels.Trace(ws.g, k)
	r := ridge(tr, reg, mode)
	zeroGram = tr == 0
	for attempt := 0; ; attempt++ {
		copy(ws.a, ws.g[:k*k])
		for j := 0; j < k; j++ {
			ws.a[j*k+j] += r
		}
		if kernels.Cholesky(ws.a, k) {
			break
		}
		// Only an absolute ridge far below the Gram matrix's scale gets here: grow it
		// to a level where the factorization is stable.
		extra = true
		r = math.Max(r*10, float64(k)*1e-15*math.Max(tr, 1e-300))
		if attempt > 40 {
			panic("engine: ridged Gram matrix cannot be factored")
		}
	}
	for j := range dst[:k] {
		dst[j] = 1
	}
	kernels.CholSolve(ws.a, k, dst[:k])
	s := 0.0
	for _, v := range dst[:k] {
		s += v
	}
	for j := range dst[:k] {
		dst[j] /= s
	}
	return zeroGram, extra
}
