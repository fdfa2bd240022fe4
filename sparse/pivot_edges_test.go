package sparse

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"testing"
	"time"
)

// denseDominant returns a dense symmetric n x n matrix (full pattern): 4 on the diagonal,
// off-diagonals uniform in (-1/n, 1/n), so positive definite and well conditioned.
func denseDominant(n int, seed uint64) *testCSR {
	rng := rand.New(rand.NewPCG(seed, 1))
	var is, js []int
	var vs []float64
	for i := 0; i < n; i++ {
		for j := 0; j <= i; j++ {
			v := 4.0
			if i != j {
				v = (rng.Float64() - 0.5) * 2 / float64(n)
			}
			is, js, vs = append(is, i), append(js, j), append(vs, v)
		}
	}
	return csrFromTriplets(n, is, js, vs, true)
}

// withPivot returns a's values with row and column col decoupled (off-diagonals 0) and the
// diagonal entry v, so that col's pivot is exactly v in any elimination order.
func withPivot(a *testCSR, col int, v float64) []float64 {
	val := append([]float64(nil), a.val...)
	for i := 0; i < a.n; i++ {
		for p := a.rowPtr[i]; p < a.rowPtr[i+1]; p++ {
			switch j := a.colIdx[p]; {
			case i == col && j == col:
				val[p] = v
			case i == col || j == col:
				val[p] = 0
			}
		}
	}
	return val
}

// TestPivotNaN: a NaN pivot is an error naming its column in both factorizations, at every
// panel width. Before session 31 the OpenBLAS build's Cholesky accepted it for diagonal
// blocks of 32 columns or more (OpenBLAS's Dpotrf rejects only pivots <= 0), and the LU
// named column 0, its NaN having made the pivot threshold NaN.
func TestPivotNaN(t *testing.T) {
	ctx := context.Background()
	for _, w := range []int{5, 32, 33, 97, 129} {
		a := denseDominant(w, uint64(w))
		s, err := Analyze(ctx, a.n, a.rowPtr, a.colIdx, SymbolicOptions{Ordering: OrderingNatural})
		if err != nil {
			t.Fatal(err)
		}
		col := w / 2
		val := withPivot(a, col, math.NaN())
		var npd *NotPositiveDefiniteError
		if err := NewFactor(s).Factorize(ctx, val, 0); !errors.As(err, &npd) || npd.Column != col {
			t.Errorf("w=%d: Cholesky with a NaN pivot at column %d: %v", w, col, err)
		}
		var pe *PivotError
		if err := NewLUFactor(s, a.rowPtr, a.colIdx).Factorize(ctx, val, val, false); !errors.As(err, &pe) || pe.Column != col {
			t.Errorf("w=%d: LU with a NaN pivot at column %d: %v", w, col, err)
		}
	}
}

// TestLUFactorLastPivotReset: LastPivot is the replaced pivot of the latest Factorize with
// singularLast, NaN after one without (it kept the earlier call's value before session 31).
func TestLUFactorLastPivotReset(t *testing.T) {
	ctx := context.Background()
	a := denseDominant(10, 3)
	s, err := Analyze(ctx, a.n, a.rowPtr, a.colIdx, SymbolicOptions{Ordering: OrderingNatural})
	if err != nil {
		t.Fatal(err)
	}
	f := NewLUFactor(s, a.rowPtr, a.colIdx)
	if err := f.Factorize(ctx, a.val, a.val, true); err != nil {
		t.Fatal(err)
	}
	if lp := f.LastPivot(); !(lp > 0) {
		t.Fatalf("LastPivot with singularLast: %v, want the positive last pivot", lp)
	}
	if err := f.Factorize(ctx, a.val, a.val, false); err != nil {
		t.Fatal(err)
	}
	if lp := f.LastPivot(); !math.IsNaN(lp) {
		t.Errorf("LastPivot after a Factorize without singularLast: %v, want NaN", lp)
	}
}

// TestLUFactorCancelInSupernode: a dense matrix is one supernode; the LU stops between its
// column blocks when the context is done (it ran the whole 0.2 s supernode and returned nil
// before session 31). The 5 ms head start only has to fall inside the factorization.
func TestLUFactorCancelInSupernode(t *testing.T) {
	const n = 2000
	a := denseDominant(n, 7)
	s, err := Analyze(context.Background(), a.n, a.rowPtr, a.colIdx, SymbolicOptions{Ordering: OrderingNatural, Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	lf := NewLUFactor(s, a.rowPtr, a.colIdx)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- lf.Factorize(ctx, a.val, a.val, false) }()
	time.Sleep(5 * time.Millisecond)
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("LU cancelled 5 ms into a one-supernode factorization: %v, want context.Canceled", err)
	}
}
