package bench

import (
	"context"
	"math"
	"math/rand/v2"
	"slices"

	"gonum.org/v1/gonum/mat"

	"glle/parallel"
)

// ExactLimit is the largest n for which TrustContinuity (and so Trustworthiness and
// Continuity) uses every point as a query by default.
const ExactLimit = 20000

// DefaultQueries is the number of query points TrustContinuity samples by default when
// n > ExactLimit.
const DefaultQueries = 2000

// subsampleStream is the second PCG seed word of the query subsample.
const subsampleStream = 0xD1B54A32D192ED03

// NeighborhoodOptions tunes TrustContinuity. The zero value gives the defaults.
type NeighborhoodOptions struct {
	// Queries is the number of query points i over which the sums of the definitions run.
	// 0 means all n points when n <= ExactLimit and DefaultQueries otherwise; a value >= n
	// means all points (exact). Fewer than n gives an unbiased estimate: the mean
	// per-point penalty over a uniform sample without replacement, drawn with math/rand/v2's
	// PCG seeded with (Seed, 0xD1B54A32D192ED03) as rand.Perm(n)[:Queries]. Ranks are always
	// computed against all n points.
	Queries int
	// Seed selects the query subsample. Default 0.
	Seed uint64
	// Workers is the number of goroutines; <= 0 means runtime.GOMAXPROCS(0). The result does
	// not depend on it.
	Workers int
}

// Trustworthiness returns the trustworthiness T(k) of the embedding Y (n x p) of the data X
// (n x D) (Venna and Kaski 2001):
//
//	T(k) = 1 - 2 / (n k (2n - 3k - 1)) sum_i sum_{j in U_k(i)} (r(i, j) - k)
//
// where U_k(i) holds the k nearest neighbours of point i in Y that are not among its k
// nearest neighbours in X, and r(i, j) is the rank of j among the neighbours of i in X
// (1 = nearest, point i excluded). Distances are Euclidean and ties are broken by point index
// (the smaller index ranks first). T = 1 when Y keeps every k-neighbourhood of X.
//
// Cost O(n^2 (D + p + k)) time, O(n) memory per worker, in parallel. For n > ExactLimit the
// sum over i runs over a seeded random subsample of DefaultQueries points (an unbiased,
// deterministic estimate whose standard error depends on the data: measured 2e-5 for an
// unfolded embedding at T = 0.9993 and 3e-3 for a projection at T = 0.81, 2000 queries,
// n = 8000, k = 10); use TrustContinuity to choose the subsample. Ties broken by index make
// the value depend on the row order when distances tie heavily (grid data). It is NaN when X
// or Y holds a non-finite value. It panics if X and Y have different numbers of rows or
// unless 1 <= k < n/2.
func Trustworthiness(X, Y *mat.Dense, k int) float64 {
	t, _ := TrustContinuity(X, Y, k, NeighborhoodOptions{})
	return t
}

// Continuity returns the continuity C(k) of the embedding Y of X (Venna and Kaski 2001): the
// trustworthiness with the roles of the spaces exchanged,
//
//	C(k) = 1 - 2 / (n k (2n - 3k - 1)) sum_i sum_{j in V_k(i)} (rhat(i, j) - k)
//
// where V_k(i) holds the k nearest neighbours of i in X that are not among its k nearest in
// Y, and rhat(i, j) is the rank of j among the neighbours of i in Y. Ties, cost, the
// subsampling for n > ExactLimit and panics are as for Trustworthiness.
func Continuity(X, Y *mat.Dense, k int) float64 {
	_, c := TrustContinuity(X, Y, k, NeighborhoodOptions{})
	return c
}

// TrustContinuity returns the trustworthiness and continuity of Y as an embedding of X (see
// Trustworthiness and Continuity) in one pass, over the query points chosen by opt. With a
// subsample of m queries the leading n of the normalisation becomes m. It panics if X and Y
// have different numbers of rows or unless 1 <= k < n/2. It cannot be interrupted; use
// TrustContinuityContext for a pass that stops when a context is done.
func TrustContinuity(X, Y *mat.Dense, k int, opt NeighborhoodOptions) (trust, cont float64) {
	// The error is nil: only a done context stops the pass, and Background never is.
	trust, cont, _ = TrustContinuityContext(context.Background(), X, Y, k, opt)
	return trust, cont
}

// TrustContinuityContext is TrustContinuity that stops early when ctx is done: every worker
// checks ctx before each query point (one O(n (D + p + k)) step), and the pass then returns
// NaN, NaN and ctx's error. Otherwise the error is nil and the values are TrustContinuity's.
// It panics as TrustContinuity does.
func TrustContinuityContext(ctx context.Context, X, Y *mat.Dense, k int, opt NeighborhoodOptions) (trust, cont float64, err error) {
	n, _ := X.Dims()
	if ny, _ := Y.Dims(); ny != n {
		panic("bench: TrustContinuity of X and Y with different numbers of rows")
	}
	if !TrustDefined(n, k) {
		panic("bench: TrustContinuity needs 1 <= k < n/2")
	}
	// A NaN distance compares false everywhere and gave plausible finite values (0.35 and
	// 0.58 for one NaN in Y, a review in session 32).
	if !allFinite(X) || !allFinite(Y) {
		return math.NaN(), math.NaN(), nil
	}
	queries := opt.Queries
	if queries <= 0 {
		queries = n
		if n > ExactLimit {
			queries = DefaultQueries
		}
	}
	var qidx []int // nil: all points
	if queries < n {
		r := rand.New(rand.NewPCG(opt.Seed, subsampleStream))
		qidx = r.Perm(n)[:queries]
		slices.Sort(qidx)
	} else {
		queries = n
	}

	workers := parallel.Workers(opt.Workers)
	const chunk = 32
	nc := parallel.NumChunks(queries, chunk)
	tpart := make([]int64, nc)
	cpart := make([]int64, nc)
	type workspace struct {
		dx, dy   []float64
		nx, ny   []int32
		ndx, ndy []float64
		targets  []int32
		ranks    []int
	}
	ws := make([]*workspace, workers)
	xs, ys := rawRows(X), rawRows(Y)
	err = parallel.Chunks(ctx, queries, chunk, workers, func(ctx context.Context, w, c, lo, hi int) error {
		s := ws[w]
		if s == nil {
			s = &workspace{
				dx: make([]float64, n), dy: make([]float64, n),
				nx: make([]int32, k), ny: make([]int32, k),
				ndx: make([]float64, k), ndy: make([]float64, k),
				targets: make([]int32, 0, k), ranks: make([]int, k),
			}
			ws[w] = s
		}
		var tsum, csum int64
		for q := lo; q < hi; q++ {
			if err := ctx.Err(); err != nil {
				return err
			}
			i := q
			if qidx != nil {
				i = qidx[q]
			}
			xs.distances(i, s.dx)
			ys.distances(i, s.dy)
			selectKNN(s.dx, i, s.nx, s.ndx)
			selectKNN(s.dy, i, s.ny, s.ndy)
			// Trustworthiness: embedding neighbours that are not data neighbours, ranked in X.
			s.targets = s.targets[:0]
			for _, j := range s.ny {
				if !slices.Contains(s.nx, j) {
					s.targets = append(s.targets, j)
				}
			}
			for _, r := range ranksOf(s.dx, i, s.targets, s.ranks) {
				tsum += int64(r - k)
			}
			// Continuity: data neighbours that are not embedding neighbours, ranked in Y.
			s.targets = s.targets[:0]
			for _, j := range s.nx {
				if !slices.Contains(s.ny, j) {
					s.targets = append(s.targets, j)
				}
			}
			for _, r := range ranksOf(s.dy, i, s.targets, s.ranks) {
				csum += int64(r - k)
			}
		}
		tpart[c], cpart[c] = tsum, csum
		return nil
	})
	if err != nil {
		return math.NaN(), math.NaN(), err
	}
	var tsum, csum int64
	for c := range tpart {
		tsum += tpart[c]
		csum += cpart[c]
	}
	norm := 2 / (float64(queries) * float64(k) * float64(2*n-3*k-1))
	return 1 - norm*float64(tsum), 1 - norm*float64(csum), nil
}

// rows gives fast access to the rows of a dense matrix.
type rows struct {
	data         []float64
	n, d, stride int
}

func rawRows(A *mat.Dense) rows {
	r := A.RawMatrix()
	return rows{data: r.Data, n: r.Rows, d: r.Cols, stride: r.Stride}
}

func (a rows) row(i int) []float64 { return a.data[i*a.stride : i*a.stride+a.d] }

// distances sets dst[l] to the squared Euclidean distance between rows i and l.
func (a rows) distances(i int, dst []float64) {
	xi := a.row(i)
	switch a.d {
	case 2:
		x0, x1 := xi[0], xi[1]
		for l := range a.n {
			r := a.data[l*a.stride : l*a.stride+2]
			d0, d1 := r[0]-x0, r[1]-x1
			dst[l] = d0*d0 + d1*d1
		}
	case 3:
		x0, x1, x2 := xi[0], xi[1], xi[2]
		for l := range a.n {
			r := a.data[l*a.stride : l*a.stride+3]
			d0, d1, d2 := r[0]-x0, r[1]-x1, r[2]-x2
			dst[l] = d0*d0 + d1*d1 + d2*d2
		}
	default:
		for l := range a.n {
			r := a.data[l*a.stride : l*a.stride+a.d]
			var s float64
			for t, v := range r {
				e := v - xi[t]
				s += e * e
			}
			dst[l] = s
		}
	}
}

// selectKNN fills nbr with the len(nbr) points l != self of smallest (dist[l], l), in
// increasing order; nd receives their distances.
func selectKNN(dist []float64, self int, nbr []int32, nd []float64) {
	k := len(nbr)
	cnt := 0
	for l, d := range dist {
		if l == self || (cnt == k && !(d < nd[k-1])) {
			continue
		}
		// Insert after every entry with distance <= d (those have smaller indices).
		pos := cnt
		if cnt == k {
			pos = k - 1
		} else {
			cnt++
		}
		for pos > 0 && nd[pos-1] > d {
			nd[pos] = nd[pos-1]
			nbr[pos] = nbr[pos-1]
			pos--
		}
		nd[pos] = d
		nbr[pos] = int32(l)
	}
}

// ranksOf returns the 1-based ranks of the points targets among the neighbours of self
// (self excluded) ordered by (dist, index), in ranks[:len(targets)]. Points closer than every
// target count for all of them at the cost of one comparison, so the pass is O(n) plus
// O(len(targets)) for each point inside the targets' distance range.
func ranksOf(dist []float64, self int, targets []int32, ranks []int) []int {
	ranks = ranks[:len(targets)]
	if len(targets) == 0 {
		return ranks
	}
	tmin, tmax := math.Inf(1), math.Inf(-1)
	for t, j := range targets {
		tmin = math.Min(tmin, dist[j])
		tmax = math.Max(tmax, dist[j])
		ranks[t] = 1
	}
	below := 0
	for l, d := range dist {
		if d < tmin {
			below++
			continue
		}
		if d > tmax || l == self {
			continue
		}
		for t, j := range targets {
			if dj := dist[j]; d < dj || (d == dj && l < int(j)) {
				ranks[t]++
			}
		}
	}
	if dist[self] < tmin {
		below-- // self was counted among the closer points
	}
	for t := range ranks {
		ranks[t] += below
	}
	return ranks
}

// BruteForceKNN returns the k nearest neighbours of every row of X by exhaustive search:
// n*k 0-based indices, row i at [i*k, (i+1)*k), sorted by Euclidean distance with ties
// broken by index, the point itself excluded (the layout of engine.Model.Neighbors). It
// takes O(n^2 D) time and O(n) memory per worker, in parallel with workers goroutines
// (<= 0: GOMAXPROCS); the result does not depend on workers. It panics unless 1 <= k < n.
func BruteForceKNN(X *mat.Dense, k, workers int) []int32 {
	n, _ := X.Dims()
	if k < 1 || k >= n {
		panic("bench: BruteForceKNN needs 1 <= k < n")
	}
	out := make([]int32, n*k)
	xs := rawRows(X)
	workers = parallel.Workers(workers)
	dists := make([][]float64, workers)
	nds := make([][]float64, workers)
	parallel.For(context.Background(), n, workers, func(_ context.Context, w, lo, hi int) error {
		if dists[w] == nil {
			dists[w] = make([]float64, n)
			nds[w] = make([]float64, k)
		}
		for i := lo; i < hi; i++ {
			xs.distances(i, dists[w])
			selectKNN(dists[w], i, out[i*k:(i+1)*k], nds[w])
		}
		return nil
	})
	return out
}

// TrustDefined reports whether trustworthiness and continuity with k neighbours are defined
// for n points: 1 <= k < n/2, the range for which their normalisation 2 / (n k (2n - 3k - 1))
// is derived.
func TrustDefined(n, k int) bool { return k >= 1 && 2*k < n }
