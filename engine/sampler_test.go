package engine

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"

	"glle/bench"
	"glle/kernels"
)

// rollForTest is a small Swiss roll (the recipe of the reference notes) for internal tests.
func rollForTest(n int, seed uint64) *mat.Dense {
	rng := rand.New(rand.NewPCG(seed, 99))
	x := mat.NewDense(n, 3, nil)
	for i := 0; i < n; i++ {
		t := 1.5 * math.Pi * (1 + 2*rng.Float64())
		x.Set(i, 0, t*math.Cos(t))
		x.Set(i, 1, 21*rng.Float64())
		x.Set(i, 2, t*math.Sin(t))
	}
	return x
}

// targetCov returns the covariance (k x k) of point i's draws at scale 1, from the model's
// closed forms (independent of the sampler code path).
func targetCov(m *Model, i int) []float64 {
	k := m.K
	c := make([]float64, k*k)
	switch m.Method {
	case EM, EMPaper:
		r := int(m.st.rank[i])
		basis := m.st.basis[i*k*m.st.rmax:]
		sig := m.Sigma[i]
		for a := 0; a < k; a++ {
			for b := 0; b < k; b++ {
				v := 0.0
				if a == b {
					v = 1
				}
				if m.Method == EM {
					v -= 1 / float64(k)
				} else {
					sig = math.Abs(m.Sigma[i])
				}
				for q := 0; q < r; q++ {
					v -= basis[q*k+a] * basis[q*k+b]
				}
				c[a*k+b] = sig * v
			}
		}
	case Direct:
		km1 := k - 1
		stride := km1 * k / 2
		L := mat.NewTriDense(km1, mat.Lower, nil)
		for a := 0; a < km1; a++ {
			for b := 0; b <= a; b++ {
				L.SetTri(a, b, m.st.chol[i*stride+a*(a+1)/2+b])
			}
		}
		var A, Ainv mat.Dense
		A.Mul(L, L.T())
		if err := Ainv.Inverse(&A); err != nil {
			panic(err)
		}
		// Gamma = Q A^{-1} Q^T with Q from kernels.Perp.
		q := mat.NewDense(k, km1, nil)
		z := make([]float64, km1)
		col := make([]float64, k)
		for j := 0; j < km1; j++ {
			for t := range z {
				z[t] = 0
			}
			z[j] = 1
			m.st.perp.FromPerp(col, z)
			for t := 0; t < k; t++ {
				q.Set(t, j, col[t])
			}
		}
		var t1, g mat.Dense
		t1.Mul(q, &Ainv)
		g.Mul(&t1, q.T())
		copy(c, g.RawMatrix().Data)
	case DirectPaper:
		sq := mat.NewDense(k, k, append([]float64(nil), m.st.sqrt[i*k*k:(i+1)*k*k]...))
		var g mat.Dense
		g.Mul(sq, sq)
		copy(c, g.RawMatrix().Data)
	}
	return c
}

// neighbourRows returns the k x c matrix whose row j is row nbr[j] of v (n x c, row-major),
// minus row i of v when offsets is set.
func neighbourRows(v []float64, c, i int, nbr []int32, offsets bool) *mat.Dense {
	out := mat.NewDense(len(nbr), c, nil)
	for j, nb := range nbr {
		for a := 0; a < c; a++ {
			x := v[int(nb)*c+a]
			if offsets {
				x -= v[i*c+a]
			}
			out.Set(j, a, x)
		}
	}
	return out
}

// helmert returns a k x (k-1) orthonormal basis of 1-perp (column j: j+1 entries 1, then
// -(j+1), all over sqrt((j+1)(j+2))), built independently of kernels.Perp; Q (Q^T A Q)^{-1} Q^T
// is the same for every orthonormal basis Q of 1-perp.
func helmert(k int) *mat.Dense {
	q := mat.NewDense(k, k-1, nil)
	for j := 0; j < k-1; j++ {
		f := 1 / math.Sqrt(float64((j+1)*(j+2)))
		for r := 0; r <= j; r++ {
			q.Set(r, j, f)
		}
		q.Set(j+1, j, -float64(j+1)*f)
	}
	return q
}

// invCond returns the inverse of the symmetric positive definite a (gonum's dense LU inverse)
// and its 2-norm condition number (from gonum's symmetric eigensolver).
func invCond(t *testing.T, a *mat.Dense) (*mat.Dense, float64) {
	t.Helper()
	r, _ := a.Dims()
	sym := mat.NewSymDense(r, nil)
	for i := 0; i < r; i++ {
		for j := i; j < r; j++ {
			sym.SetSym(i, j, (a.At(i, j)+a.At(j, i))/2)
		}
	}
	var es mat.EigenSym
	if !es.Factorize(sym, false) {
		t.Fatal("EigenSym failed")
	}
	ev := es.Values(nil) // ascending
	if !(ev[0] > 0) {
		t.Fatalf("matrix not positive definite: eigenvalues %v", ev)
	}
	var inv mat.Dense
	if err := inv.Inverse(a); err != nil {
		t.Fatal(err)
	}
	return &inv, ev[r-1] / ev[0]
}

// closedGammaDirect computes Gamma_i = Q (Q^T A_i Q)^{-1} Q^T of every point of a Direct model
// with A_i = G_i / s_x^2 + V_i^T V_i / s_y^2 + (R_i / s_x^2) I (math notes Section 4): from the
// data m.X, the LLE weights and the embedding, with the maximum-likelihood temperatures
// estimated here (their floor must not bind: the test fails if it would) and gonum's dense
// inverse. It returns Gamma_i, cond(Q^T A_i Q), s_x^2, s_y^2 and a rounding bound for each
// temperature relative to its value.
func closedGammaDirect(t *testing.T, m *Model) (gam [][]float64, cond []float64, sx2, sy2, tolX, tolY float64) {
	t.Helper()
	n, d, k, p := m.N, m.D, m.K, m.Dim
	x, y := m.X.RawMatrix().Data, m.Embedding.RawMatrix().Data
	Zs, Vs := make([]*mat.Dense, n), make([]*mat.Dense, n)
	var ox, oy float64
	// temp returns sum_c r_c^2 for r = M^T w (the residual of one point in one space) and
	// sum_c 2 |r_c| sum_j |w_j M_jc|, the first-order rounding of those squares divided by k u.
	temp := func(M *mat.Dense, w []float64) (sq, rnd float64) {
		_, c := M.Dims()
		for a := 0; a < c; a++ {
			r, abs := 0.0, 0.0
			for j, wj := range w {
				r += wj * M.At(j, a)
				abs += math.Abs(wj * M.At(j, a))
			}
			sq += r * r
			rnd += 2 * math.Abs(r) * abs
		}
		return sq, rnd
	}
	var rx, ry float64
	for i := 0; i < n; i++ {
		nbr := m.Neighbors[i*k : (i+1)*k]
		Zs[i], Vs[i] = neighbourRows(x, d, i, nbr, true), neighbourRows(y, p, i, nbr, true)
		w := m.Weights[i*k : (i+1)*k]
		a, b := temp(Zs[i], w)
		sx2, rx = sx2+a, rx+b
		a, b = temp(Vs[i], w)
		sy2, ry = sy2+a, ry+b
		fx, fy := mat.Norm(Zs[i], 2), mat.Norm(Vs[i], 2)
		ox += fx * fx
		oy += fy * fy
	}
	// Each residual is a sum with cancellation, rounded to about k u times the sum of its
	// terms' magnitudes; the squares' sum adds n c u. (The engine may sum in another order.)
	const u = 0x1p-53
	tolX = u * (float64(k)*rx/sx2 + float64(n*d))
	tolY = u * (float64(k)*ry/sy2 + float64(n*p))
	sx2 /= float64(n * d)
	sy2 /= float64(n * p)
	if sx2 <= tempFloor*ox/float64(n*k*d) || sy2 <= tempFloor*oy/float64(n*k*p) {
		t.Fatalf("temperature floor binds (s_x^2 %g, s_y^2 %g): the test data do not exercise the ML estimate", sx2, sy2)
	}
	Q := helmert(k)
	gam, cond = make([][]float64, n), make([]float64, n)
	for i := 0; i < n; i++ {
		var G, VV, A mat.Dense
		G.Mul(Zs[i], Zs[i].T())
		VV.Mul(Vs[i], Vs[i].T())
		R := m.Reg * mat.Trace(&G) // RegTrace (the default): R_i = reg tr(G_i)
		A.Scale(1/sx2, &G)
		VV.Scale(1/sy2, &VV)
		A.Add(&A, &VV)
		for j := 0; j < k; j++ {
			A.Set(j, j, A.At(j, j)+R/sx2)
		}
		var QA, B, QB, g mat.Dense
		QA.Mul(Q.T(), &A)
		B.Mul(&QA, Q)
		Binv, c := invCond(t, &B)
		QB.Mul(Q, Binv)
		g.Mul(&QB, Q.T())
		gam[i], cond[i] = g.RawMatrix().Data, c
	}
	return gam, cond, sx2, sy2, tolX, tolY
}

// closedGammaDirectPaper computes Gamma_i = (X_i^T X_i + Y_i^T Y_i + ridge I)^{-1} (paper
// Eq. (35)) of every point of a DirectPaper model: X_i (d x k) holds the raw coordinates of the
// neighbours, Y_i (p x k) their embedding coordinates, ridge is Settings.DirectRidge.
func closedGammaDirectPaper(t *testing.T, m *Model, ridge float64) (gam [][]float64, cond []float64) {
	t.Helper()
	n, d, k, p := m.N, m.D, m.K, m.Dim
	x, y := m.X.RawMatrix().Data, m.Embedding.RawMatrix().Data
	gam, cond = make([][]float64, n), make([]float64, n)
	for i := 0; i < n; i++ {
		nbr := m.Neighbors[i*k : (i+1)*k]
		Xt, Yt := neighbourRows(x, d, i, nbr, false), neighbourRows(y, p, i, nbr, false) // X_i^T, Y_i^T
		var A, YY mat.Dense
		A.Mul(Xt, Xt.T())
		YY.Mul(Yt, Yt.T())
		A.Add(&A, &YY)
		for j := 0; j < k; j++ {
			A.Set(j, j, A.At(j, j)+ridge)
		}
		g, c := invCond(t, &A)
		gam[i], cond[i] = g.RawMatrix().Data, c
	}
	return gam, cond
}

// TestGammaMatchesClosedForm: Model.Gamma equals the closed forms built in the test from the
// data (gonum dense inverses, a Helmert basis of 1-perp, temperatures estimated here) for every
// point, to a tolerance from the perturbation bound of a matrix inverse.
func TestGammaMatchesClosedForm(t *testing.T) {
	X := rollForTest(300, 8)
	const ridge = 1e-2
	for _, s := range []Settings{{Method: Direct, Solver: SolverDense}, {Method: DirectPaper, DirectRidge: ridge, Solver: SolverDense}} {
		m, err := Fit(context.Background(), X, s)
		if err != nil {
			t.Fatal(err)
		}
		k := m.K
		var want [][]float64
		var cond []float64
		if m.Method == Direct {
			var sx2, sy2, tolX, tolY float64
			want, cond, sx2, sy2, tolX, tolY = closedGammaDirect(t, m)
			// Twice the first-order rounding bound of both computations (tolX, tolY: 1.7e-13 and
			// 3.2e-13 here; the measured difference is 0, both sum in the same order).
			if math.Abs(m.Report.SX2/sx2-1) > 2*tolX || math.Abs(m.Report.SY2/sy2-1) > 2*tolY {
				t.Errorf("temperatures: reported s_x^2 %g, s_y^2 %g; closed form %g, %g (tolerances %.2g, %.2g)", m.Report.SX2, m.Report.SY2, sx2, sy2, 2*tolX, 2*tolY)
			}
		} else {
			want, cond = closedGammaDirectPaper(t, m, ridge)
		}
		g := make([]float64, k*k)
		worst, worstCond := 0.0, 0.0
		for i := 0; i < m.N; i++ {
			if !m.Gamma(i, g) {
				t.Fatalf("%v: Gamma not available", m.Method)
			}
			scale := 0.0
			for _, v := range want[i] {
				scale = math.Max(scale, math.Abs(v))
			}
			// Both sides invert the same matrix formed in another order: a backward error of
			// about k u per entry, amplified by at most cond (first-order bound for an inverse);
			// 8 covers the two factorizations and the products with Q. Measured: at most 2.4%
			// of the bound (direct), 0.75% (direct-paper).
			bound := 8 * float64(k) * 0x1p-53 * cond[i] * scale
			for j := range g {
				e := math.Abs(g[j] - want[i][j])
				if e > bound {
					t.Fatalf("%v point %d: Gamma[%d,%d] %.15g, closed form %.15g (cond %.3g, bound %.3g)", m.Method, i, j/k, j%k, g[j], want[i][j], cond[i], bound)
				}
				worst = math.Max(worst, e/bound)
			}
			worstCond = math.Max(worstCond, cond[i])
		}
		t.Logf("%v: worst error %.3g of the bound, largest cond %.3g", m.Method, worst, worstCond)
	}
}

func TestSamplerMoments(t *testing.T) {
	X := rollForTest(400, 1)
	for _, s := range []Settings{
		{Method: EM, Solver: SolverDense},
		{Method: Direct, Solver: SolverDense},
		{Method: EMPaper, Solver: SolverDense},
		{Method: DirectPaper, DirectRidge: 1e-3, Solver: SolverDense},
	} {
		m, err := Fit(context.Background(), X, s)
		if err != nil {
			t.Fatalf("%v: %v", s.Method, err)
		}
		k := m.K
		const G = 20000
		ws := newWork(k, max(m.D, m.Dim))
		for _, i := range []int{0, 137, 399} {
			T := targetCov(m, i)
			mean := make([]float64, k)
			cov := make([]float64, k*k)
			w := make([]float64, k)
			for g := 0; g < G; g++ {
				st := kernels.NewStream(42, g, i)
				m.drawPoint(ws, i, &st, 1, w)
				sum := 0.0
				for j := 0; j < k; j++ {
					d := w[j] - m.Weights[i*k+j]
					mean[j] += d
					sum += w[j]
					for l := 0; l < k; l++ {
						cov[j*k+l] += d * (w[l] - m.Weights[i*k+l])
					}
				}
				// w^LLE sums to 1 within k u and the noise (Pi xi, Q z) to 0 within k u |noise|:
				// a few 1e-15 (measured 1.6e-15); 1e-12 flags a draw that leaves the plane.
				if (m.Method == EM || m.Method == Direct) && math.Abs(sum-1) > 1e-12 {
					t.Fatalf("%v point %d: draw sums to %v, not 1", m.Method, i, sum)
				}
			}
			for j := 0; j < k; j++ {
				se := math.Sqrt(math.Max(T[j*k+j], 0) / G)
				// 5 standard errors (plus round-off) for the mean offset.
				if math.Abs(mean[j]/G) > 5*se+1e-15 {
					t.Fatalf("%v point %d: mean offset %g, standard error %g", m.Method, i, mean[j]/G, se)
				}
				for l := 0; l < k; l++ {
					c := cov[j*k+l] / G
					se := math.Sqrt((T[j*k+j]*T[l*k+l] + T[j*k+l]*T[j*k+l]) / G)
					// 1e-14 |T_jj|: the round-off of G accumulated products of draws
					// of scale sqrt(T_jj), relative to the diagonal (a few hundred ulps).
					if math.Abs(c-T[j*k+l]) > 5*se+1e-14*math.Abs(T[j*k+j]) {
						t.Fatalf("%v point %d: cov(%d,%d) %g, target %g, se %g", m.Method, i, j, l, c, T[j*k+l], se)
					}
				}
			}
		}
	}
}

func TestFibreEMReachesClosedForm(t *testing.T) {
	// k = 60 and 100 contract slowly ((k-4)/(k-1) per iteration): the cap of 200 iterations
	// stopped k = 100 at up to 4x the fixed point before session 31.
	for _, k := range []int{10, 60, 100} {
		testFibreEMReachesClosedForm(t, k)
	}
}

func testFibreEMReachesClosedForm(t *testing.T, k int) {
	m, err := Fit(context.Background(), rollForTest(500, 2), Settings{Method: EM, K: k, Solver: SolverDense})
	if err != nil {
		t.Fatal(err)
	}
	if !m.Report.EMConverged {
		t.Fatalf("k=%d: EM did not converge in %d iterations", k, m.Report.EMIterations)
	}
	t.Logf("k=%d: %d EM iterations", k, m.Report.EMIterations)
	rho := float64(k-4) / float64(k-1) // the slowest contraction, r = 3
	for i := 0; i < m.N; i++ {
		r := int(m.st.rank[i])
		c := 0.0
		for _, v := range m.Weights[i*k : (i+1)*k] {
			c += (v - 1/float64(k)) * (v - 1/float64(k))
		}
		want := c / float64(r)
		// Geometric contraction at rate rho = (k-1-r)/(k-1) stopped at relative change
		// 1e-10: the remaining error is below 1e-10 rho / (1 - rho) relative (2e-10 at
		// k = 10, 3.2e-9 at k = 100), doubled for margin.
		if math.Abs(m.Sigma[i]-want) > 2e-10*rho/(1-rho)*want {
			t.Fatalf("k=%d point %d: sigma %g, closed form %g (r=%d)", k, i, m.Sigma[i], want, r)
		}
		if r != 3 {
			t.Fatalf("k=%d point %d: rank %d, a 3-D roll neighbourhood should have rank 3", k, i, r)
		}
	}
}

// TestProjectFibre checks Pi xi for the fitted fibre bases: the three-vector path (r = 3)
// against one projection after the other, and the result orthogonal to the basis and to the
// constant vector, for random xi.
func TestProjectFibre(t *testing.T) {
	m, err := Fit(context.Background(), rollForTest(300, 3), Settings{Method: EM, Solver: SolverDense})
	if err != nil {
		t.Fatal(err)
	}
	k, rmax := m.K, m.st.rmax
	rng := rand.New(rand.NewPCG(5, 6))
	xi, ref := make([]float64, k), make([]float64, k)
	for i := 0; i < m.N; i++ {
		r := int(m.st.rank[i])
		basis := m.st.basis[i*k*rmax : (i+1)*k*rmax]
		for j := range xi {
			xi[j] = rng.NormFloat64()
		}
		copy(ref, xi)
		mu := 0.0
		for _, v := range ref {
			mu += v / float64(k)
		}
		for j := range ref {
			ref[j] -= mu
		}
		for a := 0; a < r; a++ {
			va := basis[a*k : (a+1)*k]
			s := 0.0
			for j, v := range va {
				s += v * ref[j]
			}
			for j, v := range va {
				ref[j] -= s * v
			}
		}
		projectFibre(xi, basis, k, r)
		// The two orders of the same projection with an orthonormal basis agree to rounding:
		// a few ulps of O(1) entries.
		sum := 0.0
		for j := range xi {
			if math.Abs(xi[j]-ref[j]) > 1e-14 {
				t.Fatalf("point %d (r=%d): Pi xi[%d] = %v, one projection after the other %v", i, r, j, xi[j], ref[j])
			}
			sum += xi[j]
		}
		// Sum of k = 10 entries of size |xi| <= ~4 after r projections: O(r k u |xi|) ~ 1e-14;
		// measured 7.9e-15.
		if math.Abs(sum) > 1e-13 {
			t.Fatalf("point %d: Pi xi sums to %v", i, sum)
		}
		for a := 0; a < r; a++ {
			s := 0.0
			for j, v := range basis[a*k : (a+1)*k] {
				s += v * xi[j]
			}
			// Limited by the basis' orthonormality (~1e-14, Jacobi) times ||xi|| (~5): measured
			// 6.5e-14, so this tolerance has only a 1.5x margin (deterministic: same Go code
			// in both builds).
			if math.Abs(s) > 1e-13 {
				t.Fatalf("point %d: Pi xi . v_%d = %v", i, a, s)
			}
		}
	}
}

func TestWorkersBitIdentical(t *testing.T) {
	X := rollForTest(600, 3)
	for _, meth := range []Method{LLE, EM, Direct, EMPaper, DirectPaper} {
		var ref []float64
		var refG []float64
		for _, w := range []int{1, 2, 3, 7} {
			m, err := Fit(context.Background(), X, Settings{Method: meth, Workers: w, DirectRidge: 1e-3})
			if err != nil {
				t.Fatal(err)
			}
			y := m.Embedding.RawMatrix().Data
			var g []float64
			if meth.Generative() {
				Y, _, err := m.Generate(context.Background(), 7, 1, 1)
				if err != nil {
					t.Fatalf("%v: %v", meth, err)
				}
				g = Y.RawMatrix().Data
			}
			if ref == nil {
				ref, refG = y, g
				continue
			}
			for i := range ref {
				if y[i] != ref[i] {
					t.Fatalf("%v workers=%d: embedding differs at %d", meth, w, i)
				}
			}
			for i := range refG {
				if g[i] != refG[i] {
					t.Fatalf("%v workers=%d: generation differs at %d", meth, w, i)
				}
			}
		}
	}
}

func TestRestoreRegeneratesSameEmbedding(t *testing.T) {
	X := rollForTest(500, 4)
	for _, meth := range []Method{EM, Direct, EMPaper, DirectPaper} {
		m, err := Fit(context.Background(), X, Settings{Method: meth, DirectRidge: 1e-3})
		if err != nil {
			t.Fatal(err)
		}
		r, err := Restore(context.Background(), m.Saved(), 2, SolverAuto)
		if err != nil {
			t.Fatal(err)
		}
		a, _, err := m.Generate(context.Background(), 3, 2, 1)
		if err != nil {
			t.Fatal(err)
		}
		b, _, err := r.Generate(context.Background(), 3, 2, 1)
		if err != nil {
			t.Fatal(err)
		}
		if !mat.Equal(a, b) {
			t.Fatalf("%v: restored model generates a different embedding", meth)
		}
		if r.Report.SX2 != m.Report.SX2 || r.Report.SY2 != m.Report.SY2 {
			t.Fatalf("%v: restored temperatures %g/%g, fitted %g/%g", meth, r.Report.SX2, r.Report.SY2, m.Report.SX2, m.Report.SY2)
		}
	}
}

func TestTransformTrainingPointsReproducesEmbedding(t *testing.T) {
	X := rollForTest(500, 5)
	m, err := Fit(context.Background(), X, Settings{})
	if err != nil {
		t.Fatal(err)
	}
	Y, err := m.Transform(context.Background(), X)
	if err != nil {
		t.Fatal(err)
	}
	// Every training point is its own neighbour at distance 0, so Transform copies its row
	// (no duplicate rows here): Y equals the embedding and only the QR inside
	// maxPrincipalSine rounds, O(n u) = 5.6e-14 at n = 500 (measured 4.5e-16).
	if s := maxPrincipalSine(Y, m.Embedding); s > 1e-12 {
		t.Fatalf("transform(X_train) subspace sine %g", s)
	}
	// Slightly moved points land near their originals' embedding.
	Xs := mat.DenseCopyOf(X)
	Xs.Apply(func(i, j int, v float64) float64 { return v + 1e-4 }, Xs)
	Ys, err := m.Transform(context.Background(), Xs)
	if err != nil {
		t.Fatal(err)
	}
	var diff mat.Dense
	diff.Sub(Ys, m.Embedding)
	// Measured 2.2e-3 for this 1e-4 move; 0.05 leaves a factor 20, while a transform that put
	// points elsewhere moves them by the embedding's own scale (a relative change of order 1).
	if r := mat.Norm(&diff, 2) / mat.Norm(m.Embedding, 2); r > 0.05 {
		t.Fatalf("transform of perturbed points moved the embedding by %g (relative)", r)
	}
}

// TestWorkersBitIdenticalLarge repeats the determinism check at a size where the sparse
// factorization splits its elimination tree across workers.
func TestWorkersBitIdenticalLarge(t *testing.T) {
	if testing.Short() {
		t.Skip("n = 8000")
	}
	X := rollForTest(8000, 12)
	for _, meth := range []Method{EM, Direct} {
		var ref, refG []float64
		for _, w := range []int{1, 2, 3, 7} {
			m, err := Fit(context.Background(), X, Settings{Method: meth, Workers: w})
			if err != nil {
				t.Fatal(err)
			}
			Y, _, err := m.Generate(context.Background(), 5, 3, 1)
			if err != nil {
				t.Fatal(err)
			}
			y, g := m.Embedding.RawMatrix().Data, Y.RawMatrix().Data
			if ref == nil {
				ref, refG = y, g
				continue
			}
			for i := range ref {
				if y[i] != ref[i] || g[i] != refG[i] {
					t.Fatalf("%v workers=%d: output differs at %d", meth, w, i)
				}
			}
		}
	}
}

// TestDirectSmallK: with k = 5 on a 3-D roll the LLE reconstruction of the embedding is exact
// to round-off (s_y^2 ~ 1e-26 raw), which made Gamma_i unfactorable; the temperature floor
// (tempFloor) keeps the fit and its draws finite.
func TestDirectSmallK(t *testing.T) {
	m, err := Fit(context.Background(), rollForTest(3000, 21), Settings{Method: Direct, K: 5})
	if err != nil {
		t.Fatal(err)
	}
	Y, _, err := m.Generate(context.Background(), 1, 0, 1)
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range Y.RawMatrix().Data {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			t.Fatal("non-finite generation")
		}
	}
	// Finite is not enough (an all-zero or unchanged generation passed): the generation is a
	// unit-norm embedding near the base one (same manifold), and the draw moved it.
	for c := 0; c < 2; c++ {
		if nc := mat.Norm(Y.ColView(c), 2); math.Abs(nc-1) > 1e-8 {
			t.Errorf("generation column %d has norm %g, want 1 (unit-norm eigenvectors)", c, nc)
		}
	}
	dd := bench.ProcrustesDisparity(m.Embedding, Y)
	X := rollForTest(3000, 21)
	roll := make([]float64, 3000) // the roll angle t = |(x_0, x_2)|
	for i := range roll {
		roll[i] = math.Hypot(X.At(i, 0), X.At(i, 2))
	}
	sp := bench.MaxAbsSpearman(Y, roll)
	t.Logf("s_x^2 %g, s_y^2 %g, regularized %d, disparity %g, max |Spearman| %g", m.Report.SX2, m.Report.SY2, m.Report.RegularizedPoints, dd, sp)
	if !(dd > 0) {
		t.Errorf("the generation equals the base embedding (disparity %g)", dd)
	}
	// k = 5 is small for this roll: the base embedding follows the roll angle only partly
	// (max |Spearman| 0.87 measured), and a generation at a = 1 moves far (disparity 0.63)
	// but keeps that order (0.85), where noise or a collapsed embedding gives about 0; 0.5
	// fails on those.
	if b := bench.MaxAbsSpearman(m.Embedding, roll); b < 0.5 || sp < 0.5 {
		t.Errorf("max |Spearman| with the roll angle: base %g, generation %g (want >= 0.5)", b, sp)
	}
}
