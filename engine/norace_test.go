//go:build !race

package engine

// raceEnabled reports whether the tests run under the race detector, which changes what some
// of them can assert: its sync.Pool drops a quarter of the values put in it, at random.
const raceEnabled = false
