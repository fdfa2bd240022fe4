package main

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"strconv"
	"strings"
	"time"

	"gonum.org/v1/gonum/mat"

	"glle/bench"
	"glle/bench/dataio"
	"glle/engine"
)

// readData reads the data matrix of flag -name from path; every failure is an inputError,
// except ctx's error when ctx is done while a named pipe is waited for or read (readMatrixFile;
// stderr gets its note).
func readData(ctx context.Context, stderr io.Writer, flagName, path string) (*mat.Dense, error) {
	if err := checkDataFile(flagName, path); err != nil {
		return nil, err
	}
	X, err := readMatrixFile(ctx, stderr, flagName, path)
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	if err != nil {
		return nil, dataFileError(flagName, path, err, "give a 2-D numeric .npy (float or integer dtype) or .csv file with finite values")
	}
	return X, nil
}

// checkDataFile refuses a data file of flag -name that does not exist, cannot be examined, is
// a folder or is an empty regular file, with an inputError.
func checkDataFile(flagName, path string) error {
	if fi, err := os.Stat(path); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return badInput("check the path", "-%s %q: no such file", flagName, clip(path))
		}
		return badInput("check the path and its permissions", "-%s %q cannot be read (%v)", flagName, clip(path), unwrapPath(err))
	} else if fi.IsDir() {
		return badInput("give a data file, not a folder", "-%s %q is a folder", flagName, clip(path))
	} else if fi.Mode().IsRegular() && fi.Size() == 0 { // a pipe's size is 0 before it is read
		return badInput("give a non-empty .npy, .csv, .tsv or .txt file", "-%s %q is empty", flagName, clip(path))
	}
	return nil
}

// dataFileError turns an error of the dataio readers on path into a one-line inputError of
// flag -name; fix is the advice when the reader's message has none of its own.
func dataFileError(flagName, path string, err error, fix string) error {
	msg := strings.TrimPrefix(oneLine(unwrapPath(err).Error()), path+": ")
	if dataio.HasFix(err) {
		fix = "" // the message says what to do
	}
	return badInput(fix, "-%s %q: %s", flagName, clip(path), msg)
}

// colorFix is the advice of -color errors about the file's content.
const colorFix = "give one finite value per point: a 1-D .npy of n values, or an n x 1 (or 1 x n) .npy or .csv matrix"

// readColor reads n colour values for -color: a 1-D .npy of n values, or an n x 1 or 1 x n
// matrix (.npy or text). The file is read once (it may be a named pipe, waited for and read
// as readData does).
func readColor(ctx context.Context, stderr io.Writer, path string, n int) ([]float64, error) {
	if !strings.EqualFold(fileExt(path), ".npy") {
		C, err := readData(ctx, stderr, "color", path)
		if err != nil {
			return nil, err
		}
		r, c := C.Dims()
		return colorValues(path, []int{r, c}, C.RawMatrix().Data, n)
	}
	if err := checkDataFile("color", path); err != nil {
		return nil, err
	}
	a, err := readNPYFile(ctx, stderr, "color", path)
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	if err != nil {
		return nil, dataFileError("color", path, err, colorFix)
	}
	return colorValues(path, a.Shape, a.Floats(), n)
}

// colorValues turns the decoded -color file at path (its shape and its values in row-major
// order) into the colours of n points: the shape must be (n,), (n, 1) or (1, n) and every
// value finite. It returns a copy of v; failures are one-line inputErrors saying what to give.
func colorValues(path string, shape []int, v []float64, n int) ([]float64, error) {
	switch len(shape) {
	case 1:
		if shape[0] != n || len(v) != n {
			return nil, badInput("give one value per point", "-color %q has %d values, the data has %d points", clip(path), shape[0], n)
		}
	case 2:
		r, c := shape[0], shape[1]
		if !(r == n && c == 1 || r == 1 && c == n) || len(v) != n {
			return nil, badInput("give one value per point (a vector or an n x 1 matrix)", "-color %q is %dx%d, the data has %d points", clip(path), r, c, n)
		}
	default:
		dims := make([]string, len(shape))
		for i, d := range shape {
			dims[i] = strconv.Itoa(d)
		}
		return nil, badInput(colorFix, "-color %q is a %d-D array (shape (%s)), the data has %d points", clip(path), len(shape), strings.Join(dims, ", "), n)
	}
	if n < 1 {
		return nil, badInput(colorFix, "-color %q has no values", clip(path))
	}
	for i, x := range v {
		if !finite(x) {
			return nil, badInput("give finite values", "-color %q holds the non-finite value %v at index %d (0-based)", clip(path), x, i)
		}
	}
	return append([]float64(nil), v...), nil
}

func fileExt(path string) string {
	if i := strings.LastIndexByte(path, '.'); i >= 0 && !strings.ContainsRune(path[i:], '/') {
		return path[i:]
	}
	return ""
}

// column returns column j of X.
func column(X *mat.Dense, j int) []float64 {
	n, _ := X.Dims()
	v := make([]float64, n)
	for i := range v {
		v[i] = X.At(i, j)
	}
	return v
}

// checkDatasetMemory refuses a built-in dataset of n points larger than the physical memory;
// flag names the size in the message ("-n" or "-sizes"), fix says what to do.
func checkDatasetMemory(flag string, n int, fix string) error {
	// The points, the colour and the generator's draws: about 7 float64 per point.
	if need, phys := 56*float64(n), engine.PhysicalMemory(); phys > 0 && need > float64(phys) {
		return badInput(fix, "%s %d: the dataset alone needs about %s, more than the physical memory (%s)", flag, n, engine.FormatBytes(int64(min(need, 1<<62))), engine.FormatBytes(phys))
	}
	return nil
}

// makeDataset generates a built-in dataset; errors (e.g. nothing left after the removal)
// are input errors.
func makeDataset(name string, n int, seed uint64) (*mat.Dense, []float64, error) {
	if err := checkDatasetMemory("-n", n, "use a smaller -n"); err != nil {
		return nil, nil, err
	}
	X, color, err := bench.Dataset(name, n, seed)
	if err != nil {
		return nil, nil, badInput("use a larger -n", "%s", oneLine(err.Error()))
	}
	return X, color, nil
}

func runDataset(ctx context.Context, e env, c datasetConfig) (err error) {
	start := time.Now()
	out := outputs{ctx: ctx, stderr: e.stderr}
	defer func() { err = out.finish(recover(), err) }()
	if err := checkWritable("out", c.out); err != nil {
		return err
	}
	if c.colorOut != "" {
		if err := checkWritable("color-out", c.colorOut); err != nil {
			return err
		}
	}
	if err := checkDatasetMemory("-n", c.n, "use a smaller -n"); err != nil {
		return err
	}
	need := []fileNeed{matrixNeed(c.out, c.n, 3)}
	if c.colorOut != "" {
		need = append(need, matrixNeed(c.colorOut, c.n, 1))
	}
	if err := checkSpace(need, int64(len(need))); err != nil {
		return err
	}
	X, color, err := makeDataset(c.name, c.n, c.seed)
	if err != nil {
		return err
	}
	if err := out.write("out", c.out, func(p string) error { return dataio.WriteMatrix(p, X) }); err != nil {
		return err
	}
	if c.colorOut != "" {
		err := out.write("color-out", c.colorOut, func(p string) error { return dataio.WriteMatrix(p, mat.NewDense(len(color), 1, color)) })
		if err != nil {
			return err
		}
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if !c.quiet {
		n, d := X.Dims()
		s := summary{Command: "dataset", Input: c.name, N: n, D: d, WallSeconds: time.Since(start).Seconds(),
			PeakRSSBytes: peakRSS(), Outputs: out.files}
		out.onCommit(func() { s.write(e.stderr) })
	}
	return nil
}
