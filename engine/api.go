package engine

import (
	"context"
	"slices"
	"unsafe"

	"gonum.org/v1/gonum/mat"
)

// Saved is what a saved model holds; Restore turns it back into a Model. Persist it with
// encoding/gob (mat.Dense implements encoding.BinaryMarshaler) or as glle-bench's model
// folder; encoding/json writes a mat.Dense as {} and loses the data.
type Saved struct {
	// Method, K, Dim, Reg, RegMode, Scaling and DirectRidge are the fit's settings, defaults
	// resolved (Model's fields of the same names; DirectRidge is Settings.DirectRidge).
	Method      Method
	K, Dim      int
	Reg         float64
	RegMode     RegMode
	Scaling     Scaling
	DirectRidge float64
	// X, Neighbors, Weights, Sigma, Embedding and Eigenvalues are Model's fields of the same
	// names: the training data, the neighbour graph, the mean weights, the EM variances (nil
	// for the other methods), the base embedding and its eigenvalues.
	X           *mat.Dense
	Neighbors   []int32
	Weights     []float64
	Sigma       []float64
	Embedding   *mat.Dense
	Eigenvalues []float64
	// Shift is the eigensolver shift the base fit adapted to (0 if unknown); generations start
	// from it, so a restored model generates the same embeddings as the fitted one.
	Shift float64
}

// Saved returns the parts of m that Restore needs (for a Model not made by Fit or Restore,
// whatever its fields hold, which Restore then checks). They are m's own storage, not copies:
// treat them as read-only while m is in use (Restore copies what it keeps). A nil m gives
// the zero Saved, which Restore refuses as incomplete.
func (m *Model) Saved() Saved {
	if m == nil {
		return Saved{}
	}
	shift := 0.0
	if m.st.emb != nil {
		shift = m.st.emb.shift()
	}
	return Saved{Method: m.Method, K: m.K, Dim: m.Dim, Reg: m.Reg, RegMode: m.RegMode, Scaling: m.Scaling,
		DirectRidge: m.directRidge, X: m.X, Neighbors: m.Neighbors, Weights: m.Weights, Sigma: m.Sigma,
		Embedding: m.Embedding, Eigenvalues: m.Eigenvalues, Shift: shift}
}

// madeFor is what Fit or Restore built a Model's sampler state for.
type madeFor struct {
	ok           bool
	method       Method
	n, d, k, dim int
	reg          float64
	regMode      RegMode
	scaling      Scaling
	nbrPrint     uint64 // neighbourPrint of Neighbors
	wPrint       uint64 // floatPrint of Weights
	sigmaPrint   uint64 // floatPrint of Sigma
}

// checkCtx refuses a nil context, which the context package and the worker pool would
// otherwise meet with a panic.
func checkCtx(ctx context.Context) error {
	if ctx == nil {
		return inputErr("the context is nil: pass context.Background(), or a context you can cancel")
	}
	return nil
}

// seal records what m's state was built for; usable compares against it.
func (m *Model) seal() {
	m.st.made = madeFor{ok: true, method: m.Method, n: m.N, d: m.D, k: m.K, dim: m.Dim, reg: m.Reg, regMode: m.RegMode, scaling: m.Scaling,
		nbrPrint: neighbourPrint(m.Neighbors), wPrint: floatPrint(m.Weights), sigmaPrint: floatPrint(m.Sigma)}
}

// usable fails with an *InputError unless m was made by Fit or Restore and the exported
// fields the samplers, the eigensolver and Transform rely on still match what its state was
// built for (a caller may have edited them).
func (m *Model) usable() error {
	if m == nil {
		return inputErr("the model is nil: make one with Fit or Restore")
	}
	f := m.st.made
	switch {
	case !f.ok || m.st.emb == nil:
		return inputErr("the model was not made by Fit or Restore: fit it, or restore it from its Saved parts")
	case m.Method != f.method || m.N != f.n || m.D != f.d || m.K != f.k || m.Dim != f.dim:
		return inputErr("the model's Method, N, D, K or Dim was changed after the fit (%s, n %d, d %d, k %d, dim %d; built for %s, %d, %d, %d, %d): refit, or restore from a copy of Saved made before the change (Saved shares the model's slices)",
			m.Method, m.N, m.D, m.K, m.Dim, f.method, f.n, f.d, f.k, f.dim)
	case m.Reg != f.reg || m.RegMode != f.regMode: // != is true for a NaN Reg
		return inputErr("the model's Reg or RegMode was changed after the fit (%v, %v; built for %v, %v): refit with the new value, or restore from a copy of Saved made before the change (Saved shares the model's slices)",
			m.Reg, m.RegMode, f.reg, f.regMode)
	case m.Scaling != f.scaling:
		return inputErr("the model's Scaling was changed after the fit (%d; built for %d, 0 UnitNorm, 1 PaperScaling): refit with the new scaling, or restore from a copy of Saved made before the change (Saved shares the model's slices)", int(m.Scaling), int(f.scaling))
	case len(m.Neighbors) != f.n*f.k || len(m.Weights) != f.n*f.k:
		return inputErr("the model's Neighbors or Weights were replaced (%d/%d entries, want %d): refit, or restore from a copy of Saved made before the change (Saved shares the model's slices)", len(m.Neighbors), len(m.Weights), f.n*f.k)
	case (f.method == EM || f.method == EMPaper) && len(m.Sigma) != f.n:
		return inputErr("the model's Sigma was replaced (%d entries, want %d): refit, or restore from a copy of Saved made before the change (Saved shares the model's slices)", len(m.Sigma), f.n)
	case m.Embedding == nil:
		return inputErr("the model's Embedding was removed: refit, or restore from a copy of Saved made before the change (Saved shares the model's slices)")
	}
	if r, c := m.Embedding.Dims(); r != f.n || c != f.dim {
		return inputErr("the model's Embedding was replaced by a %dx%d matrix (want %dx%d): refit, or restore from a copy of Saved made before the change (Saved shares the model's slices)", r, c, f.n, f.dim)
	}
	if st := m.Embedding.RawMatrix().Stride; st != f.dim {
		return inputErr("the model's Embedding was replaced by a view with row stride %d (want a contiguous %dx%d matrix): assign mat.DenseCopyOf of it, refit, or restore from a copy of Saved made before the change (Saved shares the model's slices)", st, f.n, f.dim)
	}
	if m.X == nil {
		return inputErr("the model's X was removed: refit, or restore from a copy of Saved made before the change (Saved shares the model's slices)")
	}
	if r, c := m.X.Dims(); r != f.n || c != f.d {
		return inputErr("the model's X was replaced by a %dx%d matrix (want %dx%d): refit, or restore from a copy of Saved made before the change (Saved shares the model's slices)", r, c, f.n, f.d)
	}
	return nil
}

// neighborsIntact fails with an *InputError when m.Neighbors differ from those the model was
// built with (a caller edited them): the sparse solver's matrix pattern was built from them,
// and the dense solver indexes by them. It reads all N*K entries once (about 0.1 ms at
// n = 20000), so usable (called per point by Gamma) leaves it to the generations.
func (m *Model) neighborsIntact() error {
	if neighbourPrint(m.Neighbors) == m.st.made.nbrPrint {
		return nil
	}
	if i, j, dup, ok := badNeighbor(m.Neighbors, m.K); !ok && !dup {
		return inputErr("the model's Neighbors were edited: entry %d of point %d is %d, not another point's index in [0, %d): refit, or restore from a copy of Saved made before the change (Saved shares the model's slices)", j, i, m.Neighbors[i*m.K+j], m.N)
	}
	return inputErr("the model's Neighbors were edited after the fit (the eigensolver's matrix pattern was built from them): refit with the data, or restore from a copy of Saved made before the change (Saved shares the model's slices)")
}

// neighbourPrint is wordPrint of a neighbour list (its entries as 32-bit words).
func neighbourPrint(nbr []int32) uint64 {
	return wordPrint(unsafe.Slice((*uint32)(unsafe.Pointer(unsafe.SliceData(nbr))), len(nbr)))
}

// wordPrint is a fingerprint of the words v: four interleaved multiplicative hashes. Each step
// and the final mixing are bijections of any one lane's state, so an edit of a single entry
// always changes it; several edits collide with a chance of about 2^-64. It reads about 2
// entries per ns (neighborsIntact, paramsIntact).
func wordPrint[W uint32 | uint64](v []W) uint64 {
	const p = 0x9e3779b97f4a7c15
	var h [4]uint64
	i := 0
	for ; i+4 <= len(v); i += 4 {
		h[0] = (h[0] ^ uint64(v[i])) * p
		h[1] = (h[1] ^ uint64(v[i+1])) * p
		h[2] = (h[2] ^ uint64(v[i+2])) * p
		h[3] = (h[3] ^ uint64(v[i+3])) * p
	}
	for ; i < len(v); i++ {
		h[0] = (h[0] ^ uint64(v[i])) * p
	}
	return ((h[0]*p^h[1])*p^h[2])*p ^ h[3] ^ uint64(len(v))
}

// paramsIntact fails with an *InputError when m.Weights or m.Sigma differ from the values the
// model was built with (a caller edited them in place): the samplers draw around them, and the
// LU path relies on the weights of each point summing to one. Like neighborsIntact it reads
// every entry (about 0.5 ns each), so the generations and SampleWeights call it, not usable.
func (m *Model) paramsIntact() error {
	if floatPrint(m.Weights) != m.st.made.wPrint {
		return editedErr("Weights", m.Weights, "the model's Weights were edited after the fit (the samplers draw around them, and their rows must sum to one)")
	}
	if floatPrint(m.Sigma) != m.st.made.sigmaPrint {
		return editedErr("Sigma", m.Sigma, "the model's Sigma was edited after the fit (the samplers' variances)")
	}
	return nil
}

// editedErr is the error for the edited values v of the model's field name: it names the first
// non-finite entry when there is one, else says what (the field and why it matters).
func editedErr(name string, v []float64, what string) error {
	if j, bad := firstNonFiniteIn(v); bad {
		return inputErr("the model's %s[%d] is %v (edited after the fit): refit, or restore from a copy of Saved made before the edit (Saved shares the model's slices)", name, j, v[j])
	}
	return inputErr("%s: refit, or restore from a copy of Saved made before the edit (Saved shares the model's slices)", what)
}

// floatPrint is wordPrint of the bit patterns of v.
func floatPrint(v []float64) uint64 {
	return wordPrint(unsafe.Slice((*uint64)(unsafe.Pointer(unsafe.SliceData(v))), len(v)))
}

// badNeighbor scans a neighbour list (k per point) and returns the first invalid entry
// (point i, position j) with ok false: one that is not another point's index (dup false) or
// that repeats an earlier entry of its point (dup true). ok is true when all are valid.
func badNeighbor(nbr []int32, k int) (i, j int, dup, ok bool) {
	n := uint32(len(nbr) / k)
	for p := range len(nbr) / k {
		row := nbr[p*k : (p+1)*k]
		for q, v := range row {
			if uint32(v) >= n || int(v) == p {
				return p, q, false, false
			}
			if slices.Contains(row[:q], v) {
				return p, q, true, false
			}
		}
	}
	return 0, 0, false, true
}
