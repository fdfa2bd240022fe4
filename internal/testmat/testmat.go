package testmat

import (
	"math"
	"math/rand/v2"
)

// RandOrthogonal returns a random n x n orthogonal matrix (row-major): the product of n
// Householder reflections I - 2 u u^T / (u^T u) with standard normal u, applied to I.
func RandOrthogonal(rng *rand.Rand, n int) []float64 {
	q := make([]float64, n*n)
	for i := 0; i < n; i++ {
		q[i*n+i] = 1
	}
	u := make([]float64, n)
	for h := 0; h < n; h++ {
		uu := 0.0
		for i := range u {
			u[i] = rng.NormFloat64()
			uu += u[i] * u[i]
		}
		for c := 0; c < n; c++ { // q <- (I - 2 u u^T / uu) q, column by column
			s := 0.0
			for r := 0; r < n; r++ {
				s += u[r] * q[r*n+c]
			}
			s *= 2 / uu
			for r := 0; r < n; r++ {
				q[r*n+c] -= s * u[r]
			}
		}
	}
	return q
}

// WithSpectrum returns the symmetric matrix Q diag(lambda) Q^T (row-major) for a random
// orthogonal Q (RandOrthogonal): its eigenvalues are lambda.
func WithSpectrum(rng *rand.Rand, lambda []float64) []float64 {
	n := len(lambda)
	q := RandOrthogonal(rng, n)
	a := make([]float64, n*n)
	for i := 0; i < n; i++ {
		for j := 0; j <= i; j++ {
			s := 0.0
			for c, l := range lambda {
				s += q[i*n+c] * l * q[j*n+c]
			}
			a[i*n+j], a[j*n+i] = s, s
		}
	}
	return a
}

// OrthDefect returns the entry of Q^T Q - I of largest magnitude for the n x n row-major q,
// with its row and column: how far q's columns are from orthonormal.
func OrthDefect(q []float64, n int) (i, j int, dev float64) {
	for a := 0; a < n; a++ {
		for b := 0; b < n; b++ {
			s := 0.0
			for r := 0; r < n; r++ {
				s += q[r*n+a] * q[r*n+b]
			}
			if a == b {
				s--
			}
			if math.Abs(s) > math.Abs(dev) || a == 0 && b == 0 {
				i, j, dev = a, b, s
			}
		}
	}
	return i, j, dev
}
