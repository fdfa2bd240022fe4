package engine

import (
	"gonum.org/v1/gonum/mat"
)

// Saved is what a saved model holds; Restore turns it back into a Model.
type Saved struct {
	Method      Method
	K, Dim      int
	Reg         float64
	RegMode     RegMode
	Scaling     Scaling
	DirectRidge float64
	X           *mat.Dense
	Neighbors   []int32
	Weights     []float64
	Sigma       []float64
	Embedding   *mat.Dense
	Eigenvalues []float64
	// Shift is the eigensolver shift the base fit adapted to (0 if unknown); generations start
	// from it, so a restored model generates the same embeddings as the fitted one.
	Shift float64
}

// Saved returns the parts of m that Restore needs.
func (m *Model) Saved() Saved {
	return Saved{Method: m.Method, K: m.K, Dim: m.Dim, Reg: m.Reg, RegMode: m.RegMode, Scaling: m.Scaling,
		DirectRidge: m.directRidge, X: m.X, Neighbors: m.Neighbors, Weights: m.Weights, Sigma: m.Sigma,
		Embedding: m.Embedding, Eigenvalues: m.Eigenvalues, Shift: m.st.emb.shift()}
}
