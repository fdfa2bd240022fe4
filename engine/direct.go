package engine

import (
	"context"
	"math"
	"fmt"
	"time"

	"glle/kernels"
	"glle/parallel"
)

// fitDirect computes the default direct-sampling model (math notes, Section 4): the paper's
// objective ||x_i - X_i w||^2 + ||y_i - Y_i w||^2 (Eq. (34)) read in local offsets as a Gaussian
// likelihood with one noise variance per space, each estimated by maximum likelihood from the
// LLE fit, and LLE's ridge as prior precision:
//
//	s_x^2 = sum_i ||Z_i w_i^LLE||^2 / (n d),   s_y^2 = sum_i ||V_i w_i^LLE||^2 / (n p),
//	A_i = G_i / s_x^2 + V_i^T V_i / s_y^2 + (R_i / s_x^2) I,
//	Gamma_i = Q (Q^T A_i Q)^{-1} Q^T  (N(0, A_i^{-1}) conditioned on 1^T w = 0),
//	w_i ~ N(w_i^LLE, a Gamma_i)  (the relaxed mean of Eq. (37)).
//
// Q is the fixed orthonormal basis of 1-perp (kernels.Perp); the packed Cholesky factor L_i of
// Q^T A_i Q is stored, and a draw is w_i^LLE + sqrt(a) Q L_i^{-T} xi: a deterministic function of
// A_i (no eigenvector basis), scale free and translation invariant.
func (m *Model) fitDirect(ctx context.Context, s Settings, prog func(Progress)) error {
	n, d, k, p := m.N, m.D, m.K, m.Dim
	t0 := time.Now()
	prog(Progress{Stage: "direct"})
	y := m.Embedding.RawMatrix().Data
	const chunk = 1024
	nc := parallel.NumChunks(n, chunk)
	sx, sy := make([]float64, nc), make([]float64, nc)
	err := parallel.Chunks(ctx, n, chunk, m.st.workers, func(ctx context.Context, _, ch, lo, hi int) error {
		ax, ay := 0.0, 0.0
		for i := lo; i < hi; i++ {
			ax += residual2(m.st.x, d, i, m.Neighbors[i*k:(i+1)*k], m.Weights[i*k:(i+1)*k])
			ay += residual2(y, p, i, m.Neighbors[i*k:(i+1)*k], m.Weights[i*k:(i+1)*k])
		}
		sx[ch], sy[ch] = ax, ay
		return nil
	})
	if err != nil {
		return err
	}
	sx2, sy2 := 0.0, 0.0
	for ch := 0; ch < nc; ch++ {
		sx2 += sx[ch]
		sy2 += sy[ch]
	}
	sx2 /= float64(n * d)
	sy2 /= float64(n * p)
	if !(sx2 > 0) || !(sy2 > 0) {
		return &DegenerateError{Kind: "exact-reconstruction", Count: n, Example: -1,
			Msg: fmt.Sprintf("direct: the LLE reconstruction is exact (s_x^2 = %g, s_y^2 = %g), so the maximum-likelihood temperatures are undefined: use the em method", sx2, sy2)}
	}
	// Reported in the data's units (the fit works on data rescaled by 2^-scaleExp).
	m.Report.SX2, m.Report.SY2 = math.Ldexp(sx2, 2*m.st.scaleExp), sy2
	km1 := k - 1
	stride := km1 * k / 2
	m.st.chol = make([]float64, n*stride)
	bad := make([]int, parallel.Workers(m.st.workers))
	err = parallel.For(ctx, n, m.st.workers, func(ctx context.Context, w, lo, hi int) error {
		ws := newWork(k, max(d, p))
		for i := lo; i < hi; i++ {
			if !directPoint(ws, &m.st.perp, m.st.x, d, y, p, i, m.Neighbors[i*k:(i+1)*k], s.Reg, s.RegMode, sx2, sy2, m.st.chol[i*stride:(i+1)*stride]) {
				bad[w]++
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	nb := 0
	for _, b := range bad {
		nb += b
	}
	if nb > 0 {
		return &DegenerateError{Kind: "singular-gamma", Count: nb, Example: -1,
			Msg: fmt.Sprintf("direct: the precision matrix could not be factored for %d points: increase reg", nb)}
	}
	m.Report.stage("direct", t0)
	prog(Progress{Stage: "direct", Final: true})
	return nil
}

// residual2 returns ||sum_j w_j (v_{nbr_j} - v_i)||^2 for row-major vectors v of width d.
func residual2(v []float64, d, i int, nbr []int32, w []float64) float64 {
	s := 0.0
	vi := v[i*d : i*d+d]
	for c := 0; c < d; c++ {
		r := 0.0
		for j, nb := range nbr {
			r += w[j] * (v[int(nb)*d+c] - vi[c])
		}
		s += r * r
	}
	return s
}

// directPoint builds A_i, restricts it to 1-perp and writes the packed Cholesky factor of
// Q^T A_i Q into dst. It returns false when the factorization fails.
func directPoint(ws *work, perp *kernels.Perp, x []float64, d int, y []float64, p, i int, nbr []int32, reg float64, mode RegMode, sx2, sy2 float64, dst []float64) bool {
	k := ws.k
	kernels.NeighborOffsets(ws.z, x, d, x[i*d:(i+1)*d], nbr)
	kernels.Gram(ws.g, ws.z, k, d)
	r := ridge(kernels.Trace(ws.g, k), reg, mode)
	kernels.NeighborOffsets(ws.z, y, p, y[i*p:(i+1)*p], nbr)
	kernels.Gram(ws.a, ws.z, k, p)
	for j := 0; j < k*k; j++ {
		ws.a[j] = ws.g[j]/sx2 + ws.a[j]/sy2
	}
	for j := 0; j < k; j++ {
		ws.a[j*k+j] += r / sx2
	}
	km1 := k - 1
	perp.Restrict(ws.r, ws.a, ws.t)
	if !kernels.Cholesky(ws.r, km1) {
		return false
	}
	q := 0
	for a := 0; a < km1; a++ {
		for b := 0; b <= a; b++ {
			dst[q] = ws.r[a*km1+b]
			q++
		}
	}
	return true
}

// ltSolvePacked overwrites b with L^{-T} b for the packed lower-triangular L (row a holds
// L[a][0..a]).
func ltSolvePacked(l []float64, n int, b []float64) {
	for i := n - 1; i >= 0; i-- {
		s := b[i]
		for r := i + 1; r < n; r++ {
			s -= l[r*(r+1)/2+i] * b[r]
		}
		b[i] = s / l[i*(i+1)/2+i]
	}
}

// lSolvePacked overwrites b with L^{-1} b for the packed lower-triangular L.
func lSolvePacked(l []float64, n int, b []float64) {
	for i := 0; i < n; i++ {
		s := b[i]
		row := l[i*(i+1)/2:]
		for c := 0; c < i; c++ {
			s -= row[c] * b[c]
		}
		b[i] = s / row[i]
	}
}
