package main

import (
	"context"
	"fmt"
	"image/color"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"

	"glle/bench"
	"glle/bench/dataio"
	"glle/engine"
)

// analysisOpts are the flags that turn generations into insight, shared by embed, generate
// and transform: alignment, per-point uncertainty and quality metrics.
type analysisOpts struct {
	align, alignScale, uncertainty, metrics bool
	frameName                               string
	frame                                   engine.Frame
}

func (a *analysisOpts) register(f *flags, metrics bool) {
	f.str(&a.frameName, "frame", "base", "FRAME", "basis of the generations: base (rotated/reflected onto the base embedding, orthogonal Procrustes) or eigen (the generation's eigenvectors as computed, the paper's output)")
	f.boolean(&a.align, "align", "align every generation onto the base embedding by orthogonal Procrustes (rotation/reflection + translation) before writing it")
	f.boolean(&a.alignScale, "align-scale", "with -align, also fit a uniform scale")
	over := "over the generations, each rigidly aligned onto the base embedding (orthogonal Procrustes: rotation/reflection + translation, never a scale; so with or without -align, and -align-scale does not change them)"
	if !metrics { // transform
		over = "over the new points' generations, each mapped onto the base frame by the rigid Procrustes alignment (rotation/reflection + translation, never a scale; -align-scale does not change them) of its training embedding"
	}
	f.boolean(&a.uncertainty, "uncertainty", "write STEM_uncertainty.npy (one value per point: the trace of its sample covariance, divisor G-1) and STEM_mean.npy (one row per point) "+over+", STEM = -out without its extension; needs -generations >= 2")
	if metrics {
		f.boolean(&a.metrics, "metrics", "report trustworthiness/continuity at k, LLE reconstruction cost, Procrustes disparity to the base and (datasets) max |Spearman| (trustworthiness/continuity: exact for n <= 20000, over a 2000-point subsample above, and not computed unless k is below n/2, which the summary says)")
	}
}

// check validates the options for a run drawing the given number of generations (set: the
// flags given on the command line).
func (a *analysisOpts) check(generations int, set map[string]bool) error {
	fr, err := engine.ParseFrame(a.frameName)
	if err != nil {
		return badInput("use -frame base or -frame eigen", "unknown frame %q", clip(a.frameName))
	}
	a.frame = fr
	switch {
	case set["frame"] && generations == 0:
		return badInput("add -generations G", "-frame applies to the generations")
	case a.align && generations == 0:
		return badInput("add -generations G", "-align applies to the generations")
	case a.alignScale && !a.align:
		return badInput("add -align", "-align-scale only applies with -align")
	case a.uncertainty && generations < 2:
		return badInput("add -generations 2 or more", "-uncertainty needs at least two generations")
	}
	return nil
}

// genSettings are the flags that decide, with the seed, what the generation files of a run
// hold: the settings of the -json report and model.json's embed_generations.
type genSettings struct {
	Generations int     `json:"generations"`
	CovScale    float64 `json:"cov_scale"`
	Frame       string  `json:"frame,omitempty"` // base or eigen (-frame); none for transform -base-only
	Align       bool    `json:"align"`           // aligned onto the base embedding (-align)
	AlignScale  bool    `json:"align_scale"`     // with a uniform scale (-align-scale)
}

// genSettings returns the settings of a run drawing gens generations at scale covScale.
func (a analysisOpts) genSettings(gens int, covScale float64) *genSettings {
	return &genSettings{Generations: gens, CovScale: covScale, Frame: a.frame.String(), Align: a.align, AlignScale: a.alignScale}
}

// addTo records g in a report's settings.
func (g *genSettings) addTo(mp map[string]any) {
	mp["generations"], mp["cov_scale"], mp["align"], mp["align_scale"] = g.Generations, g.CovScale, g.Align, g.AlignScale
	if g.Frame != "" {
		mp["frame"] = g.Frame
	}
}

// genReport starts the report of generation g, saying what its file holds.
func (g *genSettings) genReport(gen int, seed uint64) genReport {
	return genReport{Generation: gen, Seed: seed, CovScale: g.CovScale, Frame: g.Frame, Aligned: g.Align, AlignScale: g.Align && g.AlignScale}
}

// stem returns out without its extension: Y.npy -> Y.
func stem(out string) string { return strings.TrimSuffix(out, filepath.Ext(out)) }

// uncertaintyFiles returns the uncertainty and mean files beside out (same stem and format).
func uncertaintyFiles(out string) (spread, mean string) {
	ext := filepath.Ext(out)
	return stem(out) + "_uncertainty" + ext, stem(out) + "_mean" + ext
}

// uncertaintyPNG is the -plot file of the uncertainty beside out.
func uncertaintyPNG(out string) string { return stem(out) + "_uncertainty.png" }

// outputs lists the files the options add beside out (for the distinct-path checks).
func (a analysisOpts) outputs(out string, plot bool) []string {
	if !a.uncertainty {
		return nil
	}
	s, m := uncertaintyFiles(out)
	o := []string{s, m}
	if plot {
		o = append(o, uncertaintyPNG(out))
	}
	return o
}

// spreadAcc accumulates the per-point mean and the trace of the covariance over generations
// one at a time (Welford's update per coordinate), so the generations need not be kept; it
// gives what bench.Uncertainty gives for the same (aligned) generations.
type spreadAcc struct {
	n, p, g int
	mean    []float64
	m2      []float64
}

func newSpreadAcc(n, p int) *spreadAcc {
	return &spreadAcc{n: n, p: p, mean: make([]float64, n*p), m2: make([]float64, n)}
}

func (s *spreadAcc) add(Y *mat.Dense) {
	s.g++
	inv := 1 / float64(s.g)
	for i := 0; i < s.n; i++ {
		for j := 0; j < s.p; j++ {
			y := Y.At(i, j)
			d := y - s.mean[i*s.p+j]
			s.mean[i*s.p+j] += d * inv
			s.m2[i] += d * (y - s.mean[i*s.p+j])
		}
	}
}

func (s *spreadAcc) result() (*mat.Dense, []float64) {
	spread := make([]float64, s.n)
	div := float64(max(s.g-1, 1))
	for i, v := range s.m2 {
		spread[i] = v / div
	}
	return mat.NewDense(s.n, s.p, slices.Clone(s.mean)), spread
}

// uncertaintyReport summarises the per-point spread in the run summary.
type uncertaintyReport struct {
	Generations int     `json:"generations"`
	Median      float64 `json:"median"`
	Mean        float64 `json:"mean"`
	Max         float64 `json:"max"`
	Files       string  `json:"files"`
}

func newUncertaintyReport(spread []float64, gens int, files string) *uncertaintyReport {
	s := slices.Clone(spread)
	slices.Sort(s)
	r := &uncertaintyReport{Generations: gens, Files: files}
	if len(s) > 0 {
		r.Median, r.Max = medianOf(s), s[len(s)-1] // the mean of the middle two for even n
		for _, v := range s {
			r.Mean += v
		}
		r.Mean /= float64(len(s))
	}
	return r
}

// writeUncertainty writes the spread (a 1-D .npy, or one value per line in a text format) and
// the mean embedding beside out, and records them in out.
func writeUncertainty(out string, mean *mat.Dense, spread []float64, o *outputs) error {
	sp, mp := uncertaintyFiles(out)
	err := o.write("out", sp, func(p string) error {
		if strings.EqualFold(filepath.Ext(sp), ".npy") {
			return dataio.WriteNPYFile(p, []int{len(spread)}, spread)
		}
		return dataio.WriteMatrix(p, mat.NewDense(len(spread), 1, slices.Clone(spread)))
	})
	if err != nil {
		return err
	}
	return o.write("out", mp, func(p string) error { return dataio.WriteMatrix(p, mean) })
}

// logSpread maps spreads to log10 for colouring (they span orders of magnitude).
func logSpread(spread []float64) []float64 {
	pos := math.Inf(1)
	for _, v := range spread {
		if v > 0 && v < pos {
			pos = v
		}
	}
	if math.IsInf(pos, 1) {
		pos = 1
	}
	out := make([]float64, len(spread))
	for i, v := range spread {
		out[i] = math.Log10(math.Max(v, pos))
	}
	return out
}

// plotUncertainty draws the embedding Y coloured by log10 of the per-point spread, with the
// colour bar (spreadBar) below it.
func plotUncertainty(ctx context.Context, path, title string, Y *mat.Dense, spread []float64) error {
	v := logSpread(spread)
	p, err := embeddingPanel(title, Y, v)
	if err != nil {
		return err
	}
	return writeFigure(ctx, path, [][]*plot.Plot{{p}}, spreadBar(v))
}

// ---------------------------------------------------------------------------------------
// quality metrics

// qualityJSON is one embedding's metrics; absent metrics are omitted.
type qualityJSON struct {
	Embedding          string   `json:"embedding"` // "base" or "generation N"
	Trustworthiness    *float64 `json:"trustworthiness,omitempty"`
	Continuity         *float64 `json:"continuity,omitempty"`
	ReconstructionCost *float64 `json:"reconstruction_cost,omitempty"`
	Disparity          *float64 `json:"procrustes_disparity,omitempty"`
	Spearman           *float64 `json:"max_abs_spearman,omitempty"`
}

// metricsReport holds -metrics for the base embedding and every generation.
type metricsReport struct {
	K       int  `json:"k"`
	Queries int  `json:"queries"` // points trustworthiness/continuity ran over (0: not computed)
	Exact   bool `json:"exact"`   // false: a seeded random subsample (n > 20000), or not computed
	// NotComputed says why trustworthiness and continuity were not computed (they need
	// k below n/2); empty when they were. Before, such a run reported "exact": true with every
	// value missing.
	NotComputed string        `json:"trust_continuity_not_computed,omitempty"`
	Base        qualityJSON   `json:"base"`
	Generations []qualityJSON `json:"generations,omitempty"`
}

func fptr(v float64) *float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return nil
	}
	return &v
}

// metricsRun computes the metrics of a fitted model's embeddings.
type metricsRun struct {
	X     *mat.Dense
	m     *engine.Model
	coord []float64 // manifold coordinate (built-in datasets), or nil
	rep   *metricsReport
}

func newMetricsRun(ctx context.Context, X *mat.Dense, m *engine.Model, coord []float64) (*metricsRun, error) {
	n, _ := X.Dims()
	q := bench.QueryCount(n, bench.NeighborhoodOptions{})
	rep := &metricsReport{K: m.K, Queries: q, Exact: q == n}
	if !bench.TrustDefined(n, m.K) { // bench.AssessContext skips them
		rep.Queries, rep.Exact = 0, false
		rep.NotComputed = fmt.Sprintf("they need k below n/2, and k = %d is not below n/2 = %g", m.K, float64(n)/2)
	}
	r := &metricsRun{X: X, m: m, coord: coord, rep: rep}
	base, err := r.assess(ctx, "base", m.Embedding, nil)
	if err != nil {
		return nil, err
	}
	r.rep.Base = base
	return r, nil
}

// assess computes the metrics of Y; it stops with ctx's error when ctx is done.
func (r *metricsRun) assess(ctx context.Context, label string, Y, ref *mat.Dense) (qualityJSON, error) {
	// The run's -workers (the model's): the metrics used every CPU before session 32.
	q, err := bench.AssessContext(ctx, r.X, Y, bench.QualityOptions{K: r.m.K, Neighbors: r.m.Neighbors, Weights: r.m.Weights, WK: r.m.K,
		Reference: ref, Coord: r.coord, Neighborhood: bench.NeighborhoodOptions{Workers: r.m.Report.Workers}})
	if err != nil {
		return qualityJSON{}, err
	}
	return qualityJSON{Embedding: label, Trustworthiness: fptr(q.Trustworthiness), Continuity: fptr(q.Continuity),
		ReconstructionCost: fptr(q.ReconstructionCost), Disparity: fptr(q.Disparity), Spearman: fptr(q.Spearman)}, nil
}

func (r *metricsRun) generation(ctx context.Context, g int, Y *mat.Dense) error {
	q, err := r.assess(ctx, fmt.Sprintf("generation %d", g), Y, r.m.Embedding)
	if err != nil {
		return err
	}
	r.rep.Generations = append(r.rep.Generations, q)
	return nil
}

func fmtOpt(v *float64, f string) string {
	if v == nil {
		return "-"
	}
	return fmt.Sprintf(f, *v)
}

// write prints the metrics table of the run summary.
func (r *metricsReport) write(b *strings.Builder) {
	how := "exact"
	switch {
	case r.NotComputed != "":
		how = "not computed: " + r.NotComputed
	case !r.Exact:
		how = fmt.Sprintf("estimated on %d random query points", r.Queries)
	}
	fmt.Fprintf(b, "  metrics (k=%d, trustworthiness/continuity %s):\n", r.K, how)
	fmt.Fprintf(b, "    %-14s %8s %8s %12s %10s %9s\n", "embedding", "trust", "contin", "recon cost", "disparity", "|rho|max")
	for _, q := range append([]qualityJSON{r.Base}, r.Generations...) {
		fmt.Fprintf(b, "    %-14s %8s %8s %12s %10s %9s\n", q.Embedding, fmtOpt(q.Trustworthiness, "%.4f"), fmtOpt(q.Continuity, "%.4f"),
			fmtOpt(q.ReconstructionCost, "%.4g"), fmtOpt(q.Disparity, "%.4g"), fmtOpt(q.Spearman, "%.4f"))
	}
}

func (u *uncertaintyReport) write(b *strings.Builder) {
	fmt.Fprintf(b, "  uncertainty over %d rigidly aligned generations: per-point spread median %.4g mean %.4g max %.4g (%s)\n",
		u.Generations, u.Median, u.Mean, u.Max, u.Files)
}

// genAnalysis applies the analysis options to the generations of an embed or generate run.
type genAnalysis struct {
	opt  analysisOpts
	m    *engine.Model
	acc  *spreadAcc
	met  *metricsRun
	prog *progress
	secs float64 // time spent on alignment, uncertainty and metrics (the "metrics and alignment" stage)
	// pending: the uncertainty plot finish prepared, for the caller to draw (nil without one)
	pending *spreadPlot
}

// newGenAnalysis prepares the analysis of m's generations; the metrics of the base embedding
// are computed here. coord is the manifold coordinate of a built-in dataset (nil otherwise).
func newGenAnalysis(ctx context.Context, opt analysisOpts, X *mat.Dense, m *engine.Model, coord []float64, prog *progress) (*genAnalysis, error) {
	a := &genAnalysis{opt: opt, m: m, prog: prog}
	if opt.metrics {
		prog.update("metrics", 0, 0, false)
		t0 := time.Now()
		var err error
		if a.met, err = newMetricsRun(ctx, X, m, coord); err != nil {
			return nil, err
		}
		a.secs += time.Since(t0).Seconds()
		prog.update("metrics", 0, 0, true)
	}
	if opt.uncertainty {
		n, p := m.Embedding.Dims()
		a.acc = newSpreadAcc(n, p)
	}
	return a, nil
}

// generation records generation g and returns what is written: Y, or Y aligned onto the base
// embedding with -align.
func (a *genAnalysis) generation(ctx context.Context, g int, Y *mat.Dense) (*mat.Dense, error) {
	if !a.opt.align && a.acc == nil && a.met == nil {
		return Y, nil // nothing to do, and no "metrics and alignment" stage of zero seconds
	}
	t0 := time.Now()
	defer func() { a.secs += time.Since(t0).Seconds() }()
	out := Y
	if a.opt.align {
		out = bench.AlignTo(a.m.Embedding, Y, a.opt.alignScale)
	}
	if a.acc != nil {
		u := out
		if !a.opt.align || a.opt.alignScale {
			u = bench.AlignTo(a.m.Embedding, Y, false) // the uncertainty never rescales
		}
		a.acc.add(u)
	}
	if a.met != nil {
		// The progress line names the metrics while they run (it said "generation g" for
		// them, often the longer part at large n).
		a.prog.update(fmt.Sprintf("metrics of generation %d", g), 0, 0, false)
		// On the generation as written but never rescaled: -align-scale multiplied the
		// reconstruction cost by s^2 (before session 32). The rotation matters (max |Spearman|
		// scores each axis), so with -align the metrics see the rigidly aligned generation.
		m := Y
		if a.opt.align {
			m = out
			if a.opt.alignScale {
				m = bench.AlignTo(a.m.Embedding, Y, false)
			}
		}
		if err := a.met.generation(ctx, g, m); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// finish writes the uncertainty files (and with plot its PNG) beside out and adds the
// metrics and the uncertainty to the summary.
func (a *genAnalysis) finish(ctx context.Context, sum *summary, out string, plot bool, input string, o *outputs) error {
	if a.met != nil {
		sum.Metrics = a.met.rep
	}
	if a.secs > 0 { // the time -metrics, -align and -uncertainty took, outside the generations
		sum.Stages = append(sum.Stages, engine.StageTime{Name: "metrics and alignment", Seconds: a.secs})
	}
	if a.acc == nil {
		return nil
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	mean, spread := a.acc.result()
	if err := writeUncertainty(out, mean, spread, o); err != nil {
		return err
	}
	sp, mp := uncertaintyFiles(out)
	files := sp + ", " + mp
	if plot {
		path := uncertaintyPNG(out)
		a.pending = &spreadPlot{path: path, spread: spread, emb: a.m.Embedding,
			title: fmt.Sprintf("%s, %s: log10 spread over %d generations", filepath.Base(input), a.m.Method, a.acc.g)}
		files += ", " + path
	}
	sum.Uncertainty = newUncertaintyReport(spread, a.acc.g, files)
	return nil
}

// spreadPlot is the uncertainty PNG that finish prepared: drawn by draw once the caller has
// let go of the model (see embed), since drawing's garbage would otherwise add to the
// model's memory.
type spreadPlot struct {
	path, title string
	emb         *mat.Dense
	spread      []float64
}

// pendingPlot returns the uncertainty plot finish prepared (nil without one).
func (a *genAnalysis) pendingPlot() *spreadPlot { return a.pending }

// draw writes the plot through o and records its stage in sum.
func (u *spreadPlot) draw(ctx context.Context, sum *summary, prog *progress, o *outputs) error {
	prog.update("plot", 0, 0, false)
	t0 := time.Now()
	err := o.writeOwn("plot", u.path, func(p string) error { return plotUncertainty(ctx, p, u.title, u.emb, u.spread) })
	sum.Stages = append(sum.Stages, engine.StageTime{Name: "plot uncertainty", Seconds: time.Since(t0).Seconds()})
	prog.update("plot", 0, 0, true)
	return err
}

// ---------------------------------------------------------------------------------------
// figures 5 and 6

// fig5Gens is the number of generations per (dataset, method, a) of the covariance-scale
// study; the plot shows their median.
const fig5Gens = 3

// fig5Queries bounds the query points of the study's trustworthiness: above it, the sum runs
// over a seeded random subsample (bench.NeighborhoodOptions), which keeps Fig. 5 fast at the
// default -n 5000 (standard error about 1e-3).
const fig5Queries = 1000

type studyKey struct {
	m *engine.Model
	g int
	a float64
}

// studyCache keeps the aligned generations of a figures run so Figs. 5 and 6 reuse the ones
// Figs. 3 and 4 drew.
type studyCache struct {
	ys          map[studyKey]*mat.Dense
	gens, evals int
}

func (c *studyCache) put(m *engine.Model, g int, a float64, Y *mat.Dense) {
	if c.ys == nil {
		c.ys = map[studyKey]*mat.Dense{}
	}
	c.ys[studyKey{m, g, a}] = Y
}

func medianOf(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	h := len(s) / 2
	if len(s)%2 == 1 {
		return s[h]
	}
	return (s[h-1] + s[h]) / 2
}

// fig5 is the covariance-scale study: for every dataset, the median over fig5Gens generations
// of the Procrustes disparity to the LLE embedding (top row) and of the trustworthiness at k
// (bottom row) against a, for EM and direct sampling; the LLE embedding's trustworthiness is
// the dotted reference line.
func (r *figRun) fig5(ctx context.Context) ([][]*plot.Plot, error) {
	var top, bottom []*plot.Plot
	for _, ds := range figureDatasets {
		d, err := r.models(ctx, ds.name)
		if err != nil {
			return nil, err
		}
		n, _ := d.X.Dims()
		opt := bench.NeighborhoodOptions{Queries: fig5Queries, Seed: r.c.seed, Workers: r.c.workers}
		k := min(r.c.k, (n-1)/2)
		lleTrust, _, err := bench.TrustContinuityContext(ctx, d.X, d.em.Embedding, k, opt)
		if err != nil {
			return nil, err
		}
		r.study.evals++
		pd, err := studyPanel(ds.title+": disparity to LLE", "a", "", true)
		if err != nil {
			return nil, err
		}
		pt, err := studyPanel(fmt.Sprintf("%s: trustworthiness (k=%d)", ds.title, k), "a", "", false)
		if err != nil {
			return nil, err
		}
		for mi, mm := range []struct {
			m     *engine.Model
			label string
		}{{d.em, "GLLE-EM"}, {d.direct, "GLLE direct"}} {
			disp, trust := make(plotter.XYs, len(fig4Scales)), make(plotter.XYs, len(fig4Scales))
			for i, a := range fig4Scales {
				r.prog.setPrefix(fmt.Sprintf("fig 5: %s %s a=%g", ds.name, mm.label, a))
				var dv, tv []float64
				for g := 0; g < fig5Gens; g++ {
					r.prog.update("generate", g, fig5Gens, false)
					Y, err := r.generate(ctx, mm.m, g, a, &r.study.gens)
					if err != nil {
						return nil, err
					}
					dv = append(dv, bench.ProcrustesDisparity(mm.m.Embedding, Y))
					t, _, err := bench.TrustContinuityContext(ctx, d.X, Y, k, opt)
					if err != nil {
						return nil, err
					}
					r.study.evals++
					tv = append(tv, t)
				}
				disp[i] = plotter.XY{X: a, Y: math.Max(medianOf(dv), 1e-12)}
				trust[i] = plotter.XY{X: a, Y: medianOf(tv)}
			}
			if err := addStudyLine(pd, disp, mm.label, mi); err != nil {
				return nil, err
			}
			if err := addStudyLine(pt, trust, mm.label, mi); err != nil {
				return nil, err
			}
		}
		ref, err := plotter.NewLine(plotter.XYs{{X: fig4Scales[0], Y: lleTrust}, {X: fig4Scales[len(fig4Scales)-1], Y: lleTrust}})
		if err != nil {
			return nil, err
		}
		ref.LineStyle.Color = color.Gray{Y: 110}
		ref.LineStyle.Dashes = []vg.Length{vg.Points(1), vg.Points(2)}
		pt.Add(ref)
		pt.Legend.Add("LLE", ref)
		widenFlatLogAxis(&pd.Y)
		top, bottom = append(top, pd), append(bottom, pt)
	}
	r.prog.update("generate", fig5Gens, fig5Gens, true)
	r.prog.setPrefix("")
	return [][]*plot.Plot{top, bottom}, nil
}

// widenFlatLogAxis gives a logarithmic axis whose data span a single value v a decade on
// either side: gonum/plot pads a flat range by 1 on each side, below zero for v < 1, and a
// log scale then panics when the panel is drawn.
func widenFlatLogAxis(ax *plot.Axis) {
	if ax.Min == ax.Max && ax.Min > 0 {
		ax.Min, ax.Max = ax.Min/10, ax.Max*10
	}
}

// studyPanel is an empty line-plot panel with a logarithmic a axis (and y axis when logY).
func studyPanel(title, xlabel, ylabel string, logY bool) (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = title
	p.Title.TextStyle.Font.Size = vg.Points(8)
	p.X.Label.Text, p.Y.Label.Text = xlabel, ylabel
	p.X.Scale, p.X.Tick.Marker = plot.LogScale{}, plot.LogTicks{Prec: -1}
	if logY {
		p.Y.Scale, p.Y.Tick.Marker = plot.LogScale{}, plot.LogTicks{Prec: -1}
	}
	for _, ax := range []*plot.Axis{&p.X, &p.Y} {
		ax.Tick.Label.Font.Size = vg.Points(6)
		ax.Label.TextStyle.Font.Size = vg.Points(7)
	}
	p.Legend.Top, p.Legend.Left = false, true
	p.Legend.TextStyle.Font.Size = vg.Points(6)
	return p, nil
}

var studyColors = []color.Color{color.RGBA{R: 0x1f, G: 0x77, B: 0xb4, A: 0xff}, color.RGBA{R: 0xd6, G: 0x27, B: 0x28, A: 0xff}}

func addStudyLine(p *plot.Plot, xy plotter.XYs, label string, i int) error {
	l, pts, err := plotter.NewLinePoints(xy)
	if err != nil {
		return fmt.Errorf("panel %q: %w", p.Title.Text, err)
	}
	l.LineStyle.Color = studyColors[i%len(studyColors)]
	pts.GlyphStyle.Color = studyColors[i%len(studyColors)]
	pts.GlyphStyle.Radius = vg.Points(1.5)
	if i == 1 {
		l.LineStyle.Dashes = []vg.Length{vg.Points(3), vg.Points(2)}
	}
	p.Add(l, pts)
	p.Legend.Add(label, l, pts)
	return nil
}

// fig6 draws, per dataset and method, the LLE embedding coloured by log10 of each point's
// spread over the figGenerations aligned generations at a = 1 of Fig. 3 (light: uncertain, dark: stable).
func (r *figRun) fig6(ctx context.Context) ([][]*plot.Plot, error) {
	var grid [][]*plot.Plot
	for _, mm := range []struct {
		sel   func(*figData) *engine.Model
		label string
	}{{func(d *figData) *engine.Model { return d.em }, "EM spread"}, {func(d *figData) *engine.Model { return d.direct }, "direct spread"}} {
		var row []*plot.Plot
		for _, ds := range figureDatasets {
			d, err := r.models(ctx, ds.name)
			if err != nil {
				return nil, err
			}
			m := mm.sel(d)
			r.prog.setPrefix(fmt.Sprintf("fig 6: %s %s", ds.name, mm.label))
			var gens []*mat.Dense
			for g := 0; g < figGenerations; g++ {
				r.prog.update("generate", g, figGenerations, false)
				Y, err := r.generate(ctx, m, g, 1, &r.study.gens)
				if err != nil {
					return nil, err
				}
				gens = append(gens, Y)
			}
			_, spread := bench.Uncertainty(m.Embedding, gens, false) // aligned already
			p, err := embeddingPanel(fmt.Sprintf("%s, %s", ds.title, mm.label), m.Embedding, logSpread(spread))
			if err != nil {
				return nil, err
			}
			row = append(row, p)
		}
		grid = append(grid, row)
	}
	r.prog.update("generate", figGenerations, figGenerations, true)
	r.prog.setPrefix("")
	return grid, nil
}
