package engine

import (
	"context"
	"fmt"
	"math"
	"time"

	"glle/kernels"
	"glle/parallel"
)

// fitDirect computes the default direct-sampling model (math notes, Section 4): the paper's
// objective ||x_i - X_i w||^2 + ||y_i - Y_i w||^2 (Eq. (32)) read in local offsets as a Gaussian
// likelihood with one noise variance per space, each estimated by maximum likelihood from the
// LLE fit, and LLE's ridge as prior precision:
//
//	s_x^2 = sum_i ||Z_i w_i^LLE||^2 / (n d),   s_y^2 = sum_i ||V_i w_i^LLE||^2 / (n p),
//	A_i = G_i / s_x^2 + V_i^T V_i / s_y^2 + (R_i / s_x^2) I,
//	Gamma_i = Q (Q^T A_i Q)^{-1} Q^T  (N(0, A_i^{-1}) conditioned on 1^T w = 0),
//	w_i ~ N(w_i^LLE, a Gamma_i)  (the relaxed mean of Eq. (36)).
//
// Q is the fixed orthonormal basis of 1-perp (kernels.Perp); the packed Cholesky factor L_i of
// Q^T A_i Q is stored, and a draw is w_i^LLE + sqrt(a) Q L_i^{-T} xi: a deterministic function of
// A_i (no eigenvector basis), scale free and translation invariant.
func (m *Model) fitDirect(ctx context.Context, s Settings, prog func(Progress)) error {
	n, d, k, p := m.N, m.D, m.K, m.Dim
	t0 := time.Now()
	prog(Progress{Stage: "direct"})
	y := m.Embedding.RawMatrix().Data
	sx2, sy2, err := m.directTemperatures(ctx, y)
	if err != nil {
		return err
	}
	if s.RegMode == RegAbsolute && math.IsInf(s.Reg/sx2, 0) {
		// The ridge's precision R / s_x^2 overflows (tiny data with an absolute ridge): every
		// precision matrix would fail, with the advice to increase reg.
		return inputErr("reg = %g is too large against the data's noise variance s_x^2 = %g (the ridge's precision reg / s_x^2 overflows): use a smaller reg or the trace ridge (RegTrace, -reg-mode trace)", s.Reg, math.Ldexp(sx2, 2*m.st.scaleExp))
	}
	m.st.sx2, m.st.sy2 = sx2, sy2
	// Reported in the data's units (the fit works on data rescaled by 2^-scaleExp), or as a
	// logarithm where those leave float64's range (+Inf broke the JSON report before
	// session 34).
	m.Report.SX2, m.Report.SY2, m.Report.SX2Log10 = reportedTemp(sx2, m.st.scaleExp), sy2, 0
	if m.Report.SX2 == 0 {
		m.Report.SX2Log10 = math.Log10(sx2) + float64(2*m.st.scaleExp)*math.Log10(2)
	}
	km1 := k - 1
	stride := km1 * k / 2
	m.st.chol = make([]float64, n*stride)
	bad := make([]int, parallel.Workers(m.st.workers))
	jit := make([]int, len(bad))
	err = parallel.For(ctx, n, m.st.workers, func(ctx context.Context, w, lo, hi int) error {
		ws := newWork(k, max(d, p))
		next := lo // the next point at which ctx is checked (every cancelStride(k, max(d, p)) points)
		for i := lo; i < hi; i++ {
			if i == next {
				next += cancelStride(k, max(d, p))
				if err := ctx.Err(); err != nil {
					return err
				}
			}
			jittered, ok := directPoint(ws, &m.st.perp, m.st.x, d, m.st.x[i*d:(i+1)*d], y, p, y[i*p:(i+1)*p],
				m.Neighbors[i*k:(i+1)*k], s.Reg, s.RegMode, sx2, sy2, m.st.chol[i*stride:(i+1)*stride])
			if !ok {
				bad[w]++
			}
			if jittered {
				jit[w]++
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	nb := 0
	for w, b := range bad {
		nb += b
		m.Report.RegularizedPoints += jit[w]
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

// tempFloor bounds the temperatures below: s_x^2 and s_y^2 are at least tempFloor times the mean
// squared neighbour offset of their space. A reconstruction exact to round-off (the embedding
// with k <= d + 2, say) would otherwise give a temperature of ~1e-26 and a Gamma_i too singular
// to factor; the floor never binds on the paper's datasets (measured ratios >= 1e-9 up to
// n = 1M).
const tempFloor = 1e-10

// directTemperatures computes the maximum-likelihood temperatures s_x^2 and s_y^2 (with their
// floors) from the mean weights, in the engine's internal units; y is the base embedding.
func (m *Model) directTemperatures(ctx context.Context, y []float64) (sx2, sy2 float64, err error) {
	n, d, k, p := m.N, m.D, m.K, m.Dim
	const chunk = 1024
	nc := parallel.NumChunks(n, chunk)
	part := make([]float64, 4*nc)
	err = parallel.Chunks(ctx, n, chunk, m.st.workers, func(ctx context.Context, _, ch, lo, hi int) error {
		var ax, ay, ox, oy float64
		for i := lo; i < hi; i++ {
			nbr, w := m.Neighbors[i*k:(i+1)*k], m.Weights[i*k:(i+1)*k]
			ax += residual2(m.st.x, d, i, nbr, w)
			ay += residual2(y, p, i, nbr, w)
			ox += offsets2(m.st.x, d, i, nbr)
			oy += offsets2(y, p, i, nbr)
		}
		copy(part[4*ch:], []float64{ax, ay, ox, oy})
		return nil
	})
	if err != nil {
		return 0, 0, err
	}
	var ox, oy float64
	for ch := 0; ch < nc; ch++ {
		sx2 += part[4*ch]
		sy2 += part[4*ch+1]
		ox += part[4*ch+2]
		oy += part[4*ch+3]
	}
	sx2 = math.Max(sx2/float64(n*d), tempFloor*ox/float64(n*k*d))
	sy2 = math.Max(sy2/float64(n*p), tempFloor*oy/float64(n*k*p))
	if !(sx2 > 0) || !(sy2 > 0) {
		return 0, 0, &DegenerateError{Kind: "exact-reconstruction", Count: n, Example: -1,
			Msg: fmt.Sprintf("direct: the temperatures are zero (s_x^2 = %g, s_y^2 = %g), so Gamma_i is undefined: use the em method", sx2, sy2)}
	}
	return sx2, sy2, nil
}

// offsets2 returns sum_j ||v_{nbr_j} - v_i||^2 for row-major vectors v of width d.
func offsets2(v []float64, d, i int, nbr []int32) float64 {
	s := 0.0
	vi := v[i*d : i*d+d]
	for _, nb := range nbr {
		for c, a := range v[int(nb)*d : int(nb)*d+d] {
			s += (a - vi[c]) * (a - vi[c])
		}
	}
	return s
}

// directPoint builds A_i for the point with coordinates xi and embedding yi, restricts it to
// 1-perp and writes the packed Cholesky factor of Q^T A_i Q into dst. When round-off makes the
// factorization fail it adds a jitter of 1e-12 (then 1e-10, ...) times the mean diagonal and
// reports jittered; ok is false when even that fails.
func directPoint(ws *work, perp *kernels.Perp, x []float64, d int, xi, y []float64, p int, yi []float64, nbr []int32, reg float64, mode RegMode, sx2, sy2 float64, dst []float64) (jittered, ok bool) {
	k := ws.k
	kernels.NeighborOffsets(ws.z, x, d, xi, nbr)
	kernels.Gram(ws.g, ws.z, k, d)
	r := ridge(kernels.Trace(ws.g, k), reg, mode)
	kernels.NeighborOffsets(ws.z, y, p, yi, nbr)
	kernels.Gram(ws.a, ws.z, k, p)
	// A is symmetric: its lower triangle is computed and mirrored (half the divisions, which
	// dominated this loop; the same values as entry by entry).
	for a := 0; a < k; a++ {
		ra, ga := ws.a[a*k:a*k+a+1], ws.g[a*k:a*k+a+1]
		for b, v := range ga {
			ra[b] = v/sx2 + ra[b]/sy2
		}
		for b, v := range ra[:a] {
			ws.a[b*k+a] = v
		}
	}
	for j := 0; j < k; j++ {
		ws.a[j*k+j] += r / sx2
	}
	km1 := k - 1
	perp.Restrict(ws.c, ws.a, ws.t)
	copy(ws.r, ws.c[:km1*km1])
	tr := kernels.Trace(ws.c, km1)
	if !(tr > 0) || math.IsInf(tr, 0) {
		return false, false // no scale to jitter against: a zero or non-finite matrix
	}
	jitter := 1e-12 * tr / float64(km1)
	for !kernels.Cholesky(ws.r, km1) {
		if jittered && !(jitter <= 1e-2*tr) {
			return true, false
		}
		jittered = true
		copy(ws.r, ws.c[:km1*km1])
		for j := 0; j < km1; j++ {
			ws.r[j*km1+j] += jitter
		}
		jitter *= 100
	}
	q := 0
	for a := 0; a < km1; a++ {
		for b := 0; b <= a; b++ {
			dst[q] = ws.r[a*km1+b]
			q++
		}
	}
	return jittered, true
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

// reportedTemp is the temperature t (of data rescaled by 2^-scaleExp) in the data's units,
// t 2^(2 scaleExp), or 0 when that is not a finite normal float64.
func reportedTemp(t float64, scaleExp int) float64 {
	v := math.Ldexp(t, 2*scaleExp)
	if math.IsInf(v, 0) || v < 0x1p-1022 {
		return 0
	}
	return v
}
