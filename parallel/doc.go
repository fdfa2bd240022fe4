// Package parallel runs per-point work over contiguous index ranges on an errgroup worker pool.
package parallel
