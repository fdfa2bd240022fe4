//go:build purego || !cgo

package cgo

import "glle/kernels"

// Enabled reports whether this build links OpenBLAS.
const Enabled = false

// Config describes the backend of this build.
func Config() string { return "purego: gonum native BLAS/LAPACK" }

func init() { kernels.Use(kernels.Native) }
