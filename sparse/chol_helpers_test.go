package sparse

import (
	"math"
	"math/rand/v2"
	"slices"

	_ "glle/cgo" // registers the OpenBLAS backend (gonum's under the purego tag)
	"glle/kernels"
)

// testCSR is a symmetric matrix in CSR form (full pattern unless lowerOnly was requested).
type testCSR struct {
	n      int
	rowPtr []int
	colIdx []int
	val    []float64
}

// csrFromTriplets builds a CSR matrix from symmetric (i, j, v) triplets given once per
// off-diagonal pair (i > j) plus diagonal entries; full stores both triangles, otherwise the
// lower triangle only. Duplicates are summed by the factorization and the matvec alike.
func csrFromTriplets(n int, is, js []int, vs []float64, full bool) *testCSR {
	cnt := make([]int, n+1)
	for k := range is {
		cnt[is[k]+1]++
		if full && is[k] != js[k] {
			cnt[js[k]+1]++
		}
	}
	for i := 0; i < n; i++ {
		cnt[i+1] += cnt[i]
	}
	a := &testCSR{n: n, rowPtr: slices.Clone(cnt), colIdx: make([]int, cnt[n]), val: make([]float64, cnt[n])}
	for k := range is {
		i, j := is[k], js[k]
		a.colIdx[cnt[i]], a.val[cnt[i]] = j, vs[k]
		cnt[i]++
		if full && i != j {
			a.colIdx[cnt[j]], a.val[cnt[j]] = i, vs[k]
			cnt[j]++
		}
	}
	return a
}

// mulVec sets y = (A - shift I) x treating the stored pattern as symmetric: entries with
// col < row also act at (col, row); entries with col > row are ignored (as Analyze does).
func (a *testCSR) mulVec(y, x []float64, shift float64) {
	for i := range y {
		y[i] = -shift * x[i]
	}
	for i := 0; i < a.n; i++ {
		for p := a.rowPtr[i]; p < a.rowPtr[i+1]; p++ {
			j := a.colIdx[p]
			switch {
			case j == i:
				y[i] += a.val[p] * x[i]
			case j < i:
				y[i] += a.val[p] * x[j]
				y[j] += a.val[p] * x[i]
			}
		}
	}
}

// dense returns A - shift I as a dense row-major matrix.
func (a *testCSR) dense(shift float64) []float64 {
	n := a.n
	d := make([]float64, n*n)
	for i := 0; i < n; i++ {
		d[i*n+i] -= shift
		for p := a.rowPtr[i]; p < a.rowPtr[i+1]; p++ {
			j := a.colIdx[p]
			switch {
			case j == i:
				d[i*n+i] += a.val[p]
			case j < i:
				d[i*n+j] += a.val[p]
				d[j*n+i] += a.val[p]
			}
		}
	}
	return d
}

// normInf returns the infinity norm of A - shift I.
func (a *testCSR) normInf(shift float64) float64 {
	rs := make([]float64, a.n)
	for i := 0; i < a.n; i++ {
		rs[i] = 0
	}
	for i := 0; i < a.n; i++ {
		for p := a.rowPtr[i]; p < a.rowPtr[i+1]; p++ {
			j := a.colIdx[p]
			switch {
			case j == i:
				rs[i] += math.Abs(a.val[p] - shift)
			case j < i:
				rs[i] += math.Abs(a.val[p])
				rs[j] += math.Abs(a.val[p])
			}
		}
	}
	return slices.Max(append(rs, 0))
}

// randomSPD returns a random sparse symmetric matrix with about deg off-diagonal entries per
// row, made positive definite by diagonal dominance (diag = row sum of |offdiag| + 1).
func randomSPD(rng *rand.Rand, n, deg int, full bool) *testCSR {
	var is, js []int
	var vs []float64
	diag := make([]float64, n)
	for i := 1; i < n; i++ {
		for e := 0; e < deg/2+1; e++ {
			if rng.IntN(2) == 0 {
				continue
			}
			j := rng.IntN(i)
			v := rng.Float64()*2 - 1
			is, js, vs = append(is, i), append(js, j), append(vs, v)
			diag[i] += math.Abs(v)
			diag[j] += math.Abs(v)
		}
	}
	for i := 0; i < n; i++ {
		is, js, vs = append(is, i), append(js, i), append(vs, diag[i]+1)
	}
	return csrFromTriplets(n, is, js, vs, full)
}

// gridLaplacian returns the 5-point Laplacian of an nx x ny grid (Dirichlet-free: singular,
// PSD with the constant vector in its kernel); factor it with a negative shift.
func gridLaplacian(nx, ny int, full bool) *testCSR {
	n := nx * ny
	var is, js []int
	var vs []float64
	for y := 0; y < ny; y++ {
		for x := 0; x < nx; x++ {
			i := y*nx + x
			d := 0.0
			if x > 0 {
				is, js, vs = append(is, i), append(js, i-1), append(vs, -1)
			}
			if y > 0 {
				is, js, vs = append(is, i), append(js, i-nx), append(vs, -1)
			}
			for _, ok := range []bool{x > 0, y > 0, x < nx-1, y < ny-1} {
				if ok {
					d++
				}
			}
			is, js, vs = append(is, i), append(js, i), append(vs, d)
		}
	}
	return csrFromTriplets(n, is, js, vs, full)
}

// knnLLE builds the LLE-like matrix M = (I - W)^T (I - W) (full CSR, sorted columns) for n
// random points in the unit square: W holds random positive weights summing to one over the
// k nearest neighbours of each point (brute force over a grid of cells). It also returns the
// points (row-major n x 2).
func knnLLE(rng *rand.Rand, n, k int) (*testCSR, []float64) {
	pts := make([]float64, 2*n)
	for i := range pts {
		pts[i] = rng.Float64()
	}
	nb := knnGrid(pts, n, k)
	wts := make([]float64, n*k)
	for i := 0; i < n; i++ {
		s := 0.0
		for j := 0; j < k; j++ {
			wts[i*k+j] = 0.5 + rng.Float64()
			s += wts[i*k+j]
		}
		for j := 0; j < k; j++ {
			wts[i*k+j] /= s
		}
	}
	// Reverse neighbour lists R(a) = {i : a ∈ N(i)}.
	rp := make([]int, n+1)
	for _, a := range nb {
		rp[a+1]++
	}
	for i := 0; i < n; i++ {
		rp[i+1] += rp[i]
	}
	rv := make([]int32, len(nb))
	fill := slices.Clone(rp[:n])
	for i := 0; i < n; i++ {
		for _, a := range nb[i*k : i*k+k] {
			rv[fill[a]] = int32(i)
			fill[a]++
		}
	}
	// Row a of M: sum over i ∈ {a} ∪ R(a) of c_a^{(i)} c^{(i)}, with c^{(i)} = e_i - w_i.
	coef := func(i int, a int) float64 {
		if a == i {
			return 1
		}
		for j, b := range nb[i*k : i*k+k] {
			if int(b) == a {
				return -wts[i*k+j]
			}
		}
		return 0
	}
	acc := make([]float64, n)
	mark := make([]int, n)
	for i := range mark {
		mark[i] = -1
	}
	a := &testCSR{n: n, rowPtr: make([]int, n+1)}
	var cols []int
	for r := 0; r < n; r++ {
		cols = cols[:0]
		add := func(i int) {
			ca := coef(i, r)
			upd := func(b int, cb float64) {
				if mark[b] != r {
					mark[b] = r
					acc[b] = 0
					cols = append(cols, b)
				}
				acc[b] += ca * cb
			}
			upd(i, 1)
			for j, b := range nb[i*k : i*k+k] {
				upd(int(b), -wts[i*k+j])
			}
		}
		add(r)
		for _, i := range rv[rp[r]:rp[r+1]] {
			add(int(i))
		}
		slices.Sort(cols)
		for _, b := range cols {
			a.colIdx = append(a.colIdx, b)
			a.val = append(a.val, acc[b])
		}
		a.rowPtr[r+1] = len(a.colIdx)
	}
	return a, pts
}

// knnGrid returns the k nearest neighbours (self excluded) of each of n 2-D points in the
// unit square, row-major n x k, by searching rings of grid cells.
func knnGrid(pts []float64, n, k int) []int32 {
	g := max(1, int(math.Sqrt(float64(n)/2))) // about 2 points per cell
	cellOf := func(x float64) int { return min(g-1, max(0, int(x*float64(g)))) }
	cp := make([]int, g*g+1)
	for i := 0; i < n; i++ {
		cp[cellOf(pts[2*i+1])*g+cellOf(pts[2*i])+1]++
	}
	for c := 0; c < g*g; c++ {
		cp[c+1] += cp[c]
	}
	cv := make([]int32, n)
	fill := slices.Clone(cp[:g*g])
	for i := 0; i < n; i++ {
		c := cellOf(pts[2*i+1])*g + cellOf(pts[2*i])
		cv[fill[c]] = int32(i)
		fill[c]++
	}
	out := make([]int32, n*k)
	type cand struct {
		d float64
		j int32
	}
	var cs []cand
	for i := 0; i < n; i++ {
		x, y := pts[2*i], pts[2*i+1]
		cx, cy := cellOf(x), cellOf(y)
		for r := 1; ; r++ {
			cs = cs[:0]
			for yy := max(0, cy-r); yy <= min(g-1, cy+r); yy++ {
				for xx := max(0, cx-r); xx <= min(g-1, cx+r); xx++ {
					c := yy*g + xx
					for _, j := range cv[cp[c]:cp[c+1]] {
						if int(j) != i {
							dx, dy := pts[2*j]-x, pts[2*j+1]-y
							cs = append(cs, cand{dx*dx + dy*dy, j})
						}
					}
				}
			}
			// Points within distance r/g are guaranteed found; accept once k of them are.
			rad := float64(r) / float64(g)
			slices.SortFunc(cs, func(a, b cand) int {
				switch {
				case a.d < b.d:
					return -1
				case a.d > b.d:
					return 1
				}
				return int(a.j - b.j)
			})
			if (len(cs) >= k && cs[k-1].d <= rad*rad) || len(cs) >= n-1 {
				break
			}
		}
		for j := 0; j < k && j < len(cs); j++ {
			out[i*k+j] = cs[j].j
		}
	}
	return out
}

// forward solves L y = y in place (permuted numbering), one supernode after the other: the
// sequential oracle of the subtree-parallel solve.
func (f *Factor) forward(y []float64) {
	f.forwardRange(kernels.Current(), 0, f.s.ns, y, f.tmpBuf(f.s.maxUpdate), nil, nil)
}

// backward solves L^T y = y in place (permuted numbering), one supernode after the other.
func (f *Factor) backward(y []float64) {
	f.backwardRange(kernels.Current(), 0, f.s.ns, y, f.tmpBuf(f.s.maxUpdate))
}
