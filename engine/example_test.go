package engine_test

import (
	"context"
	"fmt"

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
