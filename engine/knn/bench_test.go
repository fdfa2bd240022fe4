package knn

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// swissRoll returns n points of a 3-D Swiss roll.
func swissRoll(rng *rand.Rand, n int) []float64 {
	x := make([]float64, 3*n)
	for i := 0; i < n; i++ {
		t := 1.5 * math.Pi * (1 + 2*rng.Float64())
		x[3*i] = t * math.Cos(t)
		x[3*i+1] = 21 * rng.Float64()
		x[3*i+2] = t * math.Sin(t)
	}
	return x
}

func BenchmarkKDTree(b *testing.B) {
	ctx := context.Background()
	for _, n := range []int{10000, 100000} {
		for _, d := range []int{3, 8} {
			k := 10
			rng := rand.New(rand.NewPCG(1, uint64(d)))
			var x []float64
			if d == 3 {
				x = swissRoll(rng, n)
			} else {
				x = randData(rng, n, d)
			}
			name := fmt.Sprintf("n=%d/d=%d/k=%d", n, d, k)
			b.Run(name+"/build", func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					if _, err := buildTree(ctx, x, n, d, 0); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "points/s")
			})
			t, err := buildTree(ctx, x, n, d, 0)
			if err != nil {
				b.Fatal(err)
			}
			// One query per iteration on one worker's workspace, in leaf order as Graph
			// runs them: ns/op is the per-query cost on one core, allocs/op must be 0.
			b.Run(name+"/query", func(b *testing.B) {
				s := t.newSearcher(k)
				outI := make([]int32, k)
				outD := make([]float64, k)
				b.ReportAllocs()
				p := 0
				for b.Loop() {
					s.run(t.pts[p*d:p*d+d], int32(p))
					s.h.sortTo(outI, outD)
					if p++; p == n {
						p = 0
					}
				}
				b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "points/s")
			})
			// The whole parallel Graph call (build + queries), all cores.
			b.Run(name+"/graph", func(b *testing.B) {
				benchGraph(ctx, b, x, n, d, k, Options{Method: KDTree})
			})
		}
	}
}

func BenchmarkBrute(b *testing.B) {
	ctx := context.Background()
	for _, n := range []int{10000} {
		d, k := 64, 10
		x := randData(rand.New(rand.NewPCG(2, 2)), n, d)
		b.Run(fmt.Sprintf("n=%d/d=%d/k=%d", n, d, k), func(b *testing.B) {
			benchGraph(ctx, b, x, n, d, k, Options{Method: Brute})
		})
	}
}

// benchGraph times whole Graph calls with opt on x (checked once against brute force first) in
// points/s.
func benchGraph(ctx context.Context, b *testing.B, x []float64, n, d, k int, opt Options) {
	idx, _, err := Graph(ctx, x, n, d, k, opt)
	if err != nil {
		b.Fatal(err)
	}
	checkSampled(b, x, n, d, k, idx)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if _, _, err := Graph(ctx, x, n, d, k, opt); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "points/s")
}

// checkSampled compares the neighbour distances of a few points of the graph idx with a
// brute-force scan (exact up to ties: the sorted distance lists must agree).
func checkSampled(b *testing.B, x []float64, n, d, k int, idx []int32) {
	b.Helper()
	dist := func(i, j int) float64 {
		s := 0.0
		for c := 0; c < d; c++ {
			e := x[i*d+c] - x[j*d+c]
			s += e * e
		}
		return s
	}
	all := make([]float64, 0, n)
	for _, i := range []int{0, n / 2, n - 1} {
		all = all[:0]
		for j := 0; j < n; j++ {
			if j != i {
				all = append(all, dist(i, j))
			}
		}
		slices.Sort(all)
		for j := 0; j < k; j++ {
			if got := dist(i, int(idx[i*k+j])); got != all[j] {
				b.Fatalf("point %d: neighbour %d at squared distance %v, brute force %v", i, j, got, all[j])
			}
		}
	}
}
