package parallel

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
)

func TestForCoversEachIndexOnce(t *testing.T) {
	for _, n := range []int{0, 1, 2, 3, 7, 100, 1001} {
		for _, w := range []int{1, 2, 3, 7, 16} {
			seen := make([]int32, n)
			err := For(context.Background(), n, w, func(_ context.Context, worker, lo, hi int) error {
				if worker < 0 || worker >= w {
					t.Errorf("worker %d out of range", worker)
				}
				for i := lo; i < hi; i++ {
					atomic.AddInt32(&seen[i], 1)
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			for i, s := range seen {
				if s != 1 {
					t.Fatalf("n=%d w=%d: index %d seen %d times", n, w, i, s)
				}
			}
		}
	}
}

func TestChunksReductionIndependentOfWorkers(t *testing.T) {
	const n, size = 10007, 64
	x := make([]float64, n)
	for i := range x {
		x[i] = 1.0 / float64(i+1) // sums of these are order-sensitive in floating point
	}
	sum := func(workers int) float64 {
		part := make([]float64, NumChunks(n, size))
		if err := Chunks(context.Background(), n, size, workers, func(_ context.Context, _, c, lo, hi int) error {
			s := 0.0
			for i := lo; i < hi; i++ {
				s += x[i]
			}
			part[c] = s
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		s := 0.0
		for _, p := range part {
			s += p
		}
		return s
	}
	ref := sum(1)
	for _, w := range []int{2, 3, 7} {
		if got := sum(w); got != ref {
			t.Fatalf("workers=%d: sum %v != %v", w, got, ref)
		}
	}
}

func TestForPropagatesErrorAndCancels(t *testing.T) {
	boom := errors.New("boom")
	err := For(context.Background(), 1000, 4, func(ctx context.Context, worker, lo, hi int) error {
		if worker == 1 {
			return boom
		}
		return nil
	})
	if !errors.Is(err, boom) {
		t.Fatalf("got %v, want boom", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := For(ctx, 10, 2, func(context.Context, int, int, int) error { return nil }); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled context: got %v", err)
	}
}
