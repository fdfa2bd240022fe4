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
	v    []float64 // k x k eigenvectors / right singular vectors (d x d when d < k)
	e    []float64 // k eigenvalues / singular values (d when d < k)
	c    []float64 // k x max(k,d): a small Gram (d x d when d < k, else k x k) or X_i (d x k)
	x1   []float64 // max(k,d)
	x2   []float64 // max(k,d)
	xi   []float64 // k normals
	r    []float64 // (k-1) x (k-1)
	ud   []float64 // EMPaper's left singular vectors (paperBases), grown on first use
	eig  []float64 // kernels.SymEigenWork's workspace for order k (or d < k)
}

// The d x d matrices (Woodbury's Z^T Z, the fibre's and em-paper's small Grams) are formed
// only when d < k, so no buffer is d x d for d >= k: sized max(k,d)^2 before session 34,
// each worker's took 3.2 GB for 20000-dimensional data (a user trial).
func newWork(k, d int) *work {
	m := max(k, d)
	return &work{
		k: k, d: d,
		z:   make([]float64, k*d),
		g:   make([]float64, k*k),
		a:   make([]float64, k*k),
		t:   make([]float64, k*(k+1)),
		v:   make([]float64, k*k),
		e:   make([]float64, k),
		c:   make([]float64, k*m),
		x1:  make([]float64, m),
		x2:  make([]float64, m),
		xi:  make([]float64, k),
		r:   make([]float64, k*k),
		eig: make([]float64, kernels.SymEigenWorkLen(k)),
	}
}

// ridge returns R_i for a Gram matrix of trace tr (Eq. (9) with scikit-learn's ridge).
func ridge(tr, reg float64, mode RegMode) float64 {
	if mode == RegAbsolute || tr <= 0 {
		return reg
	}
	return reg * tr
}

// dlamchE is the unit round-off of float64 (LAPACK's dlamch('E')).
const dlamchE = 0x1p-53

// minWoodbury is the headroom per weight lleWeights requires of the Woodbury numerator
// 1 - Z u: c / (1 - c) with c = 1e8 dlamchE, the solution of m = c (1 + m) (solveWeights).
const minWoodbury = 1e8 * dlamchE / (1 - 1e8*dlamchE)

// growRidge raises the ridge r of a k x k Gram matrix of trace tr to a level where the
// factorization and the solve are stable; only a ridge far below the Gram matrix's scale
// needs it.
func growRidge(r float64, k int, tr float64) float64 {
	return math.Max(r*10, float64(k)*1e-15*math.Max(tr, 1e-300))
}

// lleWeights writes w_i of paper Eq. (9), w = (G + R I)^{-1} 1 / (1^T (G + R I)^{-1} 1), for
// the point xi into dst (length k), leaving the offsets Z (k x d) in ws.z. It reports whether
// the Gram matrix was zero (all neighbours at the point itself) and whether the ridge had to
// grow: for the factorization, or for the solve's headroom (solveWeights).
//
// With G = Z Z^T (Eq. (8)) of rank at most d, the Woodbury identity gives
//
//	(Z Z^T + R I_k)^{-1} 1 = (1 - Z (Z^T Z + R I_d)^{-1} Z^T 1) / R,
//
// so for d < k the weights come from a d x d system instead of a k x k one (the factor 1/R
// cancels in the normalization). tr(Z^T Z) = tr(G), so the ridge R is the same.
func lleWeights(ws *work, dst []float64, x []float64, d int, xi []float64, nbr []int32, reg float64, mode RegMode) (zeroGram, extra bool) {
	k := ws.k
	kernels.NeighborOffsets(ws.z, x, d, xi, nbr)
	// The unridged matrix: Z^T Z (d x d) in ws.c, or G (k x k) in ws.g.
	n, src := k, ws.g[:k*k]
	if d < k {
		n, src = d, ws.c[:d*d]
		kernels.Scatter(src, ws.z, k, d)
	} else {
		kernels.Gram(src, ws.z, k, d)
	}
	tr := kernels.Trace(src, n)
	r := ridge(tr, reg, mode)
	zeroGram = tr == 0
	a := ws.a[:n*n]
	w := dst[:k]
	for attempt := 0; ; attempt++ {
		copy(a, src)
		for j := 0; j < n; j++ {
			a[j*n+j] += r
		}
		if kernels.Cholesky(a, n) {
			break
		}
		// Only an absolute ridge far below the Gram matrix's scale gets here: grow it
		// to a level where the factorization is stable.
		extra, r = true, growRidge(r, k, tr)
		if attempt > 40 {
			panic("engine: ridged Gram matrix cannot be factored")
		}
	}
	for attempt := 0; ; attempt++ {
		if solveWeights(ws, a, w, d, k) {
			return zeroGram, extra
		}
		// The solve lacked headroom (below): grow the ridge, factor again and retry.
		if attempt > 60 {
			panic("engine: LLE weights cannot be solved at any ridge")
		}
		extra = true
		for {
			r = growRidge(r, k, tr)
			copy(a, src)
			for j := 0; j < n; j++ {
				a[j*n+j] += r
			}
			if kernels.Cholesky(a, n) {
				break
			}
		}
	}
}

// solveWeights writes the normalised weights of Eq. (9) into w from the Cholesky factor a of
// the ridged matrix (d x d Woodbury form for d < k, else k x k), the offsets in ws.z. It
// reports false, w unusable, when the ridge left the solve too little headroom. The
// unnormalised Woodbury weights 1 - Z u sum to s = R 1^T (G + R I)^{-1} 1 > 0, at least the
// squared component of 1 off the range of Z. When the neighbours' offsets lie on a
// hyperplane that misses the point (1 in the range of Z: quantised data), s is of order
// R / sigma^2, and a ridge far below the Gram matrix's scale leaves only the round-off of
// each 1 - (Z u)_j, about eps max(1, |Z u|): the weights were 0/0 (NaN) for reg 1e-16 before
// session 32. The sum is required to exceed k minWoodbury (1e8 ulps per weight), which costs
// nothing per weight (a per-weight maximum made the solve 20% slower, session 32); a NaN or
// infinite sum fails too.
func solveWeights(ws *work, a, w []float64, d, k int) bool {
	floor := 0.0
	if d < k {
		u := ws.x1[:d] // (Z^T Z + R I)^{-1} Z^T 1
		for c := range u {
			u[c] = 0
		}
		z := ws.z[:k*d]
		for j := 0; j < k; j++ {
			for c, v := range z[j*d : j*d+d] {
				u[c] += v
			}
		}
		kernels.CholSolve(a, d, u)
		for j := range w {
			s := 1.0
			for c, v := range z[j*d : j*d+d] {
				s -= v * u[c]
			}
			w[j] = s
		}
		floor = float64(k) * minWoodbury
	} else {
		for j := range w {
			w[j] = 1
		}
		kernels.CholSolve(a, k, w)
	}
	s := 0.0
	for _, v := range w {
		s += v
	}
	if !(s > floor && s <= math.MaxFloat64) { // NaN, Inf, or too little headroom
		return false
	}
	for j := range w {
		w[j] /= s
	}
	return true
}
