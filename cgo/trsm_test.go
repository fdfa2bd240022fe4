//go:build cgo && !purego

package cgo

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"glle/kernels"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/gonum"
)

// TestTrsmRLTMatchesDtrsm compares the panel kernel with gonum's Dtrsm on random triangles of
// widths around the transposition (8) and column (4) blocks and up to TrsmMaxN, row counts
// around the tiles of 8, 16 and 24 rows, padded leading dimensions, and both diagonals; the
// entries outside the n columns must stay untouched.
func TestTrsmRLTMatchesDtrsm(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	var ref gonum.Implementation
	var ob openblas
	for _, n := range []int{1, 2, 3, 4, 5, 7, 8, 9, 16, 31, 33, 96, TrsmMaxN} {
		for _, m := range []int{1, 7, 8, 9, 16, 17, 24, 25, 33, 100} {
			for _, unit := range []bool{false, true} {
				ldl, ldb := n+3, n+2
				l := make([]float64, n*ldl)
				for i := 0; i < n; i++ {
					for j := 0; j < i; j++ {
						l[i*ldl+j] = rng.Float64() - 0.5
					}
					l[i*ldl+i] = 1 + rng.Float64() // well conditioned: |L[j][j]| >= 1
					if unit {
						l[i*ldl+i] = math.NaN() // a unit diagonal must not be read
					}
				}
				b := make([]float64, m*ldb)
				for i := range b {
					b[i] = rng.NormFloat64()
				}
				want := append([]float64(nil), b...)
				diag := blas.NonUnit
				if unit {
					diag = blas.Unit
				}
				ref.Dtrsm(blas.Right, blas.Lower, blas.Trans, diag, m, n, 1, l, ldl, want, ldb)
				ob.TrsmRLT(m, n, l, ldl, b, ldb, unit)
				for i := 0; i < m; i++ {
					for j := 0; j < ldb; j++ {
						got, w := b[i*ldb+j], want[i*ldb+j]
						// Substitution with |L[j][j]| >= 1 and |L[j][q]| <= 0.5: the two
						// summation orders differ by a few ulps times the solution's growth
						// (at most ~1e3 for n = 128 here); 1e-11 relative leaves room.
						if j >= n && got != w || math.Abs(got-w) > 1e-11*math.Max(1, math.Abs(w)) || math.IsNaN(got) {
							t.Fatalf("n=%d m=%d unit=%v: b[%d][%d] = %v, want %v", n, m, unit, i, j, got, w)
						}
					}
				}
			}
		}
	}
}

// TestTrsmRLTRowsIndependent checks that a row's result does not depend on which other rows
// share its call (the sparse factorization splits rows between workers).
func TestTrsmRLTRowsIndependent(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	const n, m = 37, 53
	var ob openblas
	l := make([]float64, n*n)
	for i := 0; i < n; i++ {
		for j := 0; j < i; j++ {
			l[i*n+j] = rng.Float64() - 0.5
		}
		l[i*n+i] = 1 + rng.Float64()
	}
	b := make([]float64, m*n)
	for i := range b {
		b[i] = rng.NormFloat64()
	}
	all := append([]float64(nil), b...)
	ob.TrsmRLT(m, n, l, n, all, n, false)
	// Splits that move rows between tiles of 8, 16 and 24 rows and their positions in them.
	for _, split := range []int{1, 5, 8, 13, 16, 24, 30} {
		parts := append([]float64(nil), b...)
		ob.TrsmRLT(split, n, l, n, parts, n, false)
		ob.TrsmRLT(m-split, n, l, n, parts[split*n:], n, false)
		for i := range all {
			if all[i] != parts[i] {
				t.Fatalf("split at row %d: entry %d differs (%v vs %v)", split, i, parts[i], all[i])
			}
		}
	}
}

// TestTrsmRLTPanics checks the constant panic message on shape errors.
func TestTrsmRLTPanics(t *testing.T) {
	var ob openblas
	for name, f := range map[string]func(){
		"wide": func() {
			ob.TrsmRLT(1, TrsmMaxN+1, make([]float64, (TrsmMaxN+1)*(TrsmMaxN+1)), TrsmMaxN+1, make([]float64, TrsmMaxN+1), TrsmMaxN+1, false)
		},
		"short": func() { ob.TrsmRLT(2, 3, make([]float64, 9), 3, make([]float64, 5), 3, false) },
		"ldl":   func() { ob.TrsmRLT(1, 3, make([]float64, 9), 2, make([]float64, 3), 3, false) },
	} {
		if r := panicMessage(f); r != "cgo: TrsmRLT shape mismatch" {
			t.Errorf("%s: panic %q", name, r)
		}
	}
}

// BenchmarkTrsmRLT compares the panel kernel with the backend's Dtrsm on the shapes of the
// factorizations' panel solves: narrow supernodes (mean row counts at n = 1M) and the 96-column
// blocks of wide ones. Each operation restores b first (a copy of m x n entries), so that the
// repeated solves neither grow nor decay into subnormal numbers.
func BenchmarkTrsmRLT(b *testing.B) {
	rng := rand.New(rand.NewPCG(11, 12))
	for _, sh := range [][2]int{{33, 12}, {25, 16}, {60, 24}, {100, 48}, {1000, 96}} {
		m, n := sh[0], sh[1]
		l := make([]float64, n*n)
		for i := 0; i < n; i++ {
			for j := 0; j < i; j++ {
				l[i*n+j] = (rng.Float64() - 0.5) / float64(n)
			}
			l[i*n+i] = 1 + rng.Float64()
		}
		b0 := normals(rng, m*n)
		x := make([]float64, m*n)
		bl := kernels.Current().BLAS()
		var ob openblas
		for _, impl := range []string{"loop", "dtrsm"} {
			b.Run(fmt.Sprintf("m=%d/n=%d/impl=%s", m, n, impl), func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					copy(x, b0)
					if impl == "loop" {
						ob.TrsmRLT(m, n, l, n, x, n, false)
					} else {
						bl.Dtrsm(blas.Right, blas.Lower, blas.Trans, blas.NonUnit, m, n, 1, l, n, x, n)
					}
				}
				b.ReportMetric(float64(m*n*n)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFlop/s")
			})
		}
	}
}
