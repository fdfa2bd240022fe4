package knn

import (
	"context"
	"errors"
	"fmt"
	"math"

	"glle/parallel"
)

// Method selects the search algorithm used by Graph and Query.
type Method int

const (
	// Auto uses the k-d tree for d <= AutoMaxKDTreeDim and blocked brute force otherwise.
	Auto Method = iota
	// KDTree forces the k-d tree (valid for any d, but slow in high dimension).
	KDTree
	// Brute forces the blocked brute-force search (GEMM distance blocks with exact re-ranking).
	Brute
)

// AutoMaxKDTreeDim is the largest dimension for which Auto chooses the k-d tree.
const AutoMaxKDTreeDim = 16

// String returns the method's name.
func (m Method) String() string {
	switch m {
	case Auto:
		return "auto"
	case KDTree:
		return "kdtree"
	case Brute:
		return "brute"
	}
	return fmt.Sprintf("Method(%d)", int(m))
}

// Options tunes Graph and Query. The zero value is ready to use. No option changes the
// result: every method and worker count returns the same neighbours and distances.
type Options struct {
	// Workers is the number of goroutines; values <= 0 mean runtime.GOMAXPROCS(0).
	Workers int
	// Method selects the algorithm; Auto (the zero value) picks the k-d tree for
	// d <= AutoMaxKDTreeDim and blocked brute force otherwise.
	Method Method
}

func (o Options) method(d int) (Method, error) {
	switch o.Method {
	case Auto:
		if d <= AutoMaxKDTreeDim {
			return KDTree, nil
		}
		return Brute, nil
	case KDTree, Brute:
		return o.Method, nil
	}
	return 0, fmt.Errorf("knn: unknown method %d", int(o.Method))
}

// Graph computes, for every row i of x (n x d, row-major, float64), its k nearest other
// rows: self excluded by index, Euclidean, sorted by distance ascending, ties broken by the
// lower index, so the result is deterministic and independent of the worker count and of
// the method. Result idx is n*k int32 (row i at idx[i*k:(i+1)*k]), dist is n*k squared
// distances (float64), each computed as the sum over dimensions in index order of (a-b)^2.
//
// It returns an error for k < 1, k >= n, d < 1, len(x) != n*d, n > math.MaxInt32, or a
// NaN/Inf in x, and ctx.Err() if ctx is cancelled before the search completes.
func Graph(ctx context.Context, x []float64, n, d, k int, opts Options) (idx []int32, dist []float64, err error) {
	if err := checkShape("x", x, n, d); err != nil {
		return nil, nil, err
	}
	if n < 2 {
		return nil, nil, fmt.Errorf("knn: need at least 2 points, got n=%d", n)
	}
	if k < 1 || k >= n {
		return nil, nil, fmt.Errorf("knn: k=%d out of range [1, n-1=%d]", k, n-1)
	}
	method, err := opts.method(d)
	if err != nil {
		return nil, nil, err
	}
	if err := checkFinite("x", x, n, d); err != nil {
		return nil, nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, nil, err
	}
	idx = make([]int32, n*k)
	dist = make([]float64, n*k)
	w := parallel.Workers(opts.Workers)
	if method == Brute {
		err = bruteSearch(ctx, x, n, d, x, n, k, true, w, idx, dist)
		if !errors.Is(err, errUseTree) {
			return finish(idx, dist, err)
		}
	}
	t, err := buildTree(ctx, x, n, d, w)
	if err != nil {
		return nil, nil, err
	}
	return finish(idx, dist, t.graph(ctx, k, w, idx, dist))
}

// Query returns the k nearest rows of the training set train (n x d, row-major) for each of
// the m query rows of q (m x d, row-major), with the same distance, ordering and tie rules as
// Graph but no self exclusion: a query equal to a training row has that row as a neighbour
// at distance 0. Results are m*k, row i at idx[i*k:(i+1)*k].
//
// It returns an error for k < 1, k > n, d < 1, m < 0, mismatched slice lengths,
// n > math.MaxInt32, or a NaN/Inf in train or q, and ctx.Err() if ctx is cancelled.
func Query(ctx context.Context, train []float64, n, d int, q []float64, m, k int, opts Options) (idx []int32, dist []float64, err error) {
	if err := checkShape("train", train, n, d); err != nil {
		return nil, nil, err
	}
	if n < 1 {
		return nil, nil, fmt.Errorf("knn: need at least 1 training point, got n=%d", n)
	}
	if m < 0 {
		return nil, nil, fmt.Errorf("knn: negative query count m=%d", m)
	}
	if len(q) != m*d {
		return nil, nil, fmt.Errorf("knn: len(q)=%d, want m*d=%d*%d=%d", len(q), m, d, m*d)
	}
	if k < 1 || k > n {
		return nil, nil, fmt.Errorf("knn: k=%d out of range [1, n=%d]", k, n)
	}
	method, err := opts.method(d)
	if err != nil {
		return nil, nil, err
	}
	if err := checkFinite("train", train, n, d); err != nil {
		return nil, nil, err
	}
	if err := checkFinite("q", q, m, d); err != nil {
		return nil, nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, nil, err
	}
	if m == 0 {
		return []int32{}, []float64{}, nil
	}
	ix, err := newIndex(ctx, train, n, d, method, opts.Workers)
	if err != nil {
		return nil, nil, err
	}
	idx = make([]int32, m*k)
	dist = make([]float64, m*k)
	return finish(idx, dist, ix.QueryTo(ctx, idx, dist, q, m, k, opts.Workers))
}

func finish(idx []int32, dist []float64, err error) ([]int32, []float64, error) {
	if err != nil {
		return nil, nil, err
	}
	return idx, dist, nil
}

func checkShape(name string, x []float64, n, d int) error {
	if d < 1 {
		return fmt.Errorf("knn: dimension d=%d must be >= 1", d)
	}
	if n < 0 {
		return fmt.Errorf("knn: negative point count n=%d", n)
	}
	if n > math.MaxInt32 {
		return fmt.Errorf("knn: n=%d exceeds the int32 index range", n)
	}
	if n > len(x)/d || len(x) != n*d {
		return fmt.Errorf("knn: len(%s)=%d, want n*d=%d*%d", name, len(x), n, d)
	}
	return nil
}

func checkFinite(name string, x []float64, n, d int) error {
	for i := 0; i < n; i++ {
		for j, v := range x[i*d : (i+1)*d] {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return fmt.Errorf("knn: row %d of %s has non-finite value %v in column %d", i, name, v, j)
			}
		}
	}
	return nil
}

// sqDist is the one definition of the squared distance used for every ranking: the sum over
// dimensions in index order of (a-b)^2. The explicit conversion forbids fusing the multiply
// and the add, so every path (and every architecture) produces the same bits.
func sqDist(a, b []float64) float64 {
	b = b[:len(a)]
	s := 0.0
	for j, v := range a {
		t := v - b[j]
		s += float64(t * t)
	}
	return s
}
