package engine

import (
	"fmt"
)

// InputError reports a problem with the data or settings a caller passed in.
type InputError struct {
	Msg string
}

// Error returns the one-line message: the problem and its fix.
func (e *InputError) Error() string { return e.Msg }

func inputErr(format string, a ...any) error { return &InputError{Msg: fmt.Sprintf(format, a...)} }

// DegenerateError reports geometry the chosen method cannot handle: all points identical,
// singular direct-sampling matrices, a disconnected neighbourhood graph, zero temperatures.
type DegenerateError struct {
	// Kind names the problem: "identical-points", "singular-gamma", "disconnected-graph",
	// "zero-gram", "nonfinite", "exact-reconstruction", "no-spectral-gap" (the sparse
	// eigensolver found no usable gap: a fit's, or a generation's from a fit whose own
	// eigenvalues are not positive; a generation's at a covariance scale too large for an
	// otherwise sound fit is an *InputError).
	Kind string
	// Count is the number of points (or components for "disconnected-graph") affected.
	Count int
	// Example is one affected point index (-1 when not applicable).
	Example int
	// Msg is the full one-line message, including the suggested fix.
	Msg string
}

// Error returns the one-line message: the problem, its count and its fix.
func (e *DegenerateError) Error() string { return e.Msg }
