package dataio

import (
	"bytes"
	"encoding/binary"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

// rawNPY builds a .npy file by hand: magic, version major.0, header dict (padded to 64 bytes
// with a final newline) and data.
func rawNPY(major byte, dict string, data []byte) []byte {
	pre := 10
	if major != 1 {
		pre = 12
	}
	total := (pre + len(dict) + 1 + 63) / 64 * 64
	h := append([]byte(nil), npyMagic...)
	h = append(h, major, 0)
	if major == 1 {
		h = binary.LittleEndian.AppendUint16(h, uint16(total-pre))
	} else {
		h = binary.LittleEndian.AppendUint32(h, uint32(total-pre))
	}
	h = append(h, dict...)
	for len(h) < total-1 {
		h = append(h, ' ')
	}
	h = append(h, '\n')
	return append(h, data...)
}

func f64bytes(order binary.AppendByteOrder, v ...float64) []byte {
	var b []byte
	for _, x := range v {
		b = order.AppendUint64(b, math.Float64bits(x))
	}
	return b
}

func TestNPYRoundTrip(t *testing.T) {
	for _, shape := range [][]int{{}, {0}, {5}, {2, 3}, {3, 0}, {2, 3, 4}, {1, 1, 1, 2}} {
		n := 1
		for _, d := range shape {
			n *= d
		}
		f := make([]float64, n)
		iv := make([]int64, n)
		for i := range f {
			f[i] = float64(i)*1.25 - 3 + 1e-300*float64(i)
			iv[i] = int64(i)*int64(1<<40) - 7
		}
		var buf bytes.Buffer
		if err := WriteNPY(&buf, shape, f); err != nil {
			t.Fatal(err)
		}
		if buf.Len()%64 != n*8%64 {
			t.Errorf("shape %v: header not 64-byte aligned (%d bytes)", shape, buf.Len()-8*n)
		}
		a, err := ReadNPY(&buf)
		if err != nil {
			t.Fatalf("shape %v: %v", shape, err)
		}
		if !reflect.DeepEqual(a.Shape, shape) && !(len(shape) == 0 && len(a.Shape) == 0) {
			t.Errorf("shape %v read back as %v", shape, a.Shape)
		}
		if a.Int != nil || len(a.Float) != n || (n > 0 && !reflect.DeepEqual(a.Float, f)) {
			t.Errorf("shape %v: float data differ", shape)
		}
		buf.Reset()
		if err := WriteNPYInt64(&buf, shape, iv); err != nil {
			t.Fatal(err)
		}
		a, err = ReadNPY(&buf)
		if err != nil {
			t.Fatalf("shape %v: %v", shape, err)
		}
		if a.Float != nil || len(a.Int) != n || (n > 0 && !reflect.DeepEqual(a.Int, iv)) {
			t.Errorf("shape %v: int data differ", shape)
		}
	}
	if err := WriteNPY(&bytes.Buffer{}, []int{2, 2}, make([]float64, 3)); err == nil {
		t.Error("WriteNPY accepted a shape that does not match the data")
	}
}

func TestNPYHeaderVariants(t *testing.T) {
	le, be := binary.LittleEndian, binary.BigEndian
	want := []float64{1, 2, 3, 4, 5, 6} // C order of a 2 x 3 array
	cases := []struct {
		name string
		file []byte
	}{
		{"v1", rawNPY(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (2, 3), }", f64bytes(le, want...))},
		{"v2", rawNPY(2, "{'descr': '<f8', 'fortran_order': False, 'shape': (2, 3), }", f64bytes(le, want...))},
		{"v3", rawNPY(3, "{'descr': '<f8', 'fortran_order': False, 'shape': (2, 3), }", f64bytes(le, want...))},
		{"key-order-double-quotes", rawNPY(1, `{"shape": (2,3), "fortran_order": False, "descr": "<f8"}`, f64bytes(le, want...))},
		{"py2-long", rawNPY(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (2L, 3L), }", f64bytes(le, want...))},
		{"big-endian", rawNPY(1, "{'descr': '>f8', 'fortran_order': False, 'shape': (2, 3), }", f64bytes(be, want...))},
		{"fortran", rawNPY(1, "{'descr': '<f8', 'fortran_order': True, 'shape': (2, 3), }", f64bytes(le, 1, 4, 2, 5, 3, 6))},
		{"f4", rawNPY(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }", func() []byte {
			var b []byte
			for _, v := range want {
				b = le.AppendUint32(b, math.Float32bits(float32(v)))
			}
			return b
		}())},
		{"trailing-bytes", rawNPY(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (2, 3), }", append(f64bytes(le, want...), 1, 2, 3))},
	}
	for _, c := range cases {
		a, err := ReadNPY(bytes.NewReader(c.file))
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if !reflect.DeepEqual(a.Shape, []int{2, 3}) || !reflect.DeepEqual(a.Float, want) {
			t.Errorf("%s: got shape %v data %v", c.name, a.Shape, a.Float)
		}
	}
}

func TestNPYIntDtypes(t *testing.T) {
	want := []int64{-1, 0, 1, 100, -100, 7}
	cases := []struct {
		descr string
		enc   func(int64) []byte
		vals  []int64
	}{
		{"<i8", func(v int64) []byte { return binary.LittleEndian.AppendUint64(nil, uint64(v)) }, want},
		{">i8", func(v int64) []byte { return binary.BigEndian.AppendUint64(nil, uint64(v)) }, want},
		{"<i4", func(v int64) []byte { return binary.LittleEndian.AppendUint32(nil, uint32(int32(v))) }, want},
		{"<i2", func(v int64) []byte { return binary.LittleEndian.AppendUint16(nil, uint16(int16(v))) }, want},
		{"|i1", func(v int64) []byte { return []byte{byte(int8(v))} }, want},
		{"|u1", func(v int64) []byte { return []byte{byte(v)} }, []int64{0, 1, 2, 200, 255, 7}},
		{"<u4", func(v int64) []byte { return binary.LittleEndian.AppendUint32(nil, uint32(v)) }, []int64{0, 1, 4000000000, 3, 4, 5}},
	}
	for _, c := range cases {
		var data []byte
		for _, v := range c.vals {
			data = append(data, c.enc(v)...)
		}
		a, err := ReadNPY(bytes.NewReader(rawNPY(1, "{'descr': '"+c.descr+"', 'fortran_order': False, 'shape': (6,), }", data)))
		if err != nil {
			t.Errorf("%s: %v", c.descr, err)
			continue
		}
		if !reflect.DeepEqual(a.Int, c.vals) || a.IsFloat() {
			t.Errorf("%s: got %v, want %v", c.descr, a.Int, c.vals)
		}
	}
}

func TestFortranToC3D(t *testing.T) {
	// A 2 x 3 x 4 array with element value 100 i + 10 j + k, stored in Fortran order.
	shape := []int{2, 3, 4}
	var fdata, cdata []float64
	for k := 0; k < 4; k++ {
		for j := 0; j < 3; j++ {
			for i := 0; i < 2; i++ {
				fdata = append(fdata, float64(100*i+10*j+k))
			}
		}
	}
	for i := 0; i < 2; i++ {
		for j := 0; j < 3; j++ {
			for k := 0; k < 4; k++ {
				cdata = append(cdata, float64(100*i+10*j+k))
			}
		}
	}
	file := rawNPY(1, "{'descr': '<f8', 'fortran_order': True, 'shape': (2, 3, 4), }", f64bytes(binary.LittleEndian, fdata...))
	a, err := ReadNPY(bytes.NewReader(file))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(a.Shape, shape) || !reflect.DeepEqual(a.Float, cdata) {
		t.Errorf("got %v, want %v", a.Float, cdata)
	}
}

func TestNPYErrors(t *testing.T) {
	le := binary.LittleEndian
	ok := "{'descr': '<f8', 'fortran_order': False, 'shape': (2, 3), }"
	cases := []struct {
		name string
		file []byte
		want string
	}{
		{"empty", nil, "not a .npy file (bad magic)"},
		{"text", []byte("1,2,3\n4,5,6\n"), "not a .npy file (bad magic)"},
		{"magic-only", npyMagic, "truncated .npy header"},
		{"no-length", append(append([]byte(nil), npyMagic...), 1, 0, 5), "truncated .npy header"},
		{"short-header", append(append([]byte(nil), npyMagic...), 1, 0, 100, 0, '{'), "truncated .npy header"},
		{"version", rawNPY(4, ok, nil), "unsupported .npy format version 4.0"},
		{"truncated-data", rawNPY(1, ok, f64bytes(le, 1, 2, 3, 4, 5)), "truncated data: expected 48 bytes, got 40"},
		{"complex", rawNPY(1, "{'descr': '<c16', 'fortran_order': False, 'shape': (2,), }", nil), `unsupported dtype "<c16"`},
		{"object", rawNPY(1, "{'descr': '|O', 'fortran_order': False, 'shape': (2,), }", nil), `unsupported dtype "|O"`},
		{"bar-f8", rawNPY(1, "{'descr': '|f8', 'fortran_order': False, 'shape': (2,), }", nil), `unsupported dtype "|f8"`},
		{"structured", rawNPY(1, "{'descr': [('x', '<f8'), ('y', '<i4')], 'fortran_order': False, 'shape': (2,), }", nil), "unsupported dtype [('x', '<f8'), ('y', '<i4')] (structured"},
		{"missing-key", rawNPY(1, "{'descr': '<f8', 'shape': (2,), }", nil), "missing one of the keys"},
		{"extra-key", rawNPY(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (2,), 'x': 1}", nil), `unexpected key "x"`},
		{"negative-dim", rawNPY(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (-2, 3), }", nil), "invalid dimension"},
		{"huge", rawNPY(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (100000000000, 100000000000), }", nil), "too large"},
		{"bad-fortran", rawNPY(1, "{'descr': '<f8', 'fortran_order': 0, 'shape': (2,), }", nil), "fortran_order is 0"},
		{"not-dict", rawNPY(1, "('<f8', False, (2,))", nil), "not a dictionary"},
		{"garbage", rawNPY(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (2,), } junk", nil), "bad .npy header"},
		{"unterminated", rawNPY(1, "{'descr': '<f8", nil), "unterminated string"},
	}
	for _, c := range cases {
		_, err := ReadNPY(bytes.NewReader(c.file))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got error %v, want one containing %q", c.name, err, c.want)
		}
		if err != nil && strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: error is not one line: %q", c.name, err)
		}
	}
}

func TestReadNPYFileErrors(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "X.npy")
	if err := os.WriteFile(p, []byte("hello"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadNPYFile(p); err == nil || err.Error() != p+": not a .npy file (bad magic)" {
		t.Errorf("got %v", err)
	}
	file := rawNPY(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (1000, 3), }", make([]byte, 100))
	if err := os.WriteFile(p, file, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadNPYFile(p); err == nil || err.Error() != p+": truncated data: expected 24000 bytes, got 100" {
		t.Errorf("got %v", err)
	}
	if _, err := ReadNPYFile(filepath.Join(dir, "missing.npy")); err == nil || !os.IsNotExist(err) {
		t.Errorf("missing file: got %v", err)
	}
}

// TestReadNPYFileTee: tee receives the whole file exactly once, the bytes after the array
// included, for files smaller and larger than the 64 KiB read buffer, and the array is the
// one ReadNPYFile reads.
func TestReadNPYFileTee(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct{ rows, trailing int }{{2, 0}, {2, 5}, {10000, 0}, {10000, 70000}} {
		vals := make([]float64, 3*tc.rows)
		for i := range vals {
			vals[i] = float64(i) / 7
		}
		dict := "{'descr': '<f8', 'fortran_order': False, 'shape': (" + strconv.Itoa(tc.rows) + ", 3), }"
		file := append(rawNPY(1, dict, f64bytes(binary.LittleEndian, vals...)), bytes.Repeat([]byte{'x'}, tc.trailing)...)
		p := filepath.Join(dir, "a.npy")
		if err := os.WriteFile(p, file, 0o644); err != nil {
			t.Fatal(err)
		}
		var got bytes.Buffer
		a, err := ReadNPYFileTee(p, &got)
		if err != nil {
			t.Fatalf("rows %d, trailing %d: %v", tc.rows, tc.trailing, err)
		}
		if !bytes.Equal(got.Bytes(), file) {
			t.Errorf("rows %d, trailing %d: tee got %d bytes, the file has %d", tc.rows, tc.trailing, got.Len(), len(file))
		}
		if !reflect.DeepEqual(a.Float, vals) {
			t.Errorf("rows %d, trailing %d: values differ from those written", tc.rows, tc.trailing)
		}
	}
}

func TestArrayMatrix(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "A.npy")
	if err := WriteNPYFile(p, []int{2, 2, 2}, make([]float64, 8)); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadMatrix(p); err == nil || err.Error() != p+": array is 3-D (2, 2, 2), expected 2-D (n x d)" {
		t.Errorf("3-D: got %v", err)
	}
	if err := WriteNPYFile(p, []int{4}, make([]float64, 4)); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadMatrix(p); err == nil || !strings.Contains(err.Error(), "array is 1-D (4,), expected 2-D") {
		t.Errorf("1-D: got %v", err)
	}
	if err := WriteNPYFile(p, []int{0, 3}, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadMatrix(p); err == nil || !strings.Contains(err.Error(), "at least one row") {
		t.Errorf("empty: got %v", err)
	}
	if err := WriteNPYFile(p, []int{2, 3}, []float64{1, 2, 3, 4, math.Inf(-1), 6}); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadMatrix(p); err == nil || !strings.Contains(err.Error(), "non-finite value -Inf at row 1, column 1 (0-based)") {
		t.Errorf("inf: got %v", err)
	}
	if err := WriteNPYInt64File(p, []int{2, 2}, []int64{1, 2, 3, -4}); err != nil {
		t.Fatal(err)
	}
	m, err := ReadMatrix(p)
	if err != nil || m.At(1, 1) != -4 || m.At(0, 1) != 2 {
		t.Errorf("int matrix: %v %v", m, err)
	}
	// Matrix must not alias the array's data.
	a := &Array{Shape: []int{1, 2}, Float: []float64{1, 2}}
	m, _ = a.Matrix()
	m.Set(0, 0, 9)
	if a.Float[0] != 1 {
		t.Error("Matrix aliases Array.Float")
	}
}

func fixture(t *testing.T, rel string) string {
	t.Helper()
	p := filepath.Join("..", "..", "..", "shared", "fixtures", rel)
	if _, err := os.Stat(p); err != nil {
		t.Skipf("fixture %s not available", p)
	}
	return p
}

func TestFixtures(t *testing.T) {
	X, err := ReadMatrix(fixture(t, "scurve1000/X.npy"))
	if err != nil {
		t.Fatal(err)
	}
	if r, c := X.Dims(); r != 1000 || c != 3 {
		t.Fatalf("X is %d x %d", r, c)
	}
	// S-curve: x = sin t, z = sign(t)(cos t - 1), so x^2 + (|z| - 1)^2 = 1 (noise-free).
	for i := 0; i < 1000; i++ {
		x, z := X.At(i, 0), X.At(i, 2)
		// 1e-9: scikit-learn's points lie on the curve to round-off (observed 7e-16); 1e-9 only rejects data off the noise-free S-curve.
		if d := x*x + (math.Abs(z)-1)*(math.Abs(z)-1) - 1; math.Abs(d) > 1e-9 {
			t.Fatalf("row %d is not on the S-curve (%g)", i, d)
		}
	}
	knn, err := ReadNPYFile(fixture(t, "scurve1000/knn.npy"))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(knn.Shape, []int{1000, 10}) || knn.Int == nil {
		t.Fatalf("knn: shape %v, int %v", knn.Shape, knn.Int != nil)
	}
	for i, v := range knn.Int {
		if v < 0 || v >= 1000 || int(v) == i/10 {
			t.Fatalf("knn[%d] = %d", i, v)
		}
	}
	if _, err := ReadMatrix(fixture(t, "scurve1000/knn.npy")); err != nil {
		t.Errorf("knn as matrix: %v", err)
	}
	g, err := ReadNPYFile(fixture(t, "digits1083/direct_paper_gamma.npy"))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(g.Shape, []int{1083, 10, 10}) || len(g.Float) != 108300 {
		t.Fatalf("gamma: shape %v", g.Shape)
	}
	// Each Gamma_i is an inverse of a symmetric matrix: symmetric up to round-off.
	for i := 0; i < 1083; i++ {
		b := g.Float[100*i:]
		for r := 0; r < 10; r++ {
			for c := 0; c < r; c++ {
				// 1e-6: an inverse of a symmetric 10 x 10 matrix is symmetric to ~cond eps (observed 3e-15); 1e-6 tolerates cond up to ~1e9.
				if d := math.Abs(b[10*r+c] - b[10*c+r]); d > 1e-6*(math.Abs(b[10*r+c])+1) {
					t.Fatalf("gamma %d not symmetric at (%d,%d)", i, r, c)
				}
			}
		}
	}
	if _, err := ReadMatrix(fixture(t, "digits1083/direct_paper_gamma.npy")); err == nil || !strings.Contains(err.Error(), "direct_paper_gamma.npy: array is 3-D") {
		t.Errorf("gamma as matrix: %v", err)
	}
}
