package kernels_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/blas"

	_ "glle/cgo" // registers OpenBLAS unless built with -tags purego
	"glle/kernels"
)

// Small dense kernels at the sizes of the per-point work (k around 10). The "impl=go" cases
// are the hand-written kernels both builds use; "impl=backend" calls the selected backend's
// LAPACK (OpenBLAS/LAPACKE through cgo, or gonum's native Go with -tags purego) for the same
// factorization, which shows why the per-point code does not call it.

// spd returns a random symmetric positive definite k x k matrix (row-major).
func spd(rng *rand.Rand, k int) []float64 {
	z := make([]float64, k*k)
	for i := range z {
		z[i] = rng.NormFloat64()
	}
	a := make([]float64, k*k)
	kernels.Gram(a, z, k, k)
	for i := 0; i < k; i++ {
		a[i*k+i] += float64(k)
	}
	return a
}

// cholOK checks L L^T = a for the lower triangle of l.
func cholOK(a, l []float64, k int) bool {
	for i := 0; i < k; i++ {
		for j := 0; j <= i; j++ {
			s := 0.0
			for q := 0; q <= j; q++ {
				s += l[i*k+q] * l[j*k+q]
			}
			// Cholesky's backward error is O(k u ||a||) (k <= 20, ||a|| ~ 3k): ~1e-13; 1e-10
			// only catches a wrong factor (TestCholeskySmallBlockEdges checks the tight bound).
			if math.Abs(s-a[i*k+j]) > 1e-10*(1+math.Abs(a[i*k+j])) {
				return false
			}
		}
	}
	return true
}

func BenchmarkCholesky(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, k := range []int{5, 10, 16, 20} {
		a := spd(rng, k)
		work := make([]float64, k*k)
		lap := kernels.Current().LAPACK()
		impls := []struct {
			name string
			fn   func() bool
		}{
			{"go", func() bool { copy(work, a); return kernels.CholeskySmall(work, k) }},
			{"dispatch", func() bool { copy(work, a); return kernels.Cholesky(work, k) }},
			{"backend", func() bool { copy(work, a); return lap.Dpotrf(blas.Lower, k, work, k) }},
		}
		for _, im := range impls {
			b.Run(fmt.Sprintf("k=%d/impl=%s", k, im.name), func(b *testing.B) {
				if !im.fn() || !cholOK(a, work, k) {
					b.Fatalf("%s Cholesky of a %d x %d SPD matrix is wrong", im.name, k, k)
				}
				b.ReportAllocs()
				for b.Loop() {
					im.fn()
				}
				b.ReportMetric(float64(k*k*k)/3*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFlop/s")
			})
		}
	}
}

func BenchmarkGram(b *testing.B) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, k := range []int{10, 20} {
		for _, d := range []int{3, 64} {
			z := make([]float64, k*d)
			for i := range z {
				z[i] = rng.NormFloat64()
			}
			g := make([]float64, k*k)
			b.Run(fmt.Sprintf("k=%d/d=%d", k, d), func(b *testing.B) {
				kernels.Gram(g, z, k, d)
				s := 0.0
				for c := 0; c < d; c++ {
					s += z[c] * z[d+c]
				}
				// The same products summed in the same order: equal in fact (TestGramScatterSmallD
				// checks bit equality); 1e-12 only guards the benchmark's set-up.
				if math.Abs(g[1]-s) > 1e-12*(1+math.Abs(s)) || g[1] != g[k] {
					b.Fatal("Gram is wrong")
				}
				b.ReportAllocs()
				for b.Loop() {
					kernels.Gram(g, z, k, d)
				}
				b.ReportMetric(float64(k*k*d)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFlop/s")
			})
		}
	}
}

func BenchmarkSymEigen(b *testing.B) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, n := range []int{3, 10, 32, 160} { // Jacobi up to 3, Dsyev above (symEigenJacobiMax)
		a := spd(rng, n)
		w := make([]float64, n)
		v := make([]float64, n*n)
		c := make([]float64, n*n)
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			copy(c, a)
			kernels.SymEigen(c, n, w, v)
			// A v_0 = w_0 v_0
			for i := 0; i < n; i++ {
				s := 0.0
				for j := 0; j < n; j++ {
					s += a[i*n+j] * v[j*n]
				}
				// Residual O(n u ||A||) ~ 1e-15 w_0; 1e-9 only catches a wrong eigenpair
				// (TestSymEigenResidual checks the tight bound).
				if math.Abs(s-w[0]*v[i*n]) > 1e-9*w[0] {
					b.Fatal("SymEigen is wrong")
				}
			}
			b.ReportAllocs()
			for b.Loop() {
				copy(c, a)
				kernels.SymEigen(c, n, w, v)
			}
		})
	}
}

func BenchmarkNormals(b *testing.B) {
	for _, k := range []int{10} {
		dst := make([]float64, k)
		b.Run(fmt.Sprintf("k=%d", k), func(b *testing.B) {
			st := kernels.NewStream(1, 0, 0)
			st.Normals(dst)
			for _, v := range dst {
				if math.IsNaN(v) || math.Abs(v) > 10 {
					b.Fatalf("normal %v", v)
				}
			}
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				st := kernels.NewStream(1, 0, i)
				st.Normals(dst)
				i++
			}
			b.ReportMetric(float64(k)*float64(b.N)/b.Elapsed().Seconds(), "normals/s")
		})
	}
}
