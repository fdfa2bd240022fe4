package knn

import (
	"cmp"
	"context"
	"slices"

	"glle/parallel"
)

// leafSize is the largest bucket; leaves hold between leafSize/2 and leafSize points.
const leafSize = 16

// ctxEvery is how many points a worker processes between context checks.
const ctxEvery = 2048

// kdNode is one node of the flat tree. Internal nodes split their point range at the median
// of dimension dim: the left child (the next node in the slice) holds coordinates <= split,
// the right child (node right) holds coordinates >= split. Leaves have dim < 0.
type kdNode struct {
	split  float64
	dim    int32
	right  int32
	lo, hi int32 // point range in leaf order
}

// kdTree is a k-d tree whose points are stored permuted into leaf order.
type kdTree struct {
	n, d  int
	pts   []float64 // n x d, leaf order
	perm  []int32   // leaf position -> original row
	nodes []kdNode  // preorder
}

// nodeCount is the number of nodes of the subtree over s points. The shape depends only on
// s (median splits), which lets subtrees be built independently into a preallocated slice.
func nodeCount(s int) int {
	if s <= leafSize {
		return 1
	}
	return 1 + nodeCount(s/2) + nodeCount(s-s/2)
}

type buildTask struct {
	node   int32
	lo, hi int
}

// buildTree builds the tree over the rows of x. The result does not depend on workers.
func buildTree(ctx context.Context, x []float64, n, d, workers int) (*kdTree, error) {
	t := &kdTree{n: n, d: d, pts: make([]float64, n*d), perm: make([]int32, n)}
	copy(t.pts, x)
	for i := range t.perm {
		t.perm[i] = int32(i)
	}
	t.nodes = make([]kdNode, nodeCount(n))
	// Split the top levels sequentially until there are enough subtrees to share out, then
	// build the subtrees in parallel; each writes a disjoint node and point range.
	tasks := []buildTask{{0, 0, n}}
	const minTask = 1 << 14
	for len(tasks) < 8*workers && workers > 1 {
		var next []buildTask
		split := false
		for _, tk := range tasks {
			if tk.hi-tk.lo < minTask || tk.hi-tk.lo <= leafSize {
				next = append(next, tk)
				continue
			}
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			mid := t.splitNode(tk.node, tk.lo, tk.hi)
			l := tk.node + 1
			next = append(next, buildTask{l, tk.lo, mid}, buildTask{t.nodes[tk.node].right, mid, tk.hi})
			split = true
		}
		tasks = next
		if !split {
			break
		}
	}
	err := parallel.For(ctx, len(tasks), workers, func(ctx context.Context, _, lo, hi int) error {
		for _, tk := range tasks[lo:hi] {
			if err := t.build(ctx, tk.node, tk.lo, tk.hi); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return t, nil
}

func (t *kdTree) build(ctx context.Context, ni int32, lo, hi int) error {
	for {
		if hi-lo <= leafSize {
			t.nodes[ni] = kdNode{dim: -1, lo: int32(lo), hi: int32(hi)}
			return nil
		}
		if hi-lo >= ctxEvery*4 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		mid := t.splitNode(ni, lo, hi)
		if err := t.build(ctx, ni+1, lo, mid); err != nil {
			return err
		}
		ni, lo = t.nodes[ni].right, mid
	}
}

// splitNode partitions rows [lo, hi) at the median of their widest dimension, fills node ni
// and returns the split position.
func (t *kdTree) splitNode(ni int32, lo, hi int) int {
	d := t.d
	pts := t.pts
	// Widest dimension (lowest index among equals).
	dim := 0
	if d > 1 {
		var mn, mx [AutoMaxKDTreeDim]float64
		var mnS, mxS []float64
		if d <= AutoMaxKDTreeDim {
			mnS, mxS = mn[:d], mx[:d]
		} else {
			mnS, mxS = make([]float64, d), make([]float64, d)
		}
		copy(mnS, pts[lo*d:lo*d+d])
		copy(mxS, pts[lo*d:lo*d+d])
		for p := lo + 1; p < hi; p++ {
			row := pts[p*d : p*d+d]
			for j, v := range row {
				if v < mnS[j] {
					mnS[j] = v
				} else if v > mxS[j] {
					mxS[j] = v
				}
			}
		}
		best := -1.0
		for j := range mnS {
			if w := mxS[j] - mnS[j]; w > best {
				best, dim = w, j
			}
		}
	}
	mid := lo + (hi-lo)/2
	t.selectRows(lo, hi, mid, dim)
	t.nodes[ni] = kdNode{
		split: pts[mid*d+dim],
		dim:   int32(dim),
		right: ni + 1 + int32(nodeCount(mid-lo)),
		lo:    int32(lo),
		hi:    int32(hi),
	}
	return mid
}

func (t *kdTree) swapRows(i, j int) {
	d := t.d
	a := t.pts[i*d : i*d+d]
	b := t.pts[j*d : j*d+d]
	for c := range a {
		a[c], b[c] = b[c], a[c]
	}
	t.perm[i], t.perm[j] = t.perm[j], t.perm[i]
}

// selectRows reorders rows [lo, hi) so that row kth holds the value of dimension dim it would
// have in sorted order, rows before it are <= and rows after it are >= (quickselect with
// Hoare partitioning, which splits runs of equal values evenly).
func (t *kdTree) selectRows(lo, hi, kth, dim int) {
	d := t.d
	pts := t.pts
	v := func(i int) float64 { return pts[i*d+dim] }
	rng := uint64(lo)*0x9E3779B97F4A7C15 + uint64(hi)
	for iter := 0; hi-lo > 12; iter++ {
		// Median of three moved to lo; after many rounds use pseudo-random samples to
		// defeat adversarial orders.
		a, b, c := lo, lo+(hi-lo)/2, hi-1
		if iter > 8 {
			rnd := func() int {
				rng ^= rng << 13
				rng ^= rng >> 7
				rng ^= rng << 17
				return lo + int(rng%uint64(hi-lo))
			}
			a, b, c = rnd(), rnd(), rnd()
		}
		if v(b) < v(a) {
			a, b = b, a
		}
		if v(c) < v(b) {
			b = c
			if v(b) < v(a) {
				b = a
			}
		}
		t.swapRows(lo, b)
		pivot := v(lo)
		i, j := lo-1, hi
		for {
			for i++; v(i) < pivot; i++ {
			}
			for j--; v(j) > pivot; j-- {
			}
			if i >= j {
				break
			}
			t.swapRows(i, j)
		}
		// [lo, j] <= pivot <= [j+1, hi)
		if kth <= j {
			hi = j + 1
		} else {
			lo = j + 1
		}
	}
	// Insertion sort of the small remainder.
	for i := lo + 1; i < hi; i++ {
		for j := i; j > lo && v(j) < v(j-1); j-- {
			t.swapRows(j, j-1)
		}
	}
}

// searcher is one worker's reusable query workspace.
type searcher struct {
	t    *kdTree
	q    []float64
	self int32 // leaf position excluded from the results, -1 for none
	off  []float64
	h    topK
}

func (t *kdTree) newSearcher(k int) *searcher {
	return &searcher{t: t, off: make([]float64, t.d), h: newTopK(k)}
}

// run finds the k nearest points to q; the result is left in s.h (unsorted heap).
func (s *searcher) run(q []float64, self int32) {
	s.q = q
	s.self = self
	for i := range s.off {
		s.off[i] = 0
	}
	s.h.reset()
	s.search(0)
}

// search visits node ni, nearer child first. The far child is skipped when the lower bound
// lb (sum in index order of the squared offsets of q from the splitting planes that separate
// it from the subtree) exceeds the current k-th distance. Each offset is at most the matching
// coordinate difference of every point behind the plane, and rounding is monotone, so lb never
// exceeds a computed distance: the pruning is exact, including ties.
func (s *searcher) search(ni int32) {
	nd := &s.t.nodes[ni]
	if nd.dim < 0 {
		s.scanLeaf(int(nd.lo), int(nd.hi))
		return
	}
	dim := nd.dim
	diff := s.q[dim] - nd.split
	near, far := ni+1, nd.right
	if diff > 0 {
		near, far = far, near
	}
	s.search(near)
	old := s.off[dim]
	s.off[dim] = float64(diff * diff)
	lb := 0.0
	for _, o := range s.off {
		lb += o
	}
	if lb <= s.h.dist[0] {
		s.search(far)
	}
	s.off[dim] = old
}

func (s *searcher) scanLeaf(lo, hi int) {
	t := s.t
	h := &s.h
	worst := h.dist[0]
	perm := t.perm[lo:hi]
	switch d := t.d; d {
	case 2:
		q0, q1 := s.q[0], s.q[1]
		pts := t.pts[lo*2 : hi*2]
		for p := range perm {
			t0 := q0 - pts[2*p]
			t1 := q1 - pts[2*p+1]
			dd := float64(t0*t0) + float64(t1*t1)
			if dd <= worst {
				if int32(lo+p) == s.self {
					continue
				}
				if id := perm[p]; dd < worst || id < h.idx[0] {
					h.replaceTop(dd, id)
					worst = h.dist[0]
				}
			}
		}
	case 3:
		q0, q1, q2 := s.q[0], s.q[1], s.q[2]
		pts := t.pts[lo*3 : hi*3]
		for p := range perm {
			r := pts[3*p : 3*p+3]
			t0 := q0 - r[0]
			t1 := q1 - r[1]
			t2 := q2 - r[2]
			dd := float64(t0*t0) + float64(t1*t1) + float64(t2*t2)
			if dd <= worst {
				if int32(lo+p) == s.self {
					continue
				}
				if id := perm[p]; dd < worst || id < h.idx[0] {
					h.replaceTop(dd, id)
					worst = h.dist[0]
				}
			}
		}
	default:
		q := s.q[:d]
		pts := t.pts[lo*d : hi*d]
		for p := range perm {
			dd := sqDist(q, pts[p*d:p*d+d])
			if dd <= worst {
				if int32(lo+p) == s.self {
					continue
				}
				if id := perm[p]; dd < worst || id < h.idx[0] {
					h.replaceTop(dd, id)
					worst = h.dist[0]
				}
			}
		}
	}
}

// graph answers every tree point (self excluded) in leaf order, writing to the original rows.
func (t *kdTree) graph(ctx context.Context, k, workers int, idx []int32, dist []float64) error {
	ws := make([]*searcher, parallel.Workers(workers))
	return parallel.For(ctx, t.n, workers, func(ctx context.Context, w, lo, hi int) error {
		s := ws[w]
		if s == nil {
			s = t.newSearcher(k)
			ws[w] = s
		}
		d := t.d
		for p := lo; p < hi; p++ {
			if (p-lo)%ctxEvery == 0 {
				if err := ctx.Err(); err != nil {
					return err
				}
			}
			s.run(t.pts[p*d:p*d+d], int32(p))
			r := int(t.perm[p])
			s.h.sortTo(idx[r*k:r*k+k], dist[r*k:r*k+k])
		}
		return nil
	})
}

// leafOf returns the leaf position range start of the leaf q descends to.
func (t *kdTree) leafOf(q []float64) int32 {
	ni := int32(0)
	for {
		nd := &t.nodes[ni]
		if nd.dim < 0 {
			return nd.lo
		}
		if q[nd.dim] > nd.split {
			ni = nd.right
		} else {
			ni++
		}
	}
}

// query answers the m rows of q; they are processed grouped by the leaf they fall in, for
// locality, and written to their original rows.
func (t *kdTree) query(ctx context.Context, q []float64, m, k, workers int, idx []int32, dist []float64) error {
	d := t.d
	// Counting sort of the queries by leaf (keyed by the leaf's first position).
	key := make([]int32, m)
	err := parallel.For(ctx, m, workers, func(ctx context.Context, _, lo, hi int) error {
		for i := lo; i < hi; i++ {
			key[i] = t.leafOf(q[i*d : i*d+d])
		}
		return nil
	})
	if err != nil {
		return err
	}
	order := make([]int32, m)
	if m >= t.n/16 {
		start := make([]int32, t.n+1)
		for _, c := range key {
			start[c+1]++
		}
		for i := 1; i <= t.n; i++ {
			start[i] += start[i-1]
		}
		for i, c := range key {
			order[start[c]] = int32(i)
			start[c]++
		}
	} else {
		// A small batch against a large tree (Index.QueryTo): sorting the m keys costs
		// O(m log m) instead of the counting sort's O(n). The order only affects locality.
		for i := range order {
			order[i] = int32(i)
		}
		slices.SortFunc(order, func(a, b int32) int { return cmp.Or(cmp.Compare(key[a], key[b]), cmp.Compare(a, b)) })
	}
	ws := make([]*searcher, parallel.Workers(workers))
	return parallel.For(ctx, m, workers, func(ctx context.Context, w, lo, hi int) error {
		s := ws[w]
		if s == nil {
			s = t.newSearcher(k)
			ws[w] = s
		}
		for p := lo; p < hi; p++ {
			if (p-lo)%ctxEvery == 0 {
				if err := ctx.Err(); err != nil {
					return err
				}
			}
			r := int(order[p])
			s.run(q[r*d:r*d+d], -1)
			s.h.sortTo(idx[r*k:r*k+k], dist[r*k:r*k+k])
		}
		return nil
	})
}
