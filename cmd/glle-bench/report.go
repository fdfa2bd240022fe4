package main

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"sync"
	"time"

	"glle/bench/dataio"
	"glle/engine"
	"glle/internal/procfs"
)

// progress reports a run's stages on stderr (unless -q). On a terminal it draws one live line:
// the current stage, its count (EM iteration, generation) and the elapsed time, redrawn in
// place with "\r" and cleared when the stage ends. Elsewhere (a log file, a pipe) it writes
// plain lines: one per finished stage, and the current stage's whenever plainEvery passes
// without a line, each with the run's elapsed time; the lines of a run's first plainAfter are held
// back and dropped if the run ends by then, so a short run prints only its summary, or its
// one-line error. It is silent when disabled (-q).
type progress struct {
	mu      sync.Mutex
	w       io.Writer
	on      bool
	plain   bool   // lines instead of the live line (stderr is not a terminal)
	prefix  string // e.g. the dataset of a figures run
	stage   string
	done    int
	total   int
	start   time.Time
	active  bool
	drawn   time.Time // last redraw (live), last line written (plain)
	stop    chan struct{}
	stopped sync.WaitGroup
	once    sync.Once
	// plain lines
	began        time.Time     // the run's start
	after, every time.Duration // plainAfter and plainEvery
	held         []string      // lines of the first plainAfter, not written yet
	released     bool          // the run has taken plainAfter: lines are written
}

// Plain progress lines (stderr not a terminal): the lines of a run's first plainAfter are
// held back, dropped if the run ends by then; the current stage gets a line whenever
// plainEvery passes without one.
const (
	plainAfter = 5 * time.Second
	plainEvery = time.Minute
)

var stageLabels = map[string]string{
	"knn":           "kNN graph",
	"weights":       "weights",
	"em":            "EM",
	"pattern":       "pattern",
	"assemble":      "assembly",
	"analyze":       "ordering+symbolic",
	"ordering":      "ordering",
	"symbolic":      "symbolic",
	"analysis wait": "analysis wait",
	"factor":        "factorization",
	"direct":        "direct-sampling factors",
	"restore":       "restore",
	"eigensolve":    "eigensolve",
	"generate":      "generation",
	"draw":          "weight draws",
	"other":         "other",
}

func stageLabel(s string) string {
	if l, ok := stageLabels[s]; ok {
		return l
	}
	if rest, ok := strings.CutPrefix(s, genStagePrefix); ok {
		if l, ok := stageLabels[rest]; ok {
			return genStagePrefix + l
		}
	}
	return s
}

// newRunProgress returns the progress of a command run in e: off with -q (quiet), the live
// line on a terminal, plain lines elsewhere.
func newRunProgress(e env, quiet bool) *progress {
	switch {
	case quiet:
		return newProgress(e.stderr, false)
	case e.tty:
		return newProgress(e.stderr, true)
	}
	return newPlainProgress(e.stderr, plainAfter, plainEvery)
}

// newProgress returns the live line on w (a terminal), or a silent progress when !on.
func newProgress(w io.Writer, on bool) *progress {
	p := &progress{w: w, on: on}
	if on {
		p.run()
	}
	return p
}

// newPlainProgress returns progress written to w as plain lines: held back for the run's
// first after, then one per finished stage, and the current stage's whenever every passes
// without a line.
func newPlainProgress(w io.Writer, after, every time.Duration) *progress {
	now := time.Now()
	p := &progress{w: w, on: true, plain: true, began: now, drawn: now, after: after, every: every}
	p.run()
	return p
}

// run starts the goroutine that redraws the live line, or writes the plain lines that are due.
func (p *progress) run() {
	p.stop = make(chan struct{})
	p.stopped.Add(1)
	go func() {
		defer p.stopped.Done()
		t := time.NewTicker(250 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-p.stop:
				return
			case <-t.C:
				p.mu.Lock()
				switch {
				case p.plain:
					p.tick()
				case p.active:
					p.draw()
				}
				p.mu.Unlock()
			}
		}
	}()
}

// close clears the line (live) or drops the held lines of a run shorter than plainAfter
// (plain), and stops the goroutine; it may be called more than once.
func (p *progress) close() {
	if !p.on {
		return
	}
	p.once.Do(func() {
		close(p.stop)
		p.stopped.Wait()
		p.mu.Lock()
		if p.plain {
			p.release() // a run that has taken plainAfter writes what is held
			p.held = nil
		} else if p.active {
			p.clear()
		}
		p.active = false
		p.mu.Unlock()
	})
}

func (p *progress) setPrefix(s string) {
	p.mu.Lock()
	p.prefix = s
	p.mu.Unlock()
}

// update records the state of a stage; final ends it.
func (p *progress) update(stage string, done, total int, final bool) {
	if !p.on {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.plain {
		if final {
			p.stage, p.done, p.total = stage, done, total
			p.line("done")
			p.active = false
			return
		}
		p.stage, p.done, p.total, p.active = stage, done, total, true
		return
	}
	if final {
		if p.active {
			p.clear()
		}
		p.active = false
		return
	}
	fresh := !p.active || stage != p.stage
	if fresh {
		p.start = time.Now()
	}
	p.stage, p.done, p.total, p.active = stage, done, total, true
	if fresh || time.Since(p.drawn) >= 100*time.Millisecond {
		p.draw() // fast counters (EM iterations) are redrawn at most 10 times a second
	}
}

// engineFunc adapts the progress to engine.Settings.Progress.
func (p *progress) engineFunc() func(engine.Progress) {
	if !p.on {
		return nil
	}
	return func(e engine.Progress) { p.update(e.Stage, e.Done, e.Total, e.Final) }
}

// state is the stage with its prefix and count: "fig 3: swissroll em: generation 2/4".
func (p *progress) state() string {
	var b strings.Builder
	if p.prefix != "" {
		b.WriteString(p.prefix + ": ")
	}
	b.WriteString(stageLabel(p.stage))
	if p.total > 0 {
		fmt.Fprintf(&b, " %d/%d", p.done, p.total)
	}
	return b.String()
}

func (p *progress) draw() {
	io.WriteString(p.w, fmt.Sprintf("\r\033[Kglle-bench: %s  %.1fs", p.state(), time.Since(p.start).Seconds()))
	p.drawn = time.Now()
}

func (p *progress) clear() { io.WriteString(p.w, "\r\033[K") }

// line writes (or holds back) the plain line of the current stage: "glle-bench: kNN graph
// done (3.2s elapsed)". A stage that finished before its count's total (EM converged early)
// says so: "EM done after 97 of at most 576".
func (p *progress) line(what string) {
	st := p.state()
	if what == "done" && p.total > 0 && p.done < p.total {
		t := p.total
		p.total = 0 // the state without its count
		st = fmt.Sprintf("%s done after %d of at most %d", p.state(), p.done, t)
		p.total, what = t, ""
	}
	l := fmt.Sprintf("glle-bench: %s (%.1fs elapsed)\n", strings.TrimSpace(st+" "+what), time.Since(p.began).Seconds())
	p.drawn = time.Now()
	if p.release(); !p.released {
		p.held = append(p.held, l)
		return
	}
	io.WriteString(p.w, l)
}

// release writes the held lines once the run has taken p.after.
func (p *progress) release() {
	if p.released || time.Since(p.began) < p.after {
		return
	}
	p.released = true
	for _, l := range p.held {
		io.WriteString(p.w, l)
	}
	p.held = nil
}

// tick writes the plain lines that are due: the held ones once the run has taken p.after,
// and the current stage's when p.every has passed without a line.
func (p *progress) tick() {
	p.release()
	if p.released && p.active && time.Since(p.drawn) >= p.every {
		p.line("running")
	}
}

// ---------------------------------------------------------------------------------------
// run summary

// genReport describes one generation.
type genReport struct {
	Generation int                `json:"generation"`
	Seed       uint64             `json:"seed"`
	CovScale   float64            `json:"cov_scale"`
	Frame      string             `json:"frame,omitempty"` // the basis the generation was drawn in: base or eigen (-frame; none for transform -base-only)
	Aligned    bool               `json:"aligned"`         // the file was then aligned onto the base embedding (-align: orthogonal Procrustes, rotation/reflection + translation)
	AlignScale bool               `json:"align_scale"`     // the alignment also fitted a uniform scale (-align-scale)
	File       string             `json:"file"`
	Seconds    float64            `json:"seconds"` // Generate's time (embed, generate: no analysis or writing; transform: with the new points' draws)
	Stages     []engine.StageTime `json:"stages,omitempty"`
	Eigen      engine.EigenReport `json:"eigen"`
}

// summary is what a run prints on stderr at the end and writes with -json.
type summary struct {
	Command string `json:"command"`
	Method  string `json:"method,omitempty"`
	Input   string `json:"input,omitempty"`
	N       int    `json:"n"`
	Model   string `json:"model,omitempty"`   // transform: the model folder (Input holds the new points)
	ModelN  int    `json:"model_n,omitempty"` // transform: the model's training points (N is the new points)
	D       int    `json:"d"`
	K       int    `json:"k,omitempty"`
	P       int    `json:"p,omitempty"`
	Backend string `json:"backend,omitempty"`
	// BackendConfig is cgo.Config(): OpenBLAS's build and the kernel set it runs (the
	// engine may replace OpenBLAS's own CPU choice), or the pure-Go build.
	BackendConfig string             `json:"backend_config,omitempty"`
	Workers       int                `json:"workers,omitempty"`
	Solver        string             `json:"solver,omitempty"`
	Settings      map[string]any     `json:"settings,omitempty"`
	Stages        []engine.StageTime `json:"stages"` // fit stages, then the generations' stages summed
	Fit           *engine.Report     `json:"fit,omitempty"`
	SigmaNote     string             `json:"sigma_non_positive_sampling,omitempty"`
	Generations   []genReport        `json:"generations,omitempty"`
	Metrics       *metricsReport     `json:"metrics,omitempty"`     // -metrics (analysis.go)
	Uncertainty   *uncertaintyReport `json:"uncertainty,omitempty"` // -uncertainty (analysis.go)
	WallSeconds   float64            `json:"wall_seconds"`
	PeakRSSBytes  int64              `json:"peak_rss_bytes,omitempty"`
	Outputs       []string           `json:"outputs"`
	// Removed lists the files the run removed: those of the model an embed -model replaced
	// that the new model does not have (sigma.npy of an em model re-saved as lle, say).
	Removed []string `json:"removed,omitempty"`
	// Stale lists files beside the outputs with this run's names (STEM_gen003.npy, ...) that
	// an earlier run wrote and this one did not replace.
	Stale []string `json:"stale_outputs,omitempty"`
	// Notes says what the outputs leave out: -plot draws at most maxPlotGenerations
	// generations.
	Notes []string `json:"notes,omitempty"`
	// Orphans notes what a killed earlier run had left in the output folders: staged files
	// removed, and backup files of a commit it did not finish (kept).
	Orphans []string `json:"orphan_notes,omitempty"`
}

// sigmaNote says how points with sigma_i <= 0 are sampled.
func sigmaNote(method engine.Method, st *engine.SigmaStats) string {
	if st == nil || st.NonPositive == 0 {
		return ""
	}
	if st.SampledAsAbs {
		return "sampled with |sigma_i| (as the authors' code does)"
	}
	if method == engine.EM {
		return "sigma_i = 0 (zero neighbourhood geometry): these points keep their mean weights"
	}
	return "not sampled (zero variance)"
}

// genStagePrefix prefixes the summed generation stages in a summary's stage list.
const genStagePrefix = "generations "

// stageTotals sums stage times by name, keeping the order in which the names first appear
// and whether each stage ran in the background.
type stageTotals struct {
	order []string
	sec   map[string]float64
	bg    map[string]bool
}

// add sums the stages st in under their names prefixed with prefix.
func (t *stageTotals) add(st []engine.StageTime, prefix string) {
	if t.sec == nil {
		t.sec, t.bg = map[string]float64{}, map[string]bool{}
	}
	for _, s := range st {
		name := prefix + s.Name
		if _, ok := t.sec[name]; !ok {
			t.order = append(t.order, name)
		}
		t.sec[name] += s.Seconds
		t.bg[name] = s.Background
	}
}

// list returns the sums in order.
func (t *stageTotals) list() []engine.StageTime {
	out := make([]engine.StageTime, 0, len(t.order))
	for _, name := range t.order {
		out = append(out, engine.StageTime{Name: name, Seconds: t.sec[name], Background: t.bg[name]})
	}
	return out
}

// addGenStages appends the generation stages to s.Stages, summed per name, prefixed
// genStagePrefix.
func (s *summary) addGenStages() {
	var t stageTotals
	for _, g := range s.Generations {
		t.add(g.Stages, genStagePrefix)
	}
	s.Stages = append(s.Stages, t.list()...)
}

// write prints the human summary.
func (s *summary) write(w io.Writer) {
	var b strings.Builder
	fmt.Fprintf(&b, "glle-bench %s", s.Command)
	if s.Method != "" {
		fmt.Fprintf(&b, " %s", s.Method)
	}
	if s.ModelN > 0 {
		fmt.Fprintf(&b, ": %d new points of d=%d (model of n=%d)", s.N, s.D, s.ModelN)
	} else {
		fmt.Fprintf(&b, ": n=%d d=%d", s.N, s.D)
	}
	if s.K > 0 {
		fmt.Fprintf(&b, " k=%d p=%d", s.K, s.P)
	}
	if s.Backend != "" {
		fmt.Fprintf(&b, " backend=%s workers=%d solver=%s", s.Backend, s.Workers, s.Solver)
	}
	fmt.Fprintf(&b, "  %.2fs", s.WallSeconds)
	if s.PeakRSSBytes > 0 {
		// MiB, as the bench tables and the -max-mem messages (it said MB for the same
		// 2^20-byte unit).
		fmt.Fprintf(&b, ", peak RSS %.1f MiB", float64(s.PeakRSSBytes)/(1<<20))
	}
	b.WriteString("\n")
	if s.BackendConfig != "" {
		fmt.Fprintf(&b, "  backend: %s\n", s.BackendConfig)
	}
	if len(s.Stages) > 0 {
		b.WriteString("  stages:")
		for i, st := range s.Stages {
			if i > 0 {
				b.WriteString(",")
			}
			fmt.Fprintf(&b, " %s %.3fs", stageLabel(st.Name), st.Seconds)
			if st.Background {
				b.WriteString(" (background)")
			}
		}
		b.WriteString("\n")
	}
	if r := s.Fit; r != nil {
		if r.Sigma != nil {
			conv := ""
			if s.Method == "em" {
				conv = map[bool]string{true: " (converged)", false: " (not converged)"}[r.EMConverged]
			}
			fmt.Fprintf(&b, "  EM: %d iterations%s; sigma min %.4g median %.4g max %.4g; %d with sigma <= 0",
				r.EMIterations, conv, r.Sigma.Min, r.Sigma.Median, r.Sigma.Max, r.Sigma.NonPositive)
			if s.SigmaNote != "" {
				fmt.Fprintf(&b, ", %s", s.SigmaNote)
			}
			b.WriteString("\n")
		}
		fmt.Fprintf(&b, "  regularized points %d, fallback points %d", r.RegularizedPoints, r.FallbackPoints)
		if r.FallbackPoints > 0 {
			// What the count means (a user trial: "fallback points 3000" said nothing).
			b.WriteString(" (em: the neighbours span the point's whole sum-to-one plane, d >= k - 1 locally, so the weights are drawn in the fibre of the local dim-dimensional PCA instead; a larger -k keeps the fibre)")
		}
		if r.NoiseFreePoints > 0 {
			fmt.Fprintf(&b, ", noise-free points %d (em-paper: X_i has full rank k, d >= k locally, so the posterior covariance sigma_i (I - V V^T) is zero and their sampled weights equal the mean; em or direct sample there)", r.NoiseFreePoints)
		}
		if r.DuplicatePoints > 0 {
			fmt.Fprintf(&b, ", duplicate points %d (with a coincident neighbour)", r.DuplicatePoints)
		}
		if r.SX2Log10 != 0 {
			fmt.Fprintf(&b, ", s_x^2 10^%.4g, s_y^2 %.4g", r.SX2Log10, r.SY2)
		} else if r.SX2 != 0 || r.SY2 != 0 {
			fmt.Fprintf(&b, ", s_x^2 %.4g, s_y^2 %.4g", r.SX2, r.SY2)
		}
		b.WriteString("\n")
		writeEigen(&b, "eigen", r.Eigen)
	}
	if len(s.Generations) > 0 && s.Generations[0].Eigen.Solver == "" {
		// transform -base-only: the new points' weights are drawn, no embedding is solved.
		fmt.Fprintf(&b, "  generations: %d (seed %d, a=%g), new points' weights drawn on the base embedding\n",
			len(s.Generations), s.Generations[0].Seed, s.Generations[0].CovScale)
	} else if len(s.Generations) > 0 {
		it, mx, res := 0, 0, 0.0
		for _, g := range s.Generations {
			it += g.Eigen.Iterations
			mx = max(mx, g.Eigen.Iterations)
			res = math.Max(res, g.Eigen.MaxResidual)
		}
		fmt.Fprintf(&b, "  generations: %d (seed %d, a=%g), solver %s mean %.1f max %d, max residual %.2g\n",
			len(s.Generations), s.Generations[0].Seed, s.Generations[0].CovScale, iterationName(s.Generations[0].Eigen),
			float64(it)/float64(len(s.Generations)), mx, res)
	}
	if s.Metrics != nil {
		s.Metrics.write(&b)
	}
	if s.Uncertainty != nil {
		s.Uncertainty.write(&b)
	}
	if len(s.Outputs) > 0 {
		fmt.Fprintf(&b, "  wrote: %s\n", strings.Join(s.Outputs, ", "))
	}
	if len(s.Removed) > 0 {
		fmt.Fprintf(&b, "  removed (the replaced model's, which this one does not have): %s\n", strings.Join(s.Removed, ", "))
	}
	for _, o := range s.Notes {
		fmt.Fprintf(&b, "  note: %s\n", o)
	}
	for _, o := range s.Orphans {
		fmt.Fprintf(&b, "  note: %s\n", o)
	}
	if len(s.Stale) > 0 {
		fmt.Fprintf(&b, "  note: %d file(s) beside these outputs are from an earlier run, not this one: %s\n", len(s.Stale), strings.Join(s.Stale, ", "))
	}
	io.WriteString(w, b.String())
}

// iterationName names what EigenReport.Iterations counts for the solver that ran.
func iterationName(e engine.EigenReport) string {
	if e.Solver == "sparse" {
		return "Lanczos restarts"
	}
	return "block iterations"
}

func writeEigen(b *strings.Builder, label string, e engine.EigenReport) {
	vals := make([]string, len(e.Values))
	for i, v := range e.Values {
		vals[i] = strconv.FormatFloat(v, 'g', 4, 64)
	}
	fmt.Fprintf(b, "  %s: solver %s, eigenvalues [%s], %s %d, operator applies %d, max residual %.2g",
		label, e.Solver, strings.Join(vals, " "), iterationName(e), e.Iterations, e.OpApplies, e.MaxResidual)
	switch {
	case e.Factorization == "lu":
		fmt.Fprintf(b, ", LU of B = I - W: nnz(B + B^T) %d, nnz(L) + nnz(U) %d", e.NNZB, e.NNZL)
	case e.NNZM > 0:
		fmt.Fprintf(b, ", Cholesky of M - sigma I: nnz(M) %d, nnz(L) %d", e.NNZM, e.NNZL)
	}
	if e.LUFallback != "" {
		fmt.Fprintf(b, " (LU of B abandoned: %s)", e.LUFallback)
	}
	if e.DenseFallback != "" {
		fmt.Fprintf(b, " (the sparse solver was abandoned for the dense one: %s)", e.DenseFallback)
	}
	b.WriteString("\n")
}

// writeJSON writes the summary atomically to path.
func (s *summary) writeJSON(path string) error {
	data, err := json.MarshalIndent(jsonSafe(s), "", "  ")
	if err != nil {
		return fmt.Errorf("encoding the JSON report: %w", err)
	}
	data = append(data, '\n')
	return dataio.AtomicWrite(path, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}

// jsonSafe returns s with non-finite floats of the engine reports replaced (JSON has no NaN):
// the summary itself only holds finite values, the reports may hold a NaN residual.
func jsonSafe(s *summary) *summary {
	c := *s
	fix := func(e *engine.EigenReport) {
		if !finite(e.MaxResidual) {
			e.MaxResidual = -1
		}
		if !finite(e.Shift) {
			e.Shift = 0
		}
		if !finite(e.Flops) {
			e.Flops = 0
		}
		vals := append([]float64(nil), e.Values...)
		for i, v := range vals {
			if !finite(v) {
				vals[i] = -1
			}
		}
		e.Values = vals
	}
	if s.Fit != nil {
		f := *s.Fit
		fix(&f.Eigen)
		c.Fit = &f
	}
	c.Generations = append([]genReport(nil), s.Generations...)
	for i := range c.Generations {
		fix(&c.Generations[i].Eigen)
	}
	return &c
}

// peakRSS returns the peak resident set size (VmHWM) in bytes, or 0 when unknown.
func peakRSS() int64 { return procfs.FileSize("/proc/self/status", "VmHWM:") }
