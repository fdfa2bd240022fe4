package parallel

import (
	"context"
	"runtime"

	"golang.org/x/sync/errgroup"
)

// Workers resolves a requested worker count: values <= 0 mean runtime.GOMAXPROCS(0).
func Workers(w int) int {
	if w <= 0 {
		w = runtime.GOMAXPROCS(0)
	}
	if w < 1 {
		w = 1
	}
	return w
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
	for w := 0; w < workers; w++ {
		lo := w * n / workers
		hi := (w + 1) * n / workers
		w := w
		g.Go(func() error {
			if err := gctx.Err(); err != nil {
				return err
			}
			return fn(gctx, w, lo, hi)
		})
	}
	return g.Wait()
}

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
