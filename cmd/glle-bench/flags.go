package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"glle/bench"
	"glle/engine"
	"glle/parallel"
)

// errHelp is returned by the parsers when -h, -help or "help" was asked for; the config that
// comes with it names the topic.
var errHelp = errors.New("help requested")

// inputError is a problem with what the user passed: exit status 2, printed as
// "glle-bench: <problem>: <fix>".
type inputError struct {
	problem, fix string
}

func (e *inputError) Error() string {
	if e.fix == "" {
		return e.problem
	}
	return e.problem + ": " + e.fix
}

func badInput(fix, format string, a ...any) error {
	return &inputError{problem: fmt.Sprintf(format, a...), fix: fix}
}

// quietUsage is the help of -q for the commands that report progress (report.go: progress;
// 5 s and a minute are plainAfter and plainEvery).
const quietUsage = "no progress and no summary on stderr (progress: a live line on a terminal; elsewhere, " +
	"once the run has taken 5 s, a line per finished stage and one a minute during a longer one)"

// flagSpec documents one flag in the usage text.
type flagSpec struct {
	name, arg, def, usage string
}

// flags wraps a flag.FlagSet and remembers the declaration order and the documented
// defaults, so the usage text lists flags in a sensible order with their defaults.
type flags struct {
	fs    *flag.FlagSet
	specs []flagSpec
}

func newFlags(name string) *flags {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	return &flags{fs: fs}
}

func (f *flags) str(p *string, name, def, arg, usage string, defText ...string) {
	f.fs.StringVar(p, name, def, usage)
	d := def
	if d == "" {
		d = "none"
	}
	d = pick(defText, d)
	f.specs = append(f.specs, flagSpec{name, arg, d, usage})
}

// decimalInt, decimalU64 and decimalFloat are flag values written in decimal only, as the data
// readers take numbers: the flag package's own also read Go's spellings (-k 0x10 was 16, 1_0
// was 10, -cov-scale 0x1p-2 was 0.25), which a user trial found.
type (
	decimalInt   int
	decimalU64   uint64
	decimalFloat float64
)

// errNotDecimal is the Set error of the decimal flag values for a non-decimal spelling.
var errNotDecimal = errors.New("write the number in decimal, without a base prefix or '_'")

// goSpelling reports whether s uses one of Go's number spellings beyond decimal: a digit
// separator '_' or a base prefix 0x, 0o or 0b (after an optional sign).
func goSpelling(s string) bool {
	t := strings.TrimLeft(s, "+-")
	return strings.Contains(s, "_") || len(t) > 1 && t[0] == '0' && strings.ContainsRune("xXoObB", rune(t[1]))
}

// setDecimal sets *dst to parse(s) for a decimal spelling s, with the flag package's error
// wording otherwise (the Set method of each decimal flag value).
func setDecimal[T any](dst *T, s string, parse func(string) (T, error)) error {
	if goSpelling(s) {
		return errNotDecimal
	}
	x, err := parse(s)
	if err != nil {
		return numError(err) // as the flag package: out of range too
	}
	*dst = x
	return nil
}

func (v *decimalInt) Set(s string) error {
	return setDecimal(v, s, func(s string) (decimalInt, error) {
		n, err := strconv.ParseInt(s, 10, strconv.IntSize)
		return decimalInt(n), err
	})
}

func (v *decimalU64) Set(s string) error {
	return setDecimal(v, s, func(s string) (decimalU64, error) {
		n, err := strconv.ParseUint(s, 10, 64)
		return decimalU64(n), err
	})
}

func (v *decimalFloat) Set(s string) error {
	return setDecimal(v, s, func(s string) (decimalFloat, error) {
		x, err := strconv.ParseFloat(s, 64)
		return decimalFloat(x), err
	})
}

func (v *decimalInt) String() string   { return strconv.Itoa(int(*v)) }
func (v *decimalU64) String() string   { return strconv.FormatUint(uint64(*v), 10) }
func (v *decimalFloat) String() string { return strconv.FormatFloat(float64(*v), 'g', -1, 64) }

// numError turns a strconv error into the flag package's own wording ("parse error", "value out
// of range"), so the messages stay as they were.
func numError(err error) error {
	if errors.Is(err, strconv.ErrRange) {
		return errors.New("value out of range")
	}
	return errors.New("parse error")
}

func (f *flags) int(p *int, name string, def int, usage string, defText ...string) {
	*p = def
	f.fs.Var((*decimalInt)(p), name, usage)
	f.specs = append(f.specs, flagSpec{name, "N", pick(defText, fmt.Sprint(def)), usage})
}

func (f *flags) u64(p *uint64, name string, def uint64, usage string, defText ...string) {
	*p = def
	f.fs.Var((*decimalU64)(p), name, usage)
	f.specs = append(f.specs, flagSpec{name, "S", pick(defText, fmt.Sprint(def)), usage})
}

func (f *flags) float(p *float64, name string, def float64, arg, usage string, defText ...string) {
	*p = def
	f.fs.Var((*decimalFloat)(p), name, usage)
	f.specs = append(f.specs, flagSpec{name, arg, pick(defText, fmt.Sprint(def)), usage})
}

func (f *flags) boolean(p *bool, name, usage string) {
	f.fs.BoolVar(p, name, false, usage)
	f.specs = append(f.specs, flagSpec{name, "", "false", usage})
}

func pick(s []string, def string) string {
	if len(s) > 0 {
		return s[0]
	}
	return def
}

// parse parses args and turns every flag package error into one inputError.
func (f *flags) parse(cmd string, args []string) (set map[string]bool, err error) {
	if err := f.fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil, errHelp
		}
		return nil, badInput(fmt.Sprintf("run 'glle-bench %s -h' for the flags", cmd), "%s", oneLine(err.Error()))
	}
	if f.fs.NArg() > 0 {
		return nil, badInput(fmt.Sprintf("every option is a flag; run 'glle-bench %s -h'", cmd), "unexpected argument %q", clip(f.fs.Arg(0)))
	}
	set = map[string]bool{}
	f.fs.Visit(func(fl *flag.Flag) { set[fl.Name] = true })
	return set, nil
}

// usage writes the synopsis and every flag with its default.
func (f *flags) usage(w io.Writer, synopsis, about string) {
	fmt.Fprintf(w, "usage: %s\n\n%s\n\nflags:\n", synopsis, about)
	for _, s := range f.specs {
		head := "-" + s.name
		if s.arg != "" {
			head += " " + s.arg
		}
		if strings.HasSuffix(s.usage, "(required)") {
			fmt.Fprintf(w, "  %-22s %s\n", head, s.usage)
			continue
		}
		fmt.Fprintf(w, "  %-22s %s (default %s)\n", head, s.usage, s.def)
	}
}

func oneLine(s string) string {
	s = strings.TrimSpace(s)
	s = strings.ReplaceAll(s, "\r", " ")
	return strings.ReplaceAll(s, "\n", "; ")
}

func clip(s string) string {
	if len(s) > 60 {
		return s[:60] + "..."
	}
	return s
}

// Data file formats the binary reads and writes, by extension.
var matrixExts = []string{".npy", ".csv", ".tsv", ".txt"}

// notDataExts are extensions of files that are not data files of this binary: generate
// refuses a -out prefix that ends in one (its files would be called G.json_gen000.npy).
var notDataExts = []string{".json", ".png", ".npz", ".pdf", ".svg", ".jpg", ".jpeg", ".mat", ".h5", ".pkl", ".parquet", ".xlsx"}

// checkOutName refuses an output file name whose stem (the name without its extension) is
// empty, such as -out .npy: it wrote the hidden file .npy and generations _gen000.npy.
func checkOutName(flagName, path string) error {
	if path == "" || streamFD(path) >= 0 {
		return nil
	}
	if base := filepath.Base(path); strings.TrimSuffix(base, filepath.Ext(base)) == "" {
		// The example quoted: the extension may end in white space (-json ". ", a fuzz find).
		return badInput(fmt.Sprintf("put a name before the extension, e.g. %q", "Y"+filepath.Ext(base)), "-%s %q has no file name before its extension", flagName, clip(path))
	}
	return nil
}

// checkOutExt is checkMatrixExt and checkOutName for an output data file.
func checkOutExt(flagName, path string) error {
	if err := checkMatrixExt(flagName, path); err != nil {
		return err
	}
	return checkOutName(flagName, path)
}

func checkMatrixExt(flagName, path string) error {
	ext := strings.ToLower(filepath.Ext(path))
	for _, e := range matrixExts {
		if ext == e {
			return nil
		}
	}
	return badInput("use a .npy, .csv, .tsv or .txt file name", "-%s %q has an unknown extension %q", flagName, clip(path), ext)
}

func checkDataset(name string) error {
	for _, d := range bench.DatasetNames() {
		if strings.EqualFold(name, d) {
			return nil
		}
	}
	return badInput("use one of "+strings.Join(bench.DatasetNames(), ", "), "unknown dataset %q", clip(name))
}

func parseMethod(s string) (engine.Method, error) {
	m, err := engine.ParseMethod(s)
	if err != nil {
		return 0, badInput("use one of lle, em, direct, em-paper, direct-paper", "unknown method %q", clip(s))
	}
	return m, nil
}

func parseSolver(s string) (engine.Solver, error) {
	switch strings.ToLower(s) {
	case "auto":
		return engine.SolverAuto, nil
	case "sparse":
		return engine.SolverSparse, nil
	case "dense":
		return engine.SolverDense, nil
	case "sparse-cholesky":
		return engine.SolverSparseCholesky, nil
	}
	return 0, badInput("use auto, sparse, dense or sparse-cholesky", "unknown solver %q", clip(s))
}

func solverName(s engine.Solver) string {
	switch s {
	case engine.SolverSparse:
		return "sparse"
	case engine.SolverDense:
		return "dense"
	case engine.SolverSparseCholesky:
		return "sparse-cholesky"
	}
	return "auto"
}

func parseRegMode(s string) (engine.RegMode, error) {
	switch strings.ToLower(s) {
	case "trace":
		return engine.RegTrace, nil
	case "absolute":
		return engine.RegAbsolute, nil
	}
	return 0, badInput("use trace or absolute", "unknown regularization mode %q", clip(s))
}

func regModeName(m engine.RegMode) string {
	if m == engine.RegAbsolute {
		return "absolute"
	}
	return "trace"
}

func parseScaling(s string) (engine.Scaling, error) {
	switch strings.ToLower(s) {
	case "unit":
		return engine.UnitNorm, nil
	case "paper":
		return engine.PaperScaling, nil
	}
	return 0, badInput("use unit or paper", "unknown scaling %q", clip(s))
}

func scalingName(s engine.Scaling) string {
	if s == engine.PaperScaling {
		return "paper"
	}
	return "unit"
}

func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

// ---------------------------------------------------------------------------------------
// dataset

type datasetConfig struct {
	name     string
	n        int
	seed     uint64
	out      string
	colorOut string
	quiet    bool
}

const datasetSynopsis = "glle-bench dataset -name NAME -n N -seed S -out X.npy [-color-out t.npy]"

func datasetFlags(c *datasetConfig) *flags {
	f := newFlags("dataset")
	f.str(&c.name, "name", "", "NAME", "dataset: "+strings.Join(bench.DatasetNames(), ", ")+" (required)")
	f.int(&c.n, "n", 5000, "number of points (before removal for swissroll-hole and severed-sphere)")
	f.u64(&c.seed, "seed", 1, "random seed; the same seed gives the same points")
	f.str(&c.out, "out", "", "X.npy", "output points, n x 3 (.npy, .csv, .tsv or .txt by extension) (required)")
	f.str(&c.colorOut, "color-out", "", "t.npy", "also write the colour (manifold coordinate), n x 1")
	f.boolean(&c.quiet, "q", "no summary on stderr")
	return f
}

func parseDataset(args []string) (datasetConfig, error) {
	var c datasetConfig
	f := datasetFlags(&c)
	if _, err := f.parse("dataset", args); err != nil {
		return c, err
	}
	switch {
	case c.name == "":
		return c, badInput("add -name "+strings.Join(bench.DatasetNames(), "|"), "-name is required")
	case c.out == "":
		return c, badInput("add -out X.npy", "-out is required")
	case c.n < 1:
		return c, badInput("use -n 1 or more", "-n %d: the number of points must be positive", c.n)
	}
	if err := checkDataset(c.name); err != nil {
		return c, err
	}
	if err := checkOutExt("out", c.out); err != nil {
		return c, err
	}
	if c.colorOut != "" {
		if err := checkOutExt("color-out", c.colorOut); err != nil {
			return c, err
		}
		if samePath(c.colorOut, c.out) {
			return c, badInput("give -color-out its own file name", "-color-out and -out are the same file")
		}
	}
	return c, nil
}

// ---------------------------------------------------------------------------------------
// embed

type embedConfig struct {
	in, dataset string
	n           int
	settings    engine.Settings
	seed        uint64
	out         string
	model       string
	generations int
	covScale    float64
	jsonPath    string
	plot        string
	color       string
	quiet       bool
	analysis    analysisOpts // -align, -align-scale, -uncertainty, -metrics (analysis.go)
}

const embedSynopsis = "glle-bench embed (-in X.npy|X.csv | -dataset NAME [-n N]) -method METHOD -out Y.npy [flags]"

type embedRaw struct {
	method, solver, regMode, scaling string
	maxMem                           string
	k, dim, emIters, workers         int
	reg, emTol, directRidge          float64
}

func embedFlags(c *embedConfig, r *embedRaw) *flags {
	f := newFlags("embed")
	f.str(&c.in, "in", "", "X.npy", "input data, one point per row (.npy float64/float32 2-D, or .csv/.tsv/.txt)")
	f.str(&c.dataset, "dataset", "", "NAME", "use a built-in dataset instead of -in: "+strings.Join(bench.DatasetNames(), ", "))
	f.int(&c.n, "n", 5000, "points of -dataset (before removal for the datasets with holes)")
	f.str(&r.method, "method", "lle", "METHOD", "lle, em, direct, em-paper or direct-paper")
	f.int(&r.k, "k", 10, "neighbours per point")
	f.int(&r.dim, "dim", 2, "embedding dimension p (1 <= p < d)")
	f.u64(&c.seed, "seed", 1, "seed of the dataset (-dataset) and of the generations, recorded in -model for 'generate' and 'transform'; the fit itself draws nothing")
	f.str(&c.out, "out", "", "Y.npy", "output embedding of the fit, n x p (.npy, .csv, .tsv or .txt by extension) (required)")
	f.str(&c.model, "model", "", "DIR", "save the fitted model to DIR (created if missing) for 'glle-bench generate'")
	f.int(&r.emIters, "em-iters", 0, "EM iterations: em-paper runs exactly this many, em at most this many", "10 for em-paper; for em max(200, 64 (k-1)), stopping earlier at -em-tol")
	f.float(&r.emTol, "em-tol", 1e-10, "TOL", "em stops when the largest relative change of sigma_i is below TOL")
	f.float(&r.reg, "reg", 1e-3, "R", "LLE ridge regularization", "1e-3, or 1e-7 with -reg-mode absolute")
	f.str(&r.regMode, "reg-mode", "trace", "MODE", "trace (ridge R*tr(G_i)) or absolute (ridge R, the authors' code)")
	f.float(&r.directRidge, "direct-ridge", 0, "R", "ridge added to every direct-paper X_i^T X_i + Y_i^T Y_i (0: none, and a singular one is an error)")
	f.str(&r.scaling, "scaling", "unit", "S", "unit (unit-norm eigenvectors) or paper ((1/n) Y^T Y = I)")
	f.str(&r.solver, "solver", "auto", "S", "eigensolver: auto, sparse, dense (O(n^3), n <= 20000) or sparse-cholesky (Cholesky of M instead of the LU of B = I - W)")
	f.int(&r.workers, "workers", 0, "worker goroutines (0: all CPUs); results do not depend on it")
	f.str(&r.maxMem, "max-mem", "", "SIZE", "refuse fits whose estimated peak memory exceeds SIZE (bytes, or 500M, 6G; 0: no limit)", "the physical memory")
	f.int(&c.generations, "generations", 0, "also write G generations Y_gen000 ... (em, direct, em-paper, direct-paper)")
	f.float(&c.covScale, "cov-scale", 1, "A", "covariance scale a of the generations (a*Omega_i or a*Gamma_i)")
	f.str(&c.jsonPath, "json", "", "REPORT.json", "write the run summary as JSON")
	f.str(&c.plot, "plot", "", "Y.png", fmt.Sprintf("plot the embedding and its first %d generations as PNG (with more, the last panel and a summary note say how many are shown)", maxPlotGenerations))
	f.str(&c.color, "color", "", "t.npy", "colour of the plotted points, n values", "the dataset's manifold coordinate, or the first input column")
	c.analysis.register(f, true)
	f.boolean(&c.quiet, "q", quietUsage)
	return f
}

func parseEmbed(args []string) (embedConfig, error) {
	var c embedConfig
	var r embedRaw
	f := embedFlags(&c, &r)
	set, err := f.parse("embed", args)
	if err != nil {
		return c, err
	}
	s := &c.settings
	if s.Method, err = parseMethod(r.method); err != nil {
		return c, err
	}
	if s.Solver, err = parseSolver(r.solver); err != nil {
		return c, err
	}
	if s.RegMode, err = parseRegMode(r.regMode); err != nil {
		return c, err
	}
	if s.Scaling, err = parseScaling(r.scaling); err != nil {
		return c, err
	}
	s.K, s.Dim, s.EMIters, s.Workers, s.EMTol, s.DirectRidge, s.Seed = r.k, r.dim, r.emIters, r.workers, r.emTol, r.directRidge, c.seed
	s.Reg = r.reg
	if r.maxMem != "" {
		b, err := engine.ParseBytes(r.maxMem)
		if err != nil {
			return c, badInput("e.g. -max-mem 6G", "-max-mem: %v", err)
		}
		s.MaxMemory = b
		if b == 0 {
			s.MaxMemory = -1 // no limit
		}
	}
	if !set["reg"] && s.RegMode == engine.RegAbsolute {
		s.Reg = 1e-7
	}
	switch {
	case c.in == "" && c.dataset == "":
		return c, badInput("add -in X.npy or -dataset NAME", "no input data")
	case c.in != "" && c.dataset != "":
		return c, badInput("give only one of them", "both -in and -dataset given")
	case c.in != "" && set["n"]:
		return c, badInput("drop -n (the file's rows are the points)", "-n applies only to -dataset")
	case c.out == "":
		return c, badInput("add -out Y.npy", "-out is required")
	case s.K < 1:
		return c, badInput("use -k 1 or more", "-k %d: the number of neighbours must be at least 1", s.K)
	case s.Dim < 1:
		return c, badInput("use -dim 1 or more", "-dim %d: the embedding dimension must be at least 1", s.Dim)
	case c.dataset != "" && c.n < 0:
		return c, badInput("use a positive -n", "-n %d: negative number of points", c.n)
	case c.dataset != "" && c.n <= s.K:
		return c, badInput("use a larger -n or a smaller -k", "-n %d points but -k %d neighbours: need n > k", c.n, s.K)
	case c.dataset != "" && s.Dim >= 3:
		return c, badInput("use -dim 1 or 2", "-dim %d but dataset %s has only d = 3 columns: need dim < d", s.Dim, c.dataset)
	case !finite(s.Reg):
		return c, badInput("use a small positive value such as 1e-3", "-reg %v: the regularization must be a finite positive number", s.Reg)
	case !(s.Reg > 0):
		return c, badInput("use a small positive value such as 1e-3", "-reg %v: the regularization must be positive", s.Reg)
	case !finite(s.EMTol):
		return c, badInput("use a small positive value such as 1e-10", "-em-tol %v: must be a finite positive number", s.EMTol)
	case !(s.EMTol > 0):
		return c, badInput("use a small positive value such as 1e-10", "-em-tol %v: must be positive", s.EMTol)
	case s.EMTol >= 1:
		return c, badInput("use a small positive value such as 1e-10", "-em-tol %v: a relative tolerance must be below 1 (at 1 or more em stops after its first iteration)", s.EMTol)
	case set["em-iters"] && s.EMIters < 1:
		return c, badInput("use -em-iters 1 or more", "-em-iters %d: must be at least 1", s.EMIters)
	case !finite(s.DirectRidge):
		return c, badInput("use 0 or a small positive value", "-direct-ridge %v: must be a finite non-negative number", s.DirectRidge)
	case !(s.DirectRidge >= 0):
		return c, badInput("use 0 or a small positive value", "-direct-ridge %v: must be a non-negative number", s.DirectRidge)
	case s.Workers < 0 || s.Workers > parallel.MaxWorkers:
		return c, badInput("use 0 (all CPUs) or a count from 1 to 1024", "-workers %d: out of range", s.Workers)
	case c.generations < 0:
		return c, badInput("use -generations 0 or more", "-generations %d: negative count", c.generations)
	case c.generations > 0 && !s.Method.Generative():
		return c, badInput("use -method em, direct, em-paper or direct-paper", "-generations needs a generative method, lle has no stochastic weights")
	case !finite(c.covScale):
		return c, badInput("use a non-negative scale such as 1", "-cov-scale %v: the covariance scale must be a finite non-negative number", c.covScale)
	case !(c.covScale >= 0):
		return c, badInput("use a non-negative scale such as 1", "-cov-scale %v: the covariance scale must be a non-negative number", c.covScale)
	case c.color != "" && c.plot == "":
		return c, badInput("add -plot Y.png or drop -color", "-color only colours a -plot")
	case set["em-iters"] && s.Method != engine.EM && s.Method != engine.EMPaper:
		return c, badInput("drop -em-iters, or use -method em or em-paper", "-em-iters applies to the EM methods, not %s", s.Method)
	case set["em-tol"] && s.Method != engine.EM:
		return c, badInput("drop -em-tol, or use -method em", "-em-tol applies to em (em-paper runs a fixed number of iterations), not %s", s.Method)
	case set["direct-ridge"] && s.Method != engine.DirectPaper:
		return c, badInput("drop -direct-ridge, or use -method direct-paper", "-direct-ridge applies to direct-paper, not %s", s.Method)
	case set["cov-scale"] && c.generations == 0:
		return c, badInput("add -generations G, or drop -cov-scale", "-cov-scale applies to the generations, and none are drawn")
	case set["seed"] && c.generations == 0 && c.dataset == "" && c.model == "":
		// As transform refuses it: the seed would do nothing. With -model it is recorded
		// as the default seed of later generate and transform runs.
		return c, badInput("add -generations G or -model DIR (which records the seed for 'generate'), or drop -seed", "-seed applies to -dataset and to the generations, and neither is used")
	}
	if err := c.analysis.check(c.generations, set); err != nil {
		return c, err
	}
	if c.dataset != "" {
		if err := checkDataset(c.dataset); err != nil {
			return c, err
		}
	}
	if err := checkOutExt("out", c.out); err != nil {
		return c, err
	}
	if c.in != "" {
		if err := checkMatrixExt("in", c.in); err != nil {
			return c, err
		}
	}
	if c.color != "" {
		if err := checkMatrixExt("color", c.color); err != nil {
			return c, err
		}
	}
	if c.plot != "" && strings.ToLower(filepath.Ext(c.plot)) != ".png" {
		return c, badInput("use a .png file name", "-plot %q is not a .png file", clip(c.plot))
	}
	if err := checkOutName("plot", c.plot); err != nil {
		return c, err
	}
	if err := checkJSONName(c.jsonPath); err != nil {
		return c, err
	}
	outs := append([]string{c.out}, c.analysis.outputs(c.out, c.plot != "")...)
	outs = append(outs, c.jsonPath, c.plot)
	if c.model != "" {
		// A model folder's file names are fixed: the fix is another folder (a user trial:
		// "choose another output name" for embed -in m/X.npy -model m).
		for _, p := range modelFiles(c.model) {
			for _, in := range []string{c.in, c.color} {
				if in != "" && samePath(p, in) {
					return c, badInput("use another -model folder", "-model %q would overwrite the input %q with its %s", clip(c.model), clip(in), filepath.Base(p))
				}
			}
		}
		outs = append(outs, modelFiles(c.model)...)
	}
	return c, checkPaths([]string{c.in, c.color}, outs, c.out, c.generations)
}

// genPath returns the file of generation g beside out: Y.npy -> Y_gen000.npy.
func genPath(out string, g int) string {
	ext := filepath.Ext(out)
	return fmt.Sprintf("%s_gen%03d%s", strings.TrimSuffix(out, ext), g, ext)
}

// checkPaths fails when two of the outputs outs, or an output and one of the inputs, are the
// same file, before any work is done (outputs.write checks again as it writes). gens > 0 adds
// the generation files beside genOut (genPath(genOut, g) for g < gens), recognised by name.
// Empty paths are ignored.
func checkPaths(inputs, outs []string, genOut string, gens int) error {
	inputs = slices.DeleteFunc(slices.Clone(inputs), func(p string) bool { return p == "" })
	outs = slices.DeleteFunc(slices.Clone(outs), func(p string) bool { return p == "" })
	for i, p := range outs {
		for _, q := range outs[:i] {
			if samePath(p, q) {
				return badInput("give every output its own file name", "output %q is given twice", clip(p))
			}
		}
		for _, in := range inputs {
			if samePath(p, in) {
				return badInput("choose another output name", "output %q would overwrite the input %q", clip(p), clip(in))
			}
		}
	}
	if gens > 0 {
		for _, p := range inputs {
			if isGenFile(p, genOut, gens) {
				return badInput("choose another output name", "generation file %q would overwrite the input", clip(p))
			}
		}
		for _, p := range outs {
			if isGenFile(p, genOut, gens) {
				return badInput("give every output its own file name", "output %q is also a generation file", clip(p))
			}
		}
	}
	return nil
}

// checkJSONName refuses a -json name without the .json extension: a data file named by
// mistake was replaced by the summary, and "-json -q" took the next flag as the file name
// (before session 32). An existing device or pipe (/dev/stdout) is accepted.
func checkJSONName(path string) error {
	if err := checkOutName("json", path); err != nil {
		return err
	}
	if path == "" || strings.EqualFold(filepath.Ext(path), ".json") || streamFD(path) >= 0 {
		return nil
	}
	if fi, err := os.Stat(path); err == nil && !fi.Mode().IsRegular() && !fi.IsDir() {
		return nil
	}
	return badInput("use a .json file name (or /dev/stdout)", "-json %q is not a .json file name", clip(path))
}

// isGenFile reports whether p is one of the files genPath(out, g), g < gens.
func isGenFile(p, out string, gens int) bool {
	ext := filepath.Ext(out)
	prefix := filepath.Base(strings.TrimSuffix(out, ext)) + "_gen"
	base := filepath.Base(p)
	if !strings.HasPrefix(base, prefix) || !strings.HasSuffix(base, ext) || len(base) < len(prefix)+len(ext) {
		return false
	}
	g, err := strconv.Atoi(base[len(prefix) : len(base)-len(ext)])
	return err == nil && g >= 0 && g < gens && samePath(p, genPath(out, g))
}

// ---------------------------------------------------------------------------------------
// generate

type generateConfig struct {
	model       string
	generations int
	covScale    float64
	seed        uint64
	seedSet     bool   // -seed given; otherwise the model's seed is used
	out         string // prefix
	ext         string // output extension (.npy unless the prefix ends in one)
	solver      string // "" = the model's
	workers     int
	jsonPath    string
	quiet       bool
	analysis    analysisOpts // -align, -align-scale, -uncertainty, -metrics (analysis.go)
}

const generateSynopsis = "glle-bench generate -model DIR -generations G [-cov-scale A] [-seed S] -out PREFIX"

func generateFlags(c *generateConfig) *flags {
	f := newFlags("generate")
	f.str(&c.model, "model", "", "DIR", "model directory written by 'glle-bench embed -model DIR' (required)")
	f.int(&c.generations, "generations", 0, "number of generations to write, at least 1 (required)")
	f.float(&c.covScale, "cov-scale", 1, "A", "covariance scale a (a*Omega_i or a*Gamma_i)")
	f.u64(&c.seed, "seed", 0, "seed of the draws; the model's (the embed run's -seed) reproduces its generations exactly", "the model's")
	f.str(&c.out, "out", "", "PREFIX", "writes PREFIX_gen000.npy ...; a PREFIX ending in .npy, .csv, .tsv or .txt picks the format, one ending in another file type's extension (.json, .png, ...) is refused (required)")
	f.str(&c.solver, "solver", "", "S", "eigensolver: auto, sparse, dense or sparse-cholesky", "the model's")
	f.int(&c.workers, "workers", 0, "worker goroutines (0: all CPUs); results do not depend on it")
	f.str(&c.jsonPath, "json", "", "REPORT.json", "write the run summary as JSON")
	c.analysis.register(f, true)
	f.boolean(&c.quiet, "q", quietUsage)
	return f
}

func parseGenerate(args []string) (generateConfig, error) {
	var c generateConfig
	f := generateFlags(&c)
	set, err := f.parse("generate", args)
	if err != nil {
		return c, err
	}
	switch {
	case c.model == "":
		return c, badInput("add -model DIR (written by 'glle-bench embed -model DIR')", "-model is required")
	case c.out == "":
		return c, badInput("add -out PREFIX", "-out is required")
	case !set["generations"]:
		return c, badInput("add -generations N (1 or more)", "-generations is required: the number of embeddings to draw")
	case c.generations < 1:
		return c, badInput("use -generations 1 or more", "-generations %d: need at least one generation", c.generations)
	case !finite(c.covScale):
		return c, badInput("use a non-negative scale such as 1", "-cov-scale %v: the covariance scale must be a finite non-negative number", c.covScale)
	case !(c.covScale >= 0):
		return c, badInput("use a non-negative scale such as 1", "-cov-scale %v: the covariance scale must be a non-negative number", c.covScale)
	case c.workers < 0 || c.workers > parallel.MaxWorkers:
		return c, badInput("use 0 (all CPUs) or a count from 1 to 1024", "-workers %d: out of range", c.workers)
	}
	c.seedSet = set["seed"]
	if err := c.analysis.check(c.generations, set); err != nil {
		return c, err
	}
	if c.solver != "" {
		if _, err := parseSolver(c.solver); err != nil {
			return c, err
		}
	}
	given := c.out
	c.ext = ".npy"
	ext := strings.ToLower(filepath.Ext(c.out))
	for _, e := range matrixExts {
		if ext == e {
			c.ext = filepath.Ext(c.out)
			c.out = strings.TrimSuffix(c.out, c.ext)
		}
	}
	if c.out == "" || strings.HasSuffix(c.out, "/") || strings.HasSuffix(c.out, "/.") || c.out == "." {
		return c, badInput("give a file name prefix such as out/run", "-out %q has no file name", clip(given))
	}
	// A prefix ending in the extension of another kind of file (G.json) is almost surely a
	// file name given by mistake: it wrote G.json_gen000.npy, where embed refuses -out Y.json.
	if slices.Contains(notDataExts, ext) {
		return c, badInput("give a prefix without an extension, or ending in .npy, .csv, .tsv or .txt for that format (e.g. -out "+clip(strings.TrimSuffix(given, filepath.Ext(given)))+")",
			"-out %q is a prefix of data files, and %s is not a data format", clip(given), ext)
	}
	if err := checkJSONName(c.jsonPath); err != nil {
		return c, err
	}
	outs := append([]string{c.jsonPath}, c.analysis.outputs(c.out+c.ext, false)...)
	return c, checkPaths(modelFiles(c.model), outs, c.out+c.ext, c.generations)
}

// genFile is the file of generation g of a generate run.
func (c generateConfig) genFile(g int) string { return genPath(c.out+c.ext, g) }

// ---------------------------------------------------------------------------------------
// figures

type figuresConfig struct {
	out     string
	n       int
	k       int
	seed    uint64
	solver  engine.Solver
	workers int
	figs    map[int]bool
	quiet   bool
}

const figuresSynopsis = "glle-bench figures -out DIR [-n 5000] [-seed S]"

func figuresFlags(c *figuresConfig, solver, figs *string) *flags {
	f := newFlags("figures")
	f.str(&c.out, "out", "", "DIR", "output folder, created if missing (required)")
	f.int(&c.n, "n", 5000, "points per dataset (before removal for the datasets with holes)")
	f.int(&c.k, "k", 10, "neighbours per point")
	f.u64(&c.seed, "seed", 1, "seed of the datasets and the generations")
	f.str(figs, "figs", "2,3,4,5,6", "LIST", "which figures to draw (comma separated subset of 2,3,4,5,6)")
	f.str(solver, "solver", "auto", "S", "eigensolver: auto, sparse, dense or sparse-cholesky")
	f.int(&c.workers, "workers", 0, "worker goroutines (0: all CPUs)")
	f.boolean(&c.quiet, "q", quietUsage)
	return f
}

func parseFigures(args []string) (figuresConfig, error) {
	var c figuresConfig
	var solver, figs string
	f := figuresFlags(&c, &solver, &figs)
	if _, err := f.parse("figures", args); err != nil {
		return c, err
	}
	var err error
	if c.solver, err = parseSolver(solver); err != nil {
		return c, err
	}
	switch {
	case c.out == "":
		return c, badInput("add -out DIR", "-out is required")
	case c.k < 1:
		return c, badInput("use -k 1 or more", "-k %d: the number of neighbours must be at least 1", c.k)
	case c.n < 0:
		return c, badInput("use a positive -n", "-n %d: negative number of points", c.n)
	case c.n <= c.k:
		return c, badInput("use a larger -n or a smaller -k", "-n %d points but -k %d neighbours: need n > k", c.n, c.k)
	case c.workers < 0 || c.workers > parallel.MaxWorkers:
		return c, badInput("use 0 (all CPUs) or a count from 1 to 1024", "-workers %d: out of range", c.workers)
	}
	c.figs = map[int]bool{}
	for _, s := range strings.Split(figs, ",") {
		switch strings.TrimSpace(s) {
		case "2":
			c.figs[2] = true
		case "3":
			c.figs[3] = true
		case "4":
			c.figs[4] = true
		case "5":
			c.figs[5] = true
		case "6":
			c.figs[6] = true
		default:
			return c, badInput("use a comma separated subset of 2,3,4,5,6", "-figs %q names an unknown figure", clip(figs))
		}
	}
	return c, nil
}

// ---------------------------------------------------------------------------------------
// top level

// helpConfig asks for a usage text: topic "" is the overview.
type helpConfig struct{ topic string }

var commands = []string{"dataset", "embed", "generate", "figures", "transform", "bench", "help"}

// parseArgs parses a whole command line (without the program name) into one of
// datasetConfig, embedConfig, generateConfig, figuresConfig, transformConfig or helpConfig.
// It writes nothing and never panics; it reads the file system only to compare the named
// paths (two flags naming the same file, through links or different spellings). On -h it
// returns the helpConfig of the command and errHelp.
func parseArgs(args []string) (any, error) {
	if len(args) == 0 {
		return helpConfig{}, badInput("run 'glle-bench help' for the commands", "no command given")
	}
	cmd, rest := args[0], args[1:]
	switch cmd {
	case "dataset":
		c, err := parseDataset(rest)
		return helpOr(c, "dataset", err)
	case "embed":
		c, err := parseEmbed(rest)
		return helpOr(c, "embed", err)
	case "generate":
		c, err := parseGenerate(rest)
		return helpOr(c, "generate", err)
	case "figures":
		c, err := parseFigures(rest)
		return helpOr(c, "figures", err)
	case "transform":
		c, err := parseTransform(rest)
		return helpOr(c, "transform", err)
	case "help", "-h", "-help", "--help":
		// 'help help' is the overview, which says what help does ('help' is one of the
		// topics the error below lists; it was refused as unknown).
		if len(rest) == 0 || slices.Contains([]string{"help", "-h", "-help", "--help"}, rest[0]) {
			return helpConfig{}, nil
		}
		for _, c := range commands[:len(commands)-1] {
			if rest[0] == c && c != "bench" { // 'help bench' is answered by the bench command (run)
				return helpConfig{topic: c}, nil
			}
		}
		return helpConfig{}, badInput("use one of "+strings.Join(commands, ", "), "unknown help topic %q", clip(rest[0]))
	}
	return helpConfig{}, badInput("use one of "+strings.Join(commands, ", ")+" (glle-bench help)", "unknown command %q", clip(cmd))
}

func helpOr(c any, cmd string, err error) (any, error) {
	if errors.Is(err, errHelp) {
		return helpConfig{topic: cmd}, errHelp
	}
	return c, err
}

const overview = `glle-bench: locally linear embedding (LLE) and generative LLE (GLLE) from the command line.

commands:
  dataset   write one of the paper's datasets (swissroll, scurve, swissroll-hole, severed-sphere)
  embed     fit LLE or GLLE to a data file or a dataset, write the embedding, generations, the model
  generate  draw new embeddings from a model saved by 'embed -model DIR' without refitting
  figures   draw the paper's Figs. 2, 3 and 4 as PNG files, the covariance-scale study and uncertainty maps
  transform embed new points with a saved model (LLE weights, or sampled weights per generation)
  bench     end-to-end scaling sweep as a markdown table ('glle-bench bench -h'), -peers adds scikit-learn
  help      this text; 'glle-bench help CMD' or 'glle-bench CMD -h' for one command

Exit status: 0 success, 1 failure (internal, or a full disk), 2 bad input (one line on stderr says what to do),
130 interrupted. Progress goes to stderr (not with -q): a live line on a terminal; elsewhere, once a
run has taken 5 s, a line per finished stage and one a minute during a longer stage (bench: a line
per finished run). Outputs are staged and renamed into place only when the whole run has succeeded:
a failed or interrupted run writes nothing and leaves existing files unchanged (a bench sweep
with failed runs writes its report, the failures marked, then exits 1). New files get mode 0666
less the umask; a replaced file keeps its mode. An input or output that is a named pipe is
waited for until its other end is opened (said on stderr after a second); an interrupt stops
the wait like any other.
`

// writeUsage writes the help text of topic ("" = overview and every command).
func writeUsage(w io.Writer, topic string) {
	var (
		dc datasetConfig
		ec embedConfig
		er embedRaw
		gc generateConfig
		fc figuresConfig
		s1 string
		s2 string
	)
	one := func(t string) {
		switch t {
		case "dataset":
			datasetFlags(&dc).usage(w, datasetSynopsis, "Writes a dataset of the paper as an n x 3 matrix, deterministic per seed.")
		case "embed":
			embedFlags(&ec, &er).usage(w, embedSynopsis,
				"Fits the method, writes the base embedding to -out and, with -generations G, G new embeddings\n"+
					"Y_gen000 ... beside it (same stem and format). -model DIR saves neighbors.npy, weights.npy,\n"+
					"sigma.npy (EM methods), embedding.npy, X.npy and model.json, which generate and transform read,\n"+
					"and for the direct methods gamma.npy (Gamma_i, n x k x k), for inspection only: they recompute\n"+
					"Gamma_i and never read it, so editing or deleting it changes nothing.\n"+
					"With -uncertainty it also writes Y_uncertainty.npy (n) and Y_mean.npy (n x p) beside -out\n"+
					"(same stem and format; with -plot also Y_uncertainty.png, the base embedding coloured by log10 of\n"+
					"the spread, with a colour bar of its range). Panel titles too wide for a panel are wrapped\n"+
					"(and set smaller if need be).")
		case "generate":
			generateFlags(&gc).usage(w, generateSynopsis,
				"Restores a saved model and writes PREFIX_gen000.npy ... With the embed run's -seed (the default:\n"+
					"the model records it), -cov-scale, -frame, -align and -align-scale the files are bit-identical to\n"+
					"the ones 'embed -generations' wrote; model.json's embed_generations records that run's values\n"+
					"(informational: this command's flags decide). The -json report's settings and every generation's\n"+
					"entry (frame, aligned, align_scale) say what the files hold. gamma.npy, for inspection only, is\n"+
					"not read (Gamma_i is recomputed).\n"+
					"With -uncertainty it also writes PREFIX_uncertainty.npy and PREFIX_mean.npy.")
		case "transform":
			transformUsage(w)
		case "figures":
			figuresFlags(&fc, &s1, &s2).usage(w, figuresSynopsis,
				"Writes DIR/fig2_datasets.png (the four datasets in 3-D: S-curve, Swiss roll, Swiss roll with hole,\n"+
					"severed sphere, the paper's severed bowl), DIR/fig3_generations.png (a row per dataset in that order:\n"+
					"LLE, four EM and four direct-sampling generations) and DIR/fig4_cov_scale.png (a row per dataset:\n"+
					"(a) EM's generation 0 at a = 0.01, 0.1, 1, 5, 10, then (b) direct sampling's), generations aligned\n"+
					"onto the LLE embedding; DIR/fig5_cov_scale_study.png (median Procrustes disparity\n"+
					"to LLE and trustworthiness against a, both methods, four datasets) and DIR/fig6_uncertainty.png\n"+
					"(the LLE embedding coloured by the per-point spread of the Fig. 3 generations).\n"+
					"The summary's stages add up to the run: the fits' and generations' stages summed over the figures,\n"+
					"then 'fig N', the rest of figure N's time (its datasets, aligning its generations, Fig. 5's\n"+
					"trustworthiness, drawing and writing the PNG).")
		}
	}
	if topic != "" {
		one(topic)
		return
	}
	fmt.Fprint(w, overview)
	for _, t := range commands[:len(commands)-1] {
		fmt.Fprintln(w)
		one(t)
	}
}
