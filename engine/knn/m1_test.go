package knn

import (
	"context"
	"math/rand/v2"
	"testing"
	"time"
)

func TestMillion(t *testing.T) {
	ctx := context.Background()
	n := 1000000
	for _, kind := range []string{"swissroll", "uniform"} {
		rng := rand.New(rand.NewPCG(1, 2))
		var x []float64
		if kind == "uniform" {
			x = make([]float64, 3*n)
			for i := range x {
				x[i] = rng.Float64()
			}
		} else {
			x = swissRoll(rng, n)
		}
		st := time.Now()
		tr, _ := buildTree(ctx, x, n, 3, 2)
		bt := time.Since(st)
		idx := make([]int32, n*10)
		dist := make([]float64, n*10)
		st = time.Now()
		tr.graph(ctx, 10, 2, idx, dist)
		qt := time.Since(st)
		st = time.Now()
		Graph(ctx, x, n, 3, 10, Options{})
		gt := time.Since(st)
		t.Logf("%s 1M d=3 k=10: build %v, queries %v (%.2f us/point/core), Graph total %v", kind, bt, qt, qt.Seconds()*2/float64(n)*1e6, gt)
	}
}
