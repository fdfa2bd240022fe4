package sparse

import "math"

// pivotFailures records the failed pivots of one numeric factorization (Cholesky or LU) so
// that the reported one does not depend on the worker count: a supernode whose pivot fails is
// marked and the supernodes above it are skipped (a child's update is read only by its
// parent), the independent parts of the elimination tree still run, and the failure reported
// is the one of smallest column over all of them (the first of each supernode).
type pivotFailures struct {
	failed []bool      // per supernode: its elimination stopped at its own or a descendant's pivot
	fails  []pivotFail // per stack: the failed pivot of smallest column
	// colMap maps the original index of a column to the index reported (a local pattern's
	// point order); nil means the original index.
	colMap []int32
}

// pivotFail is a failed pivot: its column as reported (math.MaxInt: none) and its value.
type pivotFail struct {
	col   int
	pivot float64
}

func newPivotFailures(s *Symbolic) pivotFailures {
	return pivotFailures{failed: make([]bool, s.ns), fails: make([]pivotFail, s.sched.workers+1)}
}

// reset forgets the failures of the previous factorization.
func (p *pivotFailures) reset() {
	clear(p.failed)
	for i := range p.fails {
		p.fails[i] = pivotFail{col: math.MaxInt}
	}
}

// skip reports whether supernode t depends on a failed child, marking t failed if so.
func (p *pivotFailures) skip(s *Symbolic, t int32) bool {
	for _, c := range s.sched.children[t] {
		if p.failed[c] {
			p.failed[t] = true
			return true
		}
	}
	return false
}

// record marks supernode t failed at its original column col with pivot d (stack st).
func (p *pivotFailures) record(t int32, st, col int, d float64) {
	p.failed[t] = true
	if p.colMap != nil {
		col = int(p.colMap[col])
	}
	if fl := &p.fails[st]; col < fl.col {
		*fl = pivotFail{col: col, pivot: d}
	}
}

// first returns the failure of smallest column; ok is false when no pivot failed.
func (p *pivotFailures) first() (fl pivotFail, ok bool) {
	fl = pivotFail{col: math.MaxInt}
	for _, f := range p.fails {
		if f.col < fl.col {
			fl = f
		}
	}
	return fl, fl.col != math.MaxInt
}
