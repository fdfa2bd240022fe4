//go:build cgo && !purego

package cgo

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"glle/kernels"
)

// oneSupernode returns a factor whose supernode 0 has w columns and mu below-rows, the
// columns of supernode 1 (w1 = mu, no rows below). Supernode 0's panel is random with a
// diagonal of magnitude >= 1; supernode 1's panel is NaN, so that any read past the end of
// supernode 0's panel poisons the result.
func oneSupernode(rng *rand.Rand, w, mu int) *kernels.Supernodes {
	n := w + mu
	s := &kernels.Supernodes{
		First:  []int32{0, int32(w), int32(n)},
		RowPtr: []int64{0, int64(n), int64(n + mu)},
		LXPtr:  []int64{0, int64(w * n), int64(w*n + mu*mu)},
	}
	for i := 0; i < n; i++ { // supernode 0's rows: its columns, then all of supernode 1's
		s.Rows = append(s.Rows, int32(i))
	}
	for i := w; i < n; i++ {
		s.Rows = append(s.Rows, int32(i))
	}
	s.LX = make([]float64, w*n+mu*mu)
	for i := 0; i < n; i++ {
		for j := 0; j < w; j++ {
			v := rng.Float64() - 0.5
			if i < w && j > i {
				v = 0 // above the diagonal
			}
			if i == j {
				v = 1 + rng.Float64()
			}
			s.LX[i*w+j] = v
		}
	}
	for i := w * n; i < len(s.LX); i++ {
		s.LX[i] = math.NaN()
	}
	return s
}

// refForward is supernode 0's forward step by definition: x = L11^{-1} y[0:w],
// y[rows] -= L21 x.
func refForward(s *kernels.Supernodes, y []float64) {
	w, n := int(s.First[1]), int(s.First[2])
	for i := 0; i < w; i++ {
		v := y[i]
		for j := 0; j < i; j++ {
			v -= s.LX[i*w+j] * y[j]
		}
		y[i] = v / s.LX[i*w+i]
	}
	for k := w; k < n; k++ {
		v := 0.0
		for j := 0; j < w; j++ {
			v += s.LX[k*w+j] * y[j]
		}
		y[k] -= v
	}
}

// refBackward is supernode 0's backward step by definition: x = L11^{-T} (y[0:w] - L21^T y[rows]).
func refBackward(s *kernels.Supernodes, y []float64) {
	w, n := int(s.First[1]), int(s.First[2])
	for k := w; k < n; k++ {
		for j := 0; j < w; j++ {
			y[j] -= s.LX[k*w+j] * y[k]
		}
	}
	for i := w - 1; i >= 0; i-- {
		y[i] /= s.LX[i*w+i]
		for j := 0; j < i; j++ {
			y[j] -= s.LX[i*w+j] * y[i]
		}
	}
}

// TestSupernodeStepsMatchDefinition checks one forward and one backward step of the C kernels
// against the definitions, for widths around the register kernels' vector blocks (4) and
// their limit (16), and below-row counts around their four-row groups and the one-row cases;
// the panel after the step's is NaN, so an over-read past it would show.
func TestSupernodeStepsMatchDefinition(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	var ob openblas
	for _, w := range []int{1, 2, 3, 4, 5, 7, 8, 9, 12, 13, 15, 16, 17, 20, 33} {
		for _, mu := range []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 13, 40} {
			s := oneSupernode(rng, w, mu)
			n := w + mu
			for dir := 0; dir < 2; dir++ {
				y := make([]float64, n)
				for i := range y {
					y[i] = rng.NormFloat64()
				}
				want := append([]float64(nil), y...)
				tmp := make([]float64, max(mu, 1))
				if dir == 0 {
					ob.ForwardSupernodes(s, y, tmp, 0, 1, nil, nil, nil)
					refForward(s, want)
				} else {
					ob.BackwardSupernodes(s, y, tmp, 0, 1)
					refBackward(s, want)
				}
				for i := range y {
					// Sums of at most 33 products of entries below 1 in magnitude with a
					// diagonal >= 1, in a different order: a few ulps of the operands'
					// magnitude (~10 here), far below 1e-12.
					if math.IsNaN(y[i]) || math.Abs(y[i]-want[i]) > 1e-12*math.Max(1, math.Abs(want[i])) {
						t.Fatalf("w=%d mu=%d dir=%d: y[%d] = %v, want %v", w, mu, dir, i, y[i], want[i])
					}
				}
			}
		}
	}
}

// TestSupernodeSplitMatchesWhole checks that the split steps (SupernodalSplitter) have the bits
// of the whole steps, on supernodes just above the split thresholds (width 17, w*mu = 16384)
// and wider ones, with odd and even row counts and uneven row splits.
func TestSupernodeSplitMatchesWhole(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	var ob openblas
	cases := []struct{ w, mu int }{{17, 964}, {18, 911}, {64, 256}, {128, 129}, {300, 901}, {700, 24}}
	for _, c := range cases {
		if !ob.Splits(c.w, c.mu) {
			t.Fatalf("w=%d mu=%d: does not split", c.w, c.mu)
		}
		s := oneSupernode(rng, c.w, c.mu)
		n := c.w + c.mu
		y0 := make([]float64, n)
		for i := range y0 {
			y0[i] = rng.NormFloat64()
		}
		tmp, tmp2 := make([]float64, c.mu), make([]float64, c.mu)
		acc := make([]float64, c.w)
		// Forward: diagonal block, then rows [0, h) and [h, mu) in either order.
		for _, h := range []int{0, 1, c.mu / 2, c.mu - 1, c.mu} {
			whole := append([]float64(nil), y0...)
			ob.ForwardSupernodes(s, whole, tmp, 0, 1, nil, nil, nil)
			split := append([]float64(nil), y0...)
			ob.ForwardDiag(s, split, 0)
			ob.ForwardRows(s, split, tmp2, 0, h, c.mu)
			ob.ForwardRows(s, split, tmp, 0, 0, h)
			sameBits(t, "forward", c.w, c.mu, split, whole)
		}
		whole := append([]float64(nil), y0...)
		ob.BackwardSupernodes(s, whole, tmp, 0, 1)
		split := append([]float64(nil), y0...)
		ob.BackwardHigh(s, split, tmp2, acc, 0)
		ob.BackwardLow(s, split, tmp, 0)
		ob.BackwardFinish(s, split, acc, 0)
		sameBits(t, "backward", c.w, c.mu, split, whole)
		want := append([]float64(nil), y0...)
		refBackward(s, want)
		for i := range want {
			// Triangular solves with random +-0.5 entries grow the solution (|y| up to 2.5e6 at
			// w = 700) and the relative error with it: measured 4.5e-12 (w = 700); 1e-10 is 22x.
			if math.Abs(split[i]-want[i]) > 1e-10*math.Max(1, math.Abs(want[i])) {
				t.Fatalf("w=%d mu=%d: backward y[%d] = %v, want %v", c.w, c.mu, i, split[i], want[i])
			}
		}
	}
	// Below the thresholds the steps are not split.
	for _, c := range []struct{ w, mu int }{{16, 5000}, {17, 963}, {100, 163}, {4097, 100}} {
		if c.w*c.mu < 16384 || c.w <= 16 || c.w > 4096 {
			if ob.Splits(c.w, c.mu) {
				t.Fatalf("w=%d mu=%d: splits", c.w, c.mu)
			}
		}
	}
}

func sameBits(t *testing.T, what string, w, mu int, got, want []float64) {
	t.Helper()
	for i := range got {
		if math.Float64bits(got[i]) != math.Float64bits(want[i]) {
			t.Fatalf("%s w=%d mu=%d: split step y[%d] = %v, whole step %v", what, w, mu, i, got[i], want[i])
		}
	}
}

// TestSupernodeSplitPanics checks the split steps' constant messages on a supernode that does
// not split and on short scratch.
func TestSupernodeSplitPanics(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	var ob openblas
	narrow := oneSupernode(rng, 16, 2000)
	wide := oneSupernode(rng, 32, 600)
	y := make([]float64, 2100)
	for _, c := range []struct {
		name, msg string
		fn        func()
	}{
		{"narrow", "does not split", func() { ob.ForwardDiag(narrow, y, 0) }},
		{"rows range", "out of bounds", func() { ob.ForwardRows(wide, y, make([]float64, 601), 0, 0, 601) }},
		{"rows scratch", "out of bounds", func() { ob.ForwardRows(wide, y, make([]float64, 10), 0, 0, 20) }},
		{"high scratch", "too short", func() { ob.BackwardHigh(wide, y, make([]float64, 599), make([]float64, 32), 0) }},
		{"high acc", "too short", func() { ob.BackwardHigh(wide, y, make([]float64, 600), make([]float64, 31), 0) }},
		{"low scratch", "too short", func() { ob.BackwardLow(wide, y, make([]float64, 10), 0) }},
		{"finish acc", "too short", func() { ob.BackwardFinish(wide, y, make([]float64, 3), 0) }},
	} {
		if r := panicMessage(c.fn); r == "" || !strings.Contains(r, c.msg) {
			t.Fatalf("%s: panic %q, want one containing %q", c.name, r, c.msg)
		}
	}
}
