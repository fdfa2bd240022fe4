package sparse

import (
	"context"
	"fmt"
	"math"
	"math/bits"
	"slices"

	bsparse "github.com/james-bowman/sparse"

	"glle/parallel"
)

// MPattern is the sparsity pattern of M = (I - W)^T (I - W) (paper Eq. (39)) for a fixed
// neighbour graph, together with one value slice that Fill overwrites for any weights.
//
// Row i of I - W is v_i = e_i - w_i, supported on S_i = {i} ∪ N(i) (N(i) the k neighbours of i).
// M = sum_i v_i v_i^T, so M[a, b] is structurally nonzero exactly when a and b both lie in some
// S_i, i.e. row a of M is the union of S_i over i ∈ {a} ∪ R(a), where R(a) = {i : a ∈ N(i)} are
// the points having a as a neighbour. This covers a itself, its neighbours, the points that
// have a as a neighbour, the neighbours of those points (pairs of points that are neighbours of
// a common point) and pairs sharing a reverse neighbour. The pattern is structural: entries
// that cancel numerically are kept.
//
// The CSR arrays hold the full symmetric matrix (both triangles) with sorted column indices.
// An MPattern is not safe for concurrent Fill calls; reading the arrays concurrently is fine.
type MPattern struct {
	n, k   int
	nbr    []int32   // n*k neighbour indices (referenced, not copied)
	revPtr []int     // n+1: R(a) is revIdx[revPtr[a]:revPtr[a+1]]
	revIdx []int32   // flat slots i*k+j with nbr[i*k+j] = a, ascending in i
	rowPtr []int     // n+1
	colIdx []int32   // nnz, sorted within each row
	val    []float64 // nnz
	mark   [][]int32 // one n-length scratch per worker
	bad    []int     // Fill: per worker, the smallest point whose row of M is not finite (n: none)
	// workers is the number of goroutines of the column maps (ToInternalCols).
	workers int

	// Refill plan (PrepareRefill): for every row, the offsets inside the row of the k+1
	// entries each contributor touches, in Fill's order. posPtr[a] = start of row a's offsets.
	posPtr []int64
	pos    []uint16

	// Internal order (NewMPatternLocal): row r of the stored M is point order[r], point i is
	// row label[i]; nil for NewMPattern (identity). wbuf holds the weights in that order.
	order, label []int32
	wbuf         []float64
	// components is the number of connected components the relabelling's breadth-first
	// search met (NewMPatternLocal); 0 for NewMPattern.
	components int
}

// NewMPattern computes the CSR pattern of M = (I - W)^T (I - W) (paper Eq. (39)) from the
// neighbour graph nbr (n*k entries, row i = the k neighbours of point i: in [0, n), self
// excluded, distinct; the kNN graph may be asymmetric). The pattern keeps a reference to nbr,
// which must not change afterwards. Values are zero until Fill is called. workers <= 0 means
// GOMAXPROCS; the result does not depend on it.
//
// Invalid graphs (bad length, out-of-range, self or repeated neighbours) return an error.
func NewMPattern(ctx context.Context, n, k int, nbr []int32, workers int) (*MPattern, error) {
	if err := checkGraph(n, k, nbr); err != nil {
		return nil, err
	}
	return newMPattern(ctx, n, k, nbr, workers)
}

// checkGraph validates a neighbour graph (NewMPattern, NewMPatternLocal, AssembleW): sizes, index range, no self or
// repeated neighbours. Errors name the first offending point in row order.
func checkGraph(n, k int, nbr []int32) error {
	if n < 1 {
		return fmt.Errorf("sparse: neighbour graph: n = %d, need n >= 1", n)
	}
	if k < 0 {
		return fmt.Errorf("sparse: neighbour graph: k = %d, need k >= 0", k)
	}
	if k >= n {
		return fmt.Errorf("sparse: neighbour graph: k = %d neighbours but only n = %d points", k, n)
	}
	if n > math.MaxInt32 || n*k > math.MaxInt32 {
		return fmt.Errorf("sparse: neighbour graph: n*k = %d exceeds the int32 index range", n*k)
	}
	if len(nbr) != n*k {
		return fmt.Errorf("sparse: neighbour graph: len(nbr) = %d, want n*k = %d", len(nbr), n*k)
	}
	return checkNeighbours(n, k, nbr)
}

// newMPattern is NewMPattern for a graph checkGraph accepted.
func newMPattern(ctx context.Context, n, k int, nbr []int32, workers int) (*MPattern, error) {
	p := &MPattern{n: n, k: k, nbr: nbr}

	// Reverse adjacency by counting sort: slots of each column in ascending row order.
	p.revPtr = make([]int, n+1)
	for _, b := range nbr {
		p.revPtr[b+1]++
	}
	for a := 0; a < n; a++ {
		p.revPtr[a+1] += p.revPtr[a]
	}
	p.revIdx = make([]int32, n*k)
	next := make([]int, n)
	copy(next, p.revPtr[:n])
	for s, b := range nbr {
		p.revIdx[next[b]] = int32(s)
		next[b]++
	}
	next = nil

	workers = parallel.Workers(workers)
	if workers > n {
		workers = n
	}
	p.workers = workers

	// One pass: each worker collects the sorted columns of its rows [lo, hi) in its own buffer,
	// then the buffers are copied into colIdx. Row a's columns are the union of S_i over
	// i in {a} ∪ R(a); a bitmap over the point numbers removes the duplicates and, when the
	// columns span few 64-bit words (neighbours have nearby numbers, as NewMPatternLocal
	// arranges), yields them in ascending order without a sort.
	counts := make([]int, n+1)       // counts[a+1] = nnz of row a
	bufs := make([][]int32, workers) // 4-byte columns: the buffers live beside colIdx
	los := make([]int, workers)      // first row of each worker's buffer
	err := parallel.For(ctx, n, workers, func(ctx context.Context, w, lo, hi int) error {
		seen := make([]uint64, (n+63)/64)
		buf := make([]int32, 0, (hi-lo)*(3*k+1))
		var list []int
		for a := lo; a < hi; a++ {
			if (a-lo)&1023 == 0 {
				if err := ctx.Err(); err != nil {
					return err
				}
			}
			list = list[:0]
			lo64, hi64 := n, -1
			add := func(c int) {
				if m := uint64(1) << (uint(c) & 63); seen[c>>6]&m == 0 {
					seen[c>>6] |= m
					list = append(list, c)
					lo64, hi64 = min(lo64, c>>6), max(hi64, c>>6)
				}
			}
			visit := func(i int) {
				add(i)
				for _, b := range nbr[i*k : i*k+k] {
					add(int(b))
				}
			}
			visit(a)
			for _, s := range p.revIdx[p.revPtr[a]:p.revPtr[a+1]] {
				visit(int(s) / k)
			}
			if span := hi64 - lo64 + 1; span <= 2*len(list)+8 {
				for wd := lo64; wd <= hi64; wd++ {
					for x := seen[wd]; x != 0; x &= x - 1 {
						buf = append(buf, int32(wd<<6|bits.TrailingZeros64(x)))
					}
					seen[wd] = 0
				}
			} else {
				slices.Sort(list)
				for _, c := range list {
					seen[c>>6] = 0
					buf = append(buf, int32(c))
				}
			}
			counts[a+1] = len(list)
		}
		bufs[w], los[w] = buf, lo
		return nil
	})
	if err != nil {
		return nil, err
	}
	for a := 0; a < n; a++ {
		counts[a+1] += counts[a]
	}
	p.rowPtr = counts
	nnz := p.rowPtr[n]
	p.colIdx = make([]int32, nnz)
	p.val = make([]float64, nnz)
	// The copy must complete (the pattern may be cached even if ctx ends now): no context.
	_ = parallel.For(context.Background(), len(bufs), len(bufs), func(_ context.Context, _, lo, hi int) error {
		for w := lo; w < hi; w++ {
			start := p.rowPtr[los[w]]
			copy(p.colIdx[start:start+len(bufs[w])], bufs[w])
		}
		return nil
	})
	return p, nil
}

// NewMPatternLocal is NewMPattern for the neighbour graph relabelled in breadth-first order:
// row r of the stored M (RowPtr, ColIdx, Values, Matrix, MulVec) belongs to point Order()[r].
// Points that are close get close row numbers, so assembling and refilling M, ordering it and
// its symbolic analysis touch memory far more locally than with the input order, which is
// arbitrary (random for the built-in datasets; at n = 200k: assembly 0.39 -> 0.17 s, AMD
// 0.79 -> 0.56 s, symbolic analysis 0.36 -> 0.24 s, and AMD finds 7% fewer flops). Fill takes
// the weights in point order; ToInternal and FromInternal map vectors between the two orders.
// The relabelling is a deterministic function of the graph. nbr is not referenced afterwards.
func NewMPatternLocal(ctx context.Context, n, k int, nbr []int32, workers int) (*MPattern, error) {
	if err := checkGraph(n, k, nbr); err != nil {
		return nil, err
	}
	order, label, comps := bfsOrder(n, k, nbr)
	// Without the context: a partly relabelled graph must never reach newMPattern.
	nbr2 := relabelGraph(n, k, nbr, order, label, workers)
	p, err := newMPattern(ctx, n, k, nbr2, workers) // a relabelled valid graph is valid
	if err != nil {
		return nil, err
	}
	p.order, p.label, p.components = order, label, comps
	return p, nil
}

// checkNeighbours checks the neighbour lists of checkGraph: index range, no self or repeated
// neighbours.
func checkNeighbours(n, k int, nbr []int32) error {
	var seen []int32 // K > longRow: seen[b] = a marks b as listed by a (a scan was O(n K^2))
	if k > longRow {
		seen = make([]int32, n)
		for i := range seen {
			seen[i] = -1
		}
	}
	for a := 0; a < n; a++ {
		row := nbr[a*k : a*k+k]
		for j, b := range row {
			if b < 0 || int(b) >= n {
				return fmt.Errorf("sparse: neighbour graph: neighbour %d of point %d is %d, outside [0, %d)", j, a, b, n)
			}
			if int(b) == a {
				return fmt.Errorf("sparse: neighbour graph: point %d lists itself as neighbour %d", a, j)
			}
			dup := false
			if seen != nil {
				dup, seen[b] = seen[b] == int32(a), int32(a)
			} else {
				dup = slices.Contains(row[:j], b)
			}
			if dup {
				return fmt.Errorf("sparse: neighbour graph: point %d lists neighbour %d twice", a, b)
			}
		}
	}
	return nil
}

// reverseSlots returns the reverse adjacency of the neighbour lists nbr by counting sort: the
// slots s with nbr[s] = a are rev[revPtr[a]:revPtr[a+1]], ascending.
func reverseSlots(n int, nbr []int32) (revPtr, rev []int32) {
	revPtr = make([]int32, n+1)
	for _, b := range nbr {
		revPtr[b+1]++
	}
	for a := 0; a < n; a++ {
		revPtr[a+1] += revPtr[a]
	}
	rev = make([]int32, len(nbr))
	next := make([]int32, n)
	copy(next, revPtr[:n])
	for s, b := range nbr {
		rev[next[b]] = int32(s)
		next[b]++
	}
	return revPtr, rev
}

// relabelGraph returns the neighbour lists in the numbering of order and label (row r lists
// point order[r]'s neighbours by their labels), built on workers goroutines.
func relabelGraph(n, k int, nbr, order, label []int32, workers int) []int32 {
	out := make([]int32, n*k)
	_ = parallel.For(context.Background(), n, workers, func(_ context.Context, _, lo, hi int) error {
		for r := lo; r < hi; r++ {
			i := int(order[r])
			dst := out[r*k : r*k+k]
			for j, b := range nbr[i*k : i*k+k] {
				dst[j] = label[b]
			}
		}
		return nil
	})
	return out
}

// bfsOrder numbers the points in breadth-first order of the undirected neighbour graph
// (neighbours and reverse neighbours, in list order), each component from its lowest-numbered
// point: order[r] is the point numbered r, label[i] the number of point i; comps is the
// number of connected components.
func bfsOrder(n, k int, nbr []int32) (order, label []int32, comps int) {
	revPtr, rev := reverseSlots(n, nbr)
	for q, s := range rev {
		rev[q] = s / int32(k)
	}
	label = make([]int32, n)
	for i := range label {
		label[i] = -1
	}
	order = make([]int32, 0, n)
	visit := func(u int32) {
		if label[u] < 0 {
			label[u] = int32(len(order))
			order = append(order, u)
		}
	}
	for s := 0; s < n; s++ {
		if label[s] >= 0 {
			continue
		}
		comps++
		visit(int32(s))
		for h := len(order) - 1; h < len(order); h++ {
			v := order[h]
			for _, u := range nbr[int(v)*k : int(v)*k+k] {
				visit(u)
			}
			for _, u := range rev[revPtr[v]:revPtr[v+1]] {
				visit(u)
			}
		}
	}
	return order, label, comps
}

// Components returns the number of connected components of the neighbour graph (neighbours
// and reverse neighbours), counted by NewMPatternLocal's breadth-first relabelling; 0 for a
// pattern from NewMPattern, which does not traverse the graph.
func (p *MPattern) Components() int { return p.components }

// graph returns the adjacency graph of M's pattern (each row without its diagonal, which
// every row holds: row a is the union of S_i over i in {a} ∪ R(a), and a is in S_a), the
// graph buildGraphCount forms from it, on workers goroutines writing disjoint rows.
func (p *MPattern) graph(workers int) *graph {
	return patternGraph(p.n, p.rowPtr, p.colIdx, workers)
}

// patternGraph returns the adjacency graph of a symmetric CSR pattern whose every row holds
// its diagonal entry (the rows without it), built on workers goroutines writing disjoint rows.
func patternGraph(n int, rowPtr []int, colIdx []int32, workers int) *graph {
	xadj := make([]int, n+1)
	for i := range xadj {
		xadj[i] = rowPtr[i] - i
	}
	adj := make([]int32, xadj[n])
	_ = parallel.For(context.Background(), n, workers, func(_ context.Context, _, lo, hi int) error {
		for a := lo; a < hi; a++ {
			out := adj[xadj[a]:xadj[a+1]]
			j := 0
			for _, c := range colIdx[rowPtr[a]:rowPtr[a+1]] {
				if int(c) != a {
					out[j] = c
					j++
				}
			}
		}
		return nil
	})
	return &graph{n: n, xadj: xadj, adj: adj}
}

// reorderRows returns dst (reallocated when its length is not len(w)) holding the k-vectors of w
// in the stored-row order: row r is w's row order[r].
func reorderRows(ctx context.Context, dst, w []float64, order []int32, k, workers int) []float64 {
	if len(dst) != len(w) {
		dst = make([]float64, len(w))
	}
	_ = parallel.For(ctx, len(order), workers, func(_ context.Context, _, lo, hi int) error {
		for r := lo; r < hi; r++ {
			i := int(order[r])
			copy(dst[r*k:r*k+k], w[i*k:i*k+k])
		}
		return nil
	})
	return dst
}

// Order returns the point of each stored row (nil: the input order, NewMPattern).
func (p *MPattern) Order() []int32 { return p.order }

// ToInternal sets dst (length n, stored-row order) to the point-order vector x
// (ToInternalCols for one column).
func (p *MPattern) ToInternal(dst, x []float64) {
	if len(dst) != p.n || len(x) != p.n {
		panic("sparse: MPattern.ToInternal: length mismatch")
	}
	toInternalCols(p.label, p.n, p.workers, [][]float64{dst}, x)
}

// ToInternalCols is BPattern.ToInternalCols for M's relabelling.
func (p *MPattern) ToInternalCols(dst [][]float64, x []float64) {
	toInternalCols(p.label, p.n, p.workers, dst, x)
}

// FromInternalCols is BPattern.FromInternalCols for M's relabelling.
func (p *MPattern) FromInternalCols(dst []float64, x [][]float64) {
	fromInternalCols(p.order, p.n, p.workers, dst, x)
}

// FromInternal sets dst (length n, point order) to the stored-row-order vector x
// (FromInternalCols for one column).
func (p *MPattern) FromInternal(dst, x []float64) {
	if len(dst) != p.n || len(x) != p.n {
		panic("sparse: MPattern.FromInternal: length mismatch")
	}
	fromInternalCols(p.order, p.n, p.workers, dst, [][]float64{x})
}

func (p *MPattern) ensureScratch(workers int) {
	for len(p.mark) < workers {
		p.mark = append(p.mark, make([]int32, p.n))
	}
}

// Fill computes the values of M = (I - W)^T (I - W) (paper Eq. (39)) for the weights w (n*k,
// aligned with the neighbour graph: W[i, nbr[i*k+j]] = w[i*k+j]) into the pattern's own value
// slice, overwriting the previous values. Row a of M is accumulated as
// sum_{i ∈ {a} ∪ R(a), ascending i} v_i[a] v_i, v_i = e_i - w_i the rows of I - W, so the
// summation order is fixed: the values are bit-identical for any worker count and M is exactly
// symmetric. workers <= 0 means GOMAXPROCS. Non-finite weights (or values overflowing to an
// infinity) return an error wrapping ErrNonFinite that names the smallest point, in the
// caller's numbering, whose row of M is not finite (the same for any worker count); the values
// are then unspecified.
func (p *MPattern) Fill(ctx context.Context, w []float64, workers int) error {
	n, k := p.n, p.k
	if len(w) != n*k {
		return fmt.Errorf("sparse: Fill: len(w) = %d, want n*k = %d", len(w), n*k)
	}
	workers = parallel.Workers(workers)
	if workers > n {
		workers = n
	}
	if p.order != nil {
		// Weights in stored-row order: row r of W belongs to point order[r].
		p.wbuf = reorderRows(ctx, p.wbuf, w, p.order, k, workers)
		if err := ctx.Err(); err != nil {
			return err
		}
		w = p.wbuf
	}
	p.ensureScratch(workers)
	nbr, rowPtr, colIdx, val := p.nbr, p.rowPtr, p.colIdx, p.val
	revPtr, revIdx := p.revPtr, p.revIdx
	if p.pos != nil {
		return p.fillPlanned(ctx, w, workers)
	}
	bad := p.resetBad(workers)
	err := parallel.For(ctx, n, workers, func(ctx context.Context, wk, lo, hi int) error {
		mark := p.mark[wk]
		for a := lo; a < hi; a++ {
			if (a-lo)&1023 == 0 {
				if err := ctx.Err(); err != nil {
					return err
				}
			}
			base := rowPtr[a]
			cols := colIdx[base:rowPtr[a+1]]
			vals := val[base:rowPtr[a+1]:rowPtr[a+1]]
			for t, c := range cols {
				mark[c] = int32(t)
				vals[t] = 0
			}
			// Contributors i in ascending order, a itself merged into R(a): vals += v_i[a] v_i.
			rev := revIdx[revPtr[a]:revPtr[a+1]]
			self := false
			for r := 0; r < len(rev) || !self; {
				var i int
				var c float64
				if !self && (r == len(rev) || int(rev[r])/k > a) {
					i, c, self = a, 1, true
				} else {
					s := int(rev[r])
					i, c = s/k, -w[s]
					r++
				}
				vals[mark[i]] += c
				ws := w[i*k : i*k+k]
				for j, b := range nbr[i*k : i*k+k] {
					vals[mark[b]] -= c * ws[j]
				}
			}
			if !finite(vals) {
				bad[wk] = min(bad[wk], p.point(a))
			}
		}
		return nil
	})
	return p.badErr(err, bad)
}

// resetBad returns the per-worker record of non-finite rows for a Fill on workers goroutines,
// every entry n (none). A failing row does not stop its worker, so that every row is checked
// and the reported point does not depend on which worker fails first.
func (p *MPattern) resetBad(workers int) []int {
	if len(p.bad) < workers {
		p.bad = make([]int, workers)
	}
	bad := p.bad[:workers]
	for i := range bad {
		bad[i] = p.n
	}
	return bad
}

// badErr returns Fill's error: err (the context's) if set, else the non-finite row error for
// the smallest point bad records, else nil.
func (p *MPattern) badErr(err error, bad []int) error {
	if err != nil {
		return err
	}
	if i := slices.Min(bad); i < p.n {
		return fmt.Errorf("sparse: Fill: row of M for point %d: %w", i, ErrNonFinite)
	}
	return nil
}

// point returns the caller's number of stored row a.
func (p *MPattern) point(a int) int {
	if p.order == nil {
		return a
	}
	return int(p.order[a])
}

// finite reports whether every value of v is finite.
func finite(v []float64) bool {
	for _, x := range v {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return false
		}
	}
	return true
}

// PrepareRefill precomputes, for every row of M, where each contribution of Fill lands, so that
// later Fill calls (every GLLE generation) skip the neighbour lists and the column lookups:
// about 2(k+1)^2 bytes per point. The values Fill computes are bit-identical with and without
// the plan (same operations in the same order). Rows longer than 65535 entries (extreme hubs)
// keep the plain Fill.
func (p *MPattern) PrepareRefill(ctx context.Context, workers int) error {
	n, k := p.n, p.k
	if p.pos != nil {
		return nil
	}
	for a := 0; a < n; a++ {
		if p.rowPtr[a+1]-p.rowPtr[a] > math.MaxUint16 {
			return nil
		}
	}
	posPtr := make([]int64, n+1)
	for a := 0; a < n; a++ {
		posPtr[a+1] = posPtr[a] + int64((1+p.revPtr[a+1]-p.revPtr[a])*(k+1))
	}
	pos := make([]uint16, posPtr[n])
	workers = parallel.Workers(workers)
	if workers > n {
		workers = n
	}
	p.ensureScratch(workers)
	err := parallel.For(ctx, n, workers, func(ctx context.Context, wk, lo, hi int) error {
		mark := p.mark[wk]
		for a := lo; a < hi; a++ {
			if (a-lo)&1023 == 0 {
				if err := ctx.Err(); err != nil {
					return err
				}
			}
			for t, c := range p.colIdx[p.rowPtr[a]:p.rowPtr[a+1]] {
				mark[c] = int32(t)
			}
			q := posPtr[a]
			rev := p.revIdx[p.revPtr[a]:p.revPtr[a+1]]
			self := false
			for r := 0; r < len(rev) || !self; {
				var i int
				if !self && (r == len(rev) || int(rev[r])/k > a) {
					i, self = a, true
				} else {
					i = int(rev[r]) / k
					r++
				}
				pos[q] = uint16(mark[i])
				q++
				for _, b := range p.nbr[i*k : i*k+k] {
					pos[q] = uint16(mark[b])
					q++
				}
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	p.posPtr, p.pos = posPtr, pos
	return nil
}

// fillPlanned is Fill with the refill plan: the same operations in the same order.
func (p *MPattern) fillPlanned(ctx context.Context, w []float64, workers int) error {
	n, k := p.n, p.k
	rowPtr, val, revPtr, revIdx, posPtr, pos := p.rowPtr, p.val, p.revPtr, p.revIdx, p.posPtr, p.pos
	bad := p.resetBad(workers)
	err := parallel.For(ctx, n, workers, func(ctx context.Context, wk, lo, hi int) error {
		for a := lo; a < hi; a++ {
			if (a-lo)&1023 == 0 {
				if err := ctx.Err(); err != nil {
					return err
				}
			}
			vals := val[rowPtr[a]:rowPtr[a+1]]
			clear(vals)
			pa := pos[posPtr[a]:posPtr[a+1]]
			q := 0
			rev := revIdx[revPtr[a]:revPtr[a+1]]
			self := false
			for r := 0; r < len(rev) || !self; {
				var i int
				var c float64
				if !self && (r == len(rev) || int(rev[r])/k > a) {
					i, c, self = a, 1, true
				} else {
					s := int(rev[r])
					i, c = s/k, -w[s]
					r++
				}
				vals[pa[q]] += c
				q++
				for _, wj := range w[i*k : i*k+k] {
					vals[pa[q]] -= c * wj
					q++
				}
			}
			if !finite(vals) {
				bad[wk] = min(bad[wk], p.point(a))
			}
		}
		return nil
	})
	return p.badErr(err, bad)
}

// N is the order of M.
func (p *MPattern) N() int { return p.n }

// K is the number of neighbours per point.
func (p *MPattern) K() int { return p.k }

// NNZ is the number of stored entries of M (both triangles).
func (p *MPattern) NNZ() int { return p.rowPtr[p.n] }

// RowPtr returns the CSR row pointers (length n+1). The slice is the pattern's own storage.
func (p *MPattern) RowPtr() []int { return p.rowPtr }

// ColIdx returns the CSR column indices, sorted within each row (both triangles). The slice is
// the pattern's own storage.
func (p *MPattern) ColIdx() []int32 { return p.colIdx }

// Values returns the CSR values, aligned with ColIdx; Fill overwrites them in place.
func (p *MPattern) Values() []float64 { return p.val }

// CSR returns M as a github.com/james-bowman/sparse CSR matrix: over the pattern's own row
// pointers and values (later Fill calls show through it) and a copy of the column indices,
// which the pattern stores as int32.
func (p *MPattern) CSR() *bsparse.CSR {
	cols := make([]int, len(p.colIdx)) // the package's int indices: a copy
	for i, c := range p.colIdx {
		cols[i] = int(c)
	}
	return bsparse.NewCSR(p.n, p.n, p.rowPtr, cols, p.val)
}

// Matrix returns M as a CSRMatrix over the pattern's own slices (no copy).
func (p *MPattern) Matrix() CSRMatrix {
	return CSRMatrix{Dim: p.n, RowPtr: p.rowPtr, ColIdx: p.colIdx, Val: p.val}
}

// MulVec sets dst = M x. dst and x must have length n and must not overlap.
func (p *MPattern) MulVec(dst, x []float64) { p.Matrix().MulVec(dst, x) }

// NormInf is the largest absolute row sum of M, an upper bound of its 2-norm.
func (p *MPattern) NormInf() float64 { return p.Matrix().NormInf() }

// Memory is the number of bytes held by the pattern (CSR arrays, reverse graph and scratch),
// excluding the referenced neighbour slice of NewMPattern.
func (p *MPattern) Memory() int {
	b := 8*len(p.rowPtr) + 4*len(p.colIdx) + 8*len(p.val) + 8*len(p.revPtr) + 4*len(p.revIdx) +
		8*len(p.posPtr) + 2*len(p.pos) + 4*len(p.order) + 4*len(p.label) + 8*len(p.wbuf)
	if p.order != nil {
		b += 4 * len(p.nbr) // the relabelled neighbour graph is owned
	}
	for _, m := range p.mark {
		b += 4 * len(m)
	}
	return b
}

// CSRMatrix is a square matrix in CSR form with sorted column indices. For the eigensolver it
// must be symmetric and stored with both triangles.
type CSRMatrix struct {
	Dim    int       // order of the matrix
	RowPtr []int     // Dim+1 row pointers
	ColIdx []int32   // column indices, sorted within each row
	Val    []float64 // values aligned with ColIdx
}

// NewCSRMatrix returns the square github.com/james-bowman/sparse CSR matrix c as a CSRMatrix
// (for NewShiftInvert and Analyze). Its row pointers are shared and its column indices copied
// to int32; its values are shared when every row's indices are sorted, else copied and sorted
// with them (c itself is never modified). It returns an error for a non-square matrix or an
// order beyond the int32 index range.
func NewCSRMatrix(c *bsparse.CSR) (CSRMatrix, error) {
	r, cols := c.Dims()
	if r != cols {
		return CSRMatrix{}, fmt.Errorf("sparse: NewCSRMatrix: %d x %d matrix is not square", r, cols)
	}
	if r > math.MaxInt32 {
		return CSRMatrix{}, fmt.Errorf("sparse: NewCSRMatrix: order %d beyond the int32 index range", r)
	}
	raw := c.RawMatrix()
	a := CSRMatrix{Dim: r, RowPtr: raw.Indptr, ColIdx: make([]int32, len(raw.Ind)), Val: raw.Data}
	for i, j := range raw.Ind {
		a.ColIdx[i] = int32(j)
	}
	copied := false
	for i := 0; i < r; i++ {
		lo, hi := a.RowPtr[i], a.RowPtr[i+1]
		if !slices.IsSorted(a.ColIdx[lo:hi]) {
			if !copied {
				a.Val, copied = slices.Clone(a.Val), true
			}
			sortRow(a.ColIdx[lo:hi], a.Val[lo:hi])
		}
	}
	return a, nil
}

// sortRow sorts a row's column indices, moving the values along.
func sortRow(cols []int32, vals []float64) {
	idx := make([]int, len(cols))
	for t := range idx {
		idx[t] = t
	}
	slices.SortFunc(idx, func(a, b int) int { return int(cols[a]) - int(cols[b]) })
	c2, v2 := slices.Clone(cols), slices.Clone(vals)
	for t, q := range idx {
		cols[t], vals[t] = c2[q], v2[q]
	}
}

// N is the order of the matrix.
func (a CSRMatrix) N() int { return a.Dim }

// MulVec sets dst = A x. dst and x must have length N and must not overlap.
func (a CSRMatrix) MulVec(dst, x []float64) {
	if len(dst) != a.Dim || len(x) != a.Dim {
		panic("sparse: CSRMatrix.MulVec: length mismatch")
	}
	a.mulRows(dst, x, 0, a.Dim)
}

// mulRows sets dst[i] = (A x)_i for the rows i in [lo, hi).
func (a CSRMatrix) mulRows(dst, x []float64, lo, hi int) {
	for i := lo; i < hi; i++ {
		rlo, rhi := a.RowPtr[i], a.RowPtr[i+1]
		cols := a.ColIdx[rlo:rhi]
		vals := a.Val[rlo:rhi:rhi]
		s := 0.0
		for t, c := range cols {
			s += vals[t] * x[c]
		}
		dst[i] = s
	}
}

// NormInf is the largest absolute row sum of the matrix (for symmetric matrices an upper bound of
// the 2-norm).
func (a CSRMatrix) NormInf() float64 {
	m := 0.0
	for i := 0; i < a.Dim; i++ {
		s := 0.0
		for _, v := range a.Val[a.RowPtr[i]:a.RowPtr[i+1]] {
			s += math.Abs(v)
		}
		m = max(m, s)
	}
	return m
}

// AssembleW builds W in CSR form with sorted column indices: W[i, nbr[i*k+j]] = w[i*k+j]
// (paper Eq. (39) uses I - W). The arrays are new. nbr must satisfy the NewMPattern rules
// (checked).
func AssembleW(n, k int, nbr []int32, w []float64) (*bsparse.CSR, error) {
	if err := checkGraph(n, k, nbr); err != nil {
		return nil, err
	}
	if len(w) != n*k {
		return nil, fmt.Errorf("sparse: AssembleW: len(w) = %d, want n*k = %d", len(w), n*k)
	}
	rowPtr := make([]int, n+1)
	colIdx := make([]int, n*k)
	val := make([]float64, n*k)
	ord := make([]int, k)
	for i := 0; i < n; i++ {
		rowPtr[i+1] = (i + 1) * k
		row := nbr[i*k : i*k+k]
		for j := range ord {
			ord[j] = j
		}
		slices.SortFunc(ord, func(x, y int) int { return int(row[x]) - int(row[y]) })
		for t, j := range ord {
			colIdx[i*k+t] = int(row[j])
			val[i*k+t] = w[i*k+j]
		}
	}
	return bsparse.NewCSR(n, n, rowPtr, colIdx, val), nil
}
