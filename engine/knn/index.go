package knn

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"glle/parallel"
)

// Index answers k-nearest-neighbour queries against a fixed training set. It prepares its
// search structure once so that many small queries do not each pay for it: the k-d tree
// (a permuted copy of the points), or for brute force the mean-centred copy of the points and
// their norms (8(n d + 3 n) bytes). Query is NewIndex followed by one QueryTo. An Index is
// safe for concurrent queries.
type Index struct {
	n, d   int
	method Method
	// train is the caller's training set (not copied): brute force re-ranks its candidates
	// on it, and the tree is built from it.
	train []float64
	bt    *bruteTrain // brute force: the training side of the GEMM bound

	mu      sync.Mutex // guards tree
	tree    *kdTree
	workers int // build workers of the tree
}

// NewIndex validates the training set train (n x d, row-major) and prepares queries against
// it: for the k-d tree (opts.Method, Auto for d <= AutoMaxKDTreeDim) it builds the tree now,
// for brute force it centres a copy of train and keeps train itself for the exact
// re-ranking, so train must not be modified while the Index is used.
// It returns an error for d < 1, n < 1, len(train) != n*d, n > math.MaxInt32, an unknown
// opts.Method or a NaN/Inf in train, and ctx.Err() if ctx is cancelled while the tree is built.
func NewIndex(ctx context.Context, train []float64, n, d int, opts Options) (*Index, error) {
	if err := checkShape("train", train, n, d); err != nil {
		return nil, err
	}
	if n < 1 {
		return nil, fmt.Errorf("knn: need at least 1 training point, got n=%d", n)
	}
	method, err := opts.method(d)
	if err != nil {
		return nil, err
	}
	if err := checkFinite("train", train, n, d); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return newIndex(ctx, train, n, d, method, opts.Workers)
}

// newIndex is NewIndex after validation (shape, method and finiteness of train checked).
func newIndex(ctx context.Context, train []float64, n, d int, method Method, workers int) (*Index, error) {
	ix := &Index{n: n, d: d, method: method, train: train, workers: parallel.Workers(workers)}
	if method == Brute {
		ix.bt = newBruteTrain(train, n, d)
	}
	if method == KDTree {
		if _, err := ix.kdTree(ctx); err != nil {
			return nil, err
		}
	}
	return ix, nil
}

// N and D are the shape of the training set.
func (ix *Index) N() int { return ix.n }

// D is the dimension of the training points.
func (ix *Index) D() int { return ix.d }

// kdTree returns the index's tree, building it on first use (brute-force indexes need it
// only when the GEMM bound is unusable). A failed (cancelled) build is not kept.
func (ix *Index) kdTree(ctx context.Context) (*kdTree, error) {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	if ix.tree == nil {
		t, err := buildTree(ctx, ix.train, ix.n, ix.d, ix.workers)
		if err != nil {
			return nil, err
		}
		ix.tree = t
	}
	return ix.tree, nil
}

// QueryTo writes the k nearest training rows of each of the m query rows of q (m x d,
// row-major) into idx and dist (m*k each, row i at [i*k, (i+1)*k)), with the same distance,
// ordering and tie rules as Graph but no self exclusion: a query equal to a training row has
// that row as a neighbour at distance 0. workers <= 0 means runtime.GOMAXPROCS(0); the result
// does not depend on it. It returns an error for k < 1, k > N, m < 0, mismatched slice
// lengths or a NaN/Inf in q, and ctx.Err() if ctx is cancelled (idx and dist are then
// partly written).
func (ix *Index) QueryTo(ctx context.Context, idx []int32, dist []float64, q []float64, m, k, workers int) error {
	d := ix.d
	if m < 0 {
		return fmt.Errorf("knn: negative query count m=%d", m)
	}
	if len(q) != m*d {
		return fmt.Errorf("knn: len(q)=%d, want m*d=%d*%d=%d", len(q), m, d, m*d)
	}
	if k < 1 || k > ix.n {
		return fmt.Errorf("knn: k=%d out of range [1, n=%d]", k, ix.n)
	}
	if len(idx) != m*k || len(dist) != m*k {
		return fmt.Errorf("knn: len(idx)=%d, len(dist)=%d, want m*k=%d*%d=%d", len(idx), len(dist), m, k, m*k)
	}
	if err := checkFinite("q", q, m, d); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if m == 0 {
		return nil
	}
	w := parallel.Workers(workers)
	if ix.method == Brute {
		err := ix.bt.search(ctx, q, m, k, false, w, idx, dist)
		if !errors.Is(err, errUseTree) {
			return err
		}
	}
	t, err := ix.kdTree(ctx)
	if err != nil {
		return err
	}
	return t.query(ctx, q, m, k, w, idx, dist)
}
