package bench_test

import (
	"fmt"

	"gonum.org/v1/gonum/mat"

	"glle/bench"
)

// Trustworthiness scores how well an embedding keeps the k-neighbourhoods of the data. The
// unrolled intrinsic coordinates of the Swiss roll are a near-perfect 2-D embedding;
// squashing the roll flat along its depth axis mixes points from different turns.
func ExampleSwissRoll() {
	X, t := bench.SwissRoll(2000, 1)

	// Unrolled: the roll angle t and the height y.
	unrolled := mat.NewDense(2000, 2, nil)
	for i := range t {
		unrolled.Set(i, 0, t[i])
		unrolled.Set(i, 1, X.At(i, 1))
	}
	// Squashed: drop the z coordinate.
	squashed := X.Slice(0, 2000, 0, 2).(*mat.Dense)

	fmt.Printf("unrolled: trustworthiness %.2f, max |Spearman| with t %.2f\n",
		bench.Trustworthiness(X, unrolled, 10), bench.MaxAbsSpearman(unrolled, t))
	fmt.Printf("squashed: trustworthiness %.2f, max |Spearman| with t %.2f\n",
		bench.Trustworthiness(X, squashed, 10), bench.MaxAbsSpearman(squashed, t))
	// Output:
	// unrolled: trustworthiness 0.99, max |Spearman| with t 1.00
	// squashed: trustworthiness 0.81, max |Spearman| with t 0.27
}
