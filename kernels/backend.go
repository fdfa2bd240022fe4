package kernels

import (
	"sync/atomic"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/gonum"
	"gonum.org/v1/gonum/lapack"
	lapackgonum "gonum.org/v1/gonum/lapack/gonum"
)

// Backend is the BLAS/LAPACK implementation the large dense kernels run on (GEMM blocks of the
// brute-force kNN, supernodal blocks of the sparse Cholesky, the dense eigensolver oracle).
// The default is gonum's native Go; the cgo package registers OpenBLAS/LAPACKE unless the
// build has the purego tag. Small per-point kernels (k around 10) are hand-written Go in
// both builds: at that size a cgo call costs more than the arithmetic.
type Backend interface {
	// Name identifies the backend in reports ("gonum" or "openblas").
	Name() string
	BLAS() blas.Float64
	LAPACK() lapack.Float64
}

type native struct{}

func (native) Name() string           { return "gonum" }
func (native) BLAS() blas.Float64     { return gonum.Implementation{} }
func (native) LAPACK() lapack.Float64 { return lapackgonum.Implementation{} }

// Native is gonum's pure-Go backend.
var Native Backend = native{}

var current atomic.Value

func init() { current.Store(&holder{Native}) }

type holder struct{ b Backend }

// Use selects the backend for every later call. It is meant to be called from an init
// function (the cgo package does); it is safe for concurrent use.
func Use(b Backend) {
	if b == nil {
		panic("kernels: nil backend")
	}
	current.Store(&holder{b})
}

// Current returns the selected backend.
func Current() Backend { return current.Load().(*holder).b }
