package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"glle/engine"
)

// TestBenchSweep runs the scaling sweep at tiny sizes: every (size, method) row is in the table
// and the JSON report, generations are timed for the generative methods only, and -peers
// without -python searches the interpreters: with no python3 on PATH only /usr/bin/python3 is
// left, and a missing scikit-learn there is reported in one line without failing the run
// (where it has scikit-learn, its rows are checked instead).
func TestBenchSweep(t *testing.T) {
	dir := t.TempDir()
	js := filepath.Join(dir, "bench.json")
	cmd := exec.Command(bin, "bench", "-sizes", "300,600", "-methods", "lle,em,direct", "-peers", "-json", js)
	cmd.Dir = dir
	cmd.Env = append(slices.DeleteFunc(os.Environ(), func(v string) bool { return strings.HasPrefix(v, "PATH=") }), "PATH="+dir)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("bench: %v", err)
	}
	stdout := string(out)
	for _, want := range []string{"| n | method |", "| 300 | lle |", "| 600 | direct |", "load average"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("output lacks %q:\n%s", want, stdout)
		}
	}
	rep := readBenchReport(t, js)
	if len(rep.Runs) != 6 {
		t.Fatalf("report has %d runs, want 6", len(rep.Runs))
	}
	if rep.PeersNote != "" {
		if !strings.Contains(stdout, "scikit-learn not available") || len(rep.Peers) != 0 {
			t.Errorf("peers note %q, %d peer rows; output:\n%s", rep.PeersNote, len(rep.Peers), stdout)
		}
	} else if len(rep.Peers) != 2 || rep.Peers[0].Error != "" || rep.Peers[1].Error != "" {
		t.Errorf("scikit-learn found, but the peer rows are %+v", rep.Peers)
	}
	for _, run := range rep.Runs {
		gen := run.Method != "lle"
		if run.Error != "" || run.FitSeconds <= 0 || run.PeakRSSBytes <= 0 || run.NNZLPerRow <= 0 || run.Solves <= 0 ||
			(run.Generations == 1) != gen || (run.GenSeconds > 0) != gen {
			t.Errorf("run %+v", run)
		}
	}
}

// TestBenchRepeat runs every (size, method) three times: the report holds one row each, the
// median run (by generation-to-fit ratio for em, by fit time for lle) with all three runs'
// numbers, and the table says so. With -peers (one scikit-learn run) the sweep's median LLE
// run is the one compared: its embedding file carries the repeat's suffix.
func TestBenchRepeat(t *testing.T) {
	dir := t.TempDir()
	fake := fakePython(t, dir, "fakepython", "s=0.5")
	js := filepath.Join(dir, "bench.json")
	r := mustRun(t, dir, "bench", "-sizes", "300", "-methods", "lle,em", "-repeat", "3", "-peers", "-python", fake, "-json", js)
	for _, want := range []string{"n = 300 lle: 3 runs, the median shown; fit ", "n = 300 em: 3 runs, the median shown; fit ", "; gen/fit "} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("output lacks %q:\n%s", want, r.stdout)
		}
	}
	rep := readBenchReport(t, js)
	if len(rep.Runs) != 2 {
		t.Fatalf("report has %d runs, want 2 (one per method)", len(rep.Runs))
	}
	for _, run := range rep.Runs {
		if run.Error != "" || len(run.FitRuns) != 3 {
			t.Fatalf("run %+v", run)
		}
		switch run.Method {
		case "lle":
			if len(run.RatioRuns) != 0 || run.FitSeconds != medianOf(run.FitRuns) {
				t.Errorf("lle: fit %v not the median of %v (ratios %v)", run.FitSeconds, run.FitRuns, run.RatioRuns)
			}
		case "em":
			if len(run.RatioRuns) != 3 || run.GenRatio != medianOf(run.RatioRuns) || !slices.Contains(run.FitRuns, run.FitSeconds) {
				t.Errorf("em: ratio %v not the median of %v, or fit %v not one of %v", run.GenRatio, run.RatioRuns, run.FitSeconds, run.FitRuns)
			}
		}
	}
	// 1e-6: the stand-in peer is this binary's own LLE of the same data, so the sine is QR round-off (~n eps = 4e-14; 1.3e-15 in TestBenchPeers).
	if len(rep.Peers) != 1 || rep.Peers[0].Error != "" || !(rep.Peers[0].MaxSine < 1e-6) ||
		!slices.Contains(rep.Runs[0].FitRuns, rep.Peers[0].OursSeconds) {
		t.Fatalf("peers %+v (runs %+v)", rep.Peers, rep.Runs[0])
	}
}

// TestMedianRun checks the choice of the reported run of -repeat on made-up runs.
func TestMedianRun(t *testing.T) {
	gen := []benchRun{
		{FitSeconds: 2.0, Generations: 3, GenRatio: 0.33},
		{FitSeconds: 2.2, Generations: 3, GenRatio: 0.28},
		{FitSeconds: 1.9, Generations: 3, GenRatio: 0.30},
	}
	m := medianRun(gen)
	if m.GenRatio != 0.30 || m.FitSeconds != 1.9 || !slices.Equal(m.FitRuns, []float64{2.0, 2.2, 1.9}) ||
		!slices.Equal(m.RatioRuns, []float64{0.33, 0.28, 0.30}) {
		t.Errorf("generative runs: got %+v, want the 0.30 run with every run's numbers", m)
	}
	lle := []benchRun{{FitSeconds: 3}, {FitSeconds: 1}, {FitSeconds: 4}, {FitSeconds: 2}}
	if m := medianRun(lle); m.FitSeconds != 2 || len(m.RatioRuns) != 0 || len(m.FitRuns) != 4 {
		t.Errorf("lle runs: got %+v, want the lower middle fit (2 s) and no ratios", m)
	}
}

// TestBenchPeers drives the -peers path with a stand-in interpreter that answers the sklearn
// probe and fits with this binary's own LLE, so the subspace agreement must be ~0.
func TestBenchPeers(t *testing.T) {
	dir := t.TempDir()
	fake := fakePython(t, dir, "fakepython", "s=0.5")
	js := filepath.Join(dir, "bench.json")
	r := mustRun(t, dir, "bench", "-sizes", "400", "-methods", "em", "-generations", "0", "-peers", "-python", fake, "-json", js)
	if !strings.Contains(r.stdout, "scikit-learn LocallyLinearEmbedding") {
		t.Fatalf("no peer table:\n%s", r.stdout)
	}
	rep := readBenchReport(t, js)
	if len(rep.Peers) != 1 {
		t.Fatalf("peers %+v", rep.Peers)
	}
	p := rep.Peers[0]
	// 1e-6: the same LLE fit on both sides, QR round-off only (~n eps = 4e-14; observed 1.3e-15).
	if p.Error != "" || p.Seconds != 0.5 || p.OursSeconds <= 0 || !(p.MaxSine < 1e-6) {
		t.Fatalf("peer run %+v", p)
	}

	// -peer-repeat 3: three scikit-learn runs (0.9, 0.5, 0.7 s from a counter) interleaved with
	// three of ours; the report holds every run and the medians.
	counter := filepath.Join(dir, "count")
	fake3 := fakePython(t, dir, "fakepython3",
		"c=$(cat "+counter+" 2>/dev/null || echo 0); echo $((c+1)) > "+counter+"\n"+
			"case $c in 0) s=0.9;; 1) s=0.5;; *) s=0.7;; esac")
	js3 := filepath.Join(dir, "bench3.json")
	mustRun(t, dir, "bench", "-sizes", "400", "-methods", "lle", "-peers", "-python", fake3, "-peer-repeat", "3", "-json", js3)
	rep3 := readBenchReport(t, js3)
	if len(rep3.Peers) != 1 {
		t.Fatalf("peers %+v", rep3.Peers)
	}
	p3 := rep3.Peers[0]
	if p3.Error != "" || len(p3.Runs) != 3 || p3.Seconds != 0.7 || len(p3.OursRuns) != 3 || p3.OursSeconds != medianOf(p3.OursRuns) {
		t.Fatalf("-peer-repeat 3: %+v", p3)
	}

	// -peer-max below every size: scikit-learn is skipped, with a line saying so.
	r = mustRun(t, dir, "bench", "-sizes", "300", "-methods", "lle", "-peers", "-python", fake, "-peer-max", "299")
	if !strings.Contains(r.stdout, "scikit-learn skipped at n = 300") || strings.Contains(r.stdout, "ours / theirs") {
		t.Fatalf("-peer-max 299 did not skip n = 300:\n%s", r.stdout)
	}

	// A peer that writes an embedding of the wrong shape (10 rows for 300 points): the peer
	// row reports it; before, the subspace comparison panicked.
	wrong := filepath.Join(dir, "wrongpython")
	script := "#!/bin/sh\n" +
		"if [ \"$2\" = \"import sklearn\" ]; then exit 0; fi\n" +
		bin + " dataset -name swissroll -n 10 -out \"$4\" -q || exit 1\n" +
		"echo '{\"seconds\": 0.5, \"peak_rss_bytes\": 1048576, \"shape\": [300, 2]}'\n"
	if err := os.WriteFile(wrong, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	jsw := filepath.Join(dir, "benchw.json")
	mustRun(t, dir, "bench", "-sizes", "300", "-methods", "lle", "-peers", "-python", wrong, "-json", jsw)
	repw := readBenchReport(t, jsw)
	if len(repw.Peers) != 1 || !strings.Contains(repw.Peers[0].Error, "10 x 3 embedding for 300 points") {
		t.Fatalf("wrong-shape peer: %+v", repw.Peers)
	}
}

// readBenchReport reads the -json report of a bench run.
func readBenchReport(t *testing.T, path string) benchReport {
	t.Helper()
	var rep benchReport
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &rep); err != nil {
		t.Fatal(err)
	}
	return rep
}

// fakePython writes a stand-in interpreter for -peers: it answers the sklearn probe, fits
// with this binary's own LLE, runs the shell lines setS (which set s) and reports s seconds
// and the embedding's shape (n from the data file's name, X_<n>.npy).
func fakePython(t *testing.T, dir, name, setS string) string {
	t.Helper()
	path := filepath.Join(dir, name)
	script := "#!/bin/sh\n" +
		"if [ \"$2\" = \"import sklearn\" ]; then exit 0; fi\n" +
		bin + " embed -in \"$3\" -method lle -out \"$4\" -q || exit 1\n" +
		setS + "\n" +
		"n=${3##*X_}; n=${n%.npy}\n" +
		"echo \"{\\\"seconds\\\": $s, \\\"peak_rss_bytes\\\": 1048576, \\\"shape\\\": [$n, 2]}\"\n"
	if err := os.WriteFile(path, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestFindPeer checks the interpreter search of -peers: an explicit -python is used as is, and
// without it the first of peerPythons that imports sklearn wins.
func TestFindPeer(t *testing.T) {
	dir := t.TempDir()
	yes := filepath.Join(dir, "yes")
	no := filepath.Join(dir, "no")
	if err := os.WriteFile(yes, []byte("#!/bin/sh\nexit 0\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(no, []byte("#!/bin/sh\necho 'ModuleNotFoundError: No module named sklearn' >&2\nexit 1\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	saved := peerPythons
	defer func() { peerPythons = saved }()
	ctx := context.Background()

	peerPythons = []string{no, yes}
	c := benchConfig{}
	if ok, why := c.findPeer(ctx); !ok || c.python != yes {
		t.Fatalf("search [no, yes]: ok %v python %q why %q", ok, c.python, why)
	}
	peerPythons = []string{no, filepath.Join(dir, "missing")}
	c = benchConfig{}
	if ok, why := c.findPeer(ctx); ok || !strings.Contains(why, "No module named sklearn") || !strings.Contains(why, "missing") {
		t.Fatalf("search [no, missing]: ok %v why %q", ok, why)
	}
	c = benchConfig{python: no}
	if ok, _ := c.findPeer(ctx); ok || c.python != no {
		t.Fatalf("explicit -python: ok %v python %q", ok, c.python)
	}
}

func TestBenchBadInput(t *testing.T) {
	dir := t.TempDir()
	os.Mkdir(filepath.Join(dir, "K"), 0o755)
	for _, args := range [][]string{
		{"bench", "-keep", "K", "-json", "K/r.json"}, // the runs write their reports there
		{"bench", "-sizes", "x"},
		{"bench", "-sizes", "3000000000"}, // beyond 32-bit neighbour indices
		{"bench", "-workers", "2000"},
		{"bench", "-methods", "pca"},
		{"bench", "-methods", "lle,direct-paper"}, // singular without a ridge, which bench does not pass
		{"bench", "-generations", "-1"},
		{"bench", "-peer-max", "-5"},
		{"bench", "-peer-repeat", "0"},
		{"bench", "-repeat", "0"},
		{"bench", "-peer-repeat", "3"},                          // without -peers
		{"bench", "-dataset", "severed-sphere", "-sizes", "20"}, // too few points kept for k = 10
		{"bench", "-python", "python3"},                         // without -peers
		{"bench", "-peer-max", "1000"},                          // without -peers
		{"bench", "-peers", "-python", ""},
		{"bench", "-sizes", "100", "-peers", "-python", filepath.Join(dir, "missing")}, // named, cannot run
		{"bench", "stray"},
		{"bench", "-sizes", "2000000000", "-methods", "lle"}, // more than physical memory (was exit 1 after a failed child run)
		{"bench", "-sizes", "300000000", "-methods", "lle"},  // the fit's estimate beyond physical memory
		{"bench", "-json", "r.npy"},                          // not a .json name
	} {
		if r := runBin(t, dir, args...); r.code != exitBadInput || strings.Count(strings.TrimSpace(r.stderr), "\n") != 0 {
			t.Errorf("%v: exit %d, stderr %q", args, r.code, r.stderr)
		}
	}
}

// TestBenchProgress: the sweep prints one line per finished run on stderr (size, method, fit
// seconds, generation seconds of the generative methods, the count of runs), on a terminal or
// not, and none on stdout, which holds the tables. It printed nothing until the tables at the
// end, after up to 20 minutes.
func TestBenchProgress(t *testing.T) {
	dir := t.TempDir()
	r := mustRun(t, dir, "bench", "-sizes", "300", "-methods", "lle,em", "-repeat", "2")
	lines := strings.Split(strings.TrimSuffix(r.stderr, "\n"), "\n")
	want := []string{"n=300 lle repeat 1/2: fit ", "n=300 lle repeat 2/2: fit ", "n=300 em repeat 1/2: fit ", "n=300 em repeat 2/2: fit "}
	if len(lines) != len(want) {
		t.Fatalf("stderr %q: want %d progress lines", r.stderr, len(want))
	}
	for i, w := range want {
		l := lines[i]
		if !strings.HasPrefix(l, "glle-bench bench: "+w) || !strings.Contains(l, fmt.Sprintf("(run %d of 4, ", i+1)) || strings.Contains(l, "generation") != strings.Contains(w, "em") {
			t.Errorf("progress line %d %q, want %q... (run %d of 4, ...), a generation time for em only", i, l, w, i+1)
		}
	}
	if strings.Contains(r.stdout, "glle-bench bench: n=") || !strings.Contains(r.stdout, "| 300 | em |") {
		t.Errorf("stdout holds progress, or lacks the table:\n%s", r.stdout)
	}
}

// TestBenchProgressAfterFailure: a failed repetition skips the rest of its size and method, and
// the progress lines after it still count runs against the sweep's total (a stand-in child
// fails lle's first repetition: em's two runs are runs 3 and 4 of 4, not 2 and 3).
func TestBenchProgressAfterFailure(t *testing.T) {
	defer func(f func(context.Context, string, string, benchConfig, int, engine.Method, string) benchRun) {
		runChild = f
	}(runChild)
	var calls []string
	runChild = func(_ context.Context, _, _ string, _ benchConfig, n int, m engine.Method, tag string) benchRun {
		calls = append(calls, m.String()+tag)
		r := benchRun{N: n, Method: m.String(), FitSeconds: 0.25}
		if m == engine.LLE {
			r.Error = "stand-in failure"
		}
		return r
	}
	var stdout, stderr bytes.Buffer
	code := run([]string{"bench", "-sizes", "300", "-methods", "lle,em", "-repeat", "2"}, &stdout, &stderr)
	if want := []string{"lle_r0", "em_r0", "em_r1"}; !slices.Equal(calls, want) {
		t.Errorf("child runs %v, want %v (a failed repetition skips the rest of its size and method)", calls, want)
	}
	lines := strings.Split(strings.TrimSuffix(stderr.String(), "\n"), "\n")
	want := []string{"glle-bench bench: n=300 lle: stand-in failure",
		"glle-bench bench: n=300 em repeat 1/2: fit 0.25 s (run 3 of 4, ",
		"glle-bench bench: n=300 em repeat 2/2: fit 0.25 s (run 4 of 4, ",
		"glle-bench: 1 of the sweep's runs failed"}
	if len(lines) != len(want) || code != exitFailure {
		t.Fatalf("exit %d, stderr %q: want %d lines", code, stderr.String(), len(want))
	}
	for i, w := range want {
		if !strings.HasPrefix(lines[i], w) {
			t.Errorf("stderr line %d %q, want %q...", i, lines[i], w)
		}
	}
}

func TestBenchHelp(t *testing.T) {
	dir := t.TempDir()
	for _, args := range [][]string{{"help", "bench"}, {"bench", "-h"}, {"--help", "bench"}} {
		r := runBin(t, dir, args...)
		if r.code != exitOK || !strings.Contains(r.stdout, "-sizes") || !strings.Contains(r.stdout, "-peers") {
			t.Errorf("%v: exit %d, stdout %q", args, r.code, r.stdout)
		}
	}
}

// TestBenchInterrupt interrupts a sweep (SIGINT to the parent only, as kill or a job scheduler
// sends it) while its child run has staged outputs in a -keep folder the sweep created: the
// child is interrupted rather than killed, removes what it staged, and the parent removes the
// folders it created, so nothing is left (before, the killed child left a hidden .npy file).
func TestBenchInterrupt(t *testing.T) {
	if testing.Short() {
		t.Skip("slow")
	}
	dir := t.TempDir()
	keep := filepath.Join(dir, "K", "sub")
	cmd := exec.Command(bin, "bench", "-sizes", "3000", "-methods", "em", "-generations", "3000",
		"-keep", keep, "-json", filepath.Join(dir, "r.json"))
	var se strings.Builder
	cmd.Stderr = &se
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	staged := false
	for start := time.Now(); !staged && time.Since(start) < 60*time.Second; time.Sleep(10 * time.Millisecond) {
		names, _ := filepath.Glob(filepath.Join(keep, ".glle-bench-*"))
		staged = len(names) > 0
	}
	cmd.Process.Signal(syscall.SIGINT)
	err := cmd.Wait()
	if !staged {
		t.Fatalf("no staged output appeared in the child's 60 s (exit %v)", err)
	}
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != exitInterrupted {
		t.Fatalf("exit %v, want %d; stderr %q", err, exitInterrupted, se.String())
	}
	if files := listTree(t, dir); len(files) != 0 {
		t.Errorf("the interrupted sweep left %v", files)
	}
}

// TestBenchKeepFolders: the -keep folder is created as the kernel resolves its spelling and
// the children write where it is; the folders a failed sweep created are removed, also when
// creating them failed half way, and nothing the user had is touched.
func TestBenchKeepFolders(t *testing.T) {
	dir := t.TempDir()
	mkdir := func(p string) {
		if err := os.MkdirAll(filepath.Join(dir, p), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	mkdir("real/deep")
	mkdir("mine")
	if err := os.Symlink(filepath.Join(dir, "real", "deep"), filepath.Join(dir, "ln")); err != nil {
		t.Fatal(err)
	}
	// ln/.. is real (the link's parent), not dir: the runs must land in real/newk.
	mustRun(t, dir, "bench", "-sizes", "300", "-methods", "lle", "-keep", "ln/../newk")
	if names, _ := filepath.Glob(filepath.Join(dir, "real", "newk", "report_lle_300*.json")); len(names) != 1 {
		t.Errorf("ln/../newk: the run's report is not in real/newk (%v)", listTree(t, dir))
	}
	before := listTree(t, dir)
	long := strings.Repeat("x", 300) // longer than a file name may be: the last Mkdir fails
	for _, c := range []struct {
		name string
		args []string
	}{
		{"a leaf name too long", []string{"bench", "-sizes", "300", "-methods", "lle", "-keep", "new1/new2/" + long}},
		{"a/../b, then a failure", []string{"bench", "-sizes", "300", "-methods", "lle", "-keep", "a/../b", "-peers", "-python", filepath.Join(dir, "missing")}},
		{"inside an existing folder, then a failure", []string{"bench", "-sizes", "300", "-methods", "lle", "-keep", "mine/k", "-peers", "-python", filepath.Join(dir, "missing")}},
		{"embed -model, a leaf name too long", []string{"embed", "-dataset", "swissroll", "-n", "300", "-out", "y.npy", "-model", "new3/" + long}},
	} {
		if r := runBin(t, dir, c.args...); r.code != exitBadInput {
			t.Errorf("%s: exit %d, stderr %q", c.name, r.code, r.stderr)
		}
		if after := listTree(t, dir); !slices.Equal(after, before) {
			t.Errorf("%s: the folder tree changed from %v to %v", c.name, before, after)
		}
	}
}

// TestBenchClosedStdout: 'glle-bench bench | head' closed standard output under the sweep,
// and the first write killed it with SIGPIPE (exit 141, no message): -json was never written
// and the scratch folder of the runs stayed in TMPDIR (before session 32). Now the write fails,
// -json is written, the scratch folder removed, and the exit status is 1 with one line. With
// neither -json nor -keep nothing would keep the results, so the sweep stops at once.
func TestBenchClosedStdout(t *testing.T) {
	tmp := t.TempDir()
	for _, withJSON := range []bool{true, false} {
		dir := t.TempDir()
		args := []string{"bench", "-sizes", "300", "-methods", "lle", "-repeat", "1"}
		if withJSON {
			args = append(args, "-json", "b.json")
		}
		cmd := exec.Command(bin, args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "TMPDIR="+tmp)
		r, w, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		r.Close() // the reader is gone before the first write
		var se bytes.Buffer
		cmd.Stdout, cmd.Stderr = w, &se
		err = cmd.Run()
		w.Close()
		// The error is one line, the last; before it, with -json, the run's progress line
		// (the test wanted stderr to be that one line when the sweep printed no progress).
		var ee *exec.ExitError
		lines := strings.Split(strings.TrimSuffix(se.String(), "\n"), "\n")
		progress := 0
		if withJSON {
			progress = 1
		}
		if !errors.As(err, &ee) || ee.ExitCode() != exitFailure || len(lines) != progress+1 || !strings.Contains(lines[progress], "broken pipe") ||
			withJSON && !strings.HasPrefix(lines[0], "glle-bench bench: n=300 lle: fit ") {
			t.Errorf("json %v: %v, stderr %q; want exit 1 and one line naming the broken pipe (after the run's progress line with -json)", withJSON, err, se.String())
		}
		if _, err := os.Stat(filepath.Join(dir, "b.json")); (err == nil) != withJSON {
			t.Errorf("json %v: b.json: %v", withJSON, err)
		}
		if left, _ := os.ReadDir(tmp); len(left) != 0 {
			t.Errorf("json %v: %d entries left in TMPDIR (%s)", withJSON, len(left), left[0].Name())
		}
	}
}

// TestBenchKeepNotEmpty: the runs write straight into -keep, so a folder holding files is
// refused before any run, and its files are unchanged (an earlier sweep's Y_lle_2000.npy and
// report files were overwritten silently before session 32); an empty folder is used.
func TestBenchKeepNotEmpty(t *testing.T) {
	dir := t.TempDir()
	os.Mkdir(filepath.Join(dir, "k"), 0o755)
	mine := filepath.Join(dir, "k", "Y_lle_300.npy")
	os.WriteFile(mine, []byte("mine"), 0o644)
	r := runBin(t, dir, "bench", "-sizes", "300", "-methods", "lle", "-keep", "k")
	if r.code != exitBadInput || !strings.Contains(r.stderr, "is not empty") {
		t.Errorf("exit %d, stderr %q", r.code, r.stderr)
	}
	if b, _ := os.ReadFile(mine); string(b) != "mine" {
		t.Errorf("the file in -keep was changed: %q", b)
	}
	os.Mkdir(filepath.Join(dir, "empty"), 0o755)
	mustRun(t, dir, "bench", "-sizes", "300", "-methods", "lle", "-keep", "empty")
}

// TestBenchHeadOne: 'glle-bench bench | head -1' closes standard output after the first line,
// while the sweep runs; the tables then fail, and the message says so truthfully: no -keep is
// named when there is none (it claimed "-keep has the runs' reports", a review in session 32).
func TestBenchHeadOne(t *testing.T) {
	dir := t.TempDir()
	cmd := exec.Command(bin, "bench", "-sizes", "300,400", "-methods", "lle", "-repeat", "1")
	cmd.Dir = dir
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	var se bytes.Buffer
	cmd.Stdout, cmd.Stderr = w, &se
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	w.Close()
	buf := make([]byte, 1)
	for { // read the first line, as head -1 does, then close the pipe
		if _, err := r.Read(buf); err != nil || buf[0] == '\n' {
			break
		}
	}
	r.Close()
	err = cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != exitFailure || !strings.Contains(se.String(), "there is no -json or -keep") || strings.Contains(se.String(), "-keep has") {
		t.Errorf("%v, stderr %q", err, se.String())
	}
}
