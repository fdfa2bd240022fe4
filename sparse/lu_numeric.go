package sparse

import (
	"context"
	"fmt"
	"math"

	"gonum.org/v1/gonum/blas"

	"glle/kernels"
	"glle/parallel"
)

// PivotError reports a pivot of the unpivoted LU factorization that is too small to divide
// by: the matrix needs pivoting (or a different ordering), which LUFactor does not do.
//
// A failed pivot stops the elimination of its supernode and of the supernodes that depend on
// it; the independent parts of the elimination tree are still factored, and Column is the
// smallest index over their failed pivots (the first of each supernode), so that it does not
// depend on the worker count.
type PivotError struct {
	// Column is the original index of the column whose pivot failed: the index in the matrix
	// given to Analyze, or for GramLU the caller's point (mapped through the BPattern's
	// breadth-first relabelling).
	Column int
	Pivot  float64 // its value
}

// Error implements error.
func (e *PivotError) Error() string {
	return fmt.Sprintf("sparse: LU pivot %g at column %d is too small for a factorization without pivoting", e.Pivot, e.Column)
}

// luWholePanel: panels this narrow are factored entirely by luBlock (wider ones by blocks:
// luBlock on each diagonal block, the panel solves and Dgemm for the rest).
const luWholePanel = smallPanel

// luPivotTol is the smallest pivot magnitude LUFactor accepts, relative to the largest
// absolute entry of the matrix's diagonal: a smaller one would amplify rounding errors by
// more than 1e8.
const luPivotTol = 1e-8

// LUFactor is a numeric supernodal LU factorization without pivoting, P A P^T = L U (L unit
// lower triangular), of a square matrix A whose pattern is symmetric (the pattern a Symbolic
// was made for). The factors share the Symbolic's supernodes: L's panels and U^T's panels have
// the layout of a Cholesky factor's, so the triangular solves are the Cholesky solves of the
// two panels (L with a unit diagonal stored as ones). All memory is allocated by NewLUFactor.
//
// With Factorize's singularLast, the last pivot is replaced by 1: for A of rank n-1 whose
// leading principal minors of order n-1 are nonsingular (B = I - W for sum-to-one weights on a
// connected graph), the factors are then those of A + e_r e_r^T, r = Perm()[n-1], which is
// nonsingular; GramLU uses this to apply the pseudo-inverse of A^T A.
//
// An LUFactor is not safe for concurrent use.
type LUFactor struct {
	s        *Symbolic
	l, u     *Factor     // solve views: panels of L (unit diagonal stored) and of U^T
	stacks   [][]float64 // full update matrices (mu x mu, row-major), one stack per list plus the top
	works    [][]float64 // dense update workspaces (full, mu x mu)
	runs     [][]int32   // per stack: run boundaries of a child's rel (relRuns)
	aSwap    []uint8     // swap of each assembly entry (Symbolic.aSrc order): 1 if transposed
	av       []float64   // per assembly entry, its L-panel and U-panel values, interleaved
	diagQ    []int32     // input entries on the diagonal
	diagMax  float64
	last     float64 // the computed last pivot (before replacement)
	minPivot float64 // smallest |pivot| other than a replaced last one
	valid    bool
	// pf records failed pivots (PivotError's column; GramLU maps it to the BPattern's points).
	pf pivotFailures
}

// NewLUFactor allocates an LU factor for the symbolic analysis s of the CSR pattern
// (rowPtr, colIdx), which must be the pattern s was made for.
func NewLUFactor[I int | int32](s *Symbolic, rowPtr []int, colIdx []I) *LUFactor {
	if len(rowPtr) != s.n+1 || rowPtr[s.n] != s.nnzIn || len(colIdx) != s.nnzIn {
		panic("sparse: NewLUFactor pattern does not match the analysis")
	}
	sc := &s.sched
	buf := s.takeLX(2) // prefaulted by the analysis (NewGramLU's luFactor)
	size := s.lxPtr[s.ns]
	lx, ux := buf[:size:size], buf[size:]
	f := &LUFactor{
		s:      s,
		l:      solveView(s, lx),
		u:      solveView(s, ux),
		stacks: make([][]float64, len(sc.stackLen)),
		works:  make([][]float64, len(sc.stackLen)),
		pf:     newPivotFailures(s),
	}
	f.u.y = f.l.y
	f.u.sp = f.l.plan() // one parallel-solve plan serves both views
	// An entry (i, j), j <= i, whose permuted position is above the diagonal is assembled
	// transposed (the symbolic analysis places every stored lower entry in the permuted lower
	// triangle): its A value belongs to U's panel and its A^T value to L's.
	swap := make([]bool, s.nnzIn)
	for i := 0; i < s.n; i++ {
		for q := rowPtr[i]; q < rowPtr[i+1]; q++ {
			j := int(colIdx[q])
			switch {
			case j == i:
				f.diagQ = append(f.diagQ, int32(q))
			case j < i && s.iperm[i] < s.iperm[j]:
				swap[q] = true
			}
		}
	}
	// The assembly reads A's values in the order of the supernodes (gatherValues), not in
	// the input pattern's order, in which they are scattered.
	f.aSwap = make([]uint8, len(s.aSrc))
	for p, src := range s.aSrc {
		if swap[src] {
			f.aSwap[p] = 1
		}
	}
	f.av = make([]float64, 2*len(s.aSrc))
	// The schedule's stack offsets count packed triangles, mu(mu+1)/2 entries per update
	// matrix; twice that holds the full mu x mu matrix, so doubling every offset keeps the
	// schedule's stack discipline.
	f.runs = make([][]int32, len(sc.stackLen))
	for k := range sc.stackLen {
		f.stacks[k] = make([]float64, 2*sc.stackLen[k])
		f.works[k] = make([]float64, sc.workLen[k])
		f.runs[k] = make([]int32, 0, s.maxUpdate+1)
	}
	return f
}

// solveView is a Factor over the panels lx that is used only for triangular solves.
func solveView(s *Symbolic, lx []float64) *Factor {
	f := &Factor{s: s, lx: lx, y: make([]float64, s.n)}
	f.sn = kernels.Supernodes{LX: lx, LXPtr: s.lxPtr, First: s.sFirst, RowPtr: s.sRowPtr, Rows: s.sRows}
	return f
}

// Symbolic returns the analysis the factor was made for.
func (f *LUFactor) Symbolic() *Symbolic { return f.s }

// Solve sets dst = A^{-1} b using the last successful factorization (P A P^T = L U: the
// triangular solves L z = P b, U y = z, dst = P^T y). dst may alias b. It panics if the factor
// is not valid or the lengths differ from n. The result has the same bits for any number of
// workers.
func (f *LUFactor) Solve(dst, b []float64) { f.solve(dst, b, false) }

// SolveT sets dst = A^{-T} b (the triangular solves U^T z = P b, L^T y = z), as Solve.
func (f *LUFactor) SolveT(dst, b []float64) { f.solve(dst, b, true) }

func (f *LUFactor) solve(dst, b []float64, trans bool) {
	s := f.s
	if !f.valid {
		panic("sparse: LUFactor solve without a successful Factorize")
	}
	if len(dst) != s.n || len(b) != s.n {
		panic("sparse: LUFactor solve length mismatch")
	}
	y := f.l.y
	for k, o := range s.perm {
		y[k] = b[o]
	}
	if trans {
		f.u.solvePair(f.l, y, 1)
	} else {
		f.l.solvePair(f.u, y, 1)
	}
	for k, o := range s.perm {
		dst[o] = y[k]
	}
}

// LastPivot returns the last pivot the latest Factorize computed before replacing it, with
// singularLast; NaN after a Factorize without it.
func (f *LUFactor) LastPivot() float64 { return f.last }

// MinPivot returns the smallest pivot magnitude of the latest Factorize, a replaced last pivot
// excluded.
func (f *LUFactor) MinPivot() float64 { return f.minPivot }

// Factorize computes P A P^T = L U for A's values val and A^T's values valT, both in the order
// of the analysed CSR pattern's stored entries (entry (i, j) holds A[i][j] in val and A[j][i]
// in valT; only entries with j <= i are read). With singularLast the last pivot is replaced by
// 1 (see LUFactor). It returns a *PivotError when a pivot (other than a replaced last one) is
// below luPivotTol times the largest diagonal magnitude of A (the same error for any worker
// count, see there), and ctx.Err() when ctx is done.
func (f *LUFactor) Factorize(ctx context.Context, val, valT []float64, singularLast bool) error {
	s := f.s
	if len(val) != s.nnzIn || len(valT) != s.nnzIn {
		panic("sparse: LUFactor.Factorize values do not match the analysed pattern")
	}
	f.valid = false
	f.diagMax = 0
	f.last = math.NaN() // set again only with singularLast (it was left from an earlier call)
	for _, q := range f.diagQ {
		// A NaN is skipped: math.Max would make the threshold NaN, and the first pivot
		// tested would be blamed instead of the NaN's own column.
		if v := math.Abs(val[q]); v > f.diagMax {
			f.diagMax = v
		}
	}
	if f.diagMax == 0 {
		f.diagMax = 1
	}
	f.minPivot = math.Inf(1)
	mins := make([]float64, s.sched.workers+1) // per stack
	for i := range mins {
		mins[i] = math.Inf(1)
	}
	f.pf.reset()
	f.gatherValues(val, valT)
	err := s.eachNode(ctx, func(ctx context.Context, t int32, st, nw int) error {
		return f.node(ctx, t, st, nw, singularLast, &mins[st])
	})
	if err != nil {
		return err
	}
	if fl, ok := f.pf.first(); ok {
		return &PivotError{Column: fl.col, Pivot: fl.pivot}
	}
	for _, m := range mins {
		f.minPivot = math.Min(f.minPivot, m)
	}
	f.l.valid, f.u.valid, f.valid = true, true, true
	return nil
}

// gatherValues fills f.av with A's stored lower-triangle entries in assembly order: for each,
// the value its L panel receives and the value its U panel receives (A's and A^T's, swapped
// for an entry that lands transposed). The reads are scattered over val and valT; done here in
// one parallel pass, they leave each supernode's assembly a sequential read.
func (f *LUFactor) gatherValues(val, valT []float64) {
	s := f.s
	src := [2][]float64{val, valT}
	_ = parallel.For(context.Background(), len(s.aSrc), s.conc, func(_ context.Context, _, lo, hi int) error {
		av := f.av[2*lo : 2*hi]
		sw := f.aSwap[lo:hi]
		for p, q := range s.aSrc[lo:hi] {
			x := sw[p] & 1
			av[2*p], av[2*p+1] = src[x][q], src[1-x][q]
		}
		return nil
	})
}

// node assembles, factors and updates supernode t (stack st, nw workers for the dense
// kernels), lowering *minp to its smallest pivot magnitude. A failed pivot marks t failed and
// is recorded in f.pf; a node with a failed child is skipped and marked failed (a
// child's update is read only by its parent, so nothing reads the missing updates).
func (f *LUFactor) node(ctx context.Context, t int32, st, nw int, singularLast bool, minp *float64) error {
	s := f.s
	sc := &s.sched
	if f.pf.skip(s, t) {
		return nil
	}
	c0, w, m := s.nodeShape(t)
	mu := m - w
	pl := f.l.lx[s.lxPtr[t]:s.lxPtr[t+1]]
	pu := f.u.lx[s.lxPtr[t]:s.lxPtr[t+1]]
	if nw <= 1 || m*w < parMinEntries {
		clear(pl)
		clear(pu)
	} else {
		// Top supernodes: the panels (megabytes each) are cleared by row bands on the workers.
		splitRows(nw, s.conc, m, func(i int) float64 { return float64(i) }, func(lo, hi int) {
			clear(pl[lo*w : hi*w])
			clear(pu[lo*w : hi*w])
		})
	}
	av := f.av[2*s.aPtr[t] : 2*s.aPtr[t+1]]
	for q, d := range s.aDst[s.aPtr[t]:s.aPtr[t+1]] {
		pl[d] += av[2*q]
		pu[d] += av[2*q+1]
	}
	for _, c := range sc.children[t] {
		gc, rel := f.childUpdate(c)
		extendAddFullPanel(nw, s.conc, pl, pu, w, gc, rel, f.runs[st])
	}
	isLast := singularLast && c0+w == s.n
	j, d := f.panel(ctx, pl, pu, m, w, st, nw, isLast)
	if err := ctx.Err(); err != nil {
		return err // the panel stopped between blocks
	}
	if j >= 0 {
		f.pf.record(t, st, s.perm[c0+j], d)
		return nil
	}
	for k := 0; k < w; k++ {
		if isLast && k == w-1 {
			continue
		}
		*minp = math.Min(*minp, math.Abs(pl[k*w+k]))
	}
	// L's unit diagonal is stored as ones for the solves (U's diagonal is in pu).
	for k := 0; k < w; k++ {
		pl[k*w+k] = 1
	}
	if mu > 0 {
		l21, u21 := pl[w*w:], pu[w*w:]
		g := f.works[st][:mu*mu]
		// G = -L21 U12 (full): the front's Schur complement, rows and columns in the order of
		// the supernode's rows below its diagonal block.
		schurLU(nw, s.conc, mu, w, l21, u21, g)
		for _, c := range sc.children[t] {
			gc, rel := f.childUpdate(c)
			extendAddFullUpdate(nw, s.conc, g, w, mu, gc, rel, f.runs[st])
		}
		dst := f.stacks[st][2*sc.off[t]:][:mu*mu]
		if nw <= 1 || mu*mu < parMinEntries {
			copy(dst, g)
		} else {
			splitRows(nw, s.conc, mu, func(i int) float64 { return float64(i) }, func(lo, hi int) {
				copy(dst[lo*mu:hi*mu], g[lo*mu:hi*mu])
			})
		}
	}
	return nil
}

// schurLU sets the mu x mu g to -l21 u21^T for the mu x w panels l21 and u21 (row-major, leading
// dimension w): with the backend's narrow-product kernel when it has one for this w (rows split
// across nw workers when large), else in Go for w <= smallPanel and with Dgemm above.
func schurLU(nw, conc, mu, w int, l21, u21, g []float64) {
	if ng, ok := kernels.Current().(kernels.NarrowGemmer); ok && w <= ng.GemmMaxKNarrow() {
		if nw <= 1 || float64(mu)*float64(mu)*float64(w) < parMinFlops {
			ng.GemmNTNeg(mu, mu, w, l21, w, u21, w, g, mu)
			return
		}
		splitRows(nw, conc, mu, func(i int) float64 { return float64(i) }, func(lo, hi int) {
			ng.GemmNTNeg(hi-lo, mu, w, l21[lo*w:], w, u21, w, g[lo*mu:], mu)
		})
		return
	}
	if w <= smallPanel {
		negABt(mu, w, l21, u21, g, false)
		return
	}
	gemmSub(nw, conc, mu, mu, w, l21, w, u21, w, 0, g, mu)
}

// childUpdate returns child c's full update matrix (the Schur complement of its front, mc x mc
// row-major) and the positions of its rows among its parent's rows.
func (f *LUFactor) childUpdate(c int32) (gc []float64, rel []int32) {
	sc := &f.s.sched
	rel = f.s.childRel(c)
	mc := int64(len(rel))
	return f.stacks[sc.stackOf[c]][2*sc.off[c]:][:mc*mc], rel
}

// parMinEntries is the size (entries touched) from which the memory-bound steps of a top
// supernode (clearing its panels, the extend-adds, copying its update matrix) are split by rows
// across the workers; a variable so that tests can force the split on small matrices.
var parMinEntries = 1 << 16

// extendAddFullPanel adds the entries of a child's full update matrix gc that fall in the
// parent's columns (or, transposed, rows) [0, w) into the parent's panels: entry (i, j) is the
// update of the front's entry (rel[i], rel[j]); on or below the diagonal (rel[j] <= rel[i]) it
// belongs to the L panel pl at row rel[i], column rel[j], above it to the U^T panel pu at row
// rel[j], column rel[i]. Diagonal entries go to both (each panel holds the front's diagonal).
// The L-panel part is added one run of consecutive columns at a time (relRuns; runs is a
// buffer for them). Child row i writes only row rel[i] of pl and column rel[i] of pu, so large
// children are split by rows across nw workers (each entry still receives one addition).
func extendAddFullPanel(nw, conc int, pl, pu []float64, w int, gc []float64, rel []int32, runs []int32) {
	mc := len(rel)
	js := splitAt(rel, w)
	runs = relRuns(runs, rel[:js])
	if nw <= 1 || mc*js < parMinEntries {
		extendPanelRows(pl, pu, w, gc, rel, runs, js, 0, mc)
		return
	}
	// Rows above js carry mc + 1 entries, the others js.
	splitRows(nw, conc, mc, func(i int) float64 {
		return float64(min(i, js))*float64(mc+1) + float64(max(0, i-js))*float64(js)
	}, func(lo, hi int) { extendPanelRows(pl, pu, w, gc, rel, runs, js, lo, hi) })
}

// extendPanelRows is extendAddFullPanel for the child's rows [lo, hi).
func extendPanelRows(pl, pu []float64, w int, gc []float64, rel, runs []int32, js, lo, hi int) {
	mc := len(rel)
	for i := lo; i < min(hi, js); i++ {
		ri := int(rel[i])
		row := gc[i*mc : i*mc+mc]
		addRuns(pl[ri*w:], row, rel, runs, i+1, 0)
		for j := i; j < mc; j++ {
			pu[int(rel[j])*w+ri] += row[j]
		}
	}
	for i := max(lo, js); i < hi; i++ {
		addRuns(pl[int(rel[i])*w:], gc[i*mc:i*mc+js], rel, runs, js, 0)
	}
}

// addRuns adds row[j] to dst[rel[j]-off] for j < cnt, one run of relRuns at a time.
func addRuns(dst, row []float64, rel, runs []int32, cnt, off int) {
	for r := 0; r+1 < len(runs) && int(runs[r]) < cnt; r++ {
		j0, j1 := int(runs[r]), min(int(runs[r+1]), cnt)
		src := row[j0:j1]
		d := dst[int(rel[j0])-off:][:len(src)]
		for q, v := range src {
			d[q] += v
		}
	}
}

// relRuns sets runs to the boundaries of the maximal runs of consecutive values in the
// increasing rel: run r is rel[runs[r]:runs[r+1]], with values rel[runs[r]], +1, +2, ...;
// the last boundary is len(rel). The extend-adds add a child's row one run at a time: at
// n = 1M the runs average 17 entries.
func relRuns(runs []int32, rel []int32) []int32 {
	runs = runs[:0]
	for j := range rel {
		if j == 0 || rel[j] != rel[j-1]+1 {
			runs = append(runs, int32(j))
		}
	}
	return append(runs, int32(len(rel)))
}

// extendAddFullUpdate adds the entries of a child's full update matrix gc whose row and column
// both fall below the parent's columns into the parent's full update matrix g (order mu): entry
// (i, j) goes to (rel[i]-w, rel[j]-w), one run of consecutive columns at a time (runs is a
// buffer for relRuns). The child's rows map to distinct rows of g, so large children are split
// by rows across nw workers (each entry still receives one addition).
func extendAddFullUpdate(nw, conc int, g []float64, w, mu int, gc []float64, rel []int32, runs []int32) {
	mc := len(rel)
	js := splitAt(rel, w)
	runs = relRuns(runs, rel[js:])
	if nw <= 1 || (mc-js)*(mc-js) < parMinEntries {
		extendUpdateRows(g, w, mu, gc, rel, runs, js, 0, mc-js)
		return
	}
	splitRows(nw, conc, mc-js, func(i int) float64 { return float64(i) },
		func(lo, hi int) { extendUpdateRows(g, w, mu, gc, rel, runs, js, lo, hi) })
}

// extendUpdateRows is extendAddFullUpdate for the child's rows js+lo, ..., js+hi-1.
func extendUpdateRows(g []float64, w, mu int, gc []float64, rel, runs []int32, js, lo, hi int) {
	mc := len(rel)
	rj := rel[js:]
	for i := js + lo; i < js+hi; i++ {
		addRuns(g[(int(rel[i])-w)*mu:], gc[i*mc+js:i*mc+mc], rj, runs, mc-js, w)
	}
}

// panel factors the m x w panels pl (lower part of the front's columns) and pu (its upper part,
// transposed) in place: the leading w x w blocks get L11 (below the diagonal; the diagonal holds
// U's) and U11^T, the rest L21 = A21 U11^{-1} and U12^T = (L11^{-1} A12)^T. It returns (-1, 0)
// on success or the failing column and its pivot, and stops between column blocks when ctx
// is done. With last, the last pivot of the panel is recorded in f.last and replaced by 1.
func (f *LUFactor) panel(ctx context.Context, pl, pu []float64, m, w, st, nw int, last bool) (int, float64) {
	tol := luPivotTol * f.diagMax
	if w <= luWholePanel {
		return f.luBlock(pl, pu, m, w, w, tol, last)
	}
	for k0 := 0; k0 < w; k0 += panelBlock {
		if ctx.Err() != nil {
			return -1, 0 // node returns the context's error (a large separator: 0.2 s and more)
		}
		k1 := min(k0+panelBlock, w)
		b := k1 - k0
		if j, d := f.luBlock(pl[k0*w+k0:], pu[k0*w+k0:], b, w, b, tol, last && k1 == w); j >= 0 {
			return k0 + j, d
		}
		if m > k1 {
			// Rows below the block: L part times U_kk^{-1}, U^T part times L_kk^{-T}.
			trsmSub(nw, f.s.conc, m-k1, b, pu[k0*w+k0:], w, pl[k1*w+k0:], w, blas.NonUnit)
			trsmSub(nw, f.s.conc, m-k1, b, pl[k0*w+k0:], w, pu[k1*w+k0:], w, blas.Unit)
			// The trailing columns: the rows below the diagonal block in one product each,
			// the diagonal block one block column at a time from its diagonal down, since each
			// panel needs only its lower triangle there (the part above is the other panel's).
			if m > w && w > k1 {
				gemmSub(nw, f.s.conc, m-w, w-k1, b, pl[w*w+k0:], w, pu[k1*w+k0:], w, 1, pl[w*w+k1:], w)
				gemmSub(nw, f.s.conc, m-w, w-k1, b, pu[w*w+k0:], w, pl[k1*w+k0:], w, 1, pu[w*w+k1:], w)
			}
			for j0 := k1; j0 < w; j0 += panelBlock {
				j1 := min(j0+panelBlock, w)
				gemmSub(nw, f.s.conc, w-j0, j1-j0, b, pl[j0*w+k0:], w, pu[j0*w+k0:], w, 1, pl[j0*w+j0:], w)
				gemmSub(nw, f.s.conc, w-j0, j1-j0, b, pu[j0*w+k0:], w, pl[j0*w+k0:], w, 1, pu[j0*w+j0:], w)
			}
		}
	}
	return -1, 0
}

// luBlock factors columns [0, w) of the m-row panels pl and pu (lda) in Crout's order, with the
// backend's kernel when it has one (kernels.PanelLUer), else with luCroutGo. It returns (-1, 0)
// or the first failing column and its pivot; with last, the last column's pivot is recorded in
// f.last and replaced by 1.
func (f *LUFactor) luBlock(pl, pu []float64, m, lda, w int, tol float64, last bool) (int, float64) {
	if pk, ok := kernels.Current().(kernels.PanelLUer); ok {
		j, d, lp := pk.PanelLU(pl, pu, m, lda, w, tol, last)
		if last && j < 0 {
			f.last = lp
		}
		return j, d
	}
	return f.luCroutGo(pl, pu, m, lda, w, tol, last)
}

// luCroutGo factors columns [0, w) of the m-row panels pl and pu (lda) with Crout's left-looking
// order in Go (the purego build's kernel), row-oriented like cholPanelGo: for each column j, the pivot
// d_j = a_jj - L[j][:j] . U[:j][j], then for each row i > j the entries
// L[i][j] = (a_ij - L[i][:j] . U[:j][j]) / d_j and U[j][i] = a_ji - U[:j][i] . L[j][:j]; every
// dot product reads row prefixes of the panels. Two rows are done together (four independent
// dot products, each still summed in the order k = 0, 1, ...), and each later pivot's diagonal
// entry is reduced by L[i][j] U[j][i] as soon as they are known, in the same order, so the
// pivot needs no dot product of its own: the bits are those of the one-row-at-a-time loop.
// It returns as luBlock.
func (f *LUFactor) luCroutGo(pl, pu []float64, m, lda, w int, tol float64, last bool) (int, float64) {
	for j := 0; j < w; j++ {
		lj := pl[j*lda : j*lda+j]
		uj := pu[j*lda : j*lda+j]
		d := pl[j*lda+j] // already reduced by L[j][:j] . U[:j][j] (below)
		if last && j == w-1 {
			f.last = d
			d = 1
		} else if !(math.Abs(d) >= tol) {
			return j, d
		}
		pl[j*lda+j] = d
		pu[j*lda+j] = d
		inv := 1 / d
		i := j + 1
		for ; i+1 < m; i += 2 {
			l0 := pl[i*lda : i*lda+j+1]
			u0 := pu[i*lda : i*lda+j+1]
			l1 := pl[(i+1)*lda : (i+1)*lda+j+1]
			u1 := pu[(i+1)*lda : (i+1)*lda+j+1]
			x0, y0, x1, y1 := l0[j], u0[j], l1[j], u1[j]
			l0, u0, l1, u1 = l0[:len(uj)], u0[:len(uj)], l1[:len(uj)], u1[:len(uj)]
			lj := lj[:len(uj)]
			for k, v := range uj {
				g := lj[k]
				x0 -= l0[k] * v
				y0 -= u0[k] * g
				x1 -= l1[k] * v
				y1 -= u1[k] * g
			}
			x0 *= inv
			x1 *= inv
			pl[i*lda+j], pu[i*lda+j] = x0, y0
			pl[(i+1)*lda+j], pu[(i+1)*lda+j] = x1, y1
			if i+1 < w {
				pl[i*lda+i] -= x0 * y0
				pl[(i+1)*lda+i+1] -= x1 * y1
			} else if i < w {
				pl[i*lda+i] -= x0 * y0
			}
		}
		for ; i < m; i++ {
			li := pl[i*lda : i*lda+j+1]
			ui := pu[i*lda : i*lda+j+1]
			x, y := li[j], ui[j]
			li, ui = li[:len(uj)], ui[:len(uj)]
			lj := lj[:len(uj)]
			for k, v := range uj {
				x -= li[k] * v
				y -= ui[k] * lj[k]
			}
			x *= inv
			pl[i*lda+j], pu[i*lda+j] = x, y
			if i < w {
				pl[i*lda+i] -= x * y
			}
		}
	}
	return -1, 0
}
