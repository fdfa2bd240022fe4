package bench

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"glle/bench/dataio"
)

func TestDatasetsDeterministic(t *testing.T) {
	for _, name := range DatasetNames() {
		X1, c1, err := Dataset(name, 500, 7)
		if err != nil {
			t.Fatal(err)
		}
		X2, c2, _ := Dataset(name, 500, 7)
		X3, _, _ := Dataset(strings.ToUpper(name), 500, 8)
		if !mat.Equal(X1, X2) || len(c1) != len(c2) {
			t.Errorf("%s: same seed, different data", name)
		}
		for i := range c1 {
			if c1[i] != c2[i] {
				t.Fatalf("%s: same seed, different colour", name)
			}
		}
		if r1, _ := X1.Dims(); r1 == 0 {
			t.Fatalf("%s: empty", name)
		}
		if mat.Equal(X1, X3) {
			t.Errorf("%s: different seeds, same data", name)
		}
		Xc, coords, err := Coordinates(name, 500, 7)
		if err != nil || !mat.Equal(Xc, X1) {
			t.Fatalf("%s: Coordinates gives other points (%v)", name, err)
		}
		r, c := coords.Dims()
		if r != len(c1) || c != 2 {
			t.Fatalf("%s: coords %d x %d", name, r, c)
		}
		for i := range c1 {
			if coords.At(i, 0) != c1[i] {
				t.Fatalf("%s: coords column 0 is not the colour", name)
			}
		}
	}
}

func TestDatasetErrors(t *testing.T) {
	_, _, err := Dataset("swiss", 10, 0)
	if err == nil || err.Error() != `unknown dataset "swiss": use one of swissroll, scurve, swissroll-hole, severed-sphere` {
		t.Errorf("got %v", err)
	}
	if _, _, err := Dataset("scurve", 0, 0); err == nil {
		t.Error("n = 0 accepted")
	}
	if _, _, err := Coordinates("nope", 10, 0); err == nil {
		t.Error("unknown name accepted by Coordinates")
	}
	// One point has probability 7/15 of surviving; some seed below must lose it.
	failed := false
	for seed := uint64(0); seed < 20 && !failed; seed++ {
		if X, p := SeveredSphere(1, seed); X == nil {
			failed = len(p) == 0
			if _, _, err := Dataset("severed-sphere", 1, seed); err == nil || !strings.Contains(err.Error(), "no point") {
				t.Errorf("got %v", err)
			}
		}
	}
	if !failed {
		t.Error("no seed removed the single severed-sphere point")
	}
	names := DatasetNames()
	names[0] = "changed"
	if DatasetNames()[0] != "swissroll" {
		t.Error("DatasetNames exposes its slice")
	}
}

func TestSwissRoll(t *testing.T) {
	n := 2000
	X, tt, h := swissRoll(n, 1)
	for i := 0; i < n; i++ {
		ti := tt[i]
		if ti < 1.5*math.Pi || ti >= 4.5*math.Pi || h[i] < 0 || h[i] >= 21 {
			t.Fatalf("point %d: t = %g, y = %g out of range", i, ti, h[i])
		}
		// x matches exactly (Sincos's cosine is math.Cos here); z allows Sincos's sine a few ulps of t from math.Sin (observed 0).
		if X.At(i, 0) != ti*math.Cos(ti) || X.At(i, 1) != h[i] || math.Abs(X.At(i, 2)-ti*math.Sin(ti)) > 1e-14*ti {
			t.Fatalf("point %d: %v does not match t = %g", i, X.RawRowView(i), ti)
		}
	}
	// Uniform draws: the mean of (t - 1.5 pi) / (3 pi) is about 1/2.
	var m float64
	for _, v := range tt {
		m += (v - 1.5*math.Pi) / (3 * math.Pi)
	}
	// 0.03: the mean of 2000 uniforms has standard error sqrt(1/12/2000) = 0.0065, so this is 4.6 of them.
	if m /= float64(n); math.Abs(m-0.5) > 0.03 {
		t.Errorf("mean u = %g", m)
	}
}

func TestSwissRollHole(t *testing.T) {
	full, tf := SwissRoll(5000, 3)
	X, th := SwissRollHole(5000, 3)
	m, _ := X.Dims()
	// The box removes ~7% (4650 of 5000); a binomial count of 5000 has sd ~18, so +-150 is > 8 sd.
	if m < 4500 || m > 4800 {
		t.Errorf("%d points left of 5000, expected about 4650", m)
	}
	// The remaining points are SwissRoll's points outside the box, in order.
	r := 0
	for i := 0; i < 5000; i++ {
		x, y, z := full.At(i, 0), full.At(i, 1), full.At(i, 2)
		in := x > -10 && x < -5 && z > -4 && z < 7 && y > 5 && y < 15
		if in {
			continue
		}
		if r >= m || !mat.Equal(X.RowView(r), full.RowView(i)) || th[r] != tf[i] {
			t.Fatalf("point %d of the roll is not row %d of the holed roll", i, r)
		}
		r++
	}
	if r != m {
		t.Errorf("%d rows, expected %d", m, r)
	}
}

func TestSCurve(t *testing.T) {
	X, tt, h := sCurve(1000, 2)
	for i := range tt {
		ti := tt[i]
		sign := 1.0
		if ti < 0 {
			sign = -1
		}
		if math.Abs(ti) > 1.5*math.Pi || h[i] < 0 || h[i] >= 2 {
			t.Fatalf("point %d: t = %g, y = %g out of range", i, ti, h[i])
		}
		// 1e-15: sin and cos of |t| <= 4.7 via Sincos vs Sin/Cos differ by an ulp or so of values <= 2 (ulp 4.4e-16; observed 0).
		if math.Abs(X.At(i, 0)-math.Sin(ti)) > 1e-15 || X.At(i, 1) != h[i] || math.Abs(X.At(i, 2)-sign*(math.Cos(ti)-1)) > 1e-15 {
			t.Fatalf("point %d: %v does not match t = %g", i, X.RawRowView(i), ti)
		}
	}
}

// TestSCurveMatchesScikitLearn checks our S-curve formula against scikit-learn's points
// (the fixture, generated with make_s_curve): with scikit-learn's own t, every point must
// satisfy x = sin t, z = sign(t)(cos t - 1), 0 <= y < 2.
func TestSCurveMatchesScikitLearn(t *testing.T) {
	dir := filepath.Join("..", "..", "shared", "fixtures", "scurve1000")
	if _, err := os.Stat(dir); err != nil {
		t.Skip("fixtures not available")
	}
	X, err := dataio.ReadMatrix(filepath.Join(dir, "X.npy"))
	if err != nil {
		t.Fatal(err)
	}
	ta, err := dataio.ReadNPYFile(filepath.Join(dir, "t.npy"))
	if err != nil {
		t.Fatal(err)
	}
	for i, ti := range ta.Float {
		sign := 1.0
		if ti < 0 {
			sign = -1
		}
		// 1e-12: NumPy's sin/cos and Go's may differ by a few ulps (observed 4.4e-16); a wrong formula would be off by O(1).
		if math.Abs(X.At(i, 0)-math.Sin(ti)) > 1e-12 || math.Abs(X.At(i, 2)-sign*(math.Cos(ti)-1)) > 1e-12 ||
			X.At(i, 1) < 0 || X.At(i, 1) >= 2 || math.Abs(ti) > 1.5*math.Pi {
			t.Fatalf("scikit-learn point %d %v, t = %g does not follow our recipe", i, X.RawRowView(i), ti)
		}
	}
}

func TestSeveredSphere(t *testing.T) {
	X, p, th := severedSphere(5000, 4)
	m, _ := X.Dims()
	if m < 2200 || m > 2470 { // 7/15 of 5000 = 2333
		t.Errorf("%d points left of 5000, expected about 2333", m)
	}
	for i := 0; i < m; i++ {
		x, y, z := X.At(i, 0), X.At(i, 1), X.At(i, 2)
		// 1e-14: three rounded products of unit-size sines and cosines, a few ulps (observed 5.6e-16).
		if math.Abs(x*x+y*y+z*z-1) > 1e-14 {
			t.Fatalf("point %d is not on the unit sphere", i)
		}
		if !(th[i] > math.Pi/3 && th[i] < 4*math.Pi/5) || p[i] < 0 || p[i] >= 2*math.Pi-1 {
			t.Fatalf("point %d: p = %g, t = %g out of range", i, p[i], th[i])
		}
		// z is cos t to an ulp (observed exact); atan2 of rounded sin t cos p, sin t sin p loses ~eps/sin t <= 3e-16 (observed 4.4e-16), 1e-12 is generous.
		if math.Abs(z-math.Cos(th[i])) > 1e-15 || math.Abs(math.Atan2(y, x)-math.Remainder(p[i], 2*math.Pi)) > 1e-12 {
			t.Fatalf("point %d does not match its angles", i)
		}
	}
}
