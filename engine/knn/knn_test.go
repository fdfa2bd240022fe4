package knn

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	_ "glle/cgo" // registers OpenBLAS (or gonum under purego) as the kernels backend
	"glle/internal/latency"
	"glle/kernels"
)

// oracleRanks returns, for each query row, every training row sorted by (squared distance,
// index), with distances as plain sums in index order of (a-b)^2 (the self row is dropped
// when self is set). It is a linear scan with no cleverness.
func oracleRanks(train []float64, n, d int, q []float64, m int, self bool) ([][]int32, [][]float64) {
	return oracleTop(train, n, d, q, m, self, n)
}

// oracleTop is oracleRanks truncated to the first keep ranks of each row.
func oracleTop(train []float64, n, d int, q []float64, m int, self bool, keep int) ([][]int32, [][]float64) {
	type pair struct {
		dist float64
		j    int32
	}
	idx := make([][]int32, m)
	dist := make([][]float64, m)
	buf := make([]pair, 0, n)
	for i := 0; i < m; i++ {
		buf = buf[:0]
		for j := 0; j < n; j++ {
			if self && i == j {
				continue
			}
			s := 0.0
			for c := 0; c < d; c++ {
				t := q[i*d+c] - train[j*d+c]
				s += float64(t * t)
			}
			buf = append(buf, pair{s, int32(j)})
		}
		less := func(a, b pair) bool { return a.dist < b.dist || (a.dist == b.dist && a.j < b.j) }
		if keep >= len(buf) {
			slices.SortFunc(buf, func(a, b pair) int {
				if c := cmp.Compare(a.dist, b.dist); c != 0 {
					return c
				}
				return cmp.Compare(a.j, b.j)
			})
		} else {
			// Selection sort of the first keep ranks.
			for p := 0; p < keep; p++ {
				best := p
				for r := p + 1; r < len(buf); r++ {
					if less(buf[r], buf[best]) {
						best = r
					}
				}
				buf[p], buf[best] = buf[best], buf[p]
			}
			buf = buf[:keep]
		}
		idx[i] = make([]int32, len(buf))
		dist[i] = make([]float64, len(buf))
		for p, v := range buf {
			idx[i][p], dist[i][p] = v.j, v.dist
		}
	}
	return idx, dist
}

func checkAgainst(t *testing.T, name string, k int, idx []int32, dist []float64, oi [][]int32, od [][]float64) {
	t.Helper()
	if len(idx) != len(oi)*k || len(dist) != len(oi)*k {
		t.Fatalf("%s: result lengths %d/%d, want %d", name, len(idx), len(dist), len(oi)*k)
	}
	bad := 0
	for i := range oi {
		for p := 0; p < k; p++ {
			gi, gd := idx[i*k+p], dist[i*k+p]
			if gi != oi[i][p] || math.Float64bits(gd) != math.Float64bits(od[i][p]) {
				if bad < 5 {
					t.Errorf("%s: row %d rank %d: got (%d, %v), want (%d, %v)", name, i, p, gi, gd, oi[i][p], od[i][p])
				}
				bad++
			}
		}
	}
	if bad > 0 {
		t.Fatalf("%s: %d mismatches", name, bad)
	}
}

func randData(rng *rand.Rand, n, d int) []float64 {
	x := make([]float64, n*d)
	for i := range x {
		x[i] = rng.NormFloat64()
	}
	return x
}

func ksFor(n int) []int {
	var ks []int
	for _, k := range []int{1, 5, 10, n - 1} {
		if k >= 1 && k < n && !slices.Contains(ks, k) {
			ks = append(ks, k)
		}
	}
	return ks
}

var methods = []Method{KDTree, Brute}

func TestGraphOracle(t *testing.T) {
	t.Logf("backend %s", kernels.Current().Name())
	ctx := context.Background()
	for _, n := range []int{2, 3, 17, 100, 1000, 3000} {
		for _, d := range []int{1, 2, 3, 5, 16, 17, 64} {
			if n == 3000 && (d == 5 || d == 16) {
				continue // keep the suite fast; the other d cover both sides of Auto
			}
			rng := rand.New(rand.NewPCG(uint64(n), uint64(d)))
			x := randData(rng, n, d)
			keep := n
			if n == 3000 {
				keep = 10
			}
			oi, od := oracleTop(x, n, d, x, n, true, keep)
			for _, k := range ksFor(n) {
				if k > keep {
					continue // k = n-1 is O(n^2 log n) per method; n <= 1000 covers it
				}
				for _, me := range methods {
					idx, dist, err := Graph(ctx, x, n, d, k, Options{Method: me, Workers: 2})
					if err != nil {
						t.Fatal(err)
					}
					checkAgainst(t, fmt.Sprintf("n=%d d=%d k=%d %v", n, d, k, me), k, idx, dist, oi, od)
				}
			}
		}
	}
}

// tieData builds data with many exact distance ties and duplicated rows: small integer
// coordinates, with a block of repeated rows.
func tieData(rng *rand.Rand, n, d, levels int) []float64 {
	x := make([]float64, n*d)
	for i := range x {
		x[i] = float64(rng.IntN(levels))
	}
	// Duplicate every fifth row of the first half into the second half.
	for i := n / 2; i < n && n >= 2; i += 5 {
		src := rng.IntN(n / 2)
		copy(x[i*d:i*d+d], x[src*d:src*d+d])
	}
	return x
}

func TestGraphTiesAndDuplicates(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct{ n, d, levels int }{
		{200, 1, 4}, {500, 2, 5}, {1000, 3, 4}, {300, 3, 1}, {600, 5, 3}, {700, 17, 2}, {400, 64, 2},
	} {
		rng := rand.New(rand.NewPCG(7, uint64(tc.n*100+tc.d)))
		x := tieData(rng, tc.n, tc.d, tc.levels)
		oi, od := oracleRanks(x, tc.n, tc.d, x, tc.n, true)
		for _, k := range []int{1, 4, 10, 37} {
			for _, me := range methods {
				for _, w := range []int{1, 3} {
					idx, dist, err := Graph(ctx, x, tc.n, tc.d, k, Options{Method: me, Workers: w})
					if err != nil {
						t.Fatal(err)
					}
					checkAgainst(t, fmt.Sprintf("ties n=%d d=%d lv=%d k=%d %v w=%d", tc.n, tc.d, tc.levels, k, me, w), k, idx, dist, oi, od)
				}
			}
		}
	}
}

// TestGraphOffsetAndScale uses coordinates far from the origin with tiny spread, where
// ||a||^2 + ||b||^2 - 2a.b loses most digits without centring, and a grid so distances tie.
// "tiny" (1e-170) underflows every distance to 0 and "huge" (1e200) sends the brute force to
// the k-d tree (norms beyond 1e290); 1e-150 and 1e140 keep the distances in range and the
// brute force on its GEMM path (session 31 review).
func TestGraphOffsetAndScale(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name       string
		off, scale float64
	}{{"offset1e8", 1e8, 1e-3}, {"offset-1e12", -1e12, 1}, {"tiny", 0, 1e-170}, {"huge", 0, 1e200}, {"mixed", 3, 1e5},
		{"small", 0, 1e-150}, {"large", 0, 1e140}} {
		n, d := 600, 20
		rng := rand.New(rand.NewPCG(11, 12))
		x := tieData(rng, n, d, 3)
		for i := range x {
			x[i] = tc.off + x[i]*tc.scale
			if tc.name == "mixed" && i%d == 0 {
				x[i] = rng.NormFloat64() * 1e-6
			}
		}
		oi, od := oracleRanks(x, n, d, x, n, true)
		for _, me := range methods {
			idx, dist, err := Graph(ctx, x, n, d, 12, Options{Method: me})
			if err != nil {
				t.Fatal(err)
			}
			checkAgainst(t, tc.name+" "+me.String(), 12, idx, dist, oi, od)
		}
	}
}

// TestBruteFarGroups: two groups 1e9 apart with a spread of 1e-7, where the GEMM bounds
// cannot prune (the norms are 1e18 times the distances), and rows repeated many times, where
// every copy ties. The result must stay exact, and each query row must keep O(k + block)
// candidates, not O(n): before session 31 the far groups took 355 MB at n = 20000, d = 17
// (normal data 16 MB); 45 MB since.
func TestBruteFarGroups(t *testing.T) {
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(8, 8))
	for _, mode := range []string{"far", "copies"} {
		for _, n := range []int{2500, 20000} {
			if n > 2500 && testing.Short() {
				continue // about 4 s, far more under the race detector
			}
			const d, k = 17, 10
			x := make([]float64, n*d)
			for i := 0; i < n; i++ {
				for j := 0; j < d; j++ {
					switch {
					case mode == "copies":
						x[i*d+j] = float64((i % 4) * j)
					case i%2 == 0:
						x[i*d+j] = 1e-7 * rng.NormFloat64()
					default:
						x[i*d+j] = 1e9 + 1e-7*rng.NormFloat64()
					}
				}
			}
			var ms0, ms1 runtime.MemStats
			runtime.ReadMemStats(&ms0)
			idx, dist, err := Graph(ctx, x, n, d, k, Options{Method: Brute, Workers: 2})
			if err != nil {
				t.Fatal(err)
			}
			runtime.ReadMemStats(&ms1)
			if n <= 2500 {
				oi, od := oracleRanks(x, n, d, x, n, true)
				checkAgainst(t, fmt.Sprintf("%s n=%d", mode, n), k, idx, dist, oi, od)
				continue
			}
			// Per worker: 256 rows x (2048 columns + 2k + 64) candidates of 16 bytes, grown by
			// doubling, plus the centred copy and the GEMM block: about 45 MB in all here; the
			// unbounded lists took 355 MB.
			if a := ms1.TotalAlloc - ms0.TotalAlloc; a > 120<<20 {
				t.Errorf("%s n=%d: %d MB allocated, want O(k + block) candidates per row", mode, n, a>>20)
			}
		}
	}
}

func TestWorkersIdentical(t *testing.T) {
	ctx := context.Background()
	for _, d := range []int{2, 3, 8, 24} {
		rng := rand.New(rand.NewPCG(3, uint64(d)))
		n := 30000
		if d > 3 {
			n = 3000
		}
		x := randData(rng, n, d)
		for i := 0; i < n*d; i++ { // some ties
			if i%7 == 0 {
				x[i] = math.Round(x[i])
			}
		}
		for _, me := range methods {
			if me == Brute && n > 5000 {
				continue
			}
			ref, refD, err := Graph(ctx, x, n, d, 10, Options{Method: me, Workers: 1})
			if err != nil {
				t.Fatal(err)
			}
			for _, w := range []int{2, 3, 7} {
				idx, dist, err := Graph(ctx, x, n, d, 10, Options{Method: me, Workers: w})
				if err != nil {
					t.Fatal(err)
				}
				if !slices.Equal(idx, ref) || !slices.Equal(dist, refD) {
					t.Fatalf("d=%d %v: workers=%d differs from workers=1", d, me, w)
				}
			}
		}
	}
}

func TestQueryOracle(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct{ n, m, d int }{{1, 5, 3}, {17, 40, 2}, {500, 300, 3}, {1000, 777, 5}, {800, 250, 17}, {300, 200, 64}} {
		rng := rand.New(rand.NewPCG(5, uint64(tc.n+tc.d)))
		train := tieData(rng, tc.n, tc.d, 6)
		q := tieData(rng, tc.m, tc.d, 6)
		for i := 0; i < tc.m; i += 3 { // some queries coincide with training rows
			j := rng.IntN(tc.n)
			copy(q[i*tc.d:i*tc.d+tc.d], train[j*tc.d:j*tc.d+tc.d])
		}
		for i := 1; i < tc.m; i += 3 { // some off the grid
			q[i*tc.d] += rng.Float64()
		}
		oi, od := oracleRanks(train, tc.n, tc.d, q, tc.m, false)
		for _, k := range []int{1, 7, tc.n} {
			if k > tc.n {
				continue
			}
			for _, me := range append(methods, Auto) {
				for _, w := range []int{1, 2, 7} {
					idx, dist, err := Query(ctx, train, tc.n, tc.d, q, tc.m, k, Options{Method: me, Workers: w})
					if err != nil {
						t.Fatal(err)
					}
					checkAgainst(t, fmt.Sprintf("query n=%d m=%d d=%d k=%d %v w=%d", tc.n, tc.m, tc.d, k, me, w), k, idx, dist, oi, od)
				}
			}
		}
	}
	idx, dist, err := Query(ctx, []float64{1, 2}, 1, 2, nil, 0, 1, Options{})
	if err != nil || len(idx) != 0 || len(dist) != 0 {
		t.Fatalf("m=0: %v %v %v", idx, dist, err)
	}
}

func TestComponents(t *testing.T) {
	// Two triangles {0,2,4} and {1,3,5}, plus 6 linked to 5 only from 5's side.
	idx := []int32{
		2, 4, // 0
		3, 5, // 1
		4, 0, // 2
		1, 5, // 3
		0, 2, // 4
		6, 1, // 5
		5, 5, // 6
	}
	count, label := Components(7, 2, idx)
	if want := []int32{0, 1, 0, 1, 0, 1, 1}; count != 2 || !slices.Equal(label, want) {
		t.Fatalf("got %d %v, want 2 %v", count, label, want)
	}
	// Directed-only edge: 3 -> 0 joins 0's component with 3 (symmetrized).
	idx = []int32{1, 0, 2, 0} // k=1, n=4: 0->1, 1->0, 2->2 (self), 3->0
	count, label = Components(4, 1, idx)
	if want := []int32{0, 0, 1, 0}; count != 2 || !slices.Equal(label, want) {
		t.Fatalf("got %d %v, want 2 %v", count, label, want)
	}
	// Chain in reverse order: one component.
	n := 1000
	idx = make([]int32, n)
	for i := range idx {
		idx[i] = int32(max(i-1, 0))
	}
	if count, _ = Components(n, 1, idx); count != 1 {
		t.Fatalf("chain: %d components", count)
	}
	// A kNN graph of two far-apart clusters.
	rng := rand.New(rand.NewPCG(1, 2))
	x := randData(rng, 400, 3)
	for i := 200 * 3; i < len(x); i++ {
		x[i] += 100
	}
	g, _, err := Graph(context.Background(), x, 400, 3, 5, Options{})
	if err != nil {
		t.Fatal(err)
	}
	count, label = Components(400, 5, g)
	if count != 2 || label[0] != 0 || label[199] != 0 || label[200] != 1 || label[399] != 1 {
		t.Fatalf("clusters: %d components, labels %v...", count, label[195:205])
	}
	func() {
		defer func() {
			if recover() == nil {
				t.Fatal("no panic on bad index")
			}
		}()
		Components(2, 1, []int32{1, 2})
	}()
}

func TestErrors(t *testing.T) {
	ctx := context.Background()
	x := []float64{0, 0, 1, 0, 0, 1}
	for _, tc := range []struct {
		name    string
		x       []float64
		n, d, k int
		opts    Options
		want    string
	}{
		{"k0", x, 3, 2, 0, Options{}, "k=0"},
		{"kn", x, 3, 2, 3, Options{}, "k=3"},
		{"d0", x, 3, 0, 1, Options{}, "d=0"},
		{"len", x[:5], 3, 2, 1, Options{}, "len(x)"},
		{"n1", x[:2], 1, 2, 1, Options{}, "n=1"},
		{"nan", []float64{0, 0, 1, math.NaN(), 0, 1}, 3, 2, 1, Options{}, "row 1"},
		{"inf", []float64{0, 0, 1, 0, math.Inf(-1), 1}, 3, 2, 1, Options{Method: Brute}, "row 2"},
		{"method", x, 3, 2, 1, Options{Method: 9}, "method"},
	} {
		_, _, err := Graph(ctx, tc.x, tc.n, tc.d, tc.k, tc.opts)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err %v, want mention of %q", tc.name, err, tc.want)
		}
	}
	q := []float64{0, 0, math.NaN(), 1}
	if _, _, err := Query(ctx, x, 3, 2, q, 2, 1, Options{}); err == nil || !strings.Contains(err.Error(), "row 1 of q") {
		t.Errorf("query NaN: %v", err)
	}
	if _, _, err := Query(ctx, x, 3, 2, q[:2], 1, 4, Options{}); err == nil {
		t.Error("query k > n accepted")
	}
	if _, _, err := Query(ctx, x, 3, 2, q[:3], 1, 1, Options{}); err == nil {
		t.Error("query bad len(q) accepted")
	}
}

func TestCancellation(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 9))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	x := randData(rng, 1000, 3)
	for _, me := range methods {
		if _, _, err := Graph(ctx, x, 1000, 3, 5, Options{Method: me}); !errors.Is(err, context.Canceled) {
			t.Fatalf("%v pre-cancelled: %v", me, err)
		}
	}
	// Cancel in the middle of long calls. The latency bound is calibrated in this process: an
	// uncancelled call of the same job takes full; the measured call is cancelled a quarter of
	// the way in, so an ignored cancellation would let it run about 3 full / 4 more, and it must
	// return within latency.Limit of that (a third, at least 50 ms), in one of
	// latency.Attempts calibrated attempts. The jobs take about 0.7 s (k-d tree) and 0.9 s
	// (brute force) on two cores.
	for _, tc := range []struct {
		n, d int
		me   Method
	}{{400000, 3, KDTree}, {15000, 64, Brute}} {
		t.Run(tc.me.String(), func(t *testing.T) {
			x := randData(rng, tc.n, tc.d)
			latency.Within(t, func(int) (time.Duration, time.Duration, string) {
				start := time.Now()
				if _, _, err := Graph(context.Background(), x, tc.n, tc.d, 10, Options{Method: tc.me}); err != nil {
					t.Fatal(err)
				}
				full := time.Since(start)
				delay := full / 4
				limit := latency.Limit(t, full-delay)
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				at := make(chan time.Time, 1)
				timer := time.AfterFunc(delay, func() {
					at <- time.Now()
					cancel()
				})
				_, _, err := Graph(ctx, x, tc.n, tc.d, 10, Options{Method: tc.me})
				ret := time.Now()
				if timer.Stop() {
					// Graph returned before the cancellation: three quarters faster than the
					// calibration (load dropped between the runs); nothing to measure.
					t.Skipf("the search finished (%v) before the cancellation %v in", err, delay)
				}
				el := ret.Sub(<-at)
				if err != nil && !errors.Is(err, context.Canceled) {
					t.Fatalf("err %v %v after the cancellation, want context.Canceled", err, el)
				}
				// nil: the search ran to its end after the cancellation, which passes only
				// within the limit (the measured run outpaced the calibration); an ignored
				// cancellation takes about three quarters of full.
				return el, limit, fmt.Sprintf("%v n=%d d=%d cancelled %v in (uncancelled %v)", tc.me, tc.n, tc.d, delay, full)
			})
		})
	}
}

// TestBruteBlockEdges runs the brute-force search with training and query counts at and around
// its block sizes (bruteCols training rows, bruteRows query rows per GEMM block), where a
// block's last row or column, or a block of one row or column, is easy to get wrong, against
// the linear-scan oracle. Graph (self mode) also puts the skipped diagonal on block boundaries.
func TestBruteBlockEdges(t *testing.T) {
	ctx := context.Background()
	const d = 3
	edge := func(b int) []int { return []int{b - 1, b, b + 1} }
	trains := append(edge(bruteCols), 2*bruteCols)
	queries := append(edge(bruteRows), 2*bruteRows+1)
	rng := rand.New(rand.NewPCG(11, 13))
	for _, n := range trains {
		train := randData(rng, n, d)
		for _, m := range queries {
			q := randData(rng, m, d)
			for _, k := range []int{1, 10} {
				oi, od := oracleTop(train, n, d, q, m, false, k)
				idx, dist, err := Query(ctx, train, n, d, q, m, k, Options{Method: Brute, Workers: 2})
				if err != nil {
					t.Fatal(err)
				}
				checkAgainst(t, fmt.Sprintf("query n=%d m=%d k=%d", n, m, k), k, idx, dist, oi, od)
			}
		}
	}
	for _, n := range append(edge(bruteRows), edge(bruteCols)...) {
		x := randData(rng, n, d)
		const k = 10
		oi, od := oracleTop(x, n, d, x, n, true, k)
		idx, dist, err := Graph(ctx, x, n, d, k, Options{Method: Brute, Workers: 2})
		if err != nil {
			t.Fatal(err)
		}
		checkAgainst(t, fmt.Sprintf("graph n=%d", n), k, idx, dist, oi, od)
	}
}

// TestKDTreeQueryAllocatesNothing pins what BenchmarkKDTree/query reports: after newSearcher,
// a query (search plus sortTo) allocates nothing, for the unrolled leaf scans (d = 2, 3), the
// general one (d = 8), the sorted-array (k <= sortedMax) and heap (k > sortedMax) top-k, with
// and without a self row. The answers are checked against the linear-scan oracle.
func TestKDTreeQueryAllocatesNothing(t *testing.T) {
	ctx := context.Background()
	const n, m = 1000, 200
	for _, d := range []int{2, 3, 8} {
		rng := rand.New(rand.NewPCG(17, uint64(d)))
		x := randData(rng, n, d)
		q := randData(rng, m, d)
		tr, err := buildTree(ctx, x, n, d, 1)
		if err != nil {
			t.Fatal(err)
		}
		for _, k := range []int{10, sortedMax + 1} {
			s := tr.newSearcher(k)
			selfIdx, selfDist := make([]int32, n*k), make([]float64, n*k)
			qIdx, qDist := make([]int32, m*k), make([]float64, m*k)
			// One pass over every point per measured run: AllocsPerRun divides the count by
			// the runs in integers, so a run of one pass reports every allocation of the pass.
			allocs := testing.AllocsPerRun(1, func() {
				for p := 0; p < n; p++ {
					s.run(tr.pts[p*d:p*d+d], int32(p))
					r := int(tr.perm[p])
					s.h.sortTo(selfIdx[r*k:r*k+k], selfDist[r*k:r*k+k])
				}
				for i := 0; i < m; i++ {
					s.run(q[i*d:i*d+d], -1)
					s.h.sortTo(qIdx[i*k:i*k+k], qDist[i*k:i*k+k])
				}
			})
			if allocs != 0 {
				t.Errorf("d=%d k=%d: %v allocations in one pass of %d queries", d, k, allocs, n+m)
			}
			oi, od := oracleTop(x, n, d, x, n, true, k)
			checkAgainst(t, fmt.Sprintf("self d=%d k=%d", d, k), k, selfIdx, selfDist, oi, od)
			oi, od = oracleTop(x, n, d, q, m, false, k)
			checkAgainst(t, fmt.Sprintf("query d=%d k=%d", d, k), k, qIdx, qDist, oi, od)
		}
	}
}

// TestIndexOracle queries one Index many times, with batches on both sides of the k-d
// query's switch from the counting sort to a comparison sort (m < n/16), concurrently, and
// checks every answer against the linear scan.
func TestIndexOracle(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct{ n, d int }{{2000, 3}, {700, 20}} {
		rng := rand.New(rand.NewPCG(11, uint64(tc.n)))
		train := tieData(rng, tc.n, tc.d, 6)
		for _, me := range append(methods, Auto) {
			ix, err := NewIndex(ctx, train, tc.n, tc.d, Options{Method: me, Workers: 2})
			if err != nil {
				t.Fatal(err)
			}
			if ix.N() != tc.n || ix.D() != tc.d {
				t.Fatalf("index shape %dx%d, want %dx%d", ix.N(), ix.D(), tc.n, tc.d)
			}
			ms := []int{1, 7, tc.n/16 - 1, tc.n / 16, 400}
			errs := make(chan error, len(ms))
			for c, m := range ms {
				go func() {
					r := rand.New(rand.NewPCG(12, uint64(c)))
					q := tieData(r, m, tc.d, 6)
					if m > 2 { // one query on a training row
						copy(q[:tc.d], train[5*tc.d:6*tc.d])
					}
					const k = 10
					idx, dist := make([]int32, m*k), make([]float64, m*k)
					for _, w := range []int{1, 2, 5} {
						if err := ix.QueryTo(ctx, idx, dist, q, m, k, w); err != nil {
							errs <- err
							return
						}
						oi, od := oracleTop(train, tc.n, tc.d, q, m, false, k)
						for i := range oi {
							for p := 0; p < k; p++ {
								if idx[i*k+p] != oi[i][p] || math.Float64bits(dist[i*k+p]) != math.Float64bits(od[i][p]) {
									errs <- fmt.Errorf("%v n=%d m=%d w=%d: row %d rank %d: got (%d, %v), want (%d, %v)",
										me, tc.n, m, w, i, p, idx[i*k+p], dist[i*k+p], oi[i][p], od[i][p])
									return
								}
							}
						}
					}
					errs <- nil
				}()
			}
			for range ms {
				if err := <-errs; err != nil {
					t.Error(err)
				}
			}
		}
	}
}

func TestIndexErrors(t *testing.T) {
	ctx := context.Background()
	train := []float64{0, 0, 1, 0, 0, 1}
	ix, err := NewIndex(ctx, train, 3, 2, Options{})
	if err != nil {
		t.Fatal(err)
	}
	idx, dist := make([]int32, 2), make([]float64, 2)
	for _, tc := range []struct {
		name string
		err  error
		want string
	}{
		{"short dst", ix.QueryTo(ctx, idx[:1], dist, []float64{0, 0}, 1, 2, 1), "len(idx)=1"},
		{"k too large", ix.QueryTo(ctx, idx, dist, []float64{0, 0}, 1, 4, 1), "k=4 out of range"},
		{"bad q length", ix.QueryTo(ctx, idx, dist, []float64{0}, 1, 2, 1), "len(q)=1"},
		{"NaN query", ix.QueryTo(ctx, idx, dist, []float64{math.NaN(), 0}, 1, 2, 1), "non-finite"},
	} {
		if tc.err == nil || !strings.Contains(tc.err.Error(), tc.want) {
			t.Errorf("%s: error %v, want it to mention %q", tc.name, tc.err, tc.want)
		}
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := NewIndex(cctx, train, 3, 2, Options{}); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled NewIndex: %v", err)
	}
	if _, err := NewIndex(ctx, []float64{0, math.Inf(1)}, 1, 2, Options{}); err == nil || !strings.Contains(err.Error(), "non-finite") {
		t.Errorf("Inf training point: %v", err)
	}
}

// TestIndexHugeNorms: where the GEMM bound of a brute-force Index is unusable (squared norms
// above 1e290, from the training points or only from the queries; at scale 1e146 they are
// about 2e293 while the distances stay finite), its queries fall back to the k-d tree, built
// on first need, and stay exact.
func TestIndexHugeNorms(t *testing.T) {
	ctx := context.Background()
	const n, m, d, k = 300, 40, 20, 7
	for _, tc := range []struct {
		name                 string
		trainScale, qryScale float64
	}{{"huge training set", 1e146, 1e146}, {"huge queries only", 1, 1e146}} {
		rng := rand.New(rand.NewPCG(21, 22))
		train := randData(rng, n, d)
		q := randData(rng, m, d)
		for i := range train {
			train[i] *= tc.trainScale
		}
		for i := range q {
			q[i] *= tc.qryScale
		}
		ix, err := NewIndex(ctx, train, n, d, Options{Method: Brute})
		if err != nil {
			t.Fatal(err)
		}
		idx, dist := make([]int32, m*k), make([]float64, m*k)
		for rep := 0; rep < 2; rep++ { // the second query reuses the tree
			if err := ix.QueryTo(ctx, idx, dist, q, m, k, 2); err != nil {
				t.Fatalf("%s: %v", tc.name, err)
			}
			oi, od := oracleTop(train, n, d, q, m, false, k)
			checkAgainst(t, tc.name, k, idx, dist, oi, od)
		}
	}
}
