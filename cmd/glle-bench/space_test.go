package main

import (
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// TestCheckSpace: outputs larger than the device's free space are refused, small ones and
// special files are not, and sizes saturate instead of overflowing.
func TestCheckSpace(t *testing.T) {
	dir := t.TempDir()
	if err := checkSpace([]fileNeed{{filepath.Join(dir, "y.npy"), 1 << 20}}, 1); err != nil {
		t.Errorf("1 MiB: %v", err)
	}
	err := checkSpace([]fileNeed{{filepath.Join(dir, "y.npy"), 1 << 62}}, 1)
	var ie *inputError
	if err == nil || !strings.Contains(err.Error(), "more than its device's whole size") || !errors.As(err, &ie) {
		t.Errorf("4 EiB: %v (bad input expected: no device holds it)", err)
	}
	if err := checkSpace([]fileNeed{{"/dev/null", 1 << 62}}, 1); err != nil {
		t.Errorf("a special file is not checked: %v", err)
	}
	// rows x cols x 8 overflows int64: saturated, not negative (which would pass).
	if got := matrixNeed("y.npy", 1<<62, 3).bytes; got != 1<<63-1 {
		t.Errorf("matrixNeed saturates to %d", got)
	}
	if got := genNeeds("y.csv", true, 1<<62, 1000, 2, analysisOpts{})[1].bytes; got != 1<<63-1 {
		t.Errorf("genNeeds saturates to %d", got)
	}
}

// TestHugeGenerationsRefused: -generations 9999999999 filled the disk with staged files for
// hours before failing (before session 32); it is refused before the fit, with no file left.
func TestHugeGenerationsRefused(t *testing.T) {
	dir := t.TempDir()
	r := runBin(t, dir, "embed", "-dataset", "swissroll", "-n", "300", "-method", "em", "-generations", "9999999999", "-out", "y.npy")
	if r.code != exitBadInput || !strings.Contains(r.stderr, "the outputs need about") || strings.Count(r.stderr, "\n") != 1 {
		t.Errorf("exit %d, stderr %q", r.code, r.stderr)
	}
	if left, _ := os.ReadDir(dir); len(left) != 0 {
		t.Errorf("%d files left, first %s", len(left), left[0].Name())
	}
	// A tmpfs without a size limit reports no blocks: nothing to check (every run was refused
	// as "0 B available" in the first version of the check).
	unl := t.TempDir()
	if err := exec.Command("mount", "-t", "tmpfs", "-o", "size=0,nr_inodes=0", "tmpfs", unl).Run(); err == nil {
		mustRun(t, unl, "embed", "-dataset", "swissroll", "-n", "300", "-out", "y.npy", "-q")
		exec.Command("umount", unl).Run()
	}
	// Between the available space and the device's size: a failure (exit 1), as a full disk
	// at write time, not bad input.
	full := t.TempDir()
	if err := exec.Command("mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", full).Run(); err == nil {
		os.WriteFile(filepath.Join(full, "big"), make([]byte, 900<<10), 0o644)
		err := checkSpace([]fileNeed{{filepath.Join(full, "y.npy"), 500 << 10}}, 1)
		var ie *inputError
		if err == nil || !strings.Contains(err.Error(), "free space") || errors.As(err, &ie) {
			t.Errorf("500 KiB on a 1 MiB device with 900 KiB used: %v (a failure, not bad input, expected)", err)
		}
		exec.Command("umount", full).Run()
	}
	// Free inodes: a tmpfs with 20 (root only; mount needs it).
	mnt := t.TempDir()
	if err := exec.Command("mount", "-t", "tmpfs", "-o", "size=2m,nr_inodes=20", "tmpfs", mnt).Run(); err != nil {
		t.Skipf("cannot mount a small tmpfs (%v): the inode check is covered by the byte check's code path only", err)
	}
	defer exec.Command("umount", mnt).Run()
	r = runBin(t, mnt, "embed", "-dataset", "swissroll", "-n", "300", "-method", "em", "-generations", "30", "-out", "y.npy")
	if r.code != exitBadInput || !strings.Contains(r.stderr, "free inodes") {
		t.Errorf("30 generations on 20 inodes: exit %d, stderr %q", r.code, r.stderr)
	}
	mustRun(t, mnt, "embed", "-dataset", "swissroll", "-n", "300", "-method", "em", "-generations", "3", "-out", "y.npy", "-q")
}

// TestFiguresMemory: figures keeps four datasets and their models to the end; a size whose
// total cannot fit is refused before any work (it ran out of memory with a Go fatal error and
// a stack trace before session 32), with no folder left.
func TestFiguresMemory(t *testing.T) {
	dir := t.TempDir()
	r := runBin(t, dir, "figures", "-n", "200000000", "-out", "figs")
	if r.code != exitBadInput || !strings.Contains(r.stderr, "keeps four datasets and their em and direct models") {
		t.Errorf("exit %d, stderr %q", r.code, r.stderr)
	}
	if left, _ := os.ReadDir(dir); len(left) != 0 {
		t.Errorf("left %s", left[0].Name())
	}
	// The estimate against the measured peak RSS of a run (Fig. 3, n = 5000: estimate 232 MB,
	// measured 211 MB in session 32); the first estimate was 4.6 times too low. [0.8, 1.6]:
	// the estimate may be conservative, never far below.
	cmd := exec.Command(bin, "figures", "-n", "5000", "-figs", "3", "-out", "f3", "-q")
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("figures: %v %s", err, out)
	}
	peak := cmd.ProcessState.SysUsage().(*syscall.Rusage).Maxrss << 10 // KiB on Linux
	est := figuresMemory(figuresConfig{n: 5000, k: 10, figs: map[int]bool{3: true}})
	if r := float64(est) / float64(peak); r < 0.8 || r > 1.6 {
		t.Errorf("figures -figs 3 -n 5000: estimate %d, peak RSS %d, ratio %.2f outside [0.8, 1.6]", est, peak, r)
	}
	// Fig. 2 alone keeps no models: far less.
	if only2 := figuresMemory(figuresConfig{n: 5000, k: 10, figs: map[int]bool{2: true}}); !(only2 < est/4) {
		t.Errorf("figures memory: fig 2 only %d, fig 3 %d", only2, est)
	}
}

// TestPlotWithinFitMemory: -plot (with -uncertainty's plot too) stays within the fit's memory
// estimate, which is what -max-mem checks. Drawing makes about 1 KB of garbage per point, and with the model still
// reachable the collector let the heap grow to twice the model's size: before session 33,
// embed -n 60000 -generations 2 -plot peaked at 361 MB against an estimate of 185 MB (1.96),
// and at 300,000 points at 1.62 GB against 0.83 GB without -plot. Now 183 MB (0.99). 1.3:
// the estimate is conservative (runs without -plot measured 0.95-0.98 of it), and 1.3 sits
// far below the old 1.96. The uncertainty plot was drawn with the model alive too (351 MB
// for -generations 3 -uncertainty -plot at n = 60000).
func TestPlotWithinFitMemory(t *testing.T) {
	dir := t.TempDir()
	cmd := exec.Command(bin, "embed", "-dataset", "swissroll", "-n", "60000", "-method", "em", "-generations", "3",
		"-uncertainty", "-out", "y.npy", "-plot", "y.png", "-json", "r.json", "-q")
	cmd.Dir = dir
	// The collector's defaults: a GOGC or GOMEMLIMIT in the environment changes the peak.
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "GOGC=") && !strings.HasPrefix(kv, "GOMEMLIMIT=") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("embed -plot: %v %s", err, out)
	}
	peak := cmd.ProcessState.SysUsage().(*syscall.Rusage).Maxrss << 10 // KiB on Linux
	raw, err := os.ReadFile(filepath.Join(dir, "r.json"))
	if err != nil {
		t.Fatal(err)
	}
	var rep struct {
		Fit struct {
			Memory struct{ Peak int64 }
		}
	}
	if err := json.Unmarshal(raw, &rep); err != nil || rep.Fit.Memory.Peak <= 0 {
		t.Fatalf("no memory estimate in the report (%v): %.200s", err, raw)
	}
	if r := float64(peak) / float64(rep.Fit.Memory.Peak); r > 1.3 {
		t.Errorf("embed -n 60000 -plot: peak RSS %d is %.2f times the fit's estimate %d (at most 1.3)", peak, r, rep.Fit.Memory.Peak)
	}
}

// TestEmbeddingPanelAxes: a panel of an embedding with other than two columns says which
// axes it shows (a -dim 3 plot showed two of three axes, and a -dim 1 plot the colour as its
// vertical axis, without a word before session 33).
func TestEmbeddingPanelAxes(t *testing.T) {
	col := []float64{0, 1, 2}
	for _, c := range []struct {
		p    int
		want string
	}{{1, "t [axis 1 across, colour up]"}, {2, "t"}, {3, "t [axes 1-2 of 3]"}} {
		pl, err := embeddingPanel("t", mat.NewDense(3, c.p, nil), col)
		if err != nil || pl.Title.Text != c.want {
			t.Errorf("dim %d: title %q (%v), want %q", c.p, pl.Title.Text, err, c.want)
		}
	}
}

// TestScatterPanelSubsample: a panel draws at most maxPanelPoints points (every step-th one)
// and its title says so; smaller panels are unchanged.
func TestScatterPanelSubsample(t *testing.T) {
	n := 2*maxPanelPoints + 7
	x := make([]float64, n)
	for i := range x {
		x[i] = float64(i)
	}
	p, err := scatterPanel("big", x, x, x)
	if err != nil {
		t.Fatal(err)
	}
	if p.Title.Text != "big [1 in 3 points shown]" {
		t.Errorf("title %q", p.Title.Text)
	}
	s := everyNth(x, 3)
	if len(s) != (n+2)/3 || s[1] != 3 || s[len(s)-1] != float64(3*(len(s)-1)) {
		t.Errorf("everyNth: %d values, %v ... %v", len(s), s[:2], s[len(s)-1])
	}
	if p, _ := scatterPanel("small", x[:10], x[:10], x[:10]); p.Title.Text != "small" {
		t.Errorf("small title %q", p.Title.Text)
	}
}
