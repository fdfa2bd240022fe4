package main

import (
	"context"
	"io"
	"time"

	"gonum.org/v1/gonum/mat"

	"glle/bench"
	"glle/bench/dataio"
	"glle/engine"
	"glle/parallel"
)

// ---------------------------------------------------------------------------------------
// transform: out-of-sample points

type transformConfig struct {
	model       string
	in          string
	out         string
	generations int
	seed        uint64
	seedSet     bool // -seed given; otherwise the model's seed is used
	covScale    float64
	baseOnly    bool
	workers     int
	jsonPath    string
	quiet       bool
	analysis    analysisOpts // -align, -align-scale, -uncertainty
}

const transformSynopsis = "glle-bench transform -model DIR -in NEW.npy -out Y.npy [-generations G] [-seed S] [-cov-scale A] [-uncertainty]"

const transformAbout = `Embeds new points with a model saved by 'glle-bench embed -model DIR' (any method, lle too; its
gamma.npy, for inspection only, is not read): -out gets the LLE transform (LLE weights on the k
nearest training points, the base embedding of the training points; a new point equal to a training
point gets that point's embedding). For GLLE models, G generations (flag -generations) are also
written as Y_gen000 ... : generation g draws every new point's weights from the model's weight
family (seed S, by default the seed the model was fitted with; scale A; new row i uses the stream of
point n + i) and combines generation g's embedding of the training points, which is regenerated with
the same seed and scale, so it equals the file embed or generate wrote with that seed and scale
(flag -base-only uses the base embedding instead: faster, and the spread then reflects the new
points' weights only). The uncertainty files STEM_uncertainty.npy and STEM_mean.npy hold the new
points' spread and mean, every generation mapped onto the base frame by the rigid Procrustes
alignment (rotation or reflection and translation, never a scale, -align-scale or not) of its
training embedding.`

func transformFlags(c *transformConfig) *flags {
	f := newFlags("transform")
	f.str(&c.model, "model", "", "DIR", "model directory written by 'glle-bench embed -model DIR' (required)")
	f.str(&c.in, "in", "", "NEW.npy", "new points, one per row, with the training data's columns (required)")
	f.str(&c.out, "out", "", "Y.npy", "embedding of the new points by the LLE weights, m x p (.npy, .csv, .tsv or .txt by extension) (required)")
	f.int(&c.generations, "generations", 0, "also write G sampled embeddings Y_gen000 ... (em, direct, em-paper, direct-paper models)")
	f.u64(&c.seed, "seed", 0, "seed of the draws; the model's (the embed run's -seed) gives the training points the embeddings of its generations", "the model's")
	f.float(&c.covScale, "cov-scale", 1, "A", "covariance scale a of the draws")
	f.boolean(&c.baseOnly, "base-only", "combine the base embedding of the training points in every generation instead of regenerating the generation's embedding")
	c.analysis.register(f, false)
	f.int(&c.workers, "workers", 0, "worker goroutines (0: all CPUs); results do not depend on it")
	f.str(&c.jsonPath, "json", "", "REPORT.json", "write the run summary as JSON")
	f.boolean(&c.quiet, "q", quietUsage)
	return f
}

func parseTransform(args []string) (transformConfig, error) {
	var c transformConfig
	f := transformFlags(&c)
	set, err := f.parse("transform", args)
	if err != nil {
		return c, err
	}
	switch {
	case c.model == "":
		return c, badInput("add -model DIR (written by 'glle-bench embed -model DIR')", "-model is required")
	case c.in == "":
		return c, badInput("add -in NEW.npy", "-in is required")
	case c.out == "":
		return c, badInput("add -out Y.npy", "-out is required")
	case c.generations < 0:
		return c, badInput("use -generations 0 or more", "-generations %d: negative count", c.generations)
	case !finite(c.covScale):
		return c, badInput("use a non-negative scale such as 1", "-cov-scale %v: the covariance scale must be a finite non-negative number", c.covScale)
	case !(c.covScale >= 0):
		return c, badInput("use a non-negative scale such as 1", "-cov-scale %v: the covariance scale must be a non-negative number", c.covScale)
	case c.workers < 0 || c.workers > parallel.MaxWorkers:
		return c, badInput("use 0 (all CPUs) or a count from 1 to 1024", "-workers %d: out of range", c.workers)
	case c.baseOnly && c.generations == 0:
		return c, badInput("add -generations G", "-base-only applies to the generations")
	case c.baseOnly && set["frame"]:
		return c, badInput("drop -frame", "-frame applies to drawn generations, which -base-only does not draw")
	case c.baseOnly && c.analysis.align:
		return c, badInput("drop -align", "-align aligns drawn generations of the training points; with -base-only the new points are in the base frame already")
	case c.generations == 0 && set["cov-scale"]:
		return c, badInput("add -generations G, or drop -cov-scale", "-cov-scale applies to the sampled generations, and none are drawn")
	case c.generations == 0 && set["seed"]:
		return c, badInput("add -generations G, or drop -seed", "-seed applies to the sampled generations, and none are drawn")
	}
	c.seedSet = set["seed"]
	if err := c.analysis.check(c.generations, set); err != nil {
		return c, err
	}
	if err := checkJSONName(c.jsonPath); err != nil {
		return c, err
	}
	if err := checkMatrixExt("in", c.in); err != nil {
		return c, err
	}
	if err := checkOutExt("out", c.out); err != nil {
		return c, err
	}
	outs := append([]string{c.out, c.jsonPath}, c.analysis.outputs(c.out, false)...)
	return c, checkPaths(append([]string{c.in}, modelFiles(c.model)...), outs, c.out, c.generations)
}

func runTransform(ctx context.Context, e env, c transformConfig) (err error) {
	start := time.Now()
	out := outputs{ctx: ctx, stderr: e.stderr}
	defer func() { err = out.finish(recover(), err) }()
	if err := checkAllWritable(append(genWritable(c.out, c.generations, c.analysis, false), [2]string{"json", c.jsonPath})...); err != nil {
		return err
	}
	out.input(c.in)
	out.input(modelFiles(c.model)...)
	tIn := time.Now()
	sv, meta, err := loadModelFor(c.model, false)
	if err != nil {
		return err
	}
	if !c.seedSet {
		c.seed = meta.Seed // the embed run's, so generation g is the training points' generation g
	}
	if c.generations > 0 && !sv.Method.Generative() {
		return badInput("fit with -method em, direct, em-paper or direct-paper", "-generations: model %q uses lle, which has no stochastic weights to sample", clip(c.model))
	}
	Xnew, err := readData(ctx, e.stderr, "in", c.in)
	if err != nil {
		return err
	}
	inStage := engine.StageTime{Name: "input", Seconds: time.Since(tIn).Seconds()}
	q, d := Xnew.Dims()
	if d != meta.D {
		return badInput("pass points with the training data's columns", "-in %q has %d columns but model %q was fitted on d = %d", clip(c.in), d, clip(c.model), meta.D)
	}
	sol, err := parseSolver(meta.Solver)
	if err != nil {
		return badInput(resave, "model %q: %v", clip(c.model), err)
	}
	if err := checkSpace(genNeeds(c.out, true, c.generations, q, meta.Dim, c.analysis), int64(c.generations)+4); err != nil {
		return err
	}
	prog := newRunProgress(e, c.quiet)
	defer prog.close()
	m, restore, err := restoreModel(ctx, prog, sv, c.model, c.workers, sol)
	if err != nil {
		return err
	}
	sum := summary{Command: "transform", Method: m.Method.String(), Input: c.in, Model: c.model, N: q, ModelN: m.N, D: d, K: m.K, P: m.Dim,
		Backend: m.Report.Backend, Workers: m.Report.Workers, Solver: solverName(sol),
		Settings: map[string]any{"solver": solverName(sol), "workers": c.workers},
		Stages:   []engine.StageTime{inStage, restore}, Notes: uncheckedNote(meta, c.model)}
	var gs *genSettings
	if c.generations > 0 {
		gs = c.analysis.genSettings(c.generations, c.covScale)
		if c.baseOnly {
			gs.Frame = "" // nothing is drawn in a frame: the base embedding is combined
		}
		gs.addTo(sum.Settings)
		sum.Settings["seed"], sum.Settings["base_only"] = c.seed, c.baseOnly
	}

	t0 := time.Now()
	prog.update("transform", 0, 0, false)
	Y, err := m.Transform(ctx, Xnew)
	if err != nil {
		return err
	}
	// The write is the "write" stage's (it was counted in both).
	sum.Stages = append(sum.Stages, engine.StageTime{Name: "transform", Seconds: time.Since(t0).Seconds()})
	if err := out.write("out", c.out, func(p string) error { return dataio.WriteMatrix(p, Y) }); err != nil {
		return err
	}
	prog.update("transform", 0, 0, true)

	var acc *spreadAcc
	if c.analysis.uncertainty {
		acc = newSpreadAcc(q, m.Dim)
	}
	var buf mat.Dense // every generation's training embedding is drawn into the same matrix
	for g := 0; g < c.generations; g++ {
		prog.update("generate", g, c.generations, false)
		t0 := time.Now()
		gr := gs.genReport(g, c.seed)
		var Ytr *mat.Dense // nil: the base embedding
		if !c.baseOnly {
			rep, err := m.GenerateTo(ctx, &buf, c.seed, g, c.covScale, c.analysis.frame)
			if err != nil {
				return err
			}
			Ytr = &buf
			gr.Stages, gr.Eigen = rep.Stages, rep.Eigen
			if sum.Backend == "" {
				sum.Backend = rep.Backend
			}
		}
		tNew := time.Now()
		Yg, err := m.TransformSampleOnto(ctx, Xnew, Ytr, c.seed, g, c.covScale)
		if err != nil {
			return err
		}
		// The new points' draws are a stage of the generation's own (they were in no stage,
		// a review of session 35: 30-53% of a transform run with 3000 new points).
		gr.Stages = append(gr.Stages, engine.StageTime{Name: "new points", Seconds: time.Since(tNew).Seconds()})
		gr.Seconds = time.Since(t0).Seconds() // the generation and the new points' draws
		// Generation g's frame is mapped onto the base frame by the alignment of its training
		// embedding; with -base-only the points are in the base frame already.
		tAlign := time.Now()
		aligned := Yg
		if Ytr != nil && (c.analysis.align || acc != nil) {
			aligned = bench.FitAlignment(m.Embedding, Ytr, false).Apply(Yg)
		}
		if acc != nil {
			acc.add(aligned)
		}
		if c.analysis.align && Ytr != nil {
			if c.analysis.alignScale {
				Yg = bench.FitAlignment(m.Embedding, Ytr, true).Apply(Yg)
			} else {
				Yg = aligned
			}
		}
		if acc != nil || c.analysis.align && Ytr != nil {
			name := "align"
			if Ytr == nil { // -base-only: nothing is aligned, the time is the spread's
				name = "uncertainty"
			}
			gr.Stages = append(gr.Stages, engine.StageTime{Name: name, Seconds: time.Since(tAlign).Seconds()})
		}
		path := genPath(c.out, g)
		if err := out.write("out", path, func(p string) error { return dataio.WriteMatrix(p, Yg) }); err != nil {
			return err
		}
		gr.File = path
		sum.Generations = append(sum.Generations, gr)
	}
	prog.update("generate", c.generations, c.generations, true)
	sum.addGenStages()
	if acc != nil {
		mean, spread := acc.result()
		if err := writeUncertainty(c.out, mean, spread, &out); err != nil {
			return err
		}
		sp, mp := uncertaintyFiles(c.out)
		sum.Uncertainty = newUncertaintyReport(spread, acc.g, sp+", "+mp)
	}
	if sum.Backend == "" {
		sum.Backend = "default"
	}
	return finish(ctx, e, prog, &sum, start, c.jsonPath, c.quiet, &out)
}

// transformUsage writes the help text of the transform command.
func transformUsage(w io.Writer) {
	var c transformConfig
	transformFlags(&c).usage(w, transformSynopsis, transformAbout)
}
