package engine

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// TestRotateOntoWorkers: rotateOnto finds the rotation that maps Y onto B = Y Q (Q a random
// orthogonal matrix) and gives the same bits for 1, 2 and 3 workers, at an n spanning several
// of its fixed chunks.
func TestRotateOntoWorkers(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 22))
	const n, p = 20000, 3 // 3 chunks of 8192 rows
	y := mat.NewDense(n, p, nil)
	for i := 0; i < n; i++ {
		for j := 0; j < p; j++ {
			y.Set(i, j, rng.NormFloat64())
		}
	}
	g := mat.NewDense(p, p, nil)
	for i := range p * p {
		g.RawMatrix().Data[i] = rng.NormFloat64()
	}
	var qr mat.QR
	qr.Factorize(g)
	var q mat.Dense
	qr.QTo(&q)
	var b mat.Dense
	b.Mul(y, &q)
	var first []float64
	for _, workers := range []int{1, 2, 3} {
		yw := mat.DenseCopyOf(y)
		rotateOnto(yw, &b, workers)
		got := yw.RawMatrix().Data
		if first == nil {
			first = slices.Clone(got)
			var d mat.Dense
			d.Sub(yw, &b)
			// Y R = B exactly in exact arithmetic; the round-off of a 3 x 3 SVD and 3-term
			// row products of O(1) entries is ~1e-15 per entry.
			if e := mat.Norm(&d, math.Inf(1)); e > 1e-12 {
				t.Fatalf("||Y R - B||_inf = %g", e)
			}
		} else if !slices.Equal(got, first) {
			t.Fatalf("workers=%d: rotateOnto's result differs from 1 worker's", workers)
		}
	}
}

// TestFixSignsWorkers: fixSigns makes each column's entry of largest magnitude positive,
// choosing the lowest row on ties, with the same result for 1, 2 and 3 workers; the ties sit
// in different chunks (rows 100 and 17000) so that the chunks' maxima must be compared in
// order.
func TestFixSignsWorkers(t *testing.T) {
	rng := rand.New(rand.NewPCG(23, 24))
	const n, p = 20000, 3
	v := make([]float64, n*p)
	for i := range v {
		v[i] = rng.Float64()*2 - 1
	}
	v[100*p+0], v[17000*p+0] = -5, 5 // column 0: tie, the first is negative: flip
	v[300*p+1], v[19999*p+1] = 7, -7 // column 1: tie, the first is positive: keep
	v[12000*p+2] = -9                // column 2: unique maximum in the second chunk: flip
	want := slices.Clone(v)
	for i := 0; i < n; i++ {
		want[i*p+0], want[i*p+2] = -want[i*p+0], -want[i*p+2]
	}
	for _, workers := range []int{1, 2, 3} {
		got := slices.Clone(v)
		fixSigns(got, n, p, workers)
		if !slices.Equal(got, want) {
			t.Fatalf("workers=%d: signs differ from the expected flips of columns 0 and 2", workers)
		}
	}
}
