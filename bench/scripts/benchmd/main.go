package main

// benchmd reads the go test -bench outputs of both builds and their benchstat comparison (make
// bench), the JSON reports of the glle-bench bench sweep (bench/scripts/sweep.sh), the machine
// description and the quoted reference costs. It types no number itself: every figure comes
// from those files.

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"glle/bench"
	"glle/cgo"
	"glle/internal/procfs"
	"glle/kernels"
)

func main() {
	in := flag.String("in", "out/bench", "folder with openblas.txt, purego.txt, benchstat.txt, sweep_lle.json, sweep_gen.json")
	notes := flag.String("notes", "../shared/reference-notes.md", "reference notes with the quoted costs")
	out := flag.String("out", "BENCHMARKS.md", "output file")
	flag.Parse()
	doc, err := build(*in, *notes)
	if err != nil {
		fmt.Fprintln(os.Stderr, "benchmd:", err)
		os.Exit(1)
	}
	if err := os.WriteFile(*out, []byte(doc), 0o644); err != nil {
		fmt.Fprintln(os.Stderr, "benchmd:", err)
		os.Exit(1)
	}
	fmt.Printf("benchmd: wrote %s\n", *out)
}

// ---- inputs

type stage struct {
	Name    string  `json:"name"`
	Seconds float64 `json:"seconds"`
}

type run struct {
	N            int     `json:"n"`
	Method       string  `json:"method"`
	Backend      string  `json:"backend"`
	Stages       []stage `json:"stages"`
	FitSeconds   float64 `json:"fit_seconds"`
	WallSeconds  float64 `json:"wall_seconds"`
	Generations  int     `json:"generations"`
	GenSeconds   float64 `json:"generation_seconds"`
	GenFirst     float64 `json:"first_generation_seconds"`
	GenRatio     float64 `json:"generation_to_fit"`
	PeakRSSBytes int64   `json:"peak_rss_bytes"`
	NNZLPerRow   float64 `json:"nnz_l_per_row"`
	Solves       int     `json:"solves"`
	GenSolves    float64 `json:"generation_solves"`
	GenStages    []stage `json:"generation_stages"`
	Error        string  `json:"error"`
	// glle-bench bench -repeat: every run's fit seconds and generation-to-fit ratio (this run is
	// the median one).
	FitRuns   []float64 `json:"fit_runs"`
	RatioRuns []float64 `json:"generation_to_fit_runs"`
}

type peer struct {
	N            int       `json:"n"`
	Seconds      float64   `json:"seconds"`
	Runs         []float64 `json:"runs"`
	PeakRSSBytes int64     `json:"peak_rss_bytes"`
	OursSeconds  float64   `json:"ours_seconds"`
	OursRuns     []float64 `json:"ours_runs"`
	Ratio        float64   `json:"ours_over_theirs"`
	MaxSine      float64   `json:"max_principal_angle_sine"`
	Error        string    `json:"error"`
}

type sweep struct {
	Started   time.Time `json:"started"`
	LoadStart string    `json:"loadavg_start"`
	LoadEnd   string    `json:"loadavg_end"`
	GoVersion string    `json:"go_version"`
	Runs      []run     `json:"runs"`
	Peers     []peer    `json:"peers"`
	PeersNote string    `json:"peers_note"`
}

func readSweep(path string) (*sweep, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var s sweep
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &s, nil
}

// benchFile holds the per-benchmark median of every metric of a go test -bench output.
type benchFile struct {
	order []string
	vals  map[string]map[string][]float64 // name -> unit -> values
}

func readBench(path string) (*benchFile, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	bf := &benchFile{vals: map[string]map[string][]float64{}}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		fs := strings.Fields(sc.Text())
		if len(fs) < 4 || !strings.HasPrefix(fs[0], "Benchmark") {
			continue
		}
		name := fs[0]
		if i := strings.LastIndexByte(name, '-'); i > 0 {
			if _, err := strconv.Atoi(name[i+1:]); err == nil {
				name = name[:i]
			}
		}
		if _, err := strconv.Atoi(fs[1]); err != nil {
			continue
		}
		m := bf.vals[name]
		if m == nil {
			m = map[string][]float64{}
			bf.vals[name] = m
			bf.order = append(bf.order, name)
		}
		for i := 2; i+1 < len(fs); i += 2 {
			v, err := strconv.ParseFloat(fs[i], 64)
			if err != nil {
				break
			}
			m[fs[i+1]] = append(m[fs[i+1]], v)
		}
	}
	return bf, sc.Err()
}

func median(v []float64) float64 {
	if len(v) == 0 {
		return math.NaN()
	}
	s := slices.Clone(v)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// get returns the median of unit for the first benchmark whose name starts with prefix.
func (b *benchFile) get(prefix, unit string) (float64, string, bool) {
	if b == nil {
		return 0, "", false
	}
	for _, n := range b.order {
		if strings.HasPrefix(n, prefix) {
			if v, ok := b.vals[n][unit]; ok {
				return median(v), n, true
			}
		}
	}
	return 0, "", false
}

// ---- machine

func cpuModel() string {
	b, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return "unknown"
	}
	for _, l := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(l, ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return "unknown"
}

func memTotal() string { return memGiB(procfs.FileSize("/proc/meminfo", "MemTotal:")) }

// memGiB formats a MemTotal in bytes (procfs.Size) in GiB, or "unknown" for 0 (unknown).
func memGiB(b int64) string {
	if b <= 0 {
		return "unknown"
	}
	return fmt.Sprintf("%.1f GiB", float64(b)/(1<<30))
}

func dpkgVersion(pkg string) string {
	out, err := exec.Command("dpkg-query", "-W", "-f", "${Version}", pkg).Output()
	if err != nil || len(out) == 0 {
		return "not installed"
	}
	return string(out)
}

// ---- formatting

func sec(s float64) string {
	switch {
	case s >= 10:
		return fmt.Sprintf("%.1f", s)
	case s >= 0.1:
		return fmt.Sprintf("%.2f", s)
	}
	return fmt.Sprintf("%.3f", s)
}

func gib(b int64) string { return fmt.Sprintf("%.2f GiB", float64(b)/(1<<30)) }

func si(v float64) string {
	switch {
	case v >= 1e6:
		return fmt.Sprintf("%.2fM", v/1e6)
	case v >= 1e3:
		return fmt.Sprintf("%.0fk", v/1e3)
	}
	return fmt.Sprintf("%.0f", v)
}

func met(ok bool) string {
	if ok {
		return "met"
	}
	return "**not met**"
}

func stageSum(stages []stage, names []string) (float64, bool) {
	return bench.StageSum(stages, names, func(st stage) (string, float64) { return st.Name, st.Seconds })
}

func scalingTable(b *strings.Builder, runs []run) {
	bench.WriteStageHeader(b, "fit total", "wall", "one more generation", "gen / fit", "peak RSS", "nnz(L)/row", "solves (fit / gen)")
	for _, r := range runs {
		if r.Error != "" {
			fmt.Fprintf(b, "| %d | %s | | failed: %s |\n", r.N, r.Method, strings.ReplaceAll(r.Error, "|", "/"))
			continue
		}
		fmt.Fprintf(b, "| %d | %s | %s |", r.N, r.Method, r.Backend)
		for _, c := range bench.StageColumns {
			if v, ok := stageSum(r.Stages, c.Names); ok {
				b.WriteString(" " + sec(v) + " |")
			} else {
				b.WriteString(" - |")
			}
		}
		fmt.Fprintf(b, " %s | %s |", sec(r.FitSeconds), sec(r.WallSeconds))
		if r.Generations > 0 {
			fmt.Fprintf(b, " %s | %.0f%% |", sec(r.GenSeconds), 100*r.GenRatio)
		} else {
			b.WriteString(" - | - |")
		}
		fmt.Fprintf(b, " %s | %.0f | %d", gib(r.PeakRSSBytes), r.NNZLPerRow, r.Solves)
		if r.Generations > 0 {
			fmt.Fprintf(b, " / %.0f", r.GenSolves)
		}
		b.WriteString(" |\n")
	}
}

func findRun(s *sweep, n int, method string) *run {
	if s == nil {
		return nil
	}
	for i := range s.Runs {
		if s.Runs[i].N == n && s.Runs[i].Method == method && s.Runs[i].Error == "" {
			return &s.Runs[i]
		}
	}
	return nil
}

// quotedSections returns the sections of the reference notes whose heading contains one of keys.
func quotedSections(path string, keys ...string) string {
	data, err := os.ReadFile(path)
	if err != nil {
		return fmt.Sprintf("(reference notes %s not readable: %v)\n", path, err)
	}
	var b strings.Builder
	parts := strings.Split(string(data), "\n## ")
	for _, p := range parts[1:] {
		head, _, _ := strings.Cut(p, "\n")
		for _, k := range keys {
			if strings.Contains(head, k) {
				b.WriteString("#### " + p)
				if !strings.HasSuffix(p, "\n") {
					b.WriteString("\n")
				}
				b.WriteString("\n")
				break
			}
		}
	}
	return b.String()
}

// loadFile returns the load averages recorded in path (one /proc/loadavg line each), joined.
func loadFile(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return "not recorded"
	}
	var parts []string
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		f := strings.Fields(l)
		if len(f) >= 3 {
			parts = append(parts, strings.Join(f[:3], " "))
		}
	}
	return strings.Join(parts, " -> ")
}

// ---- document

func build(in, notes string) (string, error) {
	ob, err := readBench(filepath.Join(in, "openblas.txt"))
	if err != nil {
		return "", fmt.Errorf("%w (run make bench first)", err)
	}
	pg, err := readBench(filepath.Join(in, "purego.txt"))
	if err != nil {
		return "", fmt.Errorf("%w (run make bench first)", err)
	}
	bstat, err := os.ReadFile(filepath.Join(in, "benchstat.txt"))
	if err != nil {
		return "", fmt.Errorf("%w (run make bench first)", err)
	}
	sl, err := readSweep(filepath.Join(in, "sweep_lle.json"))
	if err != nil {
		return "", fmt.Errorf("%w (run bench/scripts/sweep.sh first)", err)
	}
	sg, err := readSweep(filepath.Join(in, "sweep_gen.json"))
	if err != nil {
		return "", fmt.Errorf("%w (run bench/scripts/sweep.sh first)", err)
	}
	// Optional: the same LLE sweep with the purego binary (bench/scripts/sweep.sh runs it).
	sp, _ := readSweep(filepath.Join(in, "sweep_lle_purego.json"))
	var b strings.Builder
	w := func(format string, a ...any) { fmt.Fprintf(&b, format, a...) }

	w("# GLLE engine benchmarks\n\n")
	w("Generated by `make benchmarks-md` (bench/scripts/benchmd) from the outputs of `make bench` and of\n")
	w("`glle-bench bench` saved under out/bench/; no number in this file is typed by hand. Regenerate\n")
	w("after `make bench` and `SWEEP=1 make benchmarks-md`. Timings on a shared 2-core machine are noisy:\n")
	w("the load average at the time of the sweep is recorded with it.\n\n")

	w("## Machine\n\n")
	w("| | |\n|---|---|\n")
	w("| CPU | %s |\n| cores | %d |\n| memory | %s |\n| Go | %s (sweep binary: %s) |\n", cpuModel(), runtime.NumCPU(), memTotal(), runtime.Version(), sl.GoVersion)
	w("| OpenBLAS | libopenblas0 %s; `cgo.Config()`: %s |\n", dpkgVersion("libopenblas0"), cgo.Config())
	w("| LAPACKE | liblapacke %s |\n", dpkgVersion("liblapacke"))
	w("| OS/arch | %s/%s |\n\n", runtime.GOOS, runtime.GOARCH)

	w("## Commands\n\n```sh\n")
	w("make bench            # go test -run '^$' -bench . -benchtime 300ms -count 6 ./... for the OpenBLAS build,\n")
	w("                      # then CGO_ENABLED=0 go test -tags purego ... ; benchstat openblas=... purego=...\n")
	w("make benchmarks-md    # make peers-deps (apt python3-sklearn: scikit-learn 1.2.1 for -peers, if no python3 has it),\n")
	w("                      # bench/scripts/sweep.sh (below) if out/bench/sweep_*.json are missing, then this file\n")
	w("./bin/glle-bench bench -sizes 10000,100000,200000,1000000,2000000 -methods lle -peers -peer-repeat 5 -json out/bench/sweep_lle.json\n")
	w("                      # -peers: scikit-learn at n <= -peer-max (default 200000) with the first python3 that has it\n")
	genRepeat := 1 // the sweep's -repeat, read from its runs
	for _, r := range sg.Runs {
		genRepeat = max(genRepeat, len(r.RatioRuns))
	}
	w("./bin/glle-bench bench -sizes 200000,1000000 -methods em,direct -generations 3 -repeat %d -json out/bench/sweep_gen.json\n", genRepeat)
	w("GLLE_BENCH_SIZES=100000,1000000 go test -run '^$' -bench 'Fit|Generate' ./bench   # large end-to-end benchmarks\n")
	w("```\n\n")

	// ---- targets
	w("## Targets\n\n| target | measured | status |\n|---|---|---|\n")
	if r := findRun(sl, 1000000, "lle"); r != nil {
		w("| LLE at n = 1M: <= 60 s and <= 6 GiB (issue 3) | %s s fit (%s s wall), %s peak RSS | %s |\n", sec(r.FitSeconds), sec(r.WallSeconds), gib(r.PeakRSSBytes),
			met(r.FitSeconds <= 60 && r.PeakRSSBytes <= 6<<30))
		w("| LLE at n = 1M, goal: <= 30 s and <= 4 GiB | %s s, %s | %s |\n", sec(r.FitSeconds), gib(r.PeakRSSBytes),
			met(r.FitSeconds <= 30 && r.PeakRSSBytes <= 4<<30))
	} else {
		w("| LLE at n = 1M: <= 60 s and <= 6 GiB | no successful 1M run in sweep_lle.json | **not measured** |\n")
	}
	if sp != nil {
		for _, n := range []int{100000, 1000000} {
			r, q := findRun(sl, n, "lle"), findRun(sp, n, "lle")
			if r == nil || q == nil {
				continue
			}
			fr, fq := stageSeconds(r, "factor"), stageSeconds(q, "factor")
			w("| LLE at n = %d, purego build (report; factorization-heavy: OpenBLAS >= 2x purego) | purego %s s fit, %s; OpenBLAS %s s: purego / OpenBLAS = %.2fx overall, %.2fx on the factorization | %s |\n",
				n, sec(q.FitSeconds), gib(q.PeakRSSBytes), sec(r.FitSeconds), q.FitSeconds/r.FitSeconds, fq/fr, met(fq/fr >= 2 && q.FitSeconds/r.FitSeconds <= 3))
		}
	}
	for _, n := range []int{200000, 1000000} {
		for _, m := range []string{"em", "direct"} {
			if r := findRun(sg, n, m); r != nil && r.Generations > 0 {
				w("| %s at n = %d: one more generation <= 30%% of the fit | %s s vs fit %s s = %.0f%%%s | %s |\n", m, n, sec(r.GenSeconds), sec(r.FitSeconds), 100*r.GenRatio, repeatNote(r), met(r.GenRatio <= 0.3))
			}
		}
	}
	if r := findRun(sl, 200000, "lle"); r != nil {
		var p *peer
		for i := range sl.Peers {
			if sl.Peers[i].N == 200000 && sl.Peers[i].Error == "" {
				p = &sl.Peers[i]
			}
		}
		if p != nil {
			w("| LLE at n = 200k: >= 20x faster than scikit-learn (same run) | ours %s s, scikit-learn %s s%s: %.1fx | %s |\n", sec(p.OursSeconds), sec(p.Seconds), medianNote(p), p.Seconds/p.OursSeconds, met(p.Seconds >= 20*p.OursSeconds))
		} else {
			w("| LLE at n = 200k: >= 20x faster than scikit-learn (same run) | ours %s s; %s. Against the *quoted* 37-40 s: %.1fx-%.1fx | **not measured** (quoted ratio only) |\n",
				sec(r.FitSeconds), strings.TrimSuffix(sl.PeersNote, ": peers skipped"), 37/r.FitSeconds, 40/r.FitSeconds)
		}
	}
	if v, _, ok := ob.get("BenchmarkPaperWorkflow/n=5000", "s/workflow"); ok {
		w("| paper workflow at n = 5000 (LLE; EM + 30 gens; direct + 30 gens; 5-scale sweep of both): <= 2 s | %s s (OpenBLAS), authors' code about 900 s (issue 5's figure; the per-call costs quoted below add up to about 1020 s, with the pinv fallback its direct fit needs) | %s |\n", sec(v), met(v <= 2))
	}
	if v, _, ok := pg.get("BenchmarkPaperWorkflow/n=5000", "s/workflow"); ok {
		w("| paper workflow at n = 5000, purego build | %s s | %s |\n", sec(v), met(v <= 2))
	}
	kern := []struct {
		label, prefix string
		target        float64
	}{
		{"LLE weights, k = 10, d = 3", "BenchmarkPointFit/method=lle/", 1e6},
		{"EM fit per point (weights + fibre basis)", "BenchmarkPointFit/method=em/", 2.5e5},
		{"direct fit per point (weights + residuals + factor)", "BenchmarkPointFit/method=direct/", 2.5e5},
		{"EM draw", "BenchmarkDraw/method=em/", 2e6},
		{"direct draw", "BenchmarkDraw/method=direct/", 2e6},
	}
	for _, k := range kern {
		v, name, ok := ob.get(k.prefix, "points/s")
		if !ok {
			continue
		}
		allocs, _, _ := ob.get(k.prefix, "allocs/op")
		pv, _, _ := pg.get(k.prefix, "points/s")
		w("| %s: >= %s points/s per core, 0 allocs | %s/s (purego %s/s), %.0f allocs/op (`%s`) | %s |\n", k.label, si(k.target), si(v), si(pv), allocs, name, met(v >= k.target && allocs == 0))
	}
	// OpenBLAS vs purego on the factorization.
	for _, pre := range []string{"BenchmarkLUFactor/n=100000", "BenchmarkFactor/n=100000/amf", "BenchmarkFactor/n=100000/amd", "BenchmarkFactor/n=100000/nd"} {
		o, _, ok1 := ob.get(pre, "sec/op")
		if !ok1 {
			o, _, ok1 = ob.get(pre, "ns/op")
		}
		p, _, ok2 := pg.get(pre, "ns/op")
		if ok1 && ok2 {
			w("| OpenBLAS >= 2x purego on factorization (`%s`) | purego / OpenBLAS = %.2fx | %s |\n", pre, p/o, met(p/o >= 2))
		}
	}
	// Small dense kernels: kernels.Cholesky runs the hand-written loop below order
	// kernels.CholeskyGonumMin and gonum's Dpotrf from there, the same Go code in both builds.
	// Its choice is checked against the alternatives within each run (the loop is measured in
	// both): the loop against OpenBLAS/LAPACKE in the OpenBLAS run and against gonum in the
	// purego run; gonum against OpenBLAS/LAPACKE through their ratios to the loop.
	for _, k := range []int{5, 10, 16, 20} {
		name := func(impl string) string { return fmt.Sprintf("BenchmarkCholesky/k=%d/impl=%s", k, impl) }
		g, _, ok1 := ob.get(name("go"), "ns/op")
		c, _, ok2 := ob.get(name("backend"), "ns/op")
		pgo, _, ok3 := pg.get(name("go"), "ns/op")
		p, _, ok4 := pg.get(name("backend"), "ns/op")
		if !(ok1 && ok2 && ok3 && ok4) {
			continue
		}
		// 10 % slack: medians on a shared machine (identical code measures up to ~10 % apart).
		choice, ok := "hand-written loop", g <= 1.1*c && pgo <= 1.1*p
		if k >= kernels.CholeskyGonumMin {
			choice, ok = "gonum Dpotrf", p <= 1.1*pgo && p/pgo <= 1.1*c/g
		}
		w("| small kernels: the per-point code uses the fastest (Cholesky k = %d) | uses the %s; OpenBLAS run: loop %.0f ns, OpenBLAS/LAPACKE %.0f ns; purego run: loop %.0f ns, gonum %.0f ns | %s |\n", k, choice, g, c, pgo, p, met(ok))
	}
	// Whole-suite geometric mean.
	lg, cnt, worst, worstName := 0.0, 0, 0.0, ""
	for _, n := range ob.order {
		o, ok1 := ob.vals[n]["ns/op"]
		p, ok2 := pg.vals[n]["ns/op"]
		if !ok1 || !ok2 {
			continue
		}
		r := median(p) / median(o)
		lg += math.Log(r)
		cnt++
		if r > worst {
			worst, worstName = r, n
		}
	}
	if cnt > 0 {
		g := math.Exp(lg / float64(cnt))
		w("| purego within 3x of OpenBLAS overall | geometric mean purego/OpenBLAS time %.2fx over %d benchmarks (worst %.2fx, `%s`) | %s |\n", g, cnt, worst, worstName, met(g <= 3))
	}
	if r := findRun(sl, 1000000, "lle"); r != nil {
		w("\nEnd-to-end figures are fit totals (the wall time of the engine's Fit: its stages, the last of which, \"other\", holds the time between the named ones) from the sweep below; the paper-workflow and\nper-point rows are medians of `make bench` (per core: one goroutine, points/s = 1e9 / ns/op).\n")
	}

	// ---- sweep
	w("\n## End-to-end scaling (glle-bench bench)\n\n")
	w("Swiss roll, k = 10, p = 2, all cores; each run a separate child process (peak RSS = its VmHWM).\n")
	w("The sparse solver factors B = I - W (LU without pivoting on the pattern of B + B^T) for lle, em and direct, and M - sigma I (Cholesky) only as a fallback, so \"assembly\" is B's and \"nnz(L)/row\" counts L and U together. The ordering and symbolic columns ran in the background, beside the weights, EM and the assembly (B's pattern depends only on the kNN graph); \"analysis wait\" is the time the fit then waited for them. Every other column is foreground time: those add up to the fit total.\n\n")
	w("LLE sweep started %s, load average at start %s, at end %s:\n\n", sl.Started.Format(time.RFC3339), sl.LoadStart, sl.LoadEnd)
	scalingTable(&b, sl.Runs)
	if sp != nil {
		w("\nThe same LLE sweep with the purego build (`CGO_ENABLED=0 go build -tags purego`), started %s, load average at start %s, at end %s:\n\n", sp.Started.Format(time.RFC3339), sp.LoadStart, sp.LoadEnd)
		scalingTable(&b, sp.Runs)
	}
	if len(sl.Peers) > 0 {
		w("\nscikit-learn LocallyLinearEmbedding(n_neighbors=10, n_components=2, eigen_solver='arpack') on the same data, same run:\n\n")
		w("Times are medians when each side ran more than once (interleaved: scikit-learn, ours, scikit-learn, ...); the runs are listed.\n\n")
		w("| n | scikit-learn s | peak RSS | ours s | ours / theirs | max principal-angle sine | scikit-learn runs | our runs |\n|---:|---:|---:|---:|---:|---:|---|---|\n")
		for _, p := range sl.Peers {
			if p.Error != "" {
				w("| %d | failed: %s | | | | | | |\n", p.N, p.Error)
				continue
			}
			w("| %d | %s | %s | %s | %.3f | %.2g | %s | %s |\n", p.N, sec(p.Seconds), gib(p.PeakRSSBytes), sec(p.OursSeconds), p.Ratio, p.MaxSine, secList(p.Runs), secList(p.OursRuns))
		}
	} else if sl.PeersNote != "" {
		w("\n%s.\n", sl.PeersNote)
	}
	gens := 0
	for _, r := range sg.Runs {
		gens = max(gens, r.Generations)
	}
	reps := ""
	for _, r := range sg.Runs {
		if len(r.FitRuns) > 1 {
			reps = fmt.Sprintf("; each row the median (by generation-to-fit ratio) of %d runs, every run a separate child process", len(r.FitRuns))
		}
	}
	w("\nGenerative sweep (%d generations after the fit; \"one more generation\" is their mean, the wall time of Generate, as the fit's is the wall time of Fit: no file writing%s) started %s, load average at start %s, at end %s:\n\n", gens, reps, sg.Started.Format(time.RFC3339), sg.LoadStart, sg.LoadEnd)
	scalingTable(&b, sg.Runs)
	first := true
	for _, r := range sg.Runs {
		if len(r.GenStages) == 0 {
			continue
		}
		if first {
			w("\nWhere the extra generation's time goes (seconds, means over the generations; \"draw\" = drawing the weights, \"other\" = the generation's time outside the named stages: copies and the rotation onto the base frame; the first generation also allocates the buffers the later ones reuse):\n\n| n | method | stages of one generation | first generation |\n|---:|---|---|---:|\n")
			first = false
		}
		var parts []string
		rest, hasOther := r.GenSeconds, false
		for _, st := range r.GenStages {
			parts = append(parts, fmt.Sprintf("%s %s", st.Name, sec(st.Seconds)))
			rest -= st.Seconds
			hasOther = hasOther || st.Name == "other"
		}
		if !hasOther { // reports from before the engine's "other" stage
			parts = append(parts, "rest "+sec(rest))
		}
		w("| %d | %s | %s | %s |\n", r.N, r.Method, strings.Join(parts, ", "), sec(r.GenFirst))
	}

	// ---- kernels
	w("\n## Per-point kernels and components (medians of make bench)\n\n")
	w("| benchmark | OpenBLAS ns/op | purego ns/op | points/s (OpenBLAS) | allocs/op | other metrics (OpenBLAS) |\n|---|---:|---:|---:|---:|---|\n")
	for _, n := range ob.order {
		m := ob.vals[n]
		pv := "-"
		if p, ok := pg.vals[n]["ns/op"]; ok {
			pv = fmt.Sprintf("%.4g", median(p))
		}
		pts := "-"
		if v, ok := m["points/s"]; ok {
			pts = si(median(v))
		}
		al := "-"
		if v, ok := m["allocs/op"]; ok {
			al = fmt.Sprintf("%.0f", median(v))
		}
		var other []string
		for _, u := range []string{"GFlop/s", "GFlop", "solves/op", "factorizations/op", "nnzL/row", "s/workflow", "generations/op", "normals/s"} {
			if v, ok := m[u]; ok {
				other = append(other, fmt.Sprintf("%.4g %s", median(v), u))
			}
		}
		w("| `%s` | %.4g | %s | %s | %s | %s |\n", strings.TrimPrefix(n, "Benchmark"), median(m["ns/op"]), pv, pts, al, strings.Join(other, ", "))
	}

	w("\n## OpenBLAS vs purego (benchstat)\n\n")
	w("`benchstat openblas=out/bench/openblas.txt purego=out/bench/purego.txt` (ratios > 0 %% mean the purego build is slower).\n")
	w("The two builds run one after the other on a shared machine, so a change of load between the halves shows up as a\n")
	w("difference even in code that is pure Go in both builds (kNN, assembly, per-point kernels): read the ± columns.\n")
	w("Load average (1, 5, 15 min) at the start and end of each half: OpenBLAS %s; purego %s.\n\n", loadFile(filepath.Join(in, "load_openblas.txt")), loadFile(filepath.Join(in, "load_purego.txt")))
	w("```\n%s```\n", string(bstat))

	w("\n## For context: quoted costs (not measured here)\n\n")
	w("Quoted from ../shared/reference-notes.md (measured earlier on a 2-core machine like this one, not in these runs).\n\n")
	b.WriteString(quotedSections(notes, "Authors' code: cost", "scikit-learn 1.2.1"))
	return b.String(), nil
}

// stageSeconds returns the seconds of the named stage of r (0 if absent).
func stageSeconds(r *run, name string) float64 {
	for _, s := range r.Stages {
		if s.Name == name {
			return s.Seconds
		}
	}
	return 0
}

// medianNote says how many runs a peer comparison's times are the medians of ("" for one).
// repeatNote lists a repeated run's ratios (glle-bench bench -repeat).
func repeatNote(r *run) string {
	if len(r.RatioRuns) < 2 {
		return ""
	}
	return fmt.Sprintf(" (the median of %d runs: %s)", len(r.RatioRuns), bench.PercentList(r.RatioRuns))
}

func medianNote(p *peer) string {
	if len(p.Runs) > 1 {
		return fmt.Sprintf(" (medians of %d interleaved runs each)", len(p.Runs))
	}
	return ""
}

// secList formats run times as "1.2, 1.3, 1.1" ("-" when there are none).
func secList(v []float64) string {
	if len(v) == 0 {
		return "-"
	}
	s := make([]string, len(v))
	for i, x := range v {
		s[i] = sec(x)
	}
	return strings.Join(s, ", ")
}
