package engine

import (
	"fmt"
	"strings"
)

// Method selects the weight model of a fit.
type Method int

const (
	// LLE is classic locally linear embedding (paper Eqs. (7)-(9) and Section V).
	LLE Method = iota
	// EM is GLLE with the EM algorithm (Alg. 1) in its sound "fibre" form: the paper's prior
	// N(0, sigma_i I) restricted to the sum-to-one plane and the noise-free likelihood applied to
	// the LLE reconstruction; posterior N(w_i^LLE, sigma_i Pi_i).
	EM
	// Direct is GLLE with direct sampling (Alg. 2) with maximum-likelihood temperatures:
	// w_i ~ N(w_i^LLE, Gamma_i), Gamma_i the sum-to-one conditioned inverse of
	// G_i/s_x^2 + V_i^T V_i/s_y^2 + (R_i/s_x^2) I.
	Direct
	// EMPaper is Alg. 1 exactly as printed (Eqs. (21)-(31)): raw neighbour coordinates, the
	// global mean, Omega_i = sigma_i I initialised to I, a fixed number of iterations. Its sigma_i
	// come out negative; draws use |sigma_i| (what the authors' code effectively does).
	EMPaper
	// DirectPaper is Alg. 2 exactly as printed: Gamma_i = (X_i^T X_i + Y_i^T Y_i)^{-1} (Eq. (35))
	// with raw coordinates. Singular matrices are an error unless Settings.DirectRidge > 0.
	DirectPaper
)

var methodNames = [...]string{"lle", "em", "direct", "em-paper", "direct-paper"}

// String returns the method's command-line name.
func (m Method) String() string { return enumName(methodNames[:], int(m), "Method") }

// ParseMethod parses a command-line method name (lle, em, direct, em-paper, direct-paper).
func ParseMethod(s string) (Method, error) {
	i, err := parseEnum(methodNames[:], s, "method")
	return Method(i), err
}

// enumName returns names[i], or kind(i) for a value outside the table.
func enumName(names []string, i int, kind string) string {
	if i >= 0 && i < len(names) {
		return names[i]
	}
	return fmt.Sprintf("%s(%d)", kind, i)
}

// parseEnum returns the index of s in names (case-insensitive) or an error naming the choices.
func parseEnum(names []string, s, kind string) (int, error) {
	for i, n := range names {
		if strings.EqualFold(s, n) {
			return i, nil
		}
	}
	return 0, fmt.Errorf("unknown %s %q: use one of %s", kind, s, strings.Join(names, ", "))
}

// Generative reports whether the method draws stochastic weights.
func (m Method) Generative() bool { return m > LLE && m <= DirectPaper }

// valid reports whether m is one of the methods.
func (m Method) valid() bool { return m >= LLE && m <= DirectPaper }

// RegMode says how Settings.Reg turns into the ridge R_i added to G_i.
type RegMode int

const (
	// RegTrace (default): R_i = Reg * tr(G_i), or Reg when tr(G_i) = 0 (scikit-learn's convention).
	RegTrace RegMode = iota
	// RegAbsolute: R_i = Reg (the authors' code, Reg = 1e-7).
	//
	// In either mode, when G_i + R_i I cannot be factored or the weights' solve has too little
	// headroom over round-off (a ridge far below G_i's scale, e.g. Reg = 1e-16 on quantised
	// data), R_i is grown tenfold until it works, and the point is counted in
	// Report.RegularizedPoints.
	RegAbsolute
)

// Scaling selects the normalisation of the returned embedding.
type Scaling int

const (
	// UnitNorm (default): unit-norm eigenvectors, as scikit-learn and the authors' code return.
	UnitNorm Scaling = iota
	// PaperScaling: (1/n) Y^T Y = I, the constraint of Eq. (37), i.e. eigenvectors times sqrt(n).
	PaperScaling
)

// Solver selects the linear-embedding eigensolver.
type Solver int

const (
	// SolverAuto (default): SolverSparse (SolverDense for n <= 64, where a Lanczos basis does
	// not fit).
	SolverAuto Solver = iota
	// SolverSparse: shift-invert Lanczos over a sparse factorization. For LLE, EM and Direct,
	// whose weights sum to one, it factors B = I - W (LU without pivoting, on the pattern of
	// B + B^T) and applies M^+ = B^+ B^{+T} on the complement of the constant vector; the paper
	// modes, and any weights for which B needs pivoting, use the Cholesky factor of
	// M - sigma I (Eq. (39)). When the eigensolve does not converge (or M - sigma I cannot
	// be factored at its shift nor at the retry shift) and n <= 3000, the result (no error)
	// comes from the dense solver instead; Report.Eigen.Solver says which solver produced it
	// ("sparse", "dense" or "dense-full").
	SolverSparse
	// SolverDense: dense Cholesky of M - sigma I with block inverse iteration; O(n^3) time and
	// 8 n^2 bytes for M, n <= 20000.
	SolverDense
	// SolverSparseCholesky: SolverSparse with the Cholesky factor of M - sigma I for every
	// method (several times the fill of B's LU factor; for comparison).
	SolverSparseCholesky
)

// Settings configures Fit. The zero value is a valid configuration (classic LLE, k = 10, p = 2)
// for data with d >= 3 columns and n >= 11 points: Fit needs Dim < d, Dim < n - 1 and K < n,
// and EM on data with d >= K - 1 needs Dim <= K - 2.
type Settings struct {
	// Method is the weight model. Default LLE.
	Method Method
	// K is the number of neighbours. Default 10.
	K int
	// Dim is the embedding dimension p. Default 2.
	Dim int
	// Reg is the LLE ridge parameter. Default 1e-3 with RegTrace, 1e-7 with RegAbsolute.
	// At most 1e100 with RegTrace (the weights are uniform, 1/k, long before, and the ridge
	// overflows), and the square of the largest accepted coordinate (about 2.5e151 for d = 3,
	// k = 10) with RegAbsolute.
	Reg float64
	// RegMode is how Reg is applied. Default RegTrace. The paper modes keep this setting too:
	// set RegAbsolute with Reg = 1e-7 to reproduce the authors' LLE.
	RegMode RegMode
	// EMIters is the number of EM iterations. EMPaper runs exactly this many (default 10);
	// EM runs at most this many (default max(200, 64 (k - 1))) and stops earlier when the
	// largest relative change of sigma_i falls below EMTol. EM's M-step moves sigma_i towards
	// its fixed point by the factor (k - 1 - r_i) / (k - 1) (r_i: the point's local rank, 3
	// for 3-D data) per iteration, so larger k needs more: 70-74 at k = 10, about 1000 at
	// k = 100 on Swiss rolls (a cap of 200 stopped k = 100 four times above the fixed point
	// before session 31).
	EMIters int
	// EMTol is the convergence tolerance of the EM method, a relative change in (0, 1).
	// Default 1e-10.
	EMTol float64
	// DirectRidge is an explicit ridge added to X_i^T X_i + Y_i^T Y_i by DirectPaper.
	// Default 0: singular matrices make the fit fail with a *DegenerateError.
	DirectRidge float64
	// Scaling is the embedding normalisation. Default UnitNorm.
	Scaling Scaling
	// Solver is the eigensolver. Default SolverAuto: the sparse solver, and the dense one
	// for n <= 64, where Lanczos has too little room.
	Solver Solver
	// Workers is the number of worker goroutines. Default (0 or negative) runtime.GOMAXPROCS(0);
	// values above parallel.MaxWorkers (1024) mean 1024. Results are bit-identical for every
	// value. With two or more, Fit runs the sparse solver's ordering and symbolic analysis on
	// one of them beside the weight stages.
	Workers int
	// Seed is not read by the engine: the fit is deterministic and draws nothing (EMPaper
	// skips the weights Alg. 1 samples in every iteration, which influence no parameter), and
	// Generate, SampleWeights and TransformSample take their seed as an argument. It is kept
	// for source compatibility (the CLI still sets it). Default 0.
	Seed uint64
	// MaxMemory is the memory limit in bytes: Fit estimates its peak memory (EstimateMemory,
	// refined inside the symbolic analysis once nnz(L) is known, before the factor's storage
	// is allocated) and fails with an *InputError when the estimate exceeds it. Default 0: the
	// physical memory (MemTotal of /proc/meminfo; no limit where unknown). Negative: no limit.
	MaxMemory int64
	// Progress, when not nil, is called at the start and end of every long stage of Fit
	// (the stages it reports are coarser than Report.Stages: "analyze" covers ordering and
	// symbolic analysis, "eigensolve" the factorizations too). When Fit returns an error, the
	// stage it stopped in may get no end event. Default nil.
	Progress func(Progress)
}

// Progress reports the state of a long run.
type Progress struct {
	// Stage is "knn", "pattern" (M's pattern, built before the weights when the analysis
	// runs beside them), "weights", "em", "direct", "assemble", "analyze" or "eigensolve".
	Stage string
	Done  int // units done (EM iterations, generations); 0 at a stage's start
	// Total is the units in all, or 0 when the stage has no count; for em's EM stage it is
	// the iteration cap (EMIters), and the stage may end early, converged (Final, Done < Total).
	Total int
	Final bool // the stage has finished
}

// Resolved returns s with every zero numerical setting replaced by its documented default (K,
// Dim, Reg, EMIters, EMTol, ...), as Fit applies them: what a report should show as the
// settings used. Workers and MaxMemory stay 0 when they are 0: their defaults depend on the
// machine (GOMAXPROCS, the physical memory) and are in the Report (Workers, Memory).
func (s Settings) Resolved() Settings { return s.withDefaults() }

// withDefaults returns s with zero fields replaced by their documented defaults.
func (s Settings) withDefaults() Settings {
	if s.K == 0 {
		s.K = 10
	}
	if s.Dim == 0 {
		s.Dim = 2
	}
	if s.Reg == 0 {
		if s.RegMode == RegAbsolute {
			s.Reg = 1e-7
		} else {
			s.Reg = 1e-3
		}
	}
	if s.EMIters == 0 {
		if s.Method == EMPaper {
			s.EMIters = 10
		} else {
			s.EMIters = emItersDefault(s.K)
		}
	}
	if s.EMTol == 0 {
		s.EMTol = 1e-10
	}
	return s
}

// emItersDefault is EM's default iteration cap for k neighbours: max(200, 64 (k - 1)). The
// M-step contracts by at most (k - 2) / (k - 1) per iteration (local rank >= 1), so 64 (k - 1)
// iterations shrink the distance to the fixed point by e^-64 = 1.6e-28 at least: a relative
// change below EMTol's default 1e-10 for any fixed point sigma_i down to 1e-17 of the
// starting 1.
func emItersDefault(k int) int { return max(200, 64*(k-1)) }

// maxReg is the largest relative regularization (RegTrace) Settings.Reg accepts.
const maxReg = 1e100
