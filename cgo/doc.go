// Package cgo registers OpenBLAS/LAPACKE as the kernels backend; under the purego tag (or without cgo) it registers gonum's native Go.
package cgo
