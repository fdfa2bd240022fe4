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

	"glle/engine/knn"
)

// TestMPatternLocalIsPermutedM: the relabelled pattern stores P M P^T: stored row r is point
// Order()[r], its entries are M's entries of that point, and ToInternal/FromInternal move
// vectors between the orders (M x computed either way agrees).
func TestMPatternLocalIsPermutedM(t *testing.T) {
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(5, 6))
	for _, tc := range []struct{ n, k int }{{1, 0}, {2, 1}, {7, 2}, {60, 7}, {500, 10}} {
		nbr := randomGraph(rng, tc.n, tc.k)
		plain, err := NewMPattern(ctx, tc.n, tc.k, nbr, 2)
		if err != nil {
			t.Fatal(err)
		}
		local, err := NewMPatternLocal(ctx, tc.n, tc.k, nbr, 3)
		if err != nil {
			t.Fatal(err)
		}
		order := local.Order()
		seen := make([]bool, tc.n)
		for _, i := range order {
			if i < 0 || int(i) >= tc.n || seen[i] {
				t.Fatalf("n=%d: Order is not a permutation: %v", tc.n, order)
			}
			seen[i] = true
		}
		if local.NNZ() != plain.NNZ() {
			t.Fatalf("n=%d: nnz %d, plain %d", tc.n, local.NNZ(), plain.NNZ())
		}
		w := randomWeights(rng, tc.n, tc.k)
		for _, p := range []*MPattern{plain, local} {
			if err := p.Fill(ctx, w, 2); err != nil {
				t.Fatal(err)
			}
		}
		pc, lc := plain.CSR(), local.CSR()
		for r := 0; r < tc.n; r++ {
			for q := 0; q < tc.n; q++ {
				got, ref := lc.At(r, q), pc.At(int(order[r]), int(order[q]))
				// Same sums in a different order: round-off of ~2k+1 O(1) terms.
				if math.Abs(got-ref) > 1e-13*(1+math.Abs(ref)) {
					t.Fatalf("n=%d: stored M[%d,%d] = %v, M[%d,%d] = %v", tc.n, r, q, got, order[r], order[q], ref)
				}
			}
		}
		x := randomWeights(rng, tc.n, 1)
		xi, yi, y, yp := make([]float64, tc.n), make([]float64, tc.n), make([]float64, tc.n), make([]float64, tc.n)
		local.ToInternal(xi, x)
		local.MulVec(yi, xi)
		local.FromInternal(y, yi)
		plain.MulVec(yp, x)
		for i := range y {
			if math.Abs(y[i]-yp[i]) > 1e-12*(1+math.Abs(yp[i])) { // round-off of ~30-term dot products
				t.Fatalf("n=%d: M x differs at %d: %v vs %v", tc.n, i, y[i], yp[i])
			}
		}
	}
}

// TestMPatternLocalLocality: on a grid graph given in random order, breadth-first labels put
// neighbours close: the mean |label distance| of neighbour pairs drops by far.
func TestMPatternLocalLocality(t *testing.T) {
	ctx := context.Background()
	const side, k = 60, 8
	n := side * side
	grid := gridGraph(side, k)
	rng := rand.New(rand.NewPCG(9, 10))
	perm := rng.Perm(n) // point i of the shuffled graph is grid point perm[i]
	inv := make([]int32, n)
	for i, g := range perm {
		inv[g] = int32(i)
	}
	nbr := make([]int32, n*k)
	for i, g := range perm {
		for j, b := range grid[g*k : g*k+k] {
			nbr[i*k+j] = inv[b]
		}
	}
	spread := func(labelOf func(i int) int) float64 {
		s := 0.0
		for i := 0; i < n; i++ {
			for _, b := range nbr[i*k : i*k+k] {
				s += math.Abs(float64(labelOf(i) - labelOf(int(b))))
			}
		}
		return s / float64(n*k)
	}
	p, err := NewMPatternLocal(ctx, n, k, nbr, 2)
	if err != nil {
		t.Fatal(err)
	}
	before := spread(func(i int) int { return i })
	after := spread(func(i int) int { return int(p.label[i]) })
	// Random labels: mean distance ~n/3 = 1200; breadth-first on a 60 x 60 grid: about the
	// width of a BFS front (~100).
	if !(after < before/5) {
		t.Fatalf("mean neighbour label distance %.0f -> %.0f: no locality gained", before, after)
	}
}

// TestMPatternLocalErrorsNameInputPoints: invalid graphs are reported with the caller's point
// numbers, not the internal ones.
func TestMPatternLocalErrorsNameInputPoints(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name, want string
		n, k       int
		nbr        []int32
	}{
		{"self", "point 2 lists itself", 3, 1, []int32{1, 0, 2}},
		{"repeat", "point 1 lists neighbour 2 twice", 3, 2, []int32{1, 2, 2, 2, 0, 1}},
		{"range", "neighbour 0 of point 2 is 7", 3, 1, []int32{1, 0, 7}},
		{"length", "len(nbr)", 3, 1, []int32{1, 0}},
		// K above longRow: the duplicate check by lookup (checkNeighbours), the same error.
		{"repeat-long", "point 1 lists neighbour 30 twice", 40, 39, longRepeat(40, 1, 7, 30)},
	} {
		_, err := NewMPatternLocal(ctx, tc.n, tc.k, tc.nbr, 1)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one containing %q", tc.name, err, tc.want)
		}
	}
}

// longRepeat returns the complete graph on n points (K = n - 1) with point a's neighbour j
// replaced by b, which it also lists elsewhere.
func longRepeat(n, a, j int, b int32) []int32 {
	nbr := make([]int32, 0, n*(n-1))
	for i := 0; i < n; i++ {
		for c := 0; c < n; c++ {
			if c != i {
				nbr = append(nbr, int32(c))
			}
		}
	}
	nbr[a*(n-1)+j] = b
	return nbr
}

// TestMPatternLocalWorkersBitIdentical: the relabelled pattern and its values (with and without
// the refill plan) are the same bits for any worker count.
func TestMPatternLocalWorkersBitIdentical(t *testing.T) {
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(11, 12))
	const n, k = 3000, 10
	nbr := randomGraph(rng, n, k)
	w := randomWeights(rng, n, k)
	var ref []float64
	for _, workers := range []int{1, 2, 5} {
		for _, plan := range []bool{false, true} {
			p, err := NewMPatternLocal(ctx, n, k, nbr, workers)
			if err != nil {
				t.Fatal(err)
			}
			if plan {
				if err := p.PrepareRefill(ctx, workers); err != nil {
					t.Fatal(err)
				}
			}
			if err := p.Fill(ctx, w, workers); err != nil {
				t.Fatal(err)
			}
			if ref == nil {
				ref = append([]float64(nil), p.Values()...)
				continue
			}
			for i, v := range p.Values() {
				if math.Float64bits(v) != math.Float64bits(ref[i]) {
					t.Fatalf("%s: value %d differs", fmt.Sprintf("workers=%d plan=%v", workers, plan), i)
				}
			}
		}
	}
}

// TestMPatternGraphMatchesBuildGraph checks the pattern's own adjacency graph against the one
// the generic analysis builds (buildGraphCount), and that NewShiftInvertPattern, which uses it,
// gives the analysis and the solves of NewShiftInvert on the same matrix, for both orderings
// that read the graph; sizes include n = 1 and 2, below and at k + 1.
func TestMPatternGraphMatchesBuildGraph(t *testing.T) {
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(21, 22))
	for _, tc := range []struct{ n, k int }{{1, 0}, {2, 1}, {11, 10}, {12, 10}, {500, 4}, {3000, 10}} {
		nbr := randomGraph(rng, tc.n, tc.k)
		for _, workers := range []int{1, 2, 3} {
			p, err := NewMPatternLocal(ctx, tc.n, tc.k, nbr, workers)
			if err != nil {
				t.Fatal(err)
			}
			g := p.graph(workers)
			want, lower, upper := buildGraphCount(tc.n, p.RowPtr(), p.ColIdx())
			if lower != upper {
				t.Fatalf("n=%d: pattern not symmetric: %d below, %d above", tc.n, lower, upper)
			}
			if !slices.Equal(g.xadj, want.xadj) || !slices.Equal(g.adj, want.adj) {
				t.Fatalf("n=%d k=%d workers=%d: graph differs from buildGraphCount's", tc.n, tc.k, workers)
			}
		}
		if tc.k == 0 {
			continue
		}
		p, err := NewMPatternLocal(ctx, tc.n, tc.k, nbr, 2)
		if err != nil {
			t.Fatal(err)
		}
		if err := p.Fill(ctx, randomWeights(rng, tc.n, tc.k), 2); err != nil {
			t.Fatal(err)
		}
		for _, ord := range []Ordering{OrderingAMF, OrderingAMD, OrderingND} {
			opts := SymbolicOptions{Ordering: ord, Workers: 2, Symmetric: true}
			a, err := NewShiftInvert(ctx, p.Matrix(), opts)
			if err != nil {
				t.Fatal(err)
			}
			b, err := NewShiftInvertPattern(ctx, p, opts)
			if err != nil {
				t.Fatal(err)
			}
			sa, sb := a.Symbolic(), b.Symbolic()
			if !slices.Equal(sa.Perm(), sb.Perm()) || sa.NNZ() != sb.NNZ() || sa.Flops() != sb.Flops() {
				t.Fatalf("n=%d %v: analyses differ (nnz(L) %d vs %d)", tc.n, ord, sa.NNZ(), sb.NNZ())
			}
			// Same factor, same solve: bit-identical results of one shift-invert application.
			const sigma = -1e-3 // M is only semidefinite; the shift makes both factorizations succeed
			if err := a.SetShift(sigma); err != nil {
				t.Fatal(err)
			}
			if err := b.SetShift(sigma); err != nil {
				t.Fatal(err)
			}
			x := randomWeights(rng, tc.n, 1)
			ya, yb := make([]float64, tc.n), make([]float64, tc.n)
			a.Apply(ya, x)
			b.Apply(yb, x)
			for i := range ya {
				if math.Float64bits(ya[i]) != math.Float64bits(yb[i]) {
					t.Fatalf("n=%d %v: solve differs at %d: %g vs %g", tc.n, ord, i, ya[i], yb[i])
				}
			}
		}
	}
}

// TestMPatternLocalComponents checks the component count of the breadth-first relabelling
// against knn.Components (a union-find over the same symmetrized neighbour graph): blocks of
// random graphs side by side, including isolated pairs (k = 1).
func TestMPatternLocalComponents(t *testing.T) {
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(31, 32))
	for _, tc := range []struct{ blocks, size, k int }{{1, 50, 3}, {3, 40, 3}, {7, 2, 1}, {5, 12, 2}} {
		n := tc.blocks * tc.size
		nbr := make([]int32, 0, n*tc.k)
		for b := 0; b < tc.blocks; b++ {
			for _, v := range randomGraph(rng, tc.size, tc.k) {
				nbr = append(nbr, v+int32(b*tc.size))
			}
		}
		want, _ := knn.Components(n, tc.k, nbr)
		p, err := NewMPatternLocal(ctx, n, tc.k, nbr, 2)
		if err != nil {
			t.Fatal(err)
		}
		if got := p.Components(); got != want || got < tc.blocks {
			t.Errorf("%d blocks of %d, k = %d: %d components, knn.Components %d", tc.blocks, tc.size, tc.k, got, want)
		}
	}
}

// TestInternalCols: ToInternalCols and FromInternalCols move each column of a row-major
// n x p matrix by the definition (internal row r holds point order[r]; the plain pattern's
// order is the identity), and ToInternal/FromInternal (one column) agree, for B's pattern, M's
// relabelled pattern and M's plain one, on 1 and 3 workers; lengths that differ from the
// pattern's n panic with the constant message.
func TestInternalCols(t *testing.T) {
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(11, 12))
	const p = 3
	for _, n := range []int{12, 700} {
		nbr := randomGraph(rng, n, 5)
		for _, workers := range []int{1, 3} {
			bp, err := NewBPattern(ctx, n, 5, nbr, workers)
			if err != nil {
				t.Fatal(err)
			}
			local, err := NewMPatternLocal(ctx, n, 5, nbr, workers)
			if err != nil {
				t.Fatal(err)
			}
			plain, err := NewMPattern(ctx, n, 5, nbr, workers)
			if err != nil {
				t.Fatal(err)
			}
			type maps struct {
				name     string
				order    []int32 // nil: identity
				to, from func(dst, x []float64)
				toC      func(dst [][]float64, x []float64)
				fromC    func(dst []float64, x [][]float64)
			}
			for _, m := range []maps{
				{"B", bp.order, bp.ToInternal, bp.FromInternal, bp.ToInternalCols, bp.FromInternalCols},
				{"M local", local.Order(), local.ToInternal, local.FromInternal, local.ToInternalCols, local.FromInternalCols},
				{"M plain", plain.Order(), plain.ToInternal, plain.FromInternal, plain.ToInternalCols, plain.FromInternalCols},
			} {
				x := randomWeights(rng, n, p) // row-major n x p
				cols := make([][]float64, p)
				for j := range cols {
					cols[j] = make([]float64, n)
				}
				m.toC(cols, x)
				for j := 0; j < p; j++ {
					for r := 0; r < n; r++ {
						i := r
						if m.order != nil {
							i = int(m.order[r])
						}
						if cols[j][r] != x[i*p+j] {
							t.Fatalf("%s n=%d workers=%d: ToInternalCols column %d row %d is not point %d's entry", m.name, n, workers, j, r, i)
						}
					}
				}
				col, one := make([]float64, n), make([]float64, n)
				for i := range col {
					col[i] = x[i*p+2]
				}
				m.to(one, col)
				if !slices.Equal(one, cols[2]) {
					t.Fatalf("%s n=%d workers=%d: ToInternal differs from column 2 of ToInternalCols", m.name, n, workers)
				}
				back := make([]float64, n*p)
				m.fromC(back, cols)
				if !slices.Equal(back, x) {
					t.Fatalf("%s n=%d workers=%d: FromInternalCols(ToInternalCols(x)) != x", m.name, n, workers)
				}
				m.from(col, cols[1])
				for i := range col {
					if col[i] != x[i*p+1] {
						t.Fatalf("%s n=%d: FromInternal of column 1 differs at %d", m.name, n, i)
					}
				}
			}
			func() {
				defer func() {
					if r := recover(); r != "sparse: ToInternalCols: length mismatch" {
						t.Fatalf("panic = %v, want the length-mismatch message", r)
					}
				}()
				bp.ToInternalCols([][]float64{make([]float64, n)}, make([]float64, 2*n))
			}()
			func() {
				defer func() {
					if r := recover(); r != "sparse: FromInternalCols: length mismatch" {
						t.Fatalf("panic = %v, want the length-mismatch message", r)
					}
				}()
				// Consistent lengths, but one row short of the pattern.
				local.FromInternalCols(make([]float64, n-1), [][]float64{make([]float64, n-1)})
			}()
		}
	}
}

// TestMPatternFillNonFinitePoint: a non-finite weight of point i spoils the rows of M of the
// points S_i = {i} ∪ N(i) (every entry of v_i v_i^T in them meets it); Fill names the smallest
// such point over all bad weights, in the caller's numbering, for any worker count, with and
// without the refill plan and the breadth-first relabelling.
func TestMPatternFillNonFinitePoint(t *testing.T) {
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(61, 62))
	const n, k = 3000, 10
	nbr := randomGraph(rng, n, k)
	w := randomWeights(rng, n, k)
	want := n
	for q, i := range []int{2900, 1700} {
		w[i*k+3] = []float64{math.Inf(1), math.NaN()}[q]
		want = min(want, i)
		for _, c := range nbr[i*k : i*k+k] {
			want = min(want, int(c))
		}
	}
	wantMsg := fmt.Sprintf("point %d:", want)
	for _, local := range []bool{false, true} {
		for _, workers := range []int{1, 2, 5} {
			for _, plan := range []bool{false, true} {
				name := fmt.Sprintf("local=%v workers=%d plan=%v", local, workers, plan)
				p := testPattern(t, local, n, k, nbr, workers)
				if plan {
					if err := p.PrepareRefill(ctx, workers); err != nil {
						t.Fatal(err)
					}
				}
				if err := p.Fill(ctx, w, workers); !errors.Is(err, ErrNonFinite) || !strings.Contains(err.Error(), wantMsg) {
					t.Fatalf("%s: error %v, want ErrNonFinite naming %q", name, err, wantMsg)
				}
			}
		}
	}
}

// TestShiftInvertPatternNamesPoint: a shift far above every eigenvalue of M makes each leaf
// supernode fail at its first column (and skips the rest); for a local pattern the error names
// the caller's point of the smallest such column, the same as the point-order pattern's rule,
// for any worker count. It used to name a row of the relabelled matrix.
func TestShiftInvertPatternNamesPoint(t *testing.T) {
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(71, 72))
	const n, k = 2000, 10
	nbr := randomGraph(rng, n, k)
	w := randomWeights(rng, n, k)
	for _, local := range []bool{false, true} {
		for _, workers := range []int{1, 2, 3} {
			p := testPattern(t, local, n, k, nbr, workers)
			if err := p.Fill(ctx, w, workers); err != nil {
				t.Fatal(err)
			}
			op, err := NewShiftInvertPattern(ctx, p, SymbolicOptions{Workers: workers})
			if err != nil {
				t.Fatal(err)
			}
			// Expected: the smallest caller's point over the leaves' first columns.
			s := op.Symbolic()
			want := n
			for t32 := int32(0); t32 < int32(s.ns); t32++ {
				if len(s.sched.children[t32]) > 0 {
					continue
				}
				col := s.perm[s.sFirst[t32]]
				if local {
					col = int(p.order[col])
				}
				want = min(want, col)
			}
			err = op.SetShift(1e6) // ||M||_inf is O(1) for these weights
			var npd *NotPositiveDefiniteError
			if !errors.As(err, &npd) || npd.Column != want {
				t.Errorf("local=%v workers=%d: got %v, want column (point) %d", local, workers, err, want)
			}
		}
	}
}

// testPattern builds M's pattern for the neighbour graph nbr: NewMPatternLocal (relabelled
// rows) when local, NewMPattern (point order) otherwise.
func testPattern(t *testing.T, local bool, n, k int, nbr []int32, workers int) *MPattern {
	t.Helper()
	newPattern := NewMPattern
	if local {
		newPattern = NewMPatternLocal
	}
	p, err := newPattern(context.Background(), n, k, nbr, workers)
	if err != nil {
		t.Fatal(err)
	}
	return p
}
