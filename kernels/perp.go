package kernels

import "math"

// The sum-to-one constraint 1^T w = 1 makes every weight perturbation live in 1-perp, the
// orthogonal complement of the constant vector. Perp is an orthonormal basis Q (k x (k-1)) of
// 1-perp given implicitly by the Householder reflector H = I - 2 u u^T / (u^T u),
// u = 1 + sqrt(k) e_1: H is symmetric orthogonal, H e_1 = -1/sqrt(k), and its last k-1 columns
// span 1-perp. Applying Q or Q^T costs O(k).
type Perp struct {
	k     int
	u     []float64
	scale float64 // 2 / (u^T u)
}

// NewPerp returns the 1-perp basis for dimension k.
func NewPerp(k int) Perp {
	u := make([]float64, k)
	for i := range u {
		u[i] = 1
	}
	u[0] += math.Sqrt(float64(k))
	uu := 0.0
	for _, v := range u {
		uu += v * v
	}
	return Perp{k: k, u: u, scale: 2 / uu}
}

// reflect overwrites x (length k) with H x.
func (p *Perp) reflect(x []float64) {
	t := 0.0
	for i, v := range p.u {
		t += v * x[i]
	}
	t *= p.scale
	for i, v := range p.u {
		x[i] -= t * v
	}
}

// ToPerp writes dst (length k-1) = Q^T x for x of length k; tmp is scratch of length k.
func (p *Perp) ToPerp(dst, x, tmp []float64) {
	copy(tmp[:p.k], x)
	p.reflect(tmp)
	copy(dst[:p.k-1], tmp[1:p.k])
}

// FromPerp writes dst (length k) = Q z for z of length k-1.
func (p *Perp) FromPerp(dst, z []float64) {
	dst[0] = 0
	copy(dst[1:p.k], z[:p.k-1])
	p.reflect(dst)
}

// Restrict writes dst ((k-1) x (k-1)) = Q^T A Q for the symmetric k x k matrix a; tmp is
// scratch of length k*k. a is left unchanged.
func (p *Perp) Restrict(dst, a, tmp []float64) {
	k := p.k
	copy(tmp[:k*k], a[:k*k])
	// H A H: reflect every column, then every row.
	for c := 0; c < k; c++ {
		t := 0.0
		for r := 0; r < k; r++ {
			t += p.u[r] * tmp[r*k+c]
		}
		t *= p.scale
		for r := 0; r < k; r++ {
			tmp[r*k+c] -= t * p.u[r]
		}
	}
	for r := 0; r < k; r++ {
		p.reflect(tmp[r*k : r*k+k])
	}
	for r := 1; r < k; r++ {
		copy(dst[(r-1)*(k-1):r*(k-1)], tmp[r*k+1:r*k+k])
	}
}
