package main

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"image/png"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strings"
	"syscall"
	"testing"

	"gonum.org/v1/gonum/mat"

	"glle/bench"
	"glle/bench/dataio"
	"glle/cgo"
)

// bin is the glle-bench binary built once by TestMain.
var bin string

func TestMain(m *testing.M) {
	flag.Parse()
	dir, err := os.MkdirTemp("", "glle-bench-test")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	bin = filepath.Join(dir, "glle-bench")
	args := []string{"build", "-o", bin}
	if buildTags != "" {
		args = append(args, "-tags", buildTags)
	}
	args = append(args, ".")
	gocmd := filepath.Join(runtime.GOROOT(), "bin", "go")
	if _, err := os.Stat(gocmd); err != nil {
		gocmd = "go"
	}
	cmd := exec.Command(gocmd, args...)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building glle-bench:", err)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

type result struct {
	stdout, stderr string
	code           int
}

// runBin runs the binary in dir with args.
func runBin(t *testing.T, dir string, args ...string) result {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	var so, se bytes.Buffer
	cmd.Stdout, cmd.Stderr = &so, &se
	err := cmd.Run()
	code := 0
	if err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			t.Fatalf("running glle-bench %v: %v", args, err)
		}
		code = ee.ExitCode()
	}
	return result{so.String(), se.String(), code}
}

// mustRun runs the binary and fails the test unless it exits 0.
func mustRun(t *testing.T, dir string, args ...string) result {
	t.Helper()
	r := runBin(t, dir, args...)
	if r.code != 0 {
		t.Fatalf("glle-bench %s: exit %d\nstderr: %s", strings.Join(args, " "), r.code, r.stderr)
	}
	if strings.Contains(r.stderr, "\r") {
		t.Errorf("glle-bench %s drew a progress line although stderr is not a terminal", strings.Join(args, " "))
	}
	return r
}

func readM(t *testing.T, path string) *mat.Dense {
	t.Helper()
	m, err := dataio.ReadMatrix(path)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func sameFile(t *testing.T, a, b string) {
	t.Helper()
	for _, msg := range differing(t, "", []string{a}, []string{b}) {
		t.Error(msg)
	}
}

// listTree returns every file under dir (relative paths), hidden temporaries included.
func listTree(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err == nil && p != dir {
			rel, _ := filepath.Rel(dir, p)
			out = append(out, rel)
		}
		return nil
	})
	sort.Strings(out)
	return out
}

// isPNG checks that path is a PNG image with something drawn in colour: at least 300 coloured
// pixels (max - min channel above 40 of 255) in at least 4 distinct colours (channels
// quantised to 3 bits). A blank image, or one in a single colour, passed the old check of
// the 8-byte signature (a review in session 32: a writeGrid drawing no panels passed every
// plot test). The plots colour their points by a colour scale, so these floors are far below
// what any figure draws (a 300-point panel alone colours several hundred pixels).
func isPNG(t *testing.T, path string) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Errorf("%s is not a PNG image: %v", path, err)
		return
	}
	coloured, hues := 0, map[uint32]bool{}
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			r, g, bl, _ := img.At(x, y).RGBA()
			r, g, bl = r>>8, g>>8, bl>>8
			if max(r, g, bl)-min(r, g, bl) > 40 {
				coloured++
				hues[r>>5<<6|g>>5<<3|bl>>5] = true
			}
		}
	}
	if coloured < 300 || len(hues) < 4 {
		t.Errorf("%s: %d coloured pixels in %d colours: nothing (or one colour) was drawn", path, coloured, len(hues))
	}
}

func TestHelpListsEveryFlag(t *testing.T) {
	dir := t.TempDir()
	all := mustRun(t, dir, "help").stdout
	var (
		dc datasetConfig
		ec embedConfig
		er embedRaw
		gc generateConfig
		fc figuresConfig
		s1 string
		s2 string
	)
	sets := map[string]*flags{
		"dataset":  datasetFlags(&dc),
		"embed":    embedFlags(&ec, &er),
		"generate": generateFlags(&gc),
		"figures":  figuresFlags(&fc, &s1, &s2),
	}
	for cmd, f := range sets {
		own := mustRun(t, dir, cmd, "-h").stdout
		viaHelp := mustRun(t, dir, "help", cmd).stdout
		if own != viaHelp {
			t.Errorf("'%s -h' and 'help %s' differ", cmd, cmd)
		}
		n := 0
		f.fs.VisitAll(func(fl *flag.Flag) {
			n++
			for _, text := range []string{all, own} {
				found := false
				for _, line := range strings.Split(text, "\n") {
					if strings.HasPrefix(strings.TrimSpace(line), "-"+fl.Name+" ") || strings.TrimSpace(line) == "-"+fl.Name {
						found = true
						if !strings.Contains(line, "(default ") && !strings.Contains(line, "(required)") {
							t.Errorf("%s: flag -%s has no documented default: %q", cmd, fl.Name, line)
						}
					}
				}
				if !found {
					t.Errorf("%s: help does not list -%s", cmd, fl.Name)
				}
			}
		})
		if n != len(f.specs) {
			t.Errorf("%s: %d flags defined, %d documented", cmd, n, len(f.specs))
		}
	}
	for _, want := range []string{"-in", "-dataset", "-method", "-k", "-dim", "-seed", "-out", "-model", "-em-iters", "-reg",
		"-workers", "-generations", "-cov-scale", "-json", "-plot", "-color", "-color-out", "-name", "-n"} {
		if !strings.Contains(all, "  "+want+" ") {
			t.Errorf("help does not list issue flag %s", want)
		}
	}
}

func TestDatasetRoundTrip(t *testing.T) {
	dir := t.TempDir()
	for _, name := range bench.DatasetNames() {
		mustRun(t, dir, "dataset", "-name", name, "-n", "300", "-seed", "7", "-out", name+".npy", "-color-out", name+"_t.npy", "-q")
		mustRun(t, dir, "dataset", "-name", name, "-n", "300", "-seed", "7", "-out", name+".csv", "-color-out", name+"_t.csv", "-q")
		X, col, err := bench.Dataset(name, 300, 7)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range []string{name + ".npy", name + ".csv"} {
			if got := readM(t, filepath.Join(dir, f)); !mat.Equal(got, X) {
				t.Errorf("%s differs from bench.Dataset", f)
			}
		}
		for _, f := range []string{name + "_t.npy", name + "_t.csv"} {
			got := readM(t, filepath.Join(dir, f))
			if !mat.Equal(got, mat.NewDense(len(col), 1, col)) {
				t.Errorf("%s differs from the dataset colour", f)
			}
		}
	}
	// Deterministic per seed, different across seeds.
	mustRun(t, dir, "dataset", "-name", "scurve", "-n", "300", "-seed", "7", "-out", "again.npy", "-q")
	sameFile(t, filepath.Join(dir, "scurve.npy"), filepath.Join(dir, "again.npy"))
	r := mustRun(t, dir, "dataset", "-name", "scurve", "-n", "300", "-seed", "8", "-out", "other.npy")
	if mat.Equal(readM(t, filepath.Join(dir, "other.npy")), readM(t, filepath.Join(dir, "scurve.npy"))) {
		t.Error("seeds 7 and 8 gave the same points")
	}
	if !strings.Contains(r.stderr, "n=300") {
		t.Errorf("dataset summary missing: %q", r.stderr)
	}
}

// writeNPYFloat32 writes a float32 Fortran-order .npy file (exercising the other reader paths).
func writeNPYFloat32Fortran(t *testing.T, path string, X *mat.Dense) {
	t.Helper()
	r, c := X.Dims()
	h := fmt.Sprintf("{'descr': '<f4', 'fortran_order': True, 'shape': (%d, %d), }", r, c)
	h += strings.Repeat(" ", 63-(10+len(h))%64) + "\n"
	var b bytes.Buffer
	b.WriteString("\x93NUMPY\x01\x00")
	binary.Write(&b, binary.LittleEndian, uint16(len(h)))
	b.WriteString(h)
	for j := 0; j < c; j++ {
		for i := 0; i < r; i++ {
			binary.Write(&b, binary.LittleEndian, float32(X.At(i, j)))
		}
	}
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestEmbedFileFormats(t *testing.T) {
	dir := t.TempDir()
	mustRun(t, dir, "dataset", "-name", "scurve", "-n", "400", "-out", "x.npy", "-q")
	X := readM(t, filepath.Join(dir, "x.npy"))
	if err := dataio.WriteMatrix(filepath.Join(dir, "x.csv"), X); err != nil {
		t.Fatal(err)
	}
	// Whitespace-separated text with a header row.
	var txt strings.Builder
	txt.WriteString("a b c\n")
	for i := 0; i < 400; i++ {
		fmt.Fprintf(&txt, "%v %v %v\n", X.At(i, 0), X.At(i, 1), X.At(i, 2))
	}
	os.WriteFile(filepath.Join(dir, "x.txt"), []byte(txt.String()), 0o644)

	mustRun(t, dir, "embed", "-in", "x.npy", "-method", "lle", "-out", "y.npy", "-q")
	mustRun(t, dir, "embed", "-in", "x.csv", "-method", "lle", "-out", "y_csv.npy", "-q")
	mustRun(t, dir, "embed", "-in", "x.txt", "-method", "lle", "-out", "y_txt.npy", "-q")
	mustRun(t, dir, "embed", "-in", "x.npy", "-method", "lle", "-out", "y.csv", "-q")
	sameFile(t, filepath.Join(dir, "y.npy"), filepath.Join(dir, "y_csv.npy"))
	sameFile(t, filepath.Join(dir, "y.npy"), filepath.Join(dir, "y_txt.npy"))
	Y := readM(t, filepath.Join(dir, "y.npy"))
	if n, p := Y.Dims(); n != 400 || p != 2 {
		t.Fatalf("embedding is %dx%d, want 400x2", n, p)
	}
	if !mat.Equal(Y, readM(t, filepath.Join(dir, "y.csv"))) {
		t.Error("the .csv output differs from the .npy output")
	}
	// -in with the dataset gives the same embedding as -dataset.
	mustRun(t, dir, "embed", "-dataset", "scurve", "-n", "400", "-method", "lle", "-out", "y_ds.npy", "-q")
	sameFile(t, filepath.Join(dir, "y.npy"), filepath.Join(dir, "y_ds.npy"))

	// A named pipe (process substitution, a stream from another program): its size is 0
	// until read, so it must be read, not refused as empty; .csv and .npy alike.
	for _, name := range []string{"x.csv", "x.npy"} {
		fifo := filepath.Join(dir, "pipe"+filepath.Ext(name))
		if err := syscall.Mkfifo(fifo, 0o600); err != nil {
			t.Fatal(err)
		}
		src := mustRead(t, dir, name)
		go func() {
			if f, err := os.OpenFile(fifo, os.O_WRONLY, 0); err == nil {
				f.Write(src)
				f.Close()
			}
		}()
		mustRun(t, dir, "embed", "-in", fifo, "-method", "lle", "-out", "y_pipe.npy", "-q")
		sameFile(t, filepath.Join(dir, "y.npy"), filepath.Join(dir, "y_pipe.npy"))
	}

	// float32, Fortran order: a valid input (values rounded to float32).
	writeNPYFloat32Fortran(t, filepath.Join(dir, "x32.npy"), X)
	mustRun(t, dir, "embed", "-in", "x32.npy", "-method", "em", "-dim", "1", "-out", "y32.npy", "-q")
	if n, p := readM(t, filepath.Join(dir, "y32.npy")).Dims(); n != 400 || p != 1 {
		t.Errorf("float32 input: embedding is %dx%d, want 400x1", n, p)
	}
}

// TestSavedModelRegenerates checks every generative method: embed -generations and generate
// from the saved model write bit-identical files (a difference that a rerun clears is a one-off,
// see sameOrOneOff); the model folder holds the promised files.
func TestSavedModelRegenerates(t *testing.T) {
	dir := t.TempDir()
	oneOffs := 0 // see sameOrOneOff
	type run struct{ method, solver string }
	var runs []run
	for _, method := range []string{"em", "direct", "em-paper", "direct-paper"} {
		runs = append(runs, run{method, "auto"}, run{method, "dense"})
	}
	for _, rn := range runs {
		t.Run(rn.method+"/"+rn.solver, func(t *testing.T) {
			dir := filepath.Join(dir, rn.solver)
			os.MkdirAll(dir, 0o755)
			method := rn.method
			m := "m_" + method
			args := []string{"embed", "-dataset", "swissroll", "-n", "500", "-method", method, "-seed", "3", "-generations", "2",
				"-cov-scale", "0.5", "-out", method + ".npy", "-model", m, "-json", method + ".json", "-solver", rn.solver}
			if method == "direct-paper" {
				args = append(args, "-direct-ridge", "1e-6")
			}
			r := mustRun(t, dir, args...)
			for _, w := range []string{"n=500", "k=10", "p=2", "stages:", "eigenvalues", "peak RSS"} {
				if !strings.Contains(r.stderr, w) {
					t.Errorf("summary lacks %q:\n%s", w, r.stderr)
				}
			}
			if buildTags == "purego" && strings.Contains(r.stderr, "backend=openblas") {
				t.Errorf("purego test run uses a binary with the OpenBLAS backend: %s", r.stderr)
			}
			gargs := []string{"generate", "-model", m, "-generations", "2", "-cov-scale", "0.5", "-seed", "3", "-out", "re_" + method, "-q"}
			mustRun(t, dir, gargs...)
			sameOrOneOff(t, dir, args, gargs, []string{method + "_gen000.npy", method + "_gen001.npy"},
				[]string{"re_" + method + "_gen000.npy", "re_" + method + "_gen001.npy"}, &oneOffs)
			// Another seed gives other embeddings; workers do not matter.
			mustRun(t, dir, "generate", "-model", m, "-generations", "1", "-cov-scale", "0.5", "-seed", "4", "-out", "s4_"+method+".npy", "-q")
			if bytes.Equal(mustRead(t, dir, method+"_gen000.npy"), mustRead(t, dir, "s4_"+method+"_gen000.npy")) {
				t.Error("seeds 3 and 4 generated the same embedding")
			}
			mustRun(t, dir, "generate", "-model", m, "-generations", "1", "-cov-scale", "0.5", "-seed", "3", "-workers", "1", "-out", "w1_"+method+".csv", "-q")
			a, b := readM(t, filepath.Join(dir, method+"_gen000.npy")), readM(t, filepath.Join(dir, "w1_"+method+"_gen000.csv"))
			if !mat.Equal(a, b) {
				t.Error("generate -workers 1 (csv) differs from the embed generation")
			}

			// Model files.
			want := map[string][]int{"neighbors.npy": {500, 10}, "weights.npy": {500, 10}, "embedding.npy": {500, 2}, "X.npy": {500, 3}}
			if method == "em" || method == "em-paper" {
				want["sigma.npy"] = []int{500}
			} else {
				want["gamma.npy"] = []int{500, 10, 10}
			}
			for f, shape := range want {
				a, err := dataio.ReadNPYFile(filepath.Join(dir, m, f))
				if err != nil {
					t.Fatal(err)
				}
				if !equalShape(a.Shape, shape) {
					t.Errorf("%s has shape %v, want %v", f, a.Shape, shape)
				}
				if (f == "neighbors.npy") == a.IsFloat() {
					t.Errorf("%s has the wrong dtype", f)
				}
			}
			if _, err := os.Stat(filepath.Join(dir, m, "sigma.npy")); (err == nil) != (want["sigma.npy"] != nil) {
				t.Errorf("sigma.npy presence wrong for %s", method)
			}
			sameFile(t, filepath.Join(dir, method+".npy"), filepath.Join(dir, m, "embedding.npy"))
			var meta modelMeta
			if err := json.Unmarshal(mustRead(t, dir, m+"/model.json"), &meta); err != nil {
				t.Fatal(err)
			}
			if meta.FormatVersion != 2 || meta.SettingsSum == "" || len(meta.Checksums) != len(meta.Files) || meta.Method != method || meta.N != 500 || meta.D != 3 || meta.K != 10 || meta.Dim != 2 || meta.Seed != 3 {
				t.Errorf("model.json: %+v", meta)
			}
			var rep summary
			if err := json.Unmarshal(mustRead(t, dir, method+".json"), &rep); err != nil {
				t.Fatal(err)
			}
			if rep.N != 500 || rep.Fit == nil || len(rep.Generations) != 2 || len(rep.Stages) == 0 || len(rep.Fit.Eigen.Values) != 2 {
				t.Errorf("JSON report incomplete: %+v", rep)
			}
			if (method == "em" || method == "em-paper") && rep.Fit.Sigma == nil {
				t.Error("JSON report lacks the sigma statistics")
			}
		})
	}
}

func mustRead(t *testing.T, dir, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestEmbedPlot(t *testing.T) {
	dir := t.TempDir()
	mustRun(t, dir, "dataset", "-name", "swissroll", "-n", "400", "-out", "x.npy", "-color-out", "t.npy", "-q")
	mustRun(t, dir, "embed", "-in", "x.npy", "-method", "direct", "-generations", "2", "-out", "y.npy", "-plot", "y.png", "-color", "t.npy", "-q")
	isPNG(t, filepath.Join(dir, "y.png"))
	mustRun(t, dir, "embed", "-dataset", "scurve", "-n", "400", "-out", "z.npy", "-plot", "z.png", "-q")
	isPNG(t, filepath.Join(dir, "z.png"))
}

func TestFigures(t *testing.T) {
	dir := t.TempDir()
	r := mustRun(t, dir, "figures", "-out", "figs/sub", "-n", "400")
	for _, f := range []string{fig2File, fig3File, fig4File} {
		isPNG(t, filepath.Join(dir, "figs/sub", f))
	}
	if !strings.Contains(r.stderr, "8 fits, 64 generations") {
		t.Errorf("figures summary: %s", r.stderr)
	}
}

// badCase is one bad input: the command must exit 2 with one line on stderr naming the
// problem, and leave no file behind.
type badCase struct {
	name string
	args []string
	want string // substring of the message
}

func checkBad(t *testing.T, dir string, c badCase) {
	t.Helper()
	before := listTree(t, dir)
	r := runBin(t, dir, c.args...)
	if r.code != 2 {
		t.Errorf("%s: exit %d, want 2; stderr %q", c.name, r.code, r.stderr)
	}
	lines := strings.Split(strings.TrimRight(r.stderr, "\n"), "\n")
	if len(lines) != 1 || !strings.HasPrefix(lines[0], "glle-bench: ") || strings.Contains(r.stderr, "goroutine") {
		t.Errorf("%s: stderr is not one 'glle-bench: ...' line: %q", c.name, r.stderr)
	}
	if !strings.Contains(r.stderr, c.want) {
		t.Errorf("%s: message %q does not mention %q", c.name, r.stderr, c.want)
	}
	if after := listTree(t, dir); strings.Join(after, "\n") != strings.Join(before, "\n") {
		t.Errorf("%s: files changed: before %v, after %v", c.name, before, after)
	}
	if r.stdout != "" {
		t.Errorf("%s: unexpected stdout %q", c.name, r.stdout)
	}
}

func TestBadInput(t *testing.T) {
	dir := t.TempDir()
	w := func(name, content string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	w("empty.csv", "")
	w("header.csv", "a,b,c\n")
	w("ragged.csv", "1,2,3\n4,5\n")
	w("nonnum.csv", "1,2,3\n4,x,6\n")
	w("nan.csv", "1,2,3\n4,NaN,6\n")
	w("inf.csv", "1,2,3\n4,inf,6\n")
	w("pandas.csv", ",0,1,2\n0,1.5,2.5,3.5\n1,1.1,2.2,3.3\n") // DataFrame(X).to_csv(path)
	w("columns.csv", "0,1,2\n1.5,2.5,3.5\n")                  // DataFrame(X).to_csv(path, index=False)
	w("corrupt.npy", "\x93NUMPY\x01\x00garbage")
	w("ext.dat", "1,2,3\n")
	same := strings.Repeat("1,2,3\n", 30)
	w("same.csv", same)
	// Two far-apart clusters: a kNN graph with two components.
	var two strings.Builder
	for i := 0; i < 40; i++ {
		off := 0.0
		if i >= 20 {
			off = 1000
		}
		fmt.Fprintf(&two, "%v,%v,%v\n", off+float64(i%5), off+float64(i/5), off+math.Sin(float64(i)))
	}
	w("two.csv", two.String())
	small := "1,0,0\n0,1,0\n0,0,1\n1,1,0\n1,0,1\n"
	w("small.csv", small)
	if err := dataio.WriteNPYFile(filepath.Join(dir, "x3d.npy"), []int{2, 2, 3}, make([]float64, 12)); err != nil {
		t.Fatal(err)
	}
	if err := dataio.WriteNPYFile(filepath.Join(dir, "x1d.npy"), []int{12}, make([]float64, 12)); err != nil {
		t.Fatal(err)
	}
	nan := make([]float64, 30)
	nan[7] = math.Inf(1)
	if err := dataio.WriteNPYFile(filepath.Join(dir, "inf.npy"), []int{10, 3}, nan); err != nil {
		t.Fatal(err)
	}
	os.Mkdir(filepath.Join(dir, "adir"), 0o755)
	os.Mkdir(filepath.Join(dir, "adir.npy"), 0o755)

	ds := []string{"embed", "-dataset", "swissroll", "-n", "300", "-out", "y.npy"}
	cases := []badCase{
		{"no command", nil, "no command"},
		{"unknown command", []string{"frobnicate"}, "unknown command"},
		{"unknown flag", append(ds, "-bogus"), "-bogus"},
		{"flag value", append(ds, "-k", "ten"), "-k"},
		{"stray argument", append(ds, "extra"), "unexpected argument"},
		{"missing file", []string{"embed", "-in", "nope.npy", "-out", "y.npy"}, "no such file"},
		{"input is a folder", []string{"embed", "-in", "adir.npy", "-out", "y.npy"}, "folder"},
		{"empty file", []string{"embed", "-in", "empty.csv", "-out", "y.npy"}, "empty"},
		{"header only", []string{"embed", "-in", "header.csv", "-out", "y.npy"}, "no data rows"},
		{"ragged csv", []string{"embed", "-in", "ragged.csv", "-out", "y.npy"}, "line 2"},
		{"non-numeric csv", []string{"embed", "-in", "nonnum.csv", "-out", "y.npy"}, "not a number"},
		{"nan csv", []string{"embed", "-in", "nan.csv", "-out", "y.npy"}, "non-finite"},
		{"inf csv", []string{"embed", "-in", "inf.csv", "-out", "y.npy"}, "non-finite"},
		{"inf npy", []string{"embed", "-in", "inf.npy", "-out", "y.npy", "-k", "3"}, "non-finite"},
		{"corrupt npy", []string{"embed", "-in", "corrupt.npy", "-out", "y.npy"}, "corrupt.npy"},
		{"3-D npy", []string{"embed", "-in", "x3d.npy", "-out", "y.npy"}, "3-D"},
		{"1-D npy", []string{"embed", "-in", "x1d.npy", "-out", "y.npy"}, "1-D"},
		{"unknown input extension", []string{"embed", "-in", "ext.dat", "-out", "y.npy"}, "extension"},
		{"n <= k (file)", []string{"embed", "-in", "small.csv", "-out", "y.npy"}, "need n > k"},
		{"n <= k (dataset)", []string{"embed", "-dataset", "swissroll", "-n", "10", "-out", "y.npy"}, "need n > k"},
		{"negative n", []string{"embed", "-dataset", "swissroll", "-n", "-4", "-out", "y.npy"}, "-n -4"},
		{"negative n dataset", []string{"dataset", "-name", "scurve", "-n", "-4", "-out", "x.npy"}, "-n -4"},
		{"k < 1", append(ds, "-k", "0"), "-k 0"},
		{"dim < 1", append(ds, "-dim", "0"), "-dim 0"},
		{"dim >= d (dataset)", append(ds, "-dim", "3"), "dim < d"},
		{"dim >= d (file)", []string{"embed", "-in", "two.csv", "-dim", "3", "-out", "y.npy"}, "dim < d"},
		{"unknown method", append(ds, "-method", "pca"), "unknown method"},
		{"unknown dataset", []string{"embed", "-dataset", "torus", "-out", "y.npy"}, "unknown dataset"},
		{"unknown dataset (dataset)", []string{"dataset", "-name", "torus", "-out", "x.npy"}, "unknown dataset"},
		{"unknown solver", append(ds, "-solver", "magic"), "unknown solver"},
		{"generations with lle", append(ds, "-generations", "2"), "generative"},
		{"negative generations", append(ds, "-method", "em", "-generations", "-1"), "-generations -1"},
		{"negative cov-scale", append(ds, "-method", "em", "-generations", "1", "-cov-scale", "-0.5"), "covariance scale"},
		{"nan cov-scale", append(ds, "-method", "em", "-generations", "1", "-cov-scale", "NaN"), "covariance scale"},
		{"negative reg", append(ds, "-reg", "-1"), "-reg"},
		// Flags that would have no effect are refused, not ignored.
		{"em-iters with lle", append(ds, "-em-iters", "5"), "-em-iters applies"},
		{"em-tol with em-paper", append(ds, "-method", "em-paper", "-em-tol", "1e-3"), "-em-tol applies"},
		{"direct-ridge with em", append(ds, "-method", "em", "-direct-ridge", "1"), "-direct-ridge applies"},
		{"cov-scale without generations", append(ds, "-method", "em", "-cov-scale", "5"), "-cov-scale applies"},
		{"both inputs", []string{"embed", "-in", "two.csv", "-dataset", "swissroll", "-out", "y.npy"}, "both"},
		{"no input", []string{"embed", "-out", "y.npy"}, "no input"},
		{"no out", []string{"embed", "-dataset", "swissroll"}, "-out is required"},
		{"identical points", []string{"embed", "-in", "same.csv", "-out", "y.npy", "-k", "5"}, "identical"},
		{"disconnected graph", []string{"embed", "-in", "two.csv", "-out", "y.npy", "-k", "5"}, "2 connected components"},
		{"out folder missing", []string{"embed", "-dataset", "swissroll", "-n", "300", "-out", "nofolder/y.npy"}, "does not exist"},
		{"out is a folder", []string{"embed", "-dataset", "swissroll", "-n", "300", "-out", "adir.npy"}, "is a folder"},
		{"out bad extension", []string{"embed", "-dataset", "swissroll", "-n", "300", "-out", "y.xyz"}, "extension"},
		{"plot not png", append(ds, "-plot", "y.jpg"), ".png"},
		{"json unwritable", append(ds, "-json", "nofolder/r.json"), "does not exist"},
		{"model under a file", append(ds, "-method", "em", "-model", "two.csv/m"), "not a folder"},
		{"color length", append(ds, "-plot", "y.png", "-color", "small.csv"), "-color"},
		{"color without plot", append(ds, "-color", "small.csv"), "-plot"},
		{"json names a data file", append(ds, "-json", "y.npy"), "not a .json file name"},
		{"json swallows the next flag", append(ds, "-json", "-q"), "-json \"-q\" is not a .json file name"},
		{"dataset out folder", []string{"dataset", "-name", "scurve", "-out", "nofolder/x.npy"}, "does not exist"},
		{"figures bad fig", []string{"figures", "-out", "figs", "-figs", "7"}, "-figs"},
		{"figures n <= k", []string{"figures", "-out", "figs", "-n", "5"}, "need n > k"},
		{"figures out is a file", []string{"figures", "-out", "two.csv"}, "not a folder"},
		{"generate no model", []string{"generate", "-model", "nomodel", "-generations", "1", "-out", "g"}, "no such folder"},
		{"generate not a model", []string{"generate", "-model", "adir", "-generations", "1", "-out", "g"}, "model.json is missing"},
		{"generate zero generations", []string{"generate", "-model", "adir", "-generations", "0", "-out", "g"}, "-generations 0"},
		{"generate negative scale", []string{"generate", "-model", "adir", "-generations", "1", "-cov-scale", "-1", "-out", "g"}, "covariance scale"},
		{"help topic", []string{"help", "nothing"}, "unknown help topic"},
		{"too many workers", append(ds, "-workers", "2000"), "-workers 2000"},
		{"huge n", []string{"embed", "-dataset", "swissroll", "-n", "9223372036854775807", "-out", "y.npy"}, "at most 2147483647"},
		{"huge n beyond -max-mem", []string{"embed", "-dataset", "swissroll", "-n", "100000000", "-max-mem", "1G", "-out", "y.npy"}, "memory limit"},
		{"huge n dataset", []string{"dataset", "-name", "scurve", "-n", "9223372036854775807", "-out", "x.npy"}, "physical memory"},
		{"figures huge n", []string{"figures", "-out", "figs", "-n", "9223372036854775807"}, "physical memory"},
		{"unknown command lists bench", []string{"frobnicate"}, "bench"},
	}
	for _, c := range cases {
		checkBad(t, dir, c)
	}
	// A message from the reader that says what to do gets no generic advice after it.
	for _, f := range []string{"pandas.csv", "columns.csv"} {
		r := runBin(t, dir, "embed", "-in", f, "-out", "y.npy")
		if r.code != exitBadInput || !strings.Contains(r.stderr, "pandas") || strings.Contains(r.stderr, "give a 2-D numeric") {
			t.Errorf("%s: exit %d, stderr %q", f, r.code, r.stderr)
		}
	}
	if r := runBin(t, dir, "embed", "-in", "nonnum.csv", "-out", "y.npy"); !strings.Contains(r.stderr, "give a 2-D numeric") {
		t.Errorf("nonnum.csv: the generic advice is missing: %q", r.stderr)
	}
}

// TestBadModel damages a saved model in every way generate must notice.
func TestBadModel(t *testing.T) {
	dir := t.TempDir()
	mustRun(t, dir, "embed", "-dataset", "scurve", "-n", "300", "-method", "em", "-out", "y.npy", "-model", "good", "-q")
	mustRun(t, dir, "embed", "-dataset", "scurve", "-n", "300", "-method", "lle", "-out", "l.npy", "-model", "lle", "-q")
	// Setup errors fail the test: a damaged model that was never written would make its
	// case test the good model instead.
	copyModel := func(name string) string {
		d := filepath.Join(dir, name)
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
		for _, f := range []string{"model.json", "neighbors.npy", "weights.npy", "sigma.npy", "embedding.npy", "X.npy"} {
			if err := os.WriteFile(filepath.Join(d, f), mustRead(t, dir, "good/"+f), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		return d
	}
	editMeta := func(d string, fn func(m map[string]any)) {
		var m map[string]any
		if err := json.Unmarshal(mustRead(t, d, "model.json"), &m); err != nil {
			t.Fatal(err)
		}
		fn(m)
		b, err := json.Marshal(m)
		if err == nil {
			err = os.WriteFile(filepath.Join(d, "model.json"), b, 0o644)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	d := copyModel("noweights")
	os.Remove(filepath.Join(d, "weights.npy"))
	d = copyModel("nosigma")
	os.Remove(filepath.Join(d, "sigma.npy"))
	d = copyModel("version")
	editMeta(d, func(m map[string]any) { m["format_version"] = 3 })
	// A version-1 model (saved before session 36) has no checksums and is read unchecked: the
	// content checks still apply to it (a version-2 model with an edited k fails model.json's
	// settings_checksum before its files are read).
	oldModel := func(d string) {
		editMeta(d, func(m map[string]any) {
			m["format_version"] = 1
			delete(m, "checksums")
			delete(m, "settings_checksum")
		})
	}
	d = copyModel("shape")
	editMeta(d, func(m map[string]any) { m["k"] = 12 })
	oldModel(d)
	d = copyModel("method")
	editMeta(d, func(m map[string]any) { m["method"] = "magic" })
	d = copyModel("corruptjson")
	os.WriteFile(filepath.Join(d, "model.json"), []byte("{not json"), 0o644)
	d = copyModel("corruptnpy")
	os.WriteFile(filepath.Join(d, "embedding.npy"), []byte("\x93NUMPY junk"), 0o644)
	// The files' content checks run before their checksums, so that they name what they find.
	d = copyModel("badneighbor")
	nb := make([]int64, 300*10)
	for i := range nb {
		nb[i] = 999
	}
	dataio.WriteNPYInt64File(filepath.Join(d, "neighbors.npy"), []int{300, 10}, nb)
	d = copyModel("floatneighbors")
	dataio.WriteNPYFile(filepath.Join(d, "neighbors.npy"), []int{300, 10}, make([]float64, 3000))
	d = copyModel("wrongX")
	dataio.WriteNPYFile(filepath.Join(d, "X.npy"), []int{300, 4}, make([]float64, 1200))
	d = copyModel("reg0") // would restore with the library's default ridge instead
	editMeta(d, func(m map[string]any) { m["reg"] = 0 })
	d = copyModel("metadir")
	os.Remove(filepath.Join(d, "model.json"))
	os.Mkdir(filepath.Join(d, "model.json"), 0o755)
	// Damage no content check can see (a user trial: both generated with exit 0): a changed
	// embedding value, a sigma.npy left unread after model.json's method was edited, a
	// checksum entry removed, and (since session 36, model.json's settings_checksum) settings
	// edited within their valid range: an em model relabelled em-paper (the same files), a
	// changed reg, and the checksums removed from a version-2 model.
	for _, c := range []struct {
		name, file string
		pos        int64
	}{{"flipped", "embedding.npy", -5}, {"flippedsigma", "sigma.npy", -1}} {
		d = copyModel(c.name)
		b := mustRead(t, d, c.file)
		b[int64(len(b))+c.pos] ^= 0x10
		if err := os.WriteFile(filepath.Join(d, c.file), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// Bytes appended after X.npy's array, which the parser ignores as NumPy does: the
	// checksum covers the whole file, read once with the array since session 36.
	d = copyModel("appended")
	if err := os.WriteFile(filepath.Join(d, "X.npy"), append(mustRead(t, d, "X.npy"), "extra"...), 0o644); err != nil {
		t.Fatal(err)
	}
	d = copyModel("emtodirect")
	editMeta(d, func(m map[string]any) { m["method"] = "direct" })
	d = copyModel("nosum")
	editMeta(d, func(m map[string]any) { delete(m["checksums"].(map[string]any), "weights.npy") })
	d = copyModel("emtoempaper")
	editMeta(d, func(m map[string]any) { m["method"] = "em-paper" })
	d = copyModel("regedited")
	editMeta(d, func(m map[string]any) { m["reg"] = 2e-3 })
	d = copyModel("nosums")
	editMeta(d, func(m map[string]any) { delete(m, "checksums"); delete(m, "settings_checksum") })
	d = copyModel("oldmodel") // version 1, no checksums at all: read unchecked
	oldModel(d)
	// A user trial of session 36: format_version edited to 1 skipped the settings checksum
	// the file still held; a named pipe as model.json or weights.npy hung the run silently;
	// an edited k of 10.5 gave Go's decoding error; an editor's byte-order mark.
	d = copyModel("v1method")
	editMeta(d, func(m map[string]any) { m["format_version"] = 1; m["method"] = "em-paper" })
	for _, name := range []string{"model.json", "weights.npy"} {
		d = copyModel("fifo" + strings.TrimSuffix(name, filepath.Ext(name)))
		os.Remove(filepath.Join(d, name))
		if err := syscall.Mkfifo(filepath.Join(d, name), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	d = copyModel("kfloat")
	editMeta(d, func(m map[string]any) { m["k"] = 10.5 })
	d = copyModel("bom")
	if err := os.WriteFile(filepath.Join(d, "model.json"), append([]byte("\xef\xbb\xbf"), mustRead(t, d, "model.json")...), 0o644); err != nil {
		t.Fatal(err)
	}

	gen := func(m string) []string { return []string{"generate", "-model", m, "-generations", "1", "-out", "g"} }
	for _, c := range []badCase{
		{"missing weights", gen("noweights"), "weights.npy is missing"},
		{"missing sigma", gen("nosigma"), "sigma.npy is missing"},
		{"version", gen("version"), "format version 3, this glle-bench reads versions 1 to 2"},
		{"shape", gen("shape"), "shape"},
		{"method", gen("method"), "unknown method"},
		{"corrupt json", gen("corruptjson"), "corrupt"},
		{"corrupt npy", gen("corruptnpy"), "embedding.npy"},
		{"bad neighbour", gen("badneighbor"), "neighbors.npy entry"},
		{"float neighbours", gen("floatneighbors"), "integer"},
		{"wrong X", gen("wrongX"), "X.npy has shape"},
		{"lle model", gen("lle"), "lle has no stochastic weights"},
		{"reg 0", gen("reg0"), "want reg > 0"},
		{"model.json a folder", gen("metadir"), "model.json is a folder"},
		{"flipped embedding byte", gen("flipped"), "embedding.npy does not match its checksum in model.json: the file was damaged or edited"},
		{"flipped sigma byte", gen("flippedsigma"), "sigma.npy does not match its checksum"},
		{"bytes after X's array", gen("appended"), "X.npy does not match its checksum"},
		{"method edited", gen("emtodirect"), "model.json lists the files [neighbors.npy weights.npy embedding.npy X.npy sigma.npy], but a direct model has [neighbors.npy weights.npy embedding.npy X.npy]: it was edited"},
		{"checksum removed", gen("nosum"), "model.json does not match its settings_checksum: it was edited after the model was saved: re-save it with 'glle-bench embed -model nosum'"},
		{"version 1 with a settings checksum", gen("v1method"), "model.json does not match its settings_checksum"},
		{"model.json a named pipe", gen("fifomodel"), "model.json is not a model's description (not a regular file)"},
		{"weights.npy a named pipe", gen("fifoweights"), "weights.npy is not a regular file (a folder, pipe or device)"},
		{"k not a whole number", gen("kfloat"), `model.json is corrupt: "k" holds a JSON number 10.5 where the model has a whole number`},
		{"generate without -generations", []string{"generate", "-model", "good", "-out", "g"}, "-generations is required"},
		{"a model folder over its input", []string{"embed", "-in", "good/X.npy", "-model", "good", "-out", "gy.npy"}, `-model "good" would overwrite the input "good/X.npy" with its X.npy: use another -model folder`},
		{"em relabelled em-paper", gen("emtoempaper"), "model.json does not match its settings_checksum"},
		{"reg edited", gen("regedited"), "model.json does not match its settings_checksum"},
		{"checksums removed", gen("nosums"), "model.json has no checksums or settings_checksum, which a version-2 model records"},
		{"output under a file", []string{"generate", "-model", "good", "-generations", "1", "-out", "good/model.json/g"}, "is a file, not a folder"},
	} {
		checkBad(t, dir, c)
	}
	// The file is named once (it was "embedding.npy is unreadable (corruptnpy/embedding.npy: ...)").
	if r := runBin(t, dir, gen("corruptnpy")...); strings.Count(r.stderr, "embedding.npy") != 1 {
		t.Errorf("corrupt npy names the file %d times: %q", strings.Count(r.stderr, "embedding.npy"), r.stderr)
	}
	mustRun(t, dir, "generate", "-model", "good", "-generations", "1", "-out", "g", "-q")
	mustRun(t, dir, "generate", "-model", "bom", "-generations", "1", "-out", "g_bom", "-q")
	// A version-1 model is read unchecked, and the summary says so.
	if r := mustRun(t, dir, "generate", "-model", "oldmodel", "-generations", "1", "-out", "g_old"); !strings.Contains(r.stderr, `note: model "oldmodel" has format version 1, without checksums: it was read unchecked`) {
		t.Errorf("version-1 model: the summary does not say it was read unchecked: %q", r.stderr)
	}
	// A direct model saved before session 34 lists gamma.npy under files (it is informational
	// since): still read (the review of session 35; the files check refused it as edited).
	mustRun(t, dir, "embed", "-dataset", "scurve", "-n", "300", "-method", "direct", "-out", "dy.npy", "-model", "olddirect", "-q")
	editMeta(filepath.Join(dir, "olddirect"), func(m map[string]any) {
		m["files"] = append(m["files"].([]any), "gamma.npy")
		delete(m, "informational_files")
	})
	oldModel(filepath.Join(dir, "olddirect"))
	mustRun(t, dir, "generate", "-model", "olddirect", "-generations", "1", "-out", "g_olddirect", "-q")
}

// TestInterrupt sends SIGINT once the run has staged its base embedding: exit 130, no output
// left (a run that ignored the signal and finished was a skip before session 32; it fails).
func TestInterrupt(t *testing.T) {
	if testing.Short() {
		t.Skip("slow")
	}
	dir := t.TempDir()
	cmd := exec.Command(bin, "embed", "-dataset", "swissroll", "-n", "3000", "-method", "em", "-solver", "dense",
		"-generations", "200", "-out", "y.npy", "-model", "m", "-json", "r.json")
	cmd.Dir = dir
	var se bytes.Buffer
	cmd.Stderr = &se
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waitStaged(t, cmd, dir) // outputs in flight (outputs_test.go)
	cmd.Process.Signal(syscall.SIGINT)
	err := cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 130 {
		t.Fatalf("exit %v, want 130; stderr %q", err, se.String())
	}
	if files := listTree(t, dir); len(files) != 0 {
		t.Errorf("interrupted run left %v", files)
	}
	if !strings.Contains(se.String(), "interrupted") {
		t.Errorf("stderr %q", se.String())
	}
}

// TestModelFolderGuard: a -model folder holding a file of a model's names but no model.json
// is refused before any work, and the file is unchanged (a project folder's X.npy was
// overwritten silently before session 31); re-saving into a model folder replaces the model
// and removes the files the new one does not have (sigma.npy of an em model re-saved as lle).
func TestModelFolderGuard(t *testing.T) {
	dir := t.TempDir()
	os.Mkdir(filepath.Join(dir, "proj"), 0o755)
	mustRun(t, dir, "dataset", "-name", "scurve", "-n", "300", "-out", "proj/X.npy")
	before := mustRead(t, dir, "proj/X.npy")
	r := runBin(t, dir, "embed", "-dataset", "swissroll", "-n", "300", "-method", "em", "-out", "y.npy", "-model", "proj", "-q")
	if r.code != 2 || !strings.Contains(r.stderr, "is not a saved model and would be overwritten") || !bytes.Equal(before, mustRead(t, dir, "proj/X.npy")) {
		t.Errorf("-model into a folder with X.npy: exit %d, %q; want exit 2 naming the file, and X.npy unchanged", r.code, r.stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, "y.npy")); err == nil {
		t.Error("the refused run wrote its -out file")
	}
	// A model.json of another program (or a link to a device) does not make a model folder
	// (before session 32 its X.npy, weights.npy and model.json were replaced).
	os.WriteFile(filepath.Join(dir, "proj", "model.json"), []byte(`{"name": "cfg"}`), 0o644)
	os.Mkdir(filepath.Join(dir, "proj2"), 0o755)
	os.Symlink("/dev/zero", filepath.Join(dir, "proj2", "model.json"))
	for _, f := range []string{"proj", "proj2"} {
		meta, _ := os.ReadFile(filepath.Join(dir, "proj", "model.json"))
		r = runBin(t, dir, "embed", "-dataset", "swissroll", "-n", "300", "-method", "em", "-out", "y.npy", "-model", f, "-q")
		meta2, _ := os.ReadFile(filepath.Join(dir, "proj", "model.json"))
		link, lerr := os.Readlink(filepath.Join(dir, "proj2", "model.json")) // not followed
		if r.code != 2 || !strings.Contains(r.stderr, "is not a glle-bench model's description") || strings.Count(r.stderr, "\n") != 1 ||
			!bytes.Equal(before, mustRead(t, dir, "proj/X.npy")) || !bytes.Equal(meta, meta2) || lerr != nil || link != "/dev/zero" {
			t.Errorf("-model %s with a foreign model.json: exit %d, %q; want exit 2, one line, and the files unchanged (proj2/model.json -> %q, %v)", f, r.code, r.stderr, link, lerr)
		}
	}
	r = runBin(t, dir, "generate", "-model", "proj2", "-generations", "1", "-out", "g", "-q")
	if r.code != 2 || !strings.Contains(r.stderr, "not a regular file") || strings.Count(r.stderr, "\n") != 1 {
		t.Errorf("generate from a model.json linked to /dev/zero: exit %d, %q", r.code, r.stderr)
	}
	mustRun(t, dir, "embed", "-dataset", "scurve", "-n", "300", "-method", "em", "-out", "e.npy", "-model", "m", "-q")
	if _, err := os.Stat(filepath.Join(dir, "m", "sigma.npy")); err != nil {
		t.Fatal(err)
	}
	r = mustRun(t, dir, "embed", "-dataset", "scurve", "-n", "300", "-method", "lle", "-out", "l.npy", "-model", "m", "-json", "l.json")
	if _, err := os.Stat(filepath.Join(dir, "m", "sigma.npy")); !os.IsNotExist(err) {
		t.Errorf("re-saving an em model folder as lle left sigma.npy (%v)", err)
	}
	// The removal is reported (a user trial of session 36: it was not).
	var lj summary
	json.Unmarshal(mustRead(t, dir, "l.json"), &lj)
	if want := filepath.Join("m", "sigma.npy"); !slices.Equal(lj.Removed, []string{want}) || !strings.Contains(r.stderr, "removed (the replaced model's, which this one does not have): "+want) {
		t.Errorf("re-saving em as lle: removed %v, stderr %q; want %s reported", lj.Removed, r.stderr, want)
	}
	mustRun(t, dir, "transform", "-model", "m", "-in", "proj/X.npy", "-out", "t.npy", "-q") // the lle model is complete
	// Files of the model's names that the replaced model.json does not list are the user's:
	// kept (the same trial: a note saved as gamma.npy beside an lle model was deleted).
	note := []byte("my notes")
	os.WriteFile(filepath.Join(dir, "m", "gamma.npy"), note, 0o644)
	os.WriteFile(filepath.Join(dir, "m", "sigma.npy"), note, 0o644)
	mustRun(t, dir, "embed", "-dataset", "scurve", "-n", "300", "-method", "lle", "-k", "12", "-out", "l.npy", "-model", "m", "-json", "l.json", "-q")
	lj = summary{}
	json.Unmarshal(mustRead(t, dir, "l.json"), &lj)
	if !bytes.Equal(mustRead(t, dir, "m/gamma.npy"), note) || !bytes.Equal(mustRead(t, dir, "m/sigma.npy"), note) || len(lj.Removed) != 0 {
		t.Errorf("re-saving an lle model removed files its model.json does not list (removed %v)", lj.Removed)
	}
}

// TestSummaryFields: transform's summary gives the new points as n and the model's as
// model_n (it gave no way to tell them apart); em's JSON has em_converged also when false;
// em-paper's settings carry em_iters but not em_tol, which it does not read; the memory
// estimate's keys are snake_case (a user trial, session 31).
func TestSummaryFields(t *testing.T) {
	dir := t.TempDir()
	mustRun(t, dir, "dataset", "-name", "scurve", "-n", "120", "-seed", "5", "-out", "new.npy")
	mustRun(t, dir, "embed", "-dataset", "scurve", "-n", "400", "-method", "em", "-em-iters", "2", "-out", "y.npy", "-model", "m", "-json", "e.json", "-q")
	r := mustRun(t, dir, "transform", "-model", "m", "-in", "new.npy", "-out", "t.npy", "-json", "t.json")
	var tj, ej map[string]any
	json.Unmarshal(mustRead(t, dir, "t.json"), &tj)
	json.Unmarshal(mustRead(t, dir, "e.json"), &ej)
	if tj["model"] != "m" { // the model folder, beside input (the new points): a user trial
		t.Errorf("transform's JSON names the model %v, want m", tj["model"])
	}
	if tj["n"] != 120.0 || tj["model_n"] != 400.0 || !strings.Contains(r.stderr, "120 new points") {
		t.Errorf("transform summary: n %v, model_n %v, stderr %q; want 120 and 400", tj["n"], tj["model_n"], r.stderr)
	}
	fit, _ := ej["fit"].(map[string]any)
	if v, ok := fit["em_converged"]; !ok || v != false {
		t.Errorf("em with -em-iters 2: em_converged %v (present %v), want false", v, ok)
	}
	if mem, _ := fit["memory"].(map[string]any); mem == nil || mem["n"] != 400.0 || mem["N"] != nil {
		t.Errorf("fit.memory keys: %v", mem)
	}
	// The backend's configuration (OpenBLAS's kernel set, which the engine may choose
	// itself) is in the JSON and the text summary (a build trial: only "openblas" was).
	for _, j := range []map[string]any{tj, ej} {
		if bc, _ := j["backend_config"].(string); bc != cgo.Config() {
			t.Errorf("backend_config %q, want cgo.Config() %q", bc, cgo.Config())
		}
	}
	if !strings.Contains(r.stderr, "  backend: "+cgo.Config()+"\n") {
		t.Errorf("transform summary without the backend line: %q", r.stderr)
	}
	// 12-D data with k = 10: every em fibre is empty and falls back; the summary says what
	// the count means.
	rng := rand.New(rand.NewPCG(3, 4))
	hi := mat.NewDense(300, 12, nil)
	for i := 0; i < 300; i++ {
		for j := 0; j < 12; j++ {
			hi.Set(i, j, rng.NormFloat64())
		}
	}
	if err := dataio.WriteMatrix(filepath.Join(dir, "hi.npy"), hi); err != nil {
		t.Fatal(err)
	}
	if r := mustRun(t, dir, "embed", "-in", "hi.npy", "-method", "em", "-out", "h.npy"); !strings.Contains(r.stderr, "fallback points 300 (em: ") {
		t.Errorf("12-D em: the fallback count is not explained: %q", r.stderr)
	}
	mustRun(t, dir, "embed", "-dataset", "scurve", "-n", "400", "-method", "em-paper", "-out", "p.npy", "-json", "p.json", "-q")
	var pj map[string]any
	json.Unmarshal(mustRead(t, dir, "p.json"), &pj)
	st, _ := pj["settings"].(map[string]any)
	if _, has := st["em_tol"]; has || st["em_iters"] != 10.0 {
		t.Errorf("em-paper settings: %v; want em_iters 10 and no em_tol", st)
	}
}

// TestStaleOutputsNote: a run into the same -out as an earlier one that drew more
// generations leaves the earlier STEM_gen*.npy and uncertainty files alone, and says so
// (the folder mixed two runs silently before session 31; a user trial).
func TestStaleOutputsNote(t *testing.T) {
	dir := t.TempDir()
	mustRun(t, dir, "embed", "-dataset", "scurve", "-n", "300", "-method", "em", "-generations", "4", "-uncertainty", "-out", "Y.npy", "-q")
	r := mustRun(t, dir, "embed", "-dataset", "scurve", "-n", "300", "-method", "direct", "-generations", "2", "-out", "Y.npy", "-json", "y.json")
	want := "Y_gen002.npy, Y_gen003.npy, Y_mean.npy, Y_uncertainty.npy"
	if !strings.Contains(r.stderr, "4 file(s) beside these outputs are from an earlier run") || !strings.Contains(r.stderr, want) {
		t.Errorf("stderr %q: want the note naming %s", r.stderr, want)
	}
	var j map[string]any
	json.Unmarshal(mustRead(t, dir, "y.json"), &j)
	if st, _ := j["stale_outputs"].([]any); len(st) != 4 {
		t.Errorf("stale_outputs %v, want the 4 files", j["stale_outputs"])
	}
	r = mustRun(t, dir, "embed", "-dataset", "scurve", "-n", "300", "-method", "direct", "-generations", "4", "-uncertainty", "-out", "Y.npy")
	if strings.Contains(r.stderr, "earlier run") {
		t.Errorf("a run that rewrote every file still noted stale ones: %q", r.stderr)
	}
}
