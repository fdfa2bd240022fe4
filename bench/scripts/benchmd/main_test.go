package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// writeTemp writes b to a new file in dir and returns its path.
func writeTemp(t *testing.T, dir string, b []byte) string {
	t.Helper()
	f, err := os.CreateTemp(dir, "in-*")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write(b); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return f.Name()
}

const benchSample = `goos: linux
goarch: amd64
pkg: glle/engine
BenchmarkPointFit/method=lle/k=10-2   	  300000	      3900 ns/op	 256410 points/s	       0 allocs/op
BenchmarkPointFit/method=lle/k=10-2   	  300000	      4100 ns/op	 243902 points/s	       0 allocs/op
BenchmarkPointFit/method=lle/k=10-2   	  300000	      4000 ns/op	 250000 points/s	       0 allocs/op
BenchmarkFactor/n=100000/amd-2        	       1	 812345678 ns/op	        41.5 nnzL/row
BenchmarkBroken-2 	 notanumber 	 12 ns/op
PASS
`

func TestReadBench(t *testing.T) {
	bf, err := readBench(writeTemp(t, t.TempDir(), []byte(benchSample)))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"BenchmarkPointFit/method=lle/k=10", "BenchmarkFactor/n=100000/amd"}
	if !slices.Equal(bf.order, want) {
		t.Fatalf("order %q, want %q (the -2 GOMAXPROCS suffix stripped, bad lines skipped)", bf.order, want)
	}
	if v, name, ok := bf.get("BenchmarkPointFit/method=lle/", "ns/op"); !ok || v != 4000 || name != want[0] {
		t.Errorf("ns/op median %v of %q (%v), want 4000", v, name, ok)
	}
	if v, _, ok := bf.get("BenchmarkFactor/", "nnzL/row"); !ok || v != 41.5 {
		t.Errorf("nnzL/row %v (%v), want 41.5", v, ok)
	}
	if _, _, ok := bf.get("BenchmarkFactor/", "points/s"); ok {
		t.Error("a unit the benchmark does not report was found")
	}
	if _, err := readBench(filepath.Join(t.TempDir(), "missing.txt")); err == nil {
		t.Error("a missing file gave no error")
	}
}

// FuzzReadBench: readBench never panics on arbitrary bytes, every benchmark it lists starts
// with "Benchmark" and is listed once, and what it read survives a write/read round trip (one
// value per line, a "-1" GOMAXPROCS suffix added for the reader to strip).
func FuzzReadBench(f *testing.F) {
	f.Add([]byte(benchSample))
	f.Add([]byte("BenchmarkA-4 10 1 ns/op 2 B/op\nBenchmarkA-4 10 3 ns/op\nBenchmarkB 1 NaN x\n"))
	f.Add([]byte("BenchmarkA-x-3 5 1e400 ns/op\nBenchmark 1 2\n"))
	f.Add([]byte("Benchmark\xff-1 7 -0 u\r\n"))
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, b []byte) {
		path := writeTemp(t, dir, b)
		defer os.Remove(path)
		bf, err := readBench(path)
		if err != nil {
			return // a line longer than the scanner's 1 MiB buffer
		}
		if len(bf.order) != len(bf.vals) {
			t.Fatalf("%d names in order, %d in vals", len(bf.order), len(bf.vals))
		}
		var out bytes.Buffer
		for i, name := range bf.order {
			if !strings.HasPrefix(name, "Benchmark") || slices.Contains(bf.order[:i], name) {
				t.Fatalf("name %q (order %q)", name, bf.order)
			}
			if len(bf.vals[name]) == 0 {
				fmt.Fprintf(&out, "%s-1 1 - -\n", name) // listed without a value
			}
			for unit, vs := range bf.vals[name] {
				for _, v := range vs {
					fmt.Fprintf(&out, "%s-1 1 %s %s\n", name, strconv.FormatFloat(v, 'g', -1, 64), unit)
				}
			}
		}
		p2 := writeTemp(t, dir, out.Bytes())
		defer os.Remove(p2)
		bf2, err := readBench(p2)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(bf.order, bf2.order) {
			t.Fatalf("order %q after a round trip, was %q", bf2.order, bf.order)
		}
		for _, name := range bf.order {
			if len(bf.vals[name]) != len(bf2.vals[name]) {
				t.Fatalf("%s: units %v after a round trip, were %v", name, bf2.vals[name], bf.vals[name])
			}
			for unit, vs := range bf.vals[name] {
				if !slices.EqualFunc(vs, bf2.vals[name][unit], func(a, b float64) bool { return a == b || math.IsNaN(a) && math.IsNaN(b) }) {
					t.Fatalf("%s %s: %v after a round trip, was %v", name, unit, bf2.vals[name][unit], vs)
				}
			}
		}
	})
}

// FuzzReadSweep: readSweep never panics, its errors are one line naming the file, and an
// accepted report reads back the same after it is written again.
func FuzzReadSweep(f *testing.F) {
	f.Add([]byte(`{"started":"2024-05-01T10:00:00Z","loadavg_start":"0.5 0.4 0.3","go_version":"go1.26",` +
		`"runs":[{"n":1000,"method":"lle","backend":"openblas","stages":[{"name":"knn","seconds":0.1}],"fit_seconds":1.5,` +
		`"fit_runs":[1.4,1.5,1.6]},{"n":2000,"method":"em","error":"killed"}],` +
		`"peers":[{"n":1000,"seconds":3,"runs":[3],"ours_over_theirs":0.5,"max_principal_angle_sine":1e-12}]}`))
	f.Add([]byte(`{"runs":[{"n":"x"}]}`))
	f.Add([]byte(`{"started":"not a time"}`))
	f.Add([]byte(`{"runs":[{"n":1e400}]} trailing`))
	f.Add([]byte(`null`))
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, b []byte) {
		path := writeTemp(t, dir, b)
		defer os.Remove(path)
		s, err := readSweep(path)
		if err != nil {
			if msg := err.Error(); strings.Contains(msg, "\n") || !strings.HasPrefix(msg, path+": ") {
				t.Fatalf("error %q: not one line naming %s", msg, path)
			}
			return
		}
		j1, err := json.Marshal(s)
		if err != nil {
			return // a time json.Marshal cannot write (year outside 0..9999 in its own zone)
		}
		p2 := writeTemp(t, dir, j1)
		defer os.Remove(p2)
		s2, err := readSweep(p2)
		if err != nil {
			t.Fatalf("re-reading %s: %v", j1, err)
		}
		if j2, err := json.Marshal(s2); err != nil || !bytes.Equal(j1, j2) {
			t.Fatalf("round trip changed the report:\n%s\n%s (%v)", j1, j2, err)
		}
	})
}

// quotedOracle is quotedSections restated line by line: a section starts at every line but
// the first that begins with "## " and runs to the next one (the last to the end of the text).
func quotedOracle(text string, keys []string) string {
	lines := strings.Split(text, "\n")
	var starts []int
	for i := 1; i < len(lines); i++ {
		if strings.HasPrefix(lines[i], "## ") {
			starts = append(starts, i)
		}
	}
	var b strings.Builder
	for s, i := range starts {
		end := len(lines)
		if s+1 < len(starts) {
			end = starts[s+1]
		}
		body := strings.TrimPrefix(strings.Join(lines[i:end], "\n"), "## ")
		if !slices.ContainsFunc(keys, func(k string) bool { return strings.Contains(lines[i][3:], k) }) {
			continue
		}
		b.WriteString("#### " + body)
		if !strings.HasSuffix(body, "\n") {
			b.WriteString("\n")
		}
		b.WriteString("\n")
	}
	return b.String()
}

// FuzzQuotedSections: quotedSections never panics and picks exactly the sections a line-by-line
// reading picks, for one fuzzed key and for the key "" (every section).
func FuzzQuotedSections(f *testing.F) {
	f.Add([]byte("# Notes\n\n## Authors' code: cost\n900 s at n = 5000\n\n## Other\nx\n## scikit-learn 1.2.1\n37-40 s"), "cost")
	f.Add([]byte("## first line is no section\n## a\n## b\n"), "a")
	f.Add([]byte("\n## \n##\n## x\r\n"), "")
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, b []byte, key string) {
		path := writeTemp(t, dir, b)
		defer os.Remove(path)
		for _, keys := range [][]string{{key}, {""}, nil} {
			if got, want := quotedSections(path, keys...), quotedOracle(string(b), keys); got != want {
				t.Fatalf("keys %q: got\n%q\nwant\n%q", keys, got, want)
			}
		}
	})
}

func TestQuotedSectionsUnreadable(t *testing.T) {
	if got := quotedSections(filepath.Join(t.TempDir(), "missing.md"), "x"); !strings.HasPrefix(got, "(reference notes ") {
		t.Errorf("missing notes: %q", got)
	}
}

// FuzzLoadFile: loadFile never panics, returns one line, and keeps the first three fields of
// every line that has at least three, in order, joined by "->".
func FuzzLoadFile(f *testing.F) {
	f.Add([]byte("0.52 0.61 0.70 2/345 6789\n1.10 0.80 0.75 1/300 6800\n"))
	f.Add([]byte("short\n\n  a b c\r\n-> -> ->"))
	f.Add([]byte(""))
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, b []byte) {
		path := writeTemp(t, dir, b)
		defer os.Remove(path)
		got := loadFile(path)
		if strings.Contains(got, "\n") {
			t.Fatalf("%q is not one line", got)
		}
		var want []string
		for _, l := range strings.Split(string(b), "\n") {
			if fs := strings.Fields(l); len(fs) >= 3 {
				if len(want) > 0 {
					want = append(want, "->")
				}
				want = append(want, fs[:3]...)
			}
		}
		if fs := strings.Fields(got); !slices.Equal(fs, want) {
			t.Fatalf("loadFile(%q) = %q, want the fields %q", b, got, want)
		}
	})
}

func TestLoadFileMissing(t *testing.T) {
	if got := loadFile(filepath.Join(t.TempDir(), "missing.txt")); got != "not recorded" {
		t.Errorf("missing file: %q", got)
	}
}

var gibRE = regexp.MustCompile(`^[0-9]+\.[0-9] GiB$`)

// TestMemGiB: MemTotal (bytes, procfs.Size; 0 when unknown) in GiB with one decimal.
func TestMemGiB(t *testing.T) {
	for _, c := range []struct {
		b    int64
		want string
	}{
		{2097152 << 10, "2.0 GiB"},
		{16318028 << 10, "15.6 GiB"},
		{0, "unknown"},
		{-1, "unknown"},
	} {
		if got := memGiB(c.b); got != c.want {
			t.Errorf("memGiB(%d) = %q, want %q", c.b, got, c.want)
		}
	}
	if got := memTotal(); got != "unknown" && !gibRE.MatchString(got) {
		t.Errorf("memTotal() = %q", got)
	}
}

// TestBuild writes the document from a small set of saved outputs: the numbers come from the
// files, a failed run is shown as failed and never counts as a measurement of a target.
func TestBuild(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("openblas.txt", benchSample)
	write("purego.txt", strings.ReplaceAll(benchSample, "812345678", "1624691356"))
	write("benchstat.txt", "benchstat output\n")
	write("sweep_lle.json", `{"started":"2024-05-01T10:00:00Z","loadavg_start":"0.5","loadavg_end":"0.6","runs":[`+
		`{"n":1000000,"method":"lle","backend":"openblas","fit_seconds":42.5,"wall_seconds":50,"peak_rss_bytes":4294967296},`+
		`{"n":200000,"method":"lle","error":"killed | oom"}],"peers_note":"scikit-learn not available (x): peers skipped"}`)
	write("sweep_gen.json", `{"runs":[{"n":200000,"method":"em","fit_seconds":10,"generations":3,"generation_seconds":2.5,"generation_to_fit":0.25}]}`)
	write("notes.md", "# notes\n## Authors' code: cost\n900 s\n## unrelated\nskip me\n")
	doc, err := build(dir, filepath.Join(dir, "notes.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"| LLE at n = 1M: <= 60 s and <= 6 GiB (issue 3) | 42.5 s fit (50.0 s wall), 4.00 GiB peak RSS | met |",
		"| em at n = 200000: one more generation <= 30% of the fit | 2.50 s vs fit 10.0 s = 25% | met |",
		"| 200000 | lle | | failed: killed / oom |",
		"#### Authors' code: cost\n900 s\n",
	} {
		if !strings.Contains(doc, want) {
			t.Errorf("document lacks %q", want)
		}
	}
	if strings.Contains(doc, "skip me") || strings.Contains(doc, "LLE at n = 200k") {
		t.Error("the document quotes an unrelated section or counts the failed 200k run")
	}
	if err := os.Remove(filepath.Join(dir, "sweep_gen.json")); err != nil {
		t.Fatal(err)
	}
	if _, err := build(dir, filepath.Join(dir, "notes.md")); err == nil || !strings.Contains(err.Error(), "sweep.sh") {
		t.Errorf("missing sweep_gen.json: %v", err)
	}
}
