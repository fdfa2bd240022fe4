package parallel

import (
	"context"
	"errors"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// coversOnce runs a pool over n indices with w workers through run, checks the worker index
// and the range of every call with ok, and fails unless every index was visited exactly once.
func coversOnce(t *testing.T, n, w int, ok func(worker, lo, hi int) bool,
	run func(fn func(ctx context.Context, worker, lo, hi int) error) error) {
	t.Helper()
	seen := make([]int32, n)
	err := run(func(_ context.Context, worker, lo, hi int) error {
		if worker < 0 || worker >= w || !ok(worker, lo, hi) {
			t.Errorf("n=%d w=%d: worker %d, range [%d, %d) out of bounds", n, w, worker, lo, hi)
		}
		for i := lo; i < hi; i++ {
			atomic.AddInt32(&seen[i], 1)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for i, c := range seen {
		if c != 1 {
			t.Fatalf("n=%d w=%d: index %d seen %d times", n, w, i, c)
		}
	}
}

func TestForCoversEachIndexOnce(t *testing.T) {
	for _, n := range []int{0, 1, 2, 3, 7, 100, 1001} {
		for _, w := range []int{1, 2, 3, 7, 16} {
			coversOnce(t, n, w, func(_, lo, hi int) bool { return lo < hi },
				func(fn func(context.Context, int, int, int) error) error {
					return For(context.Background(), n, w, fn)
				})
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

func TestForJoinCoversEachIndexOnce(t *testing.T) {
	for _, n := range []int{0, 1, 63, 64, 65, 1001} {
		for _, w := range []int{1, 2, 3, 7} {
			for _, closed := range []bool{false, true} {
				join := make(chan struct{})
				if closed {
					close(join)
				} else {
					go close(join)
				}
				coversOnce(t, n, w, func(_, lo, hi int) bool { return lo%64 == 0 && lo < hi && hi-lo <= 64 },
					func(fn func(context.Context, int, int, int) error) error {
						return ForJoin(context.Background(), n, 64, w, join, fn)
					})
			}
		}
	}
}

// TestForJoinLateWorker checks that the last worker starts only once join is closed (and then
// helps), and that a context cancelled while it waits ends the pool with the context's error.
func TestForJoinLateWorker(t *testing.T) {
	join := make(chan struct{})
	var early, late atomic.Int32
	var closed atomic.Bool
	err := ForJoin(context.Background(), 64*100, 64, 2, join, func(_ context.Context, worker, lo, hi int) error {
		if worker == 1 {
			if !closed.Load() {
				t.Error("the late worker ran before join was closed")
			}
			late.Add(1)
			return nil
		}
		if early.Add(1) == 10 { // let the late worker in after 10 chunks
			closed.Store(true)
			close(join)
			for late.Load() == 0 { // wait until it has taken a chunk: it does help
				runtime.Gosched()
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if e, l := early.Load(), late.Load(); e+l != 100 || l == 0 {
		t.Errorf("chunks: %d by the first worker, %d by the late one (want 100 in all, some late)", e, l)
	}

	// A join that never closes does not hold the pool once the other workers have claimed
	// every chunk.
	never := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		done <- ForJoin(context.Background(), 64*10, 64, 3, never, func(context.Context, int, int, int) error { return nil })
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("ForJoin waited for a join that never came after every chunk was done")
	}

	ctx, cancel := context.WithCancel(context.Background())
	err = ForJoin(ctx, 64*4, 64, 2, never, func(_ context.Context, worker, lo, hi int) error {
		if worker == 0 && lo == 0 {
			cancel()
		}
		return nil
	})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled while the late worker waited: err = %v", err)
	}
}

// TestWorkerPanic: a panic on a worker goroutine reaches the caller's goroutine as a
// *WorkerPanic (so a deferred recover there can turn it into an error), for For, Chunks and
// ForJoin, and the other workers see their context cancelled.
func TestWorkerPanic(t *testing.T) {
	runs := map[string]func(fn func(ctx context.Context, lo int) error) error{
		"For": func(fn func(ctx context.Context, lo int) error) error {
			return For(context.Background(), 100, 4, func(ctx context.Context, _, lo, _ int) error { return fn(ctx, lo) })
		},
		"Chunks": func(fn func(ctx context.Context, lo int) error) error {
			return Chunks(context.Background(), 100, 10, 4, func(ctx context.Context, _, _, lo, _ int) error { return fn(ctx, lo) })
		},
		"ForJoin": func(fn func(ctx context.Context, lo int) error) error {
			return ForJoin(context.Background(), 100, 10, 4, nil, func(ctx context.Context, _, lo, _ int) error { return fn(ctx, lo) })
		},
	}
	for name, run := range runs {
		got := func() (p any) {
			defer func() { p = recover() }()
			_ = run(func(ctx context.Context, lo int) error {
				if lo == 0 {
					panic("boom")
				}
				<-ctx.Done() // the others wait for the cancellation the panic causes
				return ctx.Err()
			})
			return nil
		}()
		wp, ok := got.(*WorkerPanic)
		if !ok || wp.Value != "boom" || len(wp.Stack) == 0 {
			t.Errorf("%s: recovered %v (%T), want a *WorkerPanic with value boom and a stack", name, got, got)
			continue
		}
		// Unrecovered, Go prints Error(): it must show the worker's frames (this test's
		// closure), which the caller's goroutine no longer has.
		if !strings.Contains(wp.Error(), "TestWorkerPanic.func") {
			t.Errorf("%s: Error() lacks the worker's stack:\n%s", name, wp.Error())
		}
	}
}

// TestPanicBox: goroutines a caller starts itself hand their first panic to the waiter; a
// *WorkerPanic from a nested pool is kept as it is, not wrapped again.
func TestPanicBox(t *testing.T) {
	var box PanicBox
	box.Repanic() // nothing recorded: no panic
	var wg sync.WaitGroup
	for i := 0; i < 3; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { box.Record(recover()) }()
			if i == 1 {
				panic("band")
			}
		}()
	}
	wg.Wait()
	got := func() (p any) {
		defer func() { p = recover() }()
		box.Repanic()
		return nil
	}()
	if wp, ok := got.(*WorkerPanic); !ok || wp.Value != "band" || len(wp.Stack) == 0 {
		t.Fatalf("Repanic raised %v (%T), want the recorded *WorkerPanic", got, got)
	}
	var outer PanicBox
	inner := &WorkerPanic{Value: "inner"}
	if p := outer.Record(inner); p != inner {
		t.Errorf("a nested *WorkerPanic was wrapped: %v", p)
	}
}
