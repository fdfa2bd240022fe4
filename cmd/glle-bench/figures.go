package main

import (
	"context"
	"fmt"
	"math"
	"path/filepath"
	"time"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/plot"

	"glle/bench"
	"glle/engine"
)

// Figure files written by 'glle-bench figures'.
const (
	fig2File = "fig2_datasets.png"
	fig3File = "fig3_generations.png"
	fig4File = "fig4_cov_scale.png"
	fig5File = "fig5_cov_scale_study.png" // analysis.go
	fig6File = "fig6_uncertainty.png"     // analysis.go
)

// figureDatasets are the datasets of the figures, with their panel titles, in the paper's
// order: Fig. 2's panels (a)-(d) and the rows of Figs. 3 and 4 (S-curve, Swiss roll, Swiss
// roll with hole, severed bowl, which the authors' code and this one call the severed
// sphere). The Swiss roll came first before session 34.
var figureDatasets = []struct{ name, title string }{
	{"scurve", "S-curve"},
	{"swissroll", "Swiss roll"},
	{"swissroll-hole", "Swiss roll with hole"},
	{"severed-sphere", "severed sphere"},
}

// fig4Scales are the covariance scales of Fig. 4.
var fig4Scales = []float64{0.01, 0.1, 1, 5, 10}

// figGenerations is the number of generations per method in Fig. 3.
const figGenerations = 4

// Fixed oblique view of the 3-D datasets in Fig. 2: azimuth and elevation in degrees.
const (
	viewAzimuth   = -25.0
	viewElevation = 28.0
)

// project maps the 3-D points of X to the screen of the fixed oblique view: the data's z axis
// is up, the view turned by the azimuth about z and tilted by the elevation.
func project(X *mat.Dense) (xs, ys []float64) {
	n, _ := X.Dims()
	az, el := viewAzimuth*math.Pi/180, viewElevation*math.Pi/180
	sa, ca := math.Sincos(az)
	se, ce := math.Sincos(el)
	xs, ys = make([]float64, n), make([]float64, n)
	for i := 0; i < n; i++ {
		x, y, z := X.At(i, 0), X.At(i, 1), X.At(i, 2)
		depth := -sa*x + ca*y
		xs[i] = ca*x + sa*y
		ys[i] = ce*z - se*depth
	}
	return xs, ys
}

// figData is one dataset with its fitted models, shared by Figs. 3 and 4.
type figData struct {
	X      *mat.Dense
	color  []float64
	em     *engine.Model
	direct *engine.Model
}

type figRun struct {
	c     figuresConfig
	prog  *progress
	data  map[string]*figData
	fits  int
	gens  int
	stage stageTotals
	// nested is the time in the fits' and generations' foreground stages so far: the
	// summary lists those stages, so a figure's own stage leaves it out.
	nested float64
	study  studyCache // generations reused by Figs. 5 and 6 (analysis.go)
}

func (r *figRun) addStages(st []engine.StageTime, gen bool) {
	prefix := ""
	if gen {
		prefix = genStagePrefix
	}
	r.stage.add(st, prefix)
	for _, s := range st {
		if !s.Background {
			r.nested += s.Seconds
		}
	}
}

func (r *figRun) dataset(name string) (*figData, error) {
	if d, ok := r.data[name]; ok {
		return d, nil
	}
	X, color, err := makeDataset(name, r.c.n, r.c.seed)
	if err != nil {
		return nil, err
	}
	d := &figData{X: X, color: color}
	r.data[name] = d
	return d, nil
}

// models fits EM and direct sampling to the dataset (once).
func (r *figRun) models(ctx context.Context, name string) (*figData, error) {
	d, err := r.dataset(name)
	if err != nil {
		return nil, err
	}
	if d.em != nil {
		return d, nil
	}
	for _, meth := range []engine.Method{engine.EM, engine.Direct} {
		r.prog.setPrefix(name + " " + meth.String())
		s := engine.Settings{Method: meth, K: r.c.k, Dim: 2, Seed: r.c.seed, Solver: r.c.solver, Workers: r.c.workers,
			Progress: r.prog.engineFunc()}
		m, err := engine.Fit(ctx, d.X, s)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		r.fits++
		r.addStages(m.Report.Stages, false)
		if meth == engine.EM {
			d.em = m
		} else {
			d.direct = m
		}
	}
	r.prog.setPrefix("")
	return d, nil
}

// generate draws generation g at scale a, aligned onto the base (LLE) embedding by
// orthogonal Procrustes, so the panels share the base's orientation, counting it in *count.
// A generation an earlier figure drew is reused (Fig. 4's a = 1 column is generation 0 of
// Fig. 3; figs 5-6 reuse Fig. 4's).
func (r *figRun) generate(ctx context.Context, m *engine.Model, g int, a float64, count *int) (*mat.Dense, error) {
	if Y, ok := r.study.ys[studyKey{m, g, a}]; ok {
		return Y, nil
	}
	Y, rep, err := m.Generate(ctx, r.c.seed, g, a)
	if err != nil {
		return nil, err
	}
	*count++
	r.addStages(rep.Stages, true)
	Y = bench.AlignTo(m.Embedding, Y, false)
	r.study.put(m, g, a, Y)
	return Y, nil
}

func (r *figRun) fig2(ctx context.Context) ([][]*plot.Plot, error) {
	var row []*plot.Plot
	for _, ds := range figureDatasets {
		d, err := r.dataset(ds.name)
		if err != nil {
			return nil, err
		}
		xs, ys := project(d.X)
		n, _ := d.X.Dims()
		p, err := scatterPanel(fmt.Sprintf("%s (n=%d)", ds.title, n), xs, ys, d.color)
		if err != nil {
			return nil, err
		}
		row = append(row, p)
	}
	return [][]*plot.Plot{row}, nil
}

func (r *figRun) fig3(ctx context.Context) ([][]*plot.Plot, error) {
	var grid [][]*plot.Plot
	for _, ds := range figureDatasets {
		d, err := r.models(ctx, ds.name)
		if err != nil {
			return nil, err
		}
		// The EM and direct models keep the LLE weights as their mean weights, so their base
		// embedding is the LLE embedding.
		p, err := embeddingPanel(ds.title+": LLE", d.direct.Embedding, d.color)
		if err != nil {
			return nil, err
		}
		row := []*plot.Plot{p}
		for _, mm := range []struct {
			m     *engine.Model
			label string
		}{{d.em, "GLLE-EM"}, {d.direct, "GLLE direct"}} {
			for g := 0; g < figGenerations; g++ {
				r.prog.setPrefix(fmt.Sprintf("fig 3: %s %s", ds.name, mm.label))
				r.prog.update("generate", g, figGenerations, false)
				Y, err := r.generate(ctx, mm.m, g, 1, &r.gens)
				if err != nil {
					return nil, err
				}
				p, err := embeddingPanel(fmt.Sprintf("%s #%d", mm.label, g+1), Y, d.color)
				if err != nil {
					return nil, err
				}
				row = append(row, p)
			}
		}
		r.prog.update("generate", figGenerations, figGenerations, true)
		grid = append(grid, row)
	}
	r.prog.setPrefix("")
	return grid, nil
}

// fig4 is the paper's Fig. 4, the effect of the covariance scale: one row per dataset, (a)
// GLLE-EM's generation 0 at each a of fig4Scales in the first five columns, (b) direct
// sampling's in the next five (as Fig. 3 sets its (a)-(c) side by side). It drew the Swiss
// roll alone, one row per method, before session 34.
func (r *figRun) fig4(ctx context.Context) ([][]*plot.Plot, error) {
	var grid [][]*plot.Plot
	for _, ds := range figureDatasets {
		d, err := r.models(ctx, ds.name)
		if err != nil {
			return nil, err
		}
		var row []*plot.Plot
		for _, mm := range []struct {
			m     *engine.Model
			label string
		}{{d.em, "GLLE-EM"}, {d.direct, "GLLE direct"}} {
			r.prog.setPrefix(fmt.Sprintf("fig 4: %s %s", ds.name, mm.label))
			for i, a := range fig4Scales {
				r.prog.update("generate", i, len(fig4Scales), false)
				Y, err := r.generate(ctx, mm.m, 0, a, &r.gens)
				if err != nil {
					return nil, err
				}
				p, err := embeddingPanel(fmt.Sprintf("%s: %s, a = %g", ds.title, mm.label, a), Y, d.color)
				if err != nil {
					return nil, err
				}
				row = append(row, p)
			}
		}
		r.prog.update("generate", len(fig4Scales), len(fig4Scales), true)
		grid = append(grid, row)
	}
	r.prog.setPrefix("")
	return grid, nil
}

// figuresMemory estimates the peak memory of a figures run, calibrated on this tool's peak RSS
// (all figures: 214 MB at n = 5000, 778 MB at 20000, 1.90 GB at 50000, a slope of 37.4 KB
// per point; Fig. 3 alone about the same; Fig. 2 alone 60 MB at 50000 and 153 MB at 200000,
// 618 B per point): 32 MiB plus 40 KiB per point when a figure with models (3-6) is drawn,
// else 640 B per point. The first version summed the models' own estimates and was 4.6 times
// too low (a review in session 32).
func figuresMemory(c figuresConfig) int64 {
	per := int64(640)
	if c.figs[3] || c.figs[4] || c.figs[5] || c.figs[6] {
		per = 40 << 10
	}
	return satAdd(32<<20, satMul(per, int64(c.n)))
}

func runFigures(ctx context.Context, e env, c figuresConfig) (err error) {
	start := time.Now()
	out := outputs{ctx: ctx, stderr: e.stderr}
	defer func() { err = out.finish(recover(), err) }()
	// The run keeps every dataset and its models until the end: refuse it up front when they
	// cannot fit (-n 100000000 passed the per-dataset check and ran out of memory with a Go
	// fatal error and a stack trace, before session 32).
	if need, phys := figuresMemory(c), engine.PhysicalMemory(); phys > 0 && need > phys {
		return badInput("use a smaller -n", "figures at -n %d keeps four datasets and their em and direct models: about %s, more than the physical memory (%s)", c.n, engine.FormatBytes(need), engine.FormatBytes(phys))
	}
	if err := out.mkdir("out", c.out); err != nil {
		return err
	}
	jobs := []struct {
		fig  int
		file string
		fn   func(*figRun, context.Context) ([][]*plot.Plot, error)
	}{{2, fig2File, (*figRun).fig2}, {3, fig3File, (*figRun).fig3}, {4, fig4File, (*figRun).fig4},
		{5, fig5File, (*figRun).fig5}, {6, fig6File, (*figRun).fig6}}
	for _, j := range jobs {
		if c.figs[j.fig] {
			if err := checkWritable("out", filepath.Join(c.out, j.file)); err != nil {
				return err
			}
		}
	}
	prog := newRunProgress(e, c.quiet)
	defer prog.close()
	r := &figRun{c: c, prog: prog, data: map[string]*figData{}}
	// The summary's stages partition the run: the fits' and generations' stages (summed over
	// the figures), then "fig N", figure N's time beside them: its datasets, the alignment of
	// its generations, Fig. 5's trustworthiness, drawing and writing the PNG. "fig N" held
	// the fits and generations too before session 34, and the stages added up to more than
	// the run (5.37 s listed of a 4.45 s run).
	var figSec []engine.StageTime
	for _, j := range jobs {
		if !c.figs[j.fig] {
			continue
		}
		t0, nested := time.Now(), r.nested
		path := filepath.Join(c.out, j.file)
		grid, err := j.fn(r, ctx)
		if err != nil {
			return err
		}
		prog.update("plot", 0, 0, false)
		err = out.write("out", path, func(p string) error { return writeGrid(ctx, p, grid) })
		prog.update("plot", 0, 0, true)
		if err != nil {
			return err
		}
		own := max(0, time.Since(t0).Seconds()-(r.nested-nested))
		figSec = append(figSec, engine.StageTime{Name: fmt.Sprintf("fig %d", j.fig), Seconds: own})
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	prog.close()
	if !c.quiet {
		sum := summary{Command: "figures", N: c.n, D: 3, K: c.k, P: 2, Solver: solverName(c.solver),
			WallSeconds: time.Since(start).Seconds(), PeakRSSBytes: peakRSS(), Outputs: out.files}
		sum.Stages = append(sum.Stages, r.stage.list()...)
		sum.Stages = append(sum.Stages, figSec...)
		out.onCommit(func() {
			sum.write(e.stderr)
			fmt.Fprintf(e.stderr, "  %d fits, %d generations\n", r.fits, r.gens)
			if r.study.gens > 0 || r.study.evals > 0 {
				fmt.Fprintf(e.stderr, "  figs 5-6: %d more generations, %d trustworthiness evaluations\n", r.study.gens, r.study.evals)
			}
		})
	}
	return nil
}
