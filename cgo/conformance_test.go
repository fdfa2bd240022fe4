package cgo

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/lapack"

	"glle/internal/testmat"
	"glle/kernels"
)

// Conformance of the BLAS and LAPACK routines the project calls through kernels.Current()
// (Dgemm, Dsyrk, Dtrsm, Dgemv, Dtrsv, Dpotrf, Dpotrs, Dsyev, Dgesvd) against oracles that do
// not come from any backend: naive loops for the BLAS (each result entry within a rigorous
// rounding bound of the exact formula, computed by the oracle next to it), residuals and
// orthogonality for LAPACK. Comparing the selected backend with gonum's proves nothing in the
// purego build, where the selected backend is gonum's; these hold in both builds, for the
// registered backend and for gonum's (kernels.Native: the fallback of the default build).
//
// Sizes sit at block edges (1, 2, 3, 31, 32, 33, 64, 65: gonum's BLAS-3 works in blocks of 64,
// its LAPACK's block sizes (ilaenv) are 32 and 64, OpenBLAS's register blocks are 2, 4 and 8
// wide), with leading dimensions padded; the padding and every triangle a routine must not read
// hold NaN, so reading them shows in the results, and every entry a routine must not write is
// compared bit for bit.
//
// Tolerances. The BLAS bounds are componentwise: a sum of k products computed in any order
// (blocked, with or without fused multiply-adds) is within gamma(k) = k u / (1 - k u) of the
// exact sum relative to the sum of the products' magnitudes (Higham, Accuracy and Stability of
// Numerical Algorithms, 2nd ed., section 3.1); the oracle's own sum has the same bound, hence
// a factor 2, and gamma(k+3) covers the scalings by alpha and beta. Triangular solves and
// Cholesky are checked through their componentwise backward errors (Higham theorems 8.5,
// 10.3, 10.4), a factor 2-3 again covering the oracle's residual. LAPACK's eigenvalue and SVD
// results are checked with the normwise test ratios of LAPACK's own test suite (dsyt21,
// dbdt01, dort01) against the thresholds of its data files (TESTING/sep.in: 60, svd.in: 35).

// roundoff is the unit round-off u of float64, 2^-53; ulp is LAPACK's dlamch('P') = 2^-52, the
// unit of its test ratios.
const (
	roundoff = 0x1p-53
	ulp      = 0x1p-52
)

// gamma is Higham's gamma_k = k u / (1 - k u).
func gamma(k int) float64 { return float64(k) * roundoff / (1 - float64(k)*roundoff) }

// edgeSizes are the orders and dimensions tested: 1-3 and the edges of blocks of 32 and 64.
var edgeSizes = []int{1, 2, 3, 31, 32, 33, 64, 65}

// backendsUnderTest returns the registered backend and, when it is another one, gonum's.
func backendsUnderTest() []kernels.Backend {
	cur := kernels.Current()
	if cur.Name() == kernels.Native.Name() {
		return []kernels.Backend{cur}
	}
	return []kernels.Backend{cur, kernels.Native}
}

// randPadded returns an r x c row-major matrix with leading dimension ld >= c: standard normal
// entries, NaN in the padding.
func randPadded(rng *rand.Rand, r, c, ld int) []float64 {
	a := make([]float64, r*ld)
	for i := 0; i < r; i++ {
		for j := 0; j < ld; j++ {
			if j < c {
				a[i*ld+j] = rng.NormFloat64()
			} else {
				a[i*ld+j] = math.NaN()
			}
		}
	}
	return a
}

// sameFloat reports whether a and b hold the same bits (NaN included).
func sameFloat(a, b float64) bool { return math.Float64bits(a) == math.Float64bits(b) }

// within reports whether got is a number within bound of want.
func within(got, want, bound float64) bool {
	return !math.IsNaN(got) && math.Abs(got-want) <= bound
}

// opAt returns op(A)[i][j] for the row-major a (lda): A[i][j], or A[j][i] when transposed.
func opAt(t blas.Transpose, a []float64, lda, i, j int) float64 {
	if t == blas.NoTrans {
		return a[i*lda+j]
	}
	return a[j*lda+i]
}

// checkGemm checks c = alpha op(A) op(B) + beta c0 (m x n, ldc), op(A) m x k, op(B) k x n,
// entry by entry within 2 gamma(k+3) (|alpha| |op(A)| |op(B)| + |beta c0|), and the padding of
// c untouched. With beta = 0, c0 is not read (it may hold NaN).
func checkGemm(tA, tB blas.Transpose, m, n, k int, alpha float64, a []float64, lda int, b []float64, ldb int, beta float64, c0, c []float64, ldc int) error {
	for i := 0; i < m; i++ {
		for j := 0; j < ldc; j++ {
			got := c[i*ldc+j]
			if j >= n {
				if !sameFloat(got, c0[i*ldc+j]) {
					return fmt.Errorf("c[%d][%d] outside the %d x %d block written", i, j, m, n)
				}
				continue
			}
			s, mag := 0.0, 0.0
			for l := 0; l < k; l++ {
				p := opAt(tA, a, lda, i, l) * opAt(tB, b, ldb, l, j)
				s += p
				mag += math.Abs(p)
			}
			want, wmag := alpha*s, math.Abs(alpha)*mag
			if beta != 0 {
				want += beta * c0[i*ldc+j]
				wmag += math.Abs(beta * c0[i*ldc+j])
			}
			if bound := 2 * gamma(k+3) * wmag; !within(got, want, bound) {
				return fmt.Errorf("c[%d][%d] = %v, the definition gives %v (bound %.3g)", i, j, got, want, bound)
			}
		}
	}
	return nil
}

// inTriangle reports whether (i, j) lies in the uplo triangle (diagonal included).
func inTriangle(ul blas.Uplo, i, j int) bool {
	if ul == blas.Lower {
		return j <= i
	}
	return j >= i
}

// checkSyrk checks the uplo triangle of c = alpha op(A) op(A)^T + beta c0 (n x n), op(A) n x k
// (A itself k x n when trans), like checkGemm; the other triangle and the padding untouched.
func checkSyrk(ul blas.Uplo, tA blas.Transpose, n, k int, alpha float64, a []float64, lda int, beta float64, c0, c []float64, ldc int) error {
	tB := blas.Trans
	if tA == blas.Trans {
		tB = blas.NoTrans
	}
	for i := 0; i < n; i++ {
		for j := 0; j < ldc; j++ {
			got := c[i*ldc+j]
			if j >= n || !inTriangle(ul, i, j) {
				if !sameFloat(got, c0[i*ldc+j]) {
					return fmt.Errorf("c[%d][%d] outside the %c triangle written", i, j, ul)
				}
				continue
			}
			s, mag := 0.0, 0.0
			for l := 0; l < k; l++ {
				p := opAt(tA, a, lda, i, l) * opAt(tB, a, lda, l, j)
				s += p
				mag += math.Abs(p)
			}
			want, wmag := alpha*s+beta*c0[i*ldc+j], math.Abs(alpha)*mag+math.Abs(beta*c0[i*ldc+j])
			if bound := 2 * gamma(k+3) * wmag; !within(got, want, bound) {
				return fmt.Errorf("c[%d][%d] = %v, the definition gives %v (bound %.3g)", i, j, got, want, bound)
			}
		}
	}
	return nil
}

// randTriangle returns an n x n row-major triangle (lda): off-diagonal entries uniform in
// [-1/2, 1/2], diagonal entries of magnitude in [1, 2] and random sign (NaN when unit: a unit
// diagonal must not be read), NaN in the other triangle and the padding.
func randTriangle(rng *rand.Rand, ul blas.Uplo, d blas.Diag, n, lda int) []float64 {
	a := make([]float64, n*lda)
	for i := range a {
		a[i] = math.NaN()
	}
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			switch {
			case i == j && d == blas.NonUnit:
				a[i*lda+j] = (1 + rng.Float64()) * float64(1-2*rng.IntN(2))
			case i != j && inTriangle(ul, i, j):
				a[i*lda+j] = rng.Float64() - 0.5
			}
		}
	}
	return a
}

// triAt returns op(T)[i][j] of the n x n uplo triangle t (lda): 0 outside the triangle, 1 on a
// unit diagonal.
func triAt(ul blas.Uplo, tr blas.Transpose, d blas.Diag, t []float64, lda, i, j int) float64 {
	if tr != blas.NoTrans {
		i, j = j, i
	}
	switch {
	case i == j && d == blas.Unit:
		return 1
	case !inTriangle(ul, i, j):
		return 0
	}
	return t[i*lda+j]
}

// checkTrsm checks the solution x (m x n, ldb) of op(T) x = alpha b0 (side Left, T m x m) or
// x op(T) = alpha b0 (Right, T n x n) through its residual: substitution in any order, with or
// without reciprocals of the pivots, solves a system whose triangle is within gamma(q+2) |T|
// entrywise (q the order; Higham theorem 8.5), so the residual is within gamma(q+2) |op(T)| |x|;
// the oracle's residual adds gamma(q+2) (|alpha b0| + |op(T)| |x|) at most: the bound is
// 3 gamma(q+2) (|alpha b0| + |op(T)| |x|). The padding of x stays untouched.
func checkTrsm(s blas.Side, ul blas.Uplo, tr blas.Transpose, d blas.Diag, m, n int, alpha float64, t []float64, lda int, b0, x []float64, ldb int) error {
	q := m
	if s == blas.Right {
		q = n
	}
	for i := 0; i < m; i++ {
		for j := 0; j < ldb; j++ {
			if j >= n {
				if !sameFloat(x[i*ldb+j], b0[i*ldb+j]) {
					return fmt.Errorf("x[%d][%d] outside the %d x %d block written", i, j, m, n)
				}
				continue
			}
			r, mag := alpha*b0[i*ldb+j], math.Abs(alpha*b0[i*ldb+j])
			for l := 0; l < q; l++ {
				var p float64
				if s == blas.Left {
					p = triAt(ul, tr, d, t, lda, i, l) * x[l*ldb+j]
				} else {
					p = x[i*ldb+l] * triAt(ul, tr, d, t, lda, l, j)
				}
				r -= p
				mag += math.Abs(p)
			}
			if bound := 3 * gamma(q+2) * mag; math.IsNaN(r) || math.Abs(r) > bound {
				return fmt.Errorf("residual %v at [%d][%d] (bound %.3g)", r, i, j, bound)
			}
		}
	}
	return nil
}

// strided returns a vector of n standard normal entries at stride inc, NaN between them.
func strided(rng *rand.Rand, n, inc int) []float64 {
	x := make([]float64, (n-1)*inc+1)
	for i := range x {
		x[i] = math.NaN()
	}
	for i := 0; i < n; i++ {
		x[i*inc] = rng.NormFloat64()
	}
	return x
}

// checkGemv checks y = alpha op(A) x + beta y0 (op(A) r x c, y at stride incy) like checkGemm,
// the entries between y's strided ones untouched.
func checkGemv(tA blas.Transpose, r, c int, alpha float64, a []float64, lda int, x []float64, incx int, beta float64, y0, y []float64, incy int) error {
	for i := range y {
		if i%incy != 0 {
			if !sameFloat(y[i], y0[i]) {
				return fmt.Errorf("y[%d] between the strided entries written", i)
			}
			continue
		}
		row := i / incy
		s, mag := 0.0, 0.0
		for l := 0; l < c; l++ {
			p := opAt(tA, a, lda, row, l) * x[l*incx]
			s += p
			mag += math.Abs(p)
		}
		want := alpha*s + beta*y0[i]
		if bound := 2 * gamma(c+3) * (math.Abs(alpha)*mag + math.Abs(beta*y0[i])); !within(y[i], want, bound) {
			return fmt.Errorf("y[%d] = %v, the definition gives %v (bound %.3g)", row, y[i], want, bound)
		}
	}
	return nil
}

// checkTrsv checks the solution x (stride inc) of op(T) x = x0 like checkTrsm.
func checkTrsv(ul blas.Uplo, tr blas.Transpose, d blas.Diag, n int, t []float64, lda int, x0, x []float64, inc int) error {
	for i := range x {
		if i%inc != 0 {
			if !sameFloat(x[i], x0[i]) {
				return fmt.Errorf("x[%d] between the strided entries written", i)
			}
			continue
		}
		row := i / inc
		r, mag := x0[i], math.Abs(x0[i])
		for l := 0; l < n; l++ {
			p := triAt(ul, tr, d, t, lda, row, l) * x[l*inc]
			r -= p
			mag += math.Abs(p)
		}
		if bound := 3 * gamma(n+2) * mag; math.IsNaN(r) || math.Abs(r) > bound {
			return fmt.Errorf("residual %v at %d (bound %.3g)", r, row, bound)
		}
	}
	return nil
}

// TestBackendBLASConformance runs the BLAS routines the project calls, in all their variants
// (transpositions, triangles, sides, diagonals, alpha and beta, unit and wider strides), at the
// edge sizes, through each backend under test, and checks each result against the naive-loop
// oracles above.
func TestBackendBLASConformance(t *testing.T) {
	for _, be := range backendsUnderTest() {
		t.Run(be.Name(), func(t *testing.T) {
			bl := be.BLAS()
			rng := rand.New(rand.NewPCG(61, 62))
			trans := []blas.Transpose{blas.NoTrans, blas.Trans}
			uplos := []blas.Uplo{blas.Lower, blas.Upper}
			diags := []blas.Diag{blas.NonUnit, blas.Unit}
			// Dgemm: every (m, n, k) of edge sizes in every transposition, the (alpha, beta)
			// pairs in turn.
			scal := [][2]float64{{1, 0}, {-1, 1}, {-0.75, 0.5}, {2, 0}}
			cse := 0
			for _, m := range edgeSizes {
				for _, n := range edgeSizes {
					for _, k := range edgeSizes {
						for _, tA := range trans {
							for _, tB := range trans {
								alpha, beta := scal[cse%len(scal)][0], scal[cse%len(scal)][1]
								cse++
								ar, ac := m, k
								if tA == blas.Trans {
									ar, ac = k, m
								}
								br, bc := k, n
								if tB == blas.Trans {
									br, bc = n, k
								}
								a, b := randPadded(rng, ar, ac, ac+1), randPadded(rng, br, bc, bc+3)
								ldc := n + 2
								c0 := randPadded(rng, m, n, ldc)
								if beta == 0 {
									for i := range c0 {
										c0[i] = math.NaN() // not read with beta = 0
									}
								}
								c := slices.Clone(c0)
								bl.Dgemm(tA, tB, m, n, k, alpha, a, ac+1, b, bc+3, beta, c, ldc)
								if err := checkGemm(tA, tB, m, n, k, alpha, a, ac+1, b, bc+3, beta, c0, c, ldc); err != nil {
									t.Fatalf("Dgemm(%c, %c, m=%d, n=%d, k=%d, alpha=%v, beta=%v): %v", tA, tB, m, n, k, alpha, beta, err)
								}
							}
						}
					}
				}
			}
			// Dsyrk: both triangles and transpositions, at every (n, k).
			for _, n := range edgeSizes {
				for _, k := range edgeSizes {
					for _, ul := range uplos {
						for _, tA := range trans {
							ar, ac := n, k
							if tA == blas.Trans {
								ar, ac = k, n
							}
							a := randPadded(rng, ar, ac, ac+2)
							ldc := n + 1
							c0 := randPadded(rng, n, n, ldc)
							for i := 0; i < n; i++ {
								for j := 0; j < n; j++ {
									if !inTriangle(ul, i, j) {
										c0[i*ldc+j] = math.NaN() // not read
									}
								}
							}
							c := slices.Clone(c0)
							bl.Dsyrk(ul, tA, n, k, -1, a, ac+2, 0.5, c, ldc)
							if err := checkSyrk(ul, tA, n, k, -1, a, ac+2, 0.5, c0, c, ldc); err != nil {
								t.Fatalf("Dsyrk(%c, %c, n=%d, k=%d): %v", ul, tA, n, k, err)
							}
						}
					}
				}
			}
			// Dtrsm: every side, triangle, transposition and diagonal at every (m, n).
			for _, m := range edgeSizes {
				for _, n := range edgeSizes {
					for _, s := range []blas.Side{blas.Left, blas.Right} {
						for _, ul := range uplos {
							for _, tr := range trans {
								for _, d := range diags {
									q := m
									if s == blas.Right {
										q = n
									}
									alpha := 1.0
									if d == blas.Unit {
										alpha = -2.5
									}
									tri := randTriangle(rng, ul, d, q, q+1)
									ldb := n + 2
									b0 := randPadded(rng, m, n, ldb)
									x := slices.Clone(b0)
									bl.Dtrsm(s, ul, tr, d, m, n, alpha, tri, q+1, x, ldb)
									if err := checkTrsm(s, ul, tr, d, m, n, alpha, tri, q+1, b0, x, ldb); err != nil {
										t.Fatalf("Dtrsm(%c, %c, %c, %c, m=%d, n=%d): %v", s, ul, tr, d, m, n, err)
									}
								}
							}
						}
					}
				}
			}
			// Dgemv and Dtrsv: both transpositions (triangles, diagonals), strides 1 and 2.
			for _, r := range edgeSizes {
				for _, inc := range []int{1, 2} {
					for _, tA := range trans {
						for _, c := range edgeSizes {
							ar, ac := r, c
							if tA == blas.Trans {
								ar, ac = c, r
							}
							a := randPadded(rng, ar, ac, ac+1)
							x := strided(rng, c, inc)
							y0 := strided(rng, r, inc)
							y := slices.Clone(y0)
							bl.Dgemv(tA, ar, ac, 0.5, a, ac+1, x, inc, -1, y, inc)
							if err := checkGemv(tA, r, c, 0.5, a, ac+1, x, inc, -1, y0, y, inc); err != nil {
								t.Fatalf("Dgemv(%c, %d x %d, inc %d): %v", tA, ar, ac, inc, err)
							}
						}
						for _, ul := range uplos {
							for _, d := range diags {
								tri := randTriangle(rng, ul, d, r, r+2)
								x0 := strided(rng, r, inc)
								x := slices.Clone(x0)
								bl.Dtrsv(ul, tA, d, r, tri, r+2, x, inc)
								if err := checkTrsv(ul, tA, d, r, tri, r+2, x0, x, inc); err != nil {
									t.Fatalf("Dtrsv(%c, %c, %c, n=%d, inc %d): %v", ul, tA, d, r, inc, err)
								}
							}
						}
					}
				}
			}
		})
	}
}

// randSPD returns Z Z^T / n + I/10 (n x n, Z standard normal): symmetric positive definite
// with a condition number of a few hundred at most at these sizes.
func randSPD(rng *rand.Rand, n int) []float64 {
	z := randPadded(rng, n, n, n)
	a := make([]float64, n*n)
	for i := 0; i < n; i++ {
		for j := 0; j <= i; j++ {
			s := 0.0
			for l := 0; l < n; l++ {
				s += z[i*n+l] * z[j*n+l]
			}
			s /= float64(n)
			if i == j {
				s += 0.1
			}
			a[i*n+j], a[j*n+i] = s, s
		}
	}
	return a
}

// norm1 returns the largest column sum of |a| (r x c, lda).
func norm1(a []float64, r, c, lda int) float64 {
	mx := 0.0
	for j := 0; j < c; j++ {
		s := 0.0
		for i := 0; i < r; i++ {
			s += math.Abs(a[i*lda+j])
		}
		mx = max(mx, s)
	}
	return mx
}

// orthRatio returns LAPACK dort01's ||Q^T Q - I||_1 / (n ulp) for the n columns of the r x n
// matrix q (ldq), or the rows when rows (then Q Q^T - I over n rows of length r).
func orthRatio(q []float64, r, n, ldq int, rows bool) float64 {
	at := func(i, j int) float64 { // column j's entry i
		if rows {
			return q[j*ldq+i]
		}
		return q[i*ldq+j]
	}
	g := make([]float64, n*n)
	for a := 0; a < n; a++ {
		for b := 0; b < n; b++ {
			s := 0.0
			for i := 0; i < r; i++ {
				s += at(i, a) * at(i, b)
			}
			if a == b {
				s--
			}
			g[a*n+b] = s
		}
	}
	return norm1(g, n, n, n) / (float64(n) * ulp)
}

// factorOf returns the Cholesky factor in the uplo triangle of f as a lower triangle L with
// A = L L^T (for Upper, L = U^T), n x n row-major.
func factorOf(ul blas.Uplo, n int, f []float64, lda int) []float64 {
	l := make([]float64, n*n)
	for i := 0; i < n; i++ {
		for j := 0; j <= i; j++ {
			if ul == blas.Lower {
				l[i*n+j] = f[i*lda+j]
			} else {
				l[i*n+j] = f[j*lda+i]
			}
		}
	}
	return l
}

// checkPotrf checks the factor in the uplo triangle of f (lda) of the SPD matrix in the uplo
// triangle of a0 (n x n, lda): positive diagonal, the other triangle and the padding
// untouched, and L L^T = A + dA with
// |dA| <= gamma(n+1) |L| |L^T| entrywise (Higham theorem 10.3, any order of the inner
// products); 2 gamma(n+2) covers the oracle's product too.
func checkPotrf(ul blas.Uplo, n int, a0, f []float64, lda int) error {
	for i := 0; i < n; i++ {
		for j := 0; j < lda; j++ {
			if j >= n || !inTriangle(ul, i, j) {
				if !sameFloat(f[i*lda+j], a0[i*lda+j]) {
					return fmt.Errorf("entry [%d][%d] outside the %c triangle written", i, j, ul)
				}
			}
		}
	}
	l := factorOf(ul, n, f, lda)
	for i := 0; i < n; i++ {
		if !(l[i*n+i] > 0) {
			return fmt.Errorf("pivot %d = %v, not positive", i, l[i*n+i])
		}
		for j := 0; j <= i; j++ {
			s, mag := 0.0, 0.0
			for c := 0; c <= j; c++ {
				p := l[i*n+c] * l[j*n+c]
				s += p
				mag += math.Abs(p)
			}
			want := a0[i*lda+j] // A[i][j] = A[j][i], stored in the uplo triangle
			if !inTriangle(ul, i, j) {
				want = a0[j*lda+i]
			}
			if bound := 2 * gamma(n+2) * mag; !within(s, want, bound) {
				return fmt.Errorf("(L L^T)[%d][%d] = %v, A = %v (bound %.3g)", i, j, s, want, bound)
			}
		}
	}
	return nil
}

// checkPotrs checks the solutions x (n x nrhs, ldb) of A x = b0 (a: A, n x n, both triangles)
// solved with the factor in f (lda):
// (A + dA) x = b0 with |dA| <= gamma(3n+1) |L| |L^T| (Higham theorem 10.4), so the residual
// b0 - A x is within gamma(3n+1) |L| |L^T| |x|; with the oracle's residual, the bound is
// 2 gamma(3n+2) (|L| |L^T| |x| + |A| |x| + |b0|).
func checkPotrs(ul blas.Uplo, n, nrhs int, a, f []float64, lda int, b0, x []float64, ldb int) error {
	l := factorOf(ul, n, f, lda)
	for r := 0; r < nrhs; r++ {
		// |L^T| |x| first, then |L| times it.
		tx := make([]float64, n)
		for i := 0; i < n; i++ {
			for c := i; c < n; c++ {
				tx[i] += math.Abs(l[c*n+i] * x[c*ldb+r])
			}
		}
		for i := 0; i < n; i++ {
			res, mag := b0[i*ldb+r], math.Abs(b0[i*ldb+r])
			for c := 0; c < n; c++ {
				p := a[i*n+c] * x[c*ldb+r]
				res -= p
				mag += math.Abs(p)
			}
			for c := 0; c <= i; c++ {
				mag += math.Abs(l[i*n+c]) * tx[c]
			}
			if bound := 2 * gamma(3*n+2) * mag; math.IsNaN(res) || math.Abs(res) > bound {
				return fmt.Errorf("residual %v at [%d][%d] (bound %.3g)", res, i, r, bound)
			}
		}
	}
	return nil
}

// Thresholds of LAPACK's test ratios, from its data files TESTING/sep.in (symmetric
// eigenproblems) and TESTING/svd.in (singular value decompositions).
const (
	sepThresh = 60
	svdThresh = 35
)

// checkSyev checks Dsyev's eigenvalues w (ascending) and eigenvectors (the columns of v, n x n,
// ldv) of the symmetric a (n x n, both triangles): LAPACK dsyt21's ratios, the first in the
// form ||A V - V W||_1 / (n ||A||_1 ulp), and ||V^T V - I||_1 / (n ulp) below sepThresh (measured
// at most 0.5 and 1.3 at these sizes), and, for a
// known spectrum lambda, |w_i - lambda_i| / (n ||A||_1 ulp) too (Weyl: the computed eigenvalues
// are exact for A + E, ||E||_2 <= ||A V - V W||_2-sized backward error).
func checkSyev(n int, a, w, v []float64, ldv int, lambda []float64) error {
	an := norm1(a, n, n, n)
	if an == 0 {
		an = 1 // as LAPACK's tests: the residuals must then vanish to round-off of 1
	}
	for j := 1; j < n; j++ {
		if w[j] < w[j-1] {
			return fmt.Errorf("eigenvalues not ascending: w[%d] = %v > w[%d] = %v", j-1, w[j-1], j, w[j])
		}
	}
	res := make([]float64, n*n)
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			s := -w[j] * v[i*ldv+j]
			for c := 0; c < n; c++ {
				s += a[i*n+c] * v[c*ldv+j]
			}
			res[i*n+j] = s
		}
	}
	if r := norm1(res, n, n, n) / (float64(n) * an * ulp); !(r < sepThresh) {
		return fmt.Errorf("||A V - V W|| / (n ||A|| ulp) = %.3g", r)
	}
	if r := orthRatio(v, n, n, ldv, false); !(r < sepThresh) {
		return fmt.Errorf("||V^T V - I|| / (n ulp) = %.3g", r)
	}
	if lambda != nil {
		want := slices.Sorted(slices.Values(lambda))
		for i := range want {
			if r := math.Abs(w[i]-want[i]) / (float64(n) * an * ulp); !(r < sepThresh) {
				return fmt.Errorf("eigenvalue %d = %v, the spectrum's %v (ratio %.3g)", i, w[i], want[i], r)
			}
		}
	}
	return nil
}

// checkGesvd checks Dgesvd's A = U diag(s) VT (a m x n, u m x m, vt n x n, all row-major and
// unpadded): LAPACK dbdt01's ||A - U S VT||_1 / (max(m, n) ||A||_1 ulp) and dort01's
// orthogonality ratios for U and VT below svdThresh; s descending and non-negative, and, for
// known singular values sigma, |s_i - sigma_i| / (max(m, n) ||A||_1 ulp) below it (Weyl).
func checkGesvd(m, n int, a, s, uu, vt []float64, sigma []float64) error {
	p := min(m, n)
	an := norm1(a, m, n, n)
	if an == 0 {
		an = 1 // as LAPACK's tests: the residuals must then vanish to round-off of 1
	}
	for i := 0; i < p; i++ {
		if !(s[i] >= 0) || i > 0 && s[i] > s[i-1] {
			return fmt.Errorf("singular values not descending and non-negative at %d: %v", i, s)
		}
	}
	res := make([]float64, m*n)
	for i := 0; i < m; i++ {
		for j := 0; j < n; j++ {
			x := a[i*n+j]
			for c := 0; c < p; c++ {
				x -= uu[i*m+c] * s[c] * vt[c*n+j]
			}
			res[i*n+j] = x
		}
	}
	mn := float64(max(m, n))
	if r := norm1(res, m, n, n) / (mn * an * ulp); !(r < svdThresh) {
		return fmt.Errorf("||A - U S VT|| / (max(m, n) ||A|| ulp) = %.3g", r)
	}
	if r := orthRatio(uu, m, m, m, false); !(r < svdThresh) {
		return fmt.Errorf("||U^T U - I|| / (m ulp) = %.3g", r)
	}
	if r := orthRatio(vt, n, n, n, true); !(r < svdThresh) {
		return fmt.Errorf("||VT VT^T - I|| / (n ulp) = %.3g", r)
	}
	if sigma != nil {
		want := slices.Sorted(slices.Values(sigma))
		slices.Reverse(want)
		for i := 0; i < p; i++ {
			if r := math.Abs(s[i]-want[i]) / (mn * an * ulp); !(r < svdThresh) {
				return fmt.Errorf("singular value %d = %v, the matrix's %v (ratio %.3g)", i, s[i], want[i], r)
			}
		}
	}
	return nil
}

// syev runs Dsyev (eigenvectors) on a copy of the symmetric a (n x n) stored with leading
// dimension n+1, only its uplo triangle set (NaN in the other and in the padding), with the
// workspace query first as the project does; it returns w and the eigenvectors (ldv n+1).
func syev(t *testing.T, lp lapack.Float64, ul blas.Uplo, n int, a []float64) (w, v []float64) {
	t.Helper()
	ld := n + 1
	v = make([]float64, n*ld)
	for i := range v {
		v[i] = math.NaN()
	}
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			if inTriangle(ul, i, j) {
				v[i*ld+j] = a[i*n+j]
			}
		}
	}
	w = make([]float64, n)
	work := make([]float64, 1)
	lp.Dsyev(lapack.EVCompute, ul, n, v, ld, w, work, -1)
	work = make([]float64, int(work[0]))
	if !lp.Dsyev(lapack.EVCompute, ul, n, v, ld, w, work, len(work)) {
		t.Fatalf("Dsyev(%c, n=%d) did not converge", ul, n)
	}
	return w, v
}

// gesvd runs Dgesvd (all of U and VT) on a copy of a (m x n), workspace query first.
func gesvd(t *testing.T, lp lapack.Float64, m, n int, a []float64) (s, uu, vt []float64) {
	t.Helper()
	ac := slices.Clone(a)
	s, uu, vt = make([]float64, min(m, n)), make([]float64, m*m), make([]float64, n*n)
	work := make([]float64, 1)
	lp.Dgesvd(lapack.SVDAll, lapack.SVDAll, m, n, ac, n, s, uu, m, vt, n, work, -1)
	work = make([]float64, int(work[0]))
	if !lp.Dgesvd(lapack.SVDAll, lapack.SVDAll, m, n, ac, n, s, uu, m, vt, n, work, len(work)) {
		t.Fatalf("Dgesvd(%d x %d) did not converge", m, n)
	}
	return s, uu, vt
}

// withSingular returns the m x n row-major U diag(sigma) V^T for random orthogonal U and V.
func withSingular(rng *rand.Rand, m, n int, sigma []float64) []float64 {
	uq, vq := testmat.RandOrthogonal(rng, m), testmat.RandOrthogonal(rng, n)
	a := make([]float64, m*n)
	for i := 0; i < m; i++ {
		for j := 0; j < n; j++ {
			for c, sg := range sigma {
				a[i*n+j] += uq[i*m+c] * sg * vq[j*n+c]
			}
		}
	}
	return a
}

// knownSpectrum returns n eigenvalues in pairs, 0, 0, 1, 1, 2, 2, ... with every fifth negated
// (from n = 4 on; 1, 2, 3 below): repeated eigenvalues, a double zero (a null space, as in the
// embeddings' matrices) and negative ones.
func knownSpectrum(n int) []float64 {
	l := make([]float64, n)
	for i := range l {
		l[i] = float64(i / 2)
		if n < 4 {
			l[i] = float64(i + 1)
		}
		if i%5 == 4 {
			l[i] = -l[i]
		}
	}
	return l
}

// TestBackendLAPACKConformance runs the LAPACK routines the project calls at the edge sizes
// through each backend under test: Dpotrf (both triangles; an indefinite matrix refused),
// Dpotrs (1 and 3 right-hand sides), Dsyev (both triangles, random and known spectra with
// repeated and zero eigenvalues) and Dgesvd (square as the project calls it, and rectangular;
// random and known singular values with repeats and zeros), each checked by residual,
// orthogonality and the known values.
func TestBackendLAPACKConformance(t *testing.T) {
	for _, be := range backendsUnderTest() {
		t.Run(be.Name(), func(t *testing.T) {
			lp := be.LAPACK()
			rng := rand.New(rand.NewPCG(63, 64))
			for _, n := range edgeSizes {
				for _, ul := range []blas.Uplo{blas.Lower, blas.Upper} {
					spd := randSPD(rng, n)
					lda := n + 2
					a0 := make([]float64, n*lda)
					for i := 0; i < n; i++ {
						for j := 0; j < lda; j++ {
							a0[i*lda+j] = math.NaN() // the padding and the triangle not read
							if j < n && inTriangle(ul, i, j) {
								a0[i*lda+j] = spd[i*n+j]
							}
						}
					}
					f := slices.Clone(a0)
					if !lp.Dpotrf(ul, n, f, lda) {
						t.Fatalf("Dpotrf(%c, n=%d) refused an SPD matrix", ul, n)
					}
					if err := checkPotrf(ul, n, a0, f, lda); err != nil {
						t.Fatalf("Dpotrf(%c, n=%d): %v", ul, n, err)
					}
					for _, nrhs := range []int{1, 3} {
						b0 := randPadded(rng, n, nrhs, nrhs+1)
						x := slices.Clone(b0)
						lp.Dpotrs(ul, n, nrhs, f, lda, x, nrhs+1)
						for i := 0; i < n; i++ {
							if !sameFloat(x[i*(nrhs+1)+nrhs], b0[i*(nrhs+1)+nrhs]) {
								t.Fatalf("Dpotrs(%c, n=%d, nrhs=%d): padding written", ul, n, nrhs)
							}
						}
						if err := checkPotrs(ul, n, nrhs, spd, f, lda, b0, x, nrhs+1); err != nil {
							t.Fatalf("Dpotrs(%c, n=%d, nrhs=%d): %v", ul, n, nrhs, err)
						}
					}
					// Pivot n/2 made -1: the first n/2 pivots are those of spd, so the factor
					// breaks down there.
					l := factorOf(ul, n, f, lda)
					bad := slices.Clone(a0)
					h := n / 2
					bad[h*lda+h] -= l[h*n+h]*l[h*n+h] + 1
					if lp.Dpotrf(ul, n, bad, lda) {
						t.Fatalf("Dpotrf(%c, n=%d) accepted a matrix with a negative pivot %d", ul, n, h)
					}
				}
				// Dsyev.
				sym := randPadded(rng, n, n, n)
				for i := 0; i < n; i++ {
					for j := 0; j < i; j++ {
						sym[j*n+i] = sym[i*n+j]
					}
				}
				lambda := knownSpectrum(n)
				for _, c := range []struct {
					a      []float64
					lambda []float64
				}{{sym, nil}, {testmat.WithSpectrum(rng, lambda), lambda}} {
					for _, ul := range []blas.Uplo{blas.Lower, blas.Upper} {
						w, v := syev(t, lp, ul, n, c.a)
						if err := checkSyev(n, c.a, w, v, n+1, c.lambda); err != nil {
							t.Fatalf("Dsyev(%c, n=%d, known spectrum %v): %v", ul, n, c.lambda != nil, err)
						}
					}
				}
			}
			// Dgesvd: square at every edge size (the sampler's p x p call), and rectangular.
			dims := [][2]int{{1, 3}, {3, 1}, {2, 33}, {33, 2}, {65, 31}, {31, 65}, {64, 33}}
			for _, n := range edgeSizes {
				dims = append(dims, [2]int{n, n})
			}
			for _, dm := range dims {
				m, n := dm[0], dm[1]
				p := min(m, n)
				sigma := make([]float64, p)
				for i := range sigma {
					sigma[i] = float64((p - i) / 2) // p/2, ..., 2, 2, 1, 1, 0: repeats and a zero (all 0 at p = 1)
				}
				for _, c := range []struct {
					a     []float64
					sigma []float64
				}{{randPadded(rng, m, n, n), nil}, {withSingular(rng, m, n, sigma), sigma}} {
					s, uu, vt := gesvd(t, lp, m, n, c.a)
					if err := checkGesvd(m, n, c.a, s, uu, vt, c.sigma); err != nil {
						t.Fatalf("Dgesvd(%d x %d, known values %v): %v", m, n, c.sigma != nil, err)
					}
				}
			}
		})
	}
}

// TestConformanceOraclesCatchErrors feeds the oracles above deliberately wrong results, each a
// plausible backend bug at a block edge, and requires every one to be refused: a check that
// cannot fail would pass any backend.
func TestConformanceOraclesCatchErrors(t *testing.T) {
	bl, lp := kernels.Native.BLAS(), kernels.Native.LAPACK()
	rng := rand.New(rand.NewPCG(65, 66))
	refused := func(what string, err error) {
		t.Helper()
		if err == nil {
			t.Errorf("%s: accepted", what)
		} else {
			t.Logf("%s: refused (%v)", what, err)
		}
	}
	const m, n, k = 33, 65, 65
	a, b := randPadded(rng, m, k, k), randPadded(rng, n, k, k)
	c0 := randPadded(rng, m, n, n)
	// Dgemm that drops the last product of the inner dimension (k = 65: one past a block of 64).
	c := slices.Clone(c0)
	bl.Dgemm(blas.NoTrans, blas.Trans, m, n, k-1, 1, a, k, b, k, 0.5, c, n)
	refused("Dgemm without the last inner product", checkGemm(blas.NoTrans, blas.Trans, m, n, k, 1, a, k, b, k, 0.5, c0, c, n))
	// Dgemm that ignores beta.
	c = slices.Clone(c0)
	bl.Dgemm(blas.NoTrans, blas.Trans, m, n, k, 1, a, k, b, k, 0, c, n)
	refused("Dgemm ignoring beta", checkGemm(blas.NoTrans, blas.Trans, m, n, k, 1, a, k, b, k, 0.5, c0, c, n))
	// Dgemm right but one entry off by 1e-10 (the rounding bound there is about 1e-12: 2
	// gamma(68) times a sum of 65 products of magnitude 0.6 on average).
	c = slices.Clone(c0)
	bl.Dgemm(blas.NoTrans, blas.Trans, m, n, k, 1, a, k, b, k, 0.5, c, n)
	if err := checkGemm(blas.NoTrans, blas.Trans, m, n, k, 1, a, k, b, k, 0.5, c0, c, n); err != nil {
		t.Fatalf("the correct Dgemm refused: %v", err)
	}
	c[(m-1)*n+n-1] += 1e-10
	refused("Dgemm with its last entry off by 1e-10", checkGemm(blas.NoTrans, blas.Trans, m, n, k, 1, a, k, b, k, 0.5, c0, c, n))
	// Dsyrk that writes the other triangle.
	sc0 := randPadded(rng, n, n, n)
	sc := slices.Clone(sc0)
	bl.Dgemm(blas.NoTrans, blas.Trans, n, n, k, -1, b, k, b, k, 0.5, sc, n) // the full square
	refused("Dsyrk writing the upper triangle", checkSyrk(blas.Lower, blas.NoTrans, n, k, -1, b, k, 0.5, sc0, sc, n))
	// Dtrsm solving with the transposed triangle, and with a unit diagonal for a non-unit one.
	tri := randTriangle(rng, blas.Lower, blas.NonUnit, n, n)
	b0 := randPadded(rng, m, n, n)
	x := slices.Clone(b0)
	bl.Dtrsm(blas.Right, blas.Lower, blas.NoTrans, blas.NonUnit, m, n, 1, tri, n, x, n)
	refused("Dtrsm with the wrong transposition", checkTrsm(blas.Right, blas.Lower, blas.Trans, blas.NonUnit, m, n, 1, tri, n, b0, x, n))
	triU := slices.Clone(tri)
	for i := 0; i < n; i++ {
		triU[i*n+i] = 1
	}
	x = slices.Clone(b0)
	bl.Dtrsm(blas.Right, blas.Lower, blas.Trans, blas.NonUnit, m, n, 1, triU, n, x, n)
	refused("Dtrsm ignoring the diagonal", checkTrsm(blas.Right, blas.Lower, blas.Trans, blas.NonUnit, m, n, 1, tri, n, b0, x, n))
	// Dgemv with the last column dropped; Dtrsv with one entry off by 1e-10 (its residual's
	// bound is about 1e-13 there).
	xv, y0 := strided(rng, k, 1), strided(rng, m, 1)
	y := slices.Clone(y0)
	bl.Dgemv(blas.NoTrans, m, k-1, 1, a, k, xv, 1, 1, y, 1)
	refused("Dgemv without the last column", checkGemv(blas.NoTrans, m, k, 1, a, k, xv, 1, 1, y0, y, 1))
	xs0 := strided(rng, n, 1)
	xs := slices.Clone(xs0)
	bl.Dtrsv(blas.Lower, blas.NoTrans, blas.NonUnit, n, tri, n, xs, 1)
	xs[0] += 1e-10
	refused("Dtrsv with its first entry off by 1e-10", checkTrsv(blas.Lower, blas.NoTrans, blas.NonUnit, n, tri, n, xs0, xs, 1))
	// Dpotrf with one entry of the factor off by 1e-12 relative (the bound is 2 gamma(67) =
	// 1.5e-14 relative to the same product), or writing the triangle it must not; Dpotrs with
	// one entry of the solution off by 1e-7 (its residual's bound is below 1e-11 here).
	spd := randSPD(rng, n)
	f := slices.Clone(spd)
	if !lp.Dpotrf(blas.Lower, n, f, n) {
		t.Fatal("Dpotrf refused an SPD matrix")
	}
	if err := checkPotrf(blas.Lower, n, spd, f, n); err != nil {
		t.Fatalf("the correct Dpotrf refused: %v", err)
	}
	fb := slices.Clone(f)
	fb[(n-1)*n] *= 1 + 1e-12
	refused("Dpotrf with L[n-1][0] off by 1e-12", checkPotrf(blas.Lower, n, spd, fb, n))
	fb = slices.Clone(f)
	fb[n-1] = 0 // the upper triangle zeroed, as a routine writing it might
	refused("Dpotrf writing the other triangle", checkPotrf(blas.Lower, n, spd, fb, n))
	pb0 := randPadded(rng, n, 1, 1)
	px := slices.Clone(pb0)
	lp.Dpotrs(blas.Lower, n, 1, f, n, px, 1)
	px[n/2] += 1e-7
	refused("Dpotrs with one entry off by 1e-7", checkPotrs(blas.Lower, n, 1, spd, f, n, pb0, px, 1))
	// Dsyev: an eigenvalue off by 1e-10 ||A|| (a ratio of about 7000); the eigenvectors of the
	// smallest and the largest eigenvalue swapped; the eigenvalues in descending order; a
	// spectrum off by 1e-9 ||A||.
	lambda := knownSpectrum(n)
	as := testmat.WithSpectrum(rng, lambda)
	w, v := syev(t, lp, blas.Lower, n, as)
	if err := checkSyev(n, as, w, v, n+1, lambda); err != nil {
		t.Fatalf("the correct Dsyev refused: %v", err)
	}
	wb := slices.Clone(w)
	wb[n-1] += 1e-10 * norm1(as, n, n, n)
	refused("Dsyev with an eigenvalue off by 1e-10 ||A||", checkSyev(n, as, wb, v, n+1, nil))
	vb := slices.Clone(v)
	for i := 0; i < n; i++ {
		vb[i*(n+1)+n-1], vb[i*(n+1)] = vb[i*(n+1)], vb[i*(n+1)+n-1]
	}
	refused("Dsyev with two eigenvectors swapped", checkSyev(n, as, w, vb, n+1, nil))
	wb = slices.Clone(w)
	slices.Reverse(wb)
	refused("Dsyev with descending eigenvalues", checkSyev(n, as, wb, v, n+1, nil))
	shifted := slices.Clone(lambda)
	shifted[n-1] += 1e-9 * norm1(as, n, n, n)
	refused("Dsyev against a spectrum off by 1e-9 ||A||", checkSyev(n, as, w, v, n+1, shifted))
	// Dgesvd: a singular value off by 1e-10 ||A|| (a ratio of about 7000); a column of U
	// negated; V returned in place of VT.
	sig := make([]float64, 31)
	for i := range sig {
		sig[i] = float64(15 - i/2)
	}
	ag := withSingular(rng, 65, 31, sig)
	s, uu, vt := gesvd(t, lp, 65, 31, ag)
	if err := checkGesvd(65, 31, ag, s, uu, vt, sig); err != nil {
		t.Fatalf("the correct Dgesvd refused: %v", err)
	}
	sb := slices.Clone(s)
	sb[0] += 1e-10 * norm1(ag, 65, 31, 31)
	refused("Dgesvd with a singular value off by 1e-10 ||A||", checkGesvd(65, 31, ag, sb, uu, vt, nil))
	ub := slices.Clone(uu)
	for i := 0; i < 65; i++ {
		ub[i*65] = -ub[i*65]
	}
	refused("Dgesvd with a column of U negated", checkGesvd(65, 31, ag, s, ub, vt, nil))
	vtt := slices.Clone(vt)
	for i := 0; i < 31; i++ {
		for j := 0; j < i; j++ {
			vtt[i*31+j], vtt[j*31+i] = vtt[j*31+i], vtt[i*31+j]
		}
	}
	refused("Dgesvd with V in place of VT", checkGesvd(65, 31, ag, s, uu, vtt, nil))
}
