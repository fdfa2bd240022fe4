// Package dataio reads and writes the data files of the benchmarks: NumPy .npy arrays and CSV/text matrices, with atomic writes.
package dataio
