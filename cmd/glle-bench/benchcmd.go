package main

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"gonum.org/v1/gonum/mat"

	"glle/bench"
	"glle/bench/dataio"
	"glle/cgo"
	"glle/engine"
	"glle/parallel"
)

// The bench command: the end-to-end scaling sweep. Every (size, method) runs in a child process
// (this binary re-executed as 'embed -dataset swissroll -n N -method M -generations G -json R -q')
// so its peak RSS is its own; the parent reads the child's JSON report and prints one markdown
// table. With -peers it also runs scikit-learn's LocallyLinearEmbedding (arpack) on the same
// data in a python3 child process, when scikit-learn is installed.

const benchSynopsis = "glle-bench bench [-sizes 5000,50000,200000,1000000] [-methods lle,em,direct] [-peers] [-generations 1] [-repeat 1] [-json out.json]"

type benchConfig struct {
	sizes       []int
	methods     []engine.Method
	peers       bool
	generations int
	jsonPath    string
	dataset     string
	seed        uint64
	workers     int
	python      string
	peerMax     int
	peerRepeat  int
	repeat      int
	keep        string // folder for the children's outputs (default: a temporary folder)
}

type benchRaw struct{ sizes, methods string }

func benchFlags(c *benchConfig, r *benchRaw) *flags {
	f := newFlags("bench")
	f.str(&r.sizes, "sizes", "5000,50000,200000,1000000", "N,N,...", "dataset sizes of the sweep, each given once (-repeat runs each several times)")
	f.str(&r.methods, "methods", "lle,em,direct", "M,M,...", "methods of the sweep, each given once (lle, em, direct, em-paper; direct-paper needs a ridge the sweep does not pass)")
	f.boolean(&c.peers, "peers", "also run scikit-learn's LocallyLinearEmbedding (arpack) on the same data, if python3 has it")
	f.int(&c.generations, "generations", 1, "generations drawn after each generative fit (timed separately)")
	f.str(&c.jsonPath, "json", "", "OUT.json", "write every run's numbers as JSON")
	f.str(&c.dataset, "dataset", "swissroll", "NAME", "dataset: "+strings.Join(bench.DatasetNames(), ", "))
	f.u64(&c.seed, "seed", 1, "seed of the dataset and the generations")
	f.int(&c.workers, "workers", 0, "worker goroutines of each run (0: all CPUs)")
	f.str(&c.python, "python", "", "CMD", "python interpreter of -peers", "the first of "+strings.Join(peerPythons, ", ")+" that imports sklearn")
	f.int(&c.peerMax, "peer-max", 200000, "largest size scikit-learn runs at with -peers (it needs ~410 s and 10.5 GiB at n = 1M)")
	f.int(&c.peerRepeat, "peer-repeat", 1, "with -peers, run scikit-learn and our LLE fit this many times each, interleaved, at every size, and report the medians (1: one scikit-learn run against the sweep's own LLE run)")
	f.int(&c.repeat, "repeat", 1, "run every (size, method) this many times, one child process after the other, and report the median run (generative methods: median generation-to-fit ratio; lle: median fit time) with every run's fit time and ratio")
	f.str(&c.keep, "keep", "", "DIR", "keep the runs' embeddings and reports in DIR", "a temporary folder, removed")
	return f
}

func parseBench(args []string) (benchConfig, error) {
	var c benchConfig
	var r benchRaw
	f := benchFlags(&c, &r)
	set, err := f.parse("bench", args)
	if err != nil {
		return c, err
	}
	for _, s := range strings.Split(r.sizes, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n < 20 || n > math.MaxInt32 {
			return c, badInput("give a comma list of sizes from 20 to 2147483647, e.g. -sizes 5000,50000", "-sizes %q", clip(r.sizes))
		}
		// A size given twice ran twice, and with -keep the second run replaced the first's
		// files: -repeat is the way to run a size again.
		if slices.Contains(c.sizes, n) {
			return c, badInput("give every size once (-repeat R runs each one R times)", "-sizes %q lists %d twice", clip(r.sizes), n)
		}
		c.sizes = append(c.sizes, n)
	}
	for _, s := range strings.Split(r.methods, ",") {
		m, err := parseMethod(strings.TrimSpace(s))
		if err != nil {
			return c, err
		}
		if m == engine.DirectPaper {
			// Its X_i^T X_i + Y_i^T Y_i is singular on these datasets without a ridge.
			return c, badInput("time it with 'glle-bench embed -method direct-paper -direct-ridge R'", "-methods direct-paper: it needs an explicit ridge, which the sweep does not pass")
		}
		if slices.Contains(c.methods, m) {
			return c, badInput("give every method once (-repeat R runs each one R times)", "-methods %q lists %s twice", clip(r.methods), m)
		}
		c.methods = append(c.methods, m)
	}
	switch {
	case c.generations < 0:
		return c, badInput("use -generations 0 or more", "-generations %d: negative count", c.generations)
	case c.workers < 0 || c.workers > parallel.MaxWorkers:
		return c, badInput("use 0 (all CPUs) or a count from 1 to 1024", "-workers %d: out of range", c.workers)
	case c.peerMax < 0:
		return c, badInput("use -peer-max 0 or more", "-peer-max %d: negative size", c.peerMax)
	case c.peerRepeat < 1:
		return c, badInput("use -peer-repeat 1 or more", "-peer-repeat %d: need at least one run", c.peerRepeat)
	case c.repeat < 1:
		return c, badInput("use -repeat 1 or more", "-repeat %d: need at least one run", c.repeat)
	case set["peer-repeat"] && !c.peers:
		return c, badInput("add -peers", "-peer-repeat applies to the scikit-learn runs of -peers")
	case set["python"] && !c.peers:
		return c, badInput("add -peers", "-python names the interpreter of the scikit-learn runs of -peers")
	case set["peer-max"] && !c.peers:
		return c, badInput("add -peers", "-peer-max applies to the scikit-learn runs of -peers")
	case set["python"] && c.python == "":
		return c, badInput("name an interpreter, e.g. -python python3, or drop the flag", "-python is empty")
	}
	if err := checkDataset(c.dataset); err != nil {
		return c, err
	}
	if err := checkJSONName(c.jsonPath); err != nil {
		return c, err
	}
	// The runs use k = 10 neighbours; the datasets with holes keep only part of their points,
	// so a small size can leave too few (found here, not as a failed child run).
	for _, n := range c.sizes {
		if n >= 1000 {
			continue
		}
		if X, _, err := bench.Dataset(c.dataset, n, c.seed); err != nil || X.RawMatrix().Rows <= 10 {
			return c, badInput("use larger -sizes", "-sizes %d: dataset %s keeps too few points at that size for k = 10 neighbours", n, c.dataset)
		}
	}
	// A size no run can fit (memory, index range) is refused here, not reported as a failed
	// child run in the table with exit 1 (before session 32).
	for _, n := range c.sizes {
		if err := checkDatasetMemory("-sizes", n, "use smaller -sizes"); err != nil {
			return c, err
		}
		for _, m := range c.methods {
			if err := engine.CheckFit(n, 3, engine.Settings{Method: m, Workers: c.workers}); err != nil {
				msg := oneLine(err.Error())
				if i := strings.Index(msg, ": raise the limit"); i >= 0 {
					msg = msg[:i] // the sweep has no -max-mem: the fix is the size
				}
				return c, badInput("use smaller -sizes", "-sizes %d, method %s: %s", n, m, msg)
			}
		}
	}
	return c, nil
}

// benchRun is one (size, method) run of the sweep.
type benchRun struct {
	N            int                `json:"n"`
	Method       string             `json:"method"`
	Backend      string             `json:"backend"`
	Workers      int                `json:"workers"`
	Stages       []engine.StageTime `json:"stages"` // fit stages
	FitSeconds   float64            `json:"fit_seconds"`
	WallSeconds  float64            `json:"wall_seconds"` // the child process, data generation and writes included
	Generations  int                `json:"generations"`
	GenSeconds   float64            `json:"generation_seconds,omitempty"`       // mean per generation
	GenFirst     float64            `json:"first_generation_seconds,omitempty"` // the first one (one-time buffers included)
	GenRatio     float64            `json:"generation_to_fit,omitempty"`
	PeakRSSBytes int64              `json:"peak_rss_bytes"`
	NNZLPerRow   float64            `json:"nnz_l_per_row"`
	Solves       int                `json:"solves"`
	GenSolves    float64            `json:"generation_solves,omitempty"` // mean per generation
	GenStages    []engine.StageTime `json:"generation_stages,omitempty"` // mean per generation
	Error        string             `json:"error,omitempty"`
	// With -repeat: every run's fit seconds and generation-to-fit ratio, in run order; this
	// run is the median one.
	FitRuns   []float64 `json:"fit_runs,omitempty"`
	RatioRuns []float64 `json:"generation_to_fit_runs,omitempty"`

	tag string // the suffix of the run's files (embedFile)
}

// peerRun is one scikit-learn run.
type peerRun struct {
	N            int       `json:"n"`
	Seconds      float64   `json:"seconds"` // median of Runs
	Runs         []float64 `json:"runs,omitempty"`
	PeakRSSBytes int64     `json:"peak_rss_bytes"`         // largest of the runs
	OursSeconds  float64   `json:"ours_seconds,omitempty"` // our LLE fit on the same data: median of OursRuns
	OursRuns     []float64 `json:"ours_runs,omitempty"`
	Ratio        float64   `json:"ours_over_theirs,omitempty"` // OursSeconds / Seconds
	MaxSine      float64   `json:"max_principal_angle_sine"`
	Error        string    `json:"error,omitempty"`
}

// benchReport is what -json writes.
type benchReport struct {
	Command   string `json:"command"`
	Dataset   string `json:"dataset"`
	Seed      uint64 `json:"seed"`
	GoVersion string `json:"go_version"`
	// BackendConfig is cgo.Config() of this binary (the runs' backend).
	BackendConfig string     `json:"backend_config"`
	CPUs          int        `json:"cpus"`
	LoadStart     string     `json:"loadavg_start"`
	LoadEnd       string     `json:"loadavg_end"`
	Started       time.Time  `json:"started"`
	Runs          []benchRun `json:"runs"`
	Peers         []peerRun  `json:"peers,omitempty"`
	PeersNote     string     `json:"peers_note,omitempty"`
}

// runBenchCommand is the entry point of 'glle-bench bench' (dispatched from run).
func runBenchCommand(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	c, err := parseBench(args)
	if errors.Is(err, errHelp) {
		var r benchRaw
		benchFlags(&benchConfig{}, &r).usage(stdout, benchSynopsis,
			"Runs the end-to-end scaling sweep, each (size, method) in a child process ('embed -dataset ... -q')\n"+
				"so peak RSS is per run, and prints a markdown table: per-stage seconds, fit total, generation time\n"+
				"and its ratio to the fit, peak RSS, nnz(L)/row and linear solves. -peers adds scikit-learn.\n"+
				"Every finished run prints one line on stderr (size, method, fit and generation seconds).")
		return exitOK
	}
	if err == nil {
		err = func() (err error) {
			// A panic (a bug) becomes a one-line error; the report is only ever renamed into
			// place whole, so nothing half-written is left.
			defer func() {
				if p := recover(); p != nil {
					err = fmt.Errorf("internal error (a bug: please report it with the command line): %v", panicValue(p))
				}
			}()
			return runBench(ctx, env{stdout: &stdoutWriter{w: stdout}, stderr: stderr}, c)
		}()
	}
	if err != nil {
		return fail(stderr, ctx, err)
	}
	return exitOK
}

func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ")
}

// Grace periods of an interrupted child run before it is killed: ours stops at its next
// check and removes what it staged; scikit-learn has nothing to clean up (the parent removes
// its .part file) and may sit in compiled code that only sees the signal when it returns.
const (
	childGrace = 20 * time.Second
	peerGrace  = 2 * time.Second
)

// childCommand is exec.CommandContext for the sweep's child runs, except that cancelling ctx
// interrupts the child (SIGINT) instead of killing it, and kills it only if it has not exited
// grace later.
func childCommand(ctx context.Context, grace time.Duration, name string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Cancel = func() error { return cmd.Process.Signal(os.Interrupt) }
	cmd.WaitDelay = grace
	return cmd
}

func runBench(ctx context.Context, e env, c benchConfig) (retErr error) {
	if c.jsonPath != "" {
		// The rule first: a -keep folder that does not exist yet made checkWritable say
		// "create the folder first", after which this refused the -json.
		if c.keep != "" && samePath(fileDir(c.jsonPath), c.keep) {
			return badInput("put the report outside the -keep folder", "-json %q is inside -keep %q, where the runs write their own reports", clip(c.jsonPath), clip(c.keep))
		}
		if err := checkWritable("json", c.jsonPath); err != nil {
			return err
		}
	}
	self, err := os.Executable()
	if err != nil {
		return fmt.Errorf("cannot find this binary to re-execute it: %w", err)
	}
	dir := c.keep
	if dir == "" {
		if dir, err = os.MkdirTemp("", "glle-bench-sweep"); err != nil {
			return badInput("set TMPDIR to a writable folder, or keep the runs in one with -keep DIR", "cannot create the sweep's scratch folder (%v)", unwrapPath(err))
		}
		stageTree(dir, true) // a forced exit removes it too
		defer func() {
			os.RemoveAll(dir)
			stageTree(dir, false)
		}()
	} else {
		// The runs write their files straight into -keep (not staged): a folder that already
		// holds files would see them replaced (an earlier sweep's, or the user's; they were
		// overwritten silently before session 32).
		if ents, err := os.ReadDir(dir); err == nil && len(ents) > 0 {
			return badInput("use a new or empty folder for -keep", "-keep %q is not empty (it holds %s, ...): the runs would overwrite files of the same names", clip(c.keep), clip(ents[0].Name()))
		}
		created, err := mkdirTracked(dir)
		if err != nil {
			removeCreated(created)
			return folderError("keep", dir, err)
		}
		if len(created) > 0 {
			defer func() {
				if retErr != nil { // a failed or interrupted sweep leaves no empty folder behind
					removeCreated(created)
				}
			}()
		}
		// The children's paths are built by joining names to dir, which also cleans it
		// lexically (l/../k becomes k, whatever the link l points to): use the folder the
		// kernel made.
		if dir, err = filepath.EvalSymlinks(dir); err != nil {
			return fmt.Errorf("-keep %q: %w", clip(c.keep), err)
		}
	}
	if c.peers && c.python != "" {
		if ok, why := havePeer(ctx, c.python); !ok {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return badInput("install scikit-learn for that interpreter, or drop -python to try "+strings.Join(peerPythons, ", "), "-python %q cannot run scikit-learn (%s)", clip(c.python), why)
		}
	}
	rep := benchReport{Command: "bench", Dataset: c.dataset, Seed: c.seed, GoVersion: runtime.Version(), BackendConfig: cgo.Config(),
		CPUs: runtime.NumCPU(), LoadStart: loadAvg(), Started: time.Now().UTC()}
	fmt.Fprintf(e.stdout, "glle-bench bench: dataset %s, seed %d, %d CPUs, %s, load average at start %s\nbackend: %s\n\n",
		c.dataset, c.seed, rep.CPUs, rep.GoVersion, rep.LoadStart, rep.BackendConfig)
	out := e.stdout.(*stdoutWriter)
	if out.err != nil && c.jsonPath == "" && c.keep == "" {
		// Nothing would keep the sweep's results (bench | true).
		return out.closedErr("the sweep started, and there is no -json or -keep to keep its results: keep the reader open, or add -json")
	}

	// One line on stderr per finished run (a sweep's runs take up to minutes each, and the
	// table comes at the end); a failed run gets its error line below instead.
	sweepStart, runsDone, runsTotal, combos := time.Now(), 0, len(c.sizes)*len(c.methods)*c.repeat, 0
	onRun := func(r benchRun, rep int) {
		runsDone++
		if r.Error == "" {
			fmt.Fprintf(e.stderr, "glle-bench bench: %s (run %d of %d, %.1fs elapsed)\n", r.progressLine(rep, c.repeat), runsDone, runsTotal, time.Since(sweepStart).Seconds())
		}
	}
	for _, n := range c.sizes {
		for _, m := range c.methods {
			if err := ctx.Err(); err != nil {
				return err
			}
			r, err := benchRepeat(ctx, self, dir, c, n, m, onRun)
			if err != nil {
				return err
			}
			// A failed repetition skips the rest of this size and method: count them as done,
			// so that later lines' "run i of N" stay right.
			combos++
			runsDone = combos * c.repeat
			if r.Error != "" {
				fmt.Fprintf(e.stderr, "glle-bench bench: n=%d %s: %s\n", n, m, r.Error)
			}
			rep.Runs = append(rep.Runs, r)
		}
	}
	writeBenchTable(e.stdout, rep.Runs)

	if c.peers {
		if ok, why := c.findPeer(ctx); !ok {
			rep.PeersNote = "scikit-learn not available (" + why + "): peers skipped"
			fmt.Fprintf(e.stdout, "\n%s\n", rep.PeersNote)
		} else {
			fmt.Fprintf(e.stdout, "\nscikit-learn: %s\n", c.python)
			for _, n := range c.sizes {
				if err := ctx.Err(); err != nil {
					return err
				}
				if n > c.peerMax {
					fmt.Fprintf(e.stdout, "scikit-learn skipped at n = %d (> -peer-max %d)\n", n, c.peerMax)
					continue
				}
				p := runPeer(ctx, self, dir, c, n, rep.Runs)
				if ctx.Err() != nil {
					return ctx.Err()
				}
				if p.Error != "" {
					fmt.Fprintf(e.stderr, "glle-bench bench: scikit-learn n=%d: %s\n", n, p.Error)
				} else {
					fmt.Fprintf(e.stderr, "glle-bench bench: scikit-learn n=%d: %s s, our lle fit %s s (%.1fs elapsed)\n",
						n, fmtSec(p.Seconds), fmtSec(p.OursSeconds), time.Since(sweepStart).Seconds())
				}
				rep.Peers = append(rep.Peers, p)
			}
			if len(rep.Peers) > 0 {
				writePeerTable(e.stdout, rep.Peers)
			}
		}
	}
	rep.LoadEnd = loadAvg()
	fmt.Fprintf(e.stdout, "\nload average at end %s\n", rep.LoadEnd)
	if c.jsonPath != "" {
		data, err := json.MarshalIndent(&rep, "", "  ")
		if err != nil {
			return err
		}
		data = append(data, '\n')
		// Staged and committed as every command's outputs are, so that a -json that is a
		// device or a named pipe is written into, never replaced (the pipe was replaced by a
		// regular file before), and the wait for a pipe's reader stops with an interrupt.
		o := outputs{ctx: ctx, stderr: e.stderr}
		err = o.write("json", c.jsonPath, func(p string) error {
			return dataio.AtomicWrite(p, func(w io.Writer) error { _, err := w.Write(data); return err })
		})
		if err := o.done(err); err != nil {
			return err
		}
	}
	if out.err != nil {
		switch {
		case c.jsonPath != "":
			return out.closedErr("the tables were written; -json has the results")
		case c.keep != "":
			return out.closedErr("the tables were written; -keep has the runs' reports")
		}
		return out.closedErr("the tables were written, and there is no -json or -keep to keep them: keep the reader open until the sweep ends (head closes it after its lines), or add -json")
	}
	for _, r := range rep.Runs {
		if r.Error != "" {
			return fmt.Errorf("%d of the sweep's runs failed (see above)", countFailed(rep.Runs))
		}
	}
	return nil
}

// benchRepeat runs (n, m) c.repeat times (benchChild) and returns the median run (medianRun).
// A failed run is returned as such. onRun is called after every run that was not interrupted,
// with its repetition (0, 1, ...).
func benchRepeat(ctx context.Context, self, dir string, c benchConfig, n int, m engine.Method, onRun func(benchRun, int)) (benchRun, error) {
	if c.repeat <= 1 {
		r := runChild(ctx, self, dir, c, n, m, "")
		if ctx.Err() == nil {
			onRun(r, 0)
		}
		return r, ctx.Err()
	}
	var runs []benchRun
	for rep := 0; rep < c.repeat; rep++ {
		r := runChild(ctx, self, dir, c, n, m, fmt.Sprintf("_r%d", rep))
		if err := ctx.Err(); err != nil {
			return r, err
		}
		onRun(r, rep)
		if r.Error != "" {
			return r, nil
		}
		runs = append(runs, r)
	}
	return medianRun(runs), nil
}

// progressLine describes a finished run on the sweep's progress line: "n=5000 em: fit 1.23
// s, generation 0.456 s" (rep of repeats with -repeat).
func (r benchRun) progressLine(rep, repeats int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "n=%d %s", r.N, r.Method)
	if repeats > 1 {
		fmt.Fprintf(&b, " repeat %d/%d", rep+1, repeats)
	}
	fmt.Fprintf(&b, ": fit %s s", fmtSec(r.FitSeconds))
	if r.Generations > 0 {
		fmt.Fprintf(&b, ", generation %s s", fmtSec(r.GenSeconds))
	}
	return b.String()
}

// medianRun returns the median of runs: by generation-to-fit ratio when they drew generations,
// else by fit time (the lower middle one for an even count), with every run's fit time and
// ratio attached in run order.
func medianRun(runs []benchRun) benchRun {
	key := func(r benchRun) float64 {
		if r.Generations > 0 {
			return r.GenRatio
		}
		return r.FitSeconds
	}
	sorted := slices.Clone(runs)
	slices.SortStableFunc(sorted, func(a, b benchRun) int { return cmp.Compare(key(a), key(b)) })
	med := sorted[(len(sorted)-1)/2]
	med.FitRuns, med.RatioRuns = nil, nil
	for _, r := range runs {
		med.FitRuns = append(med.FitRuns, r.FitSeconds)
		if r.Generations > 0 {
			med.RatioRuns = append(med.RatioRuns, r.GenRatio)
		}
	}
	return med
}

func countFailed(rs []benchRun) int {
	c := 0
	for _, r := range rs {
		if r.Error != "" {
			c++
		}
	}
	return c
}

// embedFile is the base embedding file of run (n, method) in dir; tag tells repeated runs
// (the interleaved LLE fits of -peer-repeat) apart from the sweep's.
func embedFile(dir string, n int, m engine.Method, tag string) string {
	return filepath.Join(dir, fmt.Sprintf("Y_%s_%d%s.npy", m, n, tag))
}

// runChild runs one repetition of the sweep: benchChild, or a stand-in in tests (a child run
// that fails on demand).
var runChild = benchChild

// benchChild runs one fit (and its generations) in a child process and reads its report.
func benchChild(ctx context.Context, self, dir string, c benchConfig, n int, m engine.Method, tag string) benchRun {
	r := benchRun{N: n, Method: m.String(), tag: tag}
	gens := c.generations
	if !m.Generative() {
		gens = 0
	}
	jsonPath := filepath.Join(dir, fmt.Sprintf("report_%s_%d%s.json", m, n, tag))
	args := []string{"embed", "-dataset", c.dataset, "-n", strconv.Itoa(n), "-method", m.String(),
		"-generations", strconv.Itoa(gens), "-seed", strconv.FormatUint(c.seed, 10),
		"-workers", strconv.Itoa(c.workers), "-out", embedFile(dir, n, m, tag), "-json", jsonPath, "-q"}
	cmd := childCommand(ctx, childGrace, self, args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	t0 := time.Now()
	err := cmd.Run()
	r.WallSeconds = time.Since(t0).Seconds()
	if cmd.ProcessState != nil {
		if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
			r.PeakRSSBytes = ru.Maxrss * 1024 // Linux: kilobytes
		}
	}
	if err != nil {
		r.Error = fmt.Sprintf("%v: %s", err, oneLine(stderr.String()))
		return r
	}
	data, err := os.ReadFile(jsonPath)
	if err != nil {
		r.Error = err.Error()
		return r
	}
	var s summary
	if err := json.Unmarshal(data, &s); err != nil || s.Fit == nil {
		r.Error = fmt.Sprintf("unreadable report %s: %v", jsonPath, err)
		return r
	}
	r.Backend, r.Workers, r.Stages = s.Backend, s.Workers, s.Fit.Stages
	for _, st := range s.Fit.Stages {
		if !st.Background { // background stages overlap the foreground ones
			r.FitSeconds += st.Seconds
		}
	}
	if s.PeakRSSBytes > 0 {
		r.PeakRSSBytes = s.PeakRSSBytes
	}
	r.WallSeconds = s.WallSeconds
	r.NNZLPerRow = float64(s.Fit.Eigen.NNZL) / float64(s.N)
	r.Solves = s.Fit.Eigen.OpApplies
	r.Generations = len(s.Generations)
	if r.Generations > 0 {
		r.GenFirst = s.Generations[0].Seconds
		for _, g := range s.Generations {
			r.GenSeconds += g.Seconds
			r.GenSolves += float64(g.Eigen.OpApplies)
		}
		r.GenSeconds /= float64(r.Generations)
		r.GenSolves /= float64(r.Generations)
		for _, g := range s.Generations {
			for _, st := range g.Stages {
				i := slices.IndexFunc(r.GenStages, func(x engine.StageTime) bool { return x.Name == st.Name })
				if i < 0 {
					r.GenStages = append(r.GenStages, engine.StageTime{Name: st.Name})
					i = len(r.GenStages) - 1
				}
				r.GenStages[i].Seconds += st.Seconds / float64(r.Generations)
			}
		}
		if r.FitSeconds > 0 {
			r.GenRatio = r.GenSeconds / r.FitSeconds
		}
	}
	return r
}

// stageSum returns the seconds of the stage column with stage names names (ok = false when no
// stage belongs to it).
func stageSum(stages []engine.StageTime, names []string) (float64, bool) {
	return bench.StageSum(stages, names, func(st engine.StageTime) (string, float64) { return st.Name, st.Seconds })
}

func fmtSec(s float64) string {
	switch {
	case s >= 10:
		return fmt.Sprintf("%.1f", s)
	case s >= 0.1:
		return fmt.Sprintf("%.2f", s)
	}
	return fmt.Sprintf("%.3f", s)
}

func fmtBytes(b int64) string {
	if b <= 0 {
		return "-"
	}
	if b >= 1<<30 {
		return fmt.Sprintf("%.2f GiB", float64(b)/(1<<30))
	}
	return fmt.Sprintf("%.0f MiB", float64(b)/(1<<20))
}

// writeBenchTable prints the sweep as a markdown table (seconds unless stated).
func writeBenchTable(w io.Writer, runs []benchRun) {
	var b strings.Builder
	bench.WriteStageHeader(&b, "fit total", "generation", "gen/fit", "peak RSS", "nnz(L)/row", "solves (fit / gen)")
	for _, r := range runs {
		fmt.Fprintf(&b, "| %d | %s | %s |", r.N, r.Method, orDash(r.Backend))
		if r.Error != "" {
			for range bench.StageColumns {
				b.WriteString(" |")
			}
			fmt.Fprintf(&b, " failed: %s | | | | | |\n", strings.ReplaceAll(clip(r.Error), "|", "/"))
			continue
		}
		for _, c := range bench.StageColumns {
			if v, ok := stageSum(r.Stages, c.Names); ok {
				b.WriteString(" " + fmtSec(v) + " |")
			} else {
				b.WriteString(" - |")
			}
		}
		fmt.Fprintf(&b, " %s |", fmtSec(r.FitSeconds))
		if r.Generations > 0 {
			fmt.Fprintf(&b, " %s | %.0f%% |", fmtSec(r.GenSeconds), 100*r.GenRatio)
		} else {
			b.WriteString(" - | - |")
		}
		fmt.Fprintf(&b, " %s | %.0f | %d", fmtBytes(r.PeakRSSBytes), r.NNZLPerRow, r.Solves)
		if r.Generations > 0 {
			fmt.Fprintf(&b, " / %.0f", r.GenSolves)
		}
		b.WriteString(" |\n")
	}
	b.WriteString("\nordering and symbolic ran in the background beside weights, EM and the assembly of B = I - W (of M on the Cholesky path); the other stage columns add up to the fit total; nnz(L)/row counts L and U together for the LU of B.\n")
	for _, r := range runs {
		if len(r.FitRuns) > 1 {
			fmt.Fprintf(&b, "\nn = %d %s: %d runs, the median shown; fit %s s", r.N, r.Method, len(r.FitRuns), secList(r.FitRuns))
			if len(r.RatioRuns) > 0 {
				b.WriteString("; gen/fit " + bench.PercentList(r.RatioRuns))
			}
			b.WriteString("\n")
		}
	}
	io.WriteString(w, b.String())
}

// secList formats seconds as a comma list.
func secList(v []float64) string {
	s := make([]string, len(v))
	for i, x := range v {
		s[i] = fmtSec(x)
	}
	return strings.Join(s, ", ")
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func writePeerTable(w io.Writer, ps []peerRun) {
	var b strings.Builder
	b.WriteString("\nscikit-learn LocallyLinearEmbedding(n_neighbors=10, n_components=2, eigen_solver='arpack'), same data:\n\n")
	b.WriteString("| n | scikit-learn s | peak RSS | ours (lle fit) s | ours / theirs | max principal-angle sine |\n|---:|---:|---:|---:|---:|---:|\n")
	for _, p := range ps {
		if p.Error != "" {
			fmt.Fprintf(&b, "| %d | failed: %s | | | | |\n", p.N, strings.ReplaceAll(clip(p.Error), "|", "/"))
			continue
		}
		fmt.Fprintf(&b, "| %d | %s | %s | %s | %.3f | %.2g |\n", p.N, fmtSec(p.Seconds), fmtBytes(p.PeakRSSBytes),
			fmtSec(p.OursSeconds), p.Ratio, p.MaxSine)
	}
	io.WriteString(w, b.String())
}

// havePeer reports whether python can import scikit-learn.
// peerPythons are the interpreters -peers tries when -python is not given: the one on PATH,
// then the system one (Debian's python3-sklearn package installs scikit-learn 1.2.1 there,
// which a PATH python such as pyenv's does not see).
var peerPythons = []string{"python3", "/usr/bin/python3"}

// findPeer sets c.python to the interpreter -peers uses (the given one, else the first of
// peerPythons that imports sklearn) and reports whether scikit-learn is available.
func (c *benchConfig) findPeer(ctx context.Context) (bool, string) {
	if c.python != "" {
		return havePeer(ctx, c.python)
	}
	var whys []string
	for _, py := range peerPythons {
		ok, why := havePeer(ctx, py)
		if ok {
			c.python = py
			return true, ""
		}
		whys = append(whys, why)
	}
	return false, strings.Join(whys, "; ")
}

func havePeer(ctx context.Context, python string) (bool, string) {
	out, err := exec.CommandContext(ctx, python, "-c", "import sklearn").CombinedOutput()
	if err != nil {
		msg := strings.TrimSpace(string(out))
		if i := strings.LastIndexByte(msg, '\n'); i >= 0 {
			msg = msg[i+1:]
		}
		if msg == "" {
			msg = err.Error()
		}
		return false, fmt.Sprintf("%s -c \"import sklearn\": %s", python, oneLine(msg))
	}
	return true, ""
}

// peerScript fits scikit-learn's LLE to argv[1] (.npy), writes the embedding to argv[2] (through
// argv[2].part, renamed when complete) and prints {"seconds": ..., "peak_rss_bytes": ...,
// "shape": [n, 2]} (decodePeerOutput reads it).
const peerScript = `import json, os, resource, sys, time
import numpy as np
from sklearn.manifold import LocallyLinearEmbedding
X = np.load(sys.argv[1])
t0 = time.perf_counter()
Y = LocallyLinearEmbedding(n_neighbors=10, n_components=2, eigen_solver="arpack").fit_transform(X)
sec = time.perf_counter() - t0
with open(sys.argv[2] + ".part", "wb") as f:
    np.save(f, Y)
os.replace(sys.argv[2] + ".part", sys.argv[2])
print(json.dumps({"seconds": sec, "peak_rss_bytes": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024, "shape": list(Y.shape)}))
`

// peerDim is the embedding dimension of the scikit-learn run (n_components in peerScript).
const peerDim = 2

// Bounds of a believable scikit-learn run: a time or peak RSS beyond them is a broken
// interpreter or script (a unit mix-up, a wrapper printing something else), not a measurement.
const (
	maxPeerSeconds  = 1e6     // about 11.6 days
	maxPeerRSSBytes = 1 << 50 // 1 PiB
)

// peerOutput is one scikit-learn run as peerScript reports it.
type peerOutput struct {
	Seconds      float64 // the fit's wall time, in (0, maxPeerSeconds]
	PeakRSSBytes int64   // the interpreter's peak resident set size, in (0, maxPeerRSSBytes]
}

// decodePeerOutput decodes and checks what peerScript printed (out, its whole stdout) for a
// fit of n points: one JSON object whose keys (spelled exactly) "seconds" is a time in
// (0, maxPeerSeconds], "peak_rss_bytes" an integer in (0, maxPeerRSSBytes] and "shape" the
// embedding's [n, peerDim]; other keys are ignored, a missing or null one is refused. Errors are
// one line, the problem first (the peer table clips them), then the output.
func decodePeerOutput(out []byte, n int) (peerOutput, error) {
	text := bytes.Trim(out, " \t\r\n") // JSON's whitespace, for the message
	fail := func(format string, a ...any) (peerOutput, error) {
		return peerOutput{}, fmt.Errorf("%s; the scikit-learn script printed %q", fmt.Sprintf(format, a...), clip(string(text)))
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(out, &m); err != nil || m == nil {
		why := "not a JSON object"
		if err != nil {
			why = oneLine(err.Error())
		}
		return fail("unreadable scikit-learn output (%s)", why)
	}
	var miss []string
	for _, k := range []string{"seconds", "peak_rss_bytes", "shape"} {
		if v, ok := m[k]; !ok || string(v) == "null" {
			miss = append(miss, strconv.Quote(k))
		}
	}
	if len(miss) > 0 {
		return fail("scikit-learn output lacks %s", strings.Join(miss, ", "))
	}
	var (
		sec   float64
		rss   int64
		shape []int
	)
	if json.Unmarshal(m["seconds"], &sec) != nil || !(sec > 0 && sec <= maxPeerSeconds) {
		return fail("scikit-learn reported a fit time of %s s, not a number in (0, %g]", rawValue(m["seconds"]), float64(maxPeerSeconds))
	}
	if json.Unmarshal(m["peak_rss_bytes"], &rss) != nil || rss <= 0 || rss > maxPeerRSSBytes {
		return fail("scikit-learn reported a peak RSS of %s bytes, not an integer in (0, 1 PiB]", rawValue(m["peak_rss_bytes"]))
	}
	if json.Unmarshal(m["shape"], &shape) != nil || len(shape) != 2 || n < 1 || shape[0] != n || shape[1] != peerDim {
		return fail("scikit-learn reported an embedding of shape %s for %d points, want [%d, %d]", rawValue(m["shape"]), n, n, peerDim)
	}
	return peerOutput{Seconds: sec, PeakRSSBytes: rss}, nil
}

// rawValue is a JSON value for a one-line message: compacted (an array may span lines), clipped.
func rawValue(v json.RawMessage) string {
	var b bytes.Buffer
	if json.Compact(&b, v) != nil {
		return clip(oneLine(string(v)))
	}
	return clip(b.String())
}

// runPeer runs scikit-learn on the sweep's data of size n and compares with our LLE run of the
// same size (from runs, or a fresh child run when the sweep had no lle method).
func runPeer(ctx context.Context, self, dir string, c benchConfig, n int, runs []benchRun) peerRun {
	p := peerRun{N: n}
	X, _, err := makeDataset(c.dataset, n, c.seed)
	if err != nil {
		p.Error = err.Error()
		return p
	}
	xPath := filepath.Join(dir, fmt.Sprintf("X_%d.npy", n))
	yPath := filepath.Join(dir, fmt.Sprintf("Y_sklearn_%d.npy", n))
	if err := dataio.WriteMatrix(xPath, X); err != nil {
		p.Error = err.Error()
		return p
	}
	X = nil
	// One scikit-learn run, then (with -peer-repeat > 1) one of ours, repeated: the two
	// systems see the same machine state, and the medians damp its noise.
	tag := "" // the LLE run whose embedding is compared: the sweep's, or the last repeat
	for rep := 0; rep < c.peerRepeat; rep++ {
		if err := ctx.Err(); err != nil {
			p.Error = err.Error()
			return p
		}
		cmd := childCommand(ctx, peerGrace, c.python, "-c", peerScript, xPath, yPath)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			os.Remove(yPath + ".part") // the script's unfinished output, if it was stopped while writing
			p.Error = fmt.Sprintf("%v: %s", err, oneLine(lastLines(stderr.String(), 3)))
			return p
		}
		res, err := decodePeerOutput(out, n)
		if err != nil {
			p.Error = err.Error()
			return p
		}
		p.Runs = append(p.Runs, res.Seconds)
		p.PeakRSSBytes = max(p.PeakRSSBytes, res.PeakRSSBytes)
		var ours *benchRun
		if c.peerRepeat == 1 {
			for i := range runs {
				if runs[i].N == n && runs[i].Method == engine.LLE.String() && runs[i].Error == "" {
					ours = &runs[i]
					tag = ours.tag
				}
			}
		}
		if ours == nil {
			c1 := c
			c1.generations = 0
			tag = fmt.Sprintf("_peer%d", rep)
			r := runChild(ctx, self, dir, c1, n, engine.LLE, tag)
			if r.Error != "" {
				p.Error = "our lle run: " + r.Error
				return p
			}
			ours = &r
		}
		p.OursRuns = append(p.OursRuns, ours.FitSeconds)
	}
	p.Seconds, p.OursSeconds = medianOf(p.Runs), medianOf(p.OursRuns)
	if p.Seconds > 0 {
		p.Ratio = p.OursSeconds / p.Seconds
	}
	Ya, err := dataio.ReadMatrix(embedFile(dir, n, engine.LLE, tag))
	if err != nil {
		p.Error = err.Error()
		return p
	}
	Yb, err := dataio.ReadMatrix(yPath)
	if err != nil {
		p.Error = err.Error()
		return p
	}
	if ra, ca := Ya.Dims(); ra != n || ca > ra {
		p.Error = fmt.Sprintf("our lle run wrote a %d x %d embedding for %d points", ra, ca, n)
		return p
	}
	if rb, cb := Yb.Dims(); rb != n || cb != peerDim {
		p.Error = fmt.Sprintf("scikit-learn wrote a %d x %d embedding for %d points", rb, cb, n)
		return p
	}
	p.MaxSine = subspaceSine(Ya, Yb)
	return p
}

// subspaceSine is the largest principal-angle sine between the centred embeddings.
func subspaceSine(A, B *mat.Dense) float64 {
	return bench.MaxPrincipalAngleSine(bench.Centered(A), bench.Centered(B))
}

func lastLines(s string, k int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > k {
		lines = lines[len(lines)-k:]
	}
	return strings.Join(lines, "\n")
}
