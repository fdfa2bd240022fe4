package sparse

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"gonum.org/v1/gonum/mat"

	"glle/internal/latency"
	"glle/kernels"
)

// nonsymCSR is a square matrix A with a symmetric pattern: val holds A[i][j] and valT holds
// A[j][i] for each stored entry (i, j) of the full pattern.
type nonsymCSR struct {
	pat   *testCSR // both triangles; pat.val = val
	valT  []float64
	dense []float64 // A, row-major
	n     int
}

// randomNonsym returns a random matrix with the pattern of randomSPD (both triangles) and
// independent values in the two triangles, made diagonally dominant by rows and by columns so
// that LU without pivoting is stable.
func randomNonsym(rng *rand.Rand, n, deg int) *nonsymCSR {
	p := randomSPD(rng, n, deg, true)
	d := make([]float64, n*n)
	for i := 0; i < n; i++ {
		for q := p.rowPtr[i]; q < p.rowPtr[i+1]; q++ {
			if j := p.colIdx[q]; j != i {
				d[i*n+j] = rng.Float64()*2 - 1
			}
		}
	}
	for i := 0; i < n; i++ {
		s := 1.0
		for j := 0; j < n; j++ {
			s += math.Abs(d[i*n+j]) + math.Abs(d[j*n+i])
		}
		if rng.IntN(2) == 0 {
			s = -s // negative pivots are fine
		}
		d[i*n+i] = s
	}
	a := &nonsymCSR{pat: p, valT: make([]float64, len(p.val)), dense: d, n: n}
	// randomSPD may store a pair twice (the factorization sums duplicates): the first copy
	// carries the value, the others zero.
	seen := make(map[[2]int]bool)
	for i := 0; i < n; i++ {
		for q := p.rowPtr[i]; q < p.rowPtr[i+1]; q++ {
			j := p.colIdx[q]
			if seen[[2]int{i, j}] {
				p.val[q], a.valT[q] = 0, 0
				continue
			}
			seen[[2]int{i, j}] = true
			p.val[q] = d[i*n+j]
			a.valT[q] = d[j*n+i]
		}
	}
	return a
}

// residual returns ||op(A) x - b||_inf / (||A||_inf ||x||_inf), op(A) = A or A^T.
func (a *nonsymCSR) residual(x, b []float64, trans bool) float64 {
	n := a.n
	num, xn, an := 0.0, 0.0, 0.0
	for i := 0; i < n; i++ {
		s, rs := -b[i], 0.0
		for j := 0; j < n; j++ {
			v := a.dense[i*n+j]
			if trans {
				v = a.dense[j*n+i]
			}
			s += v * x[j]
			rs += math.Abs(v)
		}
		num = math.Max(num, math.Abs(s))
		xn = math.Max(xn, math.Abs(x[i]))
		an = math.Max(an, rs)
	}
	return num / (an * xn)
}

const eps = 0x1p-52

func luOrFatal(t *testing.T, a *nonsymCSR, opts SymbolicOptions) *LUFactor {
	t.Helper()
	s, err := Analyze(context.Background(), a.n, a.pat.rowPtr, a.pat.colIdx, opts)
	if err != nil {
		t.Fatalf("Analyze: %v", err)
	}
	f := NewLUFactor(s, a.pat.rowPtr, a.pat.colIdx)
	if err := f.Factorize(context.Background(), a.pat.val, a.valT, false); err != nil {
		t.Fatalf("Factorize: %v", err)
	}
	return f
}

// filledB returns B's pattern for the graph nb with the weights w filled in.
func filledB(t *testing.T, n, k int, nb []int32, w []float64, workers int) *BPattern {
	t.Helper()
	bp, err := NewBPattern(context.Background(), n, k, nb, workers)
	if err != nil {
		t.Fatal(err)
	}
	if err := bp.Fill(context.Background(), w, workers); err != nil {
		t.Fatal(err)
	}
	return bp
}

// gramLU returns B's pattern (filledB) and the analysed GramLU operator over it.
func gramLU(t *testing.T, n, k int, nb []int32, w []float64, workers int) (*BPattern, *GramLU) {
	t.Helper()
	bp := filledB(t, n, k, nb, w, workers)
	g, err := NewGramLU(context.Background(), bp, SymbolicOptions{Workers: workers})
	if err != nil {
		t.Fatal(err)
	}
	return bp, g
}

func TestLUFactorRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 22))
	// Sizes around the Go-kernel, panel-block and solve-kernel edges (luWholePanel 4,
	// panelBlock 96, solveBLASWidth 128) and dense-ish, as TestFactorRandom.
	sizes := []struct{ n, deg int }{
		{1, 0}, {2, 2}, {3, 2}, {4, 4}, {5, 4}, {8, 8}, {17, 6}, {50, 3}, {95, 94}, {96, 95}, {97, 96},
		{127, 126}, {128, 127}, {130, 129}, {200, 8}, {300, 40}, {300, 299}, {1000, 6},
	}
	for _, sz := range sizes {
		a := randomNonsym(rng, sz.n, sz.deg)
		for _, o := range allOrderings {
			for _, workers := range []int{1, 2} {
				name := fmt.Sprintf("n=%d/deg=%d/%v/w=%d", sz.n, sz.deg, o, workers)
				f := luOrFatal(t, a, SymbolicOptions{Ordering: o, Workers: workers})
				for _, trans := range []bool{false, true} {
					b := randVec(rng, a.n)
					x := make([]float64, a.n)
					if trans {
						f.SolveT(x, b)
					} else {
						f.Solve(x, b)
					}
					// Diagonally dominant (condition number below ~10): a backward-stable
					// LU leaves a residual of a small multiple of n eps.
					if r := a.residual(x, b, trans); r > residualTol {
						t.Fatalf("%s/trans=%v: residual %g", name, trans, r)
					}
					if a.n <= 300 {
						var lu mat.LU
						lu.Factorize(mat.NewDense(a.n, a.n, a.dense))
						var want mat.VecDense
						if err := lu.SolveVecTo(&want, trans, mat.NewVecDense(a.n, append([]float64(nil), b...))); err != nil {
							t.Fatal(err)
						}
						xn := mat.Norm(&want, math.Inf(1))
						for i := range x {
							// condition number ~10: 1e-12 relative is loose
							if d := math.Abs(x[i] - want.AtVec(i)); d > 1e-12*xn {
								t.Fatalf("%s/trans=%v: x[%d] = %g, dense LU %g", name, trans, i, x[i], want.AtVec(i))
							}
						}
					}
				}
			}
		}
	}
}

func TestLUWorkersAgree(t *testing.T) {
	rng := rand.New(rand.NewPCG(23, 24))
	_, nb, w := knnWeights(rng, 6000, 10, 0.15)
	var ref []float64
	// The last runs split every step of the top supernodes by rows (parMinEntries 1), which
	// the defaults do only above n ~ 50k.
	defer func(v int) { parMinEntries = v }(parMinEntries)
	for run, workers := range []int{1, 2, 3, 7, 2, 3} {
		if run >= 4 {
			parMinEntries = 1
		}
		_, g := gramLU(t, 6000, 10, nb, w, workers)
		if len(g.sym.sched.top) == 0 {
			t.Fatalf("workers=%d: no tree split", workers)
		}
		if err := g.SetShift(0); err != nil {
			t.Fatal(err)
		}
		x := centred(randVec(rand.New(rand.NewPCG(1, 2)), 6000))
		y := make([]float64, 6000)
		g.Apply(y, x)
		if ref == nil {
			ref = y
			continue
		}
		// The schedule and the solve plan do not depend on the worker count: same bits.
		for i := range y {
			if y[i] != ref[i] {
				t.Fatalf("workers=%d: M^+ x differs at %d: %g vs %g", workers, i, y[i], ref[i])
			}
		}
	}
}

// knnWeights returns n random points in the unit square, their k nearest neighbours and random
// weights summing to one per point, a fraction neg of them negative before the normalisation.
func knnWeights(rng *rand.Rand, n, k int, neg float64) ([]float64, []int32, []float64) {
	pts := make([]float64, 2*n)
	for i := range pts {
		pts[i] = rng.Float64()
	}
	nb := knnGrid(pts, n, k)
	w := make([]float64, n*k)
	for i := 0; i < n; i++ {
		s := 0.0
		for j := 0; j < k; j++ {
			w[i*k+j] = rng.Float64() - neg
			s += w[i*k+j]
		}
		for j := 0; j < k; j++ {
			w[i*k+j] /= s
		}
	}
	return pts, nb, w
}

// relErr returns ||got - want|| / ||want||.
func relErr(got, want []float64) float64 {
	num, den := 0.0, 0.0
	for i := range got {
		num += (got[i] - want[i]) * (got[i] - want[i])
		den += want[i] * want[i]
	}
	return math.Sqrt(num / den)
}

func centred(x []float64) []float64 {
	m := 0.0
	for _, v := range x {
		m += v
	}
	m /= float64(len(x))
	for i := range x {
		x[i] -= m
	}
	return x
}

// denseM returns M = (I - W)^T (I - W) densely (point order).
func denseMOf(n, k int, nb []int32, w []float64) []float64 {
	b := make([]float64, n*n)
	for i := 0; i < n; i++ {
		b[i*n+i] = 1
		for j := 0; j < k; j++ {
			b[i*n+int(nb[i*k+j])] -= w[i*k+j]
		}
	}
	m := mat.NewDense(n, n, nil)
	bd := mat.NewDense(n, n, b)
	m.Mul(bd.T(), bd)
	return m.RawMatrix().Data
}

func TestGramLUPseudoInverse(t *testing.T) {
	rng := rand.New(rand.NewPCG(25, 26))
	for _, c := range []struct {
		n   int
		neg float64
	}{{40, 0}, {300, 0.15}, {500, 0.3}} {
		n, k := c.n, 10
		_, nb, w := knnWeights(rng, n, k, c.neg)
		bp, g := gramLU(t, n, k, nb, w, 2)
		if err := g.SetShift(0); err != nil {
			t.Fatal(err)
		}
		// B is singular: its last pivot is rounding noise (|B| entries are O(1)).
		if lp := g.Factor().LastPivot(); math.Abs(lp) > 1e-10 {
			t.Fatalf("n=%d: last pivot %g, want ~0", n, lp)
		}
		// Dense pseudo-inverse of M in the internal order.
		md := denseMOf(n, k, nb, w)
		var es mat.EigenSym
		if !es.Factorize(mat.NewSymDense(n, md), true) {
			t.Fatal("dense eigendecomposition failed")
		}
		vals := es.Values(nil)
		var vecs mat.Dense
		es.VectorsTo(&vecs)
		x := centred(randVec(rng, n))
		want := make([]float64, n)
		for j := 1; j < n; j++ { // vals[0] = 0 belongs to the constant vector
			col := mat.Col(nil, j, &vecs)
			s := 0.0
			for i := range col {
				s += col[i] * x[i]
			}
			for i := range col {
				want[i] += s / vals[j] * col[i]
			}
		}
		xi, yi, y := make([]float64, n), make([]float64, n), make([]float64, n)
		bp.ToInternal(xi, x)
		// The first application after a factorization computes the left null vector u beside
		// x (two right-hand sides), the next ones solve x alone: both must give M^+ x.
		for apply := 0; apply < 2; apply++ {
			g.Apply(yi, xi)
			bp.FromInternal(y, yi)
			// The dense oracle's components along the small eigenvalues carry relative errors of
			// about eps lambda_n / lambda_2 (up to ~1e-7 here); GramLU's own error is far smaller.
			tol := 1e-10 + 100*eps*vals[n-1]/vals[1]
			if r := relErr(y, want); r > tol {
				t.Fatalf("n=%d, application %d: ||Apply(x) - M^+ x|| / ||M^+ x|| = %g > %g (lambda_2 %g)", n, apply, r, tol, vals[1])
			}
		}
	}
}

func TestLUPivotError(t *testing.T) {
	ctx := context.Background()
	// A = [[1, 2], [0.5, 1]] in the natural order: the second pivot is 1 - 2*0.5 = 0.
	a := csrFromTriplets(2, []int{0, 1, 1}, []int{0, 0, 1}, []float64{1, 0.5, 1}, true)
	valT := []float64{1, 2, 2, 1} // A^T's values at (0,0), (0,1), (1,0), (1,1)
	a.val = []float64{1, 2, 0.5, 1}
	s, err := Analyze(ctx, 2, a.rowPtr, a.colIdx, SymbolicOptions{Ordering: OrderingNatural})
	if err != nil {
		t.Fatal(err)
	}
	f := NewLUFactor(s, a.rowPtr, a.colIdx)
	err = f.Factorize(ctx, a.val, valT, false)
	var pe *PivotError
	if !errors.As(err, &pe) || pe.Column != 1 || pe.Pivot != 0 {
		t.Fatalf("got %v, want a PivotError at column 1 with pivot 0", err)
	}
	// The singular last pivot is what singularLast replaces: no error, the pivot is recorded.
	if err := f.Factorize(ctx, a.val, valT, true); err != nil {
		t.Fatal(err)
	}
	if f.LastPivot() != 0 || f.MinPivot() != 1 {
		t.Fatalf("last pivot %g, min pivot %g; want 0 and 1", f.LastPivot(), f.MinPivot())
	}
	// A zero first pivot fails whatever singularLast says; the factor recovers afterwards.
	a.val[0], valT[0] = 0, 0
	if err := f.Factorize(ctx, a.val, valT, true); !errors.As(err, &pe) || pe.Column != 0 {
		t.Fatalf("got %v, want a PivotError at column 0", err)
	}
	a.val[0], valT[0] = 4, 4
	if err := f.Factorize(ctx, a.val, valT, false); err != nil {
		t.Fatal(err)
	}
	x := make([]float64, 2)
	f.Solve(x, []float64{4, 1.5}) // [[4, 2], [0.5, 1]] x = (4, 1.5): x = (1/3, 4/3)
	// A 2 x 2 solve with condition number ~5: a handful of roundings of O(1) values, each at
	// most eps ~ 2.2e-16.
	if math.Abs(x[0]-1.0/3) > 1e-15 || math.Abs(x[1]-4.0/3) > 1e-15 {
		t.Fatalf("x = %v, want [1/3 4/3]", x)
	}
}

func TestLUCancelledContext(t *testing.T) {
	rng := rand.New(rand.NewPCG(27, 28))
	_, nb, w := knnWeights(rng, 20000, 10, 0)
	_, g := gramLU(t, 20000, 10, nb, w, 2)
	ctx, cancel := context.WithCancel(context.Background())
	g.SetContext(ctx)
	cancel()
	if err := g.SetShift(0); !errors.Is(err, context.Canceled) {
		t.Fatalf("got %v, want context.Canceled", err)
	}
	if err := g.SetShift(1e-3); err == nil {
		t.Fatal("a nonzero shift was accepted")
	}
}

// TestGramLUEigenpairs compares the eigenpairs found through GramLU with those of the Cholesky
// shift-invert solver and, for small n, with dense LAPACK.
func TestGramLUEigenpairs(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		n   int
		neg float64
	}{{200, 0}, {2000, 0.15}, {30000, 0.1}} {
		rng := rand.New(rand.NewPCG(uint64(c.n), 29))
		n, k := c.n, 10
		_, nb, w := knnWeights(rng, n, k, c.neg)
		bp := filledB(t, n, k, nb, w, 2)
		mp, err := NewMPatternLocal(ctx, n, k, nb, 2)
		if err != nil {
			t.Fatal(err)
		}
		if err := mp.Fill(ctx, w, 2); err != nil {
			t.Fatal(err)
		}
		g, err := NewGramLU(ctx, bp, SymbolicOptions{Workers: 2})
		if err != nil {
			t.Fatal(err)
		}
		one := make([]float64, n)
		for i := range one {
			one[i] = 1
		}
		opts := EigOptions{NEV: 3, Tol: 1e-10, Deflate: [][]float64{one}}
		res, err := NewLanczos(n).SolveAt(ctx, bp, g, 0, opts)
		if err != nil {
			t.Fatal(err)
		}
		normM := mp.NormInf()
		// The same row sums of |M| (~30 entries, each a sum of <= 2k+1 products) from B's
		// contributions and from M's CSR, in other orders: ~100 eps relative, below 1e-13.
		if math.Abs(res.NormA-normM) > 1e-12*normM {
			t.Fatalf("n=%d: NormInf %g, M's %g", n, res.NormA, normM)
		}
		// True residuals with M's own CSR (the same internal order).
		r := make([]float64, n)
		for j, u := range res.Vectors {
			mp.MulVec(r, u)
			s := 0.0
			for i := range r {
				d := r[i] - res.Values[j]*u[i]
				s += d * d
			}
			// The requested Tol 1e-10 ||M||, plus the rounding of this recomputation with M's CSR
			// instead of B^T B (~30 eps ||M||, below 1e-14 ||M||).
			if math.Sqrt(s) > (1e-10+1e-14)*normM {
				t.Fatalf("n=%d: ||M u_%d - lambda u_%d|| = %g > 1e-10 ||M||", n, j, j, math.Sqrt(s))
			}
		}
		op, err := NewShiftInvertPattern(ctx, mp, SymbolicOptions{Workers: 2})
		if err != nil {
			t.Fatal(err)
		}
		ref, err := NewEigensolver(mp.Matrix(), op).Smallest(ctx, opts)
		if err != nil {
			t.Fatal(err)
		}
		for j := range res.Values {
			// Both are accurate to ~||M|| eps / gap relative; 1e-6 covers the Cholesky side.
			if d := math.Abs(res.Values[j] - ref.Values[j]); d > 1e-6*ref.Values[j] {
				t.Fatalf("n=%d: eigenvalue %d: LU %g, Cholesky %g", n, j, res.Values[j], ref.Values[j])
			}
		}
		// Davis-Kahan bounds each subspace's sine by residual / gap, Tol ||M|| / (lambda_4 -
		// lambda_3) ~ 0.1 at n = 30k: no use. Both runs converge to nearly the same Ritz vectors
		// (measured sines <= 3e-10, residuals equal to 3 digits): 1e-6 is an empirical margin.
		if s := maxSine(res.Vectors, ref.Vectors); s > 1e-6 {
			t.Fatalf("n=%d: largest principal-angle sine %g between the LU and Cholesky subspaces", n, s)
		}
	}
}

// TestBPattern checks B's pattern against a dense oracle, MulVec and NormInf against M's CSR
// (the same breadth-first order), the vector maps and the fill's error.
func TestBPattern(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		n, k    int
		neg     float64
		uniform bool
	}{{12, 3, 0.2, false}, {500, 10, 0.15, false}, {6000, 7, 0, true},
		// K large against n, every row alike: more than n/8 candidates, so every row is
		// summed on the workers (normAll), each with about n K contributions to at most n
		// columns; with uneven weights a few candidates go through rowSum.
		{300, 120, 0, true}, {300, 120, 0.1, false}} {
		rng := rand.New(rand.NewPCG(uint64(c.n), 31))
		n, k := c.n, c.k
		_, nb, w := knnWeights(rng, n, k, c.neg)
		if c.uniform { // every row of M alike: NormInf's bounds cannot prune
			for i := range w {
				w[i] = 1 / float64(k)
			}
		}
		for _, workers := range []int{1, 3} {
			bp := filledB(t, n, k, nb, w, workers)
			mp, err := NewMPatternLocal(ctx, n, k, nb, workers)
			if err != nil {
				t.Fatal(err)
			}
			if err := mp.Fill(ctx, w, workers); err != nil {
				t.Fatal(err)
			}
			if bp.Components() != mp.Components() {
				t.Fatalf("components %d, M's pattern %d", bp.Components(), mp.Components())
			}
			if n > 500 {
				goto products
			}
			{
				// Dense B in the internal order (row r is point order[r]).
				bd := make([]float64, n*n)
				for r, i := range bp.order {
					bd[r*n+r] = 1
					for j := 0; j < k; j++ {
						bd[r*n+int(bp.label[nb[int(i)*k+j]])] -= w[int(i)*k+j]
					}
				}
				for a := 0; a < n; a++ {
					cols := bp.colIdx[bp.rowPtr[a]:bp.rowPtr[a+1]]
					var want []int32
					for c := 0; c < n; c++ {
						if c == a || bd[a*n+c] != 0 || bd[c*n+a] != 0 {
							want = append(want, int32(c))
						}
					}
					if fmt.Sprint(cols) != fmt.Sprint(want) {
						t.Fatalf("row %d: columns %v, want %v", a, cols, want)
					}
					for q, cc := range cols {
						e := bp.rowPtr[a] + q
						if bp.val[e] != bd[a*n+int(cc)] || bp.valT[e] != bd[int(cc)*n+a] {
							t.Fatalf("entry (%d, %d): %g, %g; want %g, %g", a, cc, bp.val[e], bp.valT[e], bd[a*n+int(cc)], bd[int(cc)*n+a])
						}
					}
				}
			}
		products:
			x := randVec(rng, n)
			y1, y2 := make([]float64, n), make([]float64, n)
			bp.MulVec(y1, x)
			mp.MulVec(y2, x)
			for i := range y1 {
				// two summation orders of the same ~30 products of O(1) terms
				if math.Abs(y1[i]-y2[i]) > 1e-13*(1+math.Abs(y2[i])) {
					t.Fatalf("MulVec[%d] = %g, M's %g", i, y1[i], y2[i])
				}
			}
			// MulVecs: the same row sums in the same order for every vector.
			x2 := randVec(rng, n)
			z := [][]float64{make([]float64, n), make([]float64, n)}
			bp.MulVecs(z, [][]float64{x, x2})
			bp.MulVec(y2, x2)
			for i := range y1 {
				if z[0][i] != y1[i] || z[1][i] != y2[i] {
					t.Fatalf("MulVecs[%d] = %g, %g; MulVec %g, %g", i, z[0][i], z[1][i], y1[i], y2[i])
				}
			}
			// Row sums of |M| over ~30 entries, each entry a sum of <= 2k+1 O(1) products, in
			// two orders: ~50 eps relative.
			if got, want := bp.NormInf(), mp.NormInf(); math.Abs(got-want) > 1e-13*want {
				t.Fatalf("NormInf %g, M's %g", got, want)
			}
			// A refill with other weights (one row's weights ten times larger) must renew the norm.
			w2 := append([]float64(nil), w...)
			for j := 0; j < k; j++ {
				w2[(n/2)*k+j] *= 10
			}
			if err := bp.Fill(ctx, w2, workers); err != nil {
				t.Fatal(err)
			}
			if err := mp.Fill(ctx, w2, workers); err != nil {
				t.Fatal(err)
			}
			// As above: two summation orders of the same row sums.
			if got, want := bp.NormInf(), mp.NormInf(); math.Abs(got-want) > 1e-13*want {
				t.Fatalf("NormInf after a refill %g, M's %g", got, want)
			}
			if err := bp.Fill(ctx, w, workers); err != nil {
				t.Fatal(err)
			}
			if err := mp.Fill(ctx, w, workers); err != nil {
				t.Fatal(err)
			}
			back := make([]float64, n)
			bp.ToInternal(y1, x)
			bp.FromInternal(back, y1)
			mp.ToInternal(y2, x)
			for i := range x {
				if back[i] != x[i] || y1[i] != y2[i] {
					t.Fatalf("vector maps disagree at %d", i)
				}
			}
		}
	}
	_, nb, w := knnWeights(rand.New(rand.NewPCG(1, 1)), 50, 5, 0)
	bp, err := NewBPattern(ctx, 50, 5, nb, 2)
	if err != nil {
		t.Fatal(err)
	}
	for _, bad := range []float64{math.NaN(), math.Inf(1), math.Inf(-1)} {
		w2 := append([]float64(nil), w...)
		w2[17] = bad // a weight of point 3
		if err := bp.Fill(ctx, w2, 2); !errors.Is(err, ErrNonFinite) || !strings.Contains(err.Error(), "point 3:") {
			t.Fatalf("Fill with a weight %v: error %v, want ErrNonFinite naming point 3", bad, err)
		}
	}
	// Two points with a NaN weight, the smaller one relabelled after the other: the error names
	// the smaller (the caller's numbering) for any worker count.
	p1, p2 := -1, -1
	for i := 0; i < 50 && p1 < 0; i++ {
		for j := i + 1; j < 50; j++ {
			if bp.label[i] > bp.label[j] {
				p1, p2 = i, j
				break
			}
		}
	}
	w2 := append([]float64(nil), w...)
	w2[p1*5+1], w2[p2*5+4] = math.NaN(), math.NaN()
	for _, workers := range []int{1, 2, 3, 7} {
		bw, err := NewBPattern(ctx, 50, 5, nb, workers)
		if err != nil {
			t.Fatal(err)
		}
		want := fmt.Sprintf("point %d:", p1)
		if err := bw.Fill(ctx, w2, workers); !errors.Is(err, ErrNonFinite) || !strings.Contains(err.Error(), want) {
			t.Fatalf("workers=%d: Fill with NaN weights at points %d and %d (rows %d and %d): error %v, want one naming %q",
				workers, p1, p2, bw.label[p1], bw.label[p2], err, want)
		}
	}
	// Finite weights whose sum overflows (Fill checks each row's sum, then the row's entries).
	w2 = append(w2[:0], w...)
	w2[15], w2[16] = 1.5e308, 1.5e308
	if err := bp.Fill(ctx, w2, 2); err != nil {
		t.Fatalf("Fill rejected finite weights: %v", err)
	}
	if _, err := NewBPattern(ctx, 50, 5, nb[:10], 2); err == nil {
		t.Fatal("NewBPattern accepted a short neighbour list")
	}
}

// TestGramLUDeflatedLLE is TestSmallestDeflatedLLE for the LU path: the eigenpairs of M for
// real LLE weights on a Swiss roll, through GramLU, against the dense oracle (residual
// <= 1e-10 ||M||, eigenvalues to 1e-12 ||M||, principal-angle sines <= 1e-8 per cluster).
func TestGramLUDeflatedLLE(t *testing.T) {
	pr := getLLE(t)
	const nev = 4
	_, g := gramLU(t, lleN, lleK, pr.nbr, pr.w, 2)
	bp := g.b
	got, err := NewLanczos(lleN).SolveAt(context.Background(), bp, g, 0, EigOptions{NEV: nev, Deflate: [][]float64{pr.ones}})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d solves, residuals/||M|| %.3g, last pivot %.3g, smallest other pivot %.3g", got.OpApplies,
		scaled(got.Residuals, got.NormA), g.Factor().LastPivot(), g.Factor().MinPivot())
	for i, v := range got.Vectors { // internal (breadth-first) order -> the oracle's point order
		u := make([]float64, lleN)
		bp.FromInternal(u, v)
		got.Vectors[i] = u
	}
	compareWithDense(t, pr.dense, got, pr.ref, nev)
}

// TestExtendAddRuns checks the run-by-run extend-adds against the entry-by-entry definition
// (same bits: each entry receives one addition), on one worker and split across two, for child
// row sets with runs of every length, in the parent's columns, below them and across the edge.
func TestExtendAddRuns(t *testing.T) {
	defer func(v int) { parMinEntries = v }(parMinEntries)
	rng := rand.New(rand.NewPCG(51, 52))
	for rep := 0; rep < 40; rep++ {
		w, mu := 1+rng.IntN(20), rng.IntN(40)
		m := w + mu
		var rel []int32
		for r := 0; r < m; {
			if rng.IntN(3) == 0 {
				r += 1 + rng.IntN(4) // a gap
				continue
			}
			for l := 1 + rng.IntN(6); l > 0 && r < m; l-- {
				rel = append(rel, int32(r))
				r++
			}
		}
		mc := len(rel)
		gc := randVec(rng, mc*mc)
		pl0, pu0, g0 := randVec(rng, m*w), randVec(rng, m*w), randVec(rng, mu*mu)
		wantL, wantU, wantG := append([]float64(nil), pl0...), append([]float64(nil), pu0...), append([]float64(nil), g0...)
		for i := 0; i < mc; i++ {
			for j := 0; j < mc; j++ {
				ri, rj, v := int(rel[i]), int(rel[j]), gc[i*mc+j]
				switch {
				case ri >= w && rj >= w:
					wantG[(ri-w)*mu+rj-w] += v
				case rj <= ri && rj < w:
					wantL[ri*w+rj] += v
					if rj == ri {
						wantU[rj*w+ri] += v
					}
				case ri < w: // rj > ri: above the diagonal, in the parent's column ri
					wantU[rj*w+ri] += v
				}
			}
		}
		for _, split := range []bool{false, true} {
			nw := 1
			parMinEntries = 1 << 16
			if split {
				nw, parMinEntries = 2, 1
			}
			pl, pu, g := append([]float64(nil), pl0...), append([]float64(nil), pu0...), append([]float64(nil), g0...)
			runs := make([]int32, 0, mc+1)
			extendAddFullPanel(nw, 2, pl, pu, w, gc, rel, runs)
			extendAddFullUpdate(nw, 2, g, w, mu, gc, rel, runs)
			for _, c := range []struct {
				name      string
				got, want []float64
			}{{"L panel", pl, wantL}, {"U panel", pu, wantU}, {"update", g, wantG}} {
				for i := range c.got {
					if math.Float64bits(c.got[i]) != math.Float64bits(c.want[i]) {
						t.Fatalf("rep %d (w=%d mu=%d rel=%v) split=%v: %s entry %d = %v, want %v", rep, w, mu, rel, split, c.name, i, c.got[i], c.want[i])
					}
				}
			}
		}
	}
}

// TestSplitSolveWorkersAgree checks the top supernodes' split steps (splitter) on a matrix
// whose top supernodes are large enough to split: M^+ x has the same bits for 1, 2 and 3
// workers, and with the helper goroutine absent (every part run by the caller).
func TestSplitSolveWorkersAgree(t *testing.T) {
	rng := rand.New(rand.NewPCG(25, 26))
	const n = 50000 // at 20000 the largest top block has 86 x 190 entries, below the split size
	_, nb, w := knnWeights(rng, n, 10, 0.15)
	x := centred(randVec(rand.New(rand.NewPCG(3, 4)), n))
	var ref []float64
	defer func() { splitNoHelper = false }()
	for run, workers := range []int{1, 2, 3, 2} {
		splitNoHelper = run == 3
		_, g := gramLU(t, n, 10, nb, w, workers)
		if err := g.SetShift(0); err != nil {
			t.Fatal(err)
		}
		if workers == 2 {
			h := newSplitter(kernels.Current(), g.y, make([]float64, 1), nil, 2)
			splits := 0
			for _, top := range g.sym.sched.top {
				if h.splits(g.sym, int(top)) {
					splits++
				}
			}
			h.stop()
			_, native := kernels.Current().(kernels.SupernodalSplitter)
			if native && splits == 0 {
				t.Fatalf("no top supernode splits; the test needs a larger matrix")
			}
		}
		y := make([]float64, n)
		g.Apply(y, x)
		if ref == nil {
			ref = y
			continue
		}
		for i := range y {
			if math.Float64bits(y[i]) != math.Float64bits(ref[i]) {
				t.Fatalf("workers=%d helper=%v: M^+ x differs at %d: %g vs %g", workers, !splitNoHelper, i, y[i], ref[i])
			}
		}
	}
}

// TestGramLUPivotErrorNamesPoint: B = I - W where a few mutual nearest neighbours i, j put
// their whole weight on each other (rows e_i - e_j and e_j - e_i): the second of the pair to be
// eliminated meets a zero pivot. The elimination stops above each failure, so the failures
// reported are those with no failing supernode below them; PivotError names the smallest of
// their columns in the caller's numbering (not B's breadth-first labels), for any worker count.
func TestGramLUPivotErrorNamesPoint(t *testing.T) {
	const n, k = 4000, 10
	pts, nb, w := knnWeights(rand.New(rand.NewPCG(71, 72)), n, k, 0.1)
	// Mutual nearest neighbours, one pair in each of five vertical strips of the unit square.
	var pairs [][2]int
	used := make([]bool, n)
	for strip := 0; strip < 5; strip++ {
		for i := 0; i < n; i++ {
			j := int(nb[i*k])
			if int(pts[2*i]*5) != strip || used[i] || used[j] || !slices.Contains(nb[j*k:j*k+k], int32(i)) {
				continue
			}
			pairs = append(pairs, [2]int{i, j})
			for _, p := range [2]int{i, j} {
				used[p] = true
				for _, c := range nb[p*k : p*k+k] {
					used[c] = true // keep the pairs apart
				}
			}
			break
		}
	}
	for _, p := range pairs {
		for s, i := range p {
			for q, c := range nb[i*k : i*k+k] {
				w[i*k+q] = 0
				if int(c) == p[1-s] {
					w[i*k+q] = 1
				}
			}
		}
	}
	want := -1
	for _, workers := range []int{1, 2, 3} {
		bp, g := gramLU(t, n, k, nb, w, workers)
		if want < 0 {
			want = expectedPivotFailure(t, g.sym, bp.order, bp.label, pairs)
		}
		err := g.SetShift(0)
		var pe *PivotError
		if !errors.As(err, &pe) || pe.Column != want || pe.Pivot != 0 {
			t.Fatalf("workers=%d: got %v, want a PivotError naming point %d with pivot 0 (B's label %d)", workers, err, want, bp.label[want])
		}
	}
}

// expectedPivotFailure returns the point a PivotError must name for the pairs of
// TestGramLUPivotErrorNamesPoint: each pair fails at its later-eliminated column, unless that
// is the last pivot (replaced) or a failure in a descendant supernode (or earlier in the same
// one) stops the elimination first; the smallest point over the failures left.
func expectedPivotFailure(t *testing.T, s *Symbolic, order, label []int32, pairs [][2]int) int {
	t.Helper()
	var cols []int // permuted columns of the failures
	for _, p := range pairs {
		c := max(int(s.iperm[label[p[0]]]), int(s.iperm[label[p[1]]]))
		if c != s.n-1 {
			cols = append(cols, c)
		}
	}
	below := func(c, d int) bool { // a failure at column d stops the elimination before c
		tc, td := s.sOf[c], s.sOf[d]
		if tc == td {
			return d < c
		}
		for td >= 0 {
			if td = s.sParent[td]; td == tc {
				return true
			}
		}
		return false
	}
	want, failures := math.MaxInt, 0
	for _, c := range cols {
		if !slices.ContainsFunc(cols, func(d int) bool { return d != c && below(c, d) }) {
			want = min(want, int(order[s.perm[c]]))
			failures++
		}
	}
	t.Logf("%d pairs: %d pivots fail, %d with no failure below; smallest point %d", len(pairs), len(cols), failures, want)
	if failures < 2 {
		t.Fatalf("%d independent pivot failures among %d pairs: the test needs two", failures, len(pairs))
	}
	return want
}

// TestBPatternNormCancel: with K close to n, the exact norm costs about n K^2 (27 s at
// n = 2000, K = 1999, sequential and beyond the reach of a context before session 31); Fill
// computes it under its context, so a deadline stops it. The bound on the latency is
// calibrated in this process: an uncancelled Fill of the same pattern takes full (about 0.75 s
// on two cores at n = 1000); the measured one gets a deadline a quarter of the way in, so a
// norm ignoring its context would run about 3 full / 4 past it, and Fill must return the
// deadline's error within latency.Limit of that (a third, at least 50 ms), in one of
// latency.Attempts calibrated attempts.
func TestBPatternNormCancel(t *testing.T) {
	const n, k = 1000, 999
	nb := make([]int32, 0, n*k) // the complete graph, uniform weights
	for i := 0; i < n; i++ {
		for c := 0; c < n; c++ {
			if c != i {
				nb = append(nb, int32(c))
			}
		}
	}
	w := make([]float64, n*k)
	for i := range w {
		w[i] = 1.0 / k
	}
	bp, err := NewBPattern(context.Background(), n, k, nb, 2)
	if err != nil {
		t.Fatal(err)
	}
	latency.Within(t, func(int) (time.Duration, time.Duration, string) {
		start := time.Now()
		if err := bp.Fill(context.Background(), w, 2); err != nil {
			t.Fatal(err)
		}
		full := time.Since(start)
		delay := full / 4
		limit := latency.Limit(t, full-delay)
		ctx, cancel := context.WithTimeout(context.Background(), delay)
		defer cancel()
		t0 := time.Now()
		err := bp.Fill(ctx, w, 2)
		el := time.Since(t0) - delay // from the deadline to Fill's return
		if err == nil && el < 0 {
			// Returned before the deadline: three quarters faster than the calibration (load
			// dropped between the runs); nothing to measure.
			t.Skipf("Fill returned before its %v deadline", delay)
		}
		if err != nil && !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("Fill with a %v deadline: %v %v past it, want the deadline's error", delay, err, el)
		}
		// nil: the norm ran to its end past the deadline, which passes only within the limit
		// (the measured run outpaced the calibration); an ignored deadline takes about three
		// quarters of full.
		return el, limit, fmt.Sprintf("Fill with a deadline %v in (uncancelled %v)", delay, full)
	})
}

// TestBPatternScratchAllocs: MulVec, MulVecs and NormInf (every row summed: normAll) keep
// their scratch in the pattern. On one worker parallel.For runs its function in place, and
// what is left is one closure per pass handed to it (it escapes through For's goroutine path):
// two for the products (B, then B^T), one for normAll.
func TestBPatternScratchAllocs(t *testing.T) {
	const n, k = 6000, 7 // n > normCandMax: uniform weights leave every row a candidate
	_, nb, w := knnWeights(rand.New(rand.NewPCG(81, 82)), n, k, 0)
	for i := range w {
		w[i] = 1.0 / k
	}
	bp := filledB(t, n, k, nb, w, 1)
	rng := rand.New(rand.NewPCG(83, 84))
	x := [][]float64{randVec(rng, n), randVec(rng, n), randVec(rng, n)}
	y := [][]float64{make([]float64, n), make([]float64, n), make([]float64, n)}
	for _, c := range []struct {
		name string
		max  float64
		f    func()
	}{
		{"MulVec", 2, func() { bp.MulVec(y[0], x[0]) }},
		{"MulVecs(3)", 2, func() { bp.MulVecs(y, x) }},
		{"NormInf", 1, func() { bp.normM = -1; bp.NormInf() }},
	} {
		c.f() // sizes the scratch
		if a := testing.AllocsPerRun(5, c.f); a > c.max {
			t.Errorf("%s: %v allocations per call, want at most %v", c.name, a, c.max)
		}
	}
}

// TestBPatternNormPathsAgree: NormInf's two paths, the candidate rows through rowSum and every
// row through normAll, sum each row in the same order, so they give the same bits and the
// choice between them (more than n/8 candidates) cannot change a tolerance. Before session 31
// rowSum summed in column order and 21 of 30 such patterns differed in the last bit.
func TestBPatternNormPathsAgree(t *testing.T) {
	ctx := context.Background()
	for trial := 0; trial < 30; trial++ {
		rng := rand.New(rand.NewPCG(uint64(trial), 77))
		n, k := 200+rng.IntN(400), 3+rng.IntN(12)
		_, nb, w := knnWeights(rng, n, k, 0.2)
		bp := filledB(t, n, k, nb, w, 2)
		got := bp.NormInf()
		all, err := bp.normAll(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if math.Float64bits(got) != math.Float64bits(all) {
			t.Fatalf("trial %d (n %d, k %d): NormInf %v, every row summed %v", trial, n, k, got, all)
		}
	}
}
