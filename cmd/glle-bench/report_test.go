package main

import (
	"strings"
	"testing"
)

// TestSummaryMemoryUnit: the summary's peak RSS is in MiB, as computed (bytes / 2^20) and as
// the bench tables and the -max-mem messages write it; it was labelled MB ("peak RSS 2575.5
// MB" for 2700570624 bytes).
func TestSummaryMemoryUnit(t *testing.T) {
	var b strings.Builder
	s := summary{Command: "embed", N: 10, D: 3, WallSeconds: 1, PeakRSSBytes: 2700570624}
	s.write(&b)
	if out := b.String(); !strings.Contains(out, "peak RSS 2575.5 MiB") || strings.Contains(out, " MB") {
		t.Errorf("summary %q: want \"peak RSS 2575.5 MiB\" and no MB", out)
	}
}
