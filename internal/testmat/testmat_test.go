package testmat

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestRandOrthogonal: Q^T Q = I, and A = WithSpectrum(lambda) is symmetric with
// A q_c = lambda_c q_c for the Q drawn from the same seed.
func TestRandOrthogonal(t *testing.T) {
	for _, n := range []int{1, 2, 3, 7, 16} {
		q := RandOrthogonal(rand.New(rand.NewPCG(1, uint64(n))), n)
		// n reflections, each exact to a few ulps: 1e-13 leaves a margin of 100x at n = 16.
		if i, j, dev := OrthDefect(q, n); math.Abs(dev) > 1e-13 {
			t.Fatalf("n = %d: (Q^T Q - I)[%d][%d] = %g", n, i, j, dev)
		}
		lambda := make([]float64, n)
		for i := range lambda {
			lambda[i] = float64(i*i) - 3
		}
		a := WithSpectrum(rand.New(rand.NewPCG(1, uint64(n))), lambda)
		for i := 0; i < n; i++ {
			for j := 0; j < i; j++ {
				if a[i*n+j] != a[j*n+i] {
					t.Fatalf("n = %d: A[%d][%d] = %g, A[%d][%d] = %g", n, i, j, a[i*n+j], j, i, a[j*n+i])
				}
			}
		}
		for c, l := range lambda {
			for i := 0; i < n; i++ {
				s := 0.0
				for j := 0; j < n; j++ {
					s += a[i*n+j] * q[j*n+c]
				}
				// ||A|| <= 222 at n = 16; the products are exact to ~n ulps of it.
				if math.Abs(s-l*q[i*n+c]) > 1e-11 {
					t.Fatalf("n = %d: (A q_%d)[%d] = %g, want %g", n, c, i, s, l*q[i*n+c])
				}
			}
		}
	}
}

// TestOrthDefect: OrthDefect finds the worst entry of Q^T Q - I.
func TestOrthDefect(t *testing.T) {
	q := []float64{1, 0, 0, 2} // columns e_1 and 2 e_2: (Q^T Q - I)[1][1] = 3
	if i, j, dev := OrthDefect(q, 2); i != 1 || j != 1 || dev != 3 {
		t.Errorf("OrthDefect = (%d, %d, %g), want (1, 1, 3)", i, j, dev)
	}
	if _, _, dev := OrthDefect([]float64{0, 1, 1, 0}, 2); dev != 0 {
		t.Errorf("a permutation: defect %g", dev)
	}
}
