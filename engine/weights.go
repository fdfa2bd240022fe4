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
	ud   []float64 // EMPaper's left singular vectors (paperBases), grown on first use
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

// dlamchE is the unit round-off of float64 (LAPACK's dlamch('E')).
const dlamchE = 0x1p-53

// growRidge raises the ridge r of a k x k Gram matrix of trace tr to a level where the
// factorization and the solve are stable; only a ridge far below the Gram matrix's scale
// needs it.
func growRidge(r float64, k int, tr float64) float64 {
	return math.Max(r*10, float64(k)*1e-15*math.Max(tr, 1e-300))
}

// lleWeights writes w_i of paper Eq. (9), w = (G + R I)^{-1} 1 / (1^T (G + R I)^{-1} 1), for
// the point xi into dst (length k), leaving the offsets Z (k x d) in ws.z. It reports whether
// the Gram matrix was zero (all neighbours at the point itself) and whether the ridged matrix
// needed extra regularization to be factored.
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
		if attempt > 60 {
			panic("engine: ridged Gram matrix cannot be factored")
		}
		copy(a, src)
		for j := 0; j < n; j++ {
			a[j*n+j] += r
		}
		if !kernels.Cholesky(a, n) {
			extra, r = true, growRidge(r, k, tr)
			continue
		}
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
			mag, big := 0.0, 0.0
			for j := range w {
				s := 1.0
				for c, v := range z[j*d : j*d+d] {
					s -= v * u[c]
				}
				w[j] = s
				mag, big = math.Max(mag, math.Abs(1-s)), math.Max(big, math.Abs(s)) // |Z u|_j, |w_j|
			}
			// When the neighbours' offsets lie on a hyperplane that misses the point (1 in
			// the range of Z: quantised data), 1 - Z u is of order R / sigma^2 and a ridge
			// far below the Gram matrix's scale leaves only its round-off: the weights were
			// 0/0 (NaN) for reg 1e-16 before session 32. Require 1e8 ulps of headroom, so that
			// the round-off left in the weights is below 1e-8 of them (the grown ridge then
			// moves them by about as much).
			if !(big > 1e8*dlamchE*math.Max(1, mag)) {
				extra, r = true, growRidge(r, k, tr)
				continue
			}
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
		if s == 0 || math.IsInf(s, 0) || math.IsNaN(s) {
			extra, r = true, growRidge(r, k, tr)
			continue
		}
		for j := range w {
			w[j] /= s
		}
		break
	}
	return zeroGram, extra
}
