//go:build cgo && !purego

package cgo

/*
#cgo LDFLAGS: -lopenblas -llapacke -lm
#include <stdlib.h>
#include <strings.h>
#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#define GLLE_X86 1
#endif

void openblas_set_num_threads(int num_threads);
char* openblas_get_config(void);
char* openblas_get_corename(void);
// Present in DYNAMIC_ARCH builds of OpenBLAS (Debian's); weak so that other builds still link.
extern void gotoblas_dynamic_init(void) __attribute__((weak));
extern void gotoblas_dynamic_quit(void) __attribute__((weak));

#ifdef GLLE_X86
static int glle_is_amd(void) {
	unsigned int a, b, c, d;
	if (!__get_cpuid(0, &a, &b, &c, &d)) return 0;
	return b == 0x68747541 && d == 0x69746e65 && c == 0x444d4163; // "AuthenticAMD"
}

// glle_isa returns 2 when the CPU and the OS support AVX-512 (F, CD, DQ, BW, VL: the set of
// OpenBLAS's SkylakeX kernels), 1 for AVX2 with FMA, 0 otherwise (CPUID leaves 1 and 7, and
// XGETBV for the register state the OS saves).
static int glle_isa(void) {
	unsigned int a, b, c, d, xlo, xhi;
	if (!__get_cpuid(1, &a, &b, &c, &d)) return 0;
	int fma = (c >> 12) & 1, osxsave = (c >> 27) & 1, avx = (c >> 28) & 1;
	if (!osxsave || !avx || !fma) return 0;
	__asm__ volatile("xgetbv" : "=a"(xlo), "=d"(xhi) : "c"(0));
	if ((xlo & 0x6) != 0x6) return 0; // XMM and YMM state
	if (!__get_cpuid_count(7, 0, &a, &b, &c, &d)) return 0;
	if (!((b >> 5) & 1)) return 0; // AVX2
	int f = (b >> 16) & 1, dq = (b >> 17) & 1, cd = (b >> 28) & 1, bw = (b >> 30) & 1, vl = (b >> 31) & 1;
	if (f && dq && cd && bw && vl && (xlo & 0xe0) == 0xe0) return 2; // opmask, ZMM state
	return 1;
}
#else
// Not x86: no CPUID; OpenBLAS's own kernel choice stands.
static int glle_is_amd(void) { return 0; }
static int glle_isa(void) { return 0; }
#endif

// glle_modern reports whether core names one of OpenBLAS's AVX2 or AVX-512 kernel sets.
static int glle_modern(const char *core) {
	static const char *names[] = {"haswell", "skylakex", "cooperlake", "sapphirerapids", "zen", NULL};
	for (int i = 0; names[i] != NULL; i++) {
		if (strcasecmp(core, names[i]) == 0) return 1;
	}
	return 0;
}

// glle_choose_core returns the kernel set a DYNAMIC_ARCH OpenBLAS should switch to, or NULL
// to keep its own choice (always when OPENBLAS_CORETYPE is set):
//   - on AMD CPUs it detects as Cooperlake or SkylakeX (Zen 4), its Zen kernels;
//   - on CPUs with AVX2 and FMA for which it fell back to older kernels because it does not
//     know the model (0.3.21 runs Intel family 6 model 207 on its Prescott kernels), the
//     newest set the CPU supports: SkylakeX (AVX-512) or Haswell (AVX2), Zen on AMD.
static const char *glle_choose_core(void) {
	const char *core;
	int isa;
	if (getenv("OPENBLAS_CORETYPE") != NULL) return NULL;
	if (!gotoblas_dynamic_init || !gotoblas_dynamic_quit) return NULL;
	core = openblas_get_corename();
	if (core == NULL) return NULL;
	if (glle_is_amd()) {
		if (strcasecmp(core, "cooperlake") == 0 || strcasecmp(core, "skylakex") == 0) return "ZEN";
	}
	if (glle_modern(core)) return NULL;
	isa = glle_isa();
	if (isa == 0) return NULL;
	if (glle_is_amd()) return "ZEN";
	return isa == 2 ? "SKYLAKEX" : "HASWELL";
}

// glle_switch_core reloads OpenBLAS's kernel table for the named kernel set.
static void glle_switch_core(const char *name) {
	gotoblas_dynamic_quit();
	setenv("OPENBLAS_CORETYPE", name, 1);
	gotoblas_dynamic_init();
	unsetenv("OPENBLAS_CORETYPE");
}
*/
import "C"

import (
	"unsafe"

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
	if switchedFrom != "" {
		s += " (switched from its " + switchedFrom + " kernels on this CPU; OPENBLAS_CORETYPE overrides)"
	}
	return s
}

// coreName returns the name of the kernel set OpenBLAS runs.
func coreName() string { return C.GoString(C.openblas_get_corename()) }

// isaLevel returns 2 when the CPU and OS support AVX-512 (F, CD, DQ, BW, VL), 1 for AVX2 with
// FMA, 0 otherwise.
func isaLevel() int { return int(C.glle_isa()) }

// modernCore reports whether name is one of OpenBLAS's AVX2 or AVX-512 kernel sets.
func modernCore(name string) bool {
	cs := C.CString(name)
	defer C.free(unsafe.Pointer(cs))
	return C.glle_modern(cs) == 1
}

// switchedFrom names the kernel set OpenBLAS chose itself when init replaced it (see
// glle_choose_core), and is empty when init kept OpenBLAS's choice.
var switchedFrom string

func init() {
	// Our worker pool calls BLAS from several goroutines at once; OpenBLAS's own threads
	// would oversubscribe the cores.
	C.openblas_set_num_threads(1)
	// OpenBLAS 0.3.21 (Debian 12) detects AVX-512 AMD CPUs (Zen 4) as Cooperlake; there its
	// AVX-512 DTRSM runs 2-3x slower than its Zen (AVX2) kernels on the narrow panels of the
	// sparse factorization (measured: sparse Factor at n = 100k 209 -> 168 ms, solves equal).
	// It does not know Intel family 6 model 207 (Xeon, AVX-512) and runs it on its Prescott
	// (SSE3) kernels: DGEMM (n = 256..1024) 8-9 GFlop/s on one core against 47-66 GFlop/s with
	// its SkylakeX kernels, and the LU factorization at n = 1M 5.1-5.8 s against 2.2-2.7 s.
	if name := C.glle_choose_core(); name != nil {
		from := coreName()
		C.glle_switch_core(name)
		switchedFrom = from
	}
	kernels.Use(openblas{})
}
