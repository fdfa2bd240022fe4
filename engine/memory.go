package engine

import (
	"errors"
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"

	"glle/internal/procfs"
)

// MemoryEstimate is the predicted memory use of a fit with the sparse eigensolver, in bytes,
// per data structure and per stage. EstimateMemory predicts the nonzero counts from a per-row
// model; Fit refines the estimate with the exact counts of the symbolic analysis (before the
// numeric factorization) and reports it in Report.Memory. For lle, em and direct (weights
// that sum to one) the default solver factors B = I - W (LU): B's pattern then takes M's
// place and the L and U panels together L's (Factorization "lu").
type MemoryEstimate struct {
	N      int    `json:"n"`
	D      int    `json:"d"`
	K      int    `json:"k"`
	Dim    int    `json:"dim"`
	Method string `json:"method"`

	// Data is the training data (the caller's matrix, the engine's copy and its rescaled copy).
	Data int64 `json:"data"`
	// KNN is the neighbour graph: indices, distances and the k-d tree.
	KNN int64 `json:"knn"`
	// Weights are the mean weights (and sigma_i). em-paper's d x d partial sums of S_1 are in
	// the "weights" stage only, where they live.
	Weights int64 `json:"weights"`
	// Factors are the per-point factors of the sampler (fibre bases, Cholesky factors, square roots).
	Factors int64 `json:"factors"`
	// M is the CSR matrix M = (I - W)^T (I - W) (B's pattern for the LU) with its assembly
	// structures.
	M int64 `json:"m"`
	// Symbolic is the ordering and the symbolic analysis of the factorization.
	Symbolic int64 `json:"symbolic"`
	// L is the supernodal Cholesky factor of M (the L and U panels of B's LU) with its update
	// stacks.
	L int64 `json:"l"`
	// Krylov is the Lanczos basis and the eigensolver's vectors.
	Krylov int64 `json:"krylov"`

	// NNZM and NNZL are the nonzero counts used (predicted, or exact once Refined): of M and
	// its Cholesky factor, or of B's pattern and its L and U together (Factorization "lu").
	NNZM    int64 `json:"nnz_m"`
	NNZL    int64 `json:"nnz_l"`
	Refined bool  `json:"refined"`
	// Factorization is "cholesky" (M - sigma I) or "lu" (B), as EigenReport.Factorization;
	// "" for the dense solver.
	Factorization string `json:"factorization,omitempty"`
	// Retained is what an earlier factorization attempt keeps alive beside this one: B's
	// pattern, its LU factor and Lanczos basis when B needed pivoting and the fit fell back to
	// M's Cholesky factor (counted in every stage from "assemble" on); 0 otherwise.
	Retained int64 `json:"retained,omitempty"`

	// Stages holds the live bytes of each stage; Peak is the process's predicted peak
	// resident memory (the largest stage plus the runtime's overhead), PeakStage its stage.
	Stages    []StageMemory `json:"stages"`
	Peak      int64         `json:"peak"`
	PeakStage string        `json:"peak_stage"`
}

// StageMemory is the predicted live memory of one stage.
type StageMemory struct {
	Name  string `json:"name"`
	Bytes int64  `json:"bytes"`
}

// Calibration of the memory model (measured on the benchmark datasets, d = 3, k = 10, with
// the binary's peak RSS; see engine/memory_test.go and cmd/glle-bench TestMemoryEstimate).
const (
	// nnzMPerNK: nnz(M) / (n k) for manifold data (each row couples a point with its
	// neighbours, the points that chose it and their common neighbours; they overlap).
	nnzMPerNK = 3.0
	// nnz(L) of M's Cholesky factor = nnzLCoef * k^nnzLKExp * n^nnzLExp per row (Swiss roll,
	// AMF ordering: 105.5 and 157.6 at k = 10, n = 20k and 200k; 274.6 and 463.2 at k = 20;
	// the fit is within 6% of these; k = 5, 29.2 and 36.3, is over-predicted by 1.3-1.7x).
	// Before session 34 the model was k n^0.23, linear in k: 0.71 of the count at k = 20.
	nnzLCoef = 0.516
	nnzLKExp = 1.45
	nnzLExp  = 0.2
	// The LU of B (lle, em, direct): nnz(B's symmetric pattern) = n (nnzBPerK k + nnzBBase)
	// (measured 1.39, 1.24, 1.15 n k at k = 5, 10, 20), and nnz(L) + nnz(U) =
	// nnzLUCoef * k^nnzLUKExp * n^nnzLUExp per row (Swiss roll, AMF ordering: 73.9 and 95.1
	// at k = 10, n = 20k and 200k; 175.9 and 243.5 at k = 20; 115 at k = 10, n = 1M, where
	// M's Cholesky model predicted 240 before session 34, twice the LU's fill, and -max-mem
	// refused fits that fitted: a user trial).
	nnzBPerK  = 1.1
	nnzBBase  = 1.5
	nnzLUCoef = 1.13
	nnzLUKExp = 1.3
	nnzLUExp  = 0.12
	// memOverhead covers the Go runtime: the heap grows past the live data between two
	// collections (GOGC = 100), plus the binary's text and stacks (memBase).
	memOverhead = 1.3
	memBase     = 12 << 20
)

// EstimateMemory predicts the memory a fit of n points in d dimensions with k neighbours and
// embedding dimension p needs with the default (sparse) eigensolver: the LU of B for lle, em
// and direct, M's Cholesky factor for the paper modes. It is the zero estimate (Peak 0) for a
// non-positive n, d or k and for an unknown method.
func EstimateMemory(n, d, k, p int, method Method) MemoryEstimate {
	return estimateMemory(n, d, k, p, method, SolverAuto, -1, -1)
}

// estimateMemory is EstimateMemory for any solver; nnzM, nnzL >= 0 replace the predicted counts
// (the refinement from the symbolic analysis).
func estimateMemory(n, d, k, p int, method Method, solver Solver, nnzM, nnzL int64) MemoryEstimate {
	e := MemoryEstimate{N: n, D: d, K: k, Dim: p, Method: method.String()}
	if n <= 0 || d <= 0 || k <= 0 || !method.valid() {
		return e
	}
	if memoryOverflows(n, d, k, p, method, solver, nnzL) {
		// The byte counts below would overflow int64: no machine holds such a fit.
		e.Peak, e.PeakStage = math.MaxInt64, "knn"
		return e
	}
	N, D, K, P := int64(n), int64(d), int64(k), int64(max(p, 1))
	e.Refined = nnzM >= 0 && nnzL >= 0
	lu := luFactored(method, solver)
	e.Factorization = "cholesky"
	if lu {
		e.Factorization = "lu"
	}
	if nnzM < 0 {
		if lu {
			nnzM = min(int64((nnzBPerK*float64(K)+nnzBBase)*float64(N)), N*N)
		} else {
			nnzM = min(int64(nnzMPerNK*float64(N*K))+N, N*N)
		}
	}
	if nnzL < 0 {
		nnzL = min(int64(factorPerRow(float64(K), float64(N), lu)*float64(N)), N*(N+1)/2)
	}
	e.NNZM, e.NNZL = nnzM, nnzL

	e.Data = 3 * 8 * N * D
	// Graph: int32 indices and float64 squared distances; the tree holds a copy of the points,
	// a permutation and its nodes.
	e.KNN = 4*N*K + 8*N*K + 8*N*D + 4*N + 48*N/4
	e.Weights = 8 * N * K
	rmax := int64(max(min(d, k-1), p))
	var s1 int64 // em-paper's S_1 (weight stage only)
	switch method {
	case EM:
		e.Weights += 8 * N
		e.Factors = 8*N*K*rmax + 4*N // the bases and the int32 ranks
	case EMPaper:
		e.Weights += 8*N + 8*N*K // sigma and the weights of the previous iteration
		// S_1 of Eq. (24) is d x d: one partial sum per chunk of emPaperChunk points and the
		// total (fitEMPaper), live during the weight stage only. Unestimated before session
		// 34: 6.4 GB at d = 20000, n = 40.
		s1 = 8 * D * D * ((N+emPaperChunk-1)/emPaperChunk + 1)
		e.Factors = 8*N*K*rmax + 4*N
	case Direct:
		e.Factors = 8 * N * K * (K - 1) / 2
	case DirectPaper:
		e.Factors = 8 * N * K * K
	}
	// M: CSR (row pointers, int32 column indices, values), the reverse graph, Fill's per-worker
	// marks, and the breadth-first relabelling (order, labels, relabelled graph, weights in that
	// order: sparse.NewMPatternLocal).
	e.M = 8*(N+1) + 12*nnzM + 8*N + 4*N*K + 2*4*N + 8*N + 12*N*K
	if method.Generative() && !lu {
		// The refill plan of M for the generations: (k+1) offsets per contribution, k+1
		// contributions per point on average, 2 bytes each (sparse.MPattern.PrepareRefill; B's
		// fill on the LU path needs none).
		e.M += 2*(K+1)*(K+1)*N + 8*(N+1)
	}
	// Symbolic analysis: permutations, tree, column counts, supernode rows (about one per
	// stored column panel row), the assembly map of A's lower triangle (8 bytes an entry)
	// and the ordering's adjacency graph (transient, 4 bytes an off-diagonal entry; the rest of
	// the analysis reads M's own pattern).
	lower := (nnzM + N) / 2
	// The ordering adds its element lists and score buckets (48 bytes a point).
	e.Symbolic = 8*N + 4*4*N + 8*lower + 4*nnzM + 8*int64(math.Sqrt(float64(nnzL))*8) + 48*N
	// Factor: the supernodal panels and the update-matrix stacks (about a fifth of L for
	// these orderings), the solve workspace.
	e.L = 8*nnzL + 8*nnzL/5 + 8*N
	// Lanczos: N x (NCV+1) basis, NCV = max(2 nev + 10, 20), and a few work vectors.
	nev := P + 1
	ncv := max(2*nev+10, 20)
	e.Krylov = 8*N*(ncv+1) + 8*N*6 + 8*N*P

	if solver == SolverDense {
		// M stored densely and its Cholesky factor; no sparse structures.
		e.Factorization = ""
		e.M, e.Symbolic, e.L = 8*N*N, 0, 8*N*N
		e.Krylov = 8 * N * (4*P + 8)
	}

	graph := e.Data + 4*N*K // the data and the neighbour indices stay for the whole fit
	e.Stages = []StageMemory{
		{"knn", e.Data + e.KNN},
		{"weights", graph + e.Weights + e.Factors + s1},
		// While the pattern is built, per-worker buffers hold its columns (4 bytes an entry,
		// up to 6 with their growth) beside one bit per point and worker.
		{"assemble", graph + e.Weights + e.Factors + e.M + 6*nnzM + N},
		{"analyze", graph + e.Weights + e.Factors + e.M + e.Symbolic},
		{"factor", graph + e.Weights + e.Factors + e.M + e.Symbolic - 4*nnzM + e.L},
		{"eigensolve", graph + e.Weights + e.Factors + e.M + e.Symbolic - 4*nnzM + e.L + e.Krylov},
	}
	e.setPeak()
	return e
}

// setPeak sets Peak and PeakStage from the stages.
func (e *MemoryEstimate) setPeak() {
	e.Peak, e.PeakStage = 0, ""
	for _, s := range e.Stages {
		if s.Bytes > e.Peak {
			e.Peak, e.PeakStage = s.Bytes, s.Name
		}
	}
	e.Peak = int64(float64(e.Peak)*memOverhead) + memBase
}

// retain adds b bytes kept alive by an earlier factorization attempt (Retained) to every stage
// from "assemble" on.
func (e *MemoryEstimate) retain(b int64) {
	if b <= 0 || e.Peak == math.MaxInt64 {
		return
	}
	e.Retained += b
	for i := range e.Stages {
		switch e.Stages[i].Name {
		case "knn", "weights":
		default:
			e.Stages[i].Bytes += b
		}
	}
	e.setPeak()
}

// factorPerRow is the predicted nnz of the factor per row: M's Cholesky factor, or B's L and
// U together (lu).
func factorPerRow(k, n float64, lu bool) float64 {
	if lu {
		return nnzLUCoef * math.Pow(k, nnzLUKExp) * math.Pow(n, nnzLUExp)
	}
	return nnzLCoef * math.Pow(k, nnzLKExp) * math.Pow(n, nnzLExp)
}

// luFactored reports whether the sparse solver factors B = I - W (LU) for the method: the
// methods whose weights sum to one, unless the solver is forced to M's Cholesky factor (or is
// dense). A B that needs pivoting falls back to the Cholesky factor; the symbolic analysis
// of that path checks the limit again.
func luFactored(method Method, solver Solver) bool {
	if solver == SolverDense || solver == SolverSparseCholesky {
		return false
	}
	switch method {
	case LLE, EM, Direct:
		return true
	}
	return false
}

// memoryOverflows reports whether estimateMemory's largest products (in bytes, with a margin
// of 2^8 for their sums and constant factors) leave int64's range; it works in float64.
func memoryOverflows(n, d, k, p int, method Method, solver Solver, nnzL int64) bool {
	N, D, K, P := float64(n), float64(d), float64(k), float64(max(p, 1))
	if nnzL < 0 {
		nnzL = 0
	}
	big := max(N*D, N*K*K, N*K*max(D, P), N*(P+32), N*max(factorPerRow(K, N, false), factorPerRow(K, N, true)), float64(nnzL))
	if method == EMPaper {
		big = max(big, D*D*(N/emPaperChunk+2)) // S_1's partial sums
	}
	if solver == SolverDense {
		big = max(big, N*N)
	}
	return big*8*256 > math.MaxInt64
}

// String is a one-line summary, e.g. "2.5 GiB at the eigensolve stage (L+U 1.1 GiB with
// nnz(L+U) = 118325525, B 326.2 MiB, Krylov basis 221.3 MiB, kNN 152.6 MiB)" (EstimateMemory
// for lle, n = 1M, d = 3, k = 10); M's Cholesky factor is "L ... nnz(L)" beside "M".
func (e MemoryEstimate) String() string {
	if e.Peak == math.MaxInt64 {
		return "more than 8 EiB (beyond int64)"
	}
	l, m := "L", "M"
	if e.Factorization == "lu" {
		l, m = "L+U", "B"
	}
	return fmt.Sprintf("%s at the %s stage (%s %s with nnz(%s) = %d, %s %s, Krylov basis %s, kNN %s)",
		FormatBytes(e.Peak), e.PeakStage, l, FormatBytes(e.L), l, e.NNZL, m, FormatBytes(e.M), FormatBytes(e.Krylov), FormatBytes(e.KNN))
}

// FormatBytes writes a byte count with a binary unit (KiB, MiB, GiB, TiB).
func FormatBytes(b int64) string {
	const unit = 1024
	if b < unit {
		return fmt.Sprintf("%d B", b)
	}
	v, u := float64(b), -1
	for v >= unit && u < 3 {
		v /= unit
		u++
	}
	return fmt.Sprintf("%.1f %ciB", v, "KMGT"[u])
}

// ParseBytes parses a memory size: plain bytes ("123456") or a number with a suffix K, M, G
// or T (powers of 1024; an optional trailing "B" or "iB" is accepted, e.g. "6G", "500MB",
// "1.5GiB"). A fraction of a byte left after the unit is applied is dropped ("1.9" is 1 byte);
// a positive size below one byte and sizes of 2^62 bytes (4 EiB) or more are errors.
func ParseBytes(s string) (int64, error) {
	t := strings.TrimSpace(s)
	u := strings.ToUpper(t)
	u = strings.TrimSuffix(u, "IB")
	u = strings.TrimSuffix(u, "B")
	mult := 1.0
	if u != "" {
		switch u[len(u)-1] {
		case 'K':
			mult = 1 << 10
		case 'M':
			mult = 1 << 20
		case 'G':
			mult = 1 << 30
		case 'T':
			mult = 1 << 40
		}
		if mult != 1 {
			u = u[:len(u)-1]
		}
	}
	num := strings.TrimSpace(u)
	v, err := strconv.ParseFloat(num, 64)
	// big.Float has no underflow: it tells the sign of sizes such as 1e-400, 0xAp-2000 or
	// -1e-700, which ParseFloat rounds to (minus) zero.
	exact, exactOK := new(big.Float).SetString(num)
	if (err == nil || errors.Is(err, strconv.ErrRange)) && (v < 0 || exactOK && exact.Sign() < 0) {
		return 0, fmt.Errorf("memory size %q is negative: use a positive number of bytes, or one with K, M, G or T (e.g. 6G, 500M)", s)
	}
	if err != nil || math.IsNaN(v) || u == "" {
		return 0, fmt.Errorf("memory size %q: use bytes or a number with K, M, G or T (e.g. 6G, 500M)", s)
	}
	b := v * mult
	if b >= math.MaxInt64/2 {
		return 0, fmt.Errorf("memory size %q is too large (it must be below 4 EiB; 0 means no limit)", s)
	}
	// A positive size below one byte (0.5, 0.9B, 1e-400 or 0xAp-2000, which underflow to 0)
	// must not truncate to 0, which callers read as "no limit".
	if (v > 0 || exactOK && exact.Sign() > 0) && b < 1 {
		return 0, fmt.Errorf("memory size %q is less than one byte: give at least 1 byte (e.g. 6G, 500M)", s)
	}
	return int64(b), nil
}

// PhysicalMemory returns MemTotal from /proc/meminfo in bytes, or 0 when it is unknown.
func PhysicalMemory() int64 { return procfs.FileSize("/proc/meminfo", "MemTotal:") }

// memoryLimit resolves Settings.MaxMemory: > 0 as given, 0 the physical memory (no limit when
// unknown), < 0 no limit.
func memoryLimit(s Settings) int64 {
	switch {
	case s.MaxMemory > 0:
		return s.MaxMemory
	case s.MaxMemory == 0:
		return PhysicalMemory()
	}
	return 0
}

// checkMemory fails with an *InputError when the estimate exceeds the limit (0: no limit).
func checkMemory(e MemoryEstimate, limit int64) error {
	if limit <= 0 || e.Peak <= limit {
		return nil
	}
	what := "predicted"
	if e.Refined {
		what = "from the symbolic analysis"
	}
	return inputErr("the fit of n = %d points (d = %d, k = %d, method %s) needs about %s (%s), more than the memory limit of %s: raise the limit (-max-mem / Settings.MaxMemory), use fewer points or a smaller k",
		e.N, e.D, e.K, e.Method, e.String(), what, FormatBytes(limit))
}
