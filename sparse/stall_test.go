package sparse

import (
	"context"
	"errors"
	"testing"
)

// TestStalledRun: deflating a vector that is not an eigenvector (here 1e-4 away from the null
// vector e_0 of a diagonal matrix) leaves true residuals that no Lanczos step can lower: the
// run must stop after stallChecks failed residual tests, report Stalled, and not spend MaxOps.
// With the automatic shift, the stall rule moves the shift away from zero once (the smallest
// Ritz value is far above StallMargin |sigma|) and then reports the stall again.
func TestStalledRun(t *testing.T) {
	n := 500
	d := make([]float64, n)
	for i := 1; i < n; i++ {
		d[i] = 1e-3 * float64(i)
	}
	a := CSRMatrix{Dim: n, RowPtr: make([]int, n+1), ColIdx: make([]int32, n), Val: d}
	for i := 0; i < n; i++ {
		a.RowPtr[i+1] = i + 1
		a.ColIdx[i] = int32(i)
	}
	v := make([]float64, n)
	v[0], v[1] = 1, 1e-4
	for _, fixed := range []bool{true, false} {
		opts := EigOptions{NEV: 2, Tol: 1e-10, Deflate: [][]float64{v}, MaxOps: 500}
		if fixed {
			opts.Shift = -1e-4
		}
		res, err := SmallestEigs(context.Background(), a, opts)
		var nc *NotConvergedError
		if !errors.As(err, &nc) || !nc.Stalled {
			t.Fatalf("fixed shift %v: err %v, want a stalled *NotConvergedError", fixed, err)
		}
		// A stalled run stops after stallChecks failed tests, a handful of steps each; 100 is a
		// fifth of the budget a run without the rule spends.
		if res.OpApplies > 100 {
			t.Fatalf("fixed shift %v: %d operator applications, want an early stop", fixed, res.OpApplies)
		}
		wantShifts := 2 // the start and the move away from zero
		if fixed {
			wantShifts = 1
		}
		if len(res.Shifts) != wantShifts || (!fixed && !(res.Shifts[1] < 10*res.Shifts[0])) {
			t.Fatalf("fixed shift %v: shifts %v, want %d (a move away from zero)", fixed, res.Shifts, wantShifts)
		}
	}
}
