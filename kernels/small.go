package kernels

import (
	"math"
	"sync"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/lapack"
	lapackgonum "gonum.org/v1/gonum/lapack/gonum"
)

// The routines in this file work on small dense row-major matrices (k x k with k around 10)
// in plain Go, allocation-free: at these sizes a cgo call into OpenBLAS costs more than the
// arithmetic, so both builds use them.

// NeighborOffsets writes Z (k x d, row-major) with row j = x[nbr[j]] - xi for the points of
// the row-major data x (n x d) and a point xi (length d). Z's rows are the columns of the
// paper's (X_i - x_i 1^T).
func NeighborOffsets(z []float64, x []float64, d int, xi []float64, nbr []int32) {
	k := len(nbr)
	if len(z) < k*d || len(xi) < d {
		panic("kernels: offsets buffer too short")
	}
	for j, nb := range nbr {
		xj := x[int(nb)*d : int(nb)*d+d]
		zj := z[j*d : j*d+d]
		for c := range zj {
			zj[c] = xj[c] - xi[c]
		}
	}
}

// Gram writes G = Z Z^T (k x k, full symmetric) for Z k x d row-major. With Z from
// NeighborOffsets this is G_i of paper Eq. (8).
func Gram(g []float64, z []float64, k, d int) {
	if len(g) < k*k || len(z) < k*d {
		panic("kernels: gram shape mismatch")
	}
	switch d {
	case 2:
		gram2(g, z, k)
		return
	case 3:
		gram3(g, z, k)
		return
	}
	for a := 0; a < k; a++ {
		za := z[a*d : a*d+d]
		for b := 0; b <= a; b++ {
			zb := z[b*d : b*d+d]
			s := 0.0
			for c, v := range za {
				s += v * zb[c]
			}
			g[a*k+b] = s
			g[b*k+a] = s
		}
	}
}

// gram2 and gram3 are Gram for d = 2 (e.g. the embedding's offsets of the direct methods) and
// d = 3 (the Swiss roll, the S-curve): two rows of Z held in registers
// against each row of the lower triangle, then the upper triangle mirrored. Each entry is the
// same three products summed in the same order as the general loop (0 + x = x exactly), so the
// bits are the same; at k = 10 it took 110-130 ns against 290-300 ns for the general loop
// (minima of 15 runs of 10^6 calls, same process), whose cost is its 3-long inner loop.
func gram2(g, z []float64, k int) {
	z = z[:2*k]
	g = g[:k*k]
	a := 0
	for ; a+1 < k; a += 2 {
		a0, a1 := z[2*a], z[2*a+1]
		c0, c1 := z[2*a+2], z[2*a+3]
		ga := g[a*k : a*k+a+1]
		gc := g[(a+1)*k : (a+1)*k+a+1]
		for b := range ga {
			zb := (*[2]float64)(z[2*b:])
			s := a0 * zb[0]
			t := c0 * zb[0]
			s += a1 * zb[1]
			t += c1 * zb[1]
			ga[b] = s
			gc[b] = t
		}
		t := c0 * c0
		t += c1 * c1
		g[(a+1)*k+a+1] = t
	}
	if a < k {
		a0, a1 := z[2*a], z[2*a+1]
		ga := g[a*k : a*k+a+1]
		for b := range ga {
			zb := (*[2]float64)(z[2*b:])
			s := a0 * zb[0]
			s += a1 * zb[1]
			ga[b] = s
		}
	}
	mirrorLower(g, k)
}

func gram3(g, z []float64, k int) {
	z = z[:3*k]
	g = g[:k*k]
	a := 0
	for ; a+1 < k; a += 2 {
		a0, a1, a2 := z[3*a], z[3*a+1], z[3*a+2]
		c0, c1, c2 := z[3*a+3], z[3*a+4], z[3*a+5]
		ga := g[a*k : a*k+a+1]
		gc := g[(a+1)*k : (a+1)*k+a+1]
		for b := range ga {
			zb := (*[3]float64)(z[3*b:])
			s := a0 * zb[0]
			t := c0 * zb[0]
			s += a1 * zb[1]
			t += c1 * zb[1]
			s += a2 * zb[2]
			t += c2 * zb[2]
			ga[b] = s
			gc[b] = t
		}
		t := c0 * c0
		t += c1 * c1
		t += c2 * c2
		g[(a+1)*k+a+1] = t
	}
	if a < k {
		a0, a1, a2 := z[3*a], z[3*a+1], z[3*a+2]
		ga := g[a*k : a*k+a+1]
		for b := range ga {
			zb := (*[3]float64)(z[3*b:])
			s := a0 * zb[0]
			s += a1 * zb[1]
			s += a2 * zb[2]
			ga[b] = s
		}
	}
	mirrorLower(g, k)
}

// Scatter writes S = Z^T Z (d x d, full symmetric) for Z k x d row-major: the d x d companion
// of Gram, with the same nonzero eigenvalues. Each entry sums its k products in the order
// j = 0, 1, ..., k-1.
func Scatter(s []float64, z []float64, k, d int) {
	if len(s) < d*d || len(z) < k*d {
		panic("kernels: scatter shape mismatch")
	}
	if d == 3 {
		scatter3(s, z, k)
		return
	}
	for a := 0; a < d; a++ {
		for b := 0; b <= a; b++ {
			t := 0.0
			for j := 0; j < k; j++ {
				t += z[j*d+a] * z[j*d+b]
			}
			s[a*d+b], s[b*d+a] = t, t
		}
	}
}

// scatter3 is Scatter for d = 3: the six entries of the lower triangle accumulate in
// registers over one pass through Z, in the same order as the general loop.
func scatter3(s, z []float64, k int) {
	z = z[:3*k]
	var s00, s10, s11, s20, s21, s22 float64
	for j := 0; j < k; j++ {
		r := (*[3]float64)(z[3*j:])
		s00 += r[0] * r[0]
		s10 += r[1] * r[0]
		s11 += r[1] * r[1]
		s20 += r[2] * r[0]
		s21 += r[2] * r[1]
		s22 += r[2] * r[2]
	}
	s = s[:9]
	s[0], s[1], s[2] = s00, s10, s20
	s[3], s[4], s[5] = s10, s11, s21
	s[6], s[7], s[8] = s20, s21, s22
}

// mirrorLower copies the strict lower triangle of the k x k matrix g onto its upper triangle.
func mirrorLower(g []float64, k int) {
	for a := 1; a < k; a++ {
		for b, v := range g[a*k : a*k+a] {
			g[b*k+a] = v
		}
	}
}

// Trace returns the trace of the k x k matrix a.
func Trace(a []float64, k int) float64 {
	s := 0.0
	for i := 0; i < k; i++ {
		s += a[i*k+i]
	}
	return s
}

// CholeskyGonumMin is the order from which Cholesky calls gonum's blocked Dpotrf (pure Go, no
// allocation) instead of the unblocked loop below. Measured per factorization on an Intel Xeon
// (BenchmarkCholesky, purego build, medians of 5): the loop 894 / 1510 ns at k = 20 / 24 and
// gonum 959 / 1630 ns; they are within this machine's noise of each other from k = 18 to 24, so
// the switch sits in the middle of that range. Both builds use the same code, so per-point
// results do not depend on the build.
const CholeskyGonumMin = 22

// Cholesky factors the symmetric positive definite k x k matrix a in place: on return its
// lower triangle holds L with a = L L^T (the strict upper triangle is left as it was).
// It returns false, leaving a partly overwritten, when a pivot is not positive.
func Cholesky(a []float64, k int) bool {
	if len(a) < k*k {
		panic("kernels: cholesky shape mismatch")
	}
	if k >= CholeskyGonumMin {
		return lapackgonum.Implementation{}.Dpotrf(blas.Lower, k, a, k)
	}
	return choleskySmall(a, k)
}

// choleskySmall is the unblocked (left-looking, row-oriented) Cholesky of Cholesky. Four rows
// below the pivot are updated together: their dot products with the pivot row are independent
// chains, so the loop is not bound by one chain's add latency, and each chain still sums in
// the order c = 0, 1, ..., so the result is the same as row by row. The squares that reduce a
// later diagonal entry are subtracted from it as soon as each L entry is known, in the same
// order, which takes the diagonal's dependent chain off the critical path.
func choleskySmall(a []float64, k int) bool {
	for j := 0; j < k; j++ {
		rj := a[j*k : j*k+j+1]
		s := rj[j] // already reduced by the squares of L's row j (below)
		if !(s > 0) {
			return false
		}
		ljj := math.Sqrt(s)
		rj[j] = ljj
		inv := 1 / ljj
		pj := rj[:j]
		i := j + 1
		for ; i+3 < k; i += 4 {
			r0 := a[i*k : i*k+j+1]
			r1 := a[(i+1)*k : (i+1)*k+j+1]
			r2 := a[(i+2)*k : (i+2)*k+j+1]
			r3 := a[(i+3)*k : (i+3)*k+j+1]
			t0, t1, t2, t3 := r0[j], r1[j], r2[j], r3[j]
			r0, r1, r2, r3 = r0[:len(pj)], r1[:len(pj)], r2[:len(pj)], r3[:len(pj)]
			for c, v := range pj {
				t0 -= r0[c] * v
				t1 -= r1[c] * v
				t2 -= r2[c] * v
				t3 -= r3[c] * v
			}
			t0, t1, t2, t3 = t0*inv, t1*inv, t2*inv, t3*inv
			a[i*k+j], a[i*k+i] = t0, a[i*k+i]-t0*t0
			a[(i+1)*k+j], a[(i+1)*k+i+1] = t1, a[(i+1)*k+i+1]-t1*t1
			a[(i+2)*k+j], a[(i+2)*k+i+2] = t2, a[(i+2)*k+i+2]-t2*t2
			a[(i+3)*k+j], a[(i+3)*k+i+3] = t3, a[(i+3)*k+i+3]-t3*t3
		}
		for ; i < k; i++ {
			ri := a[i*k : i*k+j+1]
			t := ri[j]
			ri = ri[:len(pj)]
			for c, v := range pj {
				t -= ri[c] * v
			}
			t *= inv
			a[i*k+j], a[i*k+i] = t, a[i*k+i]-t*t
		}
	}
	return true
}

// CholSolve overwrites b with (L L^T)^{-1} b for the factor from Cholesky.
func CholSolve(l []float64, k int, b []float64) {
	if len(l) < k*k || len(b) < k {
		panic("kernels: cholsolve shape mismatch")
	}
	for i := 0; i < k; i++ { // L y = b
		ri := l[i*k : i*k+i]
		s := b[i]
		for c, v := range ri {
			s -= v * b[c]
		}
		b[i] = s / l[i*k+i]
	}
	LTSolve(l, k, b)
}

// LTSolve overwrites b with L^{-T} b for the lower-triangular L stored in l (k x k).
func LTSolve(l []float64, k int, b []float64) {
	for i := k - 1; i >= 0; i-- {
		s := b[i]
		for r := i + 1; r < k; r++ {
			s -= l[r*k+i] * b[r]
		}
		b[i] = s / l[i*k+i]
	}
}

// jacobiSums returns the sums of squares of the scaled (by c) strictly upper and diagonal
// entries of the symmetric n x n matrix a: SymEigen's convergence test.
func jacobiSums(a []float64, n int, c float64) (off, diag float64) {
	for p := 0; p < n; p++ {
		v := c * a[p*n+p]
		diag += v * v
		for q := p + 1; q < n; q++ {
			v := c * a[p*n+q]
			off += v * v
		}
	}
	return off, diag
}

// SymEigen computes the eigendecomposition a = V diag(w) V^T of the symmetric n x n matrix a
// by the cyclic Jacobi method. On return w holds the eigenvalues in descending order and v
// (n x n, row-major) the matching orthonormal eigenvectors in its columns; a is destroyed.
// The sweeps stop when the off-diagonal part is below 1e-17 of the diagonal's (Frobenius
// norms), so every eigenvalue is accurate to a small multiple of eps ||a||: absolute
// accuracy, which the callers' rank decisions (relative to the largest eigenvalue) need. A
// tiny eigenvalue of a strongly graded matrix is not computed to full relative precision
// (diag(1, 1e-30) with off-diagonal 9e-18: relative error 8e-5).
//
// Orders above symEigenJacobiMax use LAPACK's tridiagonal QR instead (gonum's native Dsyev in
// both builds, with the same absolute accuracy), which is faster there.
func SymEigen(a []float64, n int, w, v []float64) {
	if len(a) < n*n || len(w) < n || len(v) < n*n {
		panic("kernels: symeigen shape mismatch")
	}
	if n > symEigenJacobiMax {
		wp := eigWork.Get().(*[]float64)
		defer eigWork.Put(wp)
		if cap(*wp) < SymEigenWorkLen(n) {
			*wp = make([]float64, SymEigenWorkLen(n))
		}
		symEigenQR(a, n, w, v, *wp)
		return
	}
	symEigenJacobi(a, n, w, v)
}

// SymEigenWork is SymEigen with the caller's workspace work (at least SymEigenWorkLen(n)
// long), for per-point loops, which must not allocate (SymEigen's pooled workspace can, under
// the race detector).
func SymEigenWork(a []float64, n int, w, v, work []float64) {
	if len(a) < n*n || len(w) < n || len(v) < n*n || len(work) < SymEigenWorkLen(n) {
		panic("kernels: symeigen shape mismatch")
	}
	if n > symEigenJacobiMax {
		symEigenQR(a, n, w, v, work)
		return
	}
	symEigenJacobi(a, n, w, v)
}

// SymEigenWorkLen is the workspace SymEigenWork needs for order n.
func SymEigenWorkLen(n int) int { return 3*n - 1 + n*n }

// symEigenJacobi is SymEigen by the cyclic Jacobi method.
func symEigenJacobi(a []float64, n int, w, v []float64) {
	for i := 0; i < n*n; i++ {
		v[i] = 0
	}
	for i := 0; i < n; i++ {
		v[i*n+i] = 1
	}
	for sweep := 0; sweep < 60; sweep++ {
		off, diag := jacobiSums(a, n, 1)
		if math.IsInf(off, 0) || math.IsInf(diag, 0) {
			// Entries beyond ~1e154 overflow the squares (the test would stop before any
			// rotation): the same test on a scaled copy of the sums, only on this rare path.
			mx := 0.0
			for _, v := range a[:n*n] {
				mx = max(mx, math.Abs(v))
			}
			off, diag = jacobiSums(a, n, 1/mx)
		}
		if off == 0 || off <= 1e-34*diag {
			break
		}
		for p := 0; p < n-1; p++ {
			for q := p + 1; q < n; q++ {
				apq := a[p*n+q]
				if apq == 0 {
					continue
				}
				app, aqq := a[p*n+p], a[q*n+q]
				// Skip rotations that cannot change the diagonal at working precision.
				if math.Abs(apq) < 1e-18*math.Sqrt(math.Abs(app*aqq)) {
					a[p*n+q], a[q*n+p] = 0, 0
					continue
				}
				theta := (aqq - app) / (2 * apq)
				t := 1 / (math.Abs(theta) + math.Sqrt(theta*theta+1))
				if theta < 0 {
					t = -t
				}
				c := 1 / math.Sqrt(t*t+1)
				s := t * c
				rotateCols(a, n, n, p, q, c, s)
				for r := 0; r < n; r++ {
					apr, aqr := a[p*n+r], a[q*n+r]
					a[p*n+r] = c*apr - s*aqr
					a[q*n+r] = s*apr + c*aqr
				}
				a[p*n+q], a[q*n+p] = 0, 0
				rotateCols(v, n, n, p, q, c, s)
			}
		}
	}
	for i := 0; i < n; i++ {
		w[i] = a[i*n+i]
	}
	sortDescending(w, v, n, n)
}

// rotateCols applies the plane rotation [c s; -s c] to columns p and q of the rows x stride
// row-major matrix a: (a_p, a_q) <- (c a_p - s a_q, s a_p + c a_q).
func rotateCols(a []float64, rows, stride, p, q int, c, s float64) {
	for r := 0; r < rows; r++ {
		ap, aq := a[r*stride+p], a[r*stride+q]
		a[r*stride+p] = c*ap - s*aq
		a[r*stride+q] = s*ap + c*aq
	}
}

// sortDescending sorts w (length m) in descending order and permutes the first m columns of
// the rows x m-strided matrix v alike (insertion sort: m is small).
func sortDescending(w, v []float64, rows, m int) {
	for i := 1; i < m; i++ {
		for j := i; j > 0 && w[j] > w[j-1]; j-- {
			w[j], w[j-1] = w[j-1], w[j]
			for r := 0; r < rows; r++ {
				v[r*m+j], v[r*m+j-1] = v[r*m+j-1], v[r*m+j]
			}
		}
	}
}

// SVD computes the thin singular value decomposition of the m x n matrix a (row-major,
// m >= n) by one-sided Jacobi (Hestenes): on return the columns of a hold U diag(s), s the
// singular values in descending order and v (n x n) the right singular vectors in its
// columns. One-sided Jacobi computes small singular values to high relative accuracy, so rank
// decisions made on s match LAPACK's SVD.
func SVD(a []float64, m, n int, s, v []float64) { svd(a, m, n, s, v) }

// svd is SVD returning the number of sweeps run (at most svdMaxSweeps).
func svd(a []float64, m, n int, s, v []float64) (sweeps int) {
	if m < n || len(a) < m*n || len(s) < n || len(v) < n*n {
		panic("kernels: svd shape mismatch")
	}
	for i := 0; i < n*n; i++ {
		v[i] = 0
	}
	for i := 0; i < n; i++ {
		v[i*n+i] = 1
	}
	// A pair is rotated while its columns' cosine exceeds sqrt(m) eps, LAPACK dgesvj's default
	// (CTOL * EPSLN): 1e-16, below round-off, kept 4% of 10 x 10 inputs sweeping to the cap
	// of 60 before session 31 instead of 5-8 sweeps.
	tol := math.Sqrt(float64(m)) * 0x1p-53
	for sweeps < svdMaxSweeps {
		sweeps++
		rotated := false
		for p := 0; p < n-1; p++ {
			for q := p + 1; q < n; q++ {
				alpha, beta, gamma := 0.0, 0.0, 0.0
				for r := 0; r < m; r++ {
					ap, aq := a[r*n+p], a[r*n+q]
					alpha += ap * ap
					beta += aq * aq
					gamma += ap * aq
				}
				if gamma == 0 || math.Abs(gamma) <= tol*math.Sqrt(alpha*beta) {
					continue
				}
				rotated = true
				zeta := (beta - alpha) / (2 * gamma)
				t := 1 / (math.Abs(zeta) + math.Sqrt(1+zeta*zeta))
				if zeta < 0 {
					t = -t
				}
				c := 1 / math.Sqrt(1+t*t)
				sn := c * t
				rotateCols(a, m, n, p, q, c, sn)
				rotateCols(v, n, n, p, q, c, sn)
			}
		}
		if !rotated {
			break
		}
	}
	for j := 0; j < n; j++ {
		t := 0.0
		for r := 0; r < m; r++ {
			t += a[r*n+j] * a[r*n+j]
		}
		s[j] = math.Sqrt(t)
	}
	// Sort s descending, permuting the columns of a and v.
	for i := 1; i < n; i++ {
		for j := i; j > 0 && s[j] > s[j-1]; j-- {
			s[j], s[j-1] = s[j-1], s[j]
			for r := 0; r < m; r++ {
				a[r*n+j], a[r*n+j-1] = a[r*n+j-1], a[r*n+j]
			}
			for r := 0; r < n; r++ {
				v[r*n+j], v[r*n+j-1] = v[r*n+j-1], v[r*n+j]
			}
		}
	}
	return sweeps
}

// svdMaxSweeps bounds SVD's sweeps (5-8 are typical, see svd's tolerance).
const svdMaxSweeps = 60

// symEigenJacobiMax is the largest order SymEigen solves by cyclic Jacobi. Medians of 2000
// runs on random SPD matrices (session 34): Jacobi 0.36 us against 0.51 us for Dsyev at
// n = 3, 1.2 against 0.93 us at n = 4, 14 against 6.1 us at n = 10, 0.55 against 0.11 ms at
// n = 32 and 111 against 8.0 ms at n = 160 (em's fibres and direct-paper's Gamma_i at large k
// took minutes on Jacobi: a user trial).
const symEigenJacobiMax = 3

// eigWork pools SymEigen's workspace (a pointer, so that Put does not allocate); per-point
// loops give SymEigenWork their own.
var eigWork = sync.Pool{New: func() any { return new([]float64) }}

// symEigenQR is SymEigen by Dsyev with the workspace work (SymEigenWorkLen(n)): w gets the
// eigenvalues in descending order and v's columns the eigenvectors. If the QR iteration fails
// to converge (gonum's Dsyev allows 30 n sweeps; not seen for finite symmetric input), Jacobi
// runs on a copy of the input instead.
func symEigenQR(a []float64, n int, w, v, work []float64) {
	lw := 3*n - 1
	dw, keep := work[:lw], work[lw:lw+n*n]
	copy(keep, a[:n*n])
	if !(lapackgonum.Implementation{}).Dsyev(lapack.EVCompute, blas.Upper, n, a, n, w, dw, lw) {
		copy(a, keep)
		symEigenJacobi(a, n, w, v)
		return
	}
	// Dsyev leaves the eigenvectors in a's columns, eigenvalues ascending: reverse both.
	for j := 0; j < n; j++ {
		src := n - 1 - j
		for i := 0; i < n; i++ {
			v[i*n+j] = a[i*n+src]
		}
	}
	for i, j := 0, n-1; i < j; i, j = i+1, j-1 {
		w[i], w[j] = w[j], w[i]
	}
}
