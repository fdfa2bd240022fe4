//go:build cgo && !purego

package cgo

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"glle/kernels"
)

// luPanels returns random m-row panels (lda) of a matrix A whose leading w x w block is
// diagonally dominant (no pivoting needed): pl holds A's lower part by rows (row i, columns
// < w: A[i][j]), pu A's upper part transposed (row i: A[j][i]); both hold A's diagonal.
func luPanels(rng *rand.Rand, m, lda, w int) (pl, pu []float64) {
	pl, pu = make([]float64, m*lda), make([]float64, m*lda)
	for i := range pl {
		pl[i], pu[i] = rng.Float64()-0.5, rng.Float64()-0.5
	}
	for i := 0; i < w; i++ {
		pl[i*lda+i] = float64(w) + rng.Float64()
		pu[i*lda+i] = pl[i*lda+i]
	}
	return pl, pu
}

// TestPanelLUReconstructs checks the C kernel against its definition: the factors' product
// L U reproduces A's lower part (rows of pl) and upper part (rows of pu) on all m rows, for
// widths around the four-entry vectors and the 96-column diagonal blocks, row counts above
// the width and padded leading dimensions; entries beyond the w columns stay untouched, and
// the last pivot is reported and replaced when asked.
func TestPanelLUReconstructs(t *testing.T) {
	rng := rand.New(rand.NewPCG(31, 32))
	var ob openblas
	var _ kernels.PanelLUer = ob
	for _, w := range []int{1, 2, 3, 4, 5, 7, 8, 9, 12, 16, 17, 33, 95, 96} {
		for _, extra := range []int{0, 1, 2, 7, 40} {
			for _, last := range []bool{false, true} {
				m, lda := w+extra, w+3
				name := fmt.Sprintf("w=%d/m=%d/last=%v", w, m, last)
				a, au := luPanels(rng, m, lda, w)
				pl, pu := append([]float64(nil), a...), append([]float64(nil), au...)
				j, _, lp := ob.PanelLU(pl, pu, m, lda, w, 1e-12, last)
				if j >= 0 {
					t.Fatalf("%s: pivot failure at column %d", name, j)
				}
				// L[i][k] (unit diagonal), U[k][j] = pu[j][k] for k <= j, U's diagonal on both.
				lv := func(i, k int) float64 {
					if i == k {
						return 1
					}
					return pl[i*lda+k]
				}
				uv := func(k, j int) float64 { return pu[j*lda+k] }
				want := func(i, j int) float64 { // A[i][j], j <= i from a, j > i from au
					if j <= i {
						return a[i*lda+j]
					}
					return au[j*lda+i]
				}
				// Round-off of a length-w dot product of O(w)-sized factors: w eps w; 1e-13 w
				// leaves a factor of about 5 at w = 96.
				tol := 1e-13 * float64(w)
				for i := 0; i < m; i++ {
					for jj := 0; jj < w; jj++ {
						// (L U)[i][jj] for the L panel (jj <= i) and (L U)[jj][i] for the U panel.
						if jj <= i {
							s := 0.0
							for k := 0; k <= jj; k++ {
								u := uv(k, jj)
								if last && k == w-1 && i == w-1 {
									u = lp // A's last diagonal entry: the pivot before its replacement
								}
								s += lv(i, k) * u
							}
							if d := math.Abs(s - want(i, jj)); d > tol {
								t.Fatalf("%s: (LU)[%d][%d] off by %g", name, i, jj, d)
							}
						}
						if jj < i {
							s := 0.0
							for k := 0; k <= jj; k++ {
								s += lv(jj, k) * uv(k, i)
							}
							if d := math.Abs(s - want(jj, i)); d > tol {
								t.Fatalf("%s: (LU)[%d][%d] off by %g", name, jj, i, d)
							}
						}
					}
					for q := w; q < lda; q++ {
						if pl[i*lda+q] != a[i*lda+q] || pu[i*lda+q] != au[i*lda+q] {
							t.Fatalf("%s: entry (%d, %d) beyond the width changed", name, i, q)
						}
					}
				}
				if last && pl[(w-1)*lda+w-1] != 1 {
					t.Fatalf("%s: last pivot not replaced by 1", name)
				}
				if !last && lp != 0 {
					t.Fatalf("%s: last pivot %g reported without last", name, lp)
				}
			}
		}
	}
}

// TestPanelLUPivotFailure checks that a pivot below tol stops the kernel at its column and
// returns it, and that the last pivot is exempt when replaced.
func TestPanelLUPivotFailure(t *testing.T) {
	var ob openblas
	for _, w := range []int{3, 9} {
		m, lda := w+2, w
		pl, pu := luPanels(rand.New(rand.NewPCG(7, uint64(w))), m, lda, w)
		// Column c's pivot becomes a[c][c] - L[c][:c] U[:c][c] = 0 when A[c][c] is that sum:
		// make every off-diagonal entry of the first c+1 rows and columns zero and A[c][c] = 0.
		c := w - 1
		for i := 0; i < m; i++ {
			for k := 0; k < w; k++ {
				if i != k && (i <= c || k <= c) {
					pl[i*lda+k], pu[i*lda+k] = 0, 0
				}
			}
		}
		pl[c*lda+c], pu[c*lda+c] = 0, 0
		a, au := append([]float64(nil), pl...), append([]float64(nil), pu...)
		if j, d, _ := ob.PanelLU(pl, pu, m, lda, w, 1e-8, false); j != c || d != 0 {
			t.Errorf("w=%d: got column %d pivot %g, want column %d pivot 0", w, j, d, c)
		}
		if j, _, lp := ob.PanelLU(a, au, m, lda, w, 1e-8, true); j != -1 || lp != 0 {
			t.Errorf("w=%d, last: got column %d last pivot %g, want -1 and 0", w, j, lp)
		}
	}
}

func TestPanelLUPanics(t *testing.T) {
	var ob openblas
	for name, f := range map[string]func(){
		"w > m":    func() { ob.PanelLU(make([]float64, 16), make([]float64, 16), 2, 4, 3, 0, false) },
		"lda < w":  func() { ob.PanelLU(make([]float64, 16), make([]float64, 16), 4, 2, 3, 0, false) },
		"short pl": func() { ob.PanelLU(make([]float64, 15), make([]float64, 16), 4, 4, 4, 0, false) },
		"short pu": func() { ob.PanelLU(make([]float64, 16), make([]float64, 15), 4, 4, 4, 0, false) },
	} {
		if r := panicMessage(f); r != "cgo: PanelLU shape mismatch" {
			t.Errorf("%s: panic %q", name, r)
		}
	}
}
