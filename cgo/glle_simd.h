// glle_simd.h: what the C kernels of package cgo share — the target-clone attributes (the
// loader picks the clone the CPU supports), the vector types and the unaligned vector load.
#ifndef GLLE_SIMD_H
#define GLLE_SIMD_H

#include <string.h>

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
// Clones for x86-64-v3 (AVX2, FMA) and the baseline.
#define GLLE_CLONES_V3 __attribute__((target_clones("arch=x86-64-v3", "default")))
// Clones for x86-64-v4 (AVX-512), x86-64-v3 and the baseline.
#define GLLE_CLONES_V4 __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define GLLE_CLONES_V3
#define GLLE_CLONES_V4
#endif

typedef double glle_v4d __attribute__((vector_size(32)));
typedef double glle_v8d __attribute__((vector_size(64)));

static inline glle_v4d glle_ld4(const double *p) {
	glle_v4d v;
	memcpy(&v, p, sizeof v);
	return v;
}

#endif
