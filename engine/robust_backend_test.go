package engine

import (
	"context"
	"fmt"
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

// gammaU is Higham's gamma_k = k u / (1 - k u), u = 2^-53 the unit round-off.
func gammaU(k int) float64 { return float64(k) * 0x1p-53 / (1 - float64(k)*0x1p-53) }

// checkDenseOracles checks one backend's results in TestBackendDenseKernels against oracles of
// its own, not another backend's results (which in the purego build are gonum's against
// gonum's): with L the lower triangle of l (Dpotrf's factor of the n x n SPD a; l's strict
// upper triangle keeps a's), entrywise
//   - |L L^T - a| <= 2 gamma(n+2) |L| |L^T| (Higham, Accuracy and Stability, theorem 10.3,
//     doubled for the oracle's own product);
//   - |rhs - a x| <= 2 gamma(3n+2) (|L| |L^T| |x| + |a| |x| + |rhs|) for Dpotrs's x (n x 3;
//     theorem 10.4, plus the oracle's residual);
//   - |c - a l^T| <= 2 gamma(n+3) |a| |l^T| for Dgemm's c (any summation order, twice).
func checkDenseOracles(n int, a, rhs, l, x, c []float64) error {
	at := func(i, j int) float64 { // L[i][j]
		if j > i {
			return 0
		}
		return l[i*n+j]
	}
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			s, mag := 0.0, 0.0
			for q := 0; q < n; q++ {
				p := at(i, q) * at(j, q)
				s += p
				mag += math.Abs(p)
			}
			if d := math.Abs(s - a[i*n+j]); !(d <= 2*gammaU(n+2)*mag) {
				return fmt.Errorf("(L L^T)[%d][%d] - a = %g, bound %g", i, j, d, 2*gammaU(n+2)*mag)
			}
			s, mag = 0, 0
			for q := 0; q < n; q++ {
				p := a[i*n+q] * l[j*n+q]
				s += p
				mag += math.Abs(p)
			}
			if d := math.Abs(c[i*n+j] - s); !(d <= 2*gammaU(n+3)*mag) {
				return fmt.Errorf("Dgemm entry [%d][%d] off the definition by %g, bound %g", i, j, d, 2*gammaU(n+3)*mag)
			}
		}
	}
	for r := 0; r < 3; r++ {
		tx := make([]float64, n) // |L^T| |x|
		for i := 0; i < n; i++ {
			for q := i; q < n; q++ {
				tx[i] += math.Abs(at(q, i) * x[q*3+r])
			}
		}
		for i := 0; i < n; i++ {
			res, mag := rhs[i*3+r], math.Abs(rhs[i*3+r])
			for q := 0; q < n; q++ {
				p := a[i*n+q] * x[q*3+r]
				res -= p
				mag += math.Abs(p) + math.Abs(at(i, q))*tx[q]
			}
			if d := math.Abs(res); !(d <= 2*gammaU(3*n+2)*mag) {
				return fmt.Errorf("Dpotrs residual %g at [%d][%d], bound %g", d, i, r, 2*gammaU(3*n+2)*mag)
			}
		}
	}
	return nil
}

// TestBackendDenseKernels: Dpotrf + Dpotrs + Dgemm through both backends on random SPD
// problems, each backend's results checked against oracles (checkDenseOracles: these are what
// the purego build, whose two backends are the same, is tested by) and the two backends' against
// each other (within round-off), and the engine's own small kernels (bit-identical).
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
		if err := checkDenseOracles(n, a, rhs, l1, x1, c1); err != nil {
			t.Errorf("n=%d %s: %v", n, cur.Name(), err)
		}
		if cur != kernels.Native {
			if err := checkDenseOracles(n, a, rhs, l2, x2, c2); err != nil {
				t.Errorf("n=%d gonum: %v", n, err)
			}
		}
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
		// Each solve against its own residual, ||(M + 1e-3 I) x - b||_inf over
		// (||M + 1e-3 I||_inf ||x||_inf), not only against the other backend's (the same code in
		// the purego build). 1e-12 is the sparse package's residualTol: a backward-stable
		// Cholesky solve leaves a small multiple of u times the factor's column counts
		// (measured at most 4e-16 here).
		if r := shiftedResidual(a, 1e-3, o1.x, b); r > 1e-12 {
			t.Errorf("n=%d %s: relative residual %g of the sparse solve", n, cur.Name(), r)
		}
		if cur != kernels.Native {
			if r := shiftedResidual(a, 1e-3, o2.x, b); r > 1e-12 {
				t.Errorf("n=%d gonum: relative residual %g of the sparse solve", n, r)
			}
		}
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

// shiftedResidual returns ||(A + shift I) x - b||_inf / (||A + shift I||_inf ||x||_inf) for the
// CSR matrix a stored with both triangles (||A||_inf + |shift|, which bounds the norm, in its
// place).
func shiftedResidual(a sparse.CSRMatrix, shift float64, x, b []float64) float64 {
	num, an, xn := 0.0, 0.0, 0.0
	for i := 0; i < a.Dim; i++ {
		r, row := shift*x[i]-b[i], math.Abs(shift)
		for p := a.RowPtr[i]; p < a.RowPtr[i+1]; p++ {
			r += a.Val[p] * x[a.ColIdx[p]]
			row += math.Abs(a.Val[p])
		}
		num, an, xn = max(num, math.Abs(r)), max(an, row), max(xn, math.Abs(x[i]))
	}
	return num / (an * xn)
}
