package engine_test

import (
	"context"
	"testing"
	"time"

	"glle/bench"
	"glle/engine"
)

// TestStagesCoverWallTime checks that Fit's and Generate's stages end with "other" and that the
// foreground ones add up to no more than the call's wall time measured outside it (they
// partition the call; background stages run beside them).
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
			if !s.Background {
				sum += s.Seconds
			}
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
	// The ordering and symbolic analysis run beside the weight stages, and the fit records
	// how long it then waited for them.
	bg := map[string]bool{}
	for _, s := range m.Report.Stages {
		bg[s.Name] = s.Background
	}
	for name, want := range map[string]bool{"ordering": true, "symbolic": true, "analysis wait": false, "weights": false, "factor": false} {
		if got, ok := bg[name]; !ok || got != want {
			t.Errorf("fit stage %q: present %v, background %v (want present, background %v)", name, ok, got, want)
		}
	}
	t0 = time.Now()
	_, rep, err := m.Generate(ctx, 1, 0, 1)
	wall = time.Since(t0)
	if err != nil {
		t.Fatal(err)
	}
	check("generate", rep.Stages, wall)
}
