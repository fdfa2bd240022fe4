package sparse

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"gonum.org/v1/gonum/mat"

	"glle/internal/latency"
)

var allOrderings = []Ordering{OrderingDefault, OrderingNatural, OrderingAMD, OrderingND, OrderingAMF}

// residualTol bounds ||A x - b||_inf / (||A||_inf ||x||_inf): a backward-stable Cholesky gives
// a small multiple of n * eps for these well-conditioned matrices.
const residualTol = 1e-12

func factorOrFatal(t *testing.T, a *testCSR, opts SymbolicOptions, shift float64) (*Symbolic, *Factor) {
	t.Helper()
	s, err := Analyze(context.Background(), a.n, a.rowPtr, a.colIdx, opts)
	if err != nil {
		t.Fatalf("Analyze: %v", err)
	}
	f := NewFactor(s)
	if err := f.Factorize(context.Background(), a.val, shift); err != nil {
		t.Fatalf("Factorize: %v", err)
	}
	return s, f
}

// relResidual returns ||(A - shift I) x - b||_inf / (||A - shift I||_inf ||x||_inf).
func relResidual(a *testCSR, shift float64, x, b []float64) float64 {
	r := make([]float64, a.n)
	a.mulVec(r, x, shift)
	num, xn := 0.0, 0.0
	for i := range r {
		num = math.Max(num, math.Abs(r[i]-b[i]))
		xn = math.Max(xn, math.Abs(x[i]))
	}
	if xn == 0 {
		return num
	}
	return num / (a.normInf(shift) * xn)
}

func randVec(rng *rand.Rand, n int) []float64 {
	v := make([]float64, n)
	for i := range v {
		v[i] = rng.NormFloat64()
	}
	return v
}

func isPerm(p []int) bool {
	seen := make([]bool, len(p))
	for _, v := range p {
		if v < 0 || v >= len(p) || seen[v] {
			return false
		}
		seen[v] = true
	}
	return true
}

func TestOrderingIsPermutation(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	knn, pts := knnLLE(rng, 3000, 10) // big enough for several levels of dissection (ndLeaf 200)
	cases := map[string]*testCSR{
		"n=0":       csrFromTriplets(0, nil, nil, nil, true),
		"n=1":       randomSPD(rng, 1, 0, true),
		"random":    randomSPD(rng, 700, 6, true),
		"grid":      gridLaplacian(37, 29, false),
		"diagonal":  randomSPD(rng, 300, 0, true),
		"knn":       knn,
		"disconnec": disconnected(rng),
	}
	for name, a := range cases {
		for _, o := range allOrderings {
			s, err := Analyze(context.Background(), a.n, a.rowPtr, a.colIdx, SymbolicOptions{Ordering: o})
			if err != nil {
				t.Fatalf("%s/%v: %v", name, o, err)
			}
			if !isPerm(s.Perm()) {
				t.Fatalf("%s/%v: not a permutation", name, o)
			}
		}
	}
	s, err := Analyze(context.Background(), knn.n, knn.rowPtr, knn.colIdx, SymbolicOptions{Ordering: OrderingGeometricND, Coords: pts, CoordDim: 2})
	if err != nil || !isPerm(s.Perm()) || s.Ordering() != OrderingGeometricND {
		t.Fatalf("geometric ND: err %v, ordering %v", err, s.Ordering())
	}
}

// disconnected returns a block-diagonal matrix of random blocks and isolated vertices.
func disconnected(rng *rand.Rand) *testCSR {
	var is, js []int
	var vs []float64
	n := 0
	for b := 0; b < 7; b++ {
		sz := 1 + rng.IntN(60) // block sizes 1..60
		blk := randomSPD(rng, sz, 4, false)
		for i := 0; i < sz; i++ {
			for p := blk.rowPtr[i]; p < blk.rowPtr[i+1]; p++ {
				is, js, vs = append(is, n+i), append(js, n+blk.colIdx[p]), append(vs, blk.val[p])
			}
		}
		n += sz
	}
	return csrFromTriplets(n, is, js, vs, true)
}

// exactColCounts computes L's column counts by symbolic elimination on a dense boolean matrix.
func exactColCounts(a *testCSR, perm []int) []int32 {
	n := a.n
	ip := make([]int, n)
	for k, v := range perm {
		ip[v] = k
	}
	nz := make([]bool, n*n)
	for i := 0; i < n; i++ {
		for p := a.rowPtr[i]; p < a.rowPtr[i+1]; p++ {
			if j := a.colIdx[p]; j < i {
				r, c := ip[i], ip[j]
				nz[r*n+c], nz[c*n+r] = true, true
			}
		}
	}
	cc := make([]int32, n)
	for k := 0; k < n; k++ {
		cc[k] = 1
		for i := k + 1; i < n; i++ {
			if nz[i*n+k] {
				cc[k]++
				for j := k + 1; j < n; j++ {
					if nz[j*n+k] {
						nz[i*n+j] = true
					}
				}
			}
		}
	}
	return cc
}

func TestColumnCounts(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for trial := 0; trial < 20; trial++ {
		n := 1 + rng.IntN(120) // small enough for the dense symbolic check
		a := randomSPD(rng, n, rng.IntN(8), true)
		for _, o := range []Ordering{OrderingNatural, OrderingAMD, OrderingND, OrderingAMF} {
			// PrepareFactor also checks the factor size predicted from the column counts
			// against the supernode structure (analyzePerm panics on a mismatch).
			s, err := Analyze(context.Background(), n, a.rowPtr, a.colIdx, SymbolicOptions{Ordering: o, PrepareFactor: true})
			if err != nil {
				t.Fatal(err)
			}
			if lx := NewFactor(s).lx; int64(len(lx)) != s.lxPtr[s.ns] || s.lx.Load() != nil {
				t.Fatalf("prepared factor storage %d, want %d", len(lx), s.lxPtr[s.ns])
			}
			want := exactColCounts(a, s.Perm())
			for j := range want {
				if s.colCnt[j] != want[j] {
					t.Fatalf("trial %d %v: colcount[%d] = %d, want %d", trial, o, j, s.colCnt[j], want[j])
				}
			}
			if s.NNZ() < s.ExactNNZ() {
				t.Fatalf("stored nnz %d < exact %d", s.NNZ(), s.ExactNNZ())
			}
		}
	}
}

func TestFactorRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	// Sizes around supernode, panel-block and solve-kernel edges (smallPanel 4, panelBlock 96,
	// solveBLASWidth 128) and dense-ish.
	sizes := []struct{ n, deg int }{
		{1, 0}, {2, 2}, {3, 2}, {4, 4}, {5, 4}, {8, 8}, {17, 6}, {50, 3}, {95, 94}, {96, 95}, {97, 96},
		{127, 126}, {128, 127}, {130, 129}, {200, 8}, {300, 40}, {1000, 6},
	}
	for _, sz := range sizes {
		for _, full := range []bool{true, false} {
			a := randomSPD(rng, sz.n, sz.deg, full)
			for _, o := range allOrderings {
				for _, workers := range []int{1, 2} {
					name := fmt.Sprintf("n=%d/deg=%d/full=%v/%v/w=%d", sz.n, sz.deg, full, o, workers)
					shift := -0.5 // A - shift I = A + 0.5 I
					_, f := factorOrFatal(t, a, SymbolicOptions{Ordering: o, Workers: workers}, shift)
					b := randVec(rng, a.n)
					x := make([]float64, a.n)
					f.Solve(x, b)
					if r := relResidual(a, shift, x, b); r > residualTol {
						t.Fatalf("%s: residual %g", name, r)
					}
					if a.n <= 300 {
						compareDense(t, name, a, shift, x, b)
					}
					// Block solves: a dense matrix is one supernode without update rows
					// (maxUpdate = 0), which the Go block kernels once sized their scratch by.
					for _, nrhs := range []int{2, 5} {
						bb := randVec(rng, a.n*nrhs)
						xb := make([]float64, a.n*nrhs)
						f.SolveMany(xb, bb, nrhs)
						col, xc := make([]float64, a.n), make([]float64, a.n)
						for j := 0; j < nrhs; j++ {
							for i := range col {
								col[i] = bb[i*nrhs+j]
							}
							f.Solve(xc, col)
							for i := range xc {
								// the same tolerance and reason as TestSolveManyAndAlias
								if d := math.Abs(xc[i] - xb[i*nrhs+j]); d > 1e-10*(1+math.Abs(xc[i])) {
									t.Fatalf("%s nrhs=%d: column %d row %d: %g vs %g", name, nrhs, j, i, xb[i*nrhs+j], xc[i])
								}
							}
						}
					}
				}
			}
		}
	}
}

// compareDense checks x against gonum's dense Cholesky solution of (A - shift I) x = b.
func compareDense(t *testing.T, name string, a *testCSR, shift float64, x, b []float64) {
	t.Helper()
	n := a.n
	var ch mat.Cholesky
	if !ch.Factorize(mat.NewSymDense(n, a.dense(shift))) {
		t.Fatalf("%s: dense Cholesky failed", name)
	}
	var want mat.VecDense
	if err := ch.SolveVecTo(&want, mat.NewVecDense(n, append([]float64(nil), b...))); err != nil {
		t.Fatal(err)
	}
	xn := 0.0
	for i := 0; i < n; i++ {
		xn = math.Max(xn, math.Abs(want.AtVec(i)))
	}
	for i := 0; i < n; i++ {
		// these matrices have condition numbers below ~1e3, so 1e-11 relative is loose
		if d := math.Abs(x[i] - want.AtVec(i)); d > 1e-11*xn {
			t.Fatalf("%s: x[%d] = %g, dense %g", name, i, x[i], want.AtVec(i))
		}
	}
}

func TestFactorGridAndKNN(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	knn, pts := knnLLE(rng, 4000, 10) // kNN-like LLE matrix, k = 10
	cases := []struct {
		name  string
		a     *testCSR
		shift float64
		opts  SymbolicOptions
	}{
		// The grid Laplacian is singular; shift -1e-3 makes A - shift I SPD.
		{"grid60x50", gridLaplacian(60, 50, false), -1e-3, SymbolicOptions{}},
		{"grid60x50/amd", gridLaplacian(60, 50, true), -1e-3, SymbolicOptions{Ordering: OrderingAMD, Workers: 2}},
		// M is PSD with the constant vector in its kernel; -1e-6 shifts it away from 0.
		{"knn/nd", knn, -1e-6, SymbolicOptions{Ordering: OrderingND, Workers: 2}},
		{"knn/amd", knn, -1e-6, SymbolicOptions{Ordering: OrderingAMD, Workers: 1}},
		{"knn/geo", knn, -1e-6, SymbolicOptions{Ordering: OrderingGeometricND, Coords: pts, CoordDim: 2, Workers: 2}},
	}
	for _, c := range cases {
		_, f := factorOrFatal(t, c.a, c.opts, c.shift)
		b := randVec(rng, c.a.n)
		x := make([]float64, c.a.n)
		f.Solve(x, b)
		// The shifted singular matrices have condition ~1e4..1e7; the backward error stays tiny.
		if r := relResidual(c.a, c.shift, x, b); r > residualTol {
			t.Fatalf("%s: residual %g", c.name, r)
		}
	}
}

func TestSolveManyAndAlias(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	a := gridLaplacian(31, 23, true)
	shift := -0.01 // makes the singular Laplacian SPD
	for _, o := range []Ordering{OrderingAMD, OrderingND, OrderingAMF} {
		_, f := factorOrFatal(t, a, SymbolicOptions{Ordering: o}, shift)
		for _, nrhs := range []int{1, 2, 5, 16} {
			b := randVec(rng, a.n*nrhs)
			x := make([]float64, a.n*nrhs)
			f.SolveMany(x, b, nrhs)
			col := make([]float64, a.n)
			xc := make([]float64, a.n)
			for j := 0; j < nrhs; j++ {
				for i := 0; i < a.n; i++ {
					col[i] = b[i*nrhs+j]
				}
				f.Solve(xc, col)
				for i := 0; i < a.n; i++ {
					// equal up to rounding: different summation orders (BLAS-3 vs BLAS-2)
					if d := math.Abs(xc[i] - x[i*nrhs+j]); d > 1e-10*(1+math.Abs(xc[i])) {
						t.Fatalf("%v nrhs=%d: column %d row %d: %g vs %g", o, nrhs, j, i, x[i*nrhs+j], xc[i])
					}
				}
			}
			// Aliased dst and b.
			y := append([]float64(nil), b...)
			f.SolveMany(y, y, nrhs)
			for i := range y {
				if y[i] != x[i] {
					t.Fatalf("aliased SolveMany differs at %d", i)
				}
			}
		}
		b := randVec(rng, a.n)
		x := make([]float64, a.n)
		f.Solve(x, b)
		f.Solve(b, b)
		for i := range b {
			if b[i] != x[i] {
				t.Fatalf("aliased Solve differs at %d", i)
			}
		}
	}
}

func TestRefactorize(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	a, _ := knnLLE(rng, 2500, 10)
	s, f := factorOrFatal(t, a, SymbolicOptions{Workers: 2}, -1e-4)
	for gen := 0; gen < 3; gen++ {
		// New values on the same pattern: scale and perturb the diagonal.
		b := &testCSR{n: a.n, rowPtr: a.rowPtr, colIdx: a.colIdx, val: make([]float64, len(a.val))}
		for p := range a.val {
			b.val[p] = a.val[p] * (1 + 0.5*rng.Float64())
		}
		for i := 0; i < a.n; i++ {
			for p := a.rowPtr[i]; p < a.rowPtr[i+1]; p++ {
				if a.colIdx[p] == i {
					b.val[p] += 2 // keeps the scaled matrix diagonally dominant enough to be SPD
				}
			}
		}
		shift := -1e-3 * float64(gen+1)
		if err := f.Factorize(context.Background(), b.val, shift); err != nil {
			t.Fatal(err)
		}
		rhs := randVec(rng, a.n)
		x := make([]float64, a.n)
		f.Solve(x, rhs)
		if r := relResidual(b, shift, x, rhs); r > residualTol {
			t.Fatalf("gen %d: residual %g", gen, r)
		}
		// A second Factor on the same Symbolic agrees.
		f2 := NewFactor(s)
		if err := f2.Factorize(context.Background(), b.val, shift); err != nil {
			t.Fatal(err)
		}
		x2 := make([]float64, a.n)
		f2.Solve(x2, rhs)
		for i := range x {
			if x[i] != x2[i] {
				t.Fatalf("gen %d: second factor differs at %d", gen, i)
			}
		}
	}
}

func TestWorkersAgree(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 14))
	a, _ := knnLLE(rng, 6000, 10) // large enough that the schedule splits the tree
	rhs := randVec(rng, a.n)
	var xs [][]float64
	for _, w := range []int{1, 2, 3, 7} {
		s, f := factorOrFatal(t, a, SymbolicOptions{Ordering: OrderingND, Workers: w}, -1e-5)
		if len(s.sched.top) == 0 {
			t.Fatalf("workers=%d: no tree split", w)
		}
		x := make([]float64, a.n)
		f.Solve(x, rhs)
		xs = append(xs, x)
		// The parallel solve applies every update in the sequential order: same bits.
		y := append([]float64(nil), rhs...)
		for k, o := range s.perm {
			f.y[k] = y[o]
		}
		f.forward(f.y)
		f.backward(f.y)
		for k, o := range s.perm {
			y[o] = f.y[k]
		}
		for i := range y {
			if y[i] != x[i] {
				t.Fatalf("workers=%d: parallel solve differs from the sequential one at %d", w, i)
			}
		}
	}
	// The schedule does not depend on the worker count, so neither do the bits.
	for k := 1; k < len(xs); k++ {
		for i := range xs[0] {
			if xs[k][i] != xs[0][i] {
				t.Fatalf("workers variant %d differs at %d: %g vs %g", k, i, xs[k][i], xs[0][i])
			}
		}
	}
}

func TestNotPositiveDefinite(t *testing.T) {
	rng := rand.New(rand.NewPCG(15, 16))
	// Diagonal matrix with one negative entry: the failing column is known exactly.
	n := 50
	var is, js []int
	var vs []float64
	for i := 0; i < n; i++ {
		v := 1.0
		if i == 17 {
			v = -3
		}
		is, js, vs = append(is, i), append(js, i), append(vs, v)
	}
	d := csrFromTriplets(n, is, js, vs, true)
	s, err := Analyze(context.Background(), n, d.rowPtr, d.colIdx, SymbolicOptions{})
	if err != nil {
		t.Fatal(err)
	}
	f := NewFactor(s)
	err = f.Factorize(context.Background(), d.val, 0)
	var npd *NotPositiveDefiniteError
	if !errors.As(err, &npd) || npd.Column != 17 || npd.Pivot != -3 {
		t.Fatalf("got %v, want column 17 pivot -3", err)
	}
	// An indefinite Laplacian (shift above its smallest eigenvalue 0), several orderings.
	a := gridLaplacian(40, 40, true)
	for _, o := range allOrderings {
		s, err := Analyze(context.Background(), a.n, a.rowPtr, a.colIdx, SymbolicOptions{Ordering: o, Workers: 2})
		if err != nil {
			t.Fatal(err)
		}
		f := NewFactor(s)
		err = f.Factorize(context.Background(), a.val, 0.5)
		if !errors.As(err, &npd) || npd.Column < 0 || npd.Column >= a.n || npd.Pivot > 0 {
			t.Fatalf("%v: got %v, want NotPositiveDefiniteError", o, err)
		}
		// The factor recovers after a failed factorization.
		if err := f.Factorize(context.Background(), a.val, -0.5); err != nil {
			t.Fatal(err)
		}
		b := randVec(rng, a.n)
		x := make([]float64, a.n)
		f.Solve(x, b)
		if r := relResidual(a, -0.5, x, b); r > residualTol {
			t.Fatalf("%v: residual after recovery %g", o, r)
		}
	}
}

func TestCancelledContext(t *testing.T) {
	rng := rand.New(rand.NewPCG(17, 18))
	// Large enough for the interrupted factorization below to take about 0.35 s on two cores
	// (at n = 20000, k = 10 it took 35 ms, which no latency bound can tell from an ignored
	// cancellation).
	a, _ := knnLLE(rng, 40000, 20)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Analyze(ctx, a.n, a.rowPtr, a.colIdx, SymbolicOptions{}); !errors.Is(err, context.Canceled) {
		t.Fatalf("Analyze on cancelled ctx: %v", err)
	}
	// The ordering itself stops (it checks every 4096 pivots), not only the steps after it.
	if _, err := amdOrder(ctx, buildGraph(a.n, a.rowPtr, a.colIdx)); !errors.Is(err, context.Canceled) {
		t.Fatalf("AMD on cancelled ctx: %v", err)
	}
	s, err := Analyze(context.Background(), a.n, a.rowPtr, a.colIdx, SymbolicOptions{Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	f := NewFactor(s)
	if err := f.Factorize(ctx, a.val, -1e-6); !errors.Is(err, context.Canceled) {
		t.Fatalf("Factorize on cancelled ctx: %v", err)
	}
	// Cancel a running factorization. The latency bound is calibrated in this process: an
	// uncancelled factorization of the same matrix takes full; the measured one is cancelled a
	// quarter of the way in, so an ignored cancellation would let it run about 3 full / 4 more,
	// and it must return context.Canceled within latency.Limit of that (a third, at least
	// 50 ms), in one of latency.Attempts calibrated attempts. Before, a 1 s bound on a 35 ms
	// factorization, which also accepted a nil error, could not fail on an ignored cancellation.
	latency.Within(t, func(int) (time.Duration, time.Duration, string) {
		start := time.Now()
		if err := f.Factorize(context.Background(), a.val, -1e-6); err != nil {
			t.Fatal(err)
		}
		full := time.Since(start)
		delay := full / 4
		limit := latency.Limit(t, full-delay)
		ctx2, cancel2 := context.WithCancel(context.Background())
		defer cancel2()
		at := make(chan time.Time, 1)
		timer := time.AfterFunc(delay, func() {
			at <- time.Now()
			cancel2()
		})
		err := f.Factorize(ctx2, a.val, -1e-6)
		ret := time.Now()
		if timer.Stop() {
			// Returned before the cancellation: three quarters faster than the calibration
			// (load dropped between the runs); nothing to measure.
			t.Skipf("Factorize returned (%v) before the cancellation %v in", err, delay)
		}
		el := ret.Sub(<-at)
		if err != nil && !errors.Is(err, context.Canceled) {
			t.Fatalf("interrupted Factorize: %v %v after the cancellation, want context.Canceled", err, el)
		}
		// nil: the factorization ran to its end after the cancellation, which passes only
		// within the limit (its last supernodes were under way: the measured run outpaced
		// the calibration); an ignored cancellation takes about three quarters of full.
		return el, limit, fmt.Sprintf("Factorize cancelled %v in (uncancelled %v)", delay, full)
	})
}

func TestAnalyzeErrors(t *testing.T) {
	ctx := context.Background()
	if _, err := Analyze(ctx, 2, []int{0, 1}, []int{0}, SymbolicOptions{}); err == nil {
		t.Fatal("short rowPtr accepted")
	}
	if _, err := Analyze(ctx, 2, []int{0, 1, 2}, []int{0, 2}, SymbolicOptions{}); err == nil {
		t.Fatal("out-of-range column accepted")
	}
	if _, err := Analyze(ctx, 2, []int{0, 1, 2}, []int{0, 1}, SymbolicOptions{Ordering: OrderingGeometricND}); err == nil {
		t.Fatal("geometric ND without coordinates accepted")
	}
	if _, err := Analyze(ctx, 2, []int{0, 1, 2}, []int{0, 1}, SymbolicOptions{Coords: []float64{1}, CoordDim: 2}); err == nil {
		t.Fatal("short Coords accepted")
	}
}

// TestPrefaulted checks the shared pre-touch of the factor storage at sizes around its chunk
// edges: take returns a zeroed slice of the requested length whichever goroutine touched it.
func TestPrefaulted(t *testing.T) {
	for _, size := range []int64{0, 1, prefaultChunk - 1, prefaultChunk, prefaultChunk + 1, 3*prefaultChunk + 5} {
		b := newPrefaulted(context.Background(), size).take()
		if int64(len(b)) != size {
			t.Fatalf("size %d: got length %d", size, len(b))
		}
		for i, v := range b {
			if v != 0 {
				t.Fatalf("size %d: element %d = %v, want 0", size, i, v)
			}
		}
	}
	// A cancelled context stops the spare goroutine; take still returns the whole buffer.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if b := newPrefaulted(ctx, 3*prefaultChunk+5).take(); len(b) != 3*prefaultChunk+5 {
		t.Fatalf("cancelled: got length %d", len(b))
	}
}

// TestCheckFactor checks that SymbolicOptions.CheckFactor sees the factor's stored entries
// before the factor exists and that its error ends Analyze.
func TestCheckFactor(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	a := randomSPD(rng, 300, 6, true)
	var seen int64
	s, err := Analyze(context.Background(), a.n, a.rowPtr, a.colIdx, SymbolicOptions{
		PrepareFactor: true, CheckFactor: func(nnzL int64) error { seen = nnzL; return nil }})
	if err != nil {
		t.Fatal(err)
	}
	if seen != s.NNZ() {
		t.Fatalf("CheckFactor saw %d stored entries, the analysis has %d", seen, s.NNZ())
	}
	tooBig := errors.New("too big")
	if _, err := Analyze(context.Background(), a.n, a.rowPtr, a.colIdx, SymbolicOptions{
		PrepareFactor: true, CheckFactor: func(int64) error { return tooBig }}); !errors.Is(err, tooBig) {
		t.Fatalf("Analyze returned %v, want the CheckFactor error", err)
	}
}

// TestSymmetricPattern checks that an analysis reading the neighbour lists from a full
// symmetric pattern (SymbolicOptions.Symmetric) equals the one from its own graph, and that a pattern
// with unequal triangles is rejected.
func TestSymmetricPattern(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 22))
	for trial := 0; trial < 10; trial++ {
		n := 1 + rng.IntN(400)
		a := randomSPD(rng, n, rng.IntN(10), true)
		ref, err := Analyze(context.Background(), n, a.rowPtr, a.colIdx, SymbolicOptions{})
		if err != nil {
			t.Fatal(err)
		}
		s, err := Analyze(context.Background(), n, a.rowPtr, a.colIdx, SymbolicOptions{Symmetric: true, PrepareFactor: true})
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(s.Perm(), ref.Perm()) || s.NNZ() != ref.NNZ() || s.Flops() != ref.Flops() ||
			!slices.Equal(s.sRows, ref.sRows) || !slices.Equal(s.colCnt, ref.colCnt) {
			t.Fatalf("n = %d: the analysis from the symmetric pattern differs from the graph's", n)
		}
		f := NewFactor(s)
		if err := f.Factorize(context.Background(), a.val, 0); err != nil {
			t.Fatal(err)
		}
	}
	low := randomSPD(rng, 50, 4, false) // lower triangle only
	if low.rowPtr[50] > 50 {
		if _, err := Analyze(context.Background(), 50, low.rowPtr, low.colIdx, SymbolicOptions{Symmetric: true}); !errors.Is(err, errPattern) {
			t.Fatalf("lower triangle with Symmetric: got %v, want a pattern error", err)
		}
	}
}

// TestNotPositiveDefiniteDeterministic: with several independent failing pivots, the error
// names the smallest failing column for every worker count and ordering (the independent parts
// of the elimination tree are all factored), where it used to name whichever worker failed
// first.
func TestNotPositiveDefiniteDeterministic(t *testing.T) {
	// 60 independent dense 5 x 5 blocks, diagonally dominant (4 on the diagonal, -0.5 off it),
	// except a diagonal entry of -1 in blocks 7, 23 and 41: each of those fails at exactly
	// that column (eliminating the others first only lowers it), and nothing else fails.
	const blocks, bs = 60, 5
	n := blocks * bs
	neg := map[int]bool{7*bs + 3: true, 23*bs + 1: true, 41*bs + 4: true}
	var is, js []int
	var vs []float64
	for b := 0; b < blocks; b++ {
		for i := b * bs; i < (b+1)*bs; i++ {
			for j := b * bs; j < (b+1)*bs; j++ {
				v := -0.5
				if i == j {
					v = 4
					if neg[i] {
						v = -1
					}
				}
				is, js, vs = append(is, i), append(js, j), append(vs, v)
			}
		}
	}
	a := csrFromTriplets(n, is, js, vs, true)
	for _, o := range allOrderings {
		for _, workers := range []int{1, 2, 3, 7} {
			s, err := Analyze(context.Background(), n, a.rowPtr, a.colIdx, SymbolicOptions{Ordering: o, Workers: workers})
			if err != nil {
				t.Fatal(err)
			}
			f := NewFactor(s)
			for rep := 0; rep < 3; rep++ {
				err = f.Factorize(context.Background(), a.val, 0)
				var npd *NotPositiveDefiniteError
				if !errors.As(err, &npd) || npd.Column != 7*bs+3 || !(npd.Pivot < 0) {
					t.Fatalf("%v, %d workers, run %d: got %v, want column %d", o, workers, rep, err, 7*bs+3)
				}
			}
		}
	}
}
