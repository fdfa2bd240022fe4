package knn

import (
	"context"
	"path/filepath"
	"slices"
	"testing"

	"glle/bench/dataio"
)

// TestScurveFixture compares with scikit-learn's neighbours on the shared S-curve fixture.
func TestScurveFixture(t *testing.T) {
	// The engine's copy of ../shared/fixtures (engine TestFixtureCopies checks it), read with
	// the project's fuzzed .npy reader; it skipped when ../shared was absent before session 32.
	dir := filepath.Join("..", "testdata", "fixtures", "scurve1000")
	X, err := dataio.ReadNPYFile(filepath.Join(dir, "X.npy"))
	if err != nil {
		t.Fatal(err)
	}
	ref, err := dataio.ReadNPYFile(filepath.Join(dir, "knn.npy"))
	if err != nil {
		t.Fatal(err)
	}
	if len(X.Shape) != 2 || X.Float == nil || len(ref.Shape) != 2 || ref.Int == nil || ref.Shape[0] != X.Shape[0] {
		t.Fatalf("unexpected fixture shapes %v %v", X.Shape, ref.Shape)
	}
	n, d := X.Shape[0], X.Shape[1]
	kr := ref.Shape[1]
	// scikit-learn's kneighbors on the training set may or may not list the point itself.
	withSelf := true
	for i := 0; i < n; i++ {
		if ref.Int[i*kr] != int64(i) {
			withSelf = false
			break
		}
	}
	k, skip := kr, 0
	if withSelf {
		k, skip = kr-1, 1
	}
	t.Logf("fixture n=%d d=%d, reference k=%d (self listed: %v)", n, d, kr, withSelf)
	for _, me := range methods {
		idx, dist, err := Graph(context.Background(), X.Float, n, d, k, Options{Method: me})
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i < n; i++ {
			got := idx[i*k : i*k+k]
			want := make([]int32, k)
			for p := range want {
				want[p] = int32(ref.Int[i*kr+skip+p])
			}
			gs, ws := slices.Clone(got), slices.Clone(want)
			slices.Sort(gs)
			slices.Sort(ws)
			if !slices.Equal(gs, ws) {
				t.Fatalf("%v row %d: neighbour set %v, scikit-learn %v", me, i, got, want)
			}
			// Same order, except where our distances tie.
			for p := range got {
				if got[p] != want[p] {
					j := slices.Index(got, want[p])
					if dist[i*k+p] != dist[i*k+j] {
						t.Fatalf("%v row %d: order %v, scikit-learn %v, distances %v", me, i, got, want, dist[i*k:i*k+k])
					}
				}
			}
		}
	}
}
