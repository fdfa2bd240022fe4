package main

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"strings"
	"time"

	"gonum.org/v1/gonum/mat"

	"glle/bench"
	"glle/bench/dataio"
	"glle/engine"
)

// readData reads the data matrix of flag -name from path; every failure is an inputError.
func readData(flagName, path string) (*mat.Dense, error) {
	if fi, err := os.Stat(path); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, badInput("check the path", "-%s %q: no such file", flagName, clip(path))
		}
		return nil, badInput("check the path and its permissions", "-%s %q cannot be read (%v)", flagName, clip(path), unwrapPath(err))
	} else if fi.IsDir() {
		return nil, badInput("give a data file, not a folder", "-%s %q is a folder", flagName, clip(path))
	} else if fi.Mode().IsRegular() && fi.Size() == 0 { // a pipe's size is 0 before it is read
		return nil, badInput("give a non-empty .npy, .csv, .tsv or .txt file", "-%s %q is empty", flagName, clip(path))
	}
	X, err := dataio.ReadMatrix(path)
	if err != nil {
		msg := strings.TrimPrefix(oneLine(unwrapPath(err).Error()), path+": ")
		fix := "give a 2-D numeric .npy (float64 or float32) or .csv file with finite values"
		if dataio.HasFix(err) {
			fix = "" // the message says what to do
		}
		return nil, badInput(fix, "-%s %q: %s", flagName, clip(path), msg)
	}
	return X, nil
}

// readColor reads n colour values (a vector or an n x 1 matrix) for -color.
func readColor(path string, n int) ([]float64, error) {
	if strings.EqualFold(fileExt(path), ".npy") {
		if fi, err := os.Stat(path); err == nil && fi.Size() > 0 {
			if a, err := dataio.ReadNPYFile(path); err == nil && len(a.Shape) == 1 {
				v := a.Floats()
				if len(v) != n {
					return nil, badInput("give one value per point", "-color %q has %d values, the data has %d points", clip(path), len(v), n)
				}
				for _, x := range v {
					if !finite(x) {
						return nil, badInput("give finite values", "-color %q holds a non-finite value", clip(path))
					}
				}
				return append([]float64(nil), v...), nil
			}
		}
	}
	C, err := readData("color", path)
	if err != nil {
		return nil, err
	}
	r, c := C.Dims()
	if r*c != n || (r != 1 && c != 1) {
		return nil, badInput("give one value per point (a vector or an n x 1 matrix)", "-color %q is %dx%d, the data has %d points", clip(path), r, c, n)
	}
	return append([]float64(nil), C.RawMatrix().Data...), nil
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
	var out outputs
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
