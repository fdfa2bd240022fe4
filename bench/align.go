package bench

import (
	"gonum.org/v1/gonum/mat"
)

// Alignment is a similarity map fitted by orthogonal Procrustes (see Procrustes):
//
//	z -> Scale (z - From) R + To
//
// for row vectors z. It is fitted on one set of points and can be applied to others, e.g. to
// new points embedded with a generation's embedding of the training points.
type Alignment struct {
	R     *mat.Dense // p x p orthogonal (rotation and/or reflection)
	Scale float64    // 1 unless the alignment was fitted with scaling
	From  []float64  // column means of the aligned matrix
	To    []float64  // column means of the reference
}

// FitAlignment returns the alignment of Y onto ref (both n x p): the translation, orthogonal
// map and (when scale is true) uniform scaling that minimise ||s (Y - 1 mean(Y)) R + 1 mean(ref)
// - ref||_F, computed by Procrustes. It panics if the shapes differ.
func FitAlignment(ref, Y *mat.Dense, scale bool) Alignment {
	_, R, s := Procrustes(ref, Y, scale)
	return Alignment{R: R, Scale: s, From: colMeans(Y), To: colMeans(ref)}
}

// Apply returns the image of Z (m x p, one point per row) under the alignment. It panics if Z
// does not have p columns.
func (a Alignment) Apply(Z *mat.Dense) *mat.Dense {
	m, p := Z.Dims()
	if pr, _ := a.R.Dims(); pr != p {
		panic("bench: Alignment applied to a matrix with another number of columns")
	}
	C := mat.NewDense(m, p, nil)
	for i := 0; i < m; i++ {
		row := C.RawRowView(i)
		for j := range row {
			row[j] = Z.At(i, j) - a.From[j]
		}
	}
	out := mat.NewDense(m, p, nil)
	out.Mul(C, a.R)
	for i := 0; i < m; i++ {
		row := out.RawRowView(i)
		for j := range row {
			row[j] = a.Scale*row[j] + a.To[j]
		}
	}
	return out
}

// AlignTo returns a copy of Y aligned onto ref (both n x p) by orthogonal Procrustes: a
// translation, a rotation and/or reflection and, when scale is true, a uniform scaling (see
// Procrustes). Raw LLE eigenvectors come with an arbitrary sign and, for repeated
// eigenvalues, an arbitrary rotation; aligning every generation onto the base embedding
// removes that freedom, so generations can be compared point by point. It panics if the
// shapes differ.
func AlignTo(ref, Y *mat.Dense, scale bool) *mat.Dense {
	aligned, _, _ := Procrustes(ref, Y, scale)
	return aligned
}

// AlignAll returns AlignTo(ref, Y, scale) for every Y in gens.
func AlignAll(ref *mat.Dense, gens []*mat.Dense, scale bool) []*mat.Dense {
	out := make([]*mat.Dense, len(gens))
	for g, Y := range gens {
		out[g] = AlignTo(ref, Y, scale)
	}
	return out
}
