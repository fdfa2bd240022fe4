//go:build !purego

package cgo

/*
#cgo CFLAGS: -O3 -Wno-psabi
#include <stdint.h>
#include <string.h>

// Both kernels are compiled twice, for x86-64-v3 (AVX2, FMA) and for the baseline; the
// loader picks the clone the CPU supports.
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define GLLE_CLONES __attribute__((target_clones("arch=x86-64-v3", "default")))
#else
#define GLLE_CLONES
#endif

typedef double glle_v4d __attribute__((vector_size(32)));

static inline glle_v4d glle_ld4(const double *p) {
	glle_v4d v;
	memcpy(&v, p, sizeof v);
	return v;
}

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

GLLE_CLONES
void glle_sn_forward(const double *lx, const int64_t *lxp, const int32_t *first,
		const int64_t *rowp, const int32_t *rowsAll, double *y, double *tv, int t0, int t1,
		const int32_t *split, const int64_t *recoff, double *recs) {
	for (int t = t0; t < t1; t++) {
		const int c0 = first[t], w = first[t + 1] - c0;
		const int mu = (int)(rowp[t + 1] - rowp[t]) - w;
		const int32_t *rows = rowsAll + rowp[t] + w;
		const double *p = lx + lxp[t];
		double *xc = y + c0;
		for (int i = 0; i < w; i++) {
			const double *li = p + (int64_t)i * w;
			xc[i] = (xc[i] - glle_dot(li, xc, i)) / li[i];
		}
		const double *l = p + (int64_t)w * w;
		for (int k = 0; k < mu; k++) tv[k] = glle_dot(l + (int64_t)k * w, xc, w);
		int from = split ? split[t] : mu;
		for (int k = 0; k < from; k++) y[rows[k]] -= tv[k];
		if (from < mu) memcpy(recs + recoff[t], tv + from, sizeof(double) * (mu - from));
	}
}

GLLE_CLONES
void glle_sn_backward(const double *lx, const int64_t *lxp, const int32_t *first,
		const int64_t *rowp, const int32_t *rowsAll, double *y, double *tv, int t0, int t1) {
	for (int t = t1 - 1; t >= t0; t--) {
		const int c0 = first[t], w = first[t + 1] - c0;
		const int mu = (int)(rowp[t + 1] - rowp[t]) - w;
		const int32_t *rows = rowsAll + rowp[t] + w;
		const double *p = lx + lxp[t];
		double *restrict xc = y + c0;
		const double *l = p + (int64_t)w * w;
		for (int k = 0; k < mu; k++) tv[k] = y[rows[k]];
		// One row at a time, last row to first and each row from its end to its start: the
		// backward solve walks the factor from its end to its start, and this order keeps the
		// walk a single descending stream for the hardware prefetcher. (Groups of 4 rows, each
		// read forwards, cut the stream into short pieces: on a kNN matrix with n = 1M a
		// sequential backward solve took 181 ms that way against 122 ms this way, medians of 6.)
		for (int k = mu - 1; k >= 0; k--) glle_axpy_down(xc, l + (int64_t)k * w, -tv[k], w);
		for (int i = w - 1; i >= 0; i--) {
			const double *li = p + (int64_t)i * w;
			const double v = xc[i] / li[i];
			xc[i] = v;
			glle_axpy_down(xc, li, -v, i);
		}
	}
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
