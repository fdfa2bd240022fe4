// Package kernels holds the per-point dense linear algebra and the BLAS/LAPACK backend switch.
package kernels
