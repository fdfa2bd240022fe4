package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestBenchSweep runs the scaling sweep at tiny sizes: every (size, method) row is in the table
// and the JSON report, generations are timed for the generative methods only, and a missing
// scikit-learn is reported in one line without failing the run.
func TestBenchSweep(t *testing.T) {
	dir := t.TempDir()
	js := filepath.Join(dir, "bench.json")
	r := mustRun(t, dir, "bench", "-sizes", "300,600", "-methods", "lle,em,direct", "-peers",
		"-python", filepath.Join(dir, "no-such-python"), "-json", js)
	for _, want := range []string{"| n | method |", "| 300 | lle |", "| 600 | direct |", "scikit-learn not available", "load average"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("output lacks %q:\n%s", want, r.stdout)
		}
	}
	var rep benchReport
	data, err := os.ReadFile(js)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &rep); err != nil {
		t.Fatal(err)
	}
	if len(rep.Runs) != 6 || rep.PeersNote == "" {
		t.Fatalf("report has %d runs (want 6), peers note %q", len(rep.Runs), rep.PeersNote)
	}
	for _, run := range rep.Runs {
		gen := run.Method != "lle"
		if run.Error != "" || run.FitSeconds <= 0 || run.PeakRSSBytes <= 0 || run.NNZLPerRow <= 0 || run.Solves <= 0 ||
			(run.Generations == 1) != gen || (run.GenSeconds > 0) != gen {
			t.Errorf("run %+v", run)
		}
	}
}

// TestBenchPeers drives the -peers path with a stand-in interpreter that answers the sklearn
// probe and fits with this binary's own LLE, so the subspace agreement must be ~0.
func TestBenchPeers(t *testing.T) {
	dir := t.TempDir()
	fake := filepath.Join(dir, "fakepython")
	script := "#!/bin/sh\n" +
		"if [ \"$2\" = \"import sklearn\" ]; then exit 0; fi\n" +
		bin + " embed -in \"$3\" -method lle -out \"$4\" -q || exit 1\n" +
		"echo '{\"seconds\": 0.5, \"peak_rss_bytes\": 1048576}'\n"
	if err := os.WriteFile(fake, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	js := filepath.Join(dir, "bench.json")
	r := mustRun(t, dir, "bench", "-sizes", "400", "-methods", "em", "-generations", "0", "-peers", "-python", fake, "-json", js)
	if !strings.Contains(r.stdout, "scikit-learn LocallyLinearEmbedding") {
		t.Fatalf("no peer table:\n%s", r.stdout)
	}
	var rep benchReport
	data, err := os.ReadFile(js)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &rep); err != nil {
		t.Fatal(err)
	}
	if len(rep.Peers) != 1 {
		t.Fatalf("peers %+v", rep.Peers)
	}
	p := rep.Peers[0]
	if p.Error != "" || p.Seconds != 0.5 || p.OursSeconds <= 0 || !(p.MaxSine < 1e-6) {
		t.Fatalf("peer run %+v", p)
	}
}

func TestBenchBadInput(t *testing.T) {
	dir := t.TempDir()
	for _, args := range [][]string{
		{"bench", "-sizes", "x"},
		{"bench", "-methods", "pca"},
		{"bench", "-generations", "-1"},
		{"bench", "stray"},
	} {
		if r := runBin(t, dir, args...); r.code != exitBadInput || strings.Count(strings.TrimSpace(r.stderr), "\n") != 0 {
			t.Errorf("%v: exit %d, stderr %q", args, r.code, r.stderr)
		}
	}
}

func TestBenchHelp(t *testing.T) {
	dir := t.TempDir()
	for _, args := range [][]string{{"help", "bench"}, {"bench", "-h"}} {
		r := runBin(t, dir, args...)
		if r.code != exitOK || !strings.Contains(r.stdout, "-sizes") || !strings.Contains(r.stdout, "-peers") {
			t.Errorf("%v: exit %d, stdout %q", args, r.code, r.stdout)
		}
	}
}
