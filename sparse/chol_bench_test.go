package sparse

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"runtime"
	"strconv"
	"sync"
	"testing"
	"time"
)

var (
	benchMu   sync.Mutex
	benchMats = map[int]*benchMat{}
)

type benchMat struct {
	a   *testCSR
	pts []float64
}

// benchKNN returns (and caches) the kNN-like LLE matrix with n points, k = 10.
func benchKNN(n int) *benchMat {
	benchMu.Lock()
	defer benchMu.Unlock()
	if m, ok := benchMats[n]; ok {
		return m
	}
	a, pts := knnLLE(rand.New(rand.NewPCG(uint64(n), 99)), n, 10)
	m := &benchMat{a, pts}
	benchMats[n] = m
	return m
}

// benchShift is the shift of the benchmarks: A - benchShift I = M + 1e-10 I, as in the notes.
const benchShift = -1e-10

// cholSolveTol bounds the relative residual ||A x - b||_inf / (||A||_inf ||x||_inf) of a solve
// with the factor of A = M - benchShift I. Cholesky is backward stable whatever the
// conditioning: (A + dA) x = b with |dA| <= (c+1) eps |L| |L^T| (Higham, Accuracy and
// Stability, Thm 10.4), the entries of |L| |L^T| at most max_i A_ii <= ||A||_inf, so the
// residual is at most ~c^2 eps, c the largest column count of L (~200 at n = 100k): 1e-11,
// typically c eps (measured 4e-16 at n = 20k). 1e-8 is far above it: the check catches a wrong
// factor or solve (an O(1) residual), not rounding.
const cholSolveTol = 1e-8

func BenchmarkAnalyze(b *testing.B) {
	for _, n := range []int{10000, 100000} {
		m := benchKNN(n)
		for _, o := range []Ordering{OrderingAMF, OrderingAMD, OrderingND, OrderingGeometricND} {
			b.Run(fmt.Sprintf("n=%d/%v", n, o), func(b *testing.B) {
				b.ReportAllocs()
				var s *Symbolic
				for i := 0; i < b.N; i++ {
					var err error
					s, err = Analyze(context.Background(), n, m.a.rowPtr, m.a.colIdx, SymbolicOptions{Ordering: o, Coords: m.pts, CoordDim: 2})
					if err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(s.NNZ())/float64(n), "nnzL/row")
				b.ReportMetric(s.Flops()/1e9, "GFlop")
			})
		}
	}
}

func BenchmarkFactor(b *testing.B) {
	for _, n := range []int{10000, 100000} {
		m := benchKNN(n)
		for _, o := range []Ordering{OrderingAMF, OrderingAMD, OrderingND} {
			s, err := Analyze(context.Background(), n, m.a.rowPtr, m.a.colIdx, SymbolicOptions{Ordering: o})
			if err != nil {
				b.Fatal(err)
			}
			f := NewFactor(s)
			b.Run(fmt.Sprintf("n=%d/%v", n, o), func(b *testing.B) {
				checkFactor(b, f, m.a)
				b.ReportAllocs()
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					if err := f.Factorize(context.Background(), m.a.val, benchShift); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(s.Flops()*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFlop/s")
			})
		}
	}
}

func BenchmarkSolve(b *testing.B) {
	for _, n := range []int{10000, 100000} {
		m := benchKNN(n)
		s, err := Analyze(context.Background(), n, m.a.rowPtr, m.a.colIdx, SymbolicOptions{})
		if err != nil {
			b.Fatal(err)
		}
		f := NewFactor(s)
		if err := f.Factorize(context.Background(), m.a.val, benchShift); err != nil {
			b.Fatal(err)
		}
		for _, nrhs := range []int{1, 2, 4, 8} {
			rhs := randVec(rand.New(rand.NewPCG(1, 1)), n*nrhs)
			x := make([]float64, n*nrhs)
			b.Run(fmt.Sprintf("n=%d/nrhs=%d", n, nrhs), func(b *testing.B) {
				b.ReportAllocs()
				f.SolveMany(x, rhs, nrhs) // warm the workspace
				for j := 0; j < nrhs; j++ {
					xj, bj := make([]float64, n), make([]float64, n)
					for i := 0; i < n; i++ {
						xj[i], bj[i] = x[i*nrhs+j], rhs[i*nrhs+j]
					}
					if r := relResidual(m.a, benchShift, xj, bj); !(r < cholSolveTol) {
						b.Fatalf("SolveMany column %d: relative residual %.3g", j, r)
					}
				}
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					f.SolveMany(x, rhs, nrhs)
				}
				// two triangular solves, 2 flops per stored entry each
				b.ReportMetric(4*float64(s.NNZ())*float64(nrhs)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFlop/s")
			})
		}
	}
}

// TestLargeKNN measures analyse/factor/solve on a kNN-like LLE matrix of GLLE_CHOL_N points
// (e.g. 1000000), checking the solve's relative residual (cholSolveTol); skipped unless the
// variable is set. GLLE_CHOL_ORDER picks amd, amf, nd or geond.
func TestLargeKNN(t *testing.T) {
	ns := os.Getenv("GLLE_CHOL_N")
	if ns == "" {
		t.Skip("set GLLE_CHOL_N to run")
	}
	n, err := strconv.Atoi(ns)
	if err != nil {
		t.Fatal(err)
	}
	ord := OrderingND
	switch os.Getenv("GLLE_CHOL_ORDER") {
	case "amd":
		ord = OrderingAMD
	case "amf":
		ord = OrderingAMF
	case "geond":
		ord = OrderingGeometricND
	}
	t0 := time.Now()
	a, pts := knnLLE(rand.New(rand.NewPCG(uint64(n), 99)), n, 10)
	t.Logf("build M: %v, nnz(M)/row %.1f", time.Since(t0), float64(len(a.colIdx))/float64(n))
	t0 = time.Now()
	s, err := Analyze(context.Background(), n, a.rowPtr, a.colIdx, SymbolicOptions{Ordering: ord, Coords: pts, CoordDim: 2})
	if err != nil {
		t.Fatal(err)
	}
	ta := time.Since(t0)
	t.Logf("%v: analyse %v, supernodes %d, nnz(L)/row %.1f (exact %.1f), %.1f GFlop, top nodes %d",
		ord, ta, s.Supernodes(), float64(s.NNZ())/float64(n), float64(s.ExactNNZ())/float64(n), s.Flops()/1e9, len(s.sched.top))
	f := NewFactor(s)
	for rep := 0; rep < 2; rep++ {
		t0 = time.Now()
		if err := f.Factorize(context.Background(), a.val, benchShift); err != nil {
			t.Fatal(err)
		}
		tf := time.Since(t0)
		t.Logf("factor %v (%.1f GFlop/s)", tf, s.Flops()/tf.Seconds()/1e9)
	}
	rhs := randVec(rand.New(rand.NewPCG(2, 2)), n)
	x := make([]float64, n)
	t0 = time.Now()
	f.Solve(x, rhs)
	res := relResidual(a, benchShift, x, rhs)
	t.Logf("solve %v, residual %.3g", time.Since(t0), res)
	if !(res < cholSolveTol) {
		t.Errorf("relative residual %.3g of the solve, want < %g", res, cholSolveTol)
	}
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	t.Logf("heap in use %.2f GB, sys %.2f GB", float64(ms.HeapInuse)/1e9, float64(ms.Sys)/1e9)
}

// checkFactor factors a - benchShift I with f, solves one system and fails b unless the
// relative residual is small.
func checkFactor(b *testing.B, f *Factor, a *testCSR) {
	b.Helper()
	if err := f.Factorize(context.Background(), a.val, benchShift); err != nil {
		b.Fatal(err)
	}
	rhs := randVec(rand.New(rand.NewPCG(3, 3)), a.n)
	x := make([]float64, a.n)
	f.Solve(x, rhs)
	if r := relResidual(a, benchShift, x, rhs); !(r < cholSolveTol) {
		b.Fatalf("factor: relative residual %.3g", r)
	}
}

// BenchmarkEigensolveSwissRoll is the whole shift-invert eigensolve of the LLE matrix M of a Swiss roll
// (k = 10, LLE weights, p = 2 with the constant vector deflated): shift selection,
// factorizations and Lanczos iterations, reusing the symbolic analysis. start=cold starts from
// the default random vector, start=warm from the previous eigenvectors of slightly perturbed
// weights at the base fit's shift (what a generation does). Each run is checked once before the
// timer starts (residuals within the tolerance).
func BenchmarkEigensolveSwissRoll(b *testing.B) {
	ctx := context.Background()
	for _, n := range []int{10000, 100000} {
		const k = 10
		rng := rand.New(rand.NewPCG(21, uint64(n)))
		x := swissRoll(rng, n)
		nbr := gridKNN(x, k)
		w := lleWeights(x, k, nbr, 1e-3)
		p, err := NewMPattern(ctx, n, k, nbr, 0)
		if err != nil {
			b.Fatal(err)
		}
		if err := p.Fill(ctx, w, 0); err != nil {
			b.Fatal(err)
		}
		op, err := NewShiftInvert(ctx, p.Matrix())
		if err != nil {
			b.Fatal(err)
		}
		es := NewEigensolver(p.Matrix(), op)
		ones := make([]float64, n)
		for i := range ones {
			ones[i] = 1
		}
		cold := EigOptions{NEV: 2, Deflate: [][]float64{ones}}
		base, err := es.Smallest(ctx, cold)
		if err != nil {
			b.Fatal(err)
		}
		warm := cold
		warm.Start = base.Vectors
		warm.StartShift = base.Shift
		for _, c := range []struct {
			name string
			opts EigOptions
		}{{"cold", cold}, {"warm", warm}} {
			b.Run(fmt.Sprintf("n=%d/nev=2/start=%s", n, c.name), func(b *testing.B) {
				res, err := es.Smallest(ctx, c.opts)
				if err != nil {
					b.Fatal(err)
				}
				for i, r := range res.Residuals {
					// The solver's own acceptance test at the default Tol 1e-10.
					if !(r <= 1e-10*res.NormA) {
						b.Fatalf("eigenpair %d: residual %.3g > 1e-10 ||M||", i, r/res.NormA)
					}
				}
				b.ReportAllocs()
				b.ResetTimer()
				solves, facts := 0, 0
				for i := 0; i < b.N; i++ {
					res, err := es.Smallest(ctx, c.opts)
					if err != nil {
						b.Fatal(err)
					}
					solves += res.OpApplies
					facts += res.Factorizations
				}
				b.ReportMetric(float64(solves)/float64(b.N), "solves/op")
				b.ReportMetric(float64(facts)/float64(b.N), "factorizations/op")
			})
		}
	}
}
