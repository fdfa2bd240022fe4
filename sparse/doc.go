// Package sparse assembles B = I-W and M = (I-W)^T (I-W) in CSR form, factors B (LU) or M (Cholesky) supernodally and finds M's smallest eigenpairs.
package sparse
