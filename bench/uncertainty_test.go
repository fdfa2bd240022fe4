package bench_test

import (
	"context"
	"errors"
	"math"
	"slices"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"glle/bench"
	"glle/engine"
)

// TestUncertaintyGrowsWithScale: on the Swiss roll the median per-point spread of aligned
// generations grows with the covariance scale a, for both GLLE methods, up to a = 1. Beyond it
// the spread saturates: folded generations dominate it, and from a = 1 to a = 5 it grew in only
// 5 to 8 of 12 generation seeds for direct (n = 600, 5 generations each), so a = 5 is not
// tested.
func TestUncertaintyGrowsWithScale(t *testing.T) {
	ctx := context.Background()
	X, _ := bench.SwissRoll(600, 2)
	for _, meth := range []engine.Method{engine.EM, engine.Direct} {
		m, err := engine.Fit(ctx, X, engine.Settings{Method: meth})
		if err != nil {
			t.Fatal(err)
		}
		prev := 0.0
		for _, a := range []float64{0.01, 0.1, 1} {
			var gens []*mat.Dense
			for g := 0; g < 5; g++ {
				Y, _, err := m.Generate(ctx, 7, g, a)
				if err != nil {
					t.Fatal(err)
				}
				gens = append(gens, Y)
			}
			mean, spread := bench.Uncertainty(m.Embedding, gens, true)
			if r, c := mean.Dims(); r != 600 || c != 2 || len(spread) != 600 {
				t.Fatalf("shapes %dx%d, %d", r, c, len(spread))
			}
			s := slices.Clone(spread)
			slices.Sort(s)
			med := s[len(s)/2]
			t.Logf("%s a=%g: median spread %.3g", meth, a, med)
			if !(med > prev) || math.IsNaN(med) {
				t.Errorf("%s: median spread %g at a = %g does not exceed %g at the smaller scale", meth, med, a, prev)
			}
			prev = med
		}
	}
}

// TestAssess: AssessContext reports exactly what the individual
// metrics give; a bad neighbour index is an error of AssessContext and a done context stops it.
func TestAssess(t *testing.T) {
	ctx := context.Background()
	X, color := bench.SwissRoll(300, 4)
	m, err := engine.Fit(ctx, X, engine.Settings{Method: engine.EM})
	if err != nil {
		t.Fatal(err)
	}
	Y, _, err := m.Generate(ctx, 1, 0, 1)
	if err != nil {
		t.Fatal(err)
	}
	opt := bench.QualityOptions{K: 10, Neighbors: m.Neighbors, Weights: m.Weights, WK: m.K, Reference: m.Embedding, Coord: color}
	q, err := bench.AssessContext(ctx, X, Y, opt)
	if err != nil {
		t.Fatal(err)
	}
	tr, co := bench.TrustContinuity(X, Y, 10, bench.NeighborhoodOptions{})
	if q.Trustworthiness != tr || q.Continuity != co || q.Queries != 300 || q.K != 10 {
		t.Errorf("trust/continuity %v %v (%d queries), want %v %v", q.Trustworthiness, q.Continuity, q.Queries, tr, co)
	}
	if rc, err := bench.ReconstructionCost(Y, m.Neighbors, m.Weights, m.K); err != nil || q.ReconstructionCost != rc {
		t.Errorf("reconstruction cost %v, ReconstructionCost %v (%v)", q.ReconstructionCost, rc, err)
	}
	if q.Disparity != bench.ProcrustesDisparity(m.Embedding, Y) || q.Spearman != bench.MaxAbsSpearman(Y, color) {
		t.Error("disparity or Spearman differs")
	}
	none, err := bench.AssessContext(ctx, X, Y, bench.QualityOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range []float64{none.Trustworthiness, none.Continuity, none.ReconstructionCost, none.Disparity, none.Spearman} {
		if !math.IsNaN(v) {
			t.Errorf("metric %v computed although not asked for", v)
		}
	}
	if got := bench.QueryCount(50000, bench.NeighborhoodOptions{}); got != bench.DefaultQueries {
		t.Errorf("QueryCount(50000) = %d", got)
	}

	// A caller's neighbour list with an index outside [0, n): an error, not a panic.
	bad := slices.Clone(m.Neighbors)
	bad[7] = 300
	badOpt := opt
	badOpt.Neighbors = bad
	if _, err := bench.AssessContext(ctx, X, Y, badOpt); err == nil || !strings.Contains(err.Error(), "out of range") {
		t.Errorf("out-of-range neighbour: err = %v", err)
	}
	// A done context stops the metrics pass with its error.
	done, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := bench.AssessContext(done, X, Y, opt); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled context: err = %v", err)
	}
}
