package engine

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// refLLEWeights solves Eq. (9) as printed: (G + R I) w = 1 with G = Z Z^T (k x k, Eq. (8)),
// by gonum's LU, then normalizes w to sum 1.
func refLLEWeights(z []float64, k, d int, r float64) []float64 {
	G := mat.NewDense(k, k, nil)
	for a := 0; a < k; a++ {
		for b := 0; b < k; b++ {
			s := 0.0
			for c := 0; c < d; c++ {
				s += z[a*d+c] * z[b*d+c]
			}
			if a == b {
				s += r
			}
			G.Set(a, b, s)
		}
	}
	one := mat.NewVecDense(k, nil)
	for j := 0; j < k; j++ {
		one.SetVec(j, 1)
	}
	var w mat.VecDense
	if err := w.SolveVec(G, one); err != nil {
		panic(err)
	}
	s := mat.Sum(&w)
	out := make([]float64, k)
	for j := range out {
		out[j] = w.AtVec(j) / s
	}
	return out
}

// TestLLEWeightsWoodbury checks lleWeights (the d x d Woodbury system for d < k, the k x k
// system otherwise) against Eq. (9) solved as printed, on random neighbourhoods of every
// shape from d = 1 to k + 2, neighbourhoods with coincident neighbours (zero rows of Z) and
// coplanar neighbourhoods in 3-D (Z of rank 2), with the relative and the absolute ridge.
func TestLLEWeightsWoodbury(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 17))
	type tc struct {
		reg  float64
		mode RegMode
	}
	// Ridges at which G + R I is conditioned below ~1e5 on unit-scale data: both solutions
	// then carry round-off of at most ~1e5 * 1e-16 relative, so 1e-9 of max |w| is a
	// bound with a wide margin, not a measured value.
	modes := []tc{{1e-3, RegTrace}, {1e-2, RegAbsolute}}
	const tol = 1e-9
	worst := 0.0
	for k := 3; k <= 13; k++ {
		for d := 1; d <= k+2; d++ {
			for shape := 0; shape < 3; shape++ {
				n := k + 1
				x := make([]float64, n*d) // point 0 and its k neighbours 1..k
				for i := range x {
					x[i] = rng.NormFloat64()
				}
				switch {
				case shape == 1: // two neighbours on the point itself
					copy(x[1*d:2*d], x[:d])
					copy(x[2*d:3*d], x[:d])
				case shape == 2 && d == 3: // every point on the plane x + y + z = 0
					for i := 0; i < n; i++ {
						x[i*d+2] = -x[i*d] - x[i*d+1]
					}
				}
				nbr := make([]int32, k)
				for j := range nbr {
					nbr[j] = int32(j + 1)
				}
				for _, md := range modes {
					ws := newWork(k, d)
					w := make([]float64, k)
					_, extra := lleWeights(ws, w, x, d, x[:d], nbr, md.reg, md.mode)
					if extra {
						t.Fatalf("k=%d d=%d shape %d: extra regularization at a well-conditioned ridge", k, d, shape)
					}
					z := make([]float64, k*d)
					copy(z, ws.z[:k*d])
					tr := 0.0
					for _, v := range z {
						tr += v * v
					}
					want := refLLEWeights(z, k, d, ridge(tr, md.reg, md.mode))
					scale, sum := 0.0, 0.0
					for j := range want {
						scale = math.Max(scale, math.Abs(want[j]))
						sum += w[j]
					}
					for j := range want {
						e := math.Abs(w[j]-want[j]) / scale
						worst = math.Max(worst, e)
						if e > tol {
							t.Fatalf("k=%d d=%d shape %d reg %v %v: w = %v, want %v", k, d, shape, md.reg, md.mode, w, want)
						}
					}
					// Normalization by the computed sum: 1 to a few ulps.
					if math.Abs(sum-1) > 1e-13 {
						t.Fatalf("k=%d d=%d shape %d: weights sum to %v", k, d, shape, sum)
					}
				}
			}
		}
	}
	t.Logf("largest difference from Eq. (9) as printed: %.2g of max |w|", worst)
}

// TestLLEWeightsExtraRidge: an absolute ridge below round-off of a rank-deficient scatter
// matrix (coplanar neighbours at scale 1e8, R = 1e-7) cannot be factored; lleWeights grows
// it, reports that, and still returns finite weights summing to 1.
func TestLLEWeightsExtraRidge(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 18))
	k, d := 10, 3
	x := make([]float64, (k+1)*d)
	for i := 0; i <= k; i++ {
		u, v := rng.NormFloat64()*1e8, rng.NormFloat64()*1e8
		x[i*d], x[i*d+1], x[i*d+2] = u, v, u-v
	}
	nbr := make([]int32, k)
	for j := range nbr {
		nbr[j] = int32(j + 1)
	}
	w := make([]float64, k)
	_, extra := lleWeights(newWork(k, d), w, x, d, x[:d], nbr, 1e-7, RegAbsolute)
	if !extra {
		t.Fatal("no extra regularization reported")
	}
	s := 0.0
	for _, v := range w {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			t.Fatalf("weights %v", w)
		}
		s += v
	}
	// The weights are divided by their own sum: |sum - 1| <= k u ~ 1e-15 (measured 0).
	if math.Abs(s-1) > 1e-12 {
		t.Fatalf("weights sum to %v", s)
	}
}

// TestLLEWeightsOffHyperplane: the neighbours lie on a hyperplane that misses the point (1 in
// the range of Z, as on quantised data), so the Woodbury numerator 1 - Z u is of order R and
// a ridge of 1e-16 tr leaves only round-off: the weights were 0/0 (NaN) before session 32.
// lleWeights now grows the ridge, reports it, and returns finite weights summing to 1 that
// reconstruct the point as well as the exact least-squares weights.
func TestLLEWeightsOffHyperplane(t *testing.T) {
	k, d := 5, 4
	// Point 0 at the origin; its 5 neighbours on the hyperplane x_0 = 1.
	x := []float64{
		0, 0, 0, 0,
		1, 0, 0, 0,
		1, 1, 0, 0,
		1, 0, 1, 0,
		1, 0, 0, 1,
		1, 1, 1, 1,
	}
	nbr := []int32{1, 2, 3, 4, 5}
	for _, md := range []struct {
		reg  float64
		mode RegMode
	}{{1e-16, RegTrace}, {1e-20, RegAbsolute}} {
		ws := newWork(k, d)
		w := make([]float64, k)
		_, extra := lleWeights(ws, w, x, d, x[:d], nbr, md.reg, md.mode)
		if !extra {
			t.Errorf("reg %g %v: no extra regularization reported", md.reg, md.mode)
		}
		s := 0.0
		for _, v := range w {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				t.Fatalf("reg %g %v: weights %v", md.reg, md.mode, w)
			}
			s += v
		}
		// Divided by their own sum: |sum - 1| <= k u.
		if math.Abs(s-1) > 1e-12 {
			t.Errorf("reg %g %v: weights sum to %v", md.reg, md.mode, s)
		}
		// The minimum-norm weights of the exact problem: Z^T w = 0 is impossible (every
		// neighbour has x_0 = 1, so sum_j w_j z_j has x_0 = 1); the least-squares weights
		// minimise ||Z^T w|| on the sum-to-one plane. At any small ridge they reconstruct
		// the point with residual 1 in x_0 and nearly 0 elsewhere: check ||Z^T w - e_0|| small.
		z := ws.z[:k*d]
		res := make([]float64, d)
		for j := 0; j < k; j++ {
			for c := 0; c < d; c++ {
				res[c] += w[j] * z[j*d+c]
			}
		}
		res[0] = math.Abs(res[0]) - 1
		// 1e-6: the ridge grows until 1 - Z u has 1e8 ulps of headroom, leaving round-off and
		// a ridge effect of about 1e-8 in the weights (measured 3.5e-5 with 1e4 ulps);
		// 1e-6 fails on that and on a wrong solution.
		if n := math.Hypot(math.Hypot(res[0], res[1]), math.Hypot(res[2], res[3])); n > 1e-6 {
			t.Errorf("reg %g %v: reconstruction residual %g (w = %v)", md.reg, md.mode, n, w)
		}
	}
}
