package bench

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"gonum.org/v1/gonum/mat"
)

func randDense(r *rand.Rand, n, p int) *mat.Dense {
	A := mat.NewDense(n, p, nil)
	for i := 0; i < n; i++ {
		for j := 0; j < p; j++ {
			A.Set(i, j, r.NormFloat64())
		}
	}
	return A
}

// gridDense has integer coordinates in {0, 1, 2}: many tied distances.
func gridDense(r *rand.Rand, n, p int) *mat.Dense {
	A := mat.NewDense(n, p, nil)
	for i := 0; i < n; i++ {
		for j := 0; j < p; j++ {
			A.Set(i, j, float64(r.IntN(3)))
		}
	}
	return A
}

// bruteOrder returns, for point i, all other points sorted by (distance, index).
func bruteOrder(A *mat.Dense, i int) []int {
	n, _ := A.Dims()
	d := make([]float64, n)
	for l := 0; l < n; l++ {
		var s mat.VecDense
		s.SubVec(A.RowView(l), A.RowView(i))
		d[l] = mat.Dot(&s, &s)
	}
	var order []int
	for l := 0; l < n; l++ {
		if l != i {
			order = append(order, l)
		}
	}
	sort.SliceStable(order, func(a, b int) bool { return d[order[a]] < d[order[b]] })
	return order
}

// brutePenalties returns the per-point trustworthiness and continuity penalties
// sum_{j in U_k(i)} (r(i,j) - k) and sum_{j in V_k(i)} (rhat(i,j) - k), straight from the
// definitions.
func brutePenalties(X, Y *mat.Dense, k int) (tp, cp []int) {
	n, _ := X.Dims()
	tp, cp = make([]int, n), make([]int, n)
	for i := 0; i < n; i++ {
		ox, oy := bruteOrder(X, i), bruteOrder(Y, i)
		rx, ry := make(map[int]int), make(map[int]int)
		for r, j := range ox {
			rx[j] = r + 1
		}
		for r, j := range oy {
			ry[j] = r + 1
		}
		for _, j := range oy[:k] {
			if rx[j] > k {
				tp[i] += rx[j] - k
			}
		}
		for _, j := range ox[:k] {
			if ry[j] > k {
				cp[i] += ry[j] - k
			}
		}
	}
	return tp, cp
}

func bruteTC(X, Y *mat.Dense, k int, queries []int) (float64, float64) {
	n, _ := X.Dims()
	tp, cp := brutePenalties(X, Y, k)
	var ts, cs int
	for _, i := range queries {
		ts += tp[i]
		cs += cp[i]
	}
	norm := 2 / (float64(len(queries)) * float64(k) * float64(2*n-3*k-1))
	return 1 - norm*float64(ts), 1 - norm*float64(cs)
}

func allIdx(n int) []int {
	q := make([]int, n)
	for i := range q {
		q[i] = i
	}
	return q
}

func TestTrustContinuityBruteForce(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for trial, c := range []struct {
		n, d, p, k int
		grid       bool
	}{
		{40, 3, 2, 1, false}, {60, 3, 2, 5, false}, {61, 5, 3, 10, false}, {50, 3, 2, 24, false},
		{60, 3, 2, 7, true}, {45, 4, 1, 6, true},
	} {
		var X, Y *mat.Dense
		if c.grid {
			X, Y = gridDense(r, c.n, c.d), gridDense(r, c.n, c.p)
		} else {
			X = randDense(r, c.n, c.d)
			// A noisy projection: partly faithful embedding.
			Y = mat.NewDense(c.n, c.p, nil)
			Y.Copy(X)
			Y.Add(Y, randDense(r, c.n, c.p))
		}
		wt, wc := bruteTC(X, Y, c.k, allIdx(c.n))
		for _, workers := range []int{1, 3} {
			gt, gc := TrustContinuity(X, Y, c.k, NeighborhoodOptions{Workers: workers})
			// 1e-14 (and below): penalties are exact integers, so T and C agree to an ulp of 1; one unit of penalty moves them by 2/(n k (2n-3k-1)) >= 3.6e-5.
			if math.Abs(gt-wt) > 1e-14 || math.Abs(gc-wc) > 1e-14 {
				t.Errorf("trial %d, workers %d: got T = %v, C = %v; brute force T = %v, C = %v", trial, workers, gt, gc, wt, wc)
			}
		}
		if gt, gc := Trustworthiness(X, Y, c.k), Continuity(X, Y, c.k); gt != wt && math.Abs(gt-wt) > 1e-14 || math.Abs(gc-wc) > 1e-14 {
			t.Errorf("trial %d: wrappers disagree", trial)
		}
		// Continuity is trustworthiness with the spaces exchanged.
		if ct, _ := TrustContinuity(Y, X, c.k, NeighborhoodOptions{}); math.Abs(ct-wc) > 1e-14 {
			t.Errorf("trial %d: T(Y, X) = %v, C(X, Y) = %v", trial, ct, wc)
		}
	}
}

func TestTrustContinuitySubsample(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	n, k, m := 80, 6, 25
	X := randDense(r, n, 3)
	Y := randDense(r, n, 2)
	opt := NeighborhoodOptions{Queries: m, Seed: 11}
	q := rand.New(rand.NewPCG(opt.Seed, subsampleStream)).Perm(n)[:m]
	wt, wc := bruteTC(X, Y, k, q)
	gt, gc := TrustContinuity(X, Y, k, opt)
	// 1e-14 (and below): exact integer penalties, as in TestTrustContinuityBruteForce.
	if math.Abs(gt-wt) > 1e-14 || math.Abs(gc-wc) > 1e-14 {
		t.Errorf("subsample: got %v %v, want %v %v", gt, gc, wt, wc)
	}
	opt.Workers = 2
	if gt2, gc2 := TrustContinuity(X, Y, k, opt); gt2 != gt || gc2 != gc {
		t.Error("subsample result depends on the worker count")
	}
	// Queries >= n is exact.
	et, ec := bruteTC(X, Y, k, allIdx(n))
	if gt, gc := TrustContinuity(X, Y, k, NeighborhoodOptions{Queries: 5 * n}); math.Abs(gt-et) > 1e-14 || math.Abs(gc-ec) > 1e-14 {
		t.Error("Queries > n is not exact")
	}
}

// countdownCtx is a context that is done (Err returns context.Canceled) after its first left
// Err calls. Only a single worker sees it: parallel.For hands it to fn unchanged then.
type countdownCtx struct {
	context.Context
	left atomic.Int64
}

func (c *countdownCtx) Err() error {
	if c.left.Add(-1) < 0 {
		return context.Canceled
	}
	return nil
}

// TestTrustContinuityContext: with a live context the values are TrustContinuity's; a done
// context stops the pass with its error and NaN, also between the query points of one chunk.
func TestTrustContinuityContext(t *testing.T) {
	r := rand.New(rand.NewPCG(41, 42))
	n, k := 40, 5 // two chunks of query points: 32 and 8
	X, Y := randDense(r, n, 3), randDense(r, n, 2)
	wt, wc := TrustContinuity(X, Y, k, NeighborhoodOptions{})
	gt, gc, err := TrustContinuityContext(context.Background(), X, Y, k, NeighborhoodOptions{Workers: 2})
	if err != nil || gt != wt || gc != wc {
		t.Errorf("live context: %v %v (%v), want %v %v", gt, gc, err, wt, wc)
	}
	done, cancel := context.WithCancel(context.Background())
	cancel()
	if gt, gc, err := TrustContinuityContext(done, X, Y, k, NeighborhoodOptions{}); !errors.Is(err, context.Canceled) || !math.IsNaN(gt) || !math.IsNaN(gc) {
		t.Errorf("cancelled context: %v %v (%v)", gt, gc, err)
	}
	// Done after 10 checks: the pool and the two chunk starts make only 3, so the pass must
	// also look between the query points of a chunk to notice.
	c := &countdownCtx{Context: context.Background()}
	c.left.Store(10)
	if _, _, err := TrustContinuityContext(c, X, Y, k, NeighborhoodOptions{Workers: 1}); !errors.Is(err, context.Canceled) {
		t.Errorf("context done within the first chunk: err = %v", err)
	}
}

func TestTrustworthinessExtremes(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	X := randDense(r, 300, 3)
	if tr, co := TrustContinuity(X, X, 10, NeighborhoodOptions{}); tr != 1 || co != 1 {
		t.Errorf("identical embedding: T = %v, C = %v", tr, co)
	}
	// A rotated, scaled, translated copy keeps every neighbourhood.
	Q := randomOrthogonal(r, 3, true)
	var Y mat.Dense
	Y.Mul(X, Q)
	Y.Scale(3, &Y)
	if tr := Trustworthiness(X, &Y, 10); tr != 1 {
		t.Errorf("rigid copy: T = %v", tr)
	}
	// A random embedding is about 0.5 (the expected value for random ranks).
	R := randDense(r, 300, 2)
	// 0.65: the standard error of T for random ranks at n = 300, k = 10 is ~0.006 (n k terms of sd n/sqrt(12); 0.0057 over 20 seeds), so 0.65 is > 20 of them above 0.5.
	if tr, co := TrustContinuity(X, R, 10, NeighborhoodOptions{}); tr > 0.65 || co > 0.65 {
		t.Errorf("random embedding: T = %v, C = %v", tr, co)
	}
	for _, k := range []int{0, 150} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("k = %d did not panic", k)
				}
			}()
			Trustworthiness(X, X, k)
		}()
	}
}

// TestTrustworthinessSwissRoll5000 checks speed and plausibility at n = 5000: the intrinsic
// coordinates are a near-perfect embedding, dropping the roll's depth axis is not.
func TestTrustworthinessSwissRoll5000(t *testing.T) {
	X, coords, err := Coordinates("swissroll", 5000, 0)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	tr, co := TrustContinuity(X, coords, 10, NeighborhoodOptions{})
	el := time.Since(start)
	// 0.99: (t, height) is a near-isometric chart of the roll (observed T = C = 0.996); a fold of a few neighbourhoods would cost more than 0.01.
	if tr < 0.99 || co < 0.99 {
		t.Errorf("intrinsic coordinates: T = %v, C = %v", tr, co)
	}
	flat := mat.DenseCopyOf(X.Slice(0, 5000, 0, 2)) // (x, y): folds the roll
	// 0.97: dropping z stacks the roll's layers onto each other (observed T = 0.82), far below the 0.99 of the chart.
	if tf := Trustworthiness(X, flat, 10); tf > 0.97 {
		t.Errorf("projection (x, y): T = %v, expected a clear loss", tf)
	}
	t.Logf("n = 5000: T = %.5f, C = %.5f in %v", tr, co, el)
}

func TestBruteForceKNN(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	for _, grid := range []bool{false, true} {
		var X *mat.Dense
		if grid {
			X = gridDense(r, 70, 2)
		} else {
			X = randDense(r, 70, 4)
		}
		k := 9
		for _, w := range []int{1, 3} {
			got := BruteForceKNN(X, k, w)
			for i := 0; i < 70; i++ {
				want := bruteOrder(X, i)[:k]
				for j := 0; j < k; j++ {
					if int(got[i*k+j]) != want[j] {
						t.Fatalf("grid %v, point %d: got %v, want %v", grid, i, got[i*k:(i+1)*k], want)
					}
				}
			}
		}
	}
}

func TestRanksSpearman(t *testing.T) {
	if got := Ranks([]float64{3, 1, 2, 2, 5, 2}); !slices.Equal(got, []float64{5, 1, 3, 3, 6, 3}) {
		t.Errorf("Ranks = %v", got)
	}
	// Hand computed: ranks of b are 1, 2, 3.5, 5, 3.5; r = 8 / sqrt(10 * 9.5).
	a := []float64{1, 2, 3, 4, 5}
	b := []float64{5, 6, 7, 8, 7}
	// 1e-15: about 9 ulps of the value 0.82 for 5-term sums and a square root (observed exact).
	if got, want := Spearman(a, b), 8/math.Sqrt(95); math.Abs(got-want) > 1e-15 {
		t.Errorf("Spearman = %v, want %v", got, want)
	}
	if got := Spearman(a, []float64{10, 9, 8, 7, -100}); got != -1 {
		t.Errorf("reversed order: %v", got)
	}
	if got := Spearman(a, []float64{1, 8, 27, 64, 125}); got != 1 {
		t.Errorf("monotone: %v", got)
	}
	if !math.IsNaN(Spearman(a, []float64{2, 2, 2, 2, 2})) {
		t.Error("constant input is not NaN")
	}
	// MaxAbsSpearman: column 1 is a decreasing function of the coordinate.
	r := rand.New(rand.NewPCG(9, 10))
	n := 200
	coord := make([]float64, n)
	Y := mat.NewDense(n, 3, nil)
	for i := range coord {
		coord[i] = r.Float64()
		Y.Set(i, 0, r.NormFloat64())
		Y.Set(i, 1, -math.Exp(3*coord[i]))
		Y.Set(i, 2, 4) // constant column: ignored
	}
	if got := MaxAbsSpearman(Y, coord); got != 1 {
		t.Errorf("MaxAbsSpearman = %v, want 1", got)
	}
	Y.Set(0, 1, 1e9) // break the order at one point
	// 0.9: moving one of 200 ranks to the end gives rho >= 1 - 6 (199^2 + 199) / (200 (200^2 - 1)) = 0.97.
	if got := MaxAbsSpearman(Y, coord); got >= 1 || got < 0.9 {
		t.Errorf("MaxAbsSpearman = %v, want slightly below 1", got)
	}
}

// randomOrthogonal returns a random p x p orthogonal matrix with determinant -1 when
// reflect is true and +1 otherwise.
func randomOrthogonal(r *rand.Rand, p int, reflect bool) *mat.Dense {
	var qr mat.QR
	qr.Factorize(randDense(r, p, p))
	var Q mat.Dense
	qr.QTo(&Q)
	if det := mat.Det(&Q); (det < 0) != reflect {
		for i := 0; i < p; i++ {
			Q.Set(i, 0, -Q.At(i, 0))
		}
	}
	return &Q
}

func TestProcrustes(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	n, p := 100, 3
	Y := randDense(r, n, p)
	Q := randomOrthogonal(r, p, true)
	if mat.Det(Q) > 0 {
		t.Fatal("test setup: Q is not a reflection")
	}
	shift := []float64{5, -2, 0.5}
	for _, scale := range []bool{true, false} {
		c := 1.0
		if scale {
			c = 2.5
		}
		ref := mat.NewDense(n, p, nil)
		ref.Mul(Y, Q)
		ref.Scale(c, ref)
		for i := 0; i < n; i++ {
			for j := 0; j < p; j++ {
				ref.Set(i, j, ref.At(i, j)+shift[j])
			}
		}
		aligned, R, s := Procrustes(ref, Y, scale)
		// 100-point sums round to ~n eps |entries|: 1.1e-14 for R and s (entries O(1); observed 1e-15), 1.7e-13 for aligned (entries <= ~15; observed 6e-15).
		if !mat.EqualApprox(R, Q, 1e-13) {
			t.Errorf("scale %v: R = %v, want %v", scale, mat.Formatted(R), mat.Formatted(Q))
		}
		if math.Abs(s-c) > 1e-13 {
			t.Errorf("scale %v: s = %v, want %v", scale, s, c)
		}
		if !mat.EqualApprox(aligned, ref, 1e-12) {
			t.Errorf("scale %v: aligned differs from ref", scale)
		}
		// 1e-25: a sum of 300 squared residuals of unit-norm data allows residuals of 2e-14 (~100 eps) each (observed 4e-31 in total).
		if d := ProcrustesDisparity(ref, Y); d > 1e-25 {
			t.Errorf("disparity of similar shapes = %v", d)
		}
	}
}

func TestProcrustesDisparity(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 14))
	n := 50
	A, B := randDense(r, n, 2), randDense(r, n, 2)
	d := ProcrustesDisparity(A, B)
	// Closed form for normalised, centred A and B: 1 - (nuclear norm of A^T B)^2.
	An, Bn := Centered(A), Centered(B)
	An.Scale(1/mat.Norm(An, 2), An)
	Bn.Scale(1/mat.Norm(Bn, 2), Bn)
	var M mat.Dense
	M.Mul(An.T(), Bn)
	var svd mat.SVD
	svd.Factorize(&M, mat.SVDNone)
	var nuc float64
	for _, v := range svd.Values(nil) {
		nuc += v
	}
	// 1e-14 (and the symmetry check): both routes round 50-point sums, ~n eps = 5.5e-15 relative (observed 1e-16 and 4e-16).
	if want := 1 - nuc*nuc; math.Abs(d-want) > 1e-14 || d <= 0 || d >= 1 {
		t.Errorf("disparity %v, closed form %v", d, want)
	}
	if d2 := ProcrustesDisparity(B, A); math.Abs(d-d2) > 1e-14 {
		t.Errorf("not symmetric: %v vs %v", d, d2)
	}
	// Hand example: a square against a rectangle elongated along x, (+-2, +-1).
	// Both centred; |square|^2 = 8, |rect|^2 = 20; A^T B = diag(8, 4) (unscaled), so the
	// nuclear norm after scaling is 12 / sqrt(8 * 20) and the disparity 1 - 144 / 160 = 0.1.
	sq := mat.NewDense(4, 2, []float64{1, 1, -1, 1, -1, -1, 1, -1})
	rect := mat.NewDense(4, 2, []float64{2, 1, -2, 1, -2, -1, 2, -1})
	// 1e-15: 4-point data, a few ulps of O(1) intermediates (observed 3e-17).
	if got := ProcrustesDisparity(sq, rect); math.Abs(got-0.1) > 1e-15 {
		t.Errorf("square vs rectangle: %v, want 0.1", got)
	}
	// Column padding: a 1-D embedding against 2-D points on a line.
	line := mat.NewDense(4, 2, []float64{0, 0, 1, 1, 2, 2, 3, 3})
	emb := mat.NewDense(4, 1, []float64{10, 11, 12, 13})
	// 1e-15: residuals of a few ulps, squared (observed 6e-32).
	if got := ProcrustesDisparity(line, emb); got > 1e-15 {
		t.Errorf("line vs its 1-D embedding: %v", got)
	}
	if got := ProcrustesDisparity(A, mat.NewDense(n, 2, nil)); got != 1 {
		t.Errorf("degenerate input: %v, want 1", got)
	}
}

func TestMaxPrincipalAngleSine(t *testing.T) {
	r := rand.New(rand.NewPCG(15, 16))
	n := 200
	A := randDense(r, n, 3)
	// Same space, other basis.
	var B mat.Dense
	B.Mul(A, randDense(r, 3, 3))
	// 1e-13 (and below): QR of 200 x 3 data leaves ~n eps cond = 200 * 1.1e-16 * cond(B) (a random 3 x 3 factor, cond ~10) (observed 3e-15 and 7e-16).
	if s := MaxPrincipalAngleSine(A, &B); s > 1e-13 {
		t.Errorf("same subspace: sine %v", s)
	}
	// B's space contains a 2-D subspace of A: still 0, in either order.
	var C mat.Dense
	C.Mul(A, randDense(r, 3, 2))
	if s1, s2 := MaxPrincipalAngleSine(A, &C), MaxPrincipalAngleSine(&C, A); s1 > 1e-13 || s2 > 1e-13 {
		t.Errorf("nested subspaces: %v, %v", s1, s2)
	}
	// Orthogonal spaces: coordinate axes.
	E := mat.NewDense(n, 2, nil)
	F := mat.NewDense(n, 2, nil)
	E.Set(0, 0, 1)
	E.Set(1, 1, 1)
	F.Set(2, 0, 3)
	F.Set(3, 1, -1)
	F.Set(0, 1, 0) // still orthogonal
	// 1e-15: orthogonal unit vectors, the sine is 1 to a few ulps (min(1, .) caps it).
	if s := MaxPrincipalAngleSine(E, F); math.Abs(s-1) > 1e-15 {
		t.Errorf("orthogonal: %v", s)
	}
	// A known angle, including a tiny one that 1 - cos^2 would lose.
	for _, th := range []float64{0.3, 1e-9} {
		G := mat.NewDense(n, 2, nil)
		G.Set(0, 0, 1)
		G.Set(1, 1, math.Cos(th))
		G.Set(5, 1, math.Sin(th))
		// Relative 1e-15 (~9 ulps) at th = 0.3; at th = 1e-9 absolute 1.1e-15, where 1 - cos^2 would round to 0 (observed error 6e-17 and 0).
		if s := MaxPrincipalAngleSine(E, G); math.Abs(s-math.Sin(th)) > 1e-15*math.Max(1, 1/th)*th+1e-16 {
			t.Errorf("angle %v: sine %v, want %v", th, s, math.Sin(th))
		}
	}
	// Dependent columns: NaN.
	D := mat.NewDense(n, 2, nil)
	for i := 0; i < n; i++ {
		D.Set(i, 0, A.At(i, 0))
		D.Set(i, 1, 2*A.At(i, 0))
	}
	if s := MaxPrincipalAngleSine(A, D); !math.IsNaN(s) {
		t.Errorf("rank-deficient: %v, want NaN", s)
	}
}

func TestCentered(t *testing.T) {
	A := mat.NewDense(3, 2, []float64{1, 10, 2, 20, 3, 60})
	C := Centered(A)
	if !mat.Equal(C, mat.NewDense(3, 2, []float64{-1, -20, 0, -10, 1, 30})) {
		t.Errorf("Centered = %v", mat.Formatted(C))
	}
	if A.At(0, 0) != 1 {
		t.Error("Centered modified its input")
	}
}

func TestReconstructionCost(t *testing.T) {
	r := rand.New(rand.NewPCG(17, 18))
	n, p, k := 9000, 2, 4 // more than one chunk
	Y := randDense(r, n, p)
	nbr := make([]int32, n*k)
	w := make([]float64, n*k)
	for i := range nbr {
		nbr[i] = int32(r.IntN(n))
		w[i] = r.NormFloat64()
	}
	var want float64
	for i := 0; i < n; i++ {
		for d := 0; d < p; d++ {
			e := Y.At(i, d)
			for j := 0; j < k; j++ {
				e -= w[i*k+j] * Y.At(int(nbr[i*k+j]), d)
			}
			want += e * e
		}
	}
	got, err := ReconstructionCost(Y, nbr, w, k)
	// 1e-10: the same 18000 positive terms summed in another grouping (4096-row chunks) differ
	// by at most about 2 n p eps = 4e-12 relative.
	if err != nil || math.Abs(got-want) > 1e-10*want {
		t.Errorf("cost %v (%v), want %v", got, err, want)
	}
	// The chunked sum does not depend on the number of CPUs: the same bits on one and on three.
	prev := runtime.GOMAXPROCS(1)
	one, _ := ReconstructionCost(Y, nbr, w, k)
	runtime.GOMAXPROCS(3)
	three, _ := ReconstructionCost(Y, nbr, w, k)
	runtime.GOMAXPROCS(prev)
	if one != got || three != got {
		t.Errorf("cost %v with 1 CPU, %v with 3, %v with %d", one, three, got, prev)
	}
	// An explicit worker count (AssessContext passes Neighborhood.Workers): the same bits.
	for _, wk := range []int{1, 2, 5} {
		if c, _ := reconstructionCost(Y, nbr, w, k, wk); c != got {
			t.Errorf("cost %v with %d workers, %v by default", c, wk, got)
		}
	}
	// Exact reconstructions cost nothing: points on a line, inner points the mean of their
	// two neighbours, end points extrapolated from the next two.
	L := mat.NewDense(5, 1, []float64{0, 1, 2, 3, 4})
	nb := []int32{1, 2, 0, 2, 1, 3, 2, 4, 3, 2}
	ww := []float64{2, -1, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 2, -1}
	if got, err := ReconstructionCost(L, nb, ww, 2); got != 0 || err != nil {
		t.Errorf("exact reconstruction costs %v (%v)", got, err)
	}
	// A neighbour index outside [0, n) is bad data: an error naming it, and NaN.
	for _, bad := range []int32{5, -1} {
		nb[3] = bad
		got, err := ReconstructionCost(L, nb, ww, 2)
		if err == nil || !strings.Contains(err.Error(), "out of range") || !math.IsNaN(got) {
			t.Errorf("neighbour %d: cost %v, err %v", bad, got, err)
		}
	}
	// Mismatched lengths are a programmer error: a panic.
	func() {
		defer func() {
			if recover() == nil {
				t.Error("k = 3 with 10 neighbours did not panic")
			}
		}()
		ReconstructionCost(L, nb, ww, 3)
	}()
}

func TestPercentList(t *testing.T) {
	if got := PercentList([]float64{0.3, 0.314, 0.336}); got != "30%, 31%, 34%" {
		t.Errorf("PercentList = %q, want %q", got, "30%, 31%, 34%")
	}
	if got := PercentList(nil); got != "" {
		t.Errorf("PercentList(nil) = %q, want empty", got)
	}
}

// TestMetricsNonFinite: a NaN or infinite value has no rank and no distance; the metrics are
// NaN instead of plausible finite values (trustworthiness 0.35 and continuity 0.58 for one
// NaN in Y, Spearman 0.886 for [1 NaN 3 2 5 4], before session 32).
func TestMetricsNonFinite(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	X, Y := randDense(r, 20, 3), randDense(r, 20, 2)
	Y.Set(4, 1, math.NaN())
	if tr, co := TrustContinuity(X, Y, 4, NeighborhoodOptions{}); !math.IsNaN(tr) || !math.IsNaN(co) {
		t.Errorf("NaN in Y: trustworthiness %v, continuity %v", tr, co)
	}
	X.Set(2, 0, math.Inf(1))
	Y.Set(4, 1, 0)
	if tr, co := TrustContinuity(X, Y, 4, NeighborhoodOptions{}); !math.IsNaN(tr) || !math.IsNaN(co) {
		t.Errorf("Inf in X: trustworthiness %v, continuity %v", tr, co)
	}
	if s := Spearman([]float64{1, math.NaN(), 3, 2, 5, 4}, []float64{1, 2, 3, 4, 5, 6}); !math.IsNaN(s) {
		t.Errorf("Spearman with a NaN: %v", s)
	}
	coord := make([]float64, 20)
	for i := range coord {
		coord[i] = float64(i)
	}
	Y.Set(7, 0, math.NaN())
	if s := MaxAbsSpearman(Y, coord); !math.IsNaN(s) {
		t.Errorf("MaxAbsSpearman with a NaN in Y: %v", s)
	}
}
