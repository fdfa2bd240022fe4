package engine

import (
	"encoding/json"
	"time"

	"gonum.org/v1/gonum/mat"
)

// Model is a fitted LLE or GLLE model: the neighbourhood graph, the mean weights, the
// per-point covariance parameters and the base embedding. A Model is safe for concurrent
// use by Generate and Transform.
type Model struct {
	// Method, K, Dim and Reg are the settings the model was fitted with (defaults resolved).
	Method  Method
	K, Dim  int
	Reg     float64
	RegMode RegMode
	Scaling Scaling
	// N and D are the shape of the training data.
	N, D int
	// X is the training data (N x D), kept for Transform; the caller's matrix is copied.
	// Treat it as read-only: the transforms use the training points as fitted (they read
	// this matrix's storage, or a rescaled copy of it, and build their search index once).
	X *mat.Dense
	// Neighbors holds the k nearest neighbours of every point (N*K, 0-based, row i at
	// [i*K, (i+1)*K), sorted by distance, self excluded).
	Neighbors []int32
	// Weights holds the mean reconstruction weights aligned with Neighbors: the LLE weights
	// (LLE, EM, Direct, DirectPaper) or E[w_i] of Eq. (21) (EMPaper). Read-only: Generate and
	// SampleWeights refuse a model whose Weights or Sigma values were edited after the fit.
	Weights []float64
	// Sigma holds sigma_i of Omega_i = sigma_i I for the EM methods (nil otherwise), exactly
	// as the method computes it: for EMPaper the raw Eq. (29) value, negative as it may be.
	Sigma []float64
	// Embedding is the base embedding (N x Dim): the linear embedding of the mean weights.
	// Read-only: Transform maps new points onto it, and FrameBase generations are rotated
	// onto it; finite edits of its values are not detected.
	Embedding *mat.Dense
	// Eigenvalues are the eigenvalues of M belonging to the columns of Embedding.
	Eigenvalues []float64
	// Report describes the fit.
	Report Report

	directRidge float64
	st          state // per-point factors used by the samplers
}

// Report describes a fit or a generation: what was computed, how long it took and what
// needed special handling.
type Report struct {
	// Method and Backend name the method ("em", ...) and the BLAS/LAPACK backend ("openblas"
	// or "gonum"); N, D, K and Dim are the data's shape and the settings; Workers is the
	// number of worker goroutines used (Settings.Workers resolved).
	Method  string `json:"method"`
	Backend string `json:"backend"`
	N       int    `json:"n"`
	D       int    `json:"d"`
	K       int    `json:"k"`
	Dim     int    `json:"dim"`
	Workers int    `json:"workers"`

	// Stages lists every stage in execution order with its wall time. In the reports of Fit
	// and Generate the last, "other", holds the rest of the call's wall time, so that the
	// foreground stages (Background false) add up to it. Background stages ran on their own
	// goroutine beside the foreground ones: the ordering and symbolic analysis, which a fit
	// runs beside its weight stages and then waits for ("analysis wait").
	Stages []StageTime `json:"stages"`

	// EMIterations is the number of EM iterations run (EM methods).
	EMIterations int `json:"em_iterations,omitempty"`
	// EMConverged reports whether EM reached its tolerance (EM; EMPaper runs a fixed count).
	// In JSON it is present for EM, false included (omitted as false before session 31), and
	// absent for the other methods.
	EMConverged bool `json:"-"`
	// Sigma summarises sigma_i (EM methods).
	Sigma *SigmaStats `json:"sigma,omitempty"`
	// FallbackPoints counts points whose fibre was a single point (r_i = k-1) and that use
	// the local-PCA fallback (EM).
	FallbackPoints int `json:"fallback_points,omitempty"`
	// NoiseFreePoints counts, for EMPaper, the points whose posterior covariance
	// sigma_i (I - V V^T) (Eq. (22)) is zero because their raw neighbour matrix X_i has full
	// rank k (d >= k locally): their sampled weights equal the mean, so generations cannot
	// differ there (all points of 64-dimensional digits at k = 10).
	NoiseFreePoints int `json:"noise_free_points,omitempty"`
	// RegularizedPoints counts, for LLE, EM and Direct, the points whose ridge R_i was grown
	// because G_i + R_i I could not be factored or left the weights' solve too little
	// headroom (a ridge far below G_i's scale, either RegMode; see RegAbsolute), plus for
	// Direct the points whose precision matrix Gamma_i^{-1} factored only after a jitter. For
	// DirectPaper it counts instead (replacing the LLE count) the points whose
	// X_i^T X_i + Y_i^T Y_i is singular, which the explicit ridge DirectRidge makes
	// invertible. Always 0 for EMPaper. A zero Gram matrix is a "zero-gram" *DegenerateError.
	RegularizedPoints int `json:"regularized_points,omitempty"`
	// DuplicatePoints counts points with at least one coincident neighbour (duplicated rows);
	// the ridge handles them as long as fewer than k+1 rows coincide.
	DuplicatePoints int `json:"duplicate_points,omitempty"`
	// SX2 and SY2 are the maximum-likelihood temperatures s_x^2 and s_y^2 (Direct), s_x^2 in
	// the data's units. When s_x^2 in those units leaves float64's range (data around 1e157
	// or more, or 1e-160 or less: the fit itself works on rescaled data and is unaffected),
	// SX2 is 0 and SX2Log10 holds log10(s_x^2); otherwise SX2Log10 is 0.
	SX2      float64 `json:"s_x2,omitempty"`
	SY2      float64 `json:"s_y2,omitempty"`
	SX2Log10 float64 `json:"s_x2_log10,omitempty"`

	// Eigen describes the linear-embedding eigensolve.
	Eigen EigenReport `json:"eigen"`

	// Memory is the fit's memory estimate (refined from the symbolic analysis; nil for
	// generations and restored models).
	Memory *MemoryEstimate `json:"memory,omitempty"`
}

// StageTime is the wall time of one stage.
type StageTime struct {
	Name    string  `json:"name"`
	Seconds float64 `json:"seconds"`
	// Background marks a stage that ran beside the foreground stages rather than between
	// them: it is not part of the call's wall time partition.
	Background bool `json:"background,omitempty"`
}

// SigmaStats summarises the EM variances.
type SigmaStats struct {
	Min          float64 `json:"min"`
	Median       float64 `json:"median"`
	Max          float64 `json:"max"`
	NonPositive  int     `json:"non_positive"`
	SampledAsAbs bool    `json:"sampled_as_abs,omitempty"` // non-positive sigma_i are sampled with |sigma_i| (EMPaper)
}

// EigenReport describes the eigensolve of the linear embedding.
type EigenReport struct {
	// Solver is the solver that produced the vectors: "sparse", "dense" or "dense-full".
	Solver string `json:"solver"`
	// Factorization is what the sparse solver factored: "lu" (B = I - W, for weights that sum
	// to one: LLE, EM, Direct) or "cholesky" (M - sigma I: the paper modes, or the fallback).
	Factorization string `json:"factorization,omitempty"`
	// LUFallback says why the LU factorization of B was abandoned for M's Cholesky factor
	// (empty when it was not).
	LUFallback string `json:"lu_fallback,omitempty"`
	// DenseFallback says why the sparse solver was abandoned for the dense one (n <= 3000;
	// empty when it was not).
	DenseFallback string `json:"dense_fallback,omitempty"`
	// Values are the eigenvalues of M belonging to the embedding's columns, ascending.
	Values []float64 `json:"values"`
	// Iterations counts the thick restarts of Lanczos over all shifts ("sparse"), or the
	// block inverse iterations ("dense"; "dense-full" keeps the count it gave up at).
	Iterations int `json:"iterations"`
	// OpApplies counts the applications of the operator: solves with the factorization
	// ("sparse") or block products ("dense").
	OpApplies int `json:"op_applies"`
	// Factorizations counts the numeric factorizations (one per shift tried).
	Factorizations int `json:"factorizations"`
	// Shifts lists every shift factored, in order (failed attempts included).
	Shifts []float64 `json:"shifts,omitempty"`
	// Shift is the shift the vectors were computed at (the last one factored).
	Shift float64 `json:"shift"`
	// NNZM is the number of stored entries of M ("cholesky").
	NNZM int64 `json:"nnz_m,omitempty"`
	// NNZB is the number of stored entries of B + B^T's pattern ("lu").
	NNZB int64 `json:"nnz_b,omitempty"`
	// NNZL counts the stored entries of the factor: L, or L and U together for "lu".
	NNZL int64 `json:"nnz_l,omitempty"`
	// Flops is the numeric factorization's floating-point operation count (sparse solver).
	Flops float64 `json:"flops,omitempty"`
	// Deflated reports whether the constant vector, M's exact null vector when the weights sum
	// to one, was deflated explicitly instead of being computed as an eigenvector.
	Deflated bool `json:"deflated"`
	// MaxResidual is the largest ||M u - lambda u|| / ||M||_inf over the returned pairs (unit
	// u): relative to M's infinity norm, not absolute.
	MaxResidual float64 `json:"max_residual"`
}

func (r *Report) stage(name string, start time.Time) {
	r.Stages = append(r.Stages, StageTime{Name: name, Seconds: time.Since(start).Seconds()})
}

// closeStages appends the stage "other": the wall time since start not covered by the
// foreground stages so far (data preparation, moving vectors in and out of the sparse
// solver's order, ...), so that the foreground stages add up to the call's wall time.
func (r *Report) closeStages(start time.Time) {
	sum := 0.0
	for _, st := range r.Stages {
		if !st.Background {
			sum += st.Seconds
		}
	}
	r.Stages = append(r.Stages, StageTime{Name: "other", Seconds: max(0, time.Since(start).Seconds()-sum)})
}

// reportJSON is Report's JSON form: em_converged is present for EM only, false included.
type reportJSON struct {
	reportFields
	EMConverged *bool `json:"em_converged,omitempty"`
}

type reportFields Report // Report without its methods (no recursion into MarshalJSON)

// MarshalJSON writes the report with em_converged present for the EM method (false
// included) and absent for the others.
func (r Report) MarshalJSON() ([]byte, error) {
	out := reportJSON{reportFields: reportFields(r)}
	if r.Method == EM.String() {
		v := r.EMConverged
		out.EMConverged = &v
	}
	return json.Marshal(out)
}

// UnmarshalJSON reads what MarshalJSON writes.
func (r *Report) UnmarshalJSON(b []byte) error {
	var in reportJSON
	if err := json.Unmarshal(b, &in); err != nil {
		return err
	}
	*r = Report(in.reportFields)
	r.EMConverged = in.EMConverged != nil && *in.EMConverged
	return nil
}
