package engine

import (
	"errors"
	"fmt"
	"math"
	"slices"
)

// Robustness helpers of Fit, Restore and Transform: the exact power-of-two rescaling of the
// data, the representability check of the methods that cannot rescale, and the zero-Gram
// detection. docs/robustness.md lists every bad input and degenerate case.

// scaleInvariant reports whether the fit with settings s is invariant under x -> c x for c > 0:
// the kNN graph, the trace-relative ridge of Eq. (9), the fibre EM sigma_i (a function of the
// weights) and the direct-sampling temperatures s_x^2 (in units of x^2) all are. An absolute
// ridge (RegAbsolute) and the paper modes (raw coordinates mixed with the embedding) are not.
func scaleInvariant(s Settings) bool {
	return s.RegMode == RegTrace && (s.Method == LLE || s.Method == EM || s.Method == Direct)
}

// scaleExponent returns e such that max|x| * 2^-e lies in [0.5, 1) (0 when x is all zeros).
func scaleExponent(x []float64) int {
	big := maxAbs(x)
	if big == 0 {
		return 0
	}
	_, e := math.Frexp(big)
	return e
}

// maxAbs returns the largest |v| of v (0 for an empty slice; NaNs are skipped).
func maxAbs(v []float64) float64 {
	if i := argMaxAbs(v); i >= 0 {
		return math.Abs(v[i])
	}
	return 0
}

// argMaxAbs returns the index of the first entry of largest |value| (NaN ignored), or -1 when
// every entry is 0 or NaN (or v is empty).
func argMaxAbs(v []float64) int {
	big, at := 0.0, -1
	for i, x := range v {
		if a := math.Abs(x); a > big {
			big, at = a, i
		}
	}
	return at
}

// ldexpAll returns x * 2^-e computed exactly (math.Ldexp; values below the normal range lose
// bits only as they would in the rescaled data). It returns x itself when e = 0.
func ldexpAll(x []float64, e int) []float64 {
	if e == 0 {
		return x
	}
	out := make([]float64, len(x))
	for i, v := range x {
		out[i] = math.Ldexp(v, -e)
	}
	return out
}

// maxRawMagnitude is the largest |value| whose squared distances and Gram entries (sums of up
// to d*k*4 squares of differences) stay finite: the bound for new points of a model.
func maxRawMagnitude(d, k int) float64 {
	return math.Sqrt(math.MaxFloat64/float64(4*d*(k+1))) / 4
}

// maxRawFitMagnitude is the largest |value| the methods that work on raw coordinates accept:
// the local computations also square Gram entries (norms, rank tolerances, eigenvalue sweeps),
// so those squares, about (4 d)^2 (k+1)^2 |x|^4 summed, must stay finite as well: about 5e75
// for d = 3 and k = 10. Above it em-paper's sigma_i and the fibre projectors of em with an
// absolute ridge came out wrong without an error (1e80, a library review in session 30).
func maxRawFitMagnitude(d, k int) float64 {
	return math.Sqrt(math.Sqrt(math.MaxFloat64/float64(16*d*d*(k+1)*(k+1)))) / 2
}

// maxAbsReg is the largest absolute ridge (RegAbsolute) a fit accepts: the square of
// maxRawFitMagnitude (about 2.5e151 for d = 3, k = 10), so that R and G + R I stay finite.
func maxAbsReg(d, k int) float64 {
	l := maxRawFitMagnitude(d, k)
	return l * l
}

// minRawExponent: the methods that work on raw coordinates refuse data whose largest
// magnitude is below 2^minRawExponent, where squares of differences (2^-1000 and below) leave
// the normal range and distinct points start to look identical.
const minRawExponent = -500

// prepareScale returns the data the fit works on: for scale-invariant settings, x rescaled
// exactly by 2^-e so that max|x| is in [0.5, 1) (e is stored in the model; Transform applies the
// same factor to new points); otherwise x itself after checking that its magnitudes can be
// squared and summed without overflow.
func prepareScale(x []float64, n, d int, s Settings) ([]float64, int, error) {
	if scaleInvariant(s) {
		e := scaleExponent(x)
		return ldexpAll(x, e), e, nil
	}
	lim := maxRawFitMagnitude(d, s.K)
	if e := scaleExponent(x); e != 0 && e < minRawExponent {
		return nil, 0, inputErr("the data's largest value is about 2^%d, too small for method %s with %s ridge (squared distances underflow float64 below 2^%d): multiply the data by a power of ten, or use method lle, em or direct with the trace ridge (RegTrace, -reg-mode trace), which rescale the data exactly",
			e, s.Method, regModeText(s.RegMode), 2*minRawExponent)
	}
	for i, v := range x {
		if math.Abs(v) > lim {
			return nil, 0, inputErr("the value %g at row %d, column %d is too large for method %s with %s ridge (its squared distances and Gram matrices overflow float64, limit %.3g): divide the data by a power of ten, or use method lle, em or direct with the trace ridge (RegTrace, -reg-mode trace), which rescale the data exactly",
				v, i/d, i%d, s.Method, regModeText(s.RegMode), lim)
		}
	}
	return x, 0, nil
}

func regModeText(m RegMode) string {
	if m == RegAbsolute {
		return "absolute"
	}
	return "trace"
}

// checkNeighbourhoods inspects the sorted kNN distances: it counts the points with a
// coincident neighbour (duplicates, handled by the ridge) and fails with a "zero-gram"
// *DegenerateError when some point coincides with all of its k neighbours (G_i = 0: the
// weights would be arbitrary).
func checkNeighbourhoods(dist []float64, n, k int) (dups int, err error) {
	zero, example := 0, -1
	for i := 0; i < n; i++ {
		if dist[i*k] == 0 {
			dups++
		}
		if dist[i*k+k-1] == 0 {
			if zero == 0 {
				example = i
			}
			zero++
		}
	}
	if zero > 0 {
		return dups, &DegenerateError{Kind: "zero-gram", Count: zero, Example: example,
			Msg: fmt.Sprintf("%d points coincide with all of their k = %d nearest neighbours (e.g. point %d: at least k+1 identical rows), so their Gram matrix is zero and their weights are undefined: remove duplicate rows or use a larger k", zero, k, example)}
	}
	return dups, nil
}

// underflowedGram refines a "zero-gram" error of checkNeighbourhoods: when the example point's
// neighbours are not rows identical to it in the data x (n x d, before rescaling), their
// distances underflowed at the data's scale: an outlier of 1e200 among values of 1 was
// reported as "at least k+1 identical rows" before session 32. The message gives the two
// rows' difference and values and the data's largest value, which tell an outlier from
// near-duplicate rows. Other errors pass.
func underflowedGram(err error, x []float64, idx []int32, n, d, k int) error {
	var de *DegenerateError
	if !errors.As(err, &de) || de.Kind != "zero-gram" || de.Example < 0 {
		return err
	}
	i := de.Example
	xi := x[i*d : (i+1)*d]
	for _, j := range idx[i*k : (i+1)*k] {
		xj := x[int(j)*d : (int(j)+1)*d]
		if slices.Equal(xj, xi) {
			continue
		}
		far := max(argMaxAbs(x), 0) // the rows differ, so some value is nonzero
		local, diff := 0.0, 0.0
		for c := range xi {
			local = max(local, math.Abs(xi[c]), math.Abs(xj[c]))
			diff = max(diff, math.Abs(xi[c]-xj[c]))
		}
		return &DegenerateError{Kind: "zero-gram", Count: de.Count, Example: i,
			Msg: fmt.Sprintf("%d points have all of their k = %d nearest neighbours at distance 0 although their rows differ (e.g. point %d and its neighbour %d differ by %g at values of about %g, while the data's largest value is %g at row %d, column %d): their squared distances underflow at that scale: remove the far value or the near-duplicate rows", de.Count, k, i, j, diff, local, x[far], far/d, far%d)}
	}
	return err
}

// scaleQuery rescales new points by the model's factor; it fails when a rescaled value is
// beyond maxRawMagnitude, where squared distances to the training points overflow (a point
// far outside the training data's range).
func (m *Model) scaleQuery(xq []float64, d int) ([]float64, error) {
	e := m.st.scaleExp
	out := ldexpAll(xq, e)
	lim := maxRawMagnitude(d, m.K) // the training data lie within it (prepareScale)
	if !scaleInvariant(Settings{Method: m.Method, RegMode: m.RegMode}) {
		lim = maxRawFitMagnitude(d, m.K) // raw coordinates: as for the fit
	}
	for i, v := range out {
		if math.Abs(v) > lim {
			// The training data's range: st.x is the data times 2^-e (e = 0 for the methods
			// on raw coordinates, whose message said 2^0 for a Swiss roll reaching 2^4.2, a
			// library user trial).
			return nil, inputErr("new point %d has the value %g in column %d, so far beyond the training data (max |x| about 2^%d) that its squared distances overflow float64: remove the point or bring it into the training data's range", i/d, xq[i], i%d, e+scaleExponent(m.st.x))
		}
	}
	return out, nil
}
