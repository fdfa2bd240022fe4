// Package sparse assembles M = (I-W)^T (I-W) in CSR form, factors it with a sparse Cholesky and finds its smallest eigenpairs.
package sparse
