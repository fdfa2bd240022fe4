package bench

import (
	"context"
	"math"

	"gonum.org/v1/gonum/mat"
)

// QualityOptions says which metrics Assess computes. The zero value computes none.
type QualityOptions struct {
	// K is the neighbourhood size of trustworthiness and continuity; they are computed when
	// 1 <= K < n/2 and reported as NaN otherwise.
	K int
	// Neighborhood chooses the query points of trustworthiness and continuity: exact for
	// n <= ExactLimit, a seeded random subsample of DefaultQueries points above (see
	// NeighborhoodOptions).
	Neighborhood NeighborhoodOptions
	// Neighbors and Weights (n*WK each, the layout of engine.Model.Neighbors and Weights)
	// give the weights of the LLE reconstruction cost; nil skips it.
	Neighbors []int32
	Weights   []float64
	WK        int
	// Reference, when not nil, is the embedding the Procrustes disparity is measured to
	// (the base embedding for a generation).
	Reference *mat.Dense
	// Coord, when not nil, is a manifold coordinate (n values) for MaxAbsSpearman.
	Coord []float64
}

// Quality holds the metrics of one embedding; metrics that were not asked for (or cannot be
// computed) are NaN.
type Quality struct {
	K       int // neighbourhood size of trustworthiness and continuity
	Queries int // query points their sums ran over (n: exact)
	// Trustworthiness and Continuity at K neighbours (Venna and Kaski).
	Trustworthiness, Continuity float64
	// ReconstructionCost is sum_i ||y_i - sum_j w_ij y_j||^2 under the given weights, the
	// objective of the paper's linear embedding, Eq. (37) (see ReconstructionCost).
	ReconstructionCost float64
	// Disparity is ProcrustesDisparity(Reference, Y).
	Disparity float64
	// Spearman is MaxAbsSpearman(Y, Coord): 0, not NaN, when Coord or every column of Y is
	// constant (no axis follows the coordinate).
	Spearman float64
}

// AssessContext computes the quality metrics of the embedding Y (n x p) of the data X (n x D)
// selected by opt. Costs: trustworthiness and continuity O(q n (D + p + k)) for q query points
// (q = n up to ExactLimit, so they stay usable at a million points), the others O(n k p) or
// O(n p^2). It returns an error when ctx is done before trustworthiness and continuity are
// computed (see TrustContinuityContext) or when opt.Neighbors holds an index outside [0, n)
// (see ReconstructionCost), and panics on mismatched shapes.
func AssessContext(ctx context.Context, X, Y *mat.Dense, opt QualityOptions) (Quality, error) {
	n, _ := Y.Dims()
	nan := math.NaN()
	q := Quality{K: opt.K, Trustworthiness: nan, Continuity: nan, ReconstructionCost: nan, Disparity: nan, Spearman: nan}
	if X != nil && TrustDefined(n, opt.K) {
		var err error
		if q.Trustworthiness, q.Continuity, err = TrustContinuityContext(ctx, X, Y, opt.K, opt.Neighborhood); err != nil {
			return q, err
		}
		q.Queries = QueryCount(n, opt.Neighborhood)
	}
	if opt.Neighbors != nil {
		var err error
		if q.ReconstructionCost, err = reconstructionCost(Y, opt.Neighbors, opt.Weights, opt.WK, opt.Neighborhood.Workers); err != nil {
			return q, err
		}
	}
	if opt.Reference != nil {
		q.Disparity = ProcrustesDisparity(opt.Reference, Y)
	}
	if opt.Coord != nil {
		q.Spearman = MaxAbsSpearman(Y, opt.Coord)
	}
	return q, nil
}

// QueryCount returns the number of query points TrustContinuity uses for n points with opt:
// n (exact) or the subsample size.
func QueryCount(n int, opt NeighborhoodOptions) int {
	q := opt.Queries
	if q <= 0 {
		q = n
		if n > ExactLimit {
			q = DefaultQueries
		}
	}
	return min(q, n)
}
