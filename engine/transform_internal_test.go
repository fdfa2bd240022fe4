package engine

import (
	"context"
	"runtime"
	"runtime/debug"
	"testing"

	"gonum.org/v1/gonum/mat"

	"glle/bench"
)

// poolQuiet makes the model's transform pool keep and show what is put in it, for the rest of
// the test: no garbage collection (each collection empties a sync.Pool, two in a row lose its
// values) and one P (a value put in a P's private slot is out of reach of a Get on another P).
// What remains is the race detector's random drop of a quarter of the values put (raceEnabled).
func poolQuiet(t *testing.T) {
	gc := debug.SetGCPercent(-1)
	procs := runtime.GOMAXPROCS(1)
	t.Cleanup(func() {
		runtime.GOMAXPROCS(procs)
		debug.SetGCPercent(gc)
	})
}

// drainTransformPool empties the model's transform pool and returns what it held.
func drainTransformPool(m *Model) []*transformBuf {
	var held []*transformBuf
	for {
		b, _ := m.st.tfBufs.Get().(*transformBuf)
		if b == nil {
			return held
		}
		held = append(held, b)
	}
}

// emptyTransformPool empties the model's transform pool without allocating.
func emptyTransformPool(m *Model) {
	for m.st.tfBufs.Get() != nil {
	}
}

// TestTransformPoolCap: the scratch of a transform larger than maxPooledTransform is not kept
// for reuse (it would pin about 130 bytes per point of the largest batch ever transformed),
// while a small transform's is. Each trial transforms a big batch, then a small one, and
// drains the pool: it must hold no big scratch, and the small transform's scratch, so that the
// pool is seen to be in use (before, an empty pool passed: a race detector dropping the big
// scratch, or a Transform bypassing the pool). Had the big scratch been kept, the small
// transform would have taken and returned it, so it would be found.
//
// Without the race detector every trial must find the small scratch. Under it each Put is
// dropped with probability 1/4 (sync.Pool's race mode): the small scratch is found with
// probability 3/4 per trial, and at least trials/4 = 4 of 16 trials must find it (fewer has
// probability P(Binomial(16, 3/4) <= 3) = 3.8e-6); a kept big scratch would be found in a
// trial with probability (3/4)^2 (both Puts kept), missed in all 16 with probability 2e-6.
func TestTransformPoolCap(t *testing.T) {
	ctx := context.Background()
	X, _ := bench.SwissRoll(300, 1)
	m, err := Fit(ctx, X, Settings{Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	nBig := maxPooledTransform/m.K + 100
	big, _ := bench.SwissRoll(nBig, 2)
	small, _ := bench.SwissRoll(50, 3)
	poolQuiet(t)
	drainTransformPool(m)
	const trials = 16
	found := 0
	for trial := 0; trial < trials; trial++ {
		if _, err := m.Transform(ctx, big); err != nil {
			t.Fatal(err)
		}
		if _, err := m.Transform(ctx, small); err != nil {
			t.Fatal(err)
		}
		smallSeen := false
		for _, b := range drainTransformPool(m) {
			if cap(b.idx) > maxPooledTransform {
				t.Fatalf("trial %d: a transform of %d points left scratch of %d entries in the pool", trial, nBig, cap(b.idx))
			}
			if cap(b.idx) >= 50*m.K {
				smallSeen = true
			}
		}
		if smallSeen {
			found++
		} else if !raceEnabled {
			t.Fatalf("trial %d: the scratch of a transform of 50 points is not in the pool", trial)
		}
	}
	t.Logf("the small transform's scratch was in the pool after %d of %d trials (race detector: %v)", found, trials, raceEnabled)
	if found < trials/4 {
		t.Fatalf("the small transform's scratch was in the pool after %d of %d trials (race detector: %v)", found, trials, raceEnabled)
	}
}

// TestTransformPoolReuse: a transform takes its scratch from the pool when an earlier one left
// it there, so it allocates less than one that finds the pool empty. Both are measured over
// the same calls (TransformTo into a reused destination), the pool emptied before each call of
// the first. Fresh scratch costs at least 4 allocations (the transformBuf and its idx, dist and
// out slices: exactly 4 in the default build, 7 measured under the race detector, whose build
// does not fuse slices.Grow's make into its append). Without the race detector the saving
// must be the whole 4 per call. Under it a quarter of the Puts are dropped at random, so the
// expected saving is at least 3 per call and at least 1 must remain: AllocsPerRun truncates
// each average to an integer (less than 1 lost on each side), so this fails only if more than
// half of the 200 Puts are dropped (P(Binomial(200, 1/4) > 100) = 9e-15). A pool removed or
// bypassed, on either side (no Put, or no Get), saves nothing.
func TestTransformPoolReuse(t *testing.T) {
	ctx := context.Background()
	X, _ := bench.SwissRoll(300, 1)
	m, err := Fit(ctx, X, Settings{Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	q, _ := bench.SwissRoll(200, 2)
	dst := mat.NewDense(200, m.Dim, nil)
	transform := func() {
		if err := m.TransformTo(ctx, dst, q); err != nil {
			t.Fatal(err)
		}
	}
	transform() // builds the index
	poolQuiet(t)
	const runs = 200
	drained := testing.AllocsPerRun(runs, func() {
		emptyTransformPool(m)
		transform()
	})
	emptyTransformPool(m)
	transform() // leaves its scratch in the pool (unless the race detector drops it)
	pooled := testing.AllocsPerRun(runs, transform)
	saved := drained - pooled
	t.Logf("allocations per transform: %v with an empty pool, %v with a filled one (race detector: %v)", drained, pooled, raceEnabled)
	want := 4.0
	if raceEnabled {
		want = 1
	}
	if saved < want {
		t.Fatalf("a transform after another saves %v allocations (%v with an empty pool, %v after a transform), want at least %v: the scratch is not reused", saved, drained, pooled, want)
	}
}
