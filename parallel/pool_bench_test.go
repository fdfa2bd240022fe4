package parallel

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
)

// BenchmarkFor measures the fork-join overhead of For (ns/op): n trivial items split over the
// workers.
func BenchmarkFor(b *testing.B) {
	ctx := context.Background()
	for _, n := range []int{1000, 1000000} {
		for _, w := range []int{1, 2} {
			b.Run(fmt.Sprintf("n=%d/workers=%d", n, w), func(b *testing.B) {
				var seen atomic.Int64
				body := func(_ context.Context, _, lo, hi int) error {
					seen.Add(int64(hi - lo))
					return nil
				}
				if err := For(ctx, n, w, body); err != nil || seen.Load() != int64(n) {
					b.Fatalf("For covered %d of %d items (err %v)", seen.Load(), n, err)
				}
				b.ReportAllocs()
				for b.Loop() {
					For(ctx, n, w, body)
				}
			})
		}
	}
}

// BenchmarkChunks measures the overhead of Chunks with 1024-item chunks.
func BenchmarkChunks(b *testing.B) {
	ctx := context.Background()
	const n = 1000000
	for _, w := range []int{1, 2} {
		b.Run(fmt.Sprintf("n=%d/workers=%d", n, w), func(b *testing.B) {
			var seen atomic.Int64
			body := func(_ context.Context, _, _, lo, hi int) error {
				seen.Add(int64(hi - lo))
				return nil
			}
			if err := Chunks(ctx, n, 1024, w, body); err != nil || seen.Load() != n {
				b.Fatalf("Chunks covered %d of %d items (err %v)", seen.Load(), n, err)
			}
			b.ReportAllocs()
			for b.Loop() {
				Chunks(ctx, n, 1024, w, body)
			}
		})
	}
}
