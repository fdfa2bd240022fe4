package engine

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"

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

func TestGammaMatchesClosedForm(t *testing.T) {
	X := rollForTest(300, 8)
	for _, s := range []Settings{{Method: Direct, Solver: SolverDense}, {Method: DirectPaper, DirectRidge: 1e-2, Solver: SolverDense}} {
		m, err := Fit(context.Background(), X, s)
		if err != nil {
			t.Fatal(err)
		}
		k := m.K
		g := make([]float64, k*k)
		for _, i := range []int{0, 150, 299} {
			if !m.Gamma(i, g) {
				t.Fatalf("%v: Gamma not available", m.Method)
			}
			T := targetCov(m, i)
			for j := range g {
				// Two algebraically equal products of the same factors: round-off only.
				if math.Abs(g[j]-T[j]) > 1e-9*math.Abs(T[(j/k)*k+j/k]) {
					t.Fatalf("%v point %d: Gamma[%d] %g vs %g", m.Method, i, j, g[j], T[j])
				}
			}
		}
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
					if math.Abs(c-T[j*k+l]) > 5*se+1e-14*math.Abs(T[j*k+j]) {
						t.Fatalf("%v point %d: cov(%d,%d) %g, target %g, se %g", m.Method, i, j, l, c, T[j*k+l], se)
					}
				}
			}
		}
	}
}

func TestFibreEMReachesClosedForm(t *testing.T) {
	m, err := Fit(context.Background(), rollForTest(500, 2), Settings{Method: EM, Solver: SolverDense})
	if err != nil {
		t.Fatal(err)
	}
	if !m.Report.EMConverged {
		t.Fatalf("EM did not converge in %d iterations", m.Report.EMIterations)
	}
	k := m.K
	for i := 0; i < m.N; i++ {
		r := int(m.st.rank[i])
		c := 0.0
		for _, v := range m.Weights[i*k : (i+1)*k] {
			c += (v - 1/float64(k)) * (v - 1/float64(k))
		}
		want := c / float64(r)
		// Geometric contraction at rate (k-1-r)/(k-1) stopped at relative change 1e-10:
		// the remaining error is below 1e-10 / (1 - 6/9) relative.
		if math.Abs(m.Sigma[i]-want) > 5e-10*want {
			t.Fatalf("point %d: sigma %g, closed form %g (r=%d)", i, m.Sigma[i], want, r)
		}
		if r != 3 {
			t.Fatalf("point %d: rank %d, a 3-D roll neighbourhood should have rank 3", i, r)
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
		if math.Abs(sum) > 1e-13 {
			t.Fatalf("point %d: Pi xi sums to %v", i, sum)
		}
		for a := 0; a < r; a++ {
			s := 0.0
			for j, v := range basis[a*k : (a+1)*k] {
				s += v * xi[j]
			}
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
	if s := maxPrincipalSine(Y, m.Embedding); s > 1e-6 {
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
	t.Logf("s_x^2 %g, s_y^2 %g, regularized %d", m.Report.SX2, m.Report.SY2, m.Report.RegularizedPoints)
}
