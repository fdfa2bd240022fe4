// Package cgo registers OpenBLAS/LAPACKE as the kernels backend; under the purego tag it registers gonum's native Go.
package cgo
