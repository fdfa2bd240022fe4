package sparse

import (
	"math"
	"math/rand/v2"
	"slices"

	"gonum.org/v1/gonum/mat"
)

// Test helpers shared by the CSR and eigensolver tests: random graphs, a small Swiss roll with
// brute-force kNN and LLE weights, and a naive dense M.

// randomGraph returns n*k random distinct neighbours per point (self excluded): an asymmetric
// graph with uneven in-degrees.
func randomGraph(rng *rand.Rand, n, k int) []int32 {
	nbr := make([]int32, n*k)
	for i := 0; i < n; i++ {
		row := nbr[i*k : i*k+k]
		for j := 0; j < k; {
			b := int32(rng.IntN(n))
			if int(b) == i || slices.Contains(row[:j], b) {
				continue
			}
			row[j] = b
			j++
		}
	}
	return nbr
}

func randomWeights(rng *rand.Rand, n, k int) []float64 {
	w := make([]float64, n*k)
	for i := range w {
		w[i] = rng.NormFloat64()
	}
	return w
}

// denseM builds M = (I - W)^T (I - W) naively (paper Eq. (39)).
func denseM(n, k int, nbr []int32, w []float64) *mat.Dense {
	iw := mat.NewDense(n, n, nil)
	for i := 0; i < n; i++ {
		iw.Set(i, i, 1)
		for j := 0; j < k; j++ {
			iw.Set(i, int(nbr[i*k+j]), iw.At(i, int(nbr[i*k+j]))-w[i*k+j])
		}
	}
	var m mat.Dense
	m.Mul(iw.T(), iw)
	return &m
}

// swissRoll samples n points of scikit-learn's Swiss roll recipe
// (t = 1.5 pi (1 + 2u), x = t cos t, y = 21 v, z = t sin t).
func swissRoll(rng *rand.Rand, n int) [][3]float64 {
	x := make([][3]float64, n)
	for i := range x {
		t := 1.5 * math.Pi * (1 + 2*rng.Float64())
		x[i] = [3]float64{t * math.Cos(t), 21 * rng.Float64(), t * math.Sin(t)}
	}
	return x
}

// bruteKNN returns the k nearest neighbours of each point (self excluded), sorted by distance.
func bruteKNN(x [][3]float64, k int) []int32 {
	n := len(x)
	nbr := make([]int32, n*k)
	type cand struct {
		d float64
		j int
	}
	c := make([]cand, 0, n)
	for i := 0; i < n; i++ {
		c = c[:0]
		for j := 0; j < n; j++ {
			if j == i {
				continue
			}
			d := 0.0
			for t := 0; t < 3; t++ {
				e := x[i][t] - x[j][t]
				d += e * e
			}
			c = append(c, cand{d, j})
		}
		slices.SortFunc(c, func(a, b cand) int {
			if a.d != b.d {
				if a.d < b.d {
					return -1
				}
				return 1
			}
			return a.j - b.j
		})
		for j := 0; j < k; j++ {
			nbr[i*k+j] = int32(c[j].j)
		}
	}
	return nbr
}

// lleWeights are the standard LLE barycentric weights with ridge reg * trace(G_i)
// (sum to one per point).
func lleWeights(x [][3]float64, k int, nbr []int32, reg float64) []float64 {
	n := len(x)
	w := make([]float64, n*k)
	g := mat.NewSymDense(k, nil)
	ones := mat.NewVecDense(k, nil)
	for j := 0; j < k; j++ {
		ones.SetVec(j, 1)
	}
	var chol mat.Cholesky
	var sol mat.VecDense
	for i := 0; i < n; i++ {
		tr := 0.0
		for a := 0; a < k; a++ {
			za := x[nbr[i*k+a]]
			for b := a; b < k; b++ {
				zb := x[nbr[i*k+b]]
				s := 0.0
				for t := 0; t < 3; t++ {
					s += (za[t] - x[i][t]) * (zb[t] - x[i][t])
				}
				g.SetSym(a, b, s)
			}
			tr += g.At(a, a)
		}
		for a := 0; a < k; a++ {
			g.SetSym(a, a, g.At(a, a)+reg*tr)
		}
		if !chol.Factorize(g) {
			panic("lleWeights: Cholesky failed")
		}
		if err := chol.SolveVecTo(&sol, ones); err != nil {
			panic(err)
		}
		s := mat.Sum(&sol)
		for j := 0; j < k; j++ {
			w[i*k+j] = sol.AtVec(j) / s
		}
	}
	return w
}

// gridKNN is an exact kNN for 3-D points by bucketing into cubic cells and searching growing
// shells of cells (test helper for large n; same tie-breaking as bruteKNN up to equal
// distances).
func gridKNN(x [][3]float64, k int) []int32 {
	n := len(x)
	lo, hi := x[0], x[0]
	for _, p := range x {
		for t := 0; t < 3; t++ {
			lo[t], hi[t] = min(lo[t], p[t]), max(hi[t], p[t])
		}
	}
	vol := (hi[0] - lo[0] + 1e-9) * (hi[1] - lo[1] + 1e-9) * (hi[2] - lo[2] + 1e-9)
	h := math.Cbrt(vol * float64(2*k) / float64(n))
	var dims [3]int
	for t := 0; t < 3; t++ {
		dims[t] = int((hi[t]-lo[t])/h) + 1
	}
	cell := func(p [3]float64) (c [3]int) {
		for t := 0; t < 3; t++ {
			c[t] = min(int((p[t]-lo[t])/h), dims[t]-1)
		}
		return
	}
	nc := dims[0] * dims[1] * dims[2]
	start := make([]int, nc+1)
	idx := func(c [3]int) int { return (c[2]*dims[1]+c[1])*dims[0] + c[0] }
	for _, p := range x {
		start[idx(cell(p))+1]++
	}
	for i := 0; i < nc; i++ {
		start[i+1] += start[i]
	}
	pts := make([]int32, n)
	fill := append([]int(nil), start[:nc]...)
	for i, p := range x {
		c := idx(cell(p))
		pts[fill[c]] = int32(i)
		fill[c]++
	}
	nbr := make([]int32, n*k)
	type cand struct {
		d float64
		j int
	}
	var c []cand
	for i, p := range x {
		ci := cell(p)
		for r := 1; ; r++ {
			c = c[:0]
			for dz := -r; dz <= r; dz++ {
				for dy := -r; dy <= r; dy++ {
					for dx := -r; dx <= r; dx++ {
						q := [3]int{ci[0] + dx, ci[1] + dy, ci[2] + dz}
						if q[0] < 0 || q[1] < 0 || q[2] < 0 || q[0] >= dims[0] || q[1] >= dims[1] || q[2] >= dims[2] {
							continue
						}
						qi := idx(q)
						for _, j := range pts[start[qi]:start[qi+1]] {
							if int(j) == i {
								continue
							}
							d := 0.0
							for t := 0; t < 3; t++ {
								e := p[t] - x[j][t]
								d += e * e
							}
							c = append(c, cand{d, int(j)})
						}
					}
				}
			}
			if len(c) < k {
				continue
			}
			slices.SortFunc(c, func(a, b cand) int {
				if a.d != b.d {
					if a.d < b.d {
						return -1
					}
					return 1
				}
				return a.j - b.j
			})
			// Exact once the k-th distance is within the searched radius r*h.
			if c[k-1].d <= float64(r*r)*h*h || r > max(dims[0], dims[1], dims[2]) {
				break
			}
		}
		for j := 0; j < k; j++ {
			nbr[i*k+j] = int32(c[j].j)
		}
	}
	return nbr
}
