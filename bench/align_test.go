package bench

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// TestAlignRecoversRotationReflection: a known rotation or reflection (and translation, and
// with scaling a dilation) is recovered exactly, and the fitted map carries other points along.
func TestAlignRecoversRotationReflection(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 22))
	n, p := 80, 2
	Y := randDense(r, n, p)
	Z := randDense(r, 15, p) // points the alignment is applied to afterwards
	// The eigenvector ambiguities of LLE: sign flips and a swap of the axes, plus general maps.
	flip := mat.NewDense(2, 2, []float64{-1, 0, 0, 1})
	swap := mat.NewDense(2, 2, []float64{0, 1, 1, 0})
	for name, Q := range map[string]*mat.Dense{
		"sign flip": flip, "swap": swap, "rotation": randomOrthogonal(r, p, false), "reflection": randomOrthogonal(r, p, true),
	} {
		for _, scale := range []bool{false, true} {
			c := 1.0
			if scale {
				c = 0.3
			}
			move := func(A *mat.Dense) *mat.Dense {
				m, _ := A.Dims()
				B := mat.NewDense(m, p, nil)
				B.Mul(A, Q)
				B.Scale(c, B)
				for i := 0; i < m; i++ {
					B.Set(i, 0, B.At(i, 0)+3)
					B.Set(i, 1, B.At(i, 1)-1)
				}
				return B
			}
			ref := move(Y)
			// Align the moved copy back onto ... the original, and the original onto the moved copy.
			// 1e-12 here and below: round-off of 80-point sums of O(1) entries is ~n eps |Y| = 80 * 1.1e-16 * 2.5 = 2e-14 (observed <= 4e-15).
			if got := AlignTo(ref, Y, scale); !mat.EqualApprox(got, ref, 1e-12) {
				t.Errorf("%s (scale %v): AlignTo does not reproduce the reference", name, scale)
			}
			a := FitAlignment(ref, Y, scale)
			// R and s come from a 2 x 2 SVD of those sums: the same 2e-14 bound (observed 7e-16 and 1e-16).
			if !mat.EqualApprox(a.R, Q, 1e-12) || math.Abs(a.Scale-c) > 1e-12 {
				t.Errorf("%s (scale %v): R = %v s = %v, want %v s = %v", name, scale, mat.Formatted(a.R), a.Scale, mat.Formatted(Q), c)
			}
			if got := a.Apply(Z); !mat.EqualApprox(got, move(Z), 1e-12) {
				t.Errorf("%s (scale %v): Apply does not carry other points along", name, scale)
			}
			// 1e-13: the same products in another grouping of the means, a few ulps of entries ~5 (observed 0).
			if !mat.EqualApprox(a.Apply(Y), AlignTo(ref, Y, scale), 1e-13) {
				t.Errorf("%s (scale %v): Apply(Y) differs from AlignTo", name, scale)
			}
		}
	}
	// Without scaling, a dilated copy is matched in orientation but keeps its size.
	big := mat.NewDense(n, p, nil)
	big.Scale(2, Y)
	got := AlignTo(Y, big, false)
	// Same 80-point round-off bound as above (observed 1e-15).
	if !mat.EqualApprox(Centered(got), Centered(big), 1e-12) {
		t.Error("AlignTo without scaling changed the shape of a dilated copy")
	}
	all := AlignAll(Y, []*mat.Dense{big, Y}, true)
	// Same bound (observed 2e-15).
	if len(all) != 2 || !mat.EqualApprox(all[0], Y, 1e-12) || !mat.EqualApprox(all[1], Y, 1e-12) {
		t.Error("AlignAll with scaling does not map the copies onto the reference")
	}
}

func TestUncertaintyIdenticalAndKnown(t *testing.T) {
	r := rand.New(rand.NewPCG(31, 32))
	n, p := 50, 2
	base := randDense(r, n, p)
	// Identical generations (in any orientation) have zero spread and the base as mean.
	var gens []*mat.Dense
	for g := 0; g < 4; g++ {
		Q := randomOrthogonal(r, p, g%2 == 1)
		Y := mat.NewDense(n, p, nil)
		Y.Mul(base, Q)
		gens = append(gens, Y)
	}
	mean, spread := Uncertainty(base, gens, true)
	// 1e-12: 4 alignments of 50-point data, each exact to ~n eps |Y| = 2e-14.
	if !mat.EqualApprox(mean, base, 1e-12) {
		t.Error("mean of identical aligned generations differs from the base")
	}
	for i, v := range spread {
		// 1e-24: the square of the 1e-12 position bound above.
		if v > 1e-24 {
			t.Fatalf("point %d: spread %g of identical generations", i, v)
		}
	}
	// Known spread: two generations y +- e_i per point (no alignment) give trace 2 ||e||^2.
	plus, minus := mat.DenseCopyOf(base), mat.DenseCopyOf(base)
	for i := 0; i < n; i++ {
		e := 0.01 * float64(i%5)
		plus.Set(i, 0, plus.At(i, 0)+e)
		minus.Set(i, 0, minus.At(i, 0)-e)
	}
	mean, spread = Uncertainty(base, []*mat.Dense{plus, minus}, false)
	// 1e-15: (y + e) + (y - e) then / 2 is exact to an ulp or two of |y| <= ~3 (ulp 4.4e-16).
	if !mat.EqualApprox(mean, base, 1e-15) {
		t.Error("mean of symmetric generations differs from the base")
	}
	for i, v := range spread {
		e := 0.01 * float64(i%5)
		// 1e-15: ((y + e) - y)^2 recovers e <= 0.04 to an ulp of y, so the 2 e^2 <= 3.2e-3 term to ~1e-17; 1e-15 is 100x that.
		if math.Abs(v-2*e*e) > 1e-15 {
			t.Fatalf("point %d: spread %g, want %g", i, v, 2*e*e)
		}
	}
}
