package engine

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/blas"

	"glle/kernels"
	"glle/sparse"
)

// Differential tests between the registered backend (OpenBLAS in the default build, gonum in
// the purego build) and gonum's native Go, on random problems, in one process: the per-point
// kernels and the symbolic analysis are the same Go code under both and must agree bit for bit;
// LAPACK/BLAS-backed factorizations and solves must agree to round-off.

func randSPD(rng *rand.Rand, n int) []float64 {
	b := make([]float64, n*n)
	for i := range b {
		b[i] = rng.NormFloat64()
	}
	a := make([]float64, n*n)
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			s := 0.0
			for l := 0; l < n; l++ {
				s += b[i*n+l] * b[j*n+l]
			}
			a[i*n+j] = s
		}
		a[i*n+i] += float64(n) * 1e-3
	}
	return a
}

func relDiff(a, b []float64) float64 {
	num, den := 0.0, 0.0
	for i := range a {
		num = math.Max(num, math.Abs(a[i]-b[i]))
		den = math.Max(den, math.Abs(a[i]))
	}
	if den == 0 {
		return num
	}
	return num / den
}

func bitsEqual(a, b []float64) bool {
	for i := range a {
		if math.Float64bits(a[i]) != math.Float64bits(b[i]) {
			return false
		}
	}
	return len(a) == len(b)
}

// TestBackendDenseKernels: Dpotrf + Dpotrs + Dgemm through both backends on random SPD
// problems (within round-off), and the engine's own small kernels (bit-identical).
func TestBackendDenseKernels(t *testing.T) {
	cur := kernels.Current()
	defer kernels.Use(cur)
	rng := rand.New(rand.NewPCG(6, 1))
	for _, n := range []int{1, 3, 10, 33, 64, 150} {
		a := randSPD(rng, n)
		rhs := make([]float64, n*3)
		for i := range rhs {
			rhs[i] = rng.NormFloat64()
		}
		run := func(b kernels.Backend) (l, x, c []float64) {
			l = append([]float64(nil), a...)
			if !b.LAPACK().Dpotrf(blas.Lower, n, l, n) {
				t.Fatalf("%s: Dpotrf failed on an SPD matrix (n=%d)", b.Name(), n)
			}
			x = append([]float64(nil), rhs...)
			b.LAPACK().Dpotrs(blas.Lower, n, 3, l, n, x, 3)
			c = make([]float64, n*n)
			b.BLAS().Dgemm(blas.NoTrans, blas.Trans, n, n, n, 1, a, n, l, n, 0, c, n)
			return
		}
		l1, x1, c1 := run(cur)
		l2, x2, c2 := run(kernels.Native)
		lower := func(l []float64) []float64 {
			out := make([]float64, 0, n*(n+1)/2)
			for i := 0; i < n; i++ {
				out = append(out, l[i*n:i*n+i+1]...)
			}
			return out
		}
		// Both factorizations are backward stable (error ~ n u ||A||); cond(A) <= ~4e3 here
		// (B B^T + n 1e-3 I) gives a pessimistic first-order bound cond n u = 7e-11 at n = 150
		// for L and for the solve. Measured: L 3.6e-15, x 2.7e-14, Dgemm 4.4e-16 (n = 150);
		// 1e-12 and 1e-9 keep wide margins, Dgemm's 1e-13 is n u = 1.7e-14 times a cancellation
		// factor of a few.
		if d := relDiff(lower(l1), lower(l2)); d > 1e-12 {
			t.Errorf("n=%d: Cholesky factors differ between %s and gonum by %g", n, cur.Name(), d)
		}
		if d := relDiff(x1, x2); d > 1e-9 {
			t.Errorf("n=%d: solutions differ by %g", n, d)
		}
		if d := relDiff(c1, c2); d > 1e-13 {
			t.Errorf("n=%d: Dgemm differs by %g", n, d)
		}
		if cur == kernels.Native && (!bitsEqual(l1, l2) || !bitsEqual(x1, x2)) {
			t.Errorf("n=%d: the same backend gave different results", n)
		}
	}
	// The per-point kernels are Go code: identical whatever backend is registered.
	for _, k := range []int{2, 5, 10, 24} {
		a := randSPD(rng, k)
		run := func(b kernels.Backend) ([]float64, []float64, []float64, []float64) {
			kernels.Use(b)
			l := append([]float64(nil), a...)
			kernels.Cholesky(l, k)
			x := make([]float64, k)
			for i := range x {
				x[i] = 1
			}
			kernels.CholSolve(l, k, x)
			w, v := make([]float64, k), make([]float64, k*k)
			kernels.SymEigen(append([]float64(nil), a...), k, w, v)
			return l, x, w, v
		}
		l1, x1, w1, v1 := run(cur)
		l2, x2, w2, v2 := run(kernels.Native)
		if !bitsEqual(l1, l2) || !bitsEqual(x1, x2) || !bitsEqual(w1, w2) || !bitsEqual(v1, v2) {
			t.Errorf("k=%d: per-point kernels differ between backends", k)
		}
	}
}

// TestBackendSparseFactorization: M of a random kNN-like graph with random weights, analysed
// once (identical orderings and fill) and factored and solved through both backends.
func TestBackendSparseFactorization(t *testing.T) {
	cur := kernels.Current()
	defer kernels.Use(cur)
	rng := rand.New(rand.NewPCG(7, 2))
	ctx := context.Background()
	for _, c := range []struct{ n, k int }{{300, 6}, {1000, 8}, {3000, 10}} {
		n, k := c.n, c.k
		// Neighbours: nearby indices on a ring plus a few random long edges.
		nbr := make([]int32, n*k)
		w := make([]float64, n*k)
		for i := 0; i < n; i++ {
			seen := map[int32]bool{int32(i): true}
			for j := 0; j < k; j++ {
				// Ring neighbours +-1, +-2, ... and one random long edge.
				off := j/2 + 1
				if j%2 == 1 {
					off = n - off
				}
				v := int32((i + off) % n)
				for j >= k-1 || seen[v] {
					v = int32(rng.IntN(n))
					if !seen[v] {
						break
					}
				}
				seen[v] = true
				nbr[i*k+j] = v
				w[i*k+j] = rng.Float64()
			}
			s := 0.0
			for j := 0; j < k; j++ {
				s += w[i*k+j]
			}
			for j := 0; j < k; j++ {
				w[i*k+j] /= s
			}
		}
		pat, err := sparse.NewMPattern(ctx, n, k, nbr, 2)
		if err != nil {
			t.Fatal(err)
		}
		if err := pat.Fill(ctx, w, 2); err != nil {
			t.Fatal(err)
		}
		a := pat.Matrix()
		b := make([]float64, n)
		for i := range b {
			b[i] = rng.NormFloat64()
		}
		type out struct {
			perm []int
			nnz  int64
			x    []float64
		}
		run := func(be kernels.Backend) out {
			kernels.Use(be)
			sym, err := sparse.Analyze(ctx, n, a.RowPtr, a.ColIdx, sparse.SymbolicOptions{Workers: 2})
			if err != nil {
				t.Fatal(err)
			}
			f := sparse.NewFactor(sym)
			if err := f.Factorize(ctx, a.Val, -1e-3); err != nil {
				t.Fatalf("%s: %v", be.Name(), err)
			}
			x := make([]float64, n)
			f.Solve(x, b)
			return out{append([]int(nil), sym.Perm()...), sym.NNZ(), x}
		}
		o1, o2 := run(cur), run(kernels.Native)
		if o1.nnz != o2.nnz || len(o1.perm) != len(o2.perm) {
			t.Fatalf("n=%d: symbolic analyses differ (nnz %d vs %d)", n, o1.nnz, o2.nnz)
		}
		for i := range o1.perm {
			if o1.perm[i] != o2.perm[i] {
				t.Fatalf("n=%d: orderings differ at %d", n, i)
			}
		}
		// Same ordering, different BLAS summation orders: cond(M + 1e-3 I) <= ~4e3 times
		// O(nnz per row) u gives ~4e-11; measured 5.1e-15 (n = 3000).
		if d := relDiff(o1.x, o2.x); d > 1e-9 {
			t.Errorf("n=%d: sparse solves differ between %s and gonum by %g", n, cur.Name(), d)
		}
		if cur == kernels.Native && !bitsEqual(o1.x, o2.x) {
			t.Errorf("n=%d: the same backend gave different sparse solves", n)
		}
	}
}
