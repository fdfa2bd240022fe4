package knn

import (
	"context"
	"encoding/binary"
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

// npyArray is a parsed NumPy .npy file: C-order data of shape, as float64 or int64.
type npyArray struct {
	shape []int
	f64   []float64
	i64   []int64
}

// readNpy parses the subset of the .npy format the fixtures use: version 1-3 headers,
// dtype '<f8' or '<i8', C order.
func readNpy(path string) (*npyArray, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	if len(b) < 10 || string(b[:6]) != "\x93NUMPY" {
		return nil, fmt.Errorf("%s: not a .npy file", path)
	}
	var hlen, off int
	switch b[6] {
	case 1:
		hlen, off = int(binary.LittleEndian.Uint16(b[8:10])), 10
	case 2, 3:
		if len(b) < 12 {
			return nil, fmt.Errorf("%s: truncated header", path)
		}
		hlen, off = int(binary.LittleEndian.Uint32(b[8:12])), 12
	default:
		return nil, fmt.Errorf("%s: unsupported version %d", path, b[6])
	}
	if off+hlen > len(b) {
		return nil, fmt.Errorf("%s: truncated header", path)
	}
	header := string(b[off : off+hlen])
	data := b[off+hlen:]
	field := func(key string) (string, error) {
		m := regexp.MustCompile(`'` + key + `'\s*:\s*('[^']*'|True|False|\([^)]*\))`).FindStringSubmatch(header)
		if m == nil {
			return "", fmt.Errorf("%s: no %q in header %q", path, key, header)
		}
		return m[1], nil
	}
	descr, err := field("descr")
	if err != nil {
		return nil, err
	}
	fo, err := field("fortran_order")
	if err != nil {
		return nil, err
	}
	if fo != "False" {
		return nil, fmt.Errorf("%s: Fortran order not supported", path)
	}
	sh, err := field("shape")
	if err != nil {
		return nil, err
	}
	a := &npyArray{}
	count := 1
	for _, f := range strings.Split(strings.Trim(sh, "()"), ",") {
		if f = strings.TrimSpace(f); f == "" {
			continue
		}
		v, err := strconv.Atoi(f)
		if err != nil {
			return nil, fmt.Errorf("%s: bad shape %s", path, sh)
		}
		a.shape = append(a.shape, v)
		count *= v
	}
	if len(data) != 8*count {
		return nil, fmt.Errorf("%s: %d data bytes, want %d", path, len(data), 8*count)
	}
	switch descr {
	case "'<f8'":
		a.f64 = make([]float64, count)
		for i := range a.f64 {
			a.f64[i] = math.Float64frombits(binary.LittleEndian.Uint64(data[8*i:]))
		}
	case "'<i8'":
		a.i64 = make([]int64, count)
		for i := range a.i64 {
			a.i64[i] = int64(binary.LittleEndian.Uint64(data[8*i:]))
		}
	default:
		return nil, fmt.Errorf("%s: unsupported dtype %s", path, descr)
	}
	return a, nil
}

// TestScurveFixture compares with scikit-learn's neighbours on the shared S-curve fixture.
func TestScurveFixture(t *testing.T) {
	dir := filepath.Join("..", "..", "..", "shared", "fixtures", "scurve1000")
	if _, err := os.Stat(filepath.Join(dir, "X.npy")); err != nil {
		t.Skipf("fixture absent: %v", err)
	}
	X, err := readNpy(filepath.Join(dir, "X.npy"))
	if err != nil {
		t.Fatal(err)
	}
	ref, err := readNpy(filepath.Join(dir, "knn.npy"))
	if err != nil {
		t.Fatal(err)
	}
	if len(X.shape) != 2 || X.f64 == nil || len(ref.shape) != 2 || ref.i64 == nil || ref.shape[0] != X.shape[0] {
		t.Fatalf("unexpected fixture shapes %v %v", X.shape, ref.shape)
	}
	n, d := X.shape[0], X.shape[1]
	kr := ref.shape[1]
	// scikit-learn's kneighbors on the training set may or may not list the point itself.
	withSelf := true
	for i := 0; i < n; i++ {
		if ref.i64[i*kr] != int64(i) {
			withSelf = false
			break
		}
	}
	k, skip := kr, 0
	if withSelf {
		k, skip = kr-1, 1
	}
	t.Logf("fixture n=%d d=%d, reference k=%d (self listed: %v)", n, d, kr, withSelf)
	for _, me := range methods {
		idx, dist, err := Graph(context.Background(), X.f64, n, d, k, Options{Method: me})
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i < n; i++ {
			got := idx[i*k : i*k+k]
			want := make([]int32, k)
			for p := range want {
				want[p] = int32(ref.i64[i*kr+skip+p])
			}
			gs, ws := slices.Clone(got), slices.Clone(want)
			slices.Sort(gs)
			slices.Sort(ws)
			if !slices.Equal(gs, ws) {
				t.Fatalf("%v row %d: neighbour set %v, scikit-learn %v", me, i, got, want)
			}
			// Same order, except where our distances tie.
			for p := range got {
				if got[p] != want[p] {
					j := slices.Index(got, want[p])
					if dist[i*k+p] != dist[i*k+j] {
						t.Fatalf("%v row %d: order %v, scikit-learn %v, distances %v", me, i, got, want, dist[i*k:i*k+k])
					}
				}
			}
		}
	}
}

func TestReadNpyVersion2(t *testing.T) {
	header := "{'descr': '<i8', 'fortran_order': False, 'shape': (3,), }"
	for len(header)%16 != 15 {
		header += " "
	}
	header += "\n"
	b := append([]byte("\x93NUMPY\x02\x00"), binary.LittleEndian.AppendUint32(nil, uint32(len(header)))...)
	b = append(b, header...)
	for _, v := range []int64{-1, 5, 1 << 40} {
		b = binary.LittleEndian.AppendUint64(b, uint64(v))
	}
	path := filepath.Join(t.TempDir(), "a.npy")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	a, err := readNpy(path)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(a.shape, []int{3}) || !slices.Equal(a.i64, []int64{-1, 5, 1 << 40}) {
		t.Fatalf("got %v %v", a.shape, a.i64)
	}
}
