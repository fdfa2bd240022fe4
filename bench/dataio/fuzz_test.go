package dataio

import (
	"bytes"
	"encoding/binary"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// writeCorpus regenerates the committed seed corpora under testdata/fuzz:
//
//	go test ./bench/dataio -run TestWriteFuzzCorpus -args -write-corpus
var writeCorpus = flag.Bool("write-corpus", false, "rewrite testdata/fuzz seed corpora")

// npySeeds are valid and broken .npy files for FuzzReadNPY.
func npySeeds() map[string][]byte {
	le := binary.LittleEndian
	hdr := func(descr, fortran, shape string) string {
		return fmt.Sprintf("{'descr': '%s', 'fortran_order': %s, 'shape': %s, }", descr, fortran, shape)
	}
	var valid bytes.Buffer
	WriteNPY(&valid, []int{2, 3}, []float64{1, 2, 3, 4, 5, 6})
	var ints bytes.Buffer
	WriteNPYInt64(&ints, []int{3}, []int64{-1, 0, 1})
	var scalar bytes.Buffer
	WriteNPY(&scalar, nil, []float64{math.Pi})
	f32 := make([]byte, 0, 16)
	for _, v := range []float32{1, -2, 3.5, 4} {
		f32 = le.AppendUint32(f32, math.Float32bits(v))
	}
	return map[string][]byte{
		"valid_f8_2x3":     valid.Bytes(),
		"valid_i8_1d":      ints.Bytes(),
		"valid_scalar":     scalar.Bytes(),
		"valid_f4_fortran": rawNPY(1, hdr("<f4", "True", "(2, 2)"), f32),
		"valid_v2_3d":      rawNPY(2, hdr("<f8", "False", "(1, 2, 1)"), f64bytes(le, 1, 2)),
		"valid_v3_u1":      rawNPY(3, hdr("|u1", "False", "(4,)"), []byte{1, 2, 3, 4}),
		"valid_nan":        rawNPY(1, hdr("<f8", "False", "(1, 2)"), f64bytes(le, math.NaN(), math.Inf(1))),
		"broken_magic":     []byte("\x93NUMPX\x01\x00"),
		"broken_truncated": valid.Bytes()[:valid.Len()-5],
		"broken_hlen":      append(append([]byte(nil), npyMagic...), 1, 0, 0xff, 0xff, '{'),
		"broken_dtype":     rawNPY(1, hdr("<c16", "False", "(2,)"), make([]byte, 32)),
		"broken_shape":     rawNPY(1, hdr("<f8", "False", "(99999999999, 99999999999)"), nil),
		"broken_neg":       rawNPY(1, hdr("<f8", "False", "(-1,)"), nil),
		"broken_nested":    rawNPY(1, "{'descr': "+strings.Repeat("(", 40)+"1"+strings.Repeat(")", 40)+"}", nil),
		"broken_header":    rawNPY(1, "{'descr' '<f8' 'fortran_order': False}", nil),
		"broken_version":   rawNPY(7, hdr("<f8", "False", "(1,)"), f64bytes(le, 1)),
	}
}

// csvSeeds are valid and broken text matrices for FuzzReadCSV.
var csvSeeds = map[string]string{
	"valid_comma":      "1,2,3\n4,5,6\n",
	"valid_header":     "x,y\n1.5,-2e-3\n3,4\n",
	"valid_whitespace": "# comment\n1 2\t3\n\n4 5 6\n",
	"valid_crlf_bom":   "\ufeff\"a\",\"b\"\r\n1,2\r\n",
	"broken_ragged":    "1,2,3\n4,5\n",
	"broken_text":      "1,2\nfoo,bar\n",
	"broken_nan":       "1,nan\n",
	"broken_empty":     "",
	"broken_cells":     ",,\n,\n",
	"broken_pandas":    ",0,1\n0,1.5,2\n",
	"broken_columns":   "0,1\n1.5,2\n",
	"valid_columns":    "0.0,1\n1.5,2\n",
	// RFC 4180 quoting (a user trial: a quoted name with a comma split the header).
	"valid_quoted_comma":   "\"a,b\",c,d\n1,2,3\n",
	"valid_quoted_doubled": "\"a\"\"b\",\"c\"\n\"1\",2\n",
	"valid_quoted_spaces":  "\"a b\" \"c d\"\n1 2\n",
	"valid_quoted_tab":     "\"a\tb\"\tc\n1\t2\n",
	"broken_decimal_comma": "x,y\n\"1,5\",2\n",
	"broken_unclosed":      "x,y\n\"1,2\n",
	"broken_after_quote":   "\"a\"b,c\n1,2\n",
}

// FuzzReadNPY reads arbitrary bytes as .npy, both as a stream (ReadNPY: size unknown, the data
// read as far as present) and as a file (ReadNPYFile: size known from stat, the data checked
// against it before it is allocated): neither may panic, errors are one line, both accept the
// same inputs with the same array, and an accepted float array survives a write/read round trip.
func FuzzReadNPY(f *testing.F) {
	for _, b := range npySeeds() {
		f.Add(b)
	}
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, b []byte) {
		a, err := ReadNPY(bytes.NewReader(b))
		fa, ferr := readNPYViaFile(t, dir, b)
		if (err == nil) != (ferr == nil) {
			t.Fatalf("stream error %v, file error %v", err, ferr)
		}
		if ferr != nil && strings.Contains(ferr.Error(), "\n") {
			t.Fatalf("multi-line file error %q", ferr)
		}
		if err != nil {
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("multi-line error %q", err)
			}
			return
		}
		if !sameArray(a, fa) {
			t.Fatalf("stream read %v (%d floats, %d ints), file read %v (%d floats, %d ints)",
				a.Shape, len(a.Float), len(a.Int), fa.Shape, len(fa.Float), len(fa.Int))
		}
		if (a.Float == nil) == (a.Int == nil) && a.Len() > 0 {
			t.Fatal("exactly one of Float and Int must be set")
		}
		if len(a.Float)+len(a.Int) != a.Len() {
			t.Fatalf("shape %v but %d elements", a.Shape, len(a.Float)+len(a.Int))
		}
		a.Matrix() // must not panic either
		if a.Float != nil {
			var buf bytes.Buffer
			if err := WriteNPY(&buf, a.Shape, a.Float); err != nil {
				t.Fatal(err)
			}
			b2, err := ReadNPY(&buf)
			if err != nil {
				t.Fatal(err)
			}
			for i := range a.Float {
				if math.Float64bits(a.Float[i]) != math.Float64bits(b2.Float[i]) {
					t.Fatalf("element %d: %v != %v after a round trip", i, a.Float[i], b2.Float[i])
				}
			}
		}
	})
}

// readNPYViaFile writes b to a new file in dir and reads it back with ReadNPYFile; a file
// error must name the path.
func readNPYViaFile(t *testing.T, dir string, b []byte) (*Array, error) {
	t.Helper()
	fh, err := os.CreateTemp(dir, "fuzz-*.npy")
	if err != nil {
		t.Fatal(err)
	}
	path := fh.Name()
	defer os.Remove(path)
	if _, err := fh.Write(b); err != nil {
		t.Fatal(err)
	}
	if err := fh.Close(); err != nil {
		t.Fatal(err)
	}
	a, err := ReadNPYFile(path)
	if err != nil && !strings.HasPrefix(err.Error(), path+": ") {
		t.Fatalf("file error %q does not name %s", err, path)
	}
	return a, err
}

// sameArray reports whether a and b have the same shape and the same elements, bit for bit.
func sameArray(a, b *Array) bool {
	if len(a.Shape) != len(b.Shape) || len(a.Float) != len(b.Float) || len(a.Int) != len(b.Int) ||
		(a.Float == nil) != (b.Float == nil) || (a.Int == nil) != (b.Int == nil) {
		return false
	}
	for i := range a.Shape {
		if a.Shape[i] != b.Shape[i] {
			return false
		}
	}
	for i := range a.Float {
		if math.Float64bits(a.Float[i]) != math.Float64bits(b.Float[i]) {
			return false
		}
	}
	for i := range a.Int {
		if a.Int[i] != b.Int[i] {
			return false
		}
	}
	return true
}

func FuzzReadCSV(f *testing.F) {
	for _, s := range csvSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		// The detected separator (ReadCSV, .csv and .txt files) and the forced tab of .tsv
		// files (ReadMatrix), each with its writer for the round trip.
		for _, sep := range []byte{0, '\t'} {
			m, header, err := readDelimited(bytes.NewReader(b), sep)
			if err != nil {
				if strings.Contains(err.Error(), "\n") {
					t.Fatalf("sep %q: multi-line error %q", sep, err)
				}
				continue
			}
			r, c := m.Dims()
			if r < 1 || c < 1 {
				t.Fatalf("sep %q: empty %d x %d matrix without error", sep, r, c)
			}
			wsep := byte(',')
			if sep == '\t' {
				wsep = '\t'
			}
			var buf bytes.Buffer
			if err := writeDelimited(&buf, m, nil, wsep); err != nil {
				t.Fatal(err)
			}
			m2, _, err := readDelimited(&buf, sep)
			if err != nil {
				t.Fatalf("sep %q: re-reading written text: %v", sep, err)
			}
			if !mat.Equal(m, m2) {
				t.Fatalf("sep %q: round trip changed the matrix", sep)
			}
			if header != nil {
				// The names survive WriteCSV's quoting (commas, quotes, spaces in names).
				buf.Reset()
				if err := WriteCSV(&buf, m, header); err != nil {
					t.Fatal(err)
				}
				text := buf.String()
				m3, h3, err := ReadCSV(&buf)
				if err != nil || !mat.Equal(m, m3) || !slices.Equal(header, h3) {
					t.Fatalf("sep %q: header %q written as %q read back as %q (%v)", sep, header, text, h3, err)
				}
			}
		}
	})
}

func TestWriteFuzzCorpus(t *testing.T) {
	if !*writeCorpus {
		t.Skip("run with -args -write-corpus to rewrite the seed corpora")
	}
	write := func(target, name string, b []byte) {
		dir := filepath.Join("testdata", "fuzz", target)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		content := "go test fuzz v1\n[]byte(" + strconv.Quote(string(b)) + ")\n"
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for name, b := range npySeeds() {
		write("FuzzReadNPY", name, b)
	}
	for name, s := range csvSeeds {
		write("FuzzReadCSV", name, []byte(s))
	}
}
