package sparse

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"glle/kernels"
)

// benchGramLU returns the GramLU operator of random sum-to-one weights (10% negative before
// normalisation) on the kNN graph of n random points in the unit square, k = 10, factored.
func benchGramLU(b *testing.B, n int) (*BPattern, *GramLU) {
	b.Helper()
	_, nb, w := knnWeights(rand.New(rand.NewPCG(uint64(n), 98)), n, 10, 0.1)
	bp, err := NewBPattern(context.Background(), n, 10, nb, 0)
	if err != nil {
		b.Fatal(err)
	}
	if err := bp.Fill(context.Background(), w, 0); err != nil {
		b.Fatal(err)
	}
	g, err := NewGramLU(context.Background(), bp, SymbolicOptions{})
	if err != nil {
		b.Fatal(err)
	}
	if err := g.SetShift(0); err != nil {
		b.Fatal(err)
	}
	return bp, g
}

// BenchmarkLUFactor is the numeric LU factorization of B = I - W (GramLU.SetShift: the
// factorization and the null vector of B^T), checked once: ||M M^+ x - x|| small.
func BenchmarkLUFactor(b *testing.B) {
	for _, n := range []int{10000, 100000} {
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			bp, g := benchGramLU(b, n)
			checkGramLU(b, bp, g)
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if err := g.SetShift(0); err != nil {
					b.Fatal(err)
				}
			}
			// LU costs twice the Cholesky count of the same pattern.
			b.ReportMetric(2*g.sym.Flops()*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFlop/s")
			b.ReportMetric(2*float64(g.sym.NNZ())/float64(n), "nnzLU/row")
		})
	}
}

// BenchmarkGramLUApply is one application of M^+ (two LU solves, the projections and the
// permutations): the operator of every Lanczos step on the LU path.
func BenchmarkGramLUApply(b *testing.B) {
	for _, n := range []int{10000, 100000} {
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			bp, g := benchGramLU(b, n)
			checkGramLU(b, bp, g)
			x := centred(randVec(rand.New(rand.NewPCG(3, 3)), n))
			y := make([]float64, n)
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				g.Apply(y, x)
			}
			// four triangular passes, 2 flops per stored entry each
			b.ReportMetric(8*float64(g.sym.NNZ())*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFlop/s")
		})
	}
}

// BenchmarkBPatternFill is the refill of B's values for new weights (every generation).
func BenchmarkBPatternFill(b *testing.B) {
	for _, n := range []int{10000, 100000} {
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			_, nb, w := knnWeights(rand.New(rand.NewPCG(uint64(n), 98)), n, 10, 0.1)
			bp, err := NewBPattern(context.Background(), n, 10, nb, 0)
			if err != nil {
				b.Fatal(err)
			}
			if err := bp.Fill(context.Background(), w, 0); err != nil { // allocates the reordered weights
				b.Fatal(err)
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if err := bp.Fill(context.Background(), w, 0); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "points/s")
		})
	}
}

// checkGramLU fails b unless M (M^+ x) = x for a vector x orthogonal to the constant vector, to
// the accuracy the conditioning of M allows.
func checkGramLU(b *testing.B, bp *BPattern, g *GramLU) {
	b.Helper()
	n := bp.N()
	x := centred(randVec(rand.New(rand.NewPCG(4, 4)), n))
	y, r := make([]float64, n), make([]float64, n)
	g.Apply(y, x)
	bp.MulVec(r, y)
	// ||M|| ||M^+|| eps is below ~1e-4 for these sizes.
	if e := relErr(r, x); e > 1e-4 {
		b.Fatalf("||M M^+ x - x|| / ||x|| = %g", e)
	}
}

// BenchmarkLUBlock is the unpivoted LU of a diagonal block (and of a whole narrow panel, m > w):
// the Go kernel against the backend's (kernels.PanelLUer; the purego build has none).
func BenchmarkLUBlock(b *testing.B) {
	for _, sh := range []struct{ m, w int }{{12, 12}, {24, 24}, {48, 48}, {96, 96}, {40, 4}} {
		rng := rand.New(rand.NewPCG(uint64(sh.m), uint64(sh.w)))
		pl0, pu0 := make([]float64, sh.m*sh.w), make([]float64, sh.m*sh.w)
		for i := range pl0 {
			pl0[i], pu0[i] = rng.Float64()-0.5, rng.Float64()-0.5
		}
		for i := 0; i < sh.w; i++ { // diagonally dominant: no pivot fails
			pl0[i*sh.w+i], pu0[i*sh.w+i] = float64(sh.w), float64(sh.w)
		}
		pl, pu := make([]float64, len(pl0)), make([]float64, len(pu0))
		f := &LUFactor{}
		impls := []string{"go"}
		if _, ok := kernels.Current().(kernels.PanelLUer); ok {
			impls = append(impls, "backend")
		}
		for _, impl := range impls {
			b.Run(fmt.Sprintf("m=%d/w=%d/impl=%s", sh.m, sh.w, impl), func(b *testing.B) {
				b.ReportAllocs()
				for i := 0; i < b.N; i++ {
					copy(pl, pl0)
					copy(pu, pu0)
					if impl == "go" {
						f.luCroutGo(pl, pu, sh.m, sh.w, sh.w, 1e-12, false)
					} else {
						f.luBlock(pl, pu, sh.m, sh.w, sh.w, 1e-12, false)
					}
				}
				// LU of the w x w block, 2/3 w^3, and the rows below it, 2 (m - w) w^2.
				fl := 2*float64(sh.w*sh.w*sh.w)/3 + 2*float64((sh.m-sh.w)*sh.w*sh.w)
				b.ReportMetric(fl*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFlop/s")
			})
		}
	}
}

// BenchmarkBPatternMulVec is M x = B^T (B x) on B's pattern for one vector (MulVec, every
// Lanczos step's residual product on the LU path) and for three (MulVecs, the true residuals
// of NEV = 3 Ritz vectors).
func BenchmarkBPatternMulVec(b *testing.B) {
	const n = 100000
	bp, _ := benchBPattern(b, n, false)
	rng := rand.New(rand.NewPCG(5, 5))
	x := [][]float64{randVec(rng, n), randVec(rng, n), randVec(rng, n)}
	y := [][]float64{make([]float64, n), make([]float64, n), make([]float64, n)}
	for _, nv := range []int{1, 3} {
		b.Run(fmt.Sprintf("n=%d/vectors=%d", n, nv), func(b *testing.B) {
			bp.MulVecs(y[:nv], x[:nv]) // sizes the scratch
			b.ReportAllocs()
			for b.Loop() {
				if nv == 1 {
					bp.MulVec(y[0], x[0])
				} else {
					bp.MulVecs(y, x)
				}
			}
		})
	}
}

// BenchmarkBPatternNormInf is NormInf after a Fill (computed once per Fill, here every
// iteration): for random weights (the bounds prune all but a few rows) and for uniform ones
// (every row alike: normAll sums them all).
func BenchmarkBPatternNormInf(b *testing.B) {
	const n = 100000
	for _, uniform := range []bool{false, true} {
		bp, _ := benchBPattern(b, n, uniform)
		b.Run(fmt.Sprintf("n=%d/uniform=%v", n, uniform), func(b *testing.B) {
			bp.normM = -1
			bp.NormInf() // sizes the scratch
			b.ReportAllocs()
			for b.Loop() {
				bp.normM = -1 // what a Fill does
				bp.NormInf()
			}
		})
	}
}

// benchBPattern returns B's pattern for random sum-to-one weights (as benchGramLU) or uniform
// weights 1/k on the same kNN graph (k = 10), filled.
func benchBPattern(b *testing.B, n int, uniform bool) (*BPattern, []float64) {
	b.Helper()
	_, nb, w := knnWeights(rand.New(rand.NewPCG(uint64(n), 98)), n, 10, 0.1)
	if uniform {
		for i := range w {
			w[i] = 0.1
		}
	}
	bp, err := NewBPattern(context.Background(), n, 10, nb, 0)
	if err != nil {
		b.Fatal(err)
	}
	if err := bp.Fill(context.Background(), w, 0); err != nil {
		b.Fatal(err)
	}
	return bp, w
}
