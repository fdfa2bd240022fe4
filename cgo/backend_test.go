package cgo

import (
	"math"
	"testing"

	"gonum.org/v1/gonum/blas"

	"glle/kernels"
)

func TestBackendRegistered(t *testing.T) {
	b := kernels.Current()
	want := "gonum"
	if Enabled {
		want = "openblas"
	}
	if b.Name() != want {
		t.Fatalf("backend %q, want %q", b.Name(), want)
	}
	// A 2x2 GEMM and a Cholesky through the registered backend.
	a := []float64{4, 2, 2, 3}
	c := make([]float64, 4)
	b.BLAS().Dgemm(blas.NoTrans, blas.Trans, 2, 2, 2, 1, a, 2, a, 2, 0, c, 2)
	want4 := []float64{20, 14, 14, 13}
	for i := range c {
		if c[i] != want4[i] {
			t.Fatalf("dgemm: got %v want %v", c, want4)
		}
	}
	if !b.LAPACK().Dpotrf(blas.Lower, 2, a, 2) {
		t.Fatal("dpotrf failed on an SPD matrix")
	}
	// L = [2 0; 1 sqrt(2)]: sqrt(4) and 2/2 are exact and sqrt(2) correctly rounded, so a
	// conforming Dpotrf is exact; 1e-15 (about 4 ulps of sqrt 2) allows an FMA or reordering.
	if math.Abs(a[0]-2) > 1e-15 || math.Abs(a[2]-1) > 1e-15 || math.Abs(a[3]-math.Sqrt2) > 1e-15 {
		t.Fatalf("dpotrf: got %v", a)
	}
	if Config() == "" {
		t.Fatal("empty config")
	}
}
