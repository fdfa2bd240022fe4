package bench

import (
	"gonum.org/v1/gonum/mat"
)

// Uncertainty summarises G generated embeddings (each n x p, like base) point by point. When
// align is true every generation is first aligned onto base by orthogonal Procrustes without
// scaling (AlignTo), which removes the arbitrary sign and rotation of the eigenvectors; pass
// false only for generations that are aligned already.
//
// mean (n x p) is the mean embedding over the generations, and spread[i] is the trace of the
// sample covariance of point i across them,
//
//	spread_i = 1/(G-1) sum_g ||y_i^(g) - mean_i||^2,
//
// the total variance of the point's position (divisor 1 when G = 1, where spread is 0). It is
// zero for identical generations and grows with the covariance scale a. It panics if there
// are no generations or a shape differs from base's.
func Uncertainty(base *mat.Dense, gens []*mat.Dense, align bool) (mean *mat.Dense, spread []float64) {
	if len(gens) == 0 {
		panic("bench: Uncertainty of no generations")
	}
	n, p := base.Dims()
	for _, Y := range gens {
		if gn, gp := Y.Dims(); gn != n || gp != p {
			panic("bench: Uncertainty of a generation shaped unlike the base embedding")
		}
	}
	ys := gens
	if align {
		ys = AlignAll(base, gens, false)
	}
	mean = mat.NewDense(n, p, nil)
	for _, Y := range ys {
		mean.Add(mean, Y)
	}
	mean.Scale(1/float64(len(ys)), mean)
	spread = make([]float64, n)
	for _, Y := range ys {
		for i := 0; i < n; i++ {
			mr := mean.RawRowView(i)
			s := 0.0
			for j, v := range mr {
				e := Y.At(i, j) - v
				s += e * e
			}
			spread[i] += s
		}
	}
	div := float64(max(len(ys)-1, 1))
	for i := range spread {
		spread[i] /= div
	}
	return mean, spread
}
