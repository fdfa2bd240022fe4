//go:build cgo && !purego

package cgo

/*
#cgo CFLAGS: -O3 -Wno-psabi
#include <string.h>
#include "glle_simd.h"

// Eight rows of the right-hand side travel together as one vector (glle_v8d) per column.
typedef long long glle_v8l __attribute__((vector_size(64)));

#define GLLE_TRSM_MAXN 128

// glle_transpose8 transposes the 8 x 8 block whose rows are r[0..7] in place (three rounds of
// two-vector shuffles).
static inline __attribute__((always_inline)) void glle_transpose8(glle_v8d *r) {
	const glle_v8l lo1 = {0, 8, 2, 10, 4, 12, 6, 14}, hi1 = {1, 9, 3, 11, 5, 13, 7, 15};
	const glle_v8l lo2 = {0, 1, 8, 9, 4, 5, 12, 13}, hi2 = {2, 3, 10, 11, 6, 7, 14, 15};
	const glle_v8l lo4 = {0, 1, 2, 3, 8, 9, 10, 11}, hi4 = {4, 5, 6, 7, 12, 13, 14, 15};
	glle_v8d t[8], u[8];
	for (int i = 0; i < 8; i += 2) {
		t[i] = __builtin_shuffle(r[i], r[i + 1], lo1);
		t[i + 1] = __builtin_shuffle(r[i], r[i + 1], hi1);
	}
	for (int i = 0; i < 8; i += 4) {
		u[i] = __builtin_shuffle(t[i], t[i + 2], lo2);
		u[i + 2] = __builtin_shuffle(t[i], t[i + 2], hi2);
		u[i + 1] = __builtin_shuffle(t[i + 1], t[i + 3], lo2);
		u[i + 3] = __builtin_shuffle(t[i + 1], t[i + 3], hi2);
	}
	for (int i = 0; i < 4; i++) {
		r[i] = __builtin_shuffle(u[i], u[i + 4], lo4);
		r[i + 4] = __builtin_shuffle(u[i], u[i + 4], hi4);
	}
}

// glle_trsm_block solves columns [j0, j0+JB) of a tile of R vectors (8R rows; tile[q*R + r]
// holds column q of rows 8r..8r+7): first x_j -= sum_{q<j0} L[j][q] x_q for the JB columns
// together (JB*R independent accumulators, each summed in the order q = 0, 1, ...), then the
// small triangle inside the block, x_j -= L[j][q] x_q for j0 <= q < j in that order, and the
// division by the pivot. R and JB are constants after inlining.
static inline __attribute__((always_inline)) void glle_trsm_block(const int R, const int JB, int j0,
		const double *l, int ldl, const double *inv, glle_v8d *tile, int unit) {
	glle_v8d acc[4][3];
	const double *lr[4];
	for (int jj = 0; jj < JB; jj++) {
		lr[jj] = l + (long)(j0 + jj) * ldl;
		for (int r = 0; r < R; r++) acc[jj][r] = (glle_v8d){0, 0, 0, 0, 0, 0, 0, 0};
	}
	for (int q = 0; q < j0; q++) {
		glle_v8d t[3];
		for (int r = 0; r < R; r++) t[r] = tile[q * R + r];
		for (int jj = 0; jj < JB; jj++) {
			double c = lr[jj][q];
			for (int r = 0; r < R; r++) acc[jj][r] += c * t[r];
		}
	}
	for (int jj = 0; jj < JB; jj++) {
		int j = j0 + jj;
		for (int r = 0; r < R; r++) {
			glle_v8d x = tile[j * R + r] - acc[jj][r];
			for (int qq = 0; qq < jj; qq++) x -= lr[jj][j0 + qq] * tile[(j0 + qq) * R + r];
			if (!unit) x *= inv[j];
			tile[j * R + r] = x;
		}
	}
}

// glle_trsm_tile solves the n columns of a tile of R vectors, four columns at a time.
static inline __attribute__((always_inline)) void glle_trsm_tile(const int R, int n,
		const double *l, int ldl, const double *inv, glle_v8d *tile, int unit) {
	int j0 = 0;
	for (; j0 + 4 <= n; j0 += 4) glle_trsm_block(R, 4, j0, l, ldl, inv, tile, unit);
	switch (n - j0) {
	case 3: glle_trsm_block(R, 3, j0, l, ldl, inv, tile, unit); break;
	case 2: glle_trsm_block(R, 2, j0, l, ldl, inv, tile, unit); break;
	case 1: glle_trsm_block(R, 1, j0, l, ldl, inv, tile, unit); break;
	}
}

// glle_trsm_rlt overwrites the m x n row-major b (leading dimension ldb) with b L^{-T} for the
// n x n lower triangular row-major l (ldl), unit diagonal when unit != 0: each row x of the
// result solves L x^T = b_row^T by forward substitution,
//   x[j] = (b[j] - sum_{q<j} L[j][q] x[q]) / L[j][j].
// Rows are taken up to 24 at a time (three vectors of eight; eight at a time without AVX-512,
// whose 32 vector registers hold the 12 accumulators) and transposed into a column-major tile
// (8 x 8 blocks by shuffles), so that each step is a vector operation across the rows. Every
// row's arithmetic is the same whatever tile it falls in (padding rows are zero), so splitting
// the rows between calls does not change any result. n <= GLLE_TRSM_MAXN.
GLLE_CLONES_V4
void glle_trsm_rlt(int m, int n, const double *l, int ldl, double *b, int ldb, int unit) {
	glle_v8d tile[GLLE_TRSM_MAXN * 3];
	double inv[GLLE_TRSM_MAXN];
	double *td = (double *)tile;
	int maxr = 1;
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
	if (__builtin_cpu_supports("avx512f")) maxr = 3;
#endif
	for (int j = 0; j < n; j++) inv[j] = unit ? 1.0 : 1.0 / l[(long)j * ldl + j];
	int q8 = n & ~7;
	for (int r0 = 0; r0 < m;) {
		int rows = m - r0;
		int R = rows > 16 ? 3 : (rows > 8 ? 2 : 1);
		if (R > maxr) R = maxr;
		if (rows > 8 * R) rows = 8 * R;
		for (int v = 0; v < R; v++) {
			const double *bv = b + (long)(r0 + 8 * v) * ldb;
			int nr = rows - 8 * v < 8 ? rows - 8 * v : 8;
			for (int q0 = 0; q0 < q8; q0 += 8) {
				glle_v8d r[8];
				for (int i = 0; i < 8; i++) {
					if (i < nr) memcpy(&r[i], bv + (long)i * ldb + q0, sizeof r[i]);
					else r[i] = (glle_v8d){0, 0, 0, 0, 0, 0, 0, 0};
				}
				glle_transpose8(r);
				for (int c = 0; c < 8; c++) tile[(q0 + c) * R + v] = r[c];
			}
			for (int q = q8; q < n; q++) {
				double *dq = td + (q * R + v) * 8;
				for (int i = 0; i < 8; i++) dq[i] = i < nr ? bv[(long)i * ldb + q] : 0;
			}
		}
		switch (R) {
		case 3: glle_trsm_tile(3, n, l, ldl, inv, tile, unit); break;
		case 2: glle_trsm_tile(2, n, l, ldl, inv, tile, unit); break;
		default: glle_trsm_tile(1, n, l, ldl, inv, tile, unit); break;
		}
		for (int v = 0; v < R; v++) {
			double *bv = b + (long)(r0 + 8 * v) * ldb;
			int nr = rows - 8 * v < 8 ? rows - 8 * v : 8;
			for (int q0 = 0; q0 < q8; q0 += 8) {
				glle_v8d r[8];
				for (int c = 0; c < 8; c++) r[c] = tile[(q0 + c) * R + v];
				glle_transpose8(r);
				for (int i = 0; i < nr; i++) memcpy(bv + (long)i * ldb + q0, &r[i], sizeof r[i]);
			}
			for (int q = q8; q < n; q++) {
				const double *sq = td + (q * R + v) * 8;
				for (int i = 0; i < nr; i++) bv[(long)i * ldb + q] = sq[i];
			}
		}
		r0 += rows;
	}
}
*/
import "C"

import "unsafe"

// TrsmMaxN is the largest triangle TrsmRLT accepts.
const TrsmMaxN = C.GLLE_TRSM_MAXN

// TrsmRLT implements kernels.PanelSolver with a C loop: b = b L^{-T} for the n x n lower
// triangular l (row-major, leading dimension ldl; unit diagonal when unit) and the m x n b
// (ldb). OpenBLAS 0.3.21's DTRSM runs these narrow panels at 1-10 GFlop/s on AVX-512 CPUs.
func (openblas) TrsmRLT(m, n int, l []float64, ldl int, b []float64, ldb int, unit bool) {
	if m == 0 || n == 0 {
		return
	}
	if n > TrsmMaxN || ldl < n || ldb < n || len(l) < (n-1)*ldl+n || len(b) < (m-1)*ldb+n {
		panic("cgo: TrsmRLT shape mismatch")
	}
	u := C.int(0)
	if unit {
		u = 1
	}
	C.glle_trsm_rlt(C.int(m), C.int(n), (*C.double)(unsafe.Pointer(&l[0])), C.int(ldl),
		(*C.double)(unsafe.Pointer(&b[0])), C.int(ldb), u)
}

// PanelMaxN implements kernels.PanelSolver.
func (openblas) PanelMaxN() int { return TrsmMaxN }
