package engine

import (
	"context"
	"errors"

	"gonum.org/v1/gonum/mat"
)


// Transform embeds new points (one per row) with LLE weights on their k nearest training points.
func (m *Model) Transform(ctx context.Context, Xnew *mat.Dense) (*mat.Dense, error) {
	return nil, errors.New("engine: not implemented yet")
}

// Saved is what a saved model holds; Restore turns it back into a Model.
type Saved struct {
	Method      Method
	K, Dim      int
	Reg         float64
	RegMode     RegMode
	Scaling     Scaling
	X           *mat.Dense
	Neighbors   []int32
	Weights     []float64
	Sigma       []float64
	Embedding   *mat.Dense
	Eigenvalues []float64
}

// Restore rebuilds a Model from saved parts, recomputing the per-point factors, and checks
// that the parts are consistent.
func Restore(ctx context.Context, s Saved, workers int) (*Model, error) {
	return nil, errors.New("engine: not implemented yet")
}
