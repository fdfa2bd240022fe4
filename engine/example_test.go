package engine_test

import (
	"context"
	"fmt"

	"gonum.org/v1/gonum/mat"

	"glle/bench"
	"glle/engine"
)

// Fit GLLE with the EM algorithm on a Swiss roll, draw two more embeddings and check that all
// of them unfold the roll.
func Example() {
	X, angle := bench.SwissRoll(2000, 1)
	ctx := context.Background()
	m, err := engine.Fit(ctx, X, engine.Settings{Method: engine.EM})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%s: n=%d k=%d p=%d, EM converged: %v\n", m.Method, m.N, m.K, m.Dim, m.Report.EMConverged)
	fmt.Printf("base: unfolded %v\n", bench.MaxAbsSpearman(m.Embedding, angle) > 0.98)
	for g := 0; g < 2; g++ {
		Y, _, err := m.Generate(ctx, 7, g, 1)
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Printf("generation %d: unfolded %v\n", g, bench.MaxAbsSpearman(Y, angle) > 0.98)
	}
	// Output:
	// em: n=2000 k=10 p=2, EM converged: true
	// base: unfolded true
	// generation 0: unfolded true
	// generation 1: unfolded true
}

// ExampleModel_GenerateTo draws several generations into one reused matrix and keeps a running
// mean of them: with the sparse solver (the default above 64 points) a loop over many
// generations allocates no N x Dim result per generation.
func ExampleModel_GenerateTo() {
	X, angle := bench.SwissRoll(2000, 1)
	ctx := context.Background()
	m, err := engine.Fit(ctx, X, engine.Settings{Method: engine.Direct})
	if err != nil {
		fmt.Println(err)
		return
	}
	var Y, mean mat.Dense
	const gens = 4
	for g := 0; g < gens; g++ {
		if _, err := m.GenerateTo(ctx, &Y, 7, g, 1, engine.FrameBase); err != nil {
			fmt.Println(err)
			return
		}
		if g == 0 {
			mean.CloneFrom(&Y)
		} else {
			mean.Add(&mean, &Y)
		}
	}
	mean.Scale(1.0/gens, &mean)
	r, c := Y.Dims()
	fmt.Printf("%d generations of %d x %d; their mean unfolded: %v\n", gens, r, c, bench.MaxAbsSpearman(&mean, angle) > 0.98)
	// Output:
	// 4 generations of 2000 x 2; their mean unfolded: true
}
