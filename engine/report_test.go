package engine_test

import (
	"context"
	"encoding/json"
	"strings"
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
	// The first generation of a restored model builds the matrix pattern inside its
	// "assemble" stage, whose time was counted twice (a build trial: the stages exceeded
	// the generate command's wall time).
	r, err := engine.Restore(ctx, m.Saved(), 0, engine.SolverAuto)
	if err != nil {
		t.Fatal(err)
	}
	t0 = time.Now()
	_, rep, err = r.Generate(ctx, 1, 0, 1)
	wall = time.Since(t0)
	if err != nil {
		t.Fatal(err)
	}
	check("generate after Restore", rep.Stages, wall)
}

// TestReportJSONEMConverged: em_converged is in an EM report's JSON also when false (it was
// omitted as false before session 31, so a script reading the key failed), absent for the
// other methods, and the report reads back to itself.
func TestReportJSONEMConverged(t *testing.T) {
	for _, c := range []struct {
		method    string
		converged bool
		want      string
	}{{"em", false, `"em_converged":false`}, {"em", true, `"em_converged":true`}, {"lle", false, ""}, {"em-paper", false, ""}} {
		r := engine.Report{Method: c.method, N: 7, EMIterations: 5, EMConverged: c.converged}
		b, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		has := strings.Contains(string(b), `"em_converged"`)
		if c.want != "" && !strings.Contains(string(b), c.want) || c.want == "" && has {
			t.Errorf("%s converged=%v: %s; want %q", c.method, c.converged, b, c.want)
		}
		if !strings.Contains(string(b), `"n":7`) || !strings.Contains(string(b), `"em_iterations":5`) {
			t.Errorf("%s: the other fields are missing: %s", c.method, b)
		}
		var back engine.Report
		if err := json.Unmarshal(b, &back); err != nil || back.EMConverged != c.converged || back.N != 7 || back.Method != c.method {
			t.Errorf("%s: read back %+v, %v", c.method, back, err)
		}
	}
}
