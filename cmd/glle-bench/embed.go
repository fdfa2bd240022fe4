package main

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"time"

	"gonum.org/v1/gonum/mat"

	"glle/bench/dataio"
	"glle/cgo"
	"glle/engine"
)

func runEmbed(ctx context.Context, e env, c embedConfig) (err error) {
	start := time.Now()
	out := outputs{ctx: ctx, stderr: e.stderr}
	defer func() { err = out.finish(recover(), err) }()

	out.input(c.in, c.color)
	// Outputs first: a bad path must fail before any heavy work.
	pairs := append(genWritable(c.out, c.generations, c.analysis, c.plot != ""), [2]string{"json", c.jsonPath}, [2]string{"plot", c.plot})
	if err := checkAllWritable(pairs...); err != nil {
		return err
	}
	if c.model != "" {
		if err := checkModelFolder(c.model); err != nil {
			return err
		}
		if err := out.mkdir("model", c.model); err != nil {
			return err
		}
		for _, p := range modelFiles(c.model) {
			if err := checkWritable("model", p); err != nil {
				return err
			}
		}
	}

	// Input.
	var (
		X     *mat.Dense
		color []float64
		input string
	)
	tIn := time.Now()
	if c.dataset != "" {
		// Settings and memory limit first: the dataset must not exhaust memory before the
		// fit's own check runs.
		if err := engine.CheckFit(c.n, 3, c.settings); err != nil {
			return err
		}
		X, color, err = makeDataset(c.dataset, c.n, c.seed)
		input = c.dataset
	} else {
		X, err = readData(ctx, e.stderr, "in", c.in)
		input = c.in
	}
	if err != nil {
		return err
	}
	inStage := engine.StageTime{Name: "input", Seconds: time.Since(tIn).Seconds()}
	n, d := X.Dims()
	s := c.settings
	switch {
	case n < 2:
		return badInput("pass at least k+1 points (k = -k, default 10)", "the data has a single point: there is nothing to embed")
	case n <= s.K:
		return badInput("use a smaller -k or more points", "the data has n = %d points but -k is %d: need n > k", n, s.K)
	case d == 1:
		return badInput("pass data with at least 2 columns", "the data has a single column: it is one-dimensional already, there is no lower dimension to embed it in")
	case s.Dim >= d:
		return badInput("use a smaller -dim", "-dim %d but the data has only d = %d columns: need dim < d", s.Dim, d)
	}
	// Space for the outputs (a typo such as -generations 9999999999 filled the disk with
	// staged files before failing, session 32).
	need := genNeeds(c.out, true, c.generations, n, s.Dim, c.analysis)
	files := int64(1+c.generations) + int64(len(c.analysis.outputs(c.out, false)))
	if c.model != "" {
		k := s.Resolved().K // the default the fit will apply
		for _, f := range []struct {
			name       string
			rows, cols int
		}{{neighborsFile, n, k}, {weightsFile, n, k}, {sigmaFile, n, 1}, {embeddingFile, n, s.Dim}, {dataFile, n, d}} {
			need = append(need, matrixNeed(modelFile(c.model, f.name), f.rows, f.cols))
		}
		if s.Method == engine.Direct || s.Method == engine.DirectPaper {
			need = append(need, matrixNeed(modelFile(c.model, gammaFile), n, k*k))
		}
		files += 7
	}
	if err := checkSpace(need, files); err != nil {
		return err
	}
	if c.plot != "" {
		switch {
		case c.color != "":
			tc := time.Now()
			if color, err = readColor(ctx, e.stderr, c.color, n); err != nil {
				return err
			}
			inStage.Seconds += time.Since(tc).Seconds() // an input too

		case color == nil:
			color = column(X, 0)
		}
	}

	prog := newRunProgress(e, c.quiet)
	defer prog.close()
	s.Progress = prog.engineFunc()
	m, err := engine.Fit(ctx, X, s)
	if err != nil {
		return err
	}
	if err := out.write("out", c.out, func(p string) error { return dataio.WriteMatrix(p, m.Embedding) }); err != nil {
		return err
	}

	sum := summary{Command: "embed", Method: s.Method.String(), Input: input, N: n, D: d, K: m.K, P: m.Dim,
		Backend: m.Report.Backend, Workers: m.Report.Workers, Solver: solverName(s.Solver),
		Settings: settingsMap(m, s, c.seed), Fit: &m.Report, Stages: append([]engine.StageTime{inStage}, m.Report.Stages...)}
	var gs *genSettings // what the generation files hold besides the seed (nil: none are drawn)
	if c.generations > 0 {
		gs = c.analysis.genSettings(c.generations, c.covScale)
		gs.addTo(sum.Settings)
	}
	sum.SigmaNote = sigmaNote(m.Method, m.Report.Sigma)
	var coord []float64
	if c.dataset != "" && c.color == "" {
		coord = color // the manifold coordinate of the built-in dataset
	}
	an, err := newGenAnalysis(ctx, c.analysis, X, m, coord, prog)
	if err != nil {
		return err
	}

	var gens []*mat.Dense
	var buf mat.Dense // every generation is drawn into the same matrix
	for g := 0; g < c.generations; g++ {
		prog.update("generate", g, c.generations, false)
		t0 := time.Now()
		rep, err := m.GenerateTo(ctx, &buf, c.seed, g, c.covScale, c.analysis.frame)
		if err != nil {
			return err
		}
		secs := time.Since(t0).Seconds() // the generation's compute, like the fit's stages
		Y, err := an.generation(ctx, g, &buf)
		if err != nil {
			return err
		}
		path := genPath(c.out, g)
		if err := out.write("out", path, func(p string) error { return dataio.WriteMatrix(p, Y) }); err != nil {
			return err
		}
		gr := gs.genReport(g, c.seed)
		gr.File, gr.Seconds, gr.Stages, gr.Eigen = path, secs, rep.Stages, rep.Eigen
		sum.Generations = append(sum.Generations, gr)
		if c.plot != "" && len(gens) < maxPlotGenerations {
			gens = append(gens, mat.DenseCopyOf(Y)) // Y may be buf, which the next generation overwrites
		}
	}
	prog.update("generate", c.generations, c.generations, true)
	sum.addGenStages()
	if err := an.finish(ctx, &sum, c.out, c.plot != "", input, &out); err != nil {
		return err
	}

	if c.model != "" {
		if err := saveModel(ctx, c.model, m, s, c.seed, gs, &out); err != nil {
			return err
		}
	}
	if c.plot != "" {
		if err := ctx.Err(); err != nil {
			return err
		}
		// Drawing allocates about 1 KB of short-lived garbage per point; with the model
		// (its factor, weights and data) still reachable the collector let the heap grow
		// to twice that live size, doubling the run's peak RSS at large n. Only the
		// embeddings, the colours and the report are needed from here on.
		base, method, spread := m.Embedding, m.Method.String(), an.pendingPlot()
		fitReport := m.Report
		sum.Fit = &fitReport
		m, X, an = nil, nil, nil
		runtime.GC()
		if spread != nil {
			if err := spread.draw(ctx, &sum, prog, &out); err != nil {
				return err
			}
		}
		prog.update("plot", 0, 0, false)
		t0 := time.Now()
		err := out.writeOwn("plot", c.plot, func(p string) error {
			return plotEmbedding(ctx, p, input, method, base, gens, c.generations, c.covScale, color)
		})
		if note := plotNote(c.plot, c.generations); note != "" {
			sum.Notes = append(sum.Notes, note)
		}
		sum.Stages = append(sum.Stages, engine.StageTime{Name: "plot", Seconds: time.Since(t0).Seconds()})
		prog.update("plot", 0, 0, true)
		if err != nil {
			return err
		}
	}
	return finish(ctx, e, prog, &sum, start, c.jsonPath, c.quiet, &out)
}

// finish completes the summary, writes -json and prints the summary once the outputs are
// committed.
func finish(ctx context.Context, e env, prog *progress, sum *summary, start time.Time, jsonPath string, quiet bool, out *outputs) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if out.writing > 0 {
		sum.Stages = append(sum.Stages, engine.StageTime{Name: "write", Seconds: out.writing.Seconds()})
	}
	sum.BackendConfig = cgo.Config()
	sum.WallSeconds = time.Since(start).Seconds()
	sum.PeakRSSBytes = peakRSS()
	sum.Outputs = append([]string(nil), out.files...)
	sum.Removed = out.removing
	sum.Stale = staleOutputs(out.files)
	sum.Orphans = out.orphans
	if jsonPath != "" {
		sum.Outputs = append(sum.Outputs, jsonPath)
		if err := out.write("json", jsonPath, sum.writeJSON); err != nil {
			return err
		}
	}
	prog.close()
	if !quiet {
		out.onCommit(func() { sum.write(e.stderr) })
	}
	return nil
}

// genSuffix matches a generation file's suffix: _gen000, _gen001, ...
var genSuffix = regexp.MustCompile(`_gen[0-9]{3,}$`)

// staleOutputs lists the files beside the written ones that carry this run's names but were
// not written by it: generations, uncertainty and mean files of an earlier run into the same
// -out (STEM_gen002.npy after an earlier run drew more generations, say). They are left alone
// (they may be the user's), but a reader of STEM_gen*.npy should know they are not this run's.
func staleOutputs(written []string) []string {
	seen := map[string]bool{}
	for _, p := range written {
		seen[filepath.Clean(p)] = true
	}
	var stale []string
	stems := map[string]bool{}
	for _, p := range written {
		ext := filepath.Ext(p)
		stem := genSuffix.ReplaceAllString(strings.TrimSuffix(p, ext), "")
		key := stem + "\x00" + ext
		if ext == "" || ext == ".json" || ext == ".png" || stems[key] {
			continue
		}
		stems[key] = true
		globbed, _ := filepath.Glob(globEscape(stem) + "_gen[0-9][0-9][0-9]*" + globEscape(ext))
		var cands []string
		for _, c := range globbed { // exactly STEM_genNNN.EXT
			if g := strings.TrimSuffix(c, ext); genSuffix.MatchString(g) && genSuffix.ReplaceAllString(g, "") == stem {
				cands = append(cands, c)
			}
		}
		cands = append(cands, stem+"_uncertainty"+ext, stem+"_mean"+ext, stem+"_uncertainty.png")
		for _, c := range cands {
			if fi, err := os.Stat(c); err == nil && fi.Mode().IsRegular() && !seen[filepath.Clean(c)] {
				seen[filepath.Clean(c)] = true
				stale = append(stale, c)
			}
		}
	}
	slices.Sort(stale)
	return stale
}

// globEscape escapes the glob metacharacters of a literal path part.
func globEscape(s string) string {
	var b strings.Builder
	for _, r := range s {
		if strings.ContainsRune(`*?[\`, r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// settingsMap records the resolved settings of a fit for the report.
func settingsMap(m *engine.Model, s engine.Settings, seed uint64) map[string]any {
	r := s.Resolved() // the defaults the fit applied (em's iteration cap depends on k)
	mp := map[string]any{
		"method": m.Method.String(), "k": m.K, "dim": m.Dim, "reg": m.Reg, "reg_mode": regModeName(m.RegMode),
		"scaling": scalingName(m.Scaling), "direct_ridge": s.DirectRidge,
		"solver": solverName(s.Solver), "seed": seed, "workers": s.Workers,
	}
	// Only the settings the method reads: em-paper runs exactly em_iters and has no tolerance.
	switch m.Method {
	case engine.EM:
		mp["em_iters"], mp["em_tol"] = r.EMIters, r.EMTol
	case engine.EMPaper:
		mp["em_iters"] = r.EMIters
	}
	return mp
}

func runGenerate(ctx context.Context, e env, c generateConfig) (err error) {
	start := time.Now()
	out := outputs{ctx: ctx, stderr: e.stderr}
	defer func() { err = out.finish(recover(), err) }()
	pairs := genWritable(c.out+c.ext, c.generations, c.analysis, false)[1:] // no base embedding
	if err := checkAllWritable(append(pairs, [2]string{"json", c.jsonPath})...); err != nil {
		return err
	}
	out.input(modelFiles(c.model)...)
	tIn := time.Now()
	sv, meta, err := loadModel(c.model)
	inStage := engine.StageTime{Name: "input", Seconds: time.Since(tIn).Seconds()}
	if err != nil {
		return err
	}
	if !c.seedSet {
		c.seed = meta.Seed // the embed run's: the generations are the ones it drew
	}
	solver := meta.Solver
	if c.solver != "" {
		solver = c.solver
	}
	sol, err := parseSolver(solver)
	if err != nil {
		return badInput("re-save the model or pass -solver", "model %q: %v", clip(c.model), err)
	}
	prog := newRunProgress(e, c.quiet)
	defer prog.close()
	m, restore, err := restoreModel(ctx, prog, sv, c.model, c.workers, sol)
	if err != nil {
		return err
	}
	n, d := sv.X.Dims()
	if err := checkSpace(genNeeds(c.out+c.ext, false, c.generations, n, m.Dim, c.analysis), int64(c.generations)+2); err != nil {
		return err
	}
	gs := c.analysis.genSettings(c.generations, c.covScale)
	sum := summary{Command: "generate", Method: m.Method.String(), Input: c.model, N: n, D: d, K: m.K, P: m.Dim,
		Backend: m.Report.Backend, Workers: m.Report.Workers, Solver: solverName(sol),
		Settings: map[string]any{"seed": c.seed, "solver": solverName(sol), "workers": c.workers},
		Stages:   []engine.StageTime{inStage, restore}, Notes: uncheckedNote(meta, c.model)}
	gs.addTo(sum.Settings)
	if sum.Backend == "" {
		sum.Backend = "default"
	}
	an, err := newGenAnalysis(ctx, c.analysis, sv.X, m, nil, prog)
	if err != nil {
		return err
	}
	var buf mat.Dense // every generation is drawn into the same matrix
	for g := 0; g < c.generations; g++ {
		prog.update("generate", g, c.generations, false)
		t0 := time.Now()
		rep, err := m.GenerateTo(ctx, &buf, c.seed, g, c.covScale, c.analysis.frame)
		if err != nil {
			return err
		}
		secs := time.Since(t0).Seconds() // the generation's compute, like the fit's stages
		if sum.Backend == "default" {
			sum.Backend = rep.Backend
		}
		Y, err := an.generation(ctx, g, &buf)
		if err != nil {
			return err
		}
		path := c.genFile(g)
		if err := out.write("out", path, func(p string) error { return dataio.WriteMatrix(p, Y) }); err != nil {
			return err
		}
		gr := gs.genReport(g, c.seed)
		gr.File, gr.Seconds, gr.Stages, gr.Eigen = path, secs, rep.Stages, rep.Eigen
		sum.Generations = append(sum.Generations, gr)
	}
	prog.update("generate", c.generations, c.generations, true)
	sum.addGenStages()
	if err := an.finish(ctx, &sum, c.out+c.ext, false, c.model, &out); err != nil {
		return err
	}
	return finish(ctx, e, prog, &sum, start, c.jsonPath, c.quiet, &out)
}

// maxPlotGenerations bounds the generations drawn beside the base embedding by -plot (two
// rows of four panels); the plot's last panel and a summary note say when more were drawn.
const maxPlotGenerations = 7
