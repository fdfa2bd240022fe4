package engine_test

import (
	"context"
	"testing"
	"time"

	"glle/bench"
	"glle/engine"
)

// TestStagesCoverWallTime checks that Fit's and Generate's stages end with "other" and add up
// to no more than the call's wall time measured outside it (the stages partition the call).
func TestStagesCoverWallTime(t *testing.T) {
	ctx := context.Background()
	X, _ := bench.SwissRoll(3000, 2)
	check := func(what string, st []engine.StageTime, wall time.Duration) {
		t.Helper()
		if len(st) < 2 || st[len(st)-1].Name != "other" {
			t.Fatalf("%s: stages %v do not end with other", what, st)
		}
		sum := 0.0
		for _, s := range st {
			if s.Seconds < 0 {
				t.Fatalf("%s: negative stage %v", what, s)
			}
			sum += s.Seconds
		}
		if sum > wall.Seconds() {
			t.Fatalf("%s: stages add up to %.6f s, more than the wall time %.6f s", what, sum, wall.Seconds())
		}
	}
	t0 := time.Now()
	m, err := engine.Fit(ctx, X, engine.Settings{Method: engine.EM})
	wall := time.Since(t0)
	if err != nil {
		t.Fatal(err)
	}
	check("fit", m.Report.Stages, wall)
	t0 = time.Now()
	_, rep, err := m.Generate(ctx, 1, 0, 1)
	wall = time.Since(t0)
	if err != nil {
		t.Fatal(err)
	}
	check("generate", rep.Stages, wall)
}
