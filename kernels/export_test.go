package kernels

// CholeskySmall exposes the unblocked Cholesky to the benchmarks.
var CholeskySmall = choleskySmall
