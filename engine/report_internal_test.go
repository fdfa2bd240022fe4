package engine

import (
	"testing"
	"time"
)

// TestCloseStages checks that "other" is the wall time since start minus the named stages.
func TestCloseStages(t *testing.T) {
	r := Report{Stages: []StageTime{{Name: "knn", Seconds: 0.02}, {Name: "weights", Seconds: 0.01}}}
	start := time.Now().Add(-100 * time.Millisecond)
	r.closeStages(start)
	wall := time.Since(start).Seconds()
	last := r.Stages[len(r.Stages)-1]
	// other = wall at the call - 0.03 s; the call happened before wall was read, within the
	// few milliseconds a loaded machine may take between the two clock reads.
	if last.Name != "other" || last.Seconds > wall-0.03 || last.Seconds < wall-0.03-0.05 {
		t.Fatalf("other = %v, want about %.4f s", last, wall-0.03)
	}
	// Stages longer than the wall time (clock granularity) give other = 0, not a negative time.
	r = Report{Stages: []StageTime{{Name: "knn", Seconds: 10}}}
	r.closeStages(time.Now())
	if got := r.Stages[1]; got.Name != "other" || got.Seconds != 0 {
		t.Fatalf("other = %v, want 0", got)
	}
}
