package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"

	"glle/bench"
	"glle/bench/dataio"
)

func readVec(t *testing.T, path string) []float64 {
	t.Helper()
	a, err := dataio.ReadNPYFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(a.Shape) != 1 {
		t.Fatalf("%s has shape %v, want a vector", path, a.Shape)
	}
	return a.Floats()
}

// TestEmbedAlignUncertaintyMetrics: -align writes generations in the base embedding's
// orientation, -uncertainty writes what bench.Uncertainty computes (and its PNG with -plot),
// -metrics fills the summary and the JSON report, and generate reproduces all of it.
func TestEmbedAlignUncertaintyMetrics(t *testing.T) {
	dir := t.TempDir()
	const n, G = 400, 3
	r := mustRun(t, dir, "embed", "-dataset", "swissroll", "-n", fmt.Sprint(n), "-method", "em", "-generations", fmt.Sprint(G),
		"-seed", "2", "-align", "-uncertainty", "-metrics", "-plot", "y.png", "-out", "y.npy", "-model", "m", "-json", "y.json")
	for _, w := range []string{"metrics (k=10, trustworthiness/continuity exact)", "generation 2", "uncertainty over 3 rigidly aligned generations"} {
		if !strings.Contains(r.stderr, w) {
			t.Errorf("summary lacks %q:\n%s", w, r.stderr)
		}
	}
	isPNG(t, filepath.Join(dir, "y_uncertainty.png"))
	base := readM(t, filepath.Join(dir, "y.npy"))
	var gens []*mat.Dense
	for g := 0; g < G; g++ {
		Y := readM(t, filepath.Join(dir, fmt.Sprintf("y_gen%03d.npy", g)))
		// Aligned: the best further rotation onto the base is the identity.
		// 1e-9: re-fitting the rotation of an aligned 400 x 2 embedding gives I up to round-off of its 400-point sums (~n eps = 4e-14; observed 2e-16).
		if R := bench.FitAlignment(base, Y, false).R; !mat.EqualApprox(R, mat.NewDiagDense(2, []float64{1, 1}), 1e-9) {
			t.Errorf("generation %d is not aligned: residual rotation %v", g, mat.Formatted(R))
		}
		gens = append(gens, Y)
	}
	wantMean, wantSpread := bench.Uncertainty(base, gens, true)
	spread := readVec(t, filepath.Join(dir, "y_uncertainty.npy"))
	mean := readM(t, filepath.Join(dir, "y_mean.npy"))
	// 1e-12: the same means and spreads from the same files, summed in another order: a few ulps of entries < 1 (observed 3e-17, 5e-18).
	if len(spread) != n || !mat.EqualApprox(mean, wantMean, 1e-12) {
		t.Fatalf("uncertainty files: %d values, mean matches %v", len(spread), mat.EqualApprox(mean, wantMean, 1e-12))
	}
	for i := range spread {
		if math.Abs(spread[i]-wantSpread[i]) > 1e-12*math.Max(1, wantSpread[i]) || !(spread[i] > 0) {
			t.Fatalf("point %d: spread %g, bench.Uncertainty %g", i, spread[i], wantSpread[i])
		}
	}
	var rep struct {
		Metrics *struct {
			K           int  `json:"k"`
			Exact       bool `json:"exact"`
			Base        map[string]any
			Generations []map[string]any
		} `json:"metrics"`
		Uncertainty *struct {
			Generations int     `json:"generations"`
			Median      float64 `json:"median"`
		} `json:"uncertainty"`
	}
	if err := json.Unmarshal(mustRead(t, dir, "y.json"), &rep); err != nil {
		t.Fatal(err)
	}
	if rep.Metrics == nil || rep.Metrics.K != 10 || !rep.Metrics.Exact || len(rep.Metrics.Generations) != G || rep.Uncertainty == nil || rep.Uncertainty.Generations != G {
		t.Fatalf("JSON report lacks metrics/uncertainty: %s", mustRead(t, dir, "y.json"))
	}
	for _, key := range []string{"trustworthiness", "continuity", "reconstruction_cost", "max_abs_spearman"} {
		if _, ok := rep.Metrics.Base[key]; !ok {
			t.Errorf("base metrics lack %s", key)
		}
	}
	if _, ok := rep.Metrics.Generations[0]["procrustes_disparity"]; !ok {
		t.Error("generation metrics lack the disparity")
	}
	// Measured 0.854 on this small run; 0.5 is what a random embedding scores, so the bound
	// only catches a missing or broken metric (the quality tests hold the real thresholds).
	if tr, _ := rep.Metrics.Base["trustworthiness"].(float64); !(tr > 0.5 && tr <= 1) {
		t.Errorf("base trustworthiness %v", tr)
	}

	// generate reproduces the aligned generations and the uncertainty bit for bit.
	r = mustRun(t, dir, "generate", "-model", "m", "-generations", fmt.Sprint(G), "-seed", "2", "-align", "-uncertainty", "-metrics", "-out", "re")
	if !strings.Contains(r.stderr, "metrics") {
		t.Errorf("generate -metrics printed no metrics:\n%s", r.stderr)
	}
	for g := 0; g < G; g++ {
		sameFile(t, filepath.Join(dir, fmt.Sprintf("y_gen%03d.npy", g)), filepath.Join(dir, fmt.Sprintf("re_gen%03d.npy", g)))
	}
	sameFile(t, filepath.Join(dir, "y_uncertainty.npy"), filepath.Join(dir, "re_uncertainty.npy"))
	sameFile(t, filepath.Join(dir, "y_mean.npy"), filepath.Join(dir, "re_mean.npy"))
}

// TestTransformCommand: transform of the training points reproduces the LLE embedding,
// sampled transforms of new points have a positive spread and are deterministic per seed, and
// the generations of the training points are the ones embed wrote.
func TestTransformCommand(t *testing.T) {
	dir := t.TempDir()
	mustRun(t, dir, "dataset", "-name", "swissroll", "-n", "400", "-seed", "4", "-out", "x.npy", "-q")
	mustRun(t, dir, "embed", "-in", "x.npy", "-method", "lle", "-out", "lle.npy", "-model", "ml", "-q")
	mustRun(t, dir, "transform", "-model", "ml", "-in", "x.npy", "-out", "tl.npy", "-q")
	Y, base := readM(t, filepath.Join(dir, "tl.npy")), readM(t, filepath.Join(dir, "lle.npy"))
	// 1e-6: the same LLE embedding, so only the QR round-off of the check itself (~n eps = 4e-14; observed 7e-16); any real difference is O(1).
	if s := bench.MaxPrincipalAngleSine(bench.Centered(Y), bench.Centered(base)); !(s <= 1e-6) {
		t.Errorf("transform(X_train) of the LLE model: max principal-angle sine %g", s)
	}
	if !mat.Equal(Y, base) {
		t.Error("transform(X_train) differs from the LLE embedding")
	}

	// New points: the first 50 training points moved slightly.
	X := readM(t, filepath.Join(dir, "x.npy"))
	Xn := mat.DenseCopyOf(X.Slice(0, 50, 0, 3))
	Xn.Apply(func(i, j int, v float64) float64 { return v + 1e-3*math.Sin(float64(7*i+j)) }, Xn)
	if err := dataio.WriteMatrix(filepath.Join(dir, "new.npy"), Xn); err != nil {
		t.Fatal(err)
	}
	for _, method := range []string{"em", "direct"} {
		mustRun(t, dir, "embed", "-in", "x.npy", "-method", method, "-out", method+".npy", "-model", "m"+method, "-generations", "2", "-seed", "6", "-q")
		// Training points: generation g equals the embed run's generation g.
		mustRun(t, dir, "transform", "-model", "m"+method, "-in", "x.npy", "-out", "tx"+method+".npy", "-generations", "2", "-seed", "6", "-q")
		for g := 0; g < 2; g++ {
			if !mat.Equal(readM(t, filepath.Join(dir, fmt.Sprintf("tx%s_gen%03d.npy", method, g))), readM(t, filepath.Join(dir, fmt.Sprintf("%s_gen%03d.npy", method, g)))) {
				t.Errorf("%s: transform(X_train) generation %d differs from the embed generation", method, g)
			}
		}
		args := []string{"transform", "-model", "m" + method, "-in", "new.npy", "-generations", "4", "-seed", "3", "-uncertainty", "-align", "-q"}
		mustRun(t, dir, append(args, "-out", "a"+method+".npy")...)
		mustRun(t, dir, append(args, "-out", "b"+method+".npy", "-workers", "1")...)
		for _, f := range []string{"%s.npy", "%s_gen000.npy", "%s_gen003.npy", "%s_uncertainty.npy", "%s_mean.npy"} {
			sameFile(t, filepath.Join(dir, fmt.Sprintf(f, "a"+method)), filepath.Join(dir, fmt.Sprintf(f, "b"+method)))
		}
		spread := readVec(t, filepath.Join(dir, "a"+method+"_uncertainty.npy"))
		for i, v := range spread {
			if !(v > 0) {
				t.Fatalf("%s: new point %d has spread %g", method, i, v)
			}
		}
		// -base-only: the new points' draws combine the base embedding; no eigensolve, so the
		// summary names none (it printed "Lanczos restarts mean 0.0 max 0" and
		// "backend=default" before), and each generation stays near the LLE transform.
		r := mustRun(t, dir, "transform", "-model", "m"+method, "-in", "new.npy", "-generations", "2", "-seed", "3", "-base-only", "-out", "o"+method+".npy")
		if !strings.Contains(r.stderr, "drawn on the base embedding") || strings.Contains(r.stderr, "Lanczos") || strings.Contains(r.stderr, "backend=default") {
			t.Errorf("%s: -base-only summary:\n%s", method, r.stderr)
		}
		o0, o1 := readM(t, filepath.Join(dir, "o"+method+"_gen000.npy")), readM(t, filepath.Join(dir, "o"+method+"_gen001.npy"))
		if mat.Equal(o0, o1) {
			t.Errorf("%s: -base-only generations 0 and 1 are equal", method)
		}
		mustRun(t, dir, "transform", "-model", "m"+method, "-in", "new.npy", "-out", "l"+method+".npy", "-q")
		lt := readM(t, filepath.Join(dir, "l"+method+".npy"))
		var dd mat.Dense
		dd.Sub(o0, lt)
		// Measured 8.2e-3 (em) and 2.5e-4 (direct) relative to the LLE transform (2026-11-28);
		// 0.1 leaves a factor 12, and a wrong frame or scale would be O(1).
		if rel := mat.Norm(&dd, 2) / mat.Norm(lt, 2); !(rel < 0.1) {
			t.Errorf("%s: -base-only generation 0 is %.3g (relative) from the LLE transform", method, rel)
		}
		mustRun(t, dir, "transform", "-model", "m"+method, "-in", "new.npy", "-generations", "1", "-seed", "4", "-out", "c"+method+".npy", "-q")
		if bytes.Equal(mustRead(t, dir, "a"+method+"_gen000.npy"), mustRead(t, dir, "c"+method+"_gen000.npy")) {
			t.Errorf("%s: seeds 3 and 4 gave the same transform", method)
		}
		// Near training points land near them.
		Yn := readM(t, filepath.Join(dir, "a"+method+".npy"))
		Yb := readM(t, filepath.Join(dir, method+".npy"))
		var diff mat.Dense
		diff.Sub(Yn, Yb.Slice(0, 50, 0, 2))
		// Measured 3.6e-3 for em and direct (2026-11-28); 0.05 leaves a factor 14.
		if rel := mat.Norm(&diff, 2) / mat.Norm(Yb.Slice(0, 50, 0, 2), 2); rel > 0.05 {
			t.Errorf("%s: transformed new points moved %.3g (relative) from their training points", method, rel)
		}
	}

	bad := func(name, want string, args ...string) badCase { return badCase{name, args, want} }
	os.WriteFile(filepath.Join(dir, "two.csv"), []byte("1,2\n3,4\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "nan.csv"), []byte("1,2,3\nNaN,4,5\n"), 0o644)
	for _, c := range []badCase{
		bad("wrong columns", "2 columns", "transform", "-model", "mem", "-in", "two.csv", "-out", "z.npy"),
		bad("missing model", "no such folder", "transform", "-model", "nomodel", "-in", "new.npy", "-out", "z.npy"),
		bad("nan", "non-finite", "transform", "-model", "mem", "-in", "nan.csv", "-out", "z.npy"),
		bad("lle generations", "no stochastic weights", "transform", "-model", "ml", "-in", "new.npy", "-out", "z.npy", "-generations", "2"),
		bad("uncertainty without generations", "-uncertainty", "transform", "-model", "mem", "-in", "new.npy", "-out", "z.npy", "-uncertainty"),
		bad("no in", "-in is required", "transform", "-model", "mem", "-out", "z.npy"),
		bad("embed uncertainty one generation", "-uncertainty", "embed", "-dataset", "scurve", "-n", "300", "-method", "em", "-generations", "1", "-uncertainty", "-out", "z.npy"),
		bad("frame without generations", "-frame applies", "embed", "-dataset", "scurve", "-n", "300", "-method", "em", "-frame", "eigen", "-out", "z.npy"),
		bad("frame with base-only", "-base-only", "transform", "-model", "mem", "-in", "new.npy", "-out", "z.npy", "-generations", "2", "-base-only", "-frame", "eigen"),
		bad("align with base-only", "drop -align", "transform", "-model", "mem", "-in", "new.npy", "-out", "z.npy", "-generations", "2", "-base-only", "-align"),
		bad("transform cov-scale without generations", "-cov-scale applies", "transform", "-model", "mem", "-in", "new.npy", "-out", "z.npy", "-cov-scale", "5"),
		bad("transform seed without generations", "-seed applies", "transform", "-model", "mem", "-in", "new.npy", "-out", "z.npy", "-seed", "3"),
		bad("unknown frame", "unknown frame", "embed", "-dataset", "scurve", "-n", "300", "-method", "em", "-generations", "2", "-frame", "tilted", "-out", "z.npy"),
		bad("align-scale without align", "-align", "embed", "-dataset", "scurve", "-n", "300", "-method", "em", "-generations", "2", "-align-scale", "-out", "z.npy"),
		bad("figures bad fig", "-figs", "figures", "-out", "figs", "-figs", "7"),
	} {
		checkBad(t, dir, c)
	}
}

// TestEmbedFrames: -frame base (the default) writes each generation rotated onto the base
// embedding; -frame eigen writes the eigenvectors as computed; both span the same space.
func TestEmbedFrames(t *testing.T) {
	dir := t.TempDir()
	args := []string{"embed", "-dataset", "scurve", "-n", "400", "-method", "direct", "-generations", "2", "-seed", "4", "-q"}
	mustRun(t, dir, append(args, "-out", "d.npy")...)
	mustRun(t, dir, append(args, "-frame", "base", "-out", "b.npy")...)
	mustRun(t, dir, append(args, "-frame", "eigen", "-out", "e.npy")...)
	base := readM(t, filepath.Join(dir, "b.npy"))
	for g := 0; g < 2; g++ {
		name := fmt.Sprintf("_gen%03d.npy", g)
		sameFile(t, filepath.Join(dir, "d"+name), filepath.Join(dir, "b"+name))
		yb := readM(t, filepath.Join(dir, "b"+name))
		ye := readM(t, filepath.Join(dir, "e"+name))
		// Base frame: no further rotation brings it closer to the base embedding.
		// 1e-9: as in TestEmbedAlignUncertaintyMetrics, round-off of 400-point sums ~4e-14 (observed 4e-16).
		if R := bench.FitAlignment(base, yb, false).R; !mat.EqualApprox(R, mat.NewDiagDense(2, []float64{1, 1}), 1e-9) {
			t.Errorf("generation %d in the base frame: residual rotation %v", g, mat.Formatted(R))
		}
		// Same span: Ye = Yb R for the orthogonal R = Yb^T Ye (orthonormal columns; 1e-9
		// covers round-off of 400-point dot products and the 2 x 2 SVD).
		var r, back mat.Dense
		r.Mul(yb.T(), ye)
		back.Mul(yb, &r)
		if !mat.EqualApprox(&back, ye, 1e-9) {
			t.Errorf("generation %d: the eigen-frame file is not a rotation of the base-frame file", g)
		}
	}
}

// TestFiguresStudy: figures writes the covariance-scale study and the uncertainty maps.
func TestFiguresStudy(t *testing.T) {
	dir := t.TempDir()
	r := mustRun(t, dir, "figures", "-out", "figs", "-n", "300", "-figs", "5,6")
	for _, f := range []string{fig5File, fig6File} {
		isPNG(t, filepath.Join(dir, "figs", f))
	}
	if _, err := os.Stat(filepath.Join(dir, "figs", fig3File)); err == nil {
		t.Error("-figs 5,6 also wrote Fig. 3")
	}
	if !strings.Contains(r.stderr, "figs 5-6:") {
		t.Errorf("figures summary: %s", r.stderr)
	}
}

func TestTransformHelp(t *testing.T) {
	dir := t.TempDir()
	own := mustRun(t, dir, "transform", "-h").stdout
	if all := mustRun(t, dir, "help").stdout; !strings.Contains(all, own) {
		t.Error("the overview help lacks the transform help")
	}
	var c transformConfig
	f := transformFlags(&c)
	for _, s := range f.specs {
		found := false
		for _, line := range strings.Split(own, "\n") {
			l := strings.TrimSpace(line)
			if strings.HasPrefix(l, "-"+s.name+" ") && (strings.Contains(l, "(default ") || strings.Contains(l, "(required)")) {
				found = true
			}
		}
		if !found {
			t.Errorf("transform help lacks -%s with its default", s.name)
		}
	}
}

// TestAnalysisEdgeCases: the uncertainty summary's median of an even count is the mean of
// the middle two (it reported the upper one: 3 for {1, 2, 3, 4}); a constant colour vector
// draws the middle colour whatever its value (7 drew light, -7 dark); a covariance-scale
// panel whose medians are all equal still draws (its log axis was padded below zero, and
// gonum/plot panicked).
func TestAnalysisEdgeCases(t *testing.T) {
	if r := newUncertaintyReport([]float64{4, 1, 3, 2}, 2, "f"); r.Median != 2.5 || r.Max != 4 || r.Mean != 2.5 {
		t.Errorf("uncertainty report of {1, 2, 3, 4}: median %g, max %g, mean %g; want 2.5, 4, 2.5", r.Median, r.Max, r.Mean)
	}
	mid := newColorScale([]float64{0, 1}).at(0.5)
	for _, v := range []float64{7, -7, 0.5, 0} {
		if got := newColorScale([]float64{v, v, v}).at(v); got != mid {
			t.Errorf("constant colour %g: %v, want the middle colour %v", v, got, mid)
		}
	}
	p, err := studyPanel("flat", "a", "disparity", true)
	if err != nil {
		t.Fatal(err)
	}
	flat := plotter.XYs{{X: 0.01, Y: 1e-12}, {X: 1, Y: 1e-12}, {X: 10, Y: 1e-12}}
	if err := addStudyLine(p, flat, "em", 0); err != nil {
		t.Fatal(err)
	}
	widenFlatLogAxis(&p.Y)
	func() {
		defer func() {
			if r := recover(); r != nil {
				t.Fatalf("drawing a flat log panel panicked: %v", r)
			}
		}()
		if _, err := p.WriterTo(vg.Points(200), vg.Points(150), "png"); err != nil {
			t.Fatal(err)
		}
	}()
}

// TestAnalysisStages: the time -metrics and -plot take is reported as stages (it was in no
// stage: a user saw 4.4 s of 17 s accounted for).
func TestAnalysisStages(t *testing.T) {
	dir := t.TempDir()
	mustRun(t, dir, "embed", "-dataset", "scurve", "-n", "400", "-method", "em", "-generations", "2", "-metrics", "-uncertainty", "-plot", "y.png", "-out", "y.npy", "-json", "y.json", "-q")
	var j struct {
		Stages []struct {
			Name    string  `json:"name"`
			Seconds float64 `json:"seconds"`
		} `json:"stages"`
	}
	if err := json.Unmarshal(mustRead(t, dir, "y.json"), &j); err != nil {
		t.Fatal(err)
	}
	found := map[string]bool{}
	for _, s := range j.Stages {
		if s.Seconds > 0 {
			found[s.Name] = true
		}
	}
	for _, name := range []string{"metrics and alignment", "plot uncertainty", "plot"} {
		if !found[name] {
			t.Errorf("stage %q missing or zero: %+v", name, j.Stages)
		}
	}
}

// TestMetricsAlignScaleAndWorkers: -metrics measures each generation as drawn, so -align
// -align-scale leaves its reconstruction cost unchanged (it was multiplied by s^2, 6.7095e-08
// against 6.7121e-08, before session 32); and it runs on the run's -workers: with -workers 1
// the process's CPU time stays near its wall time (the metrics used every CPU: user 1.33 s
// against 0.77 s wall at n = 8000). GOGC=off keeps the garbage collector's helper threads
// out of the CPU time.
func TestMetricsAlignScaleAndWorkers(t *testing.T) {
	dir := t.TempDir()
	costs := func(extra ...string) []float64 {
		js := fmt.Sprintf("m%d.json", len(extra))
		args := append([]string{"embed", "-dataset", "swissroll", "-n", "600", "-method", "em", "-generations", "2", "-metrics", "-out", "y.npy", "-json", js, "-q"}, extra...)
		mustRun(t, dir, args...)
		var rep struct {
			Metrics struct {
				Generations []struct {
					Cost float64 `json:"reconstruction_cost"`
				} `json:"generations"`
			} `json:"metrics"`
		}
		if err := json.Unmarshal(mustRead(t, dir, js), &rep); err != nil {
			t.Fatal(err)
		}
		var c []float64
		for _, g := range rep.Metrics.Generations {
			c = append(c, g.Cost)
		}
		return c
	}
	plain, scaled := costs(), costs("-align", "-align-scale")
	if len(plain) != 2 || len(scaled) != 2 {
		t.Fatalf("costs %v, %v", plain, scaled)
	}
	for g := range plain {
		// 1e-12: the same embedding measured twice; only the rigid alignment's round-off,
		// none at all since the metrics read the generation as drawn.
		if math.Abs(scaled[g]-plain[g]) > 1e-12*plain[g] {
			t.Errorf("generation %d: reconstruction cost %g with -align -align-scale, %g without", g, scaled[g], plain[g])
		}
	}
	// With -frame eigen -align the metrics describe the file written (aligned), whose max
	// |Spearman| differs from the unrotated eigenvector frame's (the first fix measured that).
	mustRun(t, dir, "embed", "-dataset", "swissroll", "-n", "600", "-method", "em", "-generations", "1", "-frame", "eigen", "-align",
		"-metrics", "-out", "e.npy", "-json", "e.json", "-q")
	mustRun(t, dir, "dataset", "-name", "swissroll", "-n", "600", "-out", "x.npy", "-color-out", "t.npy", "-q")
	var rep struct {
		Metrics struct {
			Generations []struct {
				Spearman float64 `json:"max_abs_spearman"`
			} `json:"generations"`
		} `json:"metrics"`
	}
	if err := json.Unmarshal(mustRead(t, dir, "e.json"), &rep); err != nil || len(rep.Metrics.Generations) != 1 {
		t.Fatalf("e.json: %v", err)
	}
	want := bench.MaxAbsSpearman(readM(t, filepath.Join(dir, "e_gen000.npy")), readM(t, filepath.Join(dir, "t.npy")).RawMatrix().Data)
	if got := rep.Metrics.Generations[0].Spearman; math.Abs(got-want) > 1e-12 {
		t.Errorf("-frame eigen -align: max |Spearman| %v in the report, %v of the file written", got, want)
	}
	cmd := exec.Command(bin, "embed", "-dataset", "swissroll", "-n", "8000", "-method", "em", "-generations", "2", "-workers", "1", "-metrics", "-out", "w.npy", "-q")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOGC=off")
	start := time.Now()
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%v %s", err, out)
	}
	wall := time.Since(start)
	cpu := cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	// 1.3 wall + 0.1 s: one thread's work plus the runtime's own threads; two workers would
	// need close to 2 wall.
	if cpu > wall*13/10+100*time.Millisecond {
		t.Errorf("-workers 1 -metrics: CPU time %v for %v wall", cpu, wall)
	}
}

// TestMetricsNotComputed: with k not below n/2 trustworthiness and continuity cannot be
// computed; the summary and the JSON say so and why. They claimed "exact" ("exact": true,
// "queries": 12) over a table of "-" cells (a user trial: -dataset swissroll -n 12).
func TestMetricsNotComputed(t *testing.T) {
	dir := t.TempDir()
	r := mustRun(t, dir, "embed", "-dataset", "swissroll", "-n", "12", "-method", "em", "-generations", "3", "-metrics", "-out", "s.npy", "-json", "s.json")
	if want := "trustworthiness/continuity not computed: they need k below n/2, and k = 10 is not below n/2 = 6"; !strings.Contains(r.stderr, want) || strings.Contains(r.stderr, "continuity exact") {
		t.Errorf("summary does not say %q:\n%s", want, r.stderr)
	}
	var rep struct {
		Metrics struct {
			Queries     int    `json:"queries"`
			Exact       bool   `json:"exact"`
			NotComputed string `json:"trust_continuity_not_computed"`
		} `json:"metrics"`
	}
	if err := json.Unmarshal(mustRead(t, dir, "s.json"), &rep); err != nil {
		t.Fatal(err)
	}
	if m := rep.Metrics; m.Exact || m.Queries != 0 || !strings.Contains(m.NotComputed, "not below n/2 = 6") {
		t.Errorf("metrics %+v: want exact false, queries 0 and the reason", m)
	}
	// Computed: no reason, exact over every point.
	mustRun(t, dir, "embed", "-dataset", "swissroll", "-n", "21", "-method", "em", "-generations", "1", "-metrics", "-out", "c.npy", "-json", "c.json", "-q")
	rep.Metrics.NotComputed = ""
	if err := json.Unmarshal(mustRead(t, dir, "c.json"), &rep); err != nil {
		t.Fatal(err)
	}
	if m := rep.Metrics; !m.Exact || m.Queries != 21 || m.NotComputed != "" {
		t.Errorf("n = 21, k = 10: metrics %+v, want exact over 21 points", m)
	}
}
