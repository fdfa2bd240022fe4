package sparse

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	bsparse "github.com/james-bowman/sparse"
)

func TestMPatternMatchesDense(t *testing.T) {
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(1, 2))
	for _, tc := range []struct{ n, k int }{{1, 0}, {2, 1}, {5, 2}, {30, 3}, {60, 7}, {120, 10}} {
		nbr := randomGraph(rng, tc.n, tc.k)
		p, err := NewMPattern(ctx, tc.n, tc.k, nbr, 3)
		if err != nil {
			t.Fatal(err)
		}
		// Structural pattern: (a, b) present iff a, b ∈ S_i for some i.
		want := make([][]bool, tc.n)
		for a := range want {
			want[a] = make([]bool, tc.n)
		}
		for i := 0; i < tc.n; i++ {
			s := []int{i}
			for _, b := range nbr[i*tc.k : (i+1)*tc.k] {
				s = append(s, int(b))
			}
			for _, a := range s {
				for _, b := range s {
					want[a][b] = true
				}
			}
		}
		rp, ci := p.RowPtr(), p.ColIdx()
		cnt := 0
		for a := 0; a < tc.n; a++ {
			for q := rp[a]; q < rp[a+1]; q++ {
				if q > rp[a] && ci[q] <= ci[q-1] {
					t.Fatalf("n=%d: row %d columns not strictly sorted", tc.n, a)
				}
				if !want[a][ci[q]] {
					t.Fatalf("n=%d: spurious entry (%d,%d)", tc.n, a, ci[q])
				}
			}
			for b := 0; b < tc.n; b++ {
				if want[a][b] {
					cnt++
				}
			}
		}
		if cnt != p.NNZ() {
			t.Fatalf("n=%d k=%d: nnz %d, want %d", tc.n, tc.k, p.NNZ(), cnt)
		}

		for rep := 0; rep < 2; rep++ { // fill, then refill with new weights
			w := randomWeights(rng, tc.n, tc.k)
			if err := p.Fill(ctx, w, 2); err != nil {
				t.Fatal(err)
			}
			d := denseM(tc.n, tc.k, nbr, w)
			csr := p.CSR()
			for a := 0; a < tc.n; a++ {
				for b := 0; b < tc.n; b++ {
					got, ref := csr.At(a, b), d.At(a, b)
					// Entries are sums of at most ~2k+1 products of O(1) weights: 1e-13 covers the
					// round-off of the different summation orders.
					if math.Abs(got-ref) > 1e-13*(1+math.Abs(ref)) {
						t.Fatalf("n=%d rep %d: M[%d,%d] = %v, want %v", tc.n, rep, a, b, got, ref)
					}
					if got != csr.At(b, a) {
						t.Fatalf("M not bitwise symmetric at (%d,%d)", a, b)
					}
				}
			}
			// MulVec against the dense product.
			x := randomWeights(rng, tc.n, 1)
			y := make([]float64, tc.n)
			p.MulVec(y, x)
			for a := 0; a < tc.n; a++ {
				s := 0.0
				for b := 0; b < tc.n; b++ {
					s += d.At(a, b) * x[b]
				}
				if math.Abs(s-y[a]) > 1e-12*(1+math.Abs(s)) { // round-off of ~30-term dot products
					t.Fatalf("MulVec row %d: %v want %v", a, y[a], s)
				}
			}
		}
	}
}

func TestMPatternWorkerCountBitIdentical(t *testing.T) {
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(3, 4))
	const n, k = 2000, 10
	nbr := randomGraph(rng, n, k)
	w := randomWeights(rng, n, k)
	var ref *MPattern
	for _, workers := range []int{1, 2, 3, 7} {
		p, err := NewMPattern(ctx, n, k, nbr, workers)
		if err != nil {
			t.Fatal(err)
		}
		if err := p.Fill(ctx, w, workers); err != nil {
			t.Fatal(err)
		}
		if ref == nil {
			ref = p
			continue
		}
		for i := range ref.RowPtr() {
			if ref.RowPtr()[i] != p.RowPtr()[i] {
				t.Fatalf("workers=%d: rowPtr differs", workers)
			}
		}
		for i := range ref.ColIdx() {
			if ref.ColIdx()[i] != p.ColIdx()[i] || math.Float64bits(ref.Values()[i]) != math.Float64bits(p.Values()[i]) {
				t.Fatalf("workers=%d: entry %d differs", workers, i)
			}
		}
		// Refilling an existing pattern with another worker count gives the same bits too.
		if err := ref.Fill(ctx, w, workers); err != nil {
			t.Fatal(err)
		}
		for i := range ref.Values() {
			if math.Float64bits(ref.Values()[i]) != math.Float64bits(p.Values()[i]) {
				t.Fatalf("refill workers=%d: entry %d differs", workers, i)
			}
		}
	}
}

func TestMPatternErrors(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		n, k int
		nbr  []int32
	}{
		{"length", 3, 1, []int32{1, 2}},
		{"range", 3, 1, []int32{1, 3, 0}},
		{"negative", 3, 1, []int32{1, -1, 0}},
		{"self", 3, 1, []int32{1, 1, 0}},
		{"repeat", 3, 2, []int32{1, 2, 0, 0, 0, 1}},
		{"k>=n", 2, 2, []int32{1, 0, 0, 1}},
		{"n=0", 0, 1, nil},
	} {
		if _, err := NewMPattern(ctx, tc.n, tc.k, tc.nbr, 2); err == nil {
			t.Errorf("%s: no error", tc.name)
		}
	}
	p, err := NewMPattern(ctx, 3, 1, []int32{1, 2, 0}, 1)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Fill(ctx, []float64{1, 2}, 1); err == nil {
		t.Error("Fill: short weights accepted")
	}
	if err := p.Fill(ctx, []float64{1, math.NaN(), 0}, 1); err == nil {
		t.Error("Fill: NaN weight accepted")
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if err := p.Fill(cctx, []float64{1, 2, 3}, 1); err == nil {
		t.Error("Fill: cancelled context accepted")
	}
}

func TestAssembleW(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	const n, k = 40, 6
	nbr := randomGraph(rng, n, k)
	w := randomWeights(rng, n, k)
	wm, err := AssembleW(n, k, nbr, w)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < n; i++ {
		for j := 0; j < k; j++ {
			if wm.At(i, int(nbr[i*k+j])) != w[i*k+j] {
				t.Fatalf("W[%d,%d] wrong", i, nbr[i*k+j])
			}
		}
		if wm.RowNNZ(i) != k {
			t.Fatalf("row %d has %d entries", i, wm.RowNNZ(i))
		}
	}
	if _, err := AssembleW(2, 1, []int32{0, 0}, []float64{1, 1}); err == nil {
		t.Error("self neighbour accepted")
	}
	for _, tc := range []struct {
		name string
		nbr  []int32
		w    []float64
	}{
		{"repeat", []int32{1, 1, 0, 2, 0, 1}, []float64{1, 1, 1, 1, 1, 1}},
		{"range", []int32{1, 3, 0, 2, 0, 1}, []float64{1, 1, 1, 1, 1, 1}},
		{"short w", []int32{1, 2, 0, 2, 0, 1}, []float64{1, 1, 1}},
	} {
		if _, err := AssembleW(3, 2, tc.nbr, tc.w); err == nil {
			t.Errorf("%s accepted", tc.name)
		}
	}
}

// TestMPatternMemory checks the footprint of M's pattern on a Swiss roll kNN graph (k = 10) and
// extrapolates it per row to n = 1M: it must stay around 0.5 GB.
func TestMPatternMemory(t *testing.T) {
	const n, k = 3000, 10
	x := swissRoll(rand.New(rand.NewPCG(9, 10)), n)
	nbr := gridKNN(x, k)
	p, err := NewMPattern(context.Background(), n, k, nbr, 2)
	if err != nil {
		t.Fatal(err)
	}
	perRow := float64(p.Memory()-4*n*len(p.mark)) / float64(n)
	nnzRow := float64(p.NNZ()) / float64(n)
	gb := perRow * 1e6 / 1e9
	t.Logf("nnz/row %.1f, %.0f bytes/row, n = 1M -> %.2f GB (+4 MB scratch per worker)", nnzRow, perRow, gb)
	// Budget from the brief: around 0.5 GB for M at n = 1M, k = 10 (the CSR arrays alone take
	// 16 bytes per nonzero since bsparse wants []int indices).
	if gb > 0.6 {
		t.Fatalf("M pattern would take %.2f GB at n = 1M", gb)
	}
}

// gridGraph is a kNN-like graph on a side x side grid: each point's k nearest grid points
// (ties broken by index), an asymmetric graph at the borders.
func gridGraph(side, k int) []int32 {
	n := side * side
	nbr := make([]int32, 0, n*k)
	type cand struct{ d, j int }
	c := make([]cand, 0, 49)
	for i := 0; i < n; i++ {
		x, y := i%side, i/side
		c = c[:0]
		for dy := -3; dy <= 3; dy++ {
			for dx := -3; dx <= 3; dx++ {
				if (dx == 0 && dy == 0) || x+dx < 0 || x+dx >= side || y+dy < 0 || y+dy >= side {
					continue
				}
				c = append(c, cand{dx*dx + dy*dy, (y+dy)*side + x + dx})
			}
		}
		for a := 1; a < len(c); a++ { // insertion sort by (distance, index)
			for b := a; b > 0 && (c[b].d < c[b-1].d || (c[b].d == c[b-1].d && c[b].j < c[b-1].j)); b-- {
				c[b], c[b-1] = c[b-1], c[b]
			}
		}
		for j := 0; j < k; j++ {
			nbr = append(nbr, int32(c[j].j))
		}
	}
	return nbr
}

func BenchmarkAssembleM(b *testing.B) {
	for _, side := range []int{100, 316} {
		n, k := side*side, 10
		nbr := gridGraph(side, k)
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := NewMPattern(context.Background(), n, k, nbr, 0); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkFillM(b *testing.B) {
	rng := rand.New(rand.NewPCG(7, 8))
	for _, side := range []int{100, 316} {
		n, k := side*side, 10
		nbr := gridGraph(side, k)
		w := randomWeights(rng, n, k)
		p, err := NewMPattern(context.Background(), n, k, nbr, 0)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if err := p.Fill(context.Background(), w, 0); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestPrepareRefillBitIdentical: Fill with the refill plan computes the same bits as Fill
// without it (same operations in the same order), for any worker count.
func TestPrepareRefillBitIdentical(t *testing.T) {
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(41, 42))
	for _, tc := range []struct{ n, k int }{{2, 1}, {5, 2}, {60, 7}, {500, 10}} {
		nbr := randomGraph(rng, tc.n, tc.k)
		plain, err := NewMPattern(ctx, tc.n, tc.k, nbr, 1)
		if err != nil {
			t.Fatal(err)
		}
		planned, err := NewMPattern(ctx, tc.n, tc.k, nbr, 1)
		if err != nil {
			t.Fatal(err)
		}
		if err := planned.PrepareRefill(ctx, 3); err != nil {
			t.Fatal(err)
		}
		if planned.pos == nil {
			t.Fatalf("n=%d: no refill plan", tc.n)
		}
		for rep := 0; rep < 3; rep++ {
			w := randomWeights(rng, tc.n, tc.k)
			if err := plain.Fill(ctx, w, 1); err != nil {
				t.Fatal(err)
			}
			for _, workers := range []int{1, 2, 7} {
				if err := planned.Fill(ctx, w, workers); err != nil {
					t.Fatal(err)
				}
				for q, v := range plain.Values() {
					if planned.Values()[q] != v {
						t.Fatalf("n=%d workers=%d: entry %d differs: %v vs %v", tc.n, workers, q, planned.Values()[q], v)
					}
				}
			}
		}
	}
}

// TestNewCSRMatrix checks the james-bowman CSR input: the same matrix-vector products, sorted
// rows, and the input left as it was.
func TestNewCSRMatrix(t *testing.T) {
	// 3 x 3 with an unsorted row, built from triplets.
	d := bsparse.NewDOK(3, 3)
	d.Set(0, 0, 2)
	d.Set(0, 2, -1)
	d.Set(1, 1, 3)
	d.Set(2, 0, -1)
	d.Set(2, 2, 4)
	c := d.ToCSR()
	raw := c.RawMatrix()
	// Reverse row 0 to make it unsorted.
	lo, hi := raw.Indptr[0], raw.Indptr[1]
	slices.Reverse(raw.Ind[lo:hi])
	slices.Reverse(raw.Data[lo:hi])
	ind0, data0 := slices.Clone(raw.Ind), slices.Clone(raw.Data)
	a, err := NewCSRMatrix(c)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 3; i++ {
		if !slices.IsSorted(a.ColIdx[a.RowPtr[i]:a.RowPtr[i+1]]) {
			t.Fatalf("row %d not sorted: %v", i, a.ColIdx)
		}
	}
	x := []float64{1, 2, 3}
	y := make([]float64, 3)
	a.MulVec(y, x)
	if want := []float64{2*1 - 3, 3 * 2, -1 + 4*3}; !slices.Equal(y, want) {
		t.Fatalf("A x = %v, want %v", y, want)
	}
	if !slices.Equal(raw.Ind, ind0) || !slices.Equal(raw.Data, data0) {
		t.Fatal("NewCSRMatrix modified its input")
	}
	if _, err := NewCSRMatrix(bsparse.NewCSR(2, 3, []int{0, 0, 0}, nil, nil)); err == nil {
		t.Fatal("non-square matrix accepted")
	}
}
