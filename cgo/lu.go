//go:build cgo && !purego

package cgo

/*
#cgo CFLAGS: -O3 -Wno-psabi
#include <math.h>
#include "glle_simd.h"

// glle_lhsum returns the sum of v's lanes, in a fixed order.
static inline double glle_lhsum(glle_v4d v) {
	return (v[0] + v[2]) + (v[1] + v[3]);
}

// glle_lu_result is glle_lu_crout's result (returned by value: a Go pointer to a result
// would make the caller's variable escape to the heap).
typedef struct {
	int col;          // -1, or the first column whose pivot failed
	double pivot;     // that pivot
	double lastPivot; // the last column's pivot before its replacement (last only)
} glle_lu_result;

// glle_lu_crout factors columns [0, w) of the m-row panels pl and pu (leading dimension lda)
// in place with Crout's order, as the sparse package's Go kernel (LUFactor.luCroutGo) does: for each
// column j, the pivot d_j (already reduced by L[j][:j] . U[:j][j]); then for each row i > j,
// L[i][j] = (a_ij - L[i][:j] . U[:j][j]) / d_j and U[j][i] = a_ji - U[:j][i] . L[j][:j] (the
// second stored in pu's row i); a later pivot is reduced by L[i][j] U[j][i] as soon as both are
// known. The dot products run four entries at a time (the sums' order differs from the Go
// kernel's: the bits do, not the accuracy; eight-wide vectors were slower below 48 columns). It returns -1, or the first column whose pivot
// magnitude is below tol (its pivot in .pivot); with last, the last column's computed pivot is
// returned in .lastPivot and replaced by 1.
GLLE_CLONES_V4
glle_lu_result glle_lu_crout(double *pl, double *pu, int m, int lda, int w, double tol, int last) {
	glle_lu_result res = {-1, 0, 0};
	for (int j = 0; j < w; j++) {
		const double *lj = pl + (long)j * lda, *uj = pu + (long)j * lda;
		double d = pl[(long)j * lda + j];
		if (last && j == w - 1) {
			res.lastPivot = d;
			d = 1;
		} else if (!(fabs(d) >= tol)) {
			res.col = j;
			res.pivot = d;
			return res;
		}
		pl[(long)j * lda + j] = d;
		pu[(long)j * lda + j] = d;
		const double inv = 1 / d;
		const int j4 = j & ~3;
		int i = j + 1;
		for (; i + 1 < m; i += 2) {
			double *l0 = pl + (long)i * lda, *u0 = pu + (long)i * lda;
			double *l1 = l0 + lda, *u1 = u0 + lda;
			double s0 = 0, t0 = 0, s1 = 0, t1 = 0;
			if (j4 > 0) {
				glle_v4d a0 = {0}, b0 = {0}, a1 = {0}, b1 = {0};
				for (int k = 0; k < j4; k += 4) {
					const glle_v4d vu = glle_ld4(uj + k), vl = glle_ld4(lj + k);
					a0 += glle_ld4(l0 + k) * vu;
					b0 += glle_ld4(u0 + k) * vl;
					a1 += glle_ld4(l1 + k) * vu;
					b1 += glle_ld4(u1 + k) * vl;
				}
				s0 = glle_lhsum(a0), t0 = glle_lhsum(b0), s1 = glle_lhsum(a1), t1 = glle_lhsum(b1);
			}
			for (int k = j4; k < j; k++) {
				s0 += l0[k] * uj[k];
				t0 += u0[k] * lj[k];
				s1 += l1[k] * uj[k];
				t1 += u1[k] * lj[k];
			}
			const double x0 = (l0[j] - s0) * inv, y0 = u0[j] - t0;
			const double x1 = (l1[j] - s1) * inv, y1 = u1[j] - t1;
			l0[j] = x0;
			u0[j] = y0;
			l1[j] = x1;
			u1[j] = y1;
			if (i < w) l0[i] -= x0 * y0;
			if (i + 1 < w) l1[i + 1] -= x1 * y1;
		}
		for (; i < m; i++) {
			double *l0 = pl + (long)i * lda, *u0 = pu + (long)i * lda;
			double s0 = 0, t0 = 0;
			if (j4 > 0) {
				glle_v4d a0 = {0}, b0 = {0};
				for (int k = 0; k < j4; k += 4) {
					a0 += glle_ld4(l0 + k) * glle_ld4(uj + k);
					b0 += glle_ld4(u0 + k) * glle_ld4(lj + k);
				}
				s0 = glle_lhsum(a0), t0 = glle_lhsum(b0);
			}
			for (int k = j4; k < j; k++) {
				s0 += l0[k] * uj[k];
				t0 += u0[k] * lj[k];
			}
			const double x0 = (l0[j] - s0) * inv, y0 = u0[j] - t0;
			l0[j] = x0;
			u0[j] = y0;
			if (i < w) l0[i] -= x0 * y0;
		}
	}
	return res;
}
*/
import "C"

import "unsafe"

// PanelLU implements kernels.PanelLUer with a C loop whose dot products run four entries at a
// time (the Go kernel's are scalar): minima of 16 runs, 96 x 96 54 us against 133-216 us in
// Go, 24 x 24 1.7 against 2.4 us, 12 x 12 0.40 against 0.43 us.
func (openblas) PanelLU(pl, pu []float64, m, lda, w int, tol float64, last bool) (col int, pivot, lastPivot float64) {
	if w == 0 {
		return -1, 0, 0
	}
	if w > m || lda < w || len(pl) < (m-1)*lda+w || len(pu) < (m-1)*lda+w {
		panic("cgo: PanelLU shape mismatch")
	}
	l := C.int(0)
	if last {
		l = 1
	}
	r := C.glle_lu_crout((*C.double)(unsafe.Pointer(&pl[0])), (*C.double)(unsafe.Pointer(&pu[0])),
		C.int(m), C.int(lda), C.int(w), C.double(tol), l)
	return int(r.col), float64(r.pivot), float64(r.lastPivot)
}
