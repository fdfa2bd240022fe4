package bench

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"

	"gonum.org/v1/gonum/mat"
)

// datasetStream is the second PCG seed word of every dataset (see Dataset).
const datasetStream = 0x9E3779B97F4A7C15

// uniforms returns the 2n draws (u, v) used by every dataset.
func uniforms(n int, seed uint64) (u, v []float64) {
	if n < 1 {
		panic("bench: dataset size n must be at least 1")
	}
	r := rand.New(rand.NewPCG(seed, datasetStream))
	u = make([]float64, n)
	v = make([]float64, n)
	for i := range u {
		u[i] = r.Float64()
	}
	for i := range v {
		v[i] = r.Float64()
	}
	return u, v
}

// swissRoll returns the Swiss roll points with both intrinsic coordinates (t, height).
func swissRoll(n int, seed uint64) (X *mat.Dense, t, h []float64) {
	u, v := uniforms(n, seed)
	X = mat.NewDense(n, 3, nil)
	t = make([]float64, n)
	h = make([]float64, n)
	for i := 0; i < n; i++ {
		ti := 1.5 * math.Pi * (1 + 2*u[i])
		t[i], h[i] = ti, 21*v[i]
		s, c := math.Sincos(ti)
		X.SetRow(i, []float64{ti * c, h[i], ti * s})
	}
	return X, t, h
}

// SwissRoll samples n points of scikit-learn's Swiss roll (noise-free):
// t = 1.5 pi (1 + 2u), (x, y, z) = (t cos t, 21 v, t sin t) with u, v uniform on [0, 1).
// It returns the n x 3 points and the colour t (the roll angle). The random numbers are
// described at Dataset. It panics if n < 1.
func SwissRoll(n int, seed uint64) (X *mat.Dense, t []float64) {
	X, t, _ = swissRoll(n, seed)
	return X, t
}

// sCurve returns the S-curve points with both intrinsic coordinates (t, height).
func sCurve(n int, seed uint64) (X *mat.Dense, t, h []float64) {
	u, v := uniforms(n, seed)
	X = mat.NewDense(n, 3, nil)
	t = make([]float64, n)
	h = make([]float64, n)
	for i := 0; i < n; i++ {
		ti := 3 * math.Pi * (u[i] - 0.5)
		t[i], h[i] = ti, 2*v[i]
		s, c := math.Sincos(ti)
		sign := 1.0
		if ti < 0 {
			sign = -1
		}
		X.SetRow(i, []float64{s, h[i], sign * (c - 1)})
	}
	return X, t, h
}

// SCurve samples n points of scikit-learn's S-curve (noise-free): t = 3 pi (u - 0.5),
// (x, y, z) = (sin t, 2 v, sign(t) (cos t - 1)). It returns the n x 3 points and the colour t.
// It panics if n < 1.
func SCurve(n int, seed uint64) (X *mat.Dense, t []float64) {
	X, t, _ = sCurve(n, seed)
	return X, t
}

// inHole reports whether a Swiss-roll point lies in the removed box.
func inHole(x, y, z float64) bool {
	return x > -10 && x < -5 && z > -4 && z < 7 && y > 5 && y < 15
}

func swissRollHole(n int, seed uint64) (X *mat.Dense, t, h []float64) {
	full, tf, hf := swissRoll(n, seed)
	keep := make([]int, 0, n)
	for i := 0; i < n; i++ {
		if !inHole(full.At(i, 0), full.At(i, 1), full.At(i, 2)) {
			keep = append(keep, i)
		}
	}
	return subset(full, tf, hf, keep)
}

// SwissRollHole samples SwissRoll(n, seed) and removes every point with x in (-10, -5),
// z in (-4, 7) and y in (5, 15); n is the count before removal (5000 leaves about 4650).
// It returns the remaining points, in their original order, and their colour t. X is nil
// when no point is left (only possible for tiny n). It panics if n < 1.
func SwissRollHole(n int, seed uint64) (X *mat.Dense, t []float64) {
	X, t, _ = swissRollHole(n, seed)
	return X, t
}

func severedSphere(n int, seed uint64) (X *mat.Dense, p, t []float64) {
	u, v := uniforms(n, seed)
	keep := make([]int, 0, n)
	pf := make([]float64, n)
	tf := make([]float64, n)
	full := mat.NewDense(n, 3, nil)
	for i := 0; i < n; i++ {
		pi := u[i] * (2*math.Pi - 1)
		ti := v[i] * math.Pi
		pf[i], tf[i] = pi, ti
		if !(ti > math.Pi/3 && ti < 4*math.Pi/5) {
			continue
		}
		st, ct := math.Sincos(ti)
		sp, cp := math.Sincos(pi)
		full.SetRow(i, []float64{st * cp, st * sp, ct})
		keep = append(keep, i)
	}
	return subset(full, pf, tf, keep)
}

// SeveredSphere samples the authors' "severed sphere" (the paper's severed bowl): azimuth
// p = u (2 pi - 1), polar angle t = v pi, keeping only pi/3 < t < 4 pi/5, point
// (sin t cos p, sin t sin p, cos t). n is the count before removal (5000 leaves about 2330).
// It returns the remaining points, in draw order, and their colour p. X is nil when no point
// is left. It panics if n < 1.
func SeveredSphere(n int, seed uint64) (X *mat.Dense, p []float64) {
	X, p, _ = severedSphere(n, seed)
	return X, p
}

// subset keeps rows keep of X, a and b.
func subset(X *mat.Dense, a, b []float64, keep []int) (*mat.Dense, []float64, []float64) {
	if len(keep) == 0 {
		return nil, []float64{}, []float64{}
	}
	_, d := X.Dims()
	Y := mat.NewDense(len(keep), d, nil)
	ka := make([]float64, len(keep))
	kb := make([]float64, len(keep))
	for r, i := range keep {
		Y.SetRow(r, X.RawRowView(i))
		ka[r], kb[r] = a[i], b[i]
	}
	return Y, ka, kb
}

var datasetNames = []string{"swissroll", "scurve", "swissroll-hole", "severed-sphere"}

// DatasetNames returns the names Dataset accepts: swissroll, scurve, swissroll-hole,
// severed-sphere.
func DatasetNames() []string {
	return append([]string(nil), datasetNames...)
}

func generate(name string, n int, seed uint64) (X *mat.Dense, c1, c2 []float64, err error) {
	if n < 1 {
		return nil, nil, nil, fmt.Errorf("dataset size n = %d, must be at least 1", n)
	}
	switch strings.ToLower(name) {
	case "swissroll":
		X, c1, c2 = swissRoll(n, seed)
	case "scurve":
		X, c1, c2 = sCurve(n, seed)
	case "swissroll-hole":
		X, c1, c2 = swissRollHole(n, seed)
	case "severed-sphere":
		X, c1, c2 = severedSphere(n, seed)
	default:
		return nil, nil, nil, fmt.Errorf("unknown dataset %q: use one of %s", name, strings.Join(datasetNames, ", "))
	}
	if X == nil {
		return nil, nil, nil, fmt.Errorf("dataset %s: no point of %d survives the removal; use a larger n", name, n)
	}
	return X, c1, c2, nil
}

// Dataset generates the named dataset (see DatasetNames; case-insensitive) with n points
// before any removal, and returns the points (one per row) and their colour: the roll angle
// t (swissroll, swissroll-hole), t (scurve) or the azimuth p (severed-sphere). It fails for
// an unknown name, for n < 1 and when no point survives the removal.
//
// Random numbers: every dataset draws from math/rand/v2's PCG generator seeded with
// (seed, 0x9E3779B97F4A7C15), taking n uniform values u_1..u_n in [0, 1) with Float64, then n
// more v_1..v_n; point i uses (u_i, v_i). The same seed gives the same points on every
// platform (PCG and Float64 are specified by math/rand/v2), and SwissRollHole(n, seed) is
// exactly SwissRoll(n, seed) minus the hole. The values differ from scikit-learn's (NumPy's
// generator), the distributions are the same.
func Dataset(name string, n int, seed uint64) (X *mat.Dense, color []float64, err error) {
	X, color, _, err = generate(name, n, seed)
	return X, color, err
}

// Coordinates generates the named dataset like Dataset and returns, instead of the colour,
// both intrinsic (manifold) coordinates as an m x 2 matrix, row i belonging to point i.
// Column 0 is the colour of Dataset; column 1 is the second coordinate: the height y
// (swissroll, swissroll-hole, scurve) or the polar angle t (severed-sphere). Both
// coordinates parametrise the manifold. For the S-curve they are isometric coordinates (the
// curve has unit speed in t), so a faithful embedding is close to an affine image of them
// (MaxPrincipalAngleSine after centring, ProcrustesDisparity). For the roll the arc length is
// a monotone but non-linear function of t, so rank-based comparisons (MaxAbsSpearman) fit
// better; the sphere is not developable at all.
func Coordinates(name string, n int, seed uint64) (X, coords *mat.Dense, err error) {
	X, c1, c2, err := generate(name, n, seed)
	if err != nil {
		return nil, nil, err
	}
	coords = mat.NewDense(len(c1), 2, nil)
	for i := range c1 {
		coords.Set(i, 0, c1[i])
		coords.Set(i, 1, c2[i])
	}
	return X, coords, nil
}
