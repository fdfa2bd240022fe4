//go:build cgo && !purego

package cgo

/*
#cgo CFLAGS: -O3 -Wno-psabi
#include "glle_simd.h"

#define GLLE_GEMM_MAXK 32
#define GLLE_GEMM_NB 64

// glle_store4 stores minus four row vectors into rows of c (ldc), their first cols (<= 8
// stored) entries.
static inline void glle_store4(double *c0, int ldc, int cols, glle_v8d s0, glle_v8d s1,
		glle_v8d s2, glle_v8d s3) {
	if (cols >= 8) {
		glle_v8d r;
		r = -s0; __builtin_memcpy(c0, &r, 64);
		r = -s1; __builtin_memcpy(c0 + ldc, &r, 64);
		r = -s2; __builtin_memcpy(c0 + 2 * (long)ldc, &r, 64);
		r = -s3; __builtin_memcpy(c0 + 3 * (long)ldc, &r, 64);
		return;
	}
	for (int q = 0; q < cols; q++) {
		c0[q] = -s0[q];
		c0[ldc + q] = -s1[q];
		c0[2 * (long)ldc + q] = -s2[q];
		c0[3 * (long)ldc + q] = -s3[q];
	}
}

// glle_gemm_nt_neg sets the m x n row-major c (ldc) to -a b^T for the m x k row-major a (lda)
// and the n x k row-major b (ldb), k <= GLLE_GEMM_MAXK. Up to 64 columns of c at a time, that
// block of b is copied transposed into tiles of k x 8 (zero-padded); then each row of a, four
// at a time, is accumulated against every tile, one vector per row and tile, the sum over p in
// order p = 0, 1, ..., k-1.
GLLE_CLONES_V4
void glle_gemm_nt_neg(int m, int n, int k, const double *a, int lda, const double *b, int ldb,
		double *c, int ldc) {
	double bt[GLLE_GEMM_MAXK * GLLE_GEMM_NB] __attribute__((aligned(64)));
	for (int jb = 0; jb < n; jb += GLLE_GEMM_NB) {
		int nb = n - jb < GLLE_GEMM_NB ? n - jb : GLLE_GEMM_NB;
		int tiles = (nb + 7) / 8;
		for (int t = 0; t < tiles; t++) {
			double *tile = bt + t * 8 * k;
			int cols = nb - 8 * t < 8 ? nb - 8 * t : 8;
			for (int q = 0; q < cols; q++) {
				const double *bq = b + (long)(jb + 8 * t + q) * ldb;
				for (int p = 0; p < k; p++) tile[p * 8 + q] = bq[p];
			}
			for (int q = cols; q < 8; q++)
				for (int p = 0; p < k; p++) tile[p * 8 + q] = 0;
		}
		int i = 0;
		for (; i + 4 <= m; i += 4) {
			const double *a0 = a + (long)i * lda, *a1 = a0 + lda, *a2 = a1 + lda, *a3 = a2 + lda;
			int t = 0;
			// Two tiles together: eight independent accumulators hide the FMA latency.
			for (; t + 2 <= tiles; t += 2) {
				const glle_v8d *tl = (const glle_v8d *)(bt + t * 8 * k);
				const glle_v8d *tr = (const glle_v8d *)(bt + (t + 1) * 8 * k);
				glle_v8d s0 = {0, 0, 0, 0, 0, 0, 0, 0}, s1 = s0, s2 = s0, s3 = s0;
				glle_v8d r0 = s0, r1 = s0, r2 = s0, r3 = s0;
				for (int p = 0; p < k; p++) {
					glle_v8d v = tl[p], u = tr[p];
					double x0 = a0[p], x1 = a1[p], x2 = a2[p], x3 = a3[p];
					s0 += x0 * v;
					r0 += x0 * u;
					s1 += x1 * v;
					r1 += x1 * u;
					s2 += x2 * v;
					r2 += x2 * u;
					s3 += x3 * v;
					r3 += x3 * u;
				}
				glle_store4(c + (long)i * ldc + jb + 8 * t, ldc, 8, s0, s1, s2, s3);
				glle_store4(c + (long)i * ldc + jb + 8 * t + 8, ldc, nb - 8 * t - 8, r0, r1, r2, r3);
			}
			for (; t < tiles; t++) {
				const glle_v8d *tile = (const glle_v8d *)(bt + t * 8 * k);
				glle_v8d s0 = {0, 0, 0, 0, 0, 0, 0, 0}, s1 = s0, s2 = s0, s3 = s0;
				for (int p = 0; p < k; p++) {
					glle_v8d v = tile[p];
					s0 += a0[p] * v;
					s1 += a1[p] * v;
					s2 += a2[p] * v;
					s3 += a3[p] * v;
				}
				glle_store4(c + (long)i * ldc + jb + 8 * t, ldc, nb - 8 * t, s0, s1, s2, s3);
			}
		}
		for (; i < m; i++) {
			const double *a0 = a + (long)i * lda;
			for (int t = 0; t < tiles; t++) {
				const glle_v8d *tile = (const glle_v8d *)(bt + t * 8 * k);
				glle_v8d s0 = {0, 0, 0, 0, 0, 0, 0, 0};
				for (int p = 0; p < k; p++) s0 += a0[p] * tile[p];
				double *c0 = c + (long)i * ldc + jb + 8 * t;
				int cols = nb - 8 * t < 8 ? nb - 8 * t : 8;
				for (int q = 0; q < cols; q++) c0[q] = -s0[q];
			}
		}
	}
}
*/
import "C"

import "unsafe"

// GemmMaxK is the largest inner dimension GemmNTNeg accepts.
const GemmMaxK = C.GLLE_GEMM_MAXK

// GemmNTNeg implements kernels.NarrowGemmer with a C loop: c = -a b^T for the m x k a (row-major,
// leading dimension lda), the n x k b (ldb) and the m x n c (ldc). OpenBLAS's DGEMM spends most
// of the time of such small products (k <= 16, m and n a few dozen) outside its kernel.
func (openblas) GemmNTNeg(m, n, k int, a []float64, lda int, b []float64, ldb int, c []float64, ldc int) {
	if m == 0 || n == 0 {
		return
	}
	if k < 1 || k > GemmMaxK || lda < k || ldb < k || ldc < n ||
		len(a) < (m-1)*lda+k || len(b) < (n-1)*ldb+k || len(c) < (m-1)*ldc+n {
		panic("cgo: GemmNTNeg shape mismatch")
	}
	C.glle_gemm_nt_neg(C.int(m), C.int(n), C.int(k), (*C.double)(unsafe.Pointer(&a[0])), C.int(lda),
		(*C.double)(unsafe.Pointer(&b[0])), C.int(ldb), (*C.double)(unsafe.Pointer(&c[0])), C.int(ldc))
}

// GemmMaxKNarrow implements kernels.NarrowGemmer.
func (openblas) GemmMaxKNarrow() int { return GemmMaxK }
