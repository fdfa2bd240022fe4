package engine

import (
	"context"
	"fmt"
	"math"
	"time"

	"glle/kernels"
	"glle/parallel"
)

// pinvRcond is the relative singular-value cutoff of the pseudo-inverses in EMPaper: singular
// values at or below pinvRcond * s_max count as zero, as numpy.linalg.pinv's default
// rcond = 1e-15 does in the authors' code.
const pinvRcond = 1e-15

// paperSVD computes the thin SVD of the raw neighbour matrix X_i (d x k, columns = neighbour
// coordinates) of point i: it returns the rank r (pinvRcond), and leaves the right singular
// vectors v_a (k-vectors) in vk[a*k:(a+1)*k], the left ones u_a (d-vectors) in ud[a*d:(a+1)*d]
// and s_a in ws.e[a], for a < r.
func paperSVD(ws *work, x []float64, d int, nbr []int32, vk, ud []float64) int {
	k := ws.k
	for j, nb := range nbr {
		copy(ws.z[j*d:(j+1)*d], x[int(nb)*d:int(nb)*d+d])
	}
	if d < k {
		// SVD of X_i^T (k x d): X_i^T = U' S V'^T, so X_i = V' S U'^T.
		a := ws.z[:k*d]
		kernels.SVD(a, k, d, ws.e, ws.v)
		r := rankRcond(ws.e[:d])
		for q := 0; q < r; q++ {
			s := ws.e[q]
			for j := 0; j < k; j++ {
				vk[q*k+j] = a[j*d+q] / s
			}
			for c := 0; c < d; c++ {
				ud[q*d+c] = ws.v[c*d+q]
			}
		}
		return r
	}
	// SVD of X_i (d x k) directly.
	a := ws.c[:d*k]
	for c := 0; c < d; c++ {
		for j := 0; j < k; j++ {
			a[c*k+j] = ws.z[j*d+c]
		}
	}
	kernels.SVD(a, d, k, ws.e, ws.v)
	r := rankRcond(ws.e[:k])
	for q := 0; q < r; q++ {
		s := ws.e[q]
		for j := 0; j < k; j++ {
			vk[q*k+j] = ws.v[j*k+q]
		}
		for c := 0; c < d; c++ {
			ud[q*d+c] = a[c*k+q] / s
		}
	}
	return r
}

func rankRcond(s []float64) int {
	if len(s) == 0 || !(s[0] > 0) {
		return 0
	}
	cut := pinvRcond * s[0]
	r := 0
	for _, v := range s {
		if v > cut {
			r++
		}
	}
	return r
}

// emPaperChunk is the number of points per partial sum of S_1 in fitEMPaper.
const emPaperChunk = 1024

// fitEMPaper runs Alg. 1 exactly as printed, with Omega_i = sigma_i I (Eq. (27)) initialised to
// I. With the thin SVD X_i = U S V^T:
//
//	E[w_i]        = X_i^T (X_i X_i^T)^+ (x_i - mu) = V S^{-1} U^T (x_i - mu)       Eq. (21)
//	Sigma_{w|x}   = sigma_i (I - V V^T)                                            Eq. (22)
//	S_1           = (1/n) sum_i [c c^T - 2 X_i E[w_i] c^T + X_i Sigma_{w|x} X_i^T]    Eq. (24), c = x_i - mu
//	tr S_2        = (1/n) sum_i sigma_i (k - r_i)                                  Eq. (25)
//	sigma_i       = (tr((X_i X_i^T)^+ S_1) + tr S_2) / (d + k)                     Eq. (29)
//
// E[w_i] does not depend on sigma_i, and X_i Sigma_{w|x} X_i^T = sigma_i X_i (I - V V^T) X_i^T
// vanishes (it only holds singular values below the pseudo-inverse cutoff), so S_1 is computed
// once; tr((X_i X_i^T)^+ S_1) = sum_a u_a^T S_1 u_a / s_a^2 needs no d x d pseudo-inverse.
// The weights Alg. 1 samples inside its loop influence no parameter, so the fit does not draw
// them; Generate does. sigma_i are stored as computed (they come out negative); draws use
// |sigma_i|, which is what numpy's multivariate_normal does in the authors' code.
func (m *Model) fitEMPaper(ctx context.Context, s Settings, prog func(Progress)) error {
	n, d, k := m.N, m.D, m.K
	x := m.st.x
	t0 := time.Now()
	prog(Progress{Stage: "weights"})
	mu := make([]float64, d)
	for i := 0; i < n; i++ {
		for c := 0; c < d; c++ {
			mu[c] += x[i*d+c]
		}
	}
	for c := range mu {
		mu[c] /= float64(n)
	}
	rmax := min(d, k)
	m.st.rmax = rmax
	m.st.rank = make([]int32, n)
	m.st.basis = make([]float64, n*k*rmax)
	m.Weights = make([]float64, n*k)
	const chunk = emPaperChunk
	nc := parallel.NumChunks(n, chunk)
	// Both per-point loops cost about k d^2 (S_1's rank-one updates, its quadratic forms):
	// they check ctx by that work, as cancelStride does for k^3 (at d = 4000 a chunk of
	// points ran 50-100 s between checks: a user trial).
	stride := max(1, int(float64(1<<22)/(float64(k)*float64(d)*float64(d))))
	s1part := make([]float64, nc*d*d)
	ws := make([]*work, parallel.Workers(m.st.workers))
	uds := make([][]float64, len(ws))
	vks := make([][]float64, len(ws))
	for w := range ws {
		ws[w] = newWork(k, d)
		uds[w] = make([]float64, d*rmax+2*d)
		vks[w] = make([]float64, k*rmax)
	}
	err := parallel.Chunks(ctx, n, chunk, m.st.workers, func(ctx context.Context, w, ch, lo, hi int) error {
		wk, ud := ws[w], uds[w]
		acc := s1part[ch*d*d : (ch+1)*d*d]
		left := stride
		for i := lo; i < hi; i++ {
			if left--; left == 0 {
				if err := ctx.Err(); err != nil {
					return err
				}
				left = stride
			}
			vk := m.st.basis[i*k*rmax : (i+1)*k*rmax]
			r := emPaperMean(wk, x, d, i, mu, m.Neighbors[i*k:(i+1)*k], vk, ud, m.Weights[i*k:(i+1)*k], acc)
			m.st.rank[i] = int32(r)
		}
		return nil
	})
	if err != nil {
		return err
	}
	s1 := make([]float64, d*d)
	for ch := 0; ch < nc; ch++ {
		for j, v := range s1part[ch*d*d : (ch+1)*d*d] {
			s1[j] += v
		}
	}
	for j := range s1 {
		s1[j] /= float64(n)
	}
	// t_i = tr((X_i X_i^T)^+ S_1) = sum_q u_q^T S_1 u_q / s_q^2.
	tr := make([]float64, n)
	err = parallel.Chunks(ctx, n, chunk, m.st.workers, func(ctx context.Context, w, ch, lo, hi int) error {
		wk, ud, tmp := ws[w], uds[w], vks[w]
		left := stride
		for i := lo; i < hi; i++ {
			if left--; left == 0 {
				if err := ctx.Err(); err != nil {
					return err
				}
				left = stride
			}
			tr[i] = emPaperTrace(wk, x, d, m.Neighbors[i*k:(i+1)*k], s1, tmp, ud)
		}
		return nil
	})
	if err != nil {
		return err
	}
	m.Report.stage("weights", t0)
	prog(Progress{Stage: "weights", Final: true})

	t1 := time.Now()
	m.Sigma = make([]float64, n)
	for i := range m.Sigma {
		m.Sigma[i] = 1
	}
	prog(Progress{Stage: "em", Total: s.EMIters})
	for it := 1; it <= s.EMIters; it++ {
		if err := ctx.Err(); err != nil {
			return err
		}
		trS2 := 0.0
		for i := 0; i < n; i++ {
			trS2 += m.Sigma[i] * float64(k-int(m.st.rank[i]))
		}
		trS2 /= float64(n)
		for i := 0; i < n; i++ {
			m.Sigma[i] = (tr[i] + trS2) / float64(d+k)
		}
		prog(Progress{Stage: "em", Done: it, Total: s.EMIters})
	}
	m.Report.EMIterations = s.EMIters
	m.Report.Sigma = sigmaStats(m.Sigma, true)
	m.countNoiseFree()
	m.Report.stage("em", t1)
	prog(Progress{Stage: "em", Done: s.EMIters, Total: s.EMIters, Final: true})
	return nil
}

// singularRcond is the eigenvalue ratio lambda_min / lambda_max at or below which DirectPaper
// calls X_i^T X_i + Y_i^T Y_i singular: its inverse would have variances above ~1e12 times the
// smallest, which is what makes the authors' draws explode.
const singularRcond = 1e-12

// directPaperPoint computes the eigendecomposition of A_i = X_i^T X_i + Y_i^T Y_i + ridge I
// (Eq. (35), raw coordinates) into ws.e (descending) and ws.v, and reports whether A_i without
// the ridge is singular.
func directPaperPoint(ws *work, x []float64, d int, y []float64, p int, nbr []int32, ridge float64) (singular bool) {
	k := ws.k
	for j, nb := range nbr {
		copy(ws.z[j*d:(j+1)*d], x[int(nb)*d:int(nb)*d+d])
	}
	kernels.Gram(ws.a, ws.z, k, d)
	for j, nb := range nbr {
		copy(ws.z[j*p:(j+1)*p], y[int(nb)*p:int(nb)*p+p])
	}
	kernels.Gram(ws.g, ws.z, k, p)
	for j := 0; j < k*k; j++ {
		ws.a[j] += ws.g[j]
	}
	for j := 0; j < k; j++ {
		ws.a[j*k+j] += ridge
	}
	kernels.SymEigenWork(ws.a, k, ws.e, ws.v, ws.eig)
	lmax, lmin := ws.e[0]-ridge, ws.e[k-1]-ridge
	return !(lmin > singularRcond*lmax)
}

// fitDirectPaper computes the factors of Alg. 2 as printed: Gamma_i = (X_i^T X_i + Y_i^T Y_i)^{-1}
// (Eq. (35)) and w_i ~ N(w_i^LLE, Gamma_i) (Eq. (36)), Y the LLE embedding. Draws use the
// symmetric square root Gamma_i^{1/2} = U D^{-1/2} U^T.
func (m *Model) fitDirectPaper(ctx context.Context, s Settings, prog func(Progress)) error {
	n, d, k, p := m.N, m.D, m.K, m.Dim
	t0 := time.Now()
	prog(Progress{Stage: "direct"})
	y := m.Embedding.RawMatrix().Data
	m.st.sqrt = make([]float64, n*k*k)
	part := make([]int, parallel.Workers(m.st.workers))
	first := make([]int, len(part))
	err := parallel.For(ctx, n, m.st.workers, func(ctx context.Context, w, lo, hi int) error {
		ws := newWork(k, max(d, p))
		first[w] = -1
		next := lo // the next point at which ctx is checked (every cancelStride(k, max(d, p)) points)
		for i := lo; i < hi; i++ {
			if i == next {
				next += cancelStride(k, max(d, p))
				if err := ctx.Err(); err != nil {
					return err
				}
			}
			if directPaperPoint(ws, m.st.x, d, y, p, m.Neighbors[i*k:(i+1)*k], s.DirectRidge) {
				if part[w] == 0 {
					first[w] = i
				}
				part[w]++
			}
			symSqrtInv(m.st.sqrt[i*k*k:(i+1)*k*k], ws.e, ws.v, k)
		}
		return nil
	})
	if err != nil {
		return err
	}
	bad, ex := 0, -1
	for w, c := range part {
		if c > 0 && ex < 0 {
			ex = first[w]
		}
		bad += c
	}
	m.Report.RegularizedPoints = bad
	if bad > 0 && s.DirectRidge == 0 {
		why := fmt.Sprintf("it has rank <= d + p = %d < k = %d", d+p, k)
		if d+p >= k {
			why = "its neighbours' coordinates and embeddings are numerically linearly dependent"
		}
		return &DegenerateError{Kind: "singular-gamma", Count: bad, Example: ex,
			Msg: fmt.Sprintf("direct-paper: X_i^T X_i + Y_i^T Y_i is singular for %d of %d points (e.g. point %d; %s): pass an explicit ridge (DirectRidge / -direct-ridge) or use the default direct method", bad, n, ex, why)}
	}
	m.Report.stage("direct", t0)
	prog(Progress{Stage: "direct", Final: true})
	return nil
}

// symSqrtInv writes U diag(e^{-1/2}) U^T (k x k) for eigenvalues e and eigenvectors v
// (columns); non-positive eigenvalues contribute nothing.
func symSqrtInv(dst, e, v []float64, k int) {
	for a := 0; a < k; a++ {
		for b := 0; b <= a; b++ {
			s := 0.0
			for q := 0; q < k; q++ {
				if e[q] > 0 {
					s += v[a*k+q] * v[b*k+q] / math.Sqrt(e[q])
				}
			}
			dst[a*k+b], dst[b*k+a] = s, s
		}
	}
}

// gammaFromEigen writes U diag(1/e) U^T (k x k) for eigenvalues e and eigenvectors v (columns):
// Gamma_i of Eq. (35) from directPaperPoint's decomposition.
func gammaFromEigen(dst, e, v []float64, k int) {
	for a := 0; a < k; a++ {
		for b := 0; b <= a; b++ {
			s := 0.0
			for q := 0; q < k; q++ {
				if e[q] > 0 {
					s += v[a*k+q] * v[b*k+q] / e[q]
				}
			}
			dst[a*k+b], dst[b*k+a] = s, s
		}
	}
}

// countNoiseFree sets Report.NoiseFreePoints: the points whose X_i has rank k (EMPaper).
func (m *Model) countNoiseFree() {
	m.Report.NoiseFreePoints = 0
	for _, r := range m.st.rank {
		if int(r) == m.K {
			m.Report.NoiseFreePoints++
		}
	}
}

// paperBases recomputes EMPaper's per-point right singular bases (the sampler's projector)
// from the training data, as Restore needs them.
func (m *Model) paperBases(ctx context.Context) error {
	n, d, k := m.N, m.D, m.K
	rmax := min(d, k)
	m.st.rmax = rmax
	m.st.rank = make([]int32, n)
	m.st.basis = make([]float64, n*k*rmax)
	return forPoints(ctx, n, k, d, m.st.workers, func(_ context.Context, ws *work, lo, hi int) error {
		if len(ws.ud) < d*rmax { // once per worker: ws lives across forPoints' steps
			ws.ud = make([]float64, d*rmax)
		}
		for i := lo; i < hi; i++ {
			m.st.rank[i] = int32(paperSVD(ws, m.st.x, d, m.Neighbors[i*k:(i+1)*k], m.st.basis[i*k*rmax:(i+1)*k*rmax], ws.ud))
		}
		return nil
	})
}

// emPaperMean is fitEMPaper's first per-point step for point i: the SVD of its raw neighbour
// matrix X_i (paperSVD; vk receives the right singular vectors, ud the left ones and, after
// d*rmax values, 2d values of scratch), E[w_i] of Eq. (21) with the global mean mu into ew, and
// point i's term (x_i - mu)(x_i - mu)^T - 2 X_i E[w_i] (x_i - mu)^T of S_1 (Eq. (24), before
// the division by n) added into acc (d x d). It returns the rank r.
func emPaperMean(ws *work, x []float64, d, i int, mu []float64, nbr []int32, vk, ud, ew, acc []float64) int {
	k := len(ew)
	r := paperSVD(ws, x, d, nbr, vk, ud)
	rmax := min(d, k)
	cvec, pc := ud[d*rmax:d*rmax+d], ud[d*rmax+d:d*rmax+2*d]
	for c := 0; c < d; c++ {
		cvec[c] = x[i*d+c] - mu[c]
	}
	clear(ew)
	clear(pc)
	for q := 0; q < r; q++ {
		s := ws.e[q]
		uq := ud[q*d : (q+1)*d]
		dot := 0.0
		for c, v := range uq {
			dot += v * cvec[c]
		}
		// E[w] += v_q (u_q . c) / s_q ; X_i E[w] = U U^T c.
		for j := 0; j < k; j++ {
			ew[j] += vk[q*k+j] * dot / s
		}
		for c, v := range uq {
			pc[c] += v * dot
		}
	}
	for a := 0; a < d; a++ {
		for b := 0; b < d; b++ {
			acc[a*d+b] += cvec[a]*cvec[b] - 2*pc[a]*cvec[b]
		}
	}
	return r
}

// emPaperTrace is fitEMPaper's second per-point step: t_i = tr((X_i X_i^T)^+ S_1) =
// sum_q u_q^T S_1 u_q / s_q^2 over the SVD of X_i (tmp and ud as vk and ud of emPaperMean).
func emPaperTrace(ws *work, x []float64, d int, nbr []int32, s1, tmp, ud []float64) float64 {
	r := paperSVD(ws, x, d, nbr, tmp, ud)
	t := 0.0
	for q := 0; q < r; q++ {
		s := ws.e[q]
		uq := ud[q*d : (q+1)*d]
		quad := 0.0
		for a := 0; a < d; a++ {
			row := 0.0
			for b := 0; b < d; b++ {
				row += s1[a*d+b] * uq[b]
			}
			quad += uq[a] * row
		}
		t += quad / (s * s)
	}
	return t
}
