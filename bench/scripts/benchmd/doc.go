// Command benchmd writes BENCHMARKS.md from the saved outputs of make bench and glle-bench bench (make benchmarks-md).
package main
