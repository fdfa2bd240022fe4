//go:build !purego

package cgo

/*
#cgo LDFLAGS: -lopenblas -llapacke -lm
#include <stdlib.h>
#include <strings.h>
#include <cpuid.h>

void openblas_set_num_threads(int num_threads);
char* openblas_get_config(void);
char* openblas_get_corename(void);
// Present in DYNAMIC_ARCH builds of OpenBLAS (Debian's); weak so that other builds still link.
extern void gotoblas_dynamic_init(void) __attribute__((weak));
extern void gotoblas_dynamic_quit(void) __attribute__((weak));

static int glle_is_amd(void) {
	unsigned int a, b, c, d;
	if (!__get_cpuid(0, &a, &b, &c, &d)) return 0;
	return b == 0x68747541 && d == 0x69746e65 && c == 0x444d4163; // "AuthenticAMD"
}

// glle_prefer_zen switches a DYNAMIC_ARCH OpenBLAS from its AVX-512 (SkylakeX/Cooperlake)
// kernels to its Zen kernels on AMD CPUs, unless OPENBLAS_CORETYPE is set. It returns 1 when
// it switched.
static int glle_prefer_zen(void) {
	const char *core;
	if (getenv("OPENBLAS_CORETYPE") != NULL) return 0;
	if (!gotoblas_dynamic_init || !gotoblas_dynamic_quit) return 0;
	if (!glle_is_amd()) return 0;
	core = openblas_get_corename();
	if (core == NULL || (strcasecmp(core, "cooperlake") != 0 && strcasecmp(core, "skylakex") != 0)) return 0;
	gotoblas_dynamic_quit();
	setenv("OPENBLAS_CORETYPE", "ZEN", 1);
	gotoblas_dynamic_init();
	unsetenv("OPENBLAS_CORETYPE");
	return 1;
}
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

// Config returns OpenBLAS's build configuration string and the kernel set in use.
func Config() string {
	s := C.GoString(C.openblas_get_config()) + "; core " + C.GoString(C.openblas_get_corename())
	if switchedToZen {
		s += " (switched from AVX-512 kernels on this AMD CPU; OPENBLAS_CORETYPE overrides)"
	}
	return s
}

// switchedToZen records that init replaced OpenBLAS's AVX-512 kernels by its Zen kernels.
var switchedToZen bool

func init() {
	// Our worker pool calls BLAS from several goroutines at once; OpenBLAS's own threads
	// would oversubscribe the cores.
	C.openblas_set_num_threads(1)
	// OpenBLAS 0.3.21 (Debian 12) detects AVX-512 AMD CPUs (Zen 4) as Cooperlake; there its
	// AVX-512 DTRSM runs 2-3x slower than its Zen (AVX2) kernels on the narrow panels of the
	// sparse factorization (measured: sparse Factor at n = 100k 209 -> 168 ms, solves equal).
	switchedToZen = C.glle_prefer_zen() == 1
	kernels.Use(openblas{})
}
