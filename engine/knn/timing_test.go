package knn

import (
	"context"
	"math/rand/v2"
	"testing"
	"time"
)

func TestVisits(t *testing.T) {
	ctx := context.Background()
	for _, d := range []int{3, 5, 8} {
		n := 40000
		x := randData(rand.New(rand.NewPCG(1, 1)), n, d)
		tr, _ := buildTree(ctx, x, n, d, 1)
		s := tr.newSearcher(10)
		st := time.Now()
		for p := 0; p < 2000; p++ {
			s.run(tr.pts[p*d:p*d+d], int32(p))
		}
		t.Logf("d=%d visits/query %.0f  %v/query", d, float64(visits)/2000, time.Since(st)/2000)
		visits = 0
	}
}
