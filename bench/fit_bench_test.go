package bench_test

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"glle/bench"
	"glle/engine"
)

// End-to-end benchmarks on the Swiss roll (k = 10, p = 2). The default sizes keep
// 'go test -bench . -benchtime=1x ./...' short; GLLE_BENCH_SIZES=100000,1000000 (a comma list)
// replaces them for BenchmarkFit, BenchmarkGenerate and BenchmarkTransform. Every benchmark fits once before the
// timer starts and checks that the embedding unfolds the roll (|Spearman| with the roll angle).

// benchSizes returns the sizes of the scaling benchmarks.
func benchSizes(b *testing.B) []int {
	env := os.Getenv("GLLE_BENCH_SIZES")
	if env == "" {
		return []int{5000, 20000}
	}
	var ns []int
	for _, f := range strings.Split(env, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 100 {
			b.Fatalf("GLLE_BENCH_SIZES=%q: want a comma list of sizes >= 100", env)
		}
		ns = append(ns, n)
	}
	return ns
}

// minUnfold is the smallest accepted max |Spearman| of an embedding axis with the roll angle.
const minUnfold = 0.9

func checkUnfolds(b *testing.B, what string, Y *mat.Dense, t []float64) {
	b.Helper()
	if s := bench.MaxAbsSpearman(Y, t); !(s >= minUnfold) {
		b.Fatalf("%s does not unfold the Swiss roll: max |Spearman| %.3f < %.2f", what, s, minUnfold)
	}
}

func BenchmarkFit(b *testing.B) {
	ctx := context.Background()
	for _, meth := range []engine.Method{engine.LLE, engine.EM, engine.Direct} {
		for _, n := range benchSizes(b) {
			b.Run(fmt.Sprintf("method=%v/n=%d", meth, n), func(b *testing.B) {
				X, t := bench.SwissRoll(n, 1)
				s := engine.Settings{Method: meth}
				m, err := engine.Fit(ctx, X, s)
				if err != nil {
					b.Fatal(err)
				}
				checkUnfolds(b, "the fit", m.Embedding, t)
				b.ReportAllocs()
				b.ResetTimer()
				solves := 0
				for i := 0; i < b.N; i++ {
					if m, err = engine.Fit(ctx, X, s); err != nil {
						b.Fatal(err)
					}
					solves += m.Report.Eigen.OpApplies
				}
				b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "points/s")
				b.ReportMetric(float64(solves)/float64(b.N), "solves/op")
				b.ReportMetric(float64(m.Report.Eigen.NNZL)/float64(n), "nnzL/row")
			})
		}
	}
}

// BenchmarkGenerate is one more generation (draws, M refill, refactorization, warm-started
// eigensolve) of a fitted model, returned in a new matrix (Generate).
func BenchmarkGenerate(b *testing.B) { benchGenerate(b, false) }

// BenchmarkGenerateTo is BenchmarkGenerate writing every generation into one reused N x 2
// matrix (GenerateTo), the way a loop over many generations should: B/op drops by the
// 16 N bytes of the result.
func BenchmarkGenerateTo(b *testing.B) { benchGenerate(b, true) }

func benchGenerate(b *testing.B, reuse bool) {
	ctx := context.Background()
	for _, meth := range []engine.Method{engine.EM, engine.Direct} {
		for _, n := range benchSizes(b) {
			b.Run(fmt.Sprintf("method=%v/n=%d", meth, n), func(b *testing.B) {
				X, t := bench.SwissRoll(n, 1)
				m, err := engine.Fit(ctx, X, engine.Settings{Method: meth})
				if err != nil {
					b.Fatal(err)
				}
				Y, _, err := m.Generate(ctx, 1, 0, 1)
				if err != nil {
					b.Fatal(err)
				}
				checkUnfolds(b, "generation 0", Y, t)
				b.ReportAllocs()
				b.ResetTimer()
				solves := 0
				for i := 0; i < b.N; i++ {
					var rep *engine.Report
					if reuse {
						rep, err = m.GenerateTo(ctx, Y, 1, i+1, 1, engine.FrameBase)
					} else {
						_, rep, err = m.Generate(ctx, 1, i+1, 1)
					}
					if err != nil {
						b.Fatal(err)
					}
					solves += rep.Eigen.OpApplies
				}
				b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "points/s")
				b.ReportMetric(float64(solves)/float64(b.N), "solves/op")
			})
		}
	}
}

// PaperScales are the covariance scales of the paper's Fig. 4 sweep.
var paperScales = []float64{0.01, 0.1, 1, 5, 10}

// paperWorkflow runs the paper's experiments on one dataset: LLE; the EM fit and 30
// generations; the direct fit and 30 generations; the covariance sweep (generation 0 of both
// models at every scale). It returns the LLE embedding.
func paperWorkflow(ctx context.Context, X *mat.Dense) (*mat.Dense, int, error) {
	lle, err := engine.Fit(ctx, X, engine.Settings{Method: engine.LLE})
	if err != nil {
		return nil, 0, err
	}
	gens := 0
	var models []*engine.Model
	for _, meth := range []engine.Method{engine.EM, engine.Direct} {
		m, err := engine.Fit(ctx, X, engine.Settings{Method: meth})
		if err != nil {
			return nil, 0, err
		}
		for g := 0; g < 30; g++ {
			if _, _, err := m.Generate(ctx, 1, g, 1); err != nil {
				return nil, 0, fmt.Errorf("%v generation %d: %w", meth, g, err)
			}
			gens++
		}
		models = append(models, m)
	}
	for _, m := range models {
		for _, a := range paperScales {
			if _, _, err := m.Generate(ctx, 1, 0, a); err != nil {
				return nil, 0, fmt.Errorf("%v scale %g: %w", m.Method, a, err)
			}
			gens++
		}
	}
	return lle.Embedding, gens, nil
}

// BenchmarkPaperWorkflow is the paper's whole workflow at n = 5000 (target: <= 2 s; the
// authors' code takes about 900 s).
func BenchmarkPaperWorkflow(b *testing.B) {
	ctx := context.Background()
	const n = 5000
	b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
		X, t := bench.SwissRoll(n, 1)
		Y, gens, err := paperWorkflow(ctx, X)
		if err != nil {
			b.Fatal(err)
		}
		checkUnfolds(b, "LLE", Y, t)
		b.ReportAllocs()
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			if _, _, err := paperWorkflow(ctx, X); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(gens), "generations/op")
		b.ReportMetric(b.Elapsed().Seconds()/float64(b.N), "s/workflow")
	})
}

// BenchmarkTransform embeds a batch of 100 new points (a second Swiss roll sample) out of
// sample with a fitted LLE model (TransformTo into one reused matrix: kNN query, LLE weights,
// combination of the base embedding). The fit and a first transform, which builds the
// training points' search tree, happen before the timer starts.
func BenchmarkTransform(b *testing.B) {
	ctx := context.Background()
	for _, n := range benchSizes(b) {
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			X, _ := bench.SwissRoll(n, 1)
			m, err := engine.Fit(ctx, X, engine.Settings{Method: engine.LLE})
			if err != nil {
				b.Fatal(err)
			}
			Xq, _ := bench.SwissRoll(100, 2)
			Y, err := m.Transform(ctx, Xq)
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if err := m.TransformTo(ctx, Y, Xq); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(100*float64(b.N)/b.Elapsed().Seconds(), "points/s")
		})
	}
}
