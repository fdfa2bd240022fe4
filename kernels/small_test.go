package kernels

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"gonum.org/v1/gonum/blas"
	lapackgonum "gonum.org/v1/gonum/lapack/gonum"

	"glle/internal/testmat"
)

func randSPD(rng *rand.Rand, k int) []float64 {
	z := make([]float64, k*(k+3))
	for i := range z {
		z[i] = rng.NormFloat64()
	}
	g := make([]float64, k*k)
	Gram(g, z, k, k+3)
	return g
}

func TestCholeskySolve(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	// Sizes at and around Cholesky's switch to gonum's Dpotrf (CholeskyGonumMin = 22).
	g := CholeskyGonumMin
	for _, k := range []int{1, 2, 3, 10, 17, g - 2, g - 1, g, g + 1, 32} {
		a := randSPD(rng, k)
		orig := append([]float64(nil), a...)
		x := make([]float64, k)
		for i := range x {
			x[i] = rng.NormFloat64()
		}
		b := make([]float64, k)
		for i := 0; i < k; i++ {
			for j := 0; j < k; j++ {
				b[i] += orig[i*k+j] * x[j]
			}
		}
		if !Cholesky(a, k) {
			t.Fatalf("k=%d: SPD matrix rejected", k)
		}
		// Below the switch Cholesky is the unblocked loop, from it on gonum's Dpotrf, bit for
		// bit; the two agree with each other to Cholesky's backward error.
		small := append([]float64(nil), orig...)
		choleskySmall(small, k)
		gon := append([]float64(nil), orig...)
		lapackgonum.Implementation{}.Dpotrf(blas.Lower, k, gon, k)
		want := small
		if k >= g {
			want = gon
		}
		amax := 0.0
		for _, v := range orig {
			amax = max(amax, math.Abs(v))
		}
		for i := 0; i < k; i++ {
			for j := 0; j <= i; j++ {
				if a[i*k+j] != want[i*k+j] {
					t.Fatalf("k=%d (switch at %d): L[%d][%d] = %v, want %v (unblocked loop %v, gonum %v)", k, g, i, j, a[i*k+j], want[i*k+j], small[i*k+j], gon[i*k+j])
				}
				// |dL| <~ cond(L) k u |L| = 38 * 32 * 1.1e-16 * |L| = 1.3e-13 |L| at k = 32, with
				// |L| <= sqrt(amax) and cond(L) = sqrt(cond(a)) <= sqrt(1409) (measured 1.9e-15).
				if math.Abs(gon[i*k+j]-small[i*k+j]) > 1e-12*math.Sqrt(amax) {
					t.Fatalf("k=%d: gonum's L[%d][%d] = %v, the unblocked loop's %v", k, i, j, gon[i*k+j], small[i*k+j])
				}
			}
			for j := i + 1; j < k; j++ {
				if a[i*k+j] != orig[i*k+j] {
					t.Fatalf("k=%d: upper entry (%d,%d) changed", k, i, j)
				}
			}
		}
		CholSolve(a, k, b)
		for i := range x {
			// Wishart matrices with k+3 dof have condition numbers up to ~1e4: 1e-9 leaves room.
			if math.Abs(b[i]-x[i]) > 1e-9*(1+math.Abs(x[i])) {
				t.Fatalf("k=%d: x[%d]=%v want %v", k, i, b[i], x[i])
			}
		}
	}
	neg := []float64{1, 2, 2, 1}
	if Cholesky(neg, 2) {
		t.Fatal("indefinite matrix accepted")
	}
}

// TestSymEigenResidual checks A v = w v and V^T V = I for random SPD matrices and for
// matrices with known repeated eigenvalues (a pair 1, 1 and, from n = 4 on, a double zero:
// a rank deficiency), whose eigenvectors are determined only up to a rotation inside the
// repeated eigenspace; the computed eigenvalues must match the known ones.
func TestSymEigenResidual(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	// 1-3 by Jacobi, 4 and up by Dsyev (symEigenJacobiMax); 160 is the size at which a user
	// trial found Jacobi taking 76 ms per point.
	for _, n := range []int{1, 2, 3, 4, 10, 20, 160} {
		// Known spectra: 1, 1, 2, 3, ... and 0, 0, 1, 1, 2, ... (n >= 4).
		pair := make([]float64, n)
		for i := range pair {
			pair[i] = math.Max(1, float64(i))
		}
		cases := []struct {
			a      []float64
			lambda []float64 // the known spectrum, nil for the random SPD matrix
		}{{randSPD(rng, n), nil}, {testmat.WithSpectrum(rng, pair), pair}}
		if n >= 4 {
			zeros := make([]float64, n)
			for i := 2; i < n; i++ {
				zeros[i] = math.Max(1, float64(i-2))
			}
			cases = append(cases, struct {
				a      []float64
				lambda []float64
			}{testmat.WithSpectrum(rng, zeros), zeros})
		}
		for ci, c := range cases {
			a := c.a
			orig := append([]float64(nil), a...)
			w := make([]float64, n)
			v := make([]float64, n*n)
			SymEigen(a, n, w, v)
			norm := 0.0
			for _, x := range orig {
				norm = math.Max(norm, math.Abs(x))
			}
			if c.lambda != nil {
				want := slices.Clone(c.lambda)
				slices.Sort(want)
				slices.Reverse(want)
				for j := range want {
					// Weyl: |w - lambda| <= ||E||_2 for the backward error E of Jacobi and of
					// forming Q diag(lambda) Q^T, both O(n u ||A||); 1e-12 n ||A||_max as below.
					if math.Abs(w[j]-want[j]) > 1e-12*norm*float64(n) {
						t.Fatalf("n=%d case %d: eigenvalues %v, want %v", n, ci, w, want)
					}
				}
			}
			for j := 0; j < n; j++ {
				if j > 0 && w[j] > w[j-1] {
					t.Fatalf("n=%d case %d: eigenvalues not descending: %v", n, ci, w)
				}
				for i := 0; i < n; i++ {
					r := -w[j] * v[i*n+j]
					for c := 0; c < n; c++ {
						r += orig[i*n+c] * v[c*n+j]
					}
					if math.Abs(r) > 1e-12*norm*float64(n) { // backward-stable Jacobi: O(n eps ||A||)
						t.Fatalf("n=%d case %d: residual %v", n, ci, r)
					}
				}
			}
			// V is a product of plane rotations (Jacobi) or Householder reflections (Dsyev), each
			// orthogonal to a few u: the loss grows like O(sweeps n) u; 1e-13 = 900 u covers
			// n = 20 (measured worst 3.1e-15) and the reflections at n = 160.
			if j, l, d := testmat.OrthDefect(v, n); math.Abs(d) > 1e-13 {
				t.Fatalf("n=%d case %d: V not orthonormal (%d,%d)=%v", n, ci, j, l, d)
			}
		}
	}
}

func TestSVD(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, dims := range [][2]int{{1, 1}, {3, 3}, {10, 3}, {64, 10}, {10, 10}} {
		m, n := dims[0], dims[1]
		a := make([]float64, m*n)
		for i := range a {
			a[i] = rng.NormFloat64()
		}
		// Rank-deficient variant: make the last column a copy of the first.
		if n > 2 {
			for r := 0; r < m; r++ {
				a[r*n+n-1] = a[r*n]
			}
		}
		orig := append([]float64(nil), a...)
		s := make([]float64, n)
		v := make([]float64, n*n)
		SVD(a, m, n, s, v)
		// a now holds U S; check U S V^T = orig.
		for r := 0; r < m; r++ {
			for c := 0; c < n; c++ {
				x := 0.0
				for j := 0; j < n; j++ {
					x += a[r*n+j] * v[c*n+j]
				}
				// One-sided Jacobi is backward stable: O(m u ||A||) with Gaussian entries
				// (|a| < ~5); measured 4.4e-16 m. 1e-12 m only catches a wrong factor.
				if math.Abs(x-orig[r*n+c]) > 1e-12*float64(m) {
					t.Fatalf("%dx%d: reconstruction error %v", m, n, x-orig[r*n+c])
				}
			}
		}
		// An exactly repeated column leaves s_min at round-off, O(u) s_max (measured 1.4e-16);
		// a Gaussian matrix's true s_min / s_max is > 1e-3 here.
		if n > 2 && s[n-1] > 1e-14*s[0] {
			t.Fatalf("%dx%d: rank deficiency missed, s=%v", m, n, s)
		}
	}
}

func TestPerp(t *testing.T) {
	// Every k from 2 to 18: Restrict reflects the k-1 rows 1..k-1 four at a time, so this covers
	// each remainder (k-1) % 4, including none (k = 5, 9, 13, 17), several times.
	for k := 2; k <= 18; k++ {
		p := NewPerp(k)
		tmp := make([]float64, k*(k+1))
		// Q's columns are orthonormal and orthogonal to 1.
		q := make([]float64, k*(k-1))
		z := make([]float64, k-1)
		col := make([]float64, k)
		for j := 0; j < k-1; j++ {
			for i := range z {
				z[i] = 0
			}
			z[j] = 1
			p.FromPerp(col, z)
			sum := 0.0
			for i := 0; i < k; i++ {
				q[i*(k-1)+j] = col[i]
				sum += col[i]
			}
			// k entries of size <= 1: |sum| <= k u = 2e-15 at k = 18 (measured 5.6e-16).
			if math.Abs(sum) > 1e-14 {
				t.Fatalf("k=%d: column %d not in 1-perp (sum %v)", k, j, sum)
			}
		}
		for a := 0; a < k-1; a++ {
			for b := 0; b < k-1; b++ {
				d := 0.0
				for i := 0; i < k; i++ {
					d += q[i*(k-1)+a] * q[i*(k-1)+b]
				}
				want := 0.0
				if a == b {
					want = 1
				}
				// Dot products of unit vectors of length k: k u = 2e-15 (measured 7.8e-16).
				if math.Abs(d-want) > 1e-14 {
					t.Fatalf("k=%d: Q^T Q (%d,%d)=%v", k, a, b, d)
				}
			}
		}
		// Restrict equals Q^T A Q computed explicitly; ToPerp inverts FromPerp.
		rng := rand.New(rand.NewPCG(uint64(k), 7))
		a := randSPD(rng, k)
		r := make([]float64, (k-1)*(k-1))
		p.Restrict(r, a, tmp)
		for x := 0; x < k-1; x++ {
			for y := 0; y < k-1; y++ {
				want := 0.0
				for i := 0; i < k; i++ {
					for j := 0; j < k; j++ {
						want += q[i*(k-1)+x] * a[i*k+j] * q[j*(k-1)+y]
					}
				}
				// Both sides sum k^2 products of entries up to ~k+3 (Wishart): k^2 (k+3) u =
				// 7.5e-13 at k = 18 (measured 4.5e-15).
				if math.Abs(r[x*(k-1)+y]-want) > 1e-11*(1+math.Abs(want)) {
					t.Fatalf("k=%d: restrict (%d,%d)=%v want %v", k, x, y, r[x*(k-1)+y], want)
				}
			}
		}
		for i := range z {
			z[i] = rng.NormFloat64()
		}
		p.FromPerp(col, z)
		back := make([]float64, k-1)
		p.ToPerp(back, col, tmp)
		for i := range z {
			// Two reflections of a vector with |z| < ~4: O(k u |z|) = 8e-15 (measured 2.2e-16).
			if math.Abs(back[i]-z[i]) > 1e-14 {
				t.Fatalf("k=%d: ToPerp(FromPerp(z)) != z", k)
			}
		}
	}
}

func TestStreamDeterministicAndNormal(t *testing.T) {
	a, b := NewStream(7, 3, 11), NewStream(7, 3, 11)
	for i := 0; i < 100; i++ {
		if a.Uint64() != b.Uint64() {
			t.Fatal("same key, different output")
		}
	}
	// Each part of the key must change the stream: seed, generation, point. (Before session
	// 31 the second comparison used x's second output, so a stream ignoring the generation
	// passed.)
	x0 := NewStream(7, 3, 11)
	x := x0.Uint64()
	for _, o := range []struct {
		what string
		s    Stream
	}{{"seed", NewStream(8, 3, 11)}, {"generation", NewStream(7, 4, 11)}, {"point", NewStream(7, 3, 12)}} {
		if o.s.Uint64() == x {
			t.Errorf("another %s gives the same first output", o.what)
		}
	}
	const n = 200000
	s := NewStream(1, 0, 0)
	buf := make([]float64, 10)
	sum, sum2, sum4 := 0.0, 0.0, 0.0
	for i := 0; i < n/10; i++ {
		s.Normals(buf)
		for _, v := range buf {
			sum += v
			sum2 += v * v
			sum4 += v * v * v * v
		}
	}
	mean := sum / n
	vari := sum2/n - mean*mean
	kurt := sum4 / n
	// Standard errors at n = 2e5: mean 0.0022, variance 0.0032, fourth moment 0.022; 5 sigma.
	if math.Abs(mean) > 0.011 || math.Abs(vari-1) > 0.016 || math.Abs(kurt-3) > 0.11 {
		t.Fatalf("normal moments off: mean %v var %v m4 %v", mean, vari, kurt)
	}
}

// TestAbs32 checks the ziggurat's branch-free |x| against the plain one at the edges of the
// int32 range.
func TestAbs32(t *testing.T) {
	for _, x := range []int32{0, 1, -1, 2, -2, 12345, -12345, math.MaxInt32, -math.MaxInt32, math.MinInt32} {
		want := int64(x)
		if want < 0 {
			want = -want
		}
		if got := abs32(x); got != want {
			t.Errorf("abs32(%d) = %d, want %d", x, got, want)
		}
	}
}

// TestNormalsDistribution compares the empirical distribution of Normals with the standard
// normal CDF (Kolmogorov-Smirnov) and checks the tail beyond the ziggurat's base layer
// (|x| > 3.4426, probability 5.76e-4), which a separate branch draws.
func TestNormalsDistribution(t *testing.T) {
	const n = 400000
	xs := make([]float64, 0, n)
	buf := make([]float64, 7) // odd: the last draw of each call uses half a Uint64
	for p := 0; len(xs) < n; p++ {
		s := NewStream(3, 1, p)
		s.Normals(buf)
		xs = append(xs, buf...)
	}
	xs = xs[:n]
	slices.Sort(xs)
	d, tail := 0.0, 0
	for i, x := range xs {
		c := 0.5 * math.Erfc(-x/math.Sqrt2)
		d = max(d, math.Abs(c-float64(i)/n), math.Abs(c-float64(i+1)/n))
		if math.Abs(x) > 3.442619855899 {
			tail++
		}
	}
	t.Logf("KS distance %.5f, %d beyond the base layer", d, tail)
	// KS critical value at level 1e-4: 2.2 / sqrt(n) = 0.0035.
	if d > 2.2/math.Sqrt(n) {
		t.Fatalf("Kolmogorov-Smirnov distance %g", d)
	}
	// Tail count: expectation 230, standard deviation 15; 5 sigma.
	if tail < 155 || tail > 305 {
		t.Fatalf("%d draws beyond the base layer, want about 230", tail)
	}
}

// TestCholeskySmallBlockEdges checks the unblocked loop on every order around its blocks of
// four rows: L L^T reproduces a, the strict upper triangle is untouched, and a matrix whose
// m-th pivot is negative is rejected at that pivot.
func TestCholeskySmallBlockEdges(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for k := 1; k <= 25; k++ {
		a := randSPD(rng, k)
		l := append([]float64(nil), a...)
		if !choleskySmall(l, k) {
			t.Fatalf("k=%d: SPD matrix rejected", k)
		}
		amax := 0.0
		for _, v := range a {
			amax = max(amax, math.Abs(v))
		}
		for i := 0; i < k; i++ {
			for j := 0; j < k; j++ {
				if j > i {
					if l[i*k+j] != a[i*k+j] {
						t.Fatalf("k=%d: upper entry (%d,%d) changed", k, i, j)
					}
					continue
				}
				s := 0.0
				for c := 0; c <= j; c++ {
					s += l[i*k+c] * l[j*k+c]
				}
				// Cholesky's backward error is O(k eps) ||a||: 1e-13 is 18 eps times k <= 25.
				if math.Abs(s-a[i*k+j]) > 1e-13*amax {
					t.Fatalf("k=%d: (L L^T)[%d,%d] = %v, a = %v", k, i, j, s, a[i*k+j])
				}
			}
		}
		// Lower a[m][m] by its pivot plus one: the first m pivots are unchanged and the m-th is -1.
		m := k / 2
		bad := append([]float64(nil), a...)
		bad[m*k+m] -= l[m*k+m]*l[m*k+m] + 1
		if choleskySmall(bad, k) {
			t.Fatalf("k=%d: matrix with a negative pivot %d accepted", k, m)
		}
	}
}

// TestGramScatterSmallD checks Gram's unrolled paths (d = 2, 3), Scatter's (d = 3) and their
// general loops against the definitions G[a][b] = sum_c z[a][c] z[b][c] (summed in increasing c)
// and S[a][b] = sum_j z[j][a] z[j][b] (summed in increasing j): every path performs the same
// products and additions in that order, so the entries must be equal bit for bit (no
// tolerance), at odd and even k (Gram's unrolled paths take rows two at a time).
func TestGramScatterSmallD(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 9))
	for d := 1; d <= 5; d++ {
		for k := 1; k <= 13; k++ {
			z := make([]float64, k*d)
			for i := range z {
				z[i] = rng.NormFloat64()
			}
			for _, c := range []struct {
				name  string
				m     int                 // the product's order
				prod  func(dst []float64) // the kernel
				inner int                 // the length of each sum
				at    func(a, b, q int) float64
			}{
				{"Gram", k, func(g []float64) { Gram(g, z, k, d) }, d, func(a, b, q int) float64 { return z[a*d+q] * z[b*d+q] }},
				{"Scatter", d, func(s []float64) { Scatter(s, z, k, d) }, k, func(a, b, q int) float64 { return z[q*d+a] * z[q*d+b] }},
			} {
				out := make([]float64, c.m*c.m+1)
				out[c.m*c.m] = 42 // beyond the m x m block: untouched
				c.prod(out)
				for a := 0; a < c.m; a++ {
					for b := 0; b < c.m; b++ {
						want := 0.0
						for q := 0; q < c.inner; q++ {
							want += c.at(a, b, q)
						}
						if out[a*c.m+b] != want {
							t.Fatalf("%s d=%d k=%d: entry [%d][%d] = %v, want %v", c.name, d, k, a, b, out[a*c.m+b], want)
						}
					}
				}
				if out[c.m*c.m] != 42 {
					t.Fatalf("%s d=%d k=%d: wrote past %d x %d", c.name, d, k, c.m, c.m)
				}
			}
		}
	}
}

// TestRestrictScratchTooShort checks the constant panic message for scratch of length k*k
// (the length before Restrict needed k more).
func TestRestrictScratchTooShort(t *testing.T) {
	defer func() {
		if r := recover(); r != "kernels: restrict shape mismatch" {
			t.Fatalf("panic = %v, want the shape-mismatch message", r)
		}
	}()
	p := NewPerp(4)
	p.Restrict(make([]float64, 9), make([]float64, 16), make([]float64, 16))
}

// TestSVDSweeps: the stopping tolerance must be reachable in floating point. With 1e-16
// (below the unit round-off 1.1e-16) 20 of 500 Gaussian 10 x 10 inputs ran all 60 sweeps
// before session 31; with LAPACK dgesvj's sqrt(m) eps none may, and the mean stays at the
// 5-8 sweeps one-sided Jacobi needs (quadratic convergence).
func TestSVDSweeps(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, dims := range [][2]int{{5, 5}, {10, 10}, {10, 5}, {20, 10}} {
		m, n := dims[0], dims[1]
		a, s, v := make([]float64, m*n), make([]float64, n), make([]float64, n*n)
		capped, total := 0, 0
		const trials = 500
		for trial := 0; trial < trials; trial++ {
			for i := range a {
				a[i] = rng.NormFloat64()
			}
			sw := svd(a, m, n, s, v)
			total += sw
			if sw == svdMaxSweeps {
				capped++
			}
		}
		if mean := float64(total) / trials; capped > 0 || mean > 10 {
			t.Errorf("%dx%d: %d of %d inputs ran the %d-sweep cap, mean %.1f sweeps", m, n, capped, trials, svdMaxSweeps, mean)
		}
	}
}

// TestSymEigenNoAlloc: SymEigenWork, with the caller's workspace, allocates nothing per call on
// either path (Jacobi, Dsyev), as the per-point loops that call it require, and agrees with
// SymEigen.
func TestSymEigenNoAlloc(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 14))
	for _, n := range []int{3, 10, 40} {
		lambda := make([]float64, n)
		for i := range lambda {
			lambda[i] = float64(i + 1)
		}
		a := testmat.WithSpectrum(rng, lambda)
		c, w, v := make([]float64, n*n), make([]float64, n), make([]float64, n*n)
		work := make([]float64, SymEigenWorkLen(n))
		if allocs := testing.AllocsPerRun(50, func() { copy(c, a); SymEigenWork(c, n, w, v, work) }); allocs != 0 {
			t.Errorf("n = %d: %v allocations per call", n, allocs)
		}
		c2, w2, v2 := append([]float64(nil), a...), make([]float64, n), make([]float64, n*n)
		SymEigen(c2, n, w2, v2)
		for i := range w {
			if w[i] != w2[i] {
				t.Fatalf("n = %d: SymEigenWork's eigenvalue %d is %v, SymEigen's %v", n, i, w[i], w2[i])
			}
		}
	}
}
