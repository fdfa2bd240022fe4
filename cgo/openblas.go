//go:build !purego

package cgo

/*
#cgo LDFLAGS: -lopenblas -llapacke -lm
void openblas_set_num_threads(int num_threads);
char* openblas_get_config(void);
*/
import "C"

import (
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/lapack"
	blasnetlib "gonum.org/v1/netlib/blas/netlib"
	lapacknetlib "gonum.org/v1/netlib/lapack/netlib"

	"glle/kernels"
)

// Enabled reports whether this build links OpenBLAS.
const Enabled = true

type openblas struct{}

func (openblas) Name() string           { return "openblas" }
func (openblas) BLAS() blas.Float64     { return blasnetlib.Implementation{} }
func (openblas) LAPACK() lapack.Float64 { return lapacknetlib.Implementation{} }

// Config returns OpenBLAS's build configuration string.
func Config() string { return C.GoString(C.openblas_get_config()) }

func init() {
	// Our worker pool calls BLAS from several goroutines at once; OpenBLAS's own threads
	// would oversubscribe the cores.
	C.openblas_set_num_threads(1)
	kernels.Use(openblas{})
}
