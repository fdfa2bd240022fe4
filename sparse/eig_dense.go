package sparse

import (
	"fmt"
	"math"
	"time"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/lapack"

	"glle/kernels"
)

// DenseMaxN is the largest order DenseSmallest accepts (the dense eigendecomposition costs
// O(n^3) time and 8 n^2 bytes twice).
const DenseMaxN = 3000

// DenseSmallest computes the nev smallest eigenpairs of the dense symmetric n x n matrix a
// (row-major, length n*n, both triangles; not modified) orthogonal to the span of deflate, with
// LAPACK Dsyev of the current kernels backend (OpenBLAS/LAPACKE, or gonum's native Go under
// purego). It is the eigensolver oracle of the tests and the engine's explicit dense option for
// n <= DenseMaxN. With deflation it decomposes P A P + c Q Q^T, Q an orthonormal basis of the
// deflated span, P = I - Q Q^T and c = 2 ||A||_inf + 1, which moves the deflated directions
// above the whole spectrum of P A P. Values are ascending; Residuals are the true residuals
// ||A u - lambda u||; the iteration counts of the result are zero.
func DenseSmallest(n int, a []float64, nev int, deflate [][]float64) (EigResult, error) {
	t0 := time.Now()
	var res EigResult
	if n < 1 || n > DenseMaxN {
		return res, fmt.Errorf("sparse: DenseSmallest: n = %d outside [1, %d]", n, DenseMaxN)
	}
	if len(a) != n*n {
		return res, fmt.Errorf("sparse: DenseSmallest: len(a) = %d, want n*n = %d", len(a), n*n)
	}
	if nev < 1 {
		return res, fmt.Errorf("sparse: DenseSmallest: nev = %d, need >= 1", nev)
	}
	cfg, err := resolveCommon(n, EigOptions{NEV: nev, Deflate: deflate}, nil)
	if err != nil {
		return res, err
	}
	if room := n - len(cfg.defl); nev > room {
		return res, fmt.Errorf("sparse: DenseSmallest: nev = %d but only n - deflated = %d eigenpairs exist", nev, room)
	}
	normA := 0.0
	for i := 0; i < n; i++ {
		s := 0.0
		for _, v := range a[i*n : i*n+n] {
			s += math.Abs(v)
		}
		normA = max(normA, s)
	}
	if math.IsNaN(normA) || math.IsInf(normA, 0) {
		return res, fmt.Errorf("sparse: DenseSmallest: %w", ErrNonFinite)
	}
	b := make([]float64, n*n)
	copy(b, a)
	if q := cfg.defl; len(q) > 0 {
		nd := len(q)
		aq := make([][]float64, nd) // A q_t
		for t := range q {
			aq[t] = make([]float64, n)
			for i := 0; i < n; i++ {
				aq[t][i] = dot(a[i*n:i*n+n], q[t])
			}
		}
		qaq := make([]float64, nd*nd)
		for s := range q {
			for t := range q {
				qaq[s*nd+t] = dot(q[s], aq[t])
			}
		}
		c := 2*normA + 1
		// P A P + c Q Q^T = A - Q (AQ)^T - (AQ) Q^T + Q (Q^T A Q + c I) Q^T.
		for i := 0; i < n; i++ {
			row := b[i*n : i*n+n]
			for s := range q {
				qi, aqi := q[s][i], aq[s][i]
				for jj := range row {
					row[jj] -= qi*aq[s][jj] + aqi*q[s][jj]
				}
				for t := range q {
					coef := qi * qaq[s*nd+t]
					if s == t {
						coef += qi * c
					}
					axpy(coef, q[t], row)
				}
			}
		}
	}
	w := make([]float64, n)
	lap := kernels.Current().LAPACK()
	work := make([]float64, 1)
	lap.Dsyev(lapack.EVCompute, blas.Upper, n, b, n, w, work, -1)
	work = make([]float64, int(work[0]))
	if !lap.Dsyev(lapack.EVCompute, blas.Upper, n, b, n, w, work, len(work)) {
		return res, fmt.Errorf("sparse: DenseSmallest: Dsyev did not converge")
	}
	res.NormA = normA
	res.Values = make([]float64, nev)
	res.Vectors = make([][]float64, nev)
	res.Residuals = make([]float64, nev)
	r := make([]float64, n)
	for t := 0; t < nev; t++ {
		u := make([]float64, n)
		for i := 0; i < n; i++ {
			u[i] = b[i*n+t]
		}
		res.Values[t] = w[t]
		res.Vectors[t] = u
		for i := 0; i < n; i++ {
			r[i] = dot(a[i*n:i*n+n], u) - w[t]*u[i]
		}
		res.Residuals[t] = norm(r)
	}
	res.TotalTime = time.Since(t0)
	return res, nil
}
