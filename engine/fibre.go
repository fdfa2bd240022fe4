package engine

import (
	"math"

	"glle/kernels"
)

// fibreRankTol is the relative eigenvalue threshold of the local Gram matrix below which a
// direction counts as absent when deciding the rank r_i of the centred neighbourhood
// (a singular-value ratio of 1e-5). It is scale free, so x -> c x + b keeps every decision.
const fibreRankTol = 1e-10

// fibreBasis computes an orthonormal basis V_i (k x r, stored column after column: vec a at
// dst[a*k:(a+1)*k]) of the row space of the centred neighbour matrix, i.e. of Z_i restricted to
// 1-perp, and returns r. ws.z must hold the neighbour offsets (k x d). The fibre of EM's
// posterior, F_i = {w : 1^T w = 1, Z_i w = Z_i w_i^LLE}, is w_i^LLE + null([1^T; Z_i]), and its
// projector is Pi_i = (I - 11^T/k) - V_i V_i^T (math notes, Section 3).
//
// When the fibre is a single point (r = k-1, d >= k-1), the local-PCA fallback keeps only the
// p leading local directions: r = p and V_i spans them, so the p-dimensional local tangent
// reconstruction is pinned while the minor directions carry the randomness.
func fibreBasis(ws *work, dst []float64, p int) (r int, fallback bool) {
	k, d := ws.k, ws.d
	z := ws.z
	// Centre the offsets over the neighbours (this removes the 1 direction).
	mean := ws.x1[:d]
	for c := range mean {
		mean[c] = 0
	}
	for j := 0; j < k; j++ {
		for c := 0; c < d; c++ {
			mean[c] += z[j*d+c]
		}
	}
	for c := range mean {
		mean[c] /= float64(k)
	}
	for j := 0; j < k; j++ {
		for c := 0; c < d; c++ {
			z[j*d+c] -= mean[c]
		}
	}
	if d < k {
		// d x d Gram Xc^T Xc: eigenvectors u_a give v_a = Xc u_a / sqrt(lambda_a).
		c := ws.c[:d*d]
		kernels.Scatter(c, z, k, d)
		kernels.SymEigenWork(c, d, ws.e, ws.v, ws.eig)
		r = rankOf(ws.e[:d])
		if r == k-1 {
			r, fallback = p, true
		}
		for a := 0; a < r; a++ {
			inv := 1 / math.Sqrt(ws.e[a])
			va := dst[a*k : a*k+k]
			for j := 0; j < k; j++ {
				s := 0.0
				for b := 0; b < d; b++ {
					s += z[j*d+b] * ws.v[b*d+a]
				}
				va[j] = s * inv
			}
		}
		return r, fallback
	}
	// k x k Gram Xc Xc^T: its eigenvectors are the v_a directly.
	c := ws.c[:k*k]
	kernels.Gram(c, z, k, d)
	kernels.SymEigenWork(c, k, ws.e, ws.v, ws.eig)
	r = rankOf(ws.e[:k])
	if r >= k-1 {
		r, fallback = p, true
	}
	for a := 0; a < r; a++ {
		va := dst[a*k : a*k+k]
		for j := 0; j < k; j++ {
			va[j] = ws.v[j*k+a]
		}
	}
	return r, fallback
}

// rankOf counts the eigenvalues (descending) above fibreRankTol times the largest.
func rankOf(e []float64) int {
	if len(e) == 0 || !(e[0] > 0) {
		return 0
	}
	cut := fibreRankTol * e[0]
	r := 0
	for _, v := range e {
		if v > cut {
			r++
		}
	}
	return r
}

// projectFibre overwrites xi with Pi xi = xi - mean(xi) - V (V^T xi) for the basis from
// fibreBasis (r orthonormal vectors of length k, orthogonal to the constant vector). For r = 3
// (three-dimensional data) the three coefficients v_a . xi are summed in one sweep and
// subtracted in another; otherwise one vector after the other.
func projectFibre(xi, basis []float64, k, r int) {
	xi = xi[:k]
	m := 0.0
	for _, v := range xi {
		m += v
	}
	m /= float64(k)
	for j := range xi {
		xi[j] -= m
	}
	if r == 3 {
		v0, v1, v2 := basis[:k], basis[k:2*k], basis[2*k:3*k]
		s0, s1, s2 := 0.0, 0.0, 0.0
		for j, x := range xi {
			s0 += v0[j] * x
			s1 += v1[j] * x
			s2 += v2[j] * x
		}
		for j := range xi {
			xi[j] -= s0*v0[j] + s1*v1[j] + s2*v2[j]
		}
		return
	}
	for a := 0; a < r; a++ {
		va := basis[a*k : a*k+k]
		s := 0.0
		for j, v := range va {
			s += v * xi[j]
		}
		for j, v := range va {
			xi[j] -= s * v
		}
	}
}
