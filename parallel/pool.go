package parallel

import (
	"context"
	"fmt"
	"runtime"
	"runtime/debug"
	"sync"
	"sync/atomic"

	"golang.org/x/sync/errgroup"
)

// MaxWorkers bounds the worker count: every worker owns a workspace sized up front, so an
// absurd request would only exhaust memory.
const MaxWorkers = 1024

// Workers resolves a requested worker count: values <= 0 mean runtime.GOMAXPROCS(0), values
// above MaxWorkers mean MaxWorkers.
func Workers(w int) int {
	if w <= 0 {
		w = runtime.GOMAXPROCS(0)
	}
	return max(1, min(w, MaxWorkers))
}

// For splits [0, n) into at most `workers` contiguous ranges and calls fn(worker, lo, hi)
// once per range on its own goroutine. worker is in [0, workers) and identifies the
// workspace the call may use. The first error cancels the context passed to fn (callers
// check ctx.Err() between chunks of work) and is returned.
//
// Work split this way depends on the worker count; use Chunks for reductions whose
// result must not depend on it.
func For(ctx context.Context, n, workers int, fn func(ctx context.Context, worker, lo, hi int) error) error {
	if n <= 0 {
		return ctx.Err()
	}
	workers = Workers(workers)
	if workers > n {
		workers = n
	}
	if workers == 1 {
		if err := ctx.Err(); err != nil {
			return err
		}
		return fn(ctx, 0, 0, n)
	}
	g, gctx := errgroup.WithContext(ctx)
	var pc panicCatcher
	for w := 0; w < workers; w++ {
		lo := w * n / workers
		hi := (w + 1) * n / workers
		w := w
		g.Go(func() (err error) {
			defer pc.catch(&err)
			if err := gctx.Err(); err != nil {
				return err
			}
			return fn(gctx, w, lo, hi)
		})
	}
	err := g.Wait()
	pc.repanic()
	return err
}

// WorkerPanic is the value For, Chunks and ForJoin panic with on the caller's goroutine when
// fn panicked on one of their worker goroutines: the first panic's value and the worker's
// stack. The other workers see their context cancelled. A panic on a worker goroutine would
// otherwise end the program before any deferred recover of the caller could run.
type WorkerPanic struct {
	Value any
	Stack []byte
}

// Error gives the value and the worker's stack, so that a panic nobody recovers still shows
// where it happened (the caller's goroutine, where it is raised again, has other frames).
// Callers that want one line use Value.
func (p *WorkerPanic) Error() string {
	return fmt.Sprintf("parallel: a worker panicked: %v\n\nworker goroutine stack:\n%s", p.Value, p.Stack)
}

// PanicBox carries the first panic of goroutines a caller starts itself to the goroutine
// that waits for them, as the pool does for its workers: each goroutine defers
// func() { box.Record(recover()) }(), and the waiter calls box.Repanic() after the wait.
type PanicBox struct {
	first atomic.Pointer[WorkerPanic]
}

// Record keeps r (a recovered value; nil is ignored) as a *WorkerPanic with the current
// goroutine's stack, unless a panic was recorded already. A *WorkerPanic (from a nested
// pool) is kept as it is.
func (b *PanicBox) Record(r any) *WorkerPanic {
	if r == nil {
		return nil
	}
	p, ok := r.(*WorkerPanic)
	if !ok {
		p = &WorkerPanic{Value: r, Stack: debug.Stack()}
	}
	b.first.CompareAndSwap(nil, p)
	return p
}

// Repanic panics with the first recorded panic, if any.
func (b *PanicBox) Repanic() {
	if p := b.first.Load(); p != nil {
		panic(p)
	}
}

// panicCatcher records the first panic of a pool's workers.
type panicCatcher struct{ box PanicBox }

// catch is deferred by each worker (defer pc.catch(&err), so that recover runs directly in
// the deferred call): a panic becomes the worker's error, cancelling the group, and is
// recorded for repanic. It adds no allocation per worker.
func (c *panicCatcher) catch(err *error) {
	if p := c.box.Record(recover()); p != nil {
		*err = p
	}
}

// repanic panics with the first recorded worker panic, if any.
func (c *panicCatcher) repanic() { c.box.Repanic() }

// Chunks splits [0, n) into fixed chunks of `size` indices (the last may be shorter) that do
// not depend on the worker count, and hands them out to the workers in contiguous runs:
// worker w processes chunks [w*c/W, (w+1)*c/W). fn(worker, chunk, lo, hi) is called once per
// chunk. A reduction that stores one partial result per chunk and then sums the partials
// in chunk order gives the same bits for any worker count.
func Chunks(ctx context.Context, n, size, workers int, fn func(ctx context.Context, worker, chunk, lo, hi int) error) error {
	if size < 1 {
		panic("parallel: chunk size < 1")
	}
	nc := NumChunks(n, size)
	return For(ctx, nc, workers, func(ctx context.Context, w, clo, chi int) error {
		for c := clo; c < chi; c++ {
			if err := ctx.Err(); err != nil {
				return err
			}
			lo := c * size
			hi := lo + size
			if hi > n {
				hi = n
			}
			if err := fn(ctx, w, c, lo, hi); err != nil {
				return err
			}
		}
		return nil
	})
}

// NumChunks is the number of chunks Chunks uses for n indices.
func NumChunks(n, size int) int {
	if n <= 0 {
		return 0
	}
	return (n + size - 1) / size
}

// ForJoin is For for a pool that one goroutine joins late: workers-1 goroutines start at once
// and the last waits until join is closed (or the context is done). Every goroutine claims
// contiguous chunks of size indices, in increasing order, from a shared counter until none is
// left, calling fn(worker, lo, hi) once per chunk; a goroutine that joins after the last
// chunk was claimed does nothing, and the pool does not wait for join once every chunk is
// claimed. A caller uses it to leave a core to a job running beside the pool and to have that
// core help once the job is done. Which worker processes a chunk depends on timing: fn must
// write only per-index results (or reduce in an order-independent way, such as integer
// counts). With workers = 1, or join nil or already closed, every worker starts at once.
func ForJoin(ctx context.Context, n, size, workers int, join <-chan struct{}, fn func(ctx context.Context, worker, lo, hi int) error) error {
	if size < 1 {
		panic("parallel: chunk size < 1")
	}
	if n <= 0 {
		return ctx.Err()
	}
	workers = min(Workers(workers), NumChunks(n, size))
	if workers == 1 {
		join = nil // a single worker must not wait for anything
	}
	var next atomic.Int64
	claimed := make(chan struct{}) // closed when every chunk has been claimed
	var once sync.Once
	g, gctx := errgroup.WithContext(ctx)
	var pc panicCatcher
	for w := 0; w < workers; w++ {
		w := w
		g.Go(func() (err error) {
			defer pc.catch(&err)
			if w == workers-1 && join != nil {
				select {
				case <-join:
				case <-claimed: // nothing left to help with
					return nil
				case <-gctx.Done():
					return gctx.Err()
				}
			}
			for {
				if err := gctx.Err(); err != nil {
					return err
				}
				lo := int(next.Add(int64(size))) - size
				if lo >= n {
					once.Do(func() { close(claimed) })
					return nil
				}
				if err := fn(gctx, w, lo, min(lo+size, n)); err != nil {
					return err
				}
			}
		})
	}
	err := g.Wait()
	pc.repanic()
	return err
}
