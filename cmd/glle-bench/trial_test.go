package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"glle/bench/dataio"
)

// Tests of the defects a user trial found (besides the named pipes of fifo_test.go).

// TestOutputsUmask: a new output gets 0666 less the umask, as any program's new file (every
// output was chmodded to 0644, so umask 077 left them readable by all); a replaced output
// keeps its own mode; a created -model folder gets 0777 less the umask. The umask is the test
// process's, which the binary inherits.
func TestOutputsUmask(t *testing.T) {
	old := syscall.Umask(0o077)
	defer syscall.Umask(old)
	for _, c := range []struct {
		umask     int
		file, dir os.FileMode
	}{{0o077, 0o600, 0o700}, {0o002, 0o664, 0o775}} {
		syscall.Umask(c.umask)
		dir := t.TempDir()
		mustRun(t, dir, "embed", "-dataset", "swissroll", "-n", "300", "-method", "em", "-generations", "2", "-uncertainty",
			"-out", "y.csv", "-model", "m", "-json", "r.json", "-plot", "y.png", "-q")
		mustRun(t, dir, "bench", "-sizes", "100", "-methods", "lle", "-generations", "0", "-json", "b.json")
		files := []string{"y.csv", "y_gen000.csv", "y_gen001.csv", "y_uncertainty.csv", "y_mean.csv", "r.json", "y.png", "y_uncertainty.png", "b.json",
			"m/model.json", "m/X.npy", "m/weights.npy", "m/neighbors.npy", "m/sigma.npy", "m/embedding.npy"}
		for _, f := range files {
			if fi, err := os.Stat(filepath.Join(dir, f)); err != nil || fi.Mode().Perm() != c.file {
				t.Errorf("umask %03o: %s has mode %v, want %v (%v)", c.umask, f, fi.Mode().Perm(), c.file, err)
			}
		}
		if fi, err := os.Stat(filepath.Join(dir, "m")); err != nil || fi.Mode().Perm() != c.dir {
			t.Errorf("umask %03o: the model folder has mode %v, want %v (%v)", c.umask, fi.Mode().Perm(), c.dir, err)
		}
		// Replaced files keep their modes, whatever the umask.
		os.Chmod(filepath.Join(dir, "y.csv"), 0o640)
		os.Chmod(filepath.Join(dir, "r.json"), 0o604)
		mustRun(t, dir, "embed", "-dataset", "swissroll", "-n", "300", "-out", "y.csv", "-json", "r.json", "-q")
		for f, want := range map[string]os.FileMode{"y.csv": 0o640, "r.json": 0o604} {
			if fi, err := os.Stat(filepath.Join(dir, f)); err != nil || fi.Mode().Perm() != want {
				t.Errorf("umask %03o: replaced %s has mode %v, want %v (%v)", c.umask, f, fi.Mode().Perm(), want, err)
			}
		}
	}
}

// TestQuotedCSV: a quoted header name holding a comma is one name ("line 2 has 3 values,
// expected 4" before), and a quoted value with a decimal comma is refused saying so
// (`"\"1" is not a number` before).
func TestQuotedCSV(t *testing.T) {
	dir := t.TempDir()
	mustRun(t, dir, "dataset", "-name", "scurve", "-n", "300", "-out", "x.csv", "-q")
	x := mustRead(t, dir, "x.csv")
	os.WriteFile(filepath.Join(dir, "named.csv"), append([]byte("\"a,b\",\"c \"\"d\"\"\",e\n"), x...), 0o644)
	mustRun(t, dir, "embed", "-in", "named.csv", "-out", "named.npy", "-q")
	mustRun(t, dir, "embed", "-in", "x.csv", "-out", "plain.npy", "-q")
	if !bytes.Equal(mustRead(t, dir, "named.npy"), mustRead(t, dir, "plain.npy")) {
		t.Error("the data under a quoted header embeds differently")
	}
	os.WriteFile(filepath.Join(dir, "comma.csv"), append([]byte("a,b,c\n\"1,5\",2,3\n"), x...), 0o644)
	checkBad(t, dir, badCase{"decimal comma", []string{"embed", "-in", "comma.csv", "-out", "z.npy"}, `"1,5" has a comma, which is not read as a number: write a decimal point for a decimal comma (1.5)`})
	os.WriteFile(filepath.Join(dir, "open.csv"), append([]byte("\"a,b,c\n"), x...), 0o644)
	checkBad(t, dir, badCase{"unclosed quote", []string{"embed", "-in", "open.csv", "-out", "z.npy"}, "double quote that opens this cell is not closed"})
}

// TestUncertaintyHelp: -h says what -uncertainty computes: the spread over the rigidly aligned
// generations, never rescaled by -align-scale (it said "over the aligned generations"); and
// that is what is computed: the files are the same without -align, with it and with
// -align-scale.
func TestUncertaintyHelp(t *testing.T) {
	dir := t.TempDir()
	base := []string{"embed", "-dataset", "scurve", "-n", "300", "-method", "em", "-generations", "3", "-uncertainty", "-q"}
	mustRun(t, dir, append(base, "-out", "a.npy")...)
	mustRun(t, dir, append(base, "-out", "b.npy", "-align")...)
	mustRun(t, dir, append(base, "-out", "c.npy", "-align", "-align-scale")...)
	for _, f := range []string{"%s_uncertainty.npy", "%s_mean.npy"} {
		for _, o := range []string{"b", "c"} {
			if !bytes.Equal(mustRead(t, dir, fmt.Sprintf(f, "a")), mustRead(t, dir, fmt.Sprintf(f, o))) {
				t.Errorf("%s differs from %s", fmt.Sprintf(f, o), fmt.Sprintf(f, "a"))
			}
		}
	}
	if bytes.Equal(mustRead(t, dir, "b_gen000.npy"), mustRead(t, dir, "c_gen000.npy")) {
		t.Error("-align-scale did not rescale the written generation")
	}
	for _, cmd := range []string{"embed", "generate", "transform"} {
		h := mustRun(t, dir, cmd, "-h").stdout
		for _, want := range []string{"rigid", "never a scale", "-align-scale does not change them"} {
			if !strings.Contains(h, want) {
				t.Errorf("%s -h: -uncertainty does not say %q", cmd, want)
			}
		}
	}
}

// TestSeedFromModel: generate and transform draw with the seed the model records (the embed
// run's -seed) unless -seed is given, so 'generate -model m' reproduces 'embed -seed 5
// -generations' (it used seed 1). embed -seed without -dataset, generations or -model does
// nothing and is refused, as transform refuses -seed without generations; with -model it is
// recorded, and accepted.
func TestSeedFromModel(t *testing.T) {
	dir := t.TempDir()
	mustRun(t, dir, "dataset", "-name", "swissroll", "-n", "300", "-out", "x.npy", "-q")
	mustRun(t, dir, "embed", "-in", "x.npy", "-method", "em", "-seed", "5", "-generations", "2", "-out", "y.npy", "-model", "m", "-q")
	mustRun(t, dir, "generate", "-model", "m", "-generations", "2", "-out", "g")
	mustRun(t, dir, "generate", "-model", "m", "-generations", "1", "-seed", "1", "-out", "s1")
	for g := range 2 {
		name := genPath("y.npy", g)
		if !bytes.Equal(mustRead(t, dir, name), mustRead(t, dir, genPath("g.npy", g))) {
			t.Errorf("generate without -seed: generation %d differs from embed -seed 5's", g)
		}
	}
	if bytes.Equal(mustRead(t, dir, "s1_gen000.npy"), mustRead(t, dir, "g_gen000.npy")) {
		t.Error("generate -seed 1 gave the model's seed-5 generation")
	}
	// transform: generation g of the training points is the embed run's generation g.
	mustRun(t, dir, "transform", "-model", "m", "-in", "x.npy", "-generations", "1", "-out", "t.npy", "-q")
	if !bytes.Equal(mustRead(t, dir, "t_gen000.npy"), mustRead(t, dir, "y_gen000.npy")) {
		t.Error("transform without -seed: generation 0 of the training points differs from embed -seed 5's")
	}
	// The help names the default.
	for _, cmd := range []string{"generate", "transform"} {
		for _, line := range strings.Split(mustRun(t, dir, cmd, "-h").stdout, "\n") {
			if strings.HasPrefix(strings.TrimSpace(line), "-seed ") && !strings.Contains(line, "(default the model's)") {
				t.Errorf("%s -h: %q", cmd, line)
			}
		}
	}
	checkBad(t, dir, badCase{"embed seed that does nothing", []string{"embed", "-in", "x.npy", "-out", "z.npy", "-seed", "5"}, "-seed applies to -dataset and to the generations"})
	mustRun(t, dir, "embed", "-in", "x.npy", "-method", "em", "-seed", "7", "-out", "z.npy", "-model", "m7", "-q")
	mustRun(t, dir, "embed", "-dataset", "scurve", "-n", "300", "-seed", "7", "-out", "d.npy", "-q")
	mustRun(t, dir, "embed", "-in", "x.npy", "-method", "em", "-seed", "7", "-generations", "1", "-out", "e7.npy", "-q")
	mustRun(t, dir, "generate", "-model", "m7", "-generations", "1", "-out", "g7", "-q")
	if !bytes.Equal(mustRead(t, dir, "g7_gen000.npy"), mustRead(t, dir, "e7_gen000.npy")) {
		t.Error("the seed recorded by 'embed -seed 7 -model' without generations is not generate's default")
	}
}

// TestTrialBadInput: the parse-level defects of the user trial, each exit 2 with one line
// naming the rule and nothing written.
func TestTrialBadInput(t *testing.T) {
	dir := t.TempDir()
	mustRun(t, dir, "embed", "-dataset", "swissroll", "-n", "300", "-method", "em", "-out", "y.npy", "-model", "m", "-q")
	ds := []string{"embed", "-dataset", "swissroll", "-n", "300", "-out", "z.npy"}
	// Clipped: every case appends to em, and spare capacity would let them share one array.
	em := slices.Clip(append(append([]string(nil), ds...), "-method", "em", "-generations", "1"))
	gen := []string{"generate", "-model", "m", "-generations", "1"}
	tr := []string{"transform", "-model", "m", "-in", "y.npy", "-out", "t.npy", "-generations", "1"}
	for _, c := range []badCase{
		// Infinite values named the wrong rule ("must be positive").
		{"reg Inf", append(ds, "-reg", "Inf"), "-reg +Inf: the regularization must be a finite positive number"},
		{"em-tol Inf", append(ds, "-method", "em", "-em-tol", "+Inf"), "-em-tol +Inf: must be a finite positive number"},
		{"em-tol 5", append(ds, "-method", "em", "-em-tol", "5"), "-em-tol 5: a relative tolerance must be below 1"},
		// Go's number spellings: read by the flag package (-k 0x10 was 16, 1_0 was 10, a user
		// trial); refused since session 33, as the data readers refuse them.
		{"k hex", append(ds, "-k", "0x10"), "invalid value \"0x10\" for flag -k: write the number in decimal, without a base prefix or '_'"},
		{"k underscore", append(ds, "-k", "1_0"), "invalid value \"1_0\" for flag -k: write the number in decimal"},
		{"cov-scale hex float", append(ds, "-method", "em", "-generations", "1", "-cov-scale", "0x1p-2"), "invalid value \"0x1p-2\" for flag -cov-scale: write the number in decimal"},
		{"seed binary", append(ds, "-method", "em", "-generations", "1", "-seed", "0b1"), "invalid value \"0b1\" for flag -seed: write the number in decimal"},
		// Not a number, or out of range: the flag package's wording, for each decimal flag type.
		{"k not a number", append(ds, "-k", "abc"), "invalid value \"abc\" for flag -k: parse error"},
		{"k out of range", append(ds, "-k", "99999999999999999999"), "invalid value \"99999999999999999999\" for flag -k: value out of range"},
		{"seed negative", append(ds, "-method", "em", "-generations", "1", "-seed", "-1"), "invalid value \"-1\" for flag -seed: parse error"},
		{"seed out of range", append(ds, "-method", "em", "-generations", "1", "-seed", "18446744073709551616"), "for flag -seed: value out of range"},
		{"cov-scale not a number", append(em, "-cov-scale", "1.5x"), "invalid value \"1.5x\" for flag -cov-scale: parse error"},
		{"cov-scale out of range", append(em, "-cov-scale", "1e999"), "invalid value \"1e999\" for flag -cov-scale: value out of range"},
		{"direct-ridge Inf", append(ds, "-method", "direct-paper", "-direct-ridge", "Inf"), "-direct-ridge +Inf: must be a finite non-negative number"},
		{"embed cov-scale Inf", append(em, "-cov-scale", "Inf"), "-cov-scale +Inf: the covariance scale must be a finite non-negative number"},
		{"generate cov-scale Inf", append(gen, "-cov-scale", "Inf", "-out", "g"), "must be a finite non-negative number"},
		{"transform cov-scale -Inf", append(tr, "-cov-scale", "-Inf"), "-cov-scale -Inf: the covariance scale must be a finite non-negative number"},
		// generate -out G.json wrote G.json_gen000.npy; -out .npy an empty stem.
		{"generate json prefix", append(gen, "-out", "G.json"), `-out "G.json" is a prefix of data files, and .json is not a data format`},
		{"generate png prefix", append(gen, "-out", "sub/G.PNG"), "is not a data format"},
		{"generate empty stem", append(gen, "-out", ".npy"), "has no file name"},
		{"embed empty stem", []string{"embed", "-dataset", "swissroll", "-n", "300", "-out", ".npy"}, `-out ".npy" has no file name before its extension`},
		{"embed empty stem in a folder", []string{"embed", "-dataset", "swissroll", "-n", "300", "-out", "m/.csv"}, "has no file name before its extension"},
		{"dataset empty stem", []string{"dataset", "-name", "scurve", "-out", ".txt"}, "has no file name before its extension"},
		{"dataset color-out empty stem", []string{"dataset", "-name", "scurve", "-out", "x.npy", "-color-out", ".npy"}, "-color-out"},
		{"transform empty stem", []string{"transform", "-model", "m", "-in", "y.npy", "-out", ".npy"}, "has no file name before its extension"},
		{"json empty stem", append(ds, "-json", ".json"), `-json ".json" has no file name`},
		{"plot empty stem", append(ds, "-plot", ".png"), `-plot ".png" has no file name`},
		// bench: duplicates ran twice and overwrote each other's -keep files; -json inside
		// a -keep folder still to be created said "create the folder first".
		{"bench duplicate size", []string{"bench", "-sizes", "100,200,100"}, `-sizes "100,200,100" lists 100 twice`},
		{"bench duplicate size spelled apart", []string{"bench", "-sizes", "100, 0100"}, "lists 100 twice"},
		{"bench duplicate method", []string{"bench", "-sizes", "100", "-methods", "lle,em,LLE"}, "lists lle twice"},
		{"bench json in a new keep", []string{"bench", "-sizes", "100", "-keep", "keepnew", "-json", "keepnew/r.json"}, "is inside -keep"},
	} {
		checkBad(t, dir, c)
	}
}

// TestHelpHelp: 'help help' is the overview ('help' is among the topics the unknown-topic error
// lists, and was refused as unknown itself).
func TestHelpHelp(t *testing.T) {
	dir := t.TempDir()
	want := mustRun(t, dir, "help").stdout
	for _, args := range [][]string{{"help", "help"}, {"help", "-h"}, {"-h", "help"}} {
		if r := runBin(t, dir, args...); r.code != exitOK || r.stdout != want {
			t.Errorf("%v: exit %d, stderr %q", args, r.code, r.stderr)
		}
	}
	if r := runBin(t, dir, "help", "nothing"); r.code != exitBadInput || !strings.Contains(r.stderr, "help") {
		t.Errorf("help nothing: exit %d, %q", r.code, r.stderr)
	}
}

// TestAlignRecorded: -align and -align-scale are recorded where the other generation flags
// are: embed's settings, generate's and transform's settings, model.json (embed_generations)
// and every generation entry, which says what its file holds ("frame": "eigen", "aligned":
// true, "align_scale": true). Before, the entries of Procrustes-aligned, rescaled files said
// "frame": "eigen" and nothing else, generate had no settings, and neither embed's settings nor
// model.json named -align, which the help says reproducing the files needs.
func TestAlignRecorded(t *testing.T) {
	dir := t.TempDir()
	type gen struct {
		Frame      *string `json:"frame"`
		Aligned    *bool   `json:"aligned"`
		AlignScale *bool   `json:"align_scale"`
	}
	type report struct {
		Settings    map[string]any `json:"settings"`
		Generations []gen          `json:"generations"`
	}
	read := func(name string) report {
		var r report
		if err := json.Unmarshal(mustRead(t, dir, name), &r); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		return r
	}
	check := func(name string, r report, frame string, align, scale bool) {
		t.Helper()
		for k, want := range map[string]any{"align": align, "align_scale": scale, "cov_scale": 0.5, "generations": 2.0} {
			if got, ok := r.Settings[k]; !ok || got != want {
				t.Errorf("%s: settings[%q] = %v (present %v), want %v", name, k, got, ok, want)
			}
		}
		if frame != "" && r.Settings["frame"] != frame {
			t.Errorf("%s: settings[frame] = %v, want %s", name, r.Settings["frame"], frame)
		}
		if len(r.Generations) != 2 {
			t.Fatalf("%s: %d generations", name, len(r.Generations))
		}
		for g, e := range r.Generations {
			if e.Aligned == nil || *e.Aligned != align || e.AlignScale == nil || *e.AlignScale != scale || (frame == "") != (e.Frame == nil) || e.Frame != nil && *e.Frame != frame {
				t.Errorf("%s: generation %d says frame %v, aligned %v, align_scale %v; want %q, %v, %v", name, g, e.Frame, e.Aligned, e.AlignScale, frame, align, scale)
			}
		}
	}
	flags := []string{"-generations", "2", "-cov-scale", "0.5", "-frame", "eigen", "-align", "-align-scale"}
	mustRun(t, dir, append([]string{"embed", "-dataset", "swissroll", "-n", "300", "-method", "em", "-model", "m", "-out", "y.npy", "-json", "y.json", "-q"}, flags...)...)
	check("embed", read("y.json"), "eigen", true, true)
	var meta struct {
		Gens map[string]any `json:"embed_generations"`
	}
	if err := json.Unmarshal(mustRead(t, dir, "m/model.json"), &meta); err != nil {
		t.Fatal(err)
	}
	for k, want := range map[string]any{"generations": 2.0, "cov_scale": 0.5, "frame": "eigen", "align": true, "align_scale": true} {
		if meta.Gens[k] != want {
			t.Errorf("model.json embed_generations[%q] = %v, want %v", k, meta.Gens[k], want)
		}
	}
	mustRun(t, dir, append([]string{"generate", "-model", "m", "-out", "g", "-json", "g.json", "-q"}, flags...)...)
	check("generate", read("g.json"), "eigen", true, true)
	for g := range 2 { // the flags model.json records reproduce the files
		if !bytes.Equal(mustRead(t, dir, genPath("y.npy", g)), mustRead(t, dir, genPath("g.npy", g))) {
			t.Errorf("generate with embed_generations' flags: generation %d differs from embed's", g)
		}
	}
	mustRun(t, dir, "generate", "-model", "m", "-out", "p", "-json", "p.json", "-generations", "2", "-cov-scale", "0.5", "-q")
	check("generate without -align", read("p.json"), "base", false, false)
	mustRun(t, dir, "dataset", "-name", "scurve", "-n", "50", "-out", "new.npy", "-q")
	mustRun(t, dir, append([]string{"transform", "-model", "m", "-in", "new.npy", "-out", "t.npy", "-json", "t.json", "-q"}, flags...)...)
	check("transform", read("t.json"), "eigen", true, true)
	mustRun(t, dir, "transform", "-model", "m", "-in", "new.npy", "-out", "b.npy", "-json", "b.json", "-generations", "2", "-cov-scale", "0.5", "-base-only", "-q")
	check("transform -base-only", read("b.json"), "", false, false)
	// No generations: embed's model.json has no embed_generations.
	mustRun(t, dir, "embed", "-dataset", "swissroll", "-n", "300", "-method", "em", "-model", "m0", "-out", "z.npy", "-q")
	if strings.Contains(string(mustRead(t, dir, "m0/model.json")), "embed_generations") {
		t.Error("model.json of a run without generations has embed_generations")
	}
}

// TestGammaInformational: a direct model's gamma.npy is for inspection only, and says so:
// model.json lists it under informational_files, not among the files generate and transform
// read, and the help says they do not read it. A corrupt, NaN-holding or missing gamma.npy
// therefore changes no generation. Before, model.json listed it in files and the help among
// the model's files, while generate ignored it silently.
func TestGammaInformational(t *testing.T) {
	dir := t.TempDir()
	mustRun(t, dir, "embed", "-dataset", "swissroll", "-n", "300", "-method", "direct", "-generations", "1", "-model", "m", "-out", "y.npy", "-q")
	var meta modelMeta
	if err := json.Unmarshal(mustRead(t, dir, "m/model.json"), &meta); err != nil {
		t.Fatal(err)
	}
	if slices.Contains(meta.Files, gammaFile) || !slices.Equal(meta.Informational, []string{gammaFile}) {
		t.Errorf("model.json: files %v, informational_files %v; want gamma.npy only in informational_files", meta.Files, meta.Informational)
	}
	for _, cmd := range []string{"embed", "generate", "transform"} {
		if h := strings.Join(strings.Fields(mustRun(t, dir, cmd, "-h").stdout), " "); !strings.Contains(h, "for inspection only") {
			t.Errorf("%s -h does not say gamma.npy is for inspection only", cmd)
		}
	}
	gamma := filepath.Join(dir, "m", gammaFile)
	nan := make([]float64, 300*10*10)
	for i := range nan {
		nan[i] = math.NaN()
	}
	for _, c := range []struct {
		name  string
		spoil func() error
	}{
		{"corrupt", func() error { return os.WriteFile(gamma, []byte("not an npy file"), 0o644) }},
		{"NaN", func() error { return dataio.WriteNPYFile(gamma, []int{300, 10, 10}, nan) }},
		{"missing", func() error { return os.Remove(gamma) }},
	} {
		if err := c.spoil(); err != nil {
			t.Fatal(err)
		}
		mustRun(t, dir, "generate", "-model", "m", "-generations", "1", "-out", "g", "-q")
		if !bytes.Equal(mustRead(t, dir, "y_gen000.npy"), mustRead(t, dir, "g_gen000.npy")) {
			t.Errorf("%s gamma.npy: generation 0 differs from embed's", c.name)
		}
	}
	// Re-saving an em model into the folder removes the direct model's gamma.npy; re-saving a
	// direct one writes it again (the informational file is not retired with the model's).
	mustRun(t, dir, "embed", "-dataset", "swissroll", "-n", "300", "-method", "direct", "-model", "m", "-out", "y2.npy", "-q")
	if _, err := os.Stat(gamma); err != nil {
		t.Errorf("re-saved direct model: %v", err)
	}
	mustRun(t, dir, "embed", "-dataset", "swissroll", "-n", "300", "-method", "em", "-model", "m", "-out", "y3.npy", "-q")
	if _, err := os.Stat(gamma); !os.IsNotExist(err) {
		t.Errorf("em model saved over a direct one: gamma.npy %v, want removed", err)
	}
}
