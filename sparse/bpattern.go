package sparse

import (
	"context"
	"fmt"
	"math"
	"slices"

	"glle/parallel"
)

// BPattern is the sparsity pattern of B + B^T for B = I - W, the matrix whose Gram matrix is
// M = B^T B (paper Eq. (39)), with the points relabelled in the breadth-first order of
// NewMPatternLocal (the same relabelling, so vectors map the same way). Row a holds a itself,
// its neighbours N(a) and the points that have a as a neighbour, sorted: on a kNN graph about
// 12 entries per row against M's 30, so its fill under a Cholesky-type elimination is several
// times smaller (Swiss roll, n = 200k, k = 10: about 49 entries of L per row against M's 163).
// Fill computes the values of B and of B^T in this one pattern, which is what the LU
// factorization (LUFactor) reads; MulVec applies M = B^T B without forming it.
//
// A BPattern is not safe for concurrent use.
type BPattern struct {
	n, k         int
	order, label []int32      // row r is point order[r]; point i is row label[i]
	nbr          []int32      // n*k neighbours in internal labels
	comps        int          // connected components of the neighbour graph
	rowPtr       []int        // n+1
	colIdx       []int32      // sorted within each row, diagonal included
	fwd          []int32      // per entry (a, c): slot s = a*k+j with nbr[s] = c (B[a][c] = -w[s]); slotNone(n, k) none, slotDiag(n, k) diagonal
	rev          []int32      // per entry (a, c): slot s = c*k+j with nbr[s] = a (B[c][a] = -w[s]); slotNone(n, k) none, slotDiag(n, k) diagonal
	val          []float64    // B[a][c] per entry
	valT         []float64    // B[c][a] per entry
	wbuf         []float64    // weights in internal order, then 0 (slot none) and -1 (slot diag): B[a][c] = 0 - wbuf[fwd] for every entry
	tmp          []float64    // MulVec scratch
	tmpV         [][]float64  // MulVecs scratch: the views of tmp
	one          [2][]float64 // MulVec scratch: dst and x as one-vector lists (cleared after use)
	normM        float64      // ||B^T B||_inf of the current values, -1 until NormInf computes it
	workers      int
	r1, bound    []float64     // per row: ||B[i][:]||_1 and NormInf's row-sum bound (set by Fill)
	boundOK      bool          // bound holds the current values' bounds (a Fill succeeded)
	row          normScratch   // rowSum scratch: a dense row accumulator (sized on first use)
	cand         []int32       // NormInf scratch: candidate rows, capacity normCandMax+1
	norm         []normScratch // normAll scratch, one per worker (sized on first use)
	normMax      []float64     // normAll scratch: each worker's largest row sum
	bad          []int         // Fill scratch: per worker, the smallest point with a non-finite weight
}

// NewBPattern builds the pattern of B + B^T for the neighbour graph nbr (n*k entries, as for
// NewMPattern; invalid graphs return an error) in breadth-first order, on workers goroutines;
// the result does not depend on their number. Values are zero until Fill is called.
func NewBPattern(ctx context.Context, n, k int, nbr []int32, workers int) (*BPattern, error) {
	if err := checkGraph(n, k, nbr); err != nil {
		return nil, err
	}
	workers = parallel.Workers(workers)
	order, label, comps := bfsOrder(n, k, nbr)
	b := &BPattern{n: n, k: k, order: order, label: label, comps: comps, workers: workers,
		nbr: relabelGraph(n, k, nbr, order, label, workers), rowPtr: make([]int, n+1), normM: -1}
	nb := b.nbr
	revPtr, revIdx := reverseSlots(n, nb)
	// Each worker builds its contiguous range of rows into its own buffers; the row lengths
	// then fix the offsets and the buffers are copied into place.
	type part struct {
		cols, fw, rv []int32
	}
	nw := min(workers, n)
	parts := make([]part, nw)
	if int64(n)*int64(k)+2 > math.MaxInt32 {
		return nil, fmt.Errorf("sparse: NewBPattern: n*k = %d weights exceed the 32-bit index range", n*k)
	}
	none, diag := slotNone(n, k), slotDiag(n, k)
	err := parallel.For(ctx, n, nw, func(ctx context.Context, w, lo, hi int) error {
		pt := &parts[w]
		est := (hi - lo) * (2*k + 2)
		pt.cols = make([]int32, 0, est)
		pt.fw = make([]int32, 0, est)
		pt.rv = make([]int32, 0, est)
		// With K above longRow the rows are long: a point's position among a's neighbours
		// comes from pos (stamped by a) instead of a scan of the K of them, and rows are
		// sorted through a permutation instead of by insertion; both were O(n K^2) (1.9 s at
		// n = 1500, K = 1499).
		var pos, stamp, perm []int32
		var tmp []int32
		if k > longRow {
			pos, stamp = make([]int32, n), make([]int32, n)
			for i := range stamp {
				stamp[i] = -1
			}
		}
		for a := lo; a < hi; a++ {
			if (a-lo)&4095 == 0 {
				if err := ctx.Err(); err != nil {
					return err
				}
			}
			start := len(pt.cols)
			pt.cols = append(pt.cols, int32(a))
			pt.fw = append(pt.fw, diag)
			pt.rv = append(pt.rv, diag)
			for j, c := range nb[a*k : a*k+k] {
				pt.cols = append(pt.cols, c)
				pt.fw = append(pt.fw, int32(a*k+j))
				pt.rv = append(pt.rv, none)
			}
			own := pt.cols[start+1 : start+1+k]
			if pos != nil {
				for q, c := range own {
					pos[c], stamp[c] = int32(q), int32(a)
				}
			}
			for _, s := range revIdx[revPtr[a]:revPtr[a+1]] {
				i := s / int32(k)
				q := -1
				if pos == nil {
					q = slices.Index(own, i)
				} else if stamp[i] == int32(a) {
					q = int(pos[i])
				}
				if q >= 0 {
					pt.rv[start+1+q] = s
					continue
				}
				pt.cols = append(pt.cols, i)
				pt.fw = append(pt.fw, none)
				pt.rv = append(pt.rv, s)
			}
			cols, fw, rv := pt.cols[start:], pt.fw[start:], pt.rv[start:]
			if len(cols) > 2*longRow {
				// Columns are distinct: sort a permutation by them, then apply it.
				perm = perm[:0]
				for x := range cols {
					perm = append(perm, int32(x))
				}
				slices.SortFunc(perm, func(x, y int32) int { return int(cols[x] - cols[y]) })
				for _, arr := range [][]int32{cols, fw, rv} {
					tmp = append(tmp[:0], arr...)
					for x, p := range perm {
						arr[x] = tmp[p]
					}
				}
			} else {
				for x := 1; x < len(cols); x++ { // insertion sort: rows are short
					for y := x; y > 0 && cols[y] < cols[y-1]; y-- {
						cols[y], cols[y-1] = cols[y-1], cols[y]
						fw[y], fw[y-1] = fw[y-1], fw[y]
						rv[y], rv[y-1] = rv[y-1], rv[y]
					}
				}
			}
			b.rowPtr[a+1] = len(cols)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	for a := 0; a < n; a++ {
		b.rowPtr[a+1] += b.rowPtr[a]
	}
	nnz := b.rowPtr[n]
	if nnz > math.MaxInt32 {
		return nil, fmt.Errorf("sparse: NewBPattern: %d entries exceed the 32-bit index range", nnz)
	}
	b.colIdx = make([]int32, nnz)
	b.fwd = make([]int32, nnz)
	b.rev = make([]int32, nnz)
	b.val = make([]float64, nnz)
	b.valT = make([]float64, nnz)
	_ = parallel.For(context.Background(), nw, nw, func(_ context.Context, _, lo, hi int) error {
		for w := lo; w < hi; w++ {
			o := b.rowPtr[w*n/nw] // part w covers rows [w*n/nw, (w+1)*n/nw) (parallel.For's split)
			copy(b.colIdx[o:], parts[w].cols)
			copy(b.fwd[o:], parts[w].fw)
			copy(b.rev[o:], parts[w].rv)
		}
		return nil
	})
	return b, nil
}

// slotNone and slotDiag are the slots fwd and rev name for an entry that B (or B^T) does not
// hold and for the diagonal: Fill stores 0 and -1 there, so that every entry's value is
// 0 - wbuf[slot] without a branch.
func slotNone(n, k int) int32 { return int32(n * k) }
func slotDiag(n, k int) int32 { return int32(n*k + 1) }

// Components returns the number of connected components of the neighbour graph (neighbours and
// reverse neighbours).
func (b *BPattern) Components() int { return b.comps }

// ToInternal sets dst (length n, internal order) to the point-order vector x (ToInternalCols
// for one column).
func (b *BPattern) ToInternal(dst, x []float64) {
	if len(dst) != b.n || len(x) != b.n {
		panic("sparse: BPattern.ToInternal: length mismatch")
	}
	toInternalCols(b.label, b.n, b.workers, [][]float64{dst}, x)
}

// FromInternal sets dst (length n, point order) to the internal-order vector x
// (FromInternalCols for one column).
func (b *BPattern) FromInternal(dst, x []float64) {
	if len(dst) != b.n || len(x) != b.n {
		panic("sparse: BPattern.FromInternal: length mismatch")
	}
	fromInternalCols(b.order, b.n, b.workers, dst, [][]float64{x})
}

// ToInternalCols sets each dst[j] (length n, internal order) to column j of the row-major
// n x len(dst) point-order matrix x, in one pass on the pattern's workers.
func (b *BPattern) ToInternalCols(dst [][]float64, x []float64) {
	toInternalCols(b.label, b.n, b.workers, dst, x)
}

// FromInternalCols sets the row-major n x len(x) point-order matrix dst from the internal-order
// columns x[j], in one pass on the pattern's workers.
func (b *BPattern) FromInternalCols(dst []float64, x [][]float64) {
	fromInternalCols(b.order, b.n, b.workers, dst, x)
}

// N returns the order of B.
func (b *BPattern) N() int { return b.n }

// NNZ returns the number of stored entries of the pattern.
func (b *BPattern) NNZ() int { return b.rowPtr[b.n] }

// Fill sets the values of B = I - W for the weights w (n*k, point order, aligned with the
// neighbour graph as for MPattern.Fill). Non-finite weights return an error wrapping
// ErrNonFinite that names the smallest point, in the caller's numbering, with a non-finite
// weight (the same for any worker count). The same two passes compute NormInf's row-sum
// bounds (see there), which then costs only its exact sums.
func (b *BPattern) Fill(ctx context.Context, w []float64, workers int) error {
	n, k := b.n, b.k
	if len(w) != n*k {
		return fmt.Errorf("sparse: BPattern.Fill: len(w) = %d, want n*k = %d", len(w), n*k)
	}
	if len(b.wbuf) != n*k+2 {
		b.wbuf = make([]float64, n*k+2)
		b.wbuf[slotDiag(n, k)] = -1 // B[a][a] = 0 - (-1); slotNone's 0 gives 0
	}
	if len(b.bound) != n {
		b.bound = make([]float64, n)
		b.r1 = make([]float64, n)
	}
	b.normM, b.boundOK = -1, false
	wb, r1, bound := b.wbuf, b.r1, b.bound
	// The weights in internal order, and each row's ||B[i][:]||_1 = 1 + sum_j |w_ij|: the points
	// are read in their order and their rows written to their labels (scattered stores do not
	// stall the loop as scattered loads do).
	err := parallel.For(ctx, n, workers, func(_ context.Context, _, lo, hi int) error {
		for i := lo; i < hi; i++ {
			r := int(b.label[i])
			src := w[i*k : i*k+k]
			copy(wb[r*k:r*k+k], src)
			s := 1.0
			for _, v := range src {
				s += math.Abs(v)
			}
			r1[r] = s
		}
		return nil
	})
	if err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	// Every entry without a branch: the diagonal's slots hold -1 and the missing entries' 0, so
	// the diagonal adds |-1| ||B[a][:]||_1 = r1[a] to the bound and a missing B[c][a] nothing.
	// A row with a non-finite value does not stop its worker: each records the smallest such
	// point, so that the one reported does not depend on which worker meets one first.
	nw := parallel.Workers(workers)
	if len(b.bad) < nw {
		b.bad = make([]int, nw)
	}
	bad := b.bad[:nw]
	for i := range bad {
		bad[i] = n
	}
	err = parallel.For(ctx, n, workers, func(ctx context.Context, wk, lo, hi int) error {
		for a := lo; a < hi; a++ {
			u := 0.0
			chk := 0.0 // sum of the row's values: not finite if one of them is not (checked once)
			q0, q1 := b.rowPtr[a], b.rowPtr[a+1]
			fw, rv, cols := b.fwd[q0:q1], b.rev[q0:q1], b.colIdx[q0:q1]
			val, valT := b.val[q0:q1], b.valT[q0:q1]
			rv, cols, val, valT = rv[:len(fw)], cols[:len(fw)], val[:len(fw)], valT[:len(fw)]
			for q, f := range fw {
				v := 0 - wb[f]
				wr := wb[rv[q]]
				u += math.Abs(wr) * r1[cols[q]]
				chk += v
				val[q], valT[q] = v, 0-wr
			}
			// NaN or an infinity; or an overflow of finite values. Row a's values are point
			// order[a]'s weights (and the diagonal's 1).
			if chk-chk != 0 && !finite(val) {
				bad[wk] = min(bad[wk], int(b.order[a]))
			}
			bound[a] = u
		}
		return nil
	})
	if err != nil {
		return err
	}
	if i := slices.Min(bad); i < n {
		return fmt.Errorf("sparse: BPattern.Fill: weight of point %d: %w", i, ErrNonFinite)
	}
	b.boundOK = true
	// The norm now, under ctx: with K large against n its exact row sums cost about
	// n K^2 (27 s at n = 2000, K = 1999), which NormInf, without a context, could not stop.
	if _, err := b.normInf(ctx); err != nil {
		b.boundOK = false
		return err
	}
	return nil
}

// longRow is the K above which NewBPattern and checkNeighbours switch from scans of a
// point's K neighbours (fast for the usual K of 5-30) to lookups in an n-sized array.
const longRow = 32

// MulVec sets dst = M x = B^T (B x) (internal order) with the current values, on the
// pattern's workers; the result does not depend on their number. It implements SymMatrix.
func (b *BPattern) MulVec(dst, x []float64) {
	b.one = [2][]float64{dst, x}
	b.MulVecs(b.one[0:1], b.one[1:2])
	b.one = [2][]float64{} // keep no reference to the caller's vectors
}

// MulVecs sets dst[t] = M x[t] for every t in one pass over B's entries and one over B^T's.
// Two vectors are interleaved first, so that each column's gather reads both in one cache
// line; the sums keep the single-vector order (the same bits).
func (b *BPattern) MulVecs(dst, x [][]float64) {
	n := b.n
	if len(x) == 2 && len(dst) == 2 {
		b.mulVecs2(dst, x)
		return
	}
	if len(b.tmp) < n*len(x) {
		b.tmp = make([]float64, n*len(x))
	}
	if len(b.tmpV) < len(x) {
		b.tmpV = make([][]float64, len(x))
	}
	tmp := b.tmpV[:len(x)]
	for t := range x {
		if len(dst[t]) != n || len(x[t]) != n {
			panic("sparse: BPattern.MulVecs: length mismatch")
		}
		tmp[t] = b.tmp[t*n : (t+1)*n]
	}
	b.mul(tmp, x, b.val)
	b.mul(dst, tmp, b.valT)
}

// NormInf returns ||M||_inf = max_a sum_c |M[a][c]| for M = B^T B with the current values,
// computed once per Fill. Row a of M is the sum of B[i][a] B[i][:] over its contributors: i = a
// (B[a][a] = 1) and the points i having a as a neighbour (B[i][a] = -w_i,a). The triangle
// inequality bounds its absolute sum by U_a = sum_i |B[i][a]| ||B[i][:]||_1, which Fill computes
// in its passes over the entries; the exact sums are computed only for the rows whose bound is
// not below the largest exact sum found, in decreasing order of the bound (usually a handful of
// rows; every row, on the workers, when more than normCandMax or n/8 rows could hold it). Fill
// computes it, under its context. It implements SymMatrix.
func (b *BPattern) NormInf() float64 {
	if !b.boundOK {
		panic("sparse: BPattern.NormInf before a successful Fill")
	}
	v, _ := b.normInf(context.Background()) // computed by Fill: cached
	return v
}

// normInf computes NormInf once per Fill, returning ctx's error when it is done first.
func (b *BPattern) normInf(ctx context.Context) (float64, error) {
	if b.normM >= 0 {
		return b.normM, nil
	}
	bound := b.bound
	top := 0
	for a, u := range bound {
		if u > bound[top] {
			top = a
		}
	}
	// The exact sum of the row with the largest bound is a first lower bound of the norm; only
	// rows whose bound reaches it can hold the maximum.
	lower := b.rowSum(top)
	if b.cand == nil {
		b.cand = make([]int32, 0, normCandMax+1)
	}
	cand := b.cand[:0]
	many := min(normCandMax, b.n/8)
	for a, u := range bound {
		if u >= lower && a != top {
			if len(cand) > many {
				break // too many: normAll below
			}
			cand = append(cand, int32(a))
		}
	}
	if len(cand) > many {
		v, err := b.normAll(ctx)
		if err != nil {
			return 0, err
		}
		b.normM = v
		return v, nil
	}
	slices.SortFunc(cand, func(x, y int32) int {
		switch {
		case bound[x] > bound[y]:
			return -1
		case bound[x] < bound[y]:
			return 1
		}
		return int(x - y)
	})
	for q, a := range cand {
		if bound[a] < lower {
			break
		}
		if q&63 == 63 {
			if err := ctx.Err(); err != nil {
				return 0, err
			}
		}
		lower = max(lower, b.rowSum(int(a)))
	}
	b.normM = lower
	return lower, nil
}

// normCandMax: NormInf sums every row exactly (normAll) when more rows than this could hold
// the maximum (weights of similar size everywhere).
const normCandMax = 4096

// normCheckWork: normAll checks its context whenever it has done about this many additions
// since the last check (a row costs (1 + its contributors) (K + 1), bounded by its pattern's
// length): every few hundred rows at K = 10, every row when K is close to n. Checking every 256
// rows, as before, let a cancelled norm at K = 999, n = 1000 run on for up to half its length.
const normCheckWork = 1 << 16

// normScratch is one worker's dense row accumulator for normAll: acc[j] is valid for the row
// stamp[j] names, touched lists the columns of the current row.
type normScratch struct {
	acc     []float64
	stamp   []int32
	touched []int32
}

// normAll returns max_a sum_c |M[a][c]| over all rows, each accumulated in a dense per-worker
// array whose entries are claimed by a per-row stamp (at n = 200k about 45 ms on two workers).
// The arrays are allocated on the first call and kept. Its row loop repeats gatherRow's
// inline: calling gatherRow per row made it 14% slower (session 30).
func (b *BPattern) normAll(ctx context.Context) (float64, error) {
	n, k, nw := b.n, b.k, min(b.workers, b.n)
	nb, w, none := b.nbr, b.wbuf, slotNone(b.n, b.k)
	for len(b.norm) < nw {
		b.norm = append(b.norm, normScratch{acc: make([]float64, n), stamp: make([]int32, n),
			touched: make([]int32, 0, 256)})
	}
	if len(b.normMax) < nw {
		b.normMax = make([]float64, nw)
	}
	maxes := b.normMax[:nw]
	err := parallel.For(ctx, n, nw, func(ctx context.Context, wk, lo, hi int) error {
		sc := &b.norm[wk]
		acc, stamp := sc.acc, sc.stamp
		for i := range stamp {
			stamp[i] = -1 // stamps of the last call name rows of this one
		}
		touched := sc.touched[:0]
		mx := 0.0
		work := 0 // bound on the additions since ctx was last checked
		for a := lo; a < hi; a++ {
			if work >= normCheckWork {
				work = 0
				if err := ctx.Err(); err != nil {
					return err
				}
			}
			work += (1 + int(b.rowPtr[a+1]-b.rowPtr[a])) * (k + 1) // at most the row's contributions
			a32 := int32(a)
			touched = touched[:0]
			add := func(j int32, v float64) {
				if stamp[j] != a32 {
					stamp[j] = a32
					acc[j] = v
					touched = append(touched, j)
				} else {
					acc[j] += v
				}
			}
			contrib := func(i int, c float64) {
				add(int32(i), c)
				for j, d := range nb[i*k : i*k+k] {
					add(d, -c*w[i*k+j])
				}
			}
			contrib(a, 1)
			for q := b.rowPtr[a]; q < b.rowPtr[a+1]; q++ {
				if s := b.rev[q]; s < none {
					contrib(int(b.colIdx[q]), -w[s])
				}
			}
			sum := 0.0
			for _, j := range touched {
				sum += math.Abs(acc[j])
			}
			mx = max(mx, sum)
		}
		sc.touched = touched[:0] // keep a grown buffer
		maxes[wk] = mx
		return nil
	})
	if err != nil {
		return 0, err
	}
	return slices.Max(maxes), nil
}

// gatherRow accumulates row a of M = B^T B in sc and returns its columns: acc[j] for each
// returned column j (stamped a), the contributions to a column summed in the order they
// arise. Its cost is the row's (1 + in-degree)(K + 1) contributions. No stamp of sc may
// equal a on entry.
func (b *BPattern) gatherRow(sc *normScratch, a int) []int32 {
	k, w, nb, none := b.k, b.wbuf, b.nbr, slotNone(b.n, b.k)
	acc, stamp, touched := sc.acc, sc.stamp, sc.touched[:0]
	a32 := int32(a)
	// Row a of B^T B sums c * (row i of B) over the rows i with c = B[i][a] != 0: first
	// i = a (c = 1), then the points having a as a neighbour (c = -w). Row i of B is 1 at i
	// and -w at i's neighbours.
	for q := b.rowPtr[a] - 1; q < b.rowPtr[a+1]; q++ {
		i, c := a, 1.0
		if q >= b.rowPtr[a] {
			s := b.rev[q]
			if s >= none {
				continue
			}
			i, c = int(b.colIdx[q]), -w[s]
		}
		if stamp[i] != a32 {
			stamp[i] = a32
			acc[i] = c
			touched = append(touched, int32(i))
		} else {
			acc[i] += c
		}
		for j, d := range nb[i*k : i*k+k] {
			v := -c * w[i*k+j]
			if stamp[d] != a32 {
				stamp[d] = a32
				acc[d] = v
				touched = append(touched, d)
			} else {
				acc[d] += v
			}
		}
	}
	sc.touched = touched // keep a grown buffer
	return touched
}

// rowSum returns sum_c |M[a][c]| exactly: the row gathered by gatherRow, its columns summed
// in the order they first arise, as normAll sums them, so that the two give the same bits and
// NormInf does not depend on which of them ran (they differed in the last bit in 21 of 30
// random patterns while rowSum summed in column order, until session 31). Between calls every
// stamp of the row scratch is -1.
func (b *BPattern) rowSum(a int) float64 {
	if len(b.row.acc) != b.n {
		b.row = normScratch{acc: make([]float64, b.n), stamp: make([]int32, b.n), touched: make([]int32, 0, 256)}
		for i := range b.row.stamp {
			b.row.stamp[i] = -1
		}
	}
	touched := b.gatherRow(&b.row, a)
	sum := 0.0
	for _, j := range touched {
		sum += math.Abs(b.row.acc[j])
		b.row.stamp[j] = -1
	}
	return sum
}

// mul sets dst[t] = A x[t] for the matrix A with values val on the pattern (B or B^T), each
// row's sum in the order of its entries. Blocks of 256 rows are multiplied with every vector
// while their entries are in cache; two rows are summed together, which gives the CPU two
// independent chains of additions.
func (b *BPattern) mul(dst, x [][]float64, val []float64) {
	_ = parallel.For(context.Background(), b.n, b.workers, func(_ context.Context, _, lo, hi int) error {
		for r0 := lo; r0 < hi; r0 += 256 {
			r1 := min(r0+256, hi)
			for t, xt := range x {
				mulRows(dst[t], xt, b.rowPtr, b.colIdx, val, r0, r1)
			}
		}
		return nil
	})
}

// mulVecs2 is MulVecs for two vectors: x interleaved, t2 = B x interleaved, then the
// B^T pass writing both results.
func (b *BPattern) mulVecs2(dst, x [][]float64) {
	n := b.n
	for t := range x {
		if len(dst[t]) != n || len(x[t]) != n {
			panic("sparse: BPattern.MulVecs: length mismatch")
		}
	}
	if len(b.tmp) < 4*n {
		b.tmp = make([]float64, 4*n)
	}
	x2, t2 := b.tmp[:2*n], b.tmp[2*n:4*n]
	x0, x1, d0, d1 := x[0], x[1], dst[0], dst[1]
	_ = parallel.For(context.Background(), n, b.workers, func(_ context.Context, _, lo, hi int) error {
		for a := lo; a < hi; a++ {
			x2[2*a], x2[2*a+1] = x0[a], x1[a]
		}
		return nil
	})
	_ = parallel.For(context.Background(), n, b.workers, func(_ context.Context, _, lo, hi int) error {
		for a := lo; a < hi; a++ {
			s0, s1 := mulRow2(x2, b.colIdx[b.rowPtr[a]:b.rowPtr[a+1]], b.val[b.rowPtr[a]:b.rowPtr[a+1]])
			t2[2*a], t2[2*a+1] = s0, s1
		}
		return nil
	})
	_ = parallel.For(context.Background(), n, b.workers, func(_ context.Context, _, lo, hi int) error {
		for a := lo; a < hi; a++ {
			d0[a], d1[a] = mulRow2(t2, b.colIdx[b.rowPtr[a]:b.rowPtr[a+1]], b.valT[b.rowPtr[a]:b.rowPtr[a+1]])
		}
		return nil
	})
}

// mulRow2 returns sum_q val[q] x2[2 cols[q] + t] for t = 0, 1, each summed in entry order.
func mulRow2(x2 []float64, cols []int32, val []float64) (s0, s1 float64) {
	val = val[:len(cols)]
	for q, c := range cols {
		v := val[q]
		s0 += v * x2[2*c]
		s1 += v * x2[2*c+1]
	}
	return s0, s1
}

// mulRows sets y[a] = sum_q val[q] x[colIdx[q]] over row a's entries q, in order, for the rows
// a in [lo, hi), two rows at a time.
func mulRows(y, x []float64, rowPtr []int, colIdx []int32, val []float64, lo, hi int) {
	a := lo
	for ; a+1 < hi; a += 2 {
		q0, q1, q2 := rowPtr[a], rowPtr[a+1], rowPtr[a+2]
		c0, v0 := colIdx[q0:q1], val[q0:q1]
		c1, v1 := colIdx[q1:q2], val[q1:q2]
		v0 = v0[:len(c0)]
		v1 = v1[:len(c1)]
		n := min(len(c0), len(c1))
		s0, s1 := 0.0, 0.0
		for q := 0; q < n; q++ {
			s0 += v0[q] * x[c0[q]]
			s1 += v1[q] * x[c1[q]]
		}
		for q := n; q < len(c0); q++ {
			s0 += v0[q] * x[c0[q]]
		}
		for q := n; q < len(c1); q++ {
			s1 += v1[q] * x[c1[q]]
		}
		y[a], y[a+1] = s0, s1
	}
	for ; a < hi; a++ {
		cols, vals := colIdx[rowPtr[a]:rowPtr[a+1]], val[rowPtr[a]:rowPtr[a+1]]
		vals = vals[:len(cols)]
		s := 0.0
		for q, c := range cols {
			s += vals[q] * x[c]
		}
		y[a] = s
	}
}

// graph returns the adjacency graph of the pattern for the ordering, built on the pattern's
// workers.
func (b *BPattern) graph() *graph { return patternGraph(b.n, b.rowPtr, b.colIdx, b.workers) }

// toInternalCols sets dst[j][label[i]] = x[i*p+j] for p = len(dst) and the n points (label
// nil: the identity), on workers goroutines over contiguous ranges of points: x is read in
// order and the rows are stored to their labels (scattered stores do not stall the loop as
// scattered loads do).
func toInternalCols(label []int32, n, workers int, dst [][]float64, x []float64) {
	p := len(dst)
	if p == 0 {
		return
	}
	if len(x) != n*p {
		panic("sparse: ToInternalCols: length mismatch")
	}
	for _, d := range dst {
		if len(d) != n {
			panic("sparse: ToInternalCols: length mismatch")
		}
	}
	_ = parallel.For(context.Background(), n, workers, func(_ context.Context, _, lo, hi int) error {
		for i := lo; i < hi; i++ {
			r := i
			if label != nil {
				r = int(label[i])
			}
			for j, v := range x[i*p : i*p+p] {
				dst[j][r] = v
			}
		}
		return nil
	})
}

// fromInternalCols sets dst[order[r]*p+j] = x[j][r] for p = len(x), as toInternalCols.
func fromInternalCols(order []int32, n, workers int, dst []float64, x [][]float64) {
	p := len(x)
	if p == 0 {
		return
	}
	if len(dst) != n*p {
		panic("sparse: FromInternalCols: length mismatch")
	}
	for _, v := range x {
		if len(v) != n {
			panic("sparse: FromInternalCols: length mismatch")
		}
	}
	_ = parallel.For(context.Background(), n, workers, func(_ context.Context, _, lo, hi int) error {
		for r := lo; r < hi; r++ {
			i := r
			if order != nil {
				i = int(order[r])
			}
			di := dst[i*p : i*p+p]
			for j := range di {
				di[j] = x[j][r]
			}
		}
		return nil
	})
}
