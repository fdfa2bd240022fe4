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
// scratch of length k*(k+1). a is left unchanged.
func (p *Perp) Restrict(dst, a, tmp []float64) {
	k := p.k
	if len(tmp) < k*(k+1) || len(a) < k*k || len(dst) < (k-1)*(k-1) {
		panic("kernels: restrict shape mismatch")
	}
	h, t := tmp[:k*k], tmp[k*k:k*k+k]
	copy(h, a[:k*k])
	// H A H: reflect every column, then every row. The columns' coefficients
	// t_c = scale sum_r u_r A[r][c] are summed over r in increasing order for all columns at
	// once, row by row (contiguous reads, k independent sums), which gives the same bits as
	// one column at a time.
	clear(t)
	for r, ur := range p.u {
		for c, v := range h[r*k : r*k+k] {
			t[c] += ur * v
		}
	}
	for c := range t {
		t[c] *= p.scale
	}
	for r, ur := range p.u {
		hr := h[r*k : r*k+k]
		for c, tc := range t {
			hr[c] -= tc * ur
		}
	}
	// Then every row, four at a time (independent chains; each row as reflect computes it).
	// Row 0 of H A H is not part of Q^T A Q.
	u, sc := p.u, p.scale
	r := 1
	for ; r+3 < k; r += 4 {
		h0, h1 := h[r*k:r*k+k], h[(r+1)*k:(r+1)*k+k]
		h2, h3 := h[(r+2)*k:(r+2)*k+k], h[(r+3)*k:(r+3)*k+k]
		h0, h1, h2, h3 = h0[:len(u)], h1[:len(u)], h2[:len(u)], h3[:len(u)]
		t0, t1, t2, t3 := 0.0, 0.0, 0.0, 0.0
		for i, v := range u {
			t0 += v * h0[i]
			t1 += v * h1[i]
			t2 += v * h2[i]
			t3 += v * h3[i]
		}
		t0, t1, t2, t3 = t0*sc, t1*sc, t2*sc, t3*sc
		for i, v := range u {
			h0[i] -= t0 * v
			h1[i] -= t1 * v
			h2[i] -= t2 * v
			h3[i] -= t3 * v
		}
	}
	for ; r < k; r++ {
		p.reflect(h[r*k : r*k+k])
	}
	for r := 1; r < k; r++ {
		copy(dst[(r-1)*(k-1):r*(k-1)], h[r*k+1:r*k+k])
	}
}
