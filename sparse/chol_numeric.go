package sparse

import (
	"context"
	"fmt"
	"math"
	"sync"

	"gonum.org/v1/gonum/blas"

	"glle/kernels"
	"glle/parallel"
)

// NotPositiveDefiniteError reports a breakdown of the Cholesky factorization: the pivot of
// Column was not positive.
//
// A failed pivot stops the elimination of its supernode and of the supernodes that depend on
// it; the independent parts of the elimination tree are still factored, and Column is the
// smallest index over their failed pivots (the first of each supernode), so that it does not
// depend on the worker count.
type NotPositiveDefiniteError struct {
	// Column is the original index of the column whose pivot failed: the index in the matrix
	// given to Analyze, or for NewShiftInvertPattern the caller's point (mapped through a
	// local pattern's relabelling).
	Column int
	Pivot  float64 // the non-positive (or NaN) pivot value
}

// Error implements error.
func (e *NotPositiveDefiniteError) Error() string {
	return fmt.Sprintf("sparse: matrix not positive definite: pivot %g at column %d", e.Pivot, e.Column)
}

// Factor is a numeric supernodal Cholesky factorization P (A - shift I) P^T = L L^T for the
// pattern of a Symbolic. It can be refactorized any number of times with new values; all
// memory is allocated by NewFactor (and by the first block solve, SolveBlock or SolveMany, of a
// given width).
// A Factor is not safe for concurrent use.
type Factor struct {
	s      *Symbolic
	lx     []float64          // supernodal panels of L
	stacks [][]float64        // update-matrix stacks, one per worker plus one for the top
	works  [][]float64        // dense update workspaces, one per stack
	diag   [][]float64        // copies of diagonal blocks, one per stack
	y      []float64          // solve workspace, n
	ym     []float64          // block-solve workspace, n*nrhs
	tmp    []float64          // sequential-solve gather workspace
	sp     *solvePlan         // parallel-solve plan, built on the first parallel solve
	sn     kernels.Supernodes // the layout for the backend's native solve kernels
	valid  bool               // the last Factorize succeeded
	// pf records failed pivots (NotPositiveDefiniteError's column; a local MPattern's operator
	// maps it to the points).
	pf pivotFailures
}

// takeLX returns the panel storage PrepareFactor prepared (its first taker gets it) or a new
// one, for panels times the factor's panels (1, or 2 for an LUFactor's L and U^T).
func (s *Symbolic) takeLX(panels int) []float64 {
	size := int64(panels) * s.lxPtr[s.ns]
	if p := s.lx.Swap(nil); p != nil {
		if buf := p.take(); int64(len(buf)) >= size {
			return buf[:size:size]
		}
	}
	return make([]float64, size)
}

// NewFactor allocates a numeric factor for the symbolic analysis s.
func NewFactor(s *Symbolic) *Factor {
	sc := &s.sched
	lx := s.takeLX(1)
	f := &Factor{
		s:      s,
		lx:     lx,
		stacks: make([][]float64, len(sc.stackLen)),
		works:  make([][]float64, len(sc.stackLen)),
		diag:   make([][]float64, len(sc.stackLen)),
		y:      make([]float64, s.n),
		pf:     newPivotFailures(s),
	}
	f.sn = kernels.Supernodes{LX: lx, LXPtr: s.lxPtr, First: s.sFirst, RowPtr: s.sRowPtr, Rows: s.sRows}
	for k := range sc.stackLen {
		f.stacks[k] = make([]float64, sc.stackLen[k])
		f.works[k] = make([]float64, sc.workLen[k])
		f.diag[k] = make([]float64, panelBlock*panelBlock)
	}
	return f
}

// Symbolic returns the analysis the factor was made for.
func (f *Factor) Symbolic() *Symbolic { return f.s }

// panelBlock is the column block width of the panel factorization.
const panelBlock = 96

// smallPanel: panels this narrow are factored entirely by the Go kernel.
const smallPanel = 4

// parMinFlops: a dense kernel is split across workers only above this many flops.
const parMinFlops = 4e6

// Factorize computes the Cholesky factorization of A - shift*I, where val holds A's values in
// the CSR pattern that Analyze saw (stored-entry order; only entries with column <= row are
// read; len(val) must equal that pattern's number of stored entries). It returns a
// *NotPositiveDefiniteError if a pivot is not positive, and ctx.Err() if ctx is cancelled
// (checked between supernodes and between panel blocks). After an error the factor is
// unusable until the next successful Factorize.
//
// The supernodal multifrontal method (Duff and Reid 1983; Liu, "The multifrontal method for
// sparse matrix solution", SIAM Review 34(1), 1992): each supernode's frontal matrix is
// assembled from A and its children's update matrices (extend-add), its panel is factored with
// BLAS-3 (blocked Cholesky, Dtrsm, Dsyrk/Dgemm) and its Schur complement pushed on a stack.
// Independent subtrees run on separate workers; the top of the tree splits dense kernels.
func (f *Factor) Factorize(ctx context.Context, val []float64, shift float64) error {
	if len(val) != f.s.nnzIn {
		panic("sparse: Factorize values do not match the analysed pattern")
	}
	return f.factorize(ctx, val, shift)
}

// factorize is Factorize without the length check (val may be longer).
func (f *Factor) factorize(ctx context.Context, val []float64, shift float64) error {
	s := f.s
	f.valid = false
	val = val[:s.nnzIn]
	f.pf.reset()
	err := s.eachNode(ctx, func(ctx context.Context, t int32, st, nw int) error { return f.node(ctx, t, val, shift, st, nw) })
	if err != nil {
		return err
	}
	if fl, ok := f.pf.first(); ok {
		return &NotPositiveDefiniteError{Column: fl.col, Pivot: fl.pivot}
	}
	f.valid = true
	return nil
}

// eachNode calls fn for every supernode in the schedule's order: each worker's subtree list on
// the workers (stack st = the list's index, one worker for the dense kernels), then the top
// supernodes (stack sc.workers, all workers). It stops at the first error, and returns
// ctx.Err() when ctx is done (checked before every supernode).
func (s *Symbolic) eachNode(ctx context.Context, fn func(ctx context.Context, t int32, st, nw int) error) error {
	sc := &s.sched
	if err := ctx.Err(); err != nil {
		return err
	}
	step := func(ctx context.Context, t int32, st, nw int) error {
		select {
		case <-ctx.Done():
			return ctx.Err()
		default:
		}
		return fn(ctx, t, st, nw)
	}
	// The lists are claimed dynamically: which goroutine runs a list does not change its
	// result (each list has its own stack and a fixed order).
	err := parallel.ForJoin(ctx, sc.workers, 1, s.conc, nil, func(ctx context.Context, _, lo, hi int) error {
		for w := lo; w < hi; w++ {
			for _, r := range sc.subtrees[w] {
				for t := sc.sDesc[r]; t <= r; t++ {
					if err := step(ctx, t, w, 1); err != nil {
						return err
					}
				}
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	for _, t := range sc.top {
		if err := step(ctx, t, sc.workers, sc.workers); err != nil {
			return err
		}
	}
	return nil
}

// nodeShape returns supernode t's first column c0, its width w and its number of rows m.
func (s *Symbolic) nodeShape(t int32) (c0, w, m int) {
	c0 = int(s.sFirst[t])
	return c0, int(s.sFirst[t+1]) - c0, int(s.sRowPtr[t+1] - s.sRowPtr[t])
}

// node assembles, factors and updates supernode t using stack st and nw workers for its
// dense kernels. A failed pivot marks t failed and is recorded in f.pf; a node with a
// failed child is skipped and marked failed (a child's update is read only by its parent).
func (f *Factor) node(ctx context.Context, t int32, val []float64, shift float64, st, nw int) error {
	s := f.s
	sc := &s.sched
	if f.pf.skip(s, t) {
		return nil
	}
	c0, w, m := s.nodeShape(t)
	mu := m - w
	p := f.lx[s.lxPtr[t]:s.lxPtr[t+1]]
	clear(p)
	// u needs no clearing: the Schur update below overwrites its lower triangle before the
	// children's update-part contributions are added (clearing it cost ~40% of a factorization).
	u := f.works[st][:mu*mu]
	for q := s.aPtr[t]; q < s.aPtr[t+1]; q++ {
		p[s.aDst[q]] += val[s.aSrc[q]]
	}
	if shift != 0 {
		for k := 0; k < w; k++ {
			p[k*w+k] -= shift
		}
	}
	for _, c := range sc.children[t] {
		cu, rel := f.childUpdate(c)
		extendAddPanel(p, w, cu, rel)
	}
	if j, d := f.panel(ctx, p, m, w, st, nw); j >= 0 {
		if j == math.MaxInt {
			return ctx.Err()
		}
		f.pf.record(t, st, s.perm[c0+j], d)
		return nil
	}
	if mu > 0 {
		l21 := p[w*w:]
		if w <= smallPanel {
			syrkSmall(mu, w, l21, u)
		} else {
			syrkSub(nw, f.s.conc, mu, w, l21, w, 0, u, mu)
		}
		for _, c := range sc.children[t] {
			cu, rel := f.childUpdate(c)
			extendAddUpdate(u, w, mu, cu, rel)
		}
		dst := f.stacks[st][sc.off[t]:]
		for i := 0; i < mu; i++ {
			copy(dst[i*(i+1)/2:i*(i+1)/2+i+1], u[i*mu:i*mu+i+1])
		}
	}
	return nil
}

// childUpdate returns the packed lower-triangular update matrix of child supernode c and the
// positions of its rows among its parent's rows.
func (f *Factor) childUpdate(c int32) (cu []float64, rel []int32) {
	s := f.s
	sc := &s.sched
	rel = s.childRel(c)
	mc := len(rel)
	return f.stacks[sc.stackOf[c]][sc.off[c] : sc.off[c]+int64(mc*(mc+1)/2)], rel
}

// childRel returns the positions of supernode c's rows below its diagonal block among its
// parent's rows (increasing).
func (s *Symbolic) childRel(c int32) []int32 {
	wc := int64(s.sFirst[c+1] - s.sFirst[c])
	return s.sRel[s.sRowPtr[c]+wc : s.sRowPtr[c+1]]
}

// splitAt returns the number of entries of the increasing rel below w: the child rows that land
// in the parent's own columns.
func splitAt(rel []int32, w int) int {
	js := 0
	for js < len(rel) && int(rel[js]) < w {
		js++
	}
	return js
}

// extendAddPanel adds the entries of a child's packed lower-triangular update matrix cu,
// whose rows sit at the increasing positions rel of the parent's rows, that land in the
// parent's columns: into the parent's panel p (width w).
func extendAddPanel(p []float64, w int, cu []float64, rel []int32) {
	js := splitAt(rel, w)
	for i, ri := range rel {
		row := cu[i*(i+1)/2 : i*(i+1)/2+i+1]
		if i >= js {
			row = row[:js]
		}
		prow := p[int(ri)*w:]
		for j, v := range row {
			prow[rel[j]] += v
		}
	}
}

// extendAddUpdate adds the rest of cu (rows and columns below the parent's columns) into the
// parent's update matrix u (order mu, lower triangle).
func extendAddUpdate(u []float64, w, mu int, cu []float64, rel []int32) {
	js := splitAt(rel, w)
	for i := js; i < len(rel); i++ {
		row := cu[i*(i+1)/2+js : i*(i+1)/2+i+1]
		urow := u[(int(rel[i])-w)*mu:]
		rj := rel[js : i+1]
		for j, v := range row {
			urow[int(rj[j])-w] += v
		}
	}
}

// panel factors the m x w row-major panel p (lda w) in place: its leading w x w block gets
// its Cholesky factor L11 and the rest L21 = A21 L11^{-T}. It returns (-1, 0) on success,
// (j, pivot) when column j's pivot is not positive, and (math.MaxInt, 0) if ctx is done.
// Right-looking blocked algorithm (LAPACK dpotrf's variant extended to the rectangular panel).
func (f *Factor) panel(ctx context.Context, p []float64, m, w, st, nw int) (int, float64) {
	if w <= smallPanel {
		return cholPanelGo(p, m, w, w)
	}
	for k0 := 0; k0 < w; k0 += panelBlock {
		if k0 > 0 {
			select {
			case <-ctx.Done():
				return math.MaxInt, 0
			default:
			}
		}
		k1 := min(k0+panelBlock, w)
		b := k1 - k0
		if j, d := f.diagBlock(p[k0*w+k0:], b, w, st); j >= 0 {
			return k0 + j, d
		}
		if m > k1 {
			trsmSub(nw, f.s.conc, m-k1, b, p[k0*w+k0:], w, p[k1*w+k0:], w, blas.NonUnit)
		}
		if w > k1 {
			syrkSub(nw, f.s.conc, w-k1, b, p[k1*w+k0:], w, 1, p[k1*w+k1:], w)
			if m > w {
				gemmSub(nw, f.s.conc, m-w, w-k1, b, p[w*w+k0:], w, p[k1*w+k0:], w, 1, p[w*w+k1:], w)
			}
		}
	}
	return -1, 0
}

// diagBlock factors the b x b diagonal block a (lda) with LAPACK's Dpotrf when it is large
// enough to pay for the call, else with the Go kernel; on failure it restores the block and
// reruns the Go kernel to locate the failing column.
func (f *Factor) diagBlock(a []float64, b, lda, st int) (int, float64) {
	if b < 32 { // below ~32 columns the Go kernel beats a (cgo) LAPACK call
		return cholPanelGo(a, b, lda, b)
	}
	save := f.diag[st][:b*b]
	for i := 0; i < b; i++ {
		copy(save[i*b:i*b+i+1], a[i*lda:i*lda+i+1])
	}
	if kernels.Current().LAPACK().Dpotrf(blas.Lower, b, a, lda) && positiveDiag(a, b, lda) {
		return -1, 0
	}
	// Dpotrf failed, or (OpenBLAS) succeeded past a NaN pivot, which only gonum's rejects:
	// the Go kernel names the column.
	for i := 0; i < b; i++ {
		copy(a[i*lda:i*lda+i+1], save[i*b:i*b+i+1])
	}
	return cholPanelGo(a, b, lda, b)
}

// positiveDiag reports whether the b diagonal entries of a (lda) are all > 0 (false for NaN).
func positiveDiag(a []float64, b, lda int) bool {
	for i := 0; i < b; i++ {
		if !(a[i*lda+i] > 0) {
			return false
		}
	}
	return true
}

// cholPanelGo factors columns [0, w) of the m-row row-major panel p (lda) with a left-looking
// row-oriented Go kernel: for each column j, l_jj = sqrt(a_jj - l_j. · l_j.) and
// l_ij = (a_ij - l_i. · l_j.) / l_jj over the rows i > j of the panel. It returns (-1, 0) or
// the first failing column and its pivot.
func cholPanelGo(p []float64, m, lda, w int) (int, float64) {
	for j := 0; j < w; j++ {
		rj := p[j*lda : j*lda+j]
		d := p[j*lda+j]
		for _, v := range rj {
			d -= v * v
		}
		if !(d > 0) {
			return j, d
		}
		ljj := math.Sqrt(d)
		p[j*lda+j] = ljj
		inv := 1 / ljj
		for i := j + 1; i < m; i++ {
			ri := p[i*lda : i*lda+j+1]
			x := ri[j]
			for k, v := range rj {
				x -= ri[k] * v
			}
			ri[j] = x * inv
		}
	}
	return -1, 0
}

// syrkSmall sets the lower triangle of u to -l l^T for the mu x w row-major l (lda w,
// w <= smallPanel) and mu x mu u, in Go.
func syrkSmall(mu, w int, l, u []float64) {
	switch w {
	case 1:
		for i := 0; i < mu; i++ {
			a := l[i]
			ur := u[i*mu : i*mu+i+1]
			for j := range ur {
				ur[j] = -a * l[j]
			}
		}
	case 2:
		for i := 0; i < mu; i++ {
			a0, a1 := l[2*i], l[2*i+1]
			ur := u[i*mu : i*mu+i+1]
			for j := range ur {
				ur[j] = -(a0*l[2*j] + a1*l[2*j+1])
			}
		}
	default:
		negABt(mu, w, l, l, u, true)
	}
}

// negABt sets c = -a b^T for the mu x w row-major a and b (lda = ldb = w) and the mu x mu c,
// only its lower triangle when lower, in Go (for small w).
func negABt(mu, w int, a, b, c []float64, lower bool) {
	for i := 0; i < mu; i++ {
		ai := a[i*w : i*w+w]
		ci := c[i*mu : i*mu+mu]
		if lower {
			ci = ci[:i+1]
		}
		for j := range ci {
			bj := b[j*w : j*w+w]
			x := 0.0
			for k, v := range ai {
				x += v * bj[k]
			}
			ci[j] = -x
		}
	}
}

// splitRows runs fn over nw contiguous row bands of [0, n), the band edges chosen so that
// each band has about the same work when row i costs weight(i) (cumulative: cum(i) = work of
// rows [0, i)); it calls fn directly when nw == 1.
func splitRows(nw, conc, n int, cum func(i int) float64, fn func(lo, hi int)) {
	if nw <= 1 || n < 2*nw {
		fn(0, n)
		return
	}
	total := cum(n)
	var wg sync.WaitGroup
	var box parallel.PanicBox // a band's panic is raised again here, after the wait
	// At most conc bands run at once; the band edges depend on nw only.
	sem := make(chan struct{}, max(conc, 1))
	lo := 0
	for k := 1; k <= nw; k++ {
		hi := n
		if k < nw {
			target := total * float64(k) / float64(nw)
			a, b := lo, n
			for a < b { // smallest hi with cum(hi) >= target
				mid := (a + b) / 2
				if cum(mid) < target {
					a = mid + 1
				} else {
					b = mid
				}
			}
			hi = a
		}
		if hi > lo {
			if conc <= 1 {
				fn(lo, hi)
			} else {
				wg.Add(1)
				sem <- struct{}{}
				go func(lo, hi int) {
					defer func() { box.Record(recover()); <-sem; wg.Done() }()
					fn(lo, hi)
				}(lo, hi)
			}
		}
		lo = hi
	}
	wg.Wait()
	box.Repanic()
}

// trsmSub computes b = b L^{-T} for the n x n lower triangular l (ldl; unit diagonal or not)
// and the m x n b (ldb), splitting the rows of b across nw workers when large.
func trsmSub(nw, conc, m, n int, l []float64, ldl int, b []float64, ldb int, diag blas.Diag) {
	be := kernels.Current()
	if nw <= 1 || float64(m)*float64(n)*float64(n) < parMinFlops {
		trsmRows(be, m, n, l, ldl, b, ldb, diag)
		return
	}
	splitRows(nw, conc, m, func(i int) float64 { return float64(i) }, func(lo, hi int) {
		trsmRows(be, hi-lo, n, l, ldl, b[lo*ldb:], ldb, diag)
	})
}

// trsmRows computes b = b L^{-T} like trsmSub on one goroutine: with the backend's panel kernel
// when it has one for this width (OpenBLAS's DTRSM is slow on narrow panels), else Dtrsm.
func trsmRows(be kernels.Backend, m, n int, l []float64, ldl int, b []float64, ldb int, diag blas.Diag) {
	if ps, ok := be.(kernels.PanelSolver); ok && n <= ps.PanelMaxN() {
		ps.TrsmRLT(m, n, l, ldl, b, ldb, diag == blas.Unit)
		return
	}
	be.BLAS().Dtrsm(blas.Right, blas.Lower, blas.Trans, diag, m, n, 1, l, ldl, b, ldb)
}

// syrkSub computes the lower triangle of c = beta c - a a^T for the n x k a (lda) and n x n c (ldc);
// when large, row bands of c are split across nw workers (Dgemm left of the band's diagonal
// block, Dsyrk on it).
func syrkSub(nw, conc, n, k int, a []float64, lda int, beta float64, c []float64, ldc int) {
	bl := kernels.Current().BLAS()
	if nw <= 1 || float64(n)*float64(n)*float64(k) < 2*parMinFlops {
		bl.Dsyrk(blas.Lower, blas.NoTrans, n, k, -1, a, lda, beta, c, ldc)
		return
	}
	splitRows(nw, conc, n, func(i int) float64 { return float64(i) * float64(i) }, func(lo, hi int) {
		if lo > 0 {
			bl.Dgemm(blas.NoTrans, blas.Trans, hi-lo, lo, k, -1, a[lo*lda:], lda, a, lda, beta, c[lo*ldc:], ldc)
		}
		bl.Dsyrk(blas.Lower, blas.NoTrans, hi-lo, k, -1, a[lo*lda:], lda, beta, c[lo*ldc+lo:], ldc)
	})
}

// gemmSub computes c = beta c - a b^T for the m x k a, n x k b and m x n c, splitting rows of c
// across nw workers when large.
func gemmSub(nw, conc, m, n, k int, a []float64, lda int, b []float64, ldb int, beta float64, c []float64, ldc int) {
	bl := kernels.Current().BLAS()
	if nw <= 1 || float64(m)*float64(n)*float64(k) < parMinFlops {
		bl.Dgemm(blas.NoTrans, blas.Trans, m, n, k, -1, a, lda, b, ldb, beta, c, ldc)
		return
	}
	splitRows(nw, conc, m, func(i int) float64 { return float64(i) }, func(lo, hi int) {
		bl.Dgemm(blas.NoTrans, blas.Trans, hi-lo, n, k, -1, a[lo*lda:], lda, b, ldb, beta, c[lo*ldc:], ldc)
	})
}
