//go:build cgo && !purego

package cgo

/*
#cgo CFLAGS: -O3 -Wno-psabi
#include <stdint.h>
#include <string.h>
#include "glle_simd.h"
#define GLLE_INLINE static inline __attribute__((always_inline))

// Block triangular-solve steps for nrhs interleaved right-hand sides (y[i*nrhs + r]): one pass
// over L serves the whole block. GLLE_BLOCK_KERNELS(B) defines the steps for a chunk of B
// right-hand sides (columns c .. c+B-1 of the interleaved rows, stride S = nrhs; tv holds B
// values per row) with B a literal, so the accumulators live in registers; blocks wider than 4
// run in chunks of 4. The forward products take one row of L at a time (one stream for the
// prefetcher; at n = 200k this beat groups of 4 or 8 rows by 1.5x), the backward ones one row
// at a time too, last row to first and each row from its end, so that the backward pass is one
// descending stream (at n = 100k 14% and 22% faster than groups of four rows read forwards for
// 2 and 4 right-hand sides; no significant change for 8).
#define GLLE_BLOCK_KERNELS(B) \
GLLE_INLINE void glle_bfwd_node_##B(const double *p, int w, int mu, const int32_t *rows, \
		double *y, double *tv, int c0, int from, double *rec, int S) { \
	double *xc = y + (int64_t)c0 * S; \
	for (int i = 0; i < w; i++) { \
		const double *li = p + (int64_t)i * w; \
		double s0[B], s1[B]; \
		for (int r = 0; r < B; r++) { s0[r] = xc[i * S + r]; s1[r] = 0; } \
		int j = 0; \
		for (; j + 2 <= i; j += 2) \
			for (int r = 0; r < B; r++) { \
				s0[r] -= li[j] * xc[j * S + r]; \
				s1[r] -= li[j + 1] * xc[(j + 1) * S + r]; \
			} \
		if (j < i) \
			for (int r = 0; r < B; r++) s0[r] -= li[j] * xc[j * S + r]; \
		for (int r = 0; r < B; r++) xc[i * S + r] = (s0[r] + s1[r]) / li[i]; \
	} \
	const double *l = p + (int64_t)w * w; \
	for (int k = 0; k < mu; k++) { \
		const double *lk = l + (int64_t)k * w; \
		double a0[B], a1[B]; \
		for (int r = 0; r < B; r++) a0[r] = a1[r] = 0; \
		int j = 0; \
		for (; j + 2 <= w; j += 2) \
			for (int r = 0; r < B; r++) { \
				a0[r] += lk[j] * xc[j * S + r]; \
				a1[r] += lk[j + 1] * xc[(j + 1) * S + r]; \
			} \
		if (j < w) \
			for (int r = 0; r < B; r++) a0[r] += lk[j] * xc[j * S + r]; \
		for (int r = 0; r < B; r++) tv[k * B + r] = a0[r] + a1[r]; \
	} \
	for (int q = 0; q < from; q++) { \
		double *yr = y + (int64_t)rows[q] * S; \
		for (int r = 0; r < B; r++) yr[r] -= tv[q * B + r]; \
	} \
	for (int q = from; q < mu; q++) \
		for (int r = 0; r < B; r++) rec[(int64_t)(q - from) * S + r] = tv[q * B + r]; \
} \
GLLE_INLINE void glle_bbwd_node_##B(const double *p, int w, int mu, const int32_t *rows, \
		double *y, double *tv, int c0, int S) { \
	double *restrict xc = y + (int64_t)c0 * S; \
	const double *l = p + (int64_t)w * w; \
	for (int q = 0; q < mu; q++) { \
		const double *yr = y + (int64_t)rows[q] * S; \
		for (int r = 0; r < B; r++) tv[q * B + r] = yr[r]; \
	} \
	for (int k = mu - 1; k >= 0; k--) { \
		const double *restrict lk = l + (int64_t)k * w; \
		double yk[B]; \
		for (int r = 0; r < B; r++) yk[r] = tv[k * B + r]; \
		for (int j = w - 1; j >= 0; j--) \
			for (int r = 0; r < B; r++) xc[j * S + r] -= lk[j] * yk[r]; \
	} \
	for (int i = w - 1; i >= 0; i--) { \
		const double *restrict li = p + (int64_t)i * w; \
		double v[B]; \
		for (int r = 0; r < B; r++) { \
			v[r] = xc[i * S + r] / li[i]; \
			xc[i * S + r] = v[r]; \
		} \
		for (int j = i - 1; j >= 0; j--) \
			for (int r = 0; r < B; r++) xc[j * S + r] -= li[j] * v[r]; \
	} \
}

GLLE_BLOCK_KERNELS(1)
GLLE_BLOCK_KERNELS(3)

// Explicit-vector kernels for chunks of 2 and 4 (GLLE_VEC_KERNELS(B, V): V a B-wide vector of
// doubles, rows of the chunk loaded and stored with memcpy, which compiles to unaligned moves).
#define GLLE_VEC_KERNELS(B, V) \
GLLE_INLINE V glle_ld_##B(const double *p) { V v; memcpy(&v, p, sizeof v); return v; } \
GLLE_INLINE void glle_st_##B(double *p, V v) { memcpy(p, &v, sizeof v); } \
GLLE_INLINE void glle_bfwd_node_##B(const double *p, int w, int mu, const int32_t *rows, \
		double *y, double *tv, int c0, int from, double *rec, int S) { \
	double *xc = y + (int64_t)c0 * S; \
	const V zero = {0}; \
	for (int i = 0; i < w; i++) { \
		const double *li = p + (int64_t)i * w; \
		V s0 = glle_ld_##B(xc + i * S), s1 = zero; \
		int j = 0; \
		for (; j + 2 <= i; j += 2) { \
			s0 -= li[j] * glle_ld_##B(xc + j * S); \
			s1 -= li[j + 1] * glle_ld_##B(xc + (j + 1) * S); \
		} \
		if (j < i) s0 -= li[j] * glle_ld_##B(xc + j * S); \
		glle_st_##B(xc + i * S, (s0 + s1) / li[i]); \
	} \
	const double *l = p + (int64_t)w * w; \
	for (int k = 0; k < mu; k++) { \
		const double *lk = l + (int64_t)k * w; \
		V a0 = zero, a1 = zero, a2 = zero, a3 = zero; \
		int j = 0; \
		for (; j + 4 <= w; j += 4) { \
			a0 += lk[j] * glle_ld_##B(xc + j * S); \
			a1 += lk[j + 1] * glle_ld_##B(xc + (j + 1) * S); \
			a2 += lk[j + 2] * glle_ld_##B(xc + (j + 2) * S); \
			a3 += lk[j + 3] * glle_ld_##B(xc + (j + 3) * S); \
		} \
		for (; j < w; j++) a0 += lk[j] * glle_ld_##B(xc + j * S); \
		glle_st_##B(tv + k * B, (a0 + a1) + (a2 + a3)); \
	} \
	for (int q = 0; q < from; q++) { \
		double *yr = y + (int64_t)rows[q] * S; \
		glle_st_##B(yr, glle_ld_##B(yr) - glle_ld_##B(tv + q * B)); \
	} \
	for (int q = from; q < mu; q++) glle_st_##B(rec + (int64_t)(q - from) * S, glle_ld_##B(tv + q * B)); \
} \
GLLE_INLINE void glle_bbwd_node_##B(const double *p, int w, int mu, const int32_t *rows, \
		double *y, double *tv, int c0, int S) { \
	double *restrict xc = y + (int64_t)c0 * S; \
	const double *l = p + (int64_t)w * w; \
	for (int q = 0; q < mu; q++) glle_st_##B(tv + q * B, glle_ld_##B(y + (int64_t)rows[q] * S)); \
	for (int k = mu - 1; k >= 0; k--) { \
		const double *restrict lk = l + (int64_t)k * w; \
		const V yk = glle_ld_##B(tv + k * B); \
		for (int j = w - 1; j >= 0; j--) glle_st_##B(xc + j * S, glle_ld_##B(xc + j * S) - lk[j] * yk); \
	} \
	for (int i = w - 1; i >= 0; i--) { \
		const double *restrict li = p + (int64_t)i * w; \
		const V v = glle_ld_##B(xc + i * S) / li[i]; \
		glle_st_##B(xc + i * S, v); \
		for (int j = i - 1; j >= 0; j--) glle_st_##B(xc + j * S, glle_ld_##B(xc + j * S) - li[j] * v); \
	} \
}

typedef double glle_v2d __attribute__((vector_size(16)));
GLLE_VEC_KERNELS(2, glle_v2d)
GLLE_VEC_KERNELS(4, glle_v4d)

// glle_bfwd_chunks runs supernode t's forward step on the chunks of at most 4 right-hand sides.
GLLE_INLINE void glle_bfwd_chunks(const double *p, int w, int mu, const int32_t *rows, double *y,
		double *tv, int c0, int from, double *rec, int nrhs) {
	switch (nrhs) { // the stride a literal too
	case 1: glle_bfwd_node_1(p, w, mu, rows, y, tv, c0, from, rec, 1); return;
	case 2: glle_bfwd_node_2(p, w, mu, rows, y, tv, c0, from, rec, 2); return;
	case 3: glle_bfwd_node_3(p, w, mu, rows, y, tv, c0, from, rec, 3); return;
	case 4: glle_bfwd_node_4(p, w, mu, rows, y, tv, c0, from, rec, 4); return;
	}
	for (int c = 0; c < nrhs; c += 4) {
		double *yc = y + c, *rc = rec ? rec + c : 0;
		switch (nrhs - c < 4 ? nrhs - c : 4) {
		case 1: glle_bfwd_node_1(p, w, mu, rows, yc, tv, c0, from, rc, nrhs); break;
		case 2: glle_bfwd_node_2(p, w, mu, rows, yc, tv, c0, from, rc, nrhs); break;
		case 3: glle_bfwd_node_3(p, w, mu, rows, yc, tv, c0, from, rc, nrhs); break;
		default: glle_bfwd_node_4(p, w, mu, rows, yc, tv, c0, from, rc, nrhs);
		}
	}
}

GLLE_INLINE void glle_bbwd_chunks(const double *p, int w, int mu, const int32_t *rows, double *y,
		double *tv, int c0, int nrhs) {
	switch (nrhs) {
	case 1: glle_bbwd_node_1(p, w, mu, rows, y, tv, c0, 1); return;
	case 2: glle_bbwd_node_2(p, w, mu, rows, y, tv, c0, 2); return;
	case 3: glle_bbwd_node_3(p, w, mu, rows, y, tv, c0, 3); return;
	case 4: glle_bbwd_node_4(p, w, mu, rows, y, tv, c0, 4); return;
	}
	for (int c = 0; c < nrhs; c += 4) {
		double *yc = y + c;
		switch (nrhs - c < 4 ? nrhs - c : 4) {
		case 1: glle_bbwd_node_1(p, w, mu, rows, yc, tv, c0, nrhs); break;
		case 2: glle_bbwd_node_2(p, w, mu, rows, yc, tv, c0, nrhs); break;
		case 3: glle_bbwd_node_3(p, w, mu, rows, yc, tv, c0, nrhs); break;
		default: glle_bbwd_node_4(p, w, mu, rows, yc, tv, c0, nrhs);
		}
	}
}

GLLE_CLONES_V3
void glle_sn_forward_block(const double *lx, const int64_t *lxp, const int32_t *first,
		const int64_t *rowp, const int32_t *rowsAll, double *y, double *tv, int nrhs, int t0, int t1,
		const int32_t *split, const int64_t *recoff, double *recs) {
	for (int t = t0; t < t1; t++) {
		const int c0 = first[t], w = first[t + 1] - c0;
		const int mu = (int)(rowp[t + 1] - rowp[t]) - w;
		const int from = split ? split[t] : mu;
		glle_bfwd_chunks(lx + lxp[t], w, mu, rowsAll + rowp[t] + w, y, tv, c0, from,
			split ? recs + recoff[t] * nrhs : 0, nrhs);
	}
}

GLLE_CLONES_V3
void glle_sn_backward_block(const double *lx, const int64_t *lxp, const int32_t *first,
		const int64_t *rowp, const int32_t *rowsAll, double *y, double *tv, int nrhs, int t0, int t1) {
	for (int t = t1 - 1; t >= t0; t--) {
		const int c0 = first[t], w = first[t + 1] - c0;
		const int mu = (int)(rowp[t + 1] - rowp[t]) - w;
		glle_bbwd_chunks(lx + lxp[t], w, mu, rowsAll + rowp[t] + w, y, tv, c0, nrhs);
	}
}
*/
import "C"

import (
	"unsafe"

	"glle/kernels"
)

// ForwardSupernodesBlock implements kernels.SupernodalBlockSolver with C loops.
func (openblas) ForwardSupernodesBlock(s *kernels.Supernodes, y, tmp []float64, nrhs, t0, t1 int, split []int32, recOff []int64, recs []float64) {
	if t0 >= t1 {
		return
	}
	checkSupernodesBlock(s, y, tmp, nrhs, t0, t1)
	sp, ro, rc := recordArgs(split, recOff, recs, t1, nrhs, "cgo: ForwardSupernodesBlock record arrays too short")
	C.glle_sn_forward_block(lxPtr(s), (*C.int64_t)(unsafe.Pointer(&s.LXPtr[0])), (*C.int32_t)(unsafe.Pointer(&s.First[0])),
		(*C.int64_t)(unsafe.Pointer(&s.RowPtr[0])), rowsPtr(s), (*C.double)(unsafe.Pointer(&y[0])), tmpPtr(tmp),
		C.int(nrhs), C.int(t0), C.int(t1), sp, ro, rc)
}

// BackwardSupernodesBlock implements kernels.SupernodalBlockSolver with C loops.
func (openblas) BackwardSupernodesBlock(s *kernels.Supernodes, y, tmp []float64, nrhs, t0, t1 int) {
	if t0 >= t1 {
		return
	}
	checkSupernodesBlock(s, y, tmp, nrhs, t0, t1)
	C.glle_sn_backward_block(lxPtr(s), (*C.int64_t)(unsafe.Pointer(&s.LXPtr[0])), (*C.int32_t)(unsafe.Pointer(&s.First[0])),
		(*C.int64_t)(unsafe.Pointer(&s.RowPtr[0])), rowsPtr(s), (*C.double)(unsafe.Pointer(&y[0])), tmpPtr(tmp),
		C.int(nrhs), C.int(t0), C.int(t1))
}

// checkSupernodesBlock is checkSupernodes for nrhs interleaved right-hand sides.
func checkSupernodesBlock(s *kernels.Supernodes, y, tmp []float64, nrhs, t0, t1 int) {
	if nrhs < 1 || t0 < 0 || t1 < t0 || len(s.First) < t1+1 || len(s.LXPtr) < t1+1 || len(s.RowPtr) < t1+1 ||
		int64(len(s.LX)) < s.LXPtr[t1] || int64(len(s.Rows)) < s.RowPtr[t1] ||
		len(y) == 0 || len(y) < int(s.First[len(s.First)-1])*nrhs {
		panic("cgo: supernodal block solve arrays do not match")
	}
	for t := t0; t < t1; t++ {
		if mu := int(s.RowPtr[t+1]-s.RowPtr[t]) - int(s.First[t+1]-s.First[t]); mu*nrhs > len(tmp) {
			panic("cgo: supernodal block solve scratch too short")
		}
	}
}
