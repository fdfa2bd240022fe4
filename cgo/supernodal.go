//go:build cgo && !purego

package cgo

/*
#cgo CFLAGS: -O3 -Wno-psabi
#include <stdint.h>
#include <string.h>
#include "glle_simd.h"

// The kernels are compiled for x86-64-v3 (AVX2, FMA) and for the baseline (GLLE_CLONES_V3).

// glle_dot returns sum_j a[j] b[j] with eight partial sums.
static inline double glle_dot(const double *a, const double *b, int n) {
	glle_v4d s0 = {0, 0, 0, 0}, s1 = {0, 0, 0, 0};
	int j = 0;
	for (; j + 8 <= n; j += 8) {
		s0 += glle_ld4(a + j) * glle_ld4(b + j);
		s1 += glle_ld4(a + j + 4) * glle_ld4(b + j + 4);
	}
	if (j + 4 <= n) {
		s0 += glle_ld4(a + j) * glle_ld4(b + j);
		j += 4;
	}
	s0 += s1;
	double s = (s0[0] + s0[1]) + (s0[2] + s0[3]);
	for (; j < n; j++) s += a[j] * b[j];
	return s;
}

// glle_axpy_down adds a x[j] to y[j] for j = n-1 down to 0, four at a time from the end
// (each block of four in memory order), so that x is read as one descending stream.
static inline void glle_axpy_down(double *restrict y, const double *restrict x, double a, int n) {
	const glle_v4d av = {a, a, a, a};
	int j = n;
	for (; j >= 4; j -= 4) {
		glle_v4d yv = glle_ld4(y + j - 4) + av * glle_ld4(x + j - 4);
		memcpy(y + j - 4, &yv, sizeof yv);
	}
	for (j--; j >= 0; j--) y[j] += a * x[j];
}

typedef int64_t glle_v4i __attribute__((vector_size(32)));

// glle_hsum4 returns {sum(a0), sum(a1), sum(a2), sum(a3)}.
static inline glle_v4d glle_hsum4(glle_v4d a0, glle_v4d a1, glle_v4d a2, glle_v4d a3) {
	const glle_v4i ev = {0, 4, 2, 6}, od = {1, 5, 3, 7}, lo = {0, 1, 4, 5}, hi = {2, 3, 6, 7};
	glle_v4d s01 = __builtin_shuffle(a0, a1, ev) + __builtin_shuffle(a0, a1, od);
	glle_v4d s23 = __builtin_shuffle(a2, a3, ev) + __builtin_shuffle(a2, a3, od);
	return __builtin_shuffle(s01, s23, lo) + __builtin_shuffle(s01, s23, hi);
}

// glle_rows_dot sets tv[k] = sum_j l[k w + j] x[j] for the mu rows of a panel of width
// w <= 4 NV, x zero-padded to 4 NV entries: four rows at a time with the row block of x in
// registers. Each row is read as NV vectors of four; the last vector of a row reads up to three
// entries past it (the next rows'), which the padding zeros cancel, so the loop stops where
// those reads would leave the panel and the rows left take glle_dot.
static inline __attribute__((always_inline)) void glle_rows_dot(const double *l, const double *x,
		double *tv, int w, int mu, const int NV) {
	glle_v4d xv[4];
	for (int v = 0; v < NV; v++) xv[v] = glle_ld4(x + 4 * v);
	int k = 0;
	for (; k + 4 <= mu && (int64_t)(k + 3) * w + 4 * NV <= (int64_t)mu * w; k += 4) {
		const double *r0 = l + (int64_t)k * w, *r1 = r0 + w, *r2 = r1 + w, *r3 = r2 + w;
		glle_v4d a0 = xv[0] * glle_ld4(r0), a1 = xv[0] * glle_ld4(r1);
		glle_v4d a2 = xv[0] * glle_ld4(r2), a3 = xv[0] * glle_ld4(r3);
		for (int v = 1; v < NV; v++) {
			a0 += xv[v] * glle_ld4(r0 + 4 * v);
			a1 += xv[v] * glle_ld4(r1 + 4 * v);
			a2 += xv[v] * glle_ld4(r2 + 4 * v);
			a3 += xv[v] * glle_ld4(r3 + 4 * v);
		}
		glle_v4d sv = glle_hsum4(a0, a1, a2, a3);
		memcpy(tv + k, &sv, sizeof sv);
	}
	for (; k < mu; k++) tv[k] = glle_dot(l + (int64_t)k * w, x, w);
}

// glle_rows_axpy subtracts sum_k tv[k] l[k w + j] from xc[j], j < w <= 4 NV, for the mu rows
// of a panel: the sums stay in registers (two sets of NV vectors, alternating rows) and are
// subtracted once. Rows are read last to first (one descending stream); a row reads up to
// three entries past it (the next rows') into lanes that are never stored, except the last
// rows, whose reads would leave the panel: they are read from a zero-padded copy.
static inline __attribute__((always_inline)) void glle_rows_axpy(const double *l, const double *tv,
		double *xc, int w, int mu, const int NV) {
	glle_v4d a[4], b[4];
	double buf[16] = {0};
	for (int v = 0; v < NV; v++) a[v] = b[v] = (glle_v4d){0, 0, 0, 0};
	int k = mu - 1;
	for (; k >= 0 && (int64_t)k * w + 4 * NV > (int64_t)mu * w; k--) {
		memcpy(buf, l + (int64_t)k * w, sizeof(double) * w);
		const glle_v4d t = {tv[k], tv[k], tv[k], tv[k]};
		for (int v = 0; v < NV; v++) a[v] += t * glle_ld4(buf + 4 * v);
	}
	for (; k >= 1; k -= 2) {
		const double *r1 = l + (int64_t)k * w, *r0 = r1 - w;
		const glle_v4d t1 = {tv[k], tv[k], tv[k], tv[k]};
		const glle_v4d t0 = {tv[k - 1], tv[k - 1], tv[k - 1], tv[k - 1]};
		for (int v = NV - 1; v >= 0; v--) b[v] += t1 * glle_ld4(r1 + 4 * v);
		for (int v = NV - 1; v >= 0; v--) a[v] += t0 * glle_ld4(r0 + 4 * v);
	}
	if (k == 0) {
		const glle_v4d t = {tv[0], tv[0], tv[0], tv[0]};
		for (int v = 0; v < NV; v++) b[v] += t * glle_ld4(l + 4 * v);
	}
	for (int v = 0; v < NV; v++) {
		glle_v4d sv = a[v] + b[v];
		memcpy(buf + 4 * v, &sv, sizeof sv);
	}
	for (int j = 0; j < w; j++) xc[j] -= buf[j];
}

// GLLE_NARROW is the widest supernode the register kernels above take.
#define GLLE_NARROW 16

// GLLE_SPLIT_MAXW bounds the width of the supernodes whose backward steps are halved (their
// accumulator lives on the C stack).
#define GLLE_SPLIT_MAXW 4096

// glle_fwd_diag solves with the diagonal block p of a supernode of width w, in place on its
// columns xc.
static inline void glle_fwd_diag(const double *p, double *xc, int w) {
	for (int i = 0; i < w; i++) {
		const double *li = p + (int64_t)i * w;
		xc[i] = (xc[i] - glle_dot(li, xc, i)) / li[i];
	}
}

GLLE_CLONES_V3
void glle_sn_forward(const double *lx, const int64_t *lxp, const int32_t *first,
		const int64_t *rowp, const int32_t *rowsAll, double *y, double *tv, int t0, int t1,
		const int32_t *split, const int64_t *recoff, double *recs) {
	for (int t = t0; t < t1; t++) {
		const int c0 = first[t], w = first[t + 1] - c0;
		const int mu = (int)(rowp[t + 1] - rowp[t]) - w;
		const int32_t *rows = rowsAll + rowp[t] + w;
		const double *p = lx + lxp[t];
		double *xc = y + c0;
		glle_fwd_diag(p, xc, w);
		const double *l = p + (int64_t)w * w;
		if (w <= GLLE_NARROW && mu > 4) {
			double x[GLLE_NARROW] = {0};
			memcpy(x, xc, sizeof(double) * w);
			switch ((w + 3) >> 2) {
			case 1: glle_rows_dot(l, x, tv, w, mu, 1); break;
			case 2: glle_rows_dot(l, x, tv, w, mu, 2); break;
			case 3: glle_rows_dot(l, x, tv, w, mu, 3); break;
			default: glle_rows_dot(l, x, tv, w, mu, 4); break;
			}
		} else {
			for (int k = 0; k < mu; k++) tv[k] = glle_dot(l + (int64_t)k * w, xc, w);
		}
		int from = split ? split[t] : mu;
		for (int k = 0; k < from; k++) y[rows[k]] -= tv[k];
		if (from < mu) memcpy(recs + recoff[t], tv + from, sizeof(double) * (mu - from));
	}
}

// GLLE_SPLIT_MIN is the smallest below-diagonal block (rows times width) whose steps are
// split: a hand-off between goroutines costs about a microsecond, streaming this block ~10 us.
#define GLLE_SPLIT_MIN 16384

// glle_sn_bwd_halves reports whether the backward step of a supernode of width w with mu
// below-rows sums its below-rows in two halves (rows [0, mu/2) straight into the columns,
// rows [mu/2, mu) into a separate accumulator added afterwards), which lets two goroutines
// share the step with the bits of the whole (glle_sn_bwd_low, glle_sn_bwd_high).
static inline int glle_sn_bwd_halves(int w, int mu) {
	return w > GLLE_NARROW && (int64_t)w * mu >= GLLE_SPLIT_MIN && w <= GLLE_SPLIT_MAXW;
}

// glle_bwd_rows subtracts sum_{k in [k0, k1)} tv[k] l[k w + j] from x[j], j < w, one row at a
// time from the last to the first and each row from its end: the backward solve walks the
// factor from its end to its start, and this order keeps the walk a single descending stream
// for the hardware prefetcher. (Groups of 4 rows, each read forwards, cut the stream into
// short pieces: on a kNN matrix with n = 1M a sequential backward solve took 181 ms that way
// against 122 ms this way, medians of 6.)
static inline void glle_bwd_rows(const double *l, const double *tv, double *x, int w, int k0, int k1) {
	for (int k = k1 - 1; k >= k0; k--) glle_axpy_down(x, l + (int64_t)k * w, -tv[k], w);
}

// glle_bwd_diag adds acc (if not NULL) to the w columns xc, then solves with the transposed
// diagonal block p.
static inline void glle_bwd_diag(const double *p, double *restrict xc, const double *acc, int w) {
	if (acc) {
		for (int j = 0; j < w; j++) xc[j] += acc[j];
	}
	for (int i = w - 1; i >= 0; i--) {
		const double *li = p + (int64_t)i * w;
		const double v = xc[i] / li[i];
		xc[i] = v;
		glle_axpy_down(xc, li, -v, i);
	}
}

GLLE_CLONES_V3
void glle_sn_backward(const double *lx, const int64_t *lxp, const int32_t *first,
		const int64_t *rowp, const int32_t *rowsAll, double *y, double *tv, int t0, int t1) {
	double acc[GLLE_SPLIT_MAXW];
	for (int t = t1 - 1; t >= t0; t--) {
		const int c0 = first[t], w = first[t + 1] - c0;
		const int mu = (int)(rowp[t + 1] - rowp[t]) - w;
		const int32_t *rows = rowsAll + rowp[t] + w;
		const double *p = lx + lxp[t];
		double *restrict xc = y + c0;
		const double *l = p + (int64_t)w * w;
		for (int k = 0; k < mu; k++) tv[k] = y[rows[k]];
		if (w <= GLLE_NARROW && mu > 1) {
			switch ((w + 3) >> 2) {
			case 1: glle_rows_axpy(l, tv, xc, w, mu, 1); break;
			case 2: glle_rows_axpy(l, tv, xc, w, mu, 2); break;
			case 3: glle_rows_axpy(l, tv, xc, w, mu, 3); break;
			default: glle_rows_axpy(l, tv, xc, w, mu, 4); break;
			}
		} else if (glle_sn_bwd_halves(w, mu)) {
			memset(acc, 0, sizeof(double) * w);
			glle_bwd_rows(l, tv, acc, w, mu / 2, mu);
			glle_bwd_rows(l, tv, xc, w, 0, mu / 2);
			glle_bwd_diag(p, xc, acc, w);
			continue;
		} else {
			glle_bwd_rows(l, tv, xc, w, 0, mu);
		}
		glle_bwd_diag(p, xc, NULL, w);
	}
}

// The steps of one wide supernode split between two goroutines (kernels.SupernodalSplitter):
// each part performs its share of glle_sn_forward's or glle_sn_backward's operations on a
// supernode wider than GLLE_NARROW in the same order, so a split step has the whole step's bits.

GLLE_CLONES_V3
void glle_sn_fwd_diag(const double *lx, const int64_t *lxp, const int32_t *first, double *y, int t) {
	const int c0 = first[t], w = first[t + 1] - c0;
	glle_fwd_diag(lx + lxp[t], y + c0, w);
}

GLLE_CLONES_V3
void glle_sn_fwd_rows(const double *lx, const int64_t *lxp, const int32_t *first,
		const int64_t *rowp, const int32_t *rowsAll, double *y, double *tv, int t, int k0, int k1) {
	const int c0 = first[t], w = first[t + 1] - c0;
	const int32_t *rows = rowsAll + rowp[t] + w;
	const double *l = lx + lxp[t] + (int64_t)w * w;
	const double *xc = y + c0;
	for (int k = k0; k < k1; k++) tv[k - k0] = glle_dot(l + (int64_t)k * w, xc, w);
	for (int k = k0; k < k1; k++) y[rows[k]] -= tv[k - k0];
}

// glle_sn_bwd_high sets acc[0:w] to the sum over supernode t's below-rows [mu/2, mu) of
// -y[rows[k]] times row k (glle_sn_backward's accumulator of a halved step).
GLLE_CLONES_V3
void glle_sn_bwd_high(const double *lx, const int64_t *lxp, const int32_t *first,
		const int64_t *rowp, const int32_t *rowsAll, double *y, double *tv, double *acc, int t) {
	const int c0 = first[t], w = first[t + 1] - c0;
	const int mu = (int)(rowp[t + 1] - rowp[t]) - w;
	const int32_t *rows = rowsAll + rowp[t] + w;
	const double *l = lx + lxp[t] + (int64_t)w * w;
	for (int k = mu / 2; k < mu; k++) tv[k] = y[rows[k]];
	memset(acc, 0, sizeof(double) * w);
	glle_bwd_rows(l, tv, acc, w, mu / 2, mu);
}

// glle_sn_bwd_low subtracts supernode t's below-rows [0, mu/2) from its columns.
GLLE_CLONES_V3
void glle_sn_bwd_low(const double *lx, const int64_t *lxp, const int32_t *first,
		const int64_t *rowp, const int32_t *rowsAll, double *y, double *tv, int t) {
	const int c0 = first[t], w = first[t + 1] - c0;
	const int mu = (int)(rowp[t + 1] - rowp[t]) - w;
	const int32_t *rows = rowsAll + rowp[t] + w;
	const double *l = lx + lxp[t] + (int64_t)w * w;
	for (int k = 0; k < mu / 2; k++) tv[k] = y[rows[k]];
	glle_bwd_rows(l, tv, y + c0, w, 0, mu / 2);
}

// glle_sn_bwd_fin adds acc to supernode t's columns and solves with its transposed diagonal
// block.
GLLE_CLONES_V3
void glle_sn_bwd_fin(const double *lx, const int64_t *lxp, const int32_t *first, double *y, const double *acc, int t) {
	const int c0 = first[t], w = first[t + 1] - c0;
	glle_bwd_diag(lx + lxp[t], y + c0, acc, w);
}
*/
import "C"

import (
	"unsafe"

	"glle/kernels"
)

// ForwardSupernodes implements kernels.SupernodalSolver with C loops (AVX2/FMA where the CPU
// has them): at n = 100k one sequential solve took 18.5 ms against 26.5 ms for the Go loops.
func (openblas) ForwardSupernodes(s *kernels.Supernodes, y, tmp []float64, t0, t1 int, split []int32, recOff []int64, recs []float64) {
	if t0 >= t1 {
		return
	}
	checkSupernodes(s, y, tmp, t0, t1)
	sp, ro, rc := recordArgs(split, recOff, recs, t1, 1, "cgo: ForwardSupernodes record arrays too short")
	C.glle_sn_forward(lxPtr(s), (*C.int64_t)(unsafe.Pointer(&s.LXPtr[0])), (*C.int32_t)(unsafe.Pointer(&s.First[0])),
		(*C.int64_t)(unsafe.Pointer(&s.RowPtr[0])), rowsPtr(s), (*C.double)(unsafe.Pointer(&y[0])), tmpPtr(tmp),
		C.int(t0), C.int(t1), sp, ro, rc)
}

// BackwardSupernodes implements kernels.SupernodalSolver with C loops.
func (openblas) BackwardSupernodes(s *kernels.Supernodes, y, tmp []float64, t0, t1 int) {
	if t0 >= t1 {
		return
	}
	checkSupernodes(s, y, tmp, t0, t1)
	C.glle_sn_backward(lxPtr(s), (*C.int64_t)(unsafe.Pointer(&s.LXPtr[0])), (*C.int32_t)(unsafe.Pointer(&s.First[0])),
		(*C.int64_t)(unsafe.Pointer(&s.RowPtr[0])), rowsPtr(s), (*C.double)(unsafe.Pointer(&y[0])), tmpPtr(tmp),
		C.int(t0), C.int(t1))
}

// checkSupernodes panics unless the arrays cover supernodes [0, t1) and y their columns; the
// C loops trust the layout inside (the sparse package builds it).
func checkSupernodes(s *kernels.Supernodes, y, tmp []float64, t0, t1 int) {
	if t0 < 0 || t1 < t0 || len(s.First) < t1+1 || len(s.LXPtr) < t1+1 || len(s.RowPtr) < t1+1 ||
		int64(len(s.LX)) < s.LXPtr[t1] || int64(len(s.Rows)) < s.RowPtr[t1] ||
		len(y) == 0 || len(y) < int(s.First[len(s.First)-1]) {
		panic("cgo: supernodal solve arrays do not match")
	}
	for t := t0; t < t1; t++ {
		if mu := int(s.RowPtr[t+1]-s.RowPtr[t]) - int(s.First[t+1]-s.First[t]); mu > len(tmp) {
			panic("cgo: supernodal solve scratch too short")
		}
	}
}

func lxPtr(s *kernels.Supernodes) *C.double {
	if len(s.LX) == 0 {
		return nil
	}
	return (*C.double)(unsafe.Pointer(&s.LX[0]))
}

func rowsPtr(s *kernels.Supernodes) *C.int32_t {
	if len(s.Rows) == 0 {
		return nil
	}
	return (*C.int32_t)(unsafe.Pointer(&s.Rows[0]))
}

// recordArgs checks the forward solve's record arrays (split and recOff for supernodes below
// t1, nrhs values per recorded row) and returns them as C pointers, all nil when split is nil.
// It panics with msg when they are too short.
func recordArgs(split []int32, recOff []int64, recs []float64, t1, nrhs int, msg string) (*C.int32_t, *C.int64_t, *C.double) {
	if split == nil {
		return nil, nil, nil
	}
	if len(split) < t1 || len(recOff) < t1+1 || int64(len(recs)) < recOff[t1]*int64(nrhs) {
		panic(msg)
	}
	var rc *C.double
	if len(recs) > 0 {
		rc = (*C.double)(unsafe.Pointer(&recs[0]))
	}
	return (*C.int32_t)(unsafe.Pointer(&split[0])), (*C.int64_t)(unsafe.Pointer(&recOff[0])), rc
}

func tmpPtr(tmp []float64) *C.double {
	if len(tmp) == 0 {
		return nil
	}
	return (*C.double)(unsafe.Pointer(&tmp[0]))
}

// ForwardDiag implements kernels.SupernodalSplitter.
func (openblas) ForwardDiag(s *kernels.Supernodes, y []float64, t int) {
	checkSplit(s, y, nil, nil, t, 0, 0)
	C.glle_sn_fwd_diag(lxPtr(s), (*C.int64_t)(unsafe.Pointer(&s.LXPtr[0])), (*C.int32_t)(unsafe.Pointer(&s.First[0])),
		(*C.double)(unsafe.Pointer(&y[0])), C.int(t))
}

// ForwardRows implements kernels.SupernodalSplitter.
func (openblas) ForwardRows(s *kernels.Supernodes, y, tmp []float64, t, k0, k1 int) {
	mu := checkSplit(s, y, nil, nil, t, 0, 0)
	if k0 < 0 || k1 < k0 || k1 > mu || len(tmp) < k1-k0 {
		panic("cgo: supernodal split step range out of bounds")
	}
	if k0 == k1 {
		return
	}
	C.glle_sn_fwd_rows(lxPtr(s), (*C.int64_t)(unsafe.Pointer(&s.LXPtr[0])), (*C.int32_t)(unsafe.Pointer(&s.First[0])),
		(*C.int64_t)(unsafe.Pointer(&s.RowPtr[0])), rowsPtr(s), (*C.double)(unsafe.Pointer(&y[0])), tmpPtr(tmp),
		C.int(t), C.int(k0), C.int(k1))
}

// BackwardHigh implements kernels.SupernodalSplitter.
func (openblas) BackwardHigh(s *kernels.Supernodes, y, tmp, acc []float64, t int) {
	checkSplit(s, y, tmp, acc, t, 2, 1)
	C.glle_sn_bwd_high(lxPtr(s), (*C.int64_t)(unsafe.Pointer(&s.LXPtr[0])), (*C.int32_t)(unsafe.Pointer(&s.First[0])),
		(*C.int64_t)(unsafe.Pointer(&s.RowPtr[0])), rowsPtr(s), (*C.double)(unsafe.Pointer(&y[0])), tmpPtr(tmp),
		(*C.double)(unsafe.Pointer(&acc[0])), C.int(t))
}

// BackwardLow implements kernels.SupernodalSplitter.
func (openblas) BackwardLow(s *kernels.Supernodes, y, tmp []float64, t int) {
	checkSplit(s, y, tmp, nil, t, 2, 0)
	C.glle_sn_bwd_low(lxPtr(s), (*C.int64_t)(unsafe.Pointer(&s.LXPtr[0])), (*C.int32_t)(unsafe.Pointer(&s.First[0])),
		(*C.int64_t)(unsafe.Pointer(&s.RowPtr[0])), rowsPtr(s), (*C.double)(unsafe.Pointer(&y[0])), tmpPtr(tmp),
		C.int(t))
}

// BackwardFinish implements kernels.SupernodalSplitter.
func (openblas) BackwardFinish(s *kernels.Supernodes, y, acc []float64, t int) {
	checkSplit(s, y, nil, acc, t, 0, 1)
	C.glle_sn_bwd_fin(lxPtr(s), (*C.int64_t)(unsafe.Pointer(&s.LXPtr[0])), (*C.int32_t)(unsafe.Pointer(&s.First[0])),
		(*C.double)(unsafe.Pointer(&y[0])), (*C.double)(unsafe.Pointer(&acc[0])), C.int(t))
}

// Splits implements kernels.SupernodalSplitter.
func (openblas) Splits(w, mu int) bool { return C.glle_sn_bwd_halves(C.int(w), C.int(mu)) != 0 }

// checkSplit panics unless supernode t exists, its step splits (Splits), y covers the
// columns, tmp holds its below-rows (need 2; need 1: any) and acc its columns (accNeed 1). It
// returns the below-row count.
func checkSplit(s *kernels.Supernodes, y, tmp, acc []float64, t, need, accNeed int) int {
	if t < 0 || len(s.First) < t+2 || len(s.LXPtr) < t+2 || len(s.RowPtr) < t+2 ||
		len(y) == 0 || len(y) < int(s.First[len(s.First)-1]) {
		panic("cgo: supernodal split step arrays do not match")
	}
	w := int(s.First[t+1] - s.First[t])
	mu := int(s.RowPtr[t+1]-s.RowPtr[t]) - w
	if C.glle_sn_bwd_halves(C.int(w), C.int(mu)) == 0 || int64(len(s.LX)) < s.LXPtr[t]+int64(w)*int64(w+mu) ||
		int64(len(s.Rows)) < s.RowPtr[t+1] {
		panic("cgo: supernodal split step on a supernode that does not split")
	}
	if (need == 2 && len(tmp) < mu) || (accNeed == 1 && len(acc) < w) {
		panic("cgo: supernodal split step scratch too short")
	}
	return mu
}
