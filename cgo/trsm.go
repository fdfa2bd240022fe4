//go:build !purego

package cgo

/*
#cgo CFLAGS: -O3 -Wno-psabi
#include <string.h>

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define GLLE_TCLONES __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define GLLE_TCLONES
#endif

// Eight rows of the right-hand side travel together as one vector per column.
typedef double glle_v8d __attribute__((vector_size(64)));

#define GLLE_TRSM_MAXN 128

// glle_trsm_rlt overwrites the m x n row-major b (leading dimension ldb) with b L^{-T} for the
// n x n lower triangular row-major l (ldl), unit diagonal when unit != 0: each row x of the
// result solves L x^T = b_row^T by forward substitution,
//   x[j] = (b[j] - sum_{q<j} L[j][q] x[q]) / L[j][j].
// Rows are taken eight at a time and transposed into a column-major tile, so that each step
// is a vector operation across the eight rows; the sum over q runs in four interleaved partial
// sums added in a fixed order. Every row's arithmetic is the same whatever tile it falls in
// (the last tile is padded with zero rows), so splitting the rows between calls does not
// change any result. n <= GLLE_TRSM_MAXN.
GLLE_TCLONES
void glle_trsm_rlt(int m, int n, const double *l, int ldl, double *b, int ldb, int unit) {
	glle_v8d tile[GLLE_TRSM_MAXN];
	double inv[GLLE_TRSM_MAXN];
	for (int j = 0; j < n; j++) inv[j] = unit ? 1.0 : 1.0 / l[(long)j * ldl + j];
	for (int r0 = 0; r0 < m; r0 += 8) {
		int rows = m - r0 < 8 ? m - r0 : 8;
		for (int q = 0; q < n; q++) {
			glle_v8d v = {0, 0, 0, 0, 0, 0, 0, 0};
			for (int r = 0; r < rows; r++) v[r] = b[(long)(r0 + r) * ldb + q];
			tile[q] = v;
		}
		for (int j = 0; j < n; j++) {
			const double *lj = l + (long)j * ldl;
			glle_v8d s0 = {0, 0, 0, 0, 0, 0, 0, 0}, s1 = s0, s2 = s0, s3 = s0;
			int q = 0;
			for (; q + 4 <= j; q += 4) {
				s0 += lj[q] * tile[q];
				s1 += lj[q + 1] * tile[q + 1];
				s2 += lj[q + 2] * tile[q + 2];
				s3 += lj[q + 3] * tile[q + 3];
			}
			for (; q < j; q++) s0 += lj[q] * tile[q];
			glle_v8d x = tile[j] - ((s0 + s1) + (s2 + s3));
			if (!unit) x *= inv[j];
			tile[j] = x;
		}
		for (int r = 0; r < rows; r++) {
			double *br = b + (long)(r0 + r) * ldb;
			for (int q = 0; q < n; q++) br[q] = tile[q][r];
		}
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
