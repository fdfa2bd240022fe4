package engine

import (
	"context"
	"testing"

	"glle/bench"
)

// TestTransformPoolCap: the scratch of a transform larger than maxPooledTransform is not kept
// for reuse (it would pin about 130 bytes per point of the largest batch ever transformed).
func TestTransformPoolCap(t *testing.T) {
	ctx := context.Background()
	X, _ := bench.SwissRoll(300, 1)
	m, err := Fit(ctx, X, Settings{Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	big, _ := bench.SwissRoll(maxPooledTransform/m.K+100, 2)
	if _, err := m.Transform(ctx, big); err != nil {
		t.Fatal(err)
	}
	for {
		b, _ := m.st.tfBufs.Get().(*transformBuf)
		if b == nil {
			break
		}
		if cap(b.idx) > maxPooledTransform {
			t.Fatalf("a transform of %d points left scratch of %d entries in the pool", maxPooledTransform/m.K+100, cap(b.idx))
		}
	}
}
