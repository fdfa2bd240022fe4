package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"glle/bench/dataio"
)

// npyBytes is a version 1.0 .npy file with the given header fields and raw data.
func npyBytes(descr, fortran, shape string, data []byte) []byte {
	h := fmt.Sprintf("{'descr': '%s', 'fortran_order': %s, 'shape': %s, }", descr, fortran, shape)
	h += strings.Repeat(" ", 63-(10+len(h))%64) + "\n"
	b := append([]byte("\x93NUMPY\x01\x00"), byte(len(h)), byte(len(h)>>8))
	return append(append(b, h...), data...)
}

// writeNPY is dataio.WriteNPY into memory.
func writeNPY(tb testing.TB, shape []int, v []float64) []byte {
	var b bytes.Buffer
	if err := dataio.WriteNPY(&b, shape, v); err != nil {
		tb.Fatal(err)
	}
	return b.Bytes()
}

// FuzzColorValues feeds arbitrary bytes through the .npy reader and the -color conversion for
// n points, both in memory (dataio.ReadNPY, colorValues) and as readColor reads a file: neither
// may panic, every refusal is a one-line bad-input error naming -color with a fix, exactly the
// (n,), (n, 1) and (1, n) arrays of finite values are accepted (n >= 1), as a copy of their
// values in order, and the file gives the same answer as memory.
func FuzzColorValues(f *testing.F) {
	five := []float64{0.5, -1, 2, 3e10, 0}
	ints := new(bytes.Buffer)
	dataio.WriteNPYInt64(ints, []int{5}, []int64{1, 2, 3, -4, 1 << 60})
	f32 := []byte{}
	for _, v := range []float32{1, 2.5, -3, 4, 5} {
		f32 = append(f32, byte(math.Float32bits(v)), byte(math.Float32bits(v)>>8), byte(math.Float32bits(v)>>16), byte(math.Float32bits(v)>>24))
	}
	le := func(v ...float64) []byte {
		var b []byte
		for _, x := range v {
			u := math.Float64bits(x)
			for i := 0; i < 8; i++ {
				b = append(b, byte(u>>(8*i)))
			}
		}
		return b
	}
	for _, s := range []struct {
		b []byte
		n int
	}{
		{writeNPY(f, []int{5}, five), 5},                                  // a NumPy vector (np.save of a 1-D array)
		{writeNPY(f, []int{5, 1}, five), 5},                               // what dataset -color-out writes
		{writeNPY(f, []int{1, 5}, five), 5},                               // a row
		{writeNPY(f, []int{5}, five), 4},                                  // too many values
		{writeNPY(f, []int{5, 2}, append(five, five...)), 5},              // two columns
		{writeNPY(f, []int{5, 1, 1}, five), 5},                            // 3-D
		{writeNPY(f, nil, []float64{1}), 1},                               // a scalar
		{writeNPY(f, []int{0}, nil), 0},                                   // empty, for no points
		{writeNPY(f, []int{1}, []float64{7}), 1},                          // one point
		{ints.Bytes(), 5},                                                 // int64
		{npyBytes("<f4", "False", "(5,)", f32), 5},                        // float32
		{npyBytes("<f8", "True", "(5, 1)", le(five...)), 5},               // Fortran order
		{npyBytes("<f8", "False", "(5,)", le(1, math.NaN(), 3, 4, 5)), 5}, // NaN
		{npyBytes(">f8", "False", "(2,)", []byte{0x7f, 0xf0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}), 2}, // +Inf, big-endian
		{npyBytes("<f8", "False", "(99999999999,)", nil), math.MaxInt},                                      // truncated data
		{npyBytes("<c16", "False", "(5,)", make([]byte, 80)), 5},                                            // unsupported dtype
		{[]byte("0.5\n1\n2\n"), 3}, // text, not .npy
		{nil, 3},
	} {
		f.Add(s.b, s.n)
	}
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, b []byte, n int) {
		const path = "c.npy"
		checkErr := func(where string, err error) {
			t.Helper()
			var ie *inputError
			if !errors.As(err, &ie) || ie.fix == "" {
				t.Fatalf("%s: %T %v is not a bad-input error with a fix", where, err, err)
			}
			if msg := err.Error(); msg == "" || oneLine(msg) != msg || !strings.HasPrefix(msg, "-color ") {
				t.Fatalf("%s: error %q is not one line starting with -color", where, msg)
			}
		}
		a, rerr := dataio.ReadNPY(bytes.NewReader(b))
		var mem []float64
		var merr error
		if rerr != nil {
			merr = dataFileError("color", path, fmt.Errorf("%s: %w", path, rerr), colorFix)
		} else {
			mem, merr = colorValues(path, a.Shape, a.Floats(), n)
		}
		if merr != nil {
			checkErr("colorValues", merr)
		}
		if rerr == nil {
			v := a.Floats()
			ok := n >= 1 && len(v) == n && (len(a.Shape) == 1 ||
				len(a.Shape) == 2 && (a.Shape[0] == n && a.Shape[1] == 1 || a.Shape[0] == 1 && a.Shape[1] == n))
			for _, x := range v {
				ok = ok && !math.IsNaN(x) && !math.IsInf(x, 0)
			}
			if ok != (merr == nil) {
				t.Fatalf("shape %v with %d values for n = %d: accepted %v (%v)", a.Shape, len(v), n, merr == nil, merr)
			}
			if ok {
				for i := range v {
					if math.Float64bits(mem[i]) != math.Float64bits(v[i]) {
						t.Fatalf("colour %d is %v, the file holds %v", i, mem[i], v[i])
					}
				}
				if a.Float != nil {
					keep := mem[0]
					mem[0] = math.NaN()
					if math.IsNaN(a.Float[0]) {
						t.Fatal("colorValues returned the array's own slice")
					}
					mem[0] = keep
				}
			}
		}
		// The same bytes as a -color file.
		file := filepath.Join(dir, path)
		if err := os.WriteFile(file, b, 0o644); err != nil {
			t.Fatal(err)
		}
		got, ferr := readColor(context.Background(), io.Discard, file, n)
		if ferr != nil {
			checkErr("readColor", ferr)
		}
		if (ferr == nil) != (merr == nil) || ferr == nil && !equalBits(got, mem) {
			t.Fatalf("readColor: %v (%v); in memory: %v (%v)", got, ferr, mem, merr)
		}
	})
}

func equalBits(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if math.Float64bits(a[i]) != math.Float64bits(b[i]) {
			return false
		}
	}
	return true
}

// FuzzDecodePeerOutput: decodePeerOutput (a scikit-learn run's stdout, for n points) never
// panics; a refusal is one non-empty line; an accepted run has a time in (0, maxPeerSeconds], a
// peak RSS in (0, maxPeerRSSBytes] and reported the shape [n, 2], exactly as an independent
// decoding (json.Number into a map) reads the output, and every output that decoding finds
// complete and in range is accepted.
func FuzzDecodePeerOutput(f *testing.F) {
	for _, s := range []struct {
		out string
		n   int
	}{
		{`{"seconds": 0.8123456789012345, "peak_rss_bytes": 187654144, "shape": [1000, 2]}` + "\n", 1000},
		{`{"seconds": 12.5, "peak_rss_bytes": 1048576, "shape": [300, 2], "sklearn": "1.2.1"}`, 300},
		{`{"seconds": 0.5, "peak_rss_bytes": 1048576}`, 300},                    // an older script: no shape
		{`{"seconds": NaN, "peak_rss_bytes": 1048576, "shape": [300, 2]}`, 300}, // Python's json.dumps of a NaN
		{`{"seconds": Infinity, "peak_rss_bytes": 1, "shape": [300, 2]}`, 300},
		{`{"seconds": -0.5, "peak_rss_bytes": 1048576, "shape": [300, 2]}`, 300},
		{`{"seconds": 0, "peak_rss_bytes": 1048576, "shape": [300, 2]}`, 300},
		{`{"seconds": 1e300, "peak_rss_bytes": 1048576, "shape": [300, 2]}`, 300},
		{`{"seconds": "0.5", "peak_rss_bytes": 1048576, "shape": [300, 2]}`, 300},
		{`{"seconds": 0.5, "peak_rss_bytes": -1024, "shape": [300, 2]}`, 300},
		{`{"seconds": 0.5, "peak_rss_bytes": 1.5e9, "shape": [300, 2]}`, 300},
		{`{"seconds": 0.5, "peak_rss_bytes": 99999999999999999999, "shape": [300, 2]}`, 300},
		{`{"seconds": 0.5, "peak_rss_bytes": 1048576, "shape": [300, 3]}`, 300},
		{`{"seconds": 0.5, "peak_rss_bytes": 1048576, "shape": [10, 2]}`, 300},
		{`{"seconds": 0.5, "peak_rss_bytes": 1048576, "shape": [300,` + "\n" + ` 2, 1]}`, 300},
		{`{"seconds": 0.5, "peak_rss_bytes": 1048576, "shape": null}`, 300},
		{`{"Seconds": 0.5, "peak_rss_bytes": 1048576, "shape": [300, 2]}`, 300},
		{`{"seconds": 9, "seconds": 0.5, "peak_rss_bytes": 1048576, "shape": [300, 2]}`, 300},
		{`{"seconds": 0.5, "peak_rss_bytes": 1048576, "shape": [0, 2]}`, 0},
		{"FutureWarning: something\n" + `{"seconds": 0.5, "peak_rss_bytes": 1048576, "shape": [300, 2]}`, 300},
		{`{"seconds": 0.5, "peak_rss_bytes": 1048576, "shape": [300, 2]}{}`, 300},
		{`null`, 300},
		{`[0.5, 1048576]`, 300},
		{``, 300},
	} {
		f.Add([]byte(s.out), s.n)
	}
	f.Fuzz(func(t *testing.T, out []byte, n int) {
		got, err := decodePeerOutput(out, n)
		want, ok := referencePeerOutput(out, n)
		if err != nil {
			if msg := err.Error(); msg == "" || oneLine(msg) != msg {
				t.Fatalf("decodePeerOutput(%q, %d): error %q is not one line", out, n, msg)
			}
			if ok {
				t.Fatalf("decodePeerOutput(%q, %d) refused a complete run %+v: %v", out, n, want, err)
			}
			return
		}
		if !ok || got != want {
			t.Fatalf("decodePeerOutput(%q, %d) = %+v; the independent decoding gives %+v (complete: %v)", out, n, got, want, ok)
		}
		if !(got.Seconds > 0 && got.Seconds <= maxPeerSeconds) || got.PeakRSSBytes <= 0 || got.PeakRSSBytes > maxPeerRSSBytes || n < 1 {
			t.Fatalf("decodePeerOutput(%q, %d) accepted %+v", out, n, got)
		}
		// What the script would print for the accepted run reads back the same.
		again := fmt.Sprintf(`{"seconds": %s, "peak_rss_bytes": %d, "shape": [%d, %d]}`,
			strconv.FormatFloat(got.Seconds, 'g', -1, 64), got.PeakRSSBytes, n, peerDim)
		if r, err := decodePeerOutput([]byte(again), n); err != nil || r != got {
			t.Fatalf("%q read as %+v, its re-encoding %s as %+v (%v)", out, got, again, r, err)
		}
	})
}

// referencePeerOutput decodes a peer output with json.Number into a generic map and checks
// decodePeerOutput's contract by hand; ok reports a complete, in-range run.
func referencePeerOutput(out []byte, n int) (peerOutput, bool) {
	d := json.NewDecoder(bytes.NewReader(out))
	d.UseNumber()
	var m map[string]any
	if d.Decode(&m) != nil || m == nil {
		return peerOutput{}, false
	}
	if _, err := d.Token(); err != io.EOF { // one value only
		return peerOutput{}, false
	}
	sec, ok1 := m["seconds"].(json.Number)
	rss, ok2 := m["peak_rss_bytes"].(json.Number)
	shape, ok3 := m["shape"].([]any)
	if !ok1 || !ok2 || !ok3 || len(shape) != 2 {
		return peerOutput{}, false
	}
	s, err := strconv.ParseFloat(string(sec), 64)
	if err != nil || !(s > 0 && s <= maxPeerSeconds) {
		return peerOutput{}, false
	}
	r, err := strconv.ParseInt(string(rss), 10, 64)
	if err != nil || r <= 0 || r > maxPeerRSSBytes {
		return peerOutput{}, false
	}
	for i, want := range []int{n, peerDim} {
		v, isNum := shape[i].(json.Number)
		if !isNum {
			return peerOutput{}, false
		}
		x, err := strconv.ParseInt(string(v), 10, 64)
		if err != nil || x != int64(want) || x < 1 {
			return peerOutput{}, false
		}
	}
	return peerOutput{Seconds: s, PeakRSSBytes: r}, true
}

// TestReadColor reads -color files of every accepted shape and refuses the others with a
// one-line message naming -color and the fix; a 1-D .npy in a named pipe (size 0 until read)
// is read as such (before, it was read as a 2-D matrix and refused as "1-D, expected 2-D").
func TestReadColor(t *testing.T) {
	dir := t.TempDir()
	five := []float64{0.5, -1, 2, 3, 4}
	put := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	for _, c := range []struct {
		name string
		b    []byte
		err  string // "" when accepted
	}{
		{"v.npy", writeNPY(t, []int{5}, five), ""},
		{"col.npy", writeNPY(t, []int{5, 1}, five), ""},
		{"row.npy", writeNPY(t, []int{1, 5}, five), ""},
		{"col.csv", []byte("0.5\n-1\n2\n3\n4\n"), ""},
		{"row.csv", []byte("0.5,-1,2,3,4\n"), ""},
		{"short.npy", writeNPY(t, []int{4}, five[:4]), "has 4 values, the data has 5 points: give one value per point"},
		{"wide.npy", writeNPY(t, []int{5, 2}, append(five, five...)), "is 5x2, the data has 5 points"},
		{"cube.npy", writeNPY(t, []int{5, 1, 1}, five), "is a 3-D array (shape (5, 1, 1)), the data has 5 points: give one finite value per point"},
		{"scalar.npy", writeNPY(t, nil, []float64{1}), "is a 0-D array (shape ())"},
		{"nan.npy", writeNPY(t, []int{5}, []float64{0, 1, math.NaN(), 3, 4}), "non-finite value NaN at index 2 (0-based): give finite values"},
		{"inf.npy", writeNPY(t, []int{1, 5}, []float64{0, 1, 2, math.Inf(-1), 4}), "non-finite value -Inf at index 3"},
		{"bad.npy", []byte("\x93NUMPY\x01\x00"), "give one finite value per point"},
		{"empty.npy", nil, "is empty"},
	} {
		got, err := readColor(context.Background(), io.Discard, put(c.name, c.b), 5)
		if c.err == "" {
			if err != nil || !equalBits(got, five) {
				t.Errorf("%s: %v (%v), want %v", c.name, got, err, five)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), c.err) || !strings.HasPrefix(err.Error(), "-color ") || oneLine(err.Error()) != err.Error() {
			t.Errorf("%s: error %v, want one line with %q", c.name, err, c.err)
		}
	}
	fifo := filepath.Join(dir, "pipe.npy")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	src := writeNPY(t, []int{5}, five)
	go func() {
		if f, err := os.OpenFile(fifo, os.O_WRONLY, 0); err == nil {
			f.Write(src)
			f.Close()
		}
	}()
	if got, err := readColor(context.Background(), io.Discard, fifo, 5); err != nil || !equalBits(got, five) {
		t.Errorf("1-D .npy from a named pipe: %v (%v), want %v", got, err, five)
	}
}

// TestDecodePeerOutput: the scikit-learn script's real output is read; times, sizes and shapes
// that cannot be a measurement of this run are refused with the problem first.
func TestDecodePeerOutput(t *testing.T) {
	got, err := decodePeerOutput([]byte(`{"seconds": 1.25, "peak_rss_bytes": 187654144, "shape": [400, 2]}`+"\n"), 400)
	if err != nil || got != (peerOutput{Seconds: 1.25, PeakRSSBytes: 187654144}) {
		t.Fatalf("real output: %+v (%v)", got, err)
	}
	for _, c := range []struct{ out, want string }{
		{`{}`, `scikit-learn output lacks "seconds", "peak_rss_bytes", "shape"`},
		{`{"seconds": 1, "peak_rss_bytes": 5}`, `lacks "shape"`},
		{`{"seconds": NaN, "peak_rss_bytes": 5, "shape": [400, 2]}`, "unreadable scikit-learn output (invalid character 'N'"},
		{`{"seconds": -1, "peak_rss_bytes": 5, "shape": [400, 2]}`, "fit time of -1 s, not a number in (0, 1e+06]"},
		{`{"seconds": 0, "peak_rss_bytes": 5, "shape": [400, 2]}`, "fit time of 0 s"},
		{`{"seconds": 2e6, "peak_rss_bytes": 5, "shape": [400, 2]}`, "fit time of 2e6 s"},
		{`{"seconds": 1, "peak_rss_bytes": 0, "shape": [400, 2]}`, "peak RSS of 0 bytes, not an integer in (0, 1 PiB]"},
		{`{"seconds": 1, "peak_rss_bytes": 5, "shape": [400,` + "\n" + `3]}`, "embedding of shape [400,3] for 400 points, want [400, 2]"},
		{`{"seconds": 1, "peak_rss_bytes": 5, "shape": [40, 2]}`, "embedding of shape [40,2]"},
		{"Traceback (most recent call last):\n  ...", `unreadable scikit-learn output`},
	} {
		_, err := decodePeerOutput([]byte(c.out), 400)
		if err == nil || !strings.HasPrefix(err.Error(), c.want) && !strings.Contains(err.Error(), c.want) || oneLine(err.Error()) != err.Error() {
			t.Errorf("%q: error %v, want one line with %q", c.out, err, c.want)
		}
	}
}
