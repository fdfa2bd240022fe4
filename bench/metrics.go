package bench

import (
	"context"
	"fmt"
	"math"
	"slices"

	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/lapack/lapack64"
	"gonum.org/v1/gonum/mat"

	"glle/parallel"
)

// Ranks returns the 1-based ranks of x, ties receiving the average of the ranks they span
// (so 1, 2, 2, 3 ranks as 1, 2.5, 2.5, 4). NaN values make the result meaningless.
func Ranks(x []float64) []float64 {
	idx := make([]int, len(x))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int {
		switch {
		case x[a] < x[b]:
			return -1
		case x[a] > x[b]:
			return 1
		}
		return 0
	})
	r := make([]float64, len(x))
	for lo := 0; lo < len(idx); {
		hi := lo + 1
		for hi < len(idx) && x[idx[hi]] == x[idx[lo]] {
			hi++
		}
		avg := float64(lo+1+hi) / 2 // mean of the ranks lo+1 .. hi
		for _, i := range idx[lo:hi] {
			r[i] = avg
		}
		lo = hi
	}
	return r
}

// Spearman returns the Spearman rank correlation of a and b: the Pearson correlation of
// their average ranks (see Ranks). It is NaN when either input is constant or has fewer
// than two values. It panics if the lengths differ.
func Spearman(a, b []float64) float64 {
	if len(a) != len(b) {
		panic("bench: Spearman of slices of different lengths")
	}
	if !finiteSlice(a) || !finiteSlice(b) {
		return math.NaN() // a NaN has no rank (it gave 0.886 for [1 NaN 3 2 5 4] before session 32)
	}
	return pearson(Ranks(a), Ranks(b))
}

// finiteSlice reports whether every value of x is finite.
func finiteSlice(x []float64) bool {
	for _, v := range x {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return false
		}
	}
	return true
}

// allFinite reports whether every entry of the matrix is finite.
func allFinite(A *mat.Dense) bool {
	r, c := A.Dims()
	for i := 0; i < r; i++ {
		if !finiteSlice(A.RawRowView(i)[:c]) {
			return false
		}
	}
	return true
}

func pearson(a, b []float64) float64 {
	n := len(a)
	if n < 2 {
		return math.NaN()
	}
	var ma, mb float64
	for i := range a {
		ma += a[i]
		mb += b[i]
	}
	ma /= float64(n)
	mb /= float64(n)
	var sab, saa, sbb float64
	for i := range a {
		da, db := a[i]-ma, b[i]-mb
		sab += da * db
		saa += da * da
		sbb += db * db
	}
	if saa == 0 || sbb == 0 {
		return math.NaN()
	}
	r := sab / math.Sqrt(saa*sbb)
	return math.Max(-1, math.Min(1, r))
}

// MaxAbsSpearman returns the largest |Spearman correlation| between a column of the
// embedding Y (n x p) and the manifold coordinate coord (length n): 1 when some embedding
// axis orders the points exactly as the coordinate does (or exactly reversed). Constant
// columns count as 0; so does a constant coord. It is NaN when Y or coord holds a non-finite
// value. It panics if len(coord) differs from the number of rows of Y.
func MaxAbsSpearman(Y *mat.Dense, coord []float64) float64 {
	n, p := Y.Dims()
	if len(coord) != n {
		panic("bench: MaxAbsSpearman with len(coord) different from the rows of Y")
	}
	if !finiteSlice(coord) || !allFinite(Y) {
		return math.NaN()
	}
	rc := Ranks(coord)
	best := 0.0
	col := make([]float64, n)
	for j := 0; j < p; j++ {
		mat.Col(col, j, Y)
		if r := math.Abs(pearson(Ranks(col), rc)); r > best { // NaN compares false
			best = r
		}
	}
	return best
}

// Centered returns a copy of A with every column's mean subtracted.
func Centered(A mat.Matrix) *mat.Dense {
	n, p := A.Dims()
	C := mat.DenseCopyOf(A)
	for j := 0; j < p; j++ {
		var m float64
		for i := 0; i < n; i++ {
			m += C.At(i, j)
		}
		m /= float64(n)
		for i := 0; i < n; i++ {
			C.Set(i, j, C.At(i, j)-m)
		}
	}
	return C
}

// Procrustes aligns Y onto ref (both n x p) by a translation, an orthogonal map (rotation
// and/or reflection) and, when scale is true, a uniform scaling:
//
//	aligned = s (Y - 1 mean(Y)) R + 1 mean(ref)
//
// with R (p x p, orthogonal) and s minimising ||aligned - ref||_F: R = U V^T from the SVD
// U S V^T of (Y - mean(Y))^T (ref - mean(ref)), s = trace(S) / ||Y - mean(Y)||_F^2 (s = 1
// when scale is false). If ref = c Y Q + 1 b^T for an orthogonal Q and c > 0, then
// aligned = ref up to round-off and s = c (with scale); R = Q when the centred Y has full
// column rank p (otherwise R is one of the maps that agree on Y's column space, and maps
// other points' components outside it arbitrarily). It panics if the shapes differ.
func Procrustes(ref, Y *mat.Dense, scale bool) (aligned, R *mat.Dense, s float64) {
	n, p := ref.Dims()
	if ny, py := Y.Dims(); ny != n || py != p {
		panic("bench: Procrustes of matrices of different shapes")
	}
	refMean := colMeans(ref)
	Rc, Yc := Centered(ref), Centered(Y)
	var M mat.Dense
	M.Mul(Yc.T(), Rc)
	var svd mat.SVD
	if !svd.Factorize(&M, mat.SVDFull) {
		panic("bench: Procrustes SVD did not converge")
	}
	var U, V mat.Dense
	svd.UTo(&U)
	svd.VTo(&V)
	R = mat.NewDense(p, p, nil)
	R.Mul(&U, V.T())
	s = 1
	if scale {
		ny := mat.Norm(Yc, 2)
		if ny == 0 {
			s = 0
		} else {
			var tr float64
			for _, v := range svd.Values(nil) {
				tr += v
			}
			s = tr / (ny * ny)
		}
	}
	aligned = mat.NewDense(n, p, nil)
	aligned.Mul(Yc, R)
	aligned.Scale(s, aligned)
	for i := 0; i < n; i++ {
		row := aligned.RawRowView(i)
		for j := range row {
			row[j] += refMean[j]
		}
	}
	return aligned, R, s
}

func colMeans(A mat.Matrix) []float64 {
	n, p := A.Dims()
	m := make([]float64, p)
	for j := 0; j < p; j++ {
		for i := 0; i < n; i++ {
			m[j] += A.At(i, j)
		}
		m[j] /= float64(n)
	}
	return m
}

// ProcrustesDisparity returns the Procrustes disparity of A and B (both n rows), as
// scipy.spatial.procrustes defines it: both matrices are centred and scaled to unit Frobenius
// norm, B is rotated/reflected and scaled optimally onto A, and the disparity is the sum of
// squared differences that remain, in [0, 1] (0: same shape; it equals
// 1 - (sum of singular values of A^T B)^2 for the normalised A, B, and is symmetric in A and
// B). A matrix with fewer columns is padded with zero columns. Unlike scipy, a matrix whose
// rows are all equal (zero norm after centring) does not fail: the disparity is then 1. It
// panics if the row counts differ.
func ProcrustesDisparity(A, B *mat.Dense) float64 {
	n, pa := A.Dims()
	nb, pb := B.Dims()
	if nb != n {
		panic("bench: ProcrustesDisparity of matrices with different numbers of rows")
	}
	p := max(pa, pb)
	norm := func(M *mat.Dense, pm int) (*mat.Dense, bool) {
		C := Centered(M)
		f := mat.Norm(C, 2)
		if f == 0 {
			return nil, false
		}
		C.Scale(1/f, C)
		if pm == p {
			return C, true
		}
		P := mat.NewDense(n, p, nil)
		P.Slice(0, n, 0, pm).(*mat.Dense).Copy(C)
		return P, true
	}
	An, okA := norm(A, pa)
	Bn, okB := norm(B, pb)
	if !okA || !okB {
		return 1
	}
	aligned, _, _ := Procrustes(An, Bn, true)
	var d float64
	for i := 0; i < n; i++ {
		ra, rb := An.RawRowView(i), aligned.RawRowView(i)
		for j := range ra {
			e := ra[j] - rb[j]
			d += e * e
		}
	}
	return d
}

// MaxPrincipalAngleSine returns the sine of the largest principal angle between the column
// spaces of A (n x p) and B (n x q): 0 when one space contains the other (for p = q: the
// same space, whatever the bases), 1 when some direction of the smaller space is orthogonal
// to the larger one. It orthonormalises both with Householder QR and returns the largest
// singular value of (I - Qa Qa^T) Qb, Qb the basis of the space with fewer columns (accurate
// for small angles, unlike 1 - cos^2). Columns are not centred: pass Centered(A) to compare
// affine spans of centred data. It returns NaN when either matrix has numerically dependent
// columns (|R_jj| <= max(n, p) eps max|R_jj|) and panics if the row counts differ or a
// matrix has more columns than rows.
func MaxPrincipalAngleSine(A, B *mat.Dense) float64 {
	n, _ := A.Dims()
	if nb, _ := B.Dims(); nb != n {
		panic("bench: MaxPrincipalAngleSine of matrices with different numbers of rows")
	}
	Qa, ok := thinQ(A)
	if !ok {
		return math.NaN()
	}
	Qb, ok := thinQ(B)
	if !ok {
		return math.NaN()
	}
	_, pa := Qa.Dims()
	_, pb := Qb.Dims()
	if pb > pa {
		Qa, Qb = Qb, Qa // Qb spans the space with fewer columns
	}
	var C, P mat.Dense
	C.Mul(Qa.T(), Qb)
	P.Mul(Qa, &C)
	P.Sub(Qb, &P)
	var svd mat.SVD
	if !svd.Factorize(&P, mat.SVDNone) {
		panic("bench: MaxPrincipalAngleSine SVD did not converge")
	}
	s := svd.Values(nil)
	if len(s) == 0 {
		return 0
	}
	return math.Min(1, s[0])
}

// thinQ returns the n x p orthonormal factor of the Householder QR of A (n >= p), and false
// when A's columns are numerically dependent.
func thinQ(A *mat.Dense) (*mat.Dense, bool) {
	n, p := A.Dims()
	if p > n {
		panic("bench: MaxPrincipalAngleSine of a matrix with more columns than rows")
	}
	Q := mat.DenseCopyOf(A)
	if p == 0 {
		return Q, true
	}
	g := Q.RawMatrix()
	a := blas64.General{Rows: g.Rows, Cols: g.Cols, Stride: g.Stride, Data: g.Data}
	tau := make([]float64, p)
	work := make([]float64, 1)
	lapack64.Geqrf(a, tau, work, -1)
	work = make([]float64, max(int(work[0]), p))
	lapack64.Geqrf(a, tau, work, len(work))
	var dmax float64
	for j := 0; j < p; j++ {
		dmax = math.Max(dmax, math.Abs(g.Data[j*g.Stride+j]))
	}
	tol := float64(max(n, p)) * 0x1p-52 * dmax
	for j := 0; j < p; j++ {
		if d := math.Abs(g.Data[j*g.Stride+j]); !(d > tol) {
			return nil, false
		}
	}
	lapack64.Orgqr(a, tau, work, -1)
	if int(work[0]) > len(work) {
		work = make([]float64, int(work[0]))
	}
	lapack64.Orgqr(a, tau, work, len(work))
	return Q, true
}

// ReconstructionCost returns the LLE reconstruction error of the embedding Y (n x p) under
// the weights w with neighbours nbr (both n*k, row i at [i*k, (i+1)*k), the layout of
// engine.Model.Neighbors and Weights): the objective of the paper's linear embedding,
// Eq. (37),
//
//	sum_i || y_i - sum_j w_ij y_{nbr_ij} ||^2 ,
//
// with w_ij zero for the non-neighbours (Eq. (38)). The sum is computed in fixed chunks in
// parallel, so the result does not depend on the number of CPUs. It returns an error, and
// NaN, when a neighbour index is outside [0, n) (the neighbours are data: a model read from
// disk may hold any index), and panics if k < 1 or the lengths do not match n*k.
func ReconstructionCost(Y *mat.Dense, nbr []int32, w []float64, k int) (float64, error) {
	return reconstructionCost(Y, nbr, w, k, 0)
}

// reconstructionCost is ReconstructionCost on workers goroutines (<= 0: GOMAXPROCS); the
// chunks' partial sums are added in chunk order, so the result does not depend on workers.
func reconstructionCost(Y *mat.Dense, nbr []int32, w []float64, k, workers int) (float64, error) {
	n, p := Y.Dims()
	if k < 1 || len(nbr) != n*k || len(w) != n*k {
		panic("bench: ReconstructionCost needs k >= 1 and n*k neighbours and weights")
	}
	ys := rawRows(Y)
	const chunk = 4096
	part := make([]float64, parallel.NumChunks(n, chunk))
	workers = parallel.Workers(workers)
	scratch := make([][]float64, workers) // one residual row per worker, allocated on first use
	err := parallel.Chunks(context.Background(), n, chunk, workers, func(_ context.Context, wk, c, lo, hi int) error {
		r := scratch[wk]
		if r == nil {
			r = make([]float64, p)
			scratch[wk] = r
		}
		var sum float64
		for i := lo; i < hi; i++ {
			copy(r, ys.row(i))
			for t := i * k; t < (i+1)*k; t++ {
				j := int(nbr[t])
				if j < 0 || j >= n {
					return fmt.Errorf("bench: neighbour %d of point %d is out of range [0, %d)", j, i, n)
				}
				wt := w[t]
				for d, v := range ys.row(j) {
					r[d] -= wt * v
				}
			}
			for _, v := range r {
				sum += v * v
			}
		}
		part[c] = sum
		return nil
	})
	if err != nil {
		return math.NaN(), err
	}
	var total float64
	for _, v := range part {
		total += v
	}
	return total, nil
}
