package sparse

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"glle/parallel"
)

// Symbolic is the symbolic analysis of a sparse symmetric matrix for supernodal Cholesky
// factorization: fill-reducing permutation (postordered), elimination tree, column counts,
// relaxed supernode partition, the row structure of every supernode of L, the maps that
// assemble A's values into the factor, and the schedule of the numeric factorization.
// It depends only on the pattern and is shared by any number of Factors.
type Symbolic struct {
	n      int
	nnzIn  int     // len of the input pattern (rowPtr[n])
	perm   []int   // perm[k] = original index of pivot k
	iperm  []int32 // inverse of perm
	parent []int32 // elimination tree of the permuted matrix (postordered)
	colCnt []int32 // exact column counts of L (diagonal included)

	ns      int     // number of supernodes
	sFirst  []int32 // supernode s holds columns [sFirst[s], sFirst[s+1])
	sParent []int32 // parent supernode, -1 for a root
	sOf     []int32 // supernode of each column
	sRowPtr []int64 // rows of supernode s: sRows[sRowPtr[s]:sRowPtr[s+1]], its columns first
	sRows   []int32
	sRel    []int32 // sRel[sRowPtr[s]+w+k]: position of below-row k of s in its parent's rows
	lxPtr   []int64 // values of supernode s: lx[lxPtr[s]:lxPtr[s+1]], m x w row-major

	aPtr []int64 // assembly of A: entries aPtr[s]..aPtr[s+1] land in supernode s
	aSrc []int32 // index into the value array of the input pattern
	aDst []int32 // offset inside the supernode's m x w panel

	nnzL      int64   // stored entries of L (relaxed supernodes, explicit zeros included)
	nnzExact  int64   // nonzeros of the exact factor (sum of column counts)
	flops     float64 // sum over stored columns of (column length)^2
	sFlops    []float64
	ordering  Ordering
	maxFront  int // largest m over supernodes
	maxUpdate int // largest m - w over supernodes

	sched schedule
	conc  int // goroutines the numeric factorization and the solves run on (<= scheduleWays)

	orderTime, symbolicTime time.Duration
	// followed is the number of elimination-tree columns built beside AMD (Helper; tests).
	followed int

	// lx is the factor storage prepared by SymbolicOptions.PrepareFactor (taken by the first
	// NewFactor).
	lx atomic.Pointer[prefaulted]
}

// prefaulted is a []float64 whose pages are written once ahead of use, so that their
// first-touch page faults happen before the code that needs the memory runs: a spare
// goroutine allocates it and starts touching it in chunks; take joins in on the caller's
// goroutine for the chunks still untouched and returns the slice once every page is written.
// Touching stops early when the analysis's context is done or the buffer is abandoned; the
// untouched pages are zero all the same.
type prefaulted struct {
	size    int64
	made    chan struct{}   // closed once buf is allocated
	done    chan struct{}   // closed when the spare goroutine has stopped touching
	ctxDone <-chan struct{} // the analysis's context
	stop    chan struct{}   // closed by abandon
	once    sync.Once
	buf     []float64
	chunk   atomic.Int64 // next chunk to touch

	madeOnce sync.Once
	panic    parallel.PanicBox // a panic of the spare goroutine, raised again by take
}

// prefaultChunk is the number of float64s touched per chunk (256 KiB: 64 pages).
const prefaultChunk = 1 << 15

// newPrefaulted starts the spare goroutine.
func newPrefaulted(ctx context.Context, size int64) *prefaulted {
	p := &prefaulted{size: size, made: make(chan struct{}), done: make(chan struct{}),
		ctxDone: ctx.Done(), stop: make(chan struct{})}
	go func() {
		defer func() {
			// A panic (a bug) must not leave take waiting: it is raised again there.
			p.panic.Record(recover())
			p.madeOnce.Do(func() { close(p.made) })
			close(p.done)
		}()
		p.buf = make([]float64, size)
		p.madeOnce.Do(func() { close(p.made) })
		p.touch()
	}()
	return p
}

// abandon stops the spare goroutine's touching (the analysis failed; nobody takes the buffer).
func (p *prefaulted) abandon() { p.once.Do(func() { close(p.stop) }) }

// touch writes one element of every page of the chunks it claims until none is left, the
// context is done or the buffer is abandoned.
func (p *prefaulted) touch() {
	const perPage = 4096 / 8
	for {
		select {
		case <-p.ctxDone:
			return
		case <-p.stop:
			return
		default:
		}
		lo := (p.chunk.Add(1) - 1) * prefaultChunk
		if lo >= p.size {
			return
		}
		b := p.buf[lo:min(lo+prefaultChunk, p.size)]
		for i := 0; i < len(b); i += perPage {
			b[i] = 0
		}
	}
}

// take returns the buffer once the spare goroutine has stopped, touching on the caller's
// goroutine what it has not reached yet (unless the context is done).
func (p *prefaulted) take() []float64 {
	<-p.made
	p.panic.Repanic()
	p.touch()
	<-p.done
	p.panic.Repanic()
	return p.buf
}

// Times returns the wall time of the fill-reducing ordering and of the rest of the symbolic
// analysis (elimination tree, column counts, supernodes, assembly map, schedule).
func (s *Symbolic) Times() (ordering, symbolic time.Duration) { return s.orderTime, s.symbolicTime }

// scheduleWays is the number of ways the schedule splits the elimination tree and the dense
// kernels at its top, whatever SymbolicOptions.Workers says: the workers only decide how many
// of these parts run at once, so factors and solves are bit-identical for any worker count.
const scheduleWays = 8

// schedule assigns independent subtrees of the supernodal elimination tree to workers; the
// supernodes above them (top) are factored afterwards with the dense kernels split across
// the workers. All update matrices of a worker live on one stack, the top nodes' on another.
type schedule struct {
	workers  int
	subtrees [][]int32 // subtree roots per worker; subtree r spans supernodes [sDesc[r], r]
	sDesc    []int32   // first (lowest-numbered) supernode of the subtree of s
	top      []int32   // supernodes outside every subtree, increasing
	stackOf  []int32   // stack index of each supernode's update matrix (workers = top)
	stackLen []int64   // peak length of each stack (packed lower triangles)
	workLen  []int64   // largest (m-w)^2 per stack
	off      []int64   // offset of each supernode's update matrix in its stack
	children [][]int32 // child supernodes, increasing
}

// SymbolicOptions configures Analyze.
type SymbolicOptions struct {
	// Ordering selects the fill-reducing ordering; OrderingDefault chooses one (see there).
	Ordering Ordering
	// Coords, optional, holds point coordinates row-major (n x CoordDim) for geometric nested
	// dissection.
	Coords []float64
	// CoordDim is the number of coordinates per point in Coords.
	CoordDim int
	// PrepareFactor also allocates the numeric factor's value storage, writing to every page of
	// it on a spare goroutine while the analysis finishes, for the next NewFactor (which touches
	// the pages still left on its own goroutine, sharing the work): the first factorization
	// then does not pay for the first-touch page faults of that memory (at n = 1M about 1.8 GB;
	// several seconds in a virtual machine). NewShiftInvert sets it.
	PrepareFactor bool
	// Symmetric declares that the pattern holds both triangles (entry (i, j) stored iff (j, i)
	// is), as M's CSR does: the analysis then reads the neighbour lists from it instead of
	// keeping its own copy (about 4 bytes per stored entry). Analyze checks that the two
	// triangles have the same number of entries. Default false: only the lower triangle is
	// read.
	Symmetric bool
	// CheckFactor, when set, is called with the number of stored entries of L (NNZ) as soon as
	// the supernode partition fixes it, before any factor storage is allocated; an error it
	// returns ends Analyze with that error (e.g. a memory limit). Default nil.
	CheckFactor func(nnzL int64) error
	// Helper, when not nil, is closed by the caller once it has a core to spare for the
	// analysis (NewShiftInvert's caller, say, when it starts waiting for it). From then on
	// the analysis runs parts of its work on a second goroutine: the elimination tree of the
	// ordering while the ordering is still running (with OrderingAMF or OrderingAMD and
	// Symmetric), and the first half of the assembly map beside the supernodes' row
	// structures. The result is the same either way. Default nil: the analysis runs on one
	// goroutine.
	Helper <-chan struct{}
	// Workers is the number of goroutines of the numeric factorization and the solves; <= 0
	// means runtime.GOMAXPROCS(0); at most scheduleWays are used. The results do not depend
	// on it.
	Workers int

	// luFactor (NewGramLU) makes PrepareFactor prepare the storage of both of an LUFactor's
	// panels, L's and U^T's, in one buffer of twice the size.
	luFactor bool
}

// Relaxed amalgamation (as in CHOLMOD's defaults): a child supernode is merged into its
// parent when the merged width is at most relaxW0, or at most relaxW1 (relaxW2) and the
// fraction of explicit zeros stays below relaxZ1 (relaxZ2), or the fraction is below relaxZ3.
const (
	relaxW0 = 4
	relaxW1 = 16
	relaxZ1 = 0.8
	relaxW2 = 48
	relaxZ2 = 0.1
	relaxZ3 = 0.05
)

// Analyze computes the symbolic analysis of the n x n symmetric matrix with CSR pattern
// (rowPtr, colIdx). Only entries with colIdx <= row are read: the input may be the lower
// triangle or the full symmetric pattern (its upper triangle is then ignored). Duplicate
// entries are summed by Factorize; missing diagonal entries are treated as zeros. Index
// arrays are not retained. Invalid patterns return an error wrapping a descriptive message.
func Analyze[I int | int32](ctx context.Context, n int, rowPtr []int, colIdx []I, opts SymbolicOptions) (*Symbolic, error) {
	if err := checkPattern(n, rowPtr, colIdx); err != nil {
		return nil, err
	}
	return analyze(ctx, n, rowPtr, colIdx, opts, nil)
}

// analyze is Analyze for a checked pattern. g, when not nil, is the pattern's adjacency graph
// built by the caller from a pattern known to be symmetric (opts.Symmetric must be set); the
// analysis then skips its own graph construction and symmetry check, and uses g as AMD's
// workspace (g is overwritten).
func analyze[I int | int32](ctx context.Context, n int, rowPtr []int, colIdx []I, opts SymbolicOptions, g *graph) (*Symbolic, error) {
	if opts.Coords != nil && (opts.CoordDim <= 0 || len(opts.Coords) != n*opts.CoordDim) {
		return nil, fmt.Errorf("sparse: len(Coords) = %d, want n*CoordDim = %d*%d", len(opts.Coords), n, opts.CoordDim)
	}
	t0 := time.Now()
	if g == nil {
		var lower, upper int
		g, lower, upper = buildGraphCount(n, rowPtr, colIdx)
		if opts.Symmetric && lower != upper {
			return nil, fmt.Errorf("%w: Symmetric set, but %d entries below the diagonal and %d above", errPattern, lower, upper)
		}
	} else if !opts.Symmetric {
		panic("sparse: analyze: a prebuilt graph needs a symmetric pattern")
	}
	ord := opts.Ordering
	if ord == OrderingDefault {
		ord = OrderingAMF
	}
	var p []int32
	var tree *etreeFollower[I] // the elimination tree computed beside AMD (opts.Helper)
	var amdCC []int32          // AMD's column counts of L, in its own order
	switch ord {
	case OrderingNatural:
		p = make([]int32, n)
		for i := range p {
			p[i] = int32(i)
		}
	case OrderingAMD, OrderingAMF:
		// AMD uses g's adjacency array as its workspace. The analysis below reads the
		// symmetric input pattern itself, or else a graph a spare goroutine builds again
		// meanwhile (instead of AMD copying it first: the copy's first-touch page faults then
		// stay off the ordering's sequential path).
		var again chan *graph
		var againPanic parallel.PanicBox
		if !opts.Symmetric {
			again = make(chan *graph, 1)
			go func() {
				var g *graph
				defer func() { againPanic.Record(recover()); again <- g }() // never leaves the receiver waiting
				g = buildGraph(n, rowPtr, colIdx)
			}()
		}
		var err error
		p = make([]int32, 0, n)
		amdCC = make([]int32, n)
		var prog *amdProgress
		if opts.Symmetric && opts.Helper != nil {
			prog = newAMDProgress()
			tree = newEtreeFollower(adjacency[I]{rowPtr, colIdx}, p, prog, opts.Helper)
			// Every return ends the follower (after finish this only waits for it).
			defer tree.abandon()
		}
		rule := ruleDegree
		if ord == OrderingAMF {
			rule = ruleMeanFill
		}
		if p, err = amdOrderCounts(ctx, g, p, prog, amdCC, rule); err != nil {
			return nil, err // a graph rebuild finishes on its own (buffered channel)
		}
		if n > 0 && amdCC[0] < 0 {
			amdCC = nil // dense vertices ordered last: the analysis counts the columns
		}
		g = nil
		if again != nil {
			g = <-again
			againPanic.Repanic()
		}
	case OrderingND:
		var err error
		if p, err = ndOrder(ctx, g, nil, 0); err != nil {
			return nil, err
		}
	case OrderingGeometricND:
		if opts.Coords == nil {
			return nil, errors.New("sparse: OrderingGeometricND needs Coords")
		}
		var err error
		if p, err = ndOrder(ctx, g, opts.Coords, opts.CoordDim); err != nil {
			return nil, err
		}
	default:
		return nil, fmt.Errorf("sparse: unknown ordering %v", ord)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s := &Symbolic{n: n, nnzIn: rowPtr[n], ordering: ord, orderTime: time.Since(t0)}
	t1 := time.Now()
	var err error
	var pre *etreeResult
	if tree != nil {
		ip, parent, scratch := tree.finish(p)
		pre = &etreeResult{ip, parent, scratch}
		s.followed = tree.followed
	}
	// The first half of the assembly map needs only the permutation and the supernode
	// partition: with a helper core free it runs beside the supernodes' row structures.
	var scattered chan []int32
	var scatterPanic parallel.PanicBox
	onPartition := func() {
		if helperFree(opts.Helper) {
			scattered = make(chan []int32, 1)
			go func() {
				var rows []int32
				defer func() { scatterPanic.Record(recover()); scattered <- rows }()
				rows = assemblyScatter(s, rowPtr, colIdx)
			}()
		}
	}
	if g == nil {
		err = analyzePerm(s, ctx, adjacency[I]{rowPtr, colIdx}, p, opts, pre, amdCC, onPartition)
	} else {
		err = analyzePerm(s, ctx, adjacency[int32]{g.xadj, g.adj}, p, opts, pre, amdCC, onPartition)
	}
	var rowOf []int32
	if scattered != nil {
		rowOf = <-scattered
		scatterPanic.Repanic()
	}
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		s.abandonFactor()
		return nil, err
	}
	if rowOf == nil {
		rowOf = assemblyScatter(s, rowPtr, colIdx)
	}
	if err := assemblyPlace(s, rowOf); err != nil {
		s.abandonFactor()
		return nil, err
	}
	s.makeSchedule(scheduleWays)
	s.conc = min(parallel.Workers(opts.Workers), scheduleWays)
	s.symbolicTime = time.Since(t1)
	return s, nil
}

// abandonFactor stops the prefault of the factor storage after a failed analysis.
func (s *Symbolic) abandonFactor() {
	if p := s.lx.Swap(nil); p != nil {
		p.abandon()
	}
}

// etreeResult is an elimination tree computed before analyzePerm: the inverse permutation,
// the tree and a scratch array of length n.
type etreeResult struct{ ip, parent, scratch []int32 }

// analyzePerm does everything after the ordering: elimination tree, postorder, column counts,
// supernodes and their structure. As soon as the supernodes fix the factor's size it checks
// the size (int32 panel offsets, opts.CheckFactor) and, with opts.PrepareFactor, starts the
// prefault of the factor storage. ordCC, if not nil, holds the column counts of L in the
// numbering of p (AMD finds them as it eliminates: amdOrderCounts); else they are computed
// here. onPartition, if not nil, is called once the permutation
// (iperm) and the supernode partition (sFirst, sOf) are final and the factor's size has
// passed its checks; analyzePerm does not write those fields afterwards.
// postorderRelabel composes the ordering p (inverse ip, elimination tree parent) with a
// postorder of its tree, which keeps the fill and makes subtrees contiguous: it returns the new
// ordering p2 (p2[k] = p[post[k]]) and post, and rewrites parent and ip in place to the tree
// and inverse of p2. scratch has length n.
func postorderRelabel(p, ip, parent, scratch []int32) (p2, post []int32) {
	post = postorder(parent)
	p2 = make([]int32, len(p))
	for k, j := range post {
		p2[k] = p[j]
		scratch[j] = int32(k) // new label of old label j
	}
	for k, j := range post {
		if q := parent[j]; q >= 0 {
			ip[k] = scratch[q]
		} else {
			ip[k] = -1
		}
	}
	copy(parent, ip)
	for k, v := range p2 {
		ip[v] = int32(k)
	}
	return p2, post
}

func analyzePerm[I int | int32](s *Symbolic, ctx context.Context, g adjacency[I], p []int32, opts SymbolicOptions, pre *etreeResult, ordCC []int32, onPartition func()) error {
	n := s.n
	var ip, parent, scratch []int32
	if pre != nil {
		ip, parent, scratch = pre.ip, pre.parent, pre.scratch
	} else {
		ip = make([]int32, n)
		for k, v := range p {
			ip[v] = int32(k)
		}
		parent = make([]int32, n)
		scratch = make([]int32, n)
		etree(g, p, ip, parent, scratch)
	}
	p, post := postorderRelabel(p, ip, parent, scratch)
	s.iperm = ip
	s.perm = make([]int, n)
	for k, v := range p {
		s.perm[k] = int(v)
	}
	s.parent = parent
	var cc []int32
	if ordCC != nil {
		// The postorder only renumbers the columns: column k is column post[k] of the ordering
		// AMD returned.
		cc = make([]int32, n)
		for k, j := range post {
			cc[k] = ordCC[j]
		}
	} else {
		cc = colCounts(g, p, ip, parent)
	}
	s.colCnt = cc
	for _, c := range cc {
		s.nnzExact += int64(c)
	}

	// Fundamental supernodes: j+1 joins j's supernode when it is j's parent, has no other
	// child, and cc[j] = cc[j+1] + 1.
	nchild := scratch
	clear(nchild)
	for j := 0; j < n; j++ {
		if parent[j] >= 0 {
			nchild[parent[j]]++
		}
	}
	var fFirst []int32
	for j := 0; j < n; j++ {
		if j == 0 || !(parent[j-1] == int32(j) && nchild[j] == 1 && cc[j-1] == cc[j]+1) {
			fFirst = append(fFirst, int32(j))
		}
	}
	nf := len(fFirst)
	fFirst = append(fFirst, int32(n))

	// Relaxed amalgamation, children before parents: merge a supernode into its parent when
	// it is the parent's last child (columns adjacent) and the explicit zeros stay few.
	fOf := make([]int32, n)
	for f := 0; f < nf; f++ {
		for j := fFirst[f]; j < fFirst[f+1]; j++ {
			fOf[j] = int32(f)
		}
	}
	gFirst := make([]int32, nf) // first column of the group ending with fundamental node f
	gExact := make([]int64, nf) // exact nonzeros of that group
	merged := make([]bool, nf)  // f was merged into its parent
	for f := 0; f < nf; f++ {
		gFirst[f] = fFirst[f]
		for j := fFirst[f]; j < fFirst[f+1]; j++ {
			gExact[f] += int64(cc[j])
		}
	}
	for f := 0; f < nf; f++ {
		last := fFirst[f+1] - 1
		pc := parent[last]
		if pc < 0 || pc != fFirst[f+1] {
			continue
		}
		q := fOf[pc]
		wq := int64(fFirst[q+1] - fFirst[q])
		below := int64(cc[fFirst[q]]) - wq // rows of q's structure below its columns
		w := int64(fFirst[q+1] - gFirst[f])
		m := w + below
		stored := w*m - w*(w-1)/2
		exact := gExact[f] + gExact[q]
		z := float64(stored-exact) / float64(stored)
		if w <= relaxW0 || (w <= relaxW1 && z < relaxZ1) || (w <= relaxW2 && z < relaxZ2) || z < relaxZ3 {
			merged[f] = true
			gFirst[q] = gFirst[f]
			gExact[q] = exact
		}
	}
	s.sFirst = s.sFirst[:0]
	for f := 0; f < nf; f++ {
		if !merged[f] {
			s.sFirst = append(s.sFirst, gFirst[f])
		}
	}
	ns := len(s.sFirst)
	s.ns = ns
	s.sFirst = append(s.sFirst, int32(n))
	s.sOf = fOf // reuse
	for t := 0; t < ns; t++ {
		for j := s.sFirst[t]; j < s.sFirst[t+1]; j++ {
			s.sOf[j] = int32(t)
		}
	}
	s.sParent = make([]int32, ns)
	for t := 0; t < ns; t++ {
		if pc := parent[s.sFirst[t+1]-1]; pc >= 0 {
			s.sParent[t] = s.sOf[pc]
		} else {
			s.sParent[t] = -1
		}
	}

	// The factor's size is known now: supernode t has w columns and w + cc[l-1] - 1 rows, its
	// last column's rows below it being those of the whole supernode (a merged child's rows
	// below its parent lie in the parent's structure). Check it and start the prefault of its
	// storage here, ahead of the row structures (checked against lxPtr below).
	var lxSize, nnzL int64
	for t := 0; t < ns; t++ {
		f, l := int64(s.sFirst[t]), int64(s.sFirst[t+1])
		w, m := l-f, l-f+int64(cc[l-1])-1
		if w*m > math.MaxInt32 {
			return fmt.Errorf("sparse: supernode %d has %d entries, beyond the int32 offset range", t, w*m)
		}
		lxSize += w * m
		nnzL += w*m - w*(w-1)/2
	}
	if opts.CheckFactor != nil {
		if err := opts.CheckFactor(nnzL); err != nil {
			return err
		}
	}
	if opts.PrepareFactor {
		size := lxSize
		if opts.luFactor {
			size *= 2
		}
		s.lx.Store(newPrefaulted(ctx, size))
	}
	if onPartition != nil {
		onPartition()
	}

	// Supernodal row structure: columns, then the union of A's rows below the supernode and
	// the children's below-rows, sorted.
	childHead := make([]int32, ns)
	childNext := make([]int32, ns)
	for t := range childHead {
		childHead[t] = -1
	}
	for t := ns - 1; t >= 0; t-- {
		if q := s.sParent[t]; q >= 0 {
			childNext[t] = childHead[q]
			childHead[q] = int32(t)
		}
	}
	mark := scratch
	for i := range mark {
		mark[i] = -1
	}
	s.sRowPtr = make([]int64, ns+1)
	s.sRows = make([]int32, 0, s.nnzExact/4+int64(n))
	var below []int32
	for t := 0; t < ns; t++ {
		f, l := s.sFirst[t], s.sFirst[t+1]
		below = below[:0]
		for j := f; j < l; j++ {
			s.sRows = append(s.sRows, j)
			old := p[j]
			for _, u := range g.idx[g.ptr[old]:g.ptr[old+1]] { // u = old: ip[u] = j < l, skipped
				if i := ip[u]; i >= l && mark[i] != int32(t) {
					mark[i] = int32(t)
					below = append(below, i)
				}
			}
		}
		for c := childHead[t]; c >= 0; c = childNext[c] {
			wc := int64(s.sFirst[c+1] - s.sFirst[c])
			for _, i := range s.sRows[s.sRowPtr[c]+wc : s.sRowPtr[c+1]] {
				if i >= l && mark[i] != int32(t) {
					mark[i] = int32(t)
					below = append(below, i)
				}
			}
		}
		slices.Sort(below)
		s.sRows = append(s.sRows, below...)
		s.sRowPtr[t+1] = int64(len(s.sRows))
	}
	s.sRows = slices.Clip(s.sRows)

	// Relative positions of each supernode's below-rows in its parent's structure.
	s.sRel = make([]int32, len(s.sRows))
	pos := scratch
	for q := 0; q < ns; q++ {
		rows := s.sRows[s.sRowPtr[q]:s.sRowPtr[q+1]]
		for k, r := range rows {
			pos[r] = int32(k)
		}
		for c := childHead[q]; c >= 0; c = childNext[c] {
			wc := int64(s.sFirst[c+1] - s.sFirst[c])
			for k := s.sRowPtr[c] + wc; k < s.sRowPtr[c+1]; k++ {
				s.sRel[k] = pos[s.sRows[k]]
			}
		}
	}

	// Storage, counts and flops.
	s.lxPtr = make([]int64, ns+1)
	s.sFlops = make([]float64, ns)
	for t := 0; t < ns; t++ {
		w := int64(s.sFirst[t+1] - s.sFirst[t])
		m := s.sRowPtr[t+1] - s.sRowPtr[t]
		s.lxPtr[t+1] = s.lxPtr[t] + m*w
		s.nnzL += w*m - w*(w-1)/2
		fl := 0.0
		for i := int64(0); i < w; i++ {
			c := float64(m - i)
			fl += c * c
		}
		s.sFlops[t] = fl
		s.flops += fl
		s.maxFront = max(s.maxFront, int(m))
		s.maxUpdate = max(s.maxUpdate, int(m-w))
	}
	if lxSize != s.lxPtr[ns] || nnzL != s.nnzL {
		panic("sparse: factor size predicted from the column counts differs from the supernode structure")
	}
	return nil
}

// helperFree reports whether help (SymbolicOptions.Helper) is closed.
func helperFree(help <-chan struct{}) bool {
	if help == nil {
		return false
	}
	select {
	case <-help:
		return true
	default:
		return false
	}
}

// assemblyScatter is the first half of the assembly map, which records where each stored
// lower-triangle entry of A lands in L's panels. It reads only the permutation and the
// supernode partition: it groups A's stored lower-triangle entries by supernode (aPtr, aSrc),
// leaving each entry's column in aDst and returning its row (both in the new numbering).
func assemblyScatter[I int | int32](s *Symbolic, rowPtr []int, colIdx []I) (rowOf []int32) {
	n := s.n
	cnt := make([]int64, s.ns+1)
	for i := 0; i < n; i++ {
		for _, j := range colIdx[rowPtr[i]:rowPtr[i+1]] {
			if int(j) <= i {
				c := min(s.iperm[i], s.iperm[j])
				cnt[s.sOf[c]+1]++
			}
		}
	}
	for t := 0; t < s.ns; t++ {
		cnt[t+1] += cnt[t]
	}
	s.aPtr = cnt
	na := cnt[s.ns]
	s.aSrc = make([]int32, na)
	s.aDst = make([]int32, na)
	fill := make([]int64, s.ns)
	copy(fill, cnt[:s.ns])
	// Store (source, global row, column) packed; positions need each supernode's row map
	// (assemblyPlace).
	rowOf = make([]int32, na)
	for i := 0; i < n; i++ {
		for p := rowPtr[i]; p < rowPtr[i+1]; p++ {
			j := colIdx[p]
			if int(j) > i {
				continue
			}
			a, b := s.iperm[i], s.iperm[j]
			if a < b {
				a, b = b, a
			}
			t := s.sOf[b]
			q := fill[t]
			fill[t]++
			s.aSrc[q] = int32(p)
			rowOf[q] = a
			s.aDst[q] = b // column for now
		}
	}
	return rowOf
}

// assemblyPlace is the second half of the assembly map: it turns the entries' rows and columns
// left by assemblyScatter into offsets in their supernode's panel, once the supernodes' row
// structures are known.
func assemblyPlace(s *Symbolic, rowOf []int32) error {
	// Defensive: analyzePerm has already rejected panels beyond the int32 range.
	for t := 0; t < s.ns; t++ {
		if w := s.sFirst[t+1] - s.sFirst[t]; s.lxPtr[t+1]-s.lxPtr[t] > math.MaxInt32 || w < 0 {
			return fmt.Errorf("sparse: supernode %d has %d entries, beyond the int32 offset range", t, s.lxPtr[t+1]-s.lxPtr[t])
		}
	}
	pos := make([]int32, s.n)
	for t := 0; t < s.ns; t++ {
		f := s.sFirst[t]
		w := s.sFirst[t+1] - f
		for k, r := range s.sRows[s.sRowPtr[t]:s.sRowPtr[t+1]] {
			pos[r] = int32(k)
		}
		for q := s.aPtr[t]; q < s.aPtr[t+1]; q++ {
			s.aDst[q] = pos[rowOf[q]]*w + (s.aDst[q] - f)
		}
	}
	return nil
}

// makeSchedule splits the supernodal tree into subtrees for the workers (largest subtree
// split until a longest-processing-time assignment is balanced within 5%) and sizes the
// update-matrix stacks by simulating the factorization order.
func (s *Symbolic) makeSchedule(workers int) {
	ns := s.ns
	sc := &s.sched
	sc.workers = workers
	sc.sDesc = make([]int32, ns)
	sub := make([]float64, ns) // subtree flops
	for t := 0; t < ns; t++ {
		sc.sDesc[t] = int32(t)
	}
	for t := 0; t < ns; t++ {
		sub[t] += s.sFlops[t]
		if q := s.sParent[t]; q >= 0 {
			sub[q] += sub[t]
			sc.sDesc[q] = min(sc.sDesc[q], sc.sDesc[t])
		}
	}
	children := make([][]int32, ns)
	var roots []int32
	for t := 0; t < ns; t++ {
		if q := s.sParent[t]; q >= 0 {
			children[q] = append(children[q], int32(t))
		} else {
			roots = append(roots, int32(t))
		}
	}
	inTop := make([]bool, ns)
	cand := roots
	var assign [][]int32
	if workers > 1 {
		for iter := 0; iter < 4096 && len(cand) > 0; iter++ {
			// LPT assignment of the candidate subtrees.
			slices.SortFunc(cand, func(a, b int32) int {
				switch {
				case sub[a] > sub[b]:
					return -1
				case sub[a] < sub[b]:
					return 1
				}
				return int(a - b)
			})
			load := make([]float64, workers)
			total := 0.0
			for _, r := range cand {
				total += sub[r]
			}
			for _, r := range cand {
				w := 0
				for k := range load {
					if load[k] < load[w] {
						w = k
					}
				}
				load[w] += sub[r]
			}
			mx := slices.Max(load)
			if mx <= 1.05*total/float64(workers) || total < 1e6 { // balanced, or too little work to matter
				break
			}
			big := cand[0]
			inTop[big] = true
			cand = append(cand[1:], children[big]...)
		}
	}
	assign = make([][]int32, workers)
	if workers == 1 {
		assign[0] = append(assign[0], roots...)
	} else {
		load := make([]float64, workers)
		for _, r := range cand {
			w := 0
			for k := range load {
				if load[k] < load[w] {
					w = k
				}
			}
			load[w] += sub[r]
			assign[w] = append(assign[w], r)
		}
	}
	for w := range assign {
		slices.Sort(assign[w])
	}
	sc.subtrees = assign
	sc.top = sc.top[:0]
	for t := 0; t < ns; t++ {
		if inTop[t] {
			sc.top = append(sc.top, int32(t))
		}
	}
	// Simulate the stacks.
	sc.stackOf = make([]int32, ns)
	sc.stackLen = make([]int64, workers+1)
	sc.workLen = make([]int64, workers+1)
	off := make([]int64, ns)
	sc.off = off
	sc.children = children
	upd := func(t int32) int64 {
		mu := s.sRowPtr[t+1] - s.sRowPtr[t] - int64(s.sFirst[t+1]-s.sFirst[t])
		return mu * (mu + 1) / 2
	}
	push := func(st int, t int32, topPtr *int64) {
		// Pop the children on this stack, then push t's update.
		newTop := *topPtr
		for _, c := range children[t] {
			if sc.stackOf[c] == int32(st) && off[c] < newTop {
				newTop = off[c]
			}
		}
		sc.stackOf[t] = int32(st)
		off[t] = newTop
		*topPtr = newTop + upd(t)
		sc.stackLen[st] = max(sc.stackLen[st], *topPtr)
		mu := s.sRowPtr[t+1] - s.sRowPtr[t] - int64(s.sFirst[t+1]-s.sFirst[t])
		sc.workLen[st] = max(sc.workLen[st], mu*mu)
	}
	for w, rs := range assign {
		var topPtr int64
		for _, r := range rs {
			for t := sc.sDesc[r]; t <= r; t++ {
				push(w, t, &topPtr)
			}
		}
	}
	var topPtr int64
	for _, t := range sc.top {
		push(workers, t, &topPtr)
	}
}

// N returns the order of the analysed matrix.
func (s *Symbolic) N() int { return s.n }

// NNZ returns the number of entries of L stored by the supernodal factor (lower triangle with
// diagonal, including the explicit zeros added by relaxed amalgamation).
func (s *Symbolic) NNZ() int64 { return s.nnzL }

// ExactNNZ returns the number of nonzeros of the exact Cholesky factor L (diagonal included)
// for the chosen ordering, without amalgamation zeros.
func (s *Symbolic) ExactNNZ() int64 { return s.nnzExact }

// Flops returns the floating-point operation count of one numeric factorization, computed
// as the sum over the stored columns of L of the squared column length.
func (s *Symbolic) Flops() float64 { return s.flops }

// Perm returns the fill-reducing permutation: Perm()[k] is the original index of the k-th
// pivot. The slice is shared; do not modify it.
func (s *Symbolic) Perm() []int { return s.perm }

// Ordering returns the ordering that was used (never OrderingDefault).
func (s *Symbolic) Ordering() Ordering { return s.ordering }

// Supernodes returns the number of supernodes.
func (s *Symbolic) Supernodes() int { return s.ns }
