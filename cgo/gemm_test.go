//go:build cgo && !purego

package cgo

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/gonum"

	"glle/kernels"
)

// TestGemmNTNegMatchesDgemm compares the narrow product kernel with gonum's Dgemm for inner
// dimensions 1-GemmMaxK, row and column counts around its blocks (4 rows, 8 columns) and
// padded leading dimensions; entries of c outside the m x n block must stay untouched.
func TestGemmNTNegMatchesDgemm(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	var ref gonum.Implementation
	var ob openblas
	for _, k := range []int{1, 2, 3, 4, 5, 8, 13, 16, 17, GemmMaxK} {
		for _, m := range []int{1, 3, 4, 5, 9, 26} {
			for _, n := range []int{1, 7, 8, 9, 16, 25} {
				lda, ldb, ldc := k+1, k+3, n+2
				a, b := normals(rng, m*lda), normals(rng, n*ldb)
				c := make([]float64, m*ldc)
				for i := range c {
					c[i] = math.NaN() // overwritten (beta = 0), or outside the block
				}
				want := make([]float64, m*ldc)
				copy(want, c)
				for i := 0; i < m; i++ {
					for j := 0; j < n; j++ {
						want[i*ldc+j] = 0
					}
				}
				ref.Dgemm(blas.NoTrans, blas.Trans, m, n, k, -1, a, lda, b, ldb, 0, want, ldc)
				ob.GemmNTNeg(m, n, k, a, lda, b, ldb, c, ldc)
				for i := 0; i < m; i++ {
					for j := 0; j < ldc; j++ {
						got, w := c[i*ldc+j], want[i*ldc+j]
						if j >= n {
							if !math.IsNaN(got) {
								t.Fatalf("k=%d m=%d n=%d: c[%d][%d] outside the block written", k, m, n, i, j)
							}
							continue
						}
						// Sums of k <= 32 products of N(0,1) entries in two orders (and with or
						// without fused multiply-adds): a few ulps of sqrt(k) ~ 6.
						if math.Abs(got-w) > 1e-13*math.Max(1, math.Abs(w)) || math.IsNaN(got) {
							t.Fatalf("k=%d m=%d n=%d: c[%d][%d] = %v, want %v", k, m, n, i, j, got, w)
						}
					}
				}
			}
		}
	}
}

// TestGemmNTNegRowsIndependent checks that a row of c has the same bits whichever call and
// block of four rows computes it, and a column whichever block of 64 columns: the
// factorization splits large products by rows across its workers.
func TestGemmNTNegRowsIndependent(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	const m, n, k = 29, 70, 13
	var ob openblas
	a, b := normals(rng, m*k), normals(rng, n*k)
	all := make([]float64, m*n)
	ob.GemmNTNeg(m, n, k, a, k, b, k, all, n)
	for _, split := range []int{1, 5, 8, 13} {
		parts := make([]float64, m*n)
		ob.GemmNTNeg(split, n, k, a, k, b, k, parts, n)
		ob.GemmNTNeg(m-split, n, k, a[split*k:], k, b, k, parts[split*n:], n)
		for i := range all {
			if all[i] != parts[i] {
				t.Fatalf("split at row %d: entry %d differs (%v vs %v)", split, i, parts[i], all[i])
			}
		}
	}
	cols := make([]float64, m*n)
	ob.GemmNTNeg(m, 9, k, a, k, b, k, cols, n)
	ob.GemmNTNeg(m, n-9, k, a, k, b[9*k:], k, cols[9:], n)
	for i := range all {
		if all[i] != cols[i] {
			t.Fatalf("split at column 9: entry %d differs (%v vs %v)", i, cols[i], all[i])
		}
	}
}

func TestGemmNTNegPanics(t *testing.T) {
	var ob openblas
	if r := panicMessage(func() {
		ob.GemmNTNeg(2, 2, GemmMaxK+1, make([]float64, 100), GemmMaxK+1, make([]float64, 100), GemmMaxK+1, make([]float64, 4), 2)
	}); r != "cgo: GemmNTNeg shape mismatch" {
		t.Fatalf("panic %q, want the shape message", r)
	}
}

// BenchmarkGemmNTNeg compares the kernel with the backend's Dgemm on the shapes of the LU
// factorization's Schur updates (mean row counts of narrow supernodes at n = 1M).
func BenchmarkGemmNTNeg(b *testing.B) {
	rng := rand.New(rand.NewPCG(9, 10))
	for _, sh := range [][2]int{{11, 3}, {25, 8}, {25, 16}, {122, 24}, {122, 32}} {
		m, k := sh[0], sh[1]
		a := normals(rng, m*k)
		c := make([]float64, m*m)
		bl := kernels.Current().BLAS()
		var ob openblas
		for _, impl := range []string{"loop", "dgemm"} {
			b.Run(fmt.Sprintf("m=%d/k=%d/impl=%s", m, k, impl), func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					if impl == "loop" {
						ob.GemmNTNeg(m, m, k, a, k, a, k, c, m)
					} else {
						bl.Dgemm(blas.NoTrans, blas.Trans, m, m, k, -1, a, k, a, k, 0, c, m)
					}
				}
				b.ReportMetric(2*float64(m*m*k)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFlop/s")
			})
		}
	}
}

// normals returns n standard normal draws.
func normals(rng *rand.Rand, n int) []float64 {
	x := make([]float64, n)
	for i := range x {
		x[i] = rng.NormFloat64()
	}
	return x
}
