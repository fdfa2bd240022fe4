package bench

import (
	"fmt"
	"slices"
	"strings"
)

// StageColumn is a column of a benchmark table: a header and the engine stage names summed
// into it; nil Names is "other", every stage of no named column.
type StageColumn struct {
	Head  string
	Names []string
}

// StageColumns are the benchmark tables' stage columns ("analyze" is the older name of ordering
// + symbolic analysis); stages of no column go to "other". Ordering and symbolic analysis run
// in the background beside weights, EM and the assembly (the fit then waits "analysis wait" for
// them), so the columns other than those two add up to the fit total.
var StageColumns = []StageColumn{
	{"kNN", []string{"knn"}}, {"weights", []string{"weights"}}, {"EM", []string{"em"}},
	{"assembly", []string{"assemble"}}, {"ordering", []string{"ordering", "analyze"}},
	{"symbolic", []string{"symbolic"}}, {"analysis wait", []string{"analysis wait"}}, {"factor", []string{"factor"}}, {"eigensolve", []string{"eigensolve"}},
	{"direct factors", []string{"direct"}}, {"other", nil},
}

// StageSum returns the seconds of the stages summed into the column with stage names names
// (ok = false when no stage belongs to it); stage gives a stage's name and seconds.
func StageSum[S any](stages []S, names []string, stage func(S) (string, float64)) (float64, bool) {
	v, ok := 0.0, false
	for _, st := range stages {
		name, sec := stage(st)
		in := false
		if names == nil { // "other": every stage of no named column
			in = true
			for _, c := range StageColumns {
				if slices.Contains(c.Names, name) {
					in = false
				}
			}
		} else {
			in = slices.Contains(names, name)
		}
		if in {
			v, ok = v+sec, true
		}
	}
	return v, ok
}

// WriteStageHeader writes the header and separator rows of a benchmark table: n, method,
// backend, one column per StageColumns entry, then the trailing column heads (all numeric).
func WriteStageHeader(b *strings.Builder, trailing ...string) {
	b.WriteString("| n | method | backend |")
	for _, c := range StageColumns {
		b.WriteString(" " + c.Head + " |")
	}
	for _, h := range trailing {
		b.WriteString(" " + h + " |")
	}
	b.WriteString("\n|---:|---|---|")
	for range len(StageColumns) + len(trailing) {
		b.WriteString("---:|")
	}
	b.WriteString("\n")
}

// PercentList formats fractions as a comma list of whole percentages ("30%, 31%, 34%"), the
// generation-to-fit ratios of repeated sweep runs.
func PercentList(v []float64) string {
	s := make([]string, len(v))
	for i, x := range v {
		s[i] = fmt.Sprintf("%.0f%%", 100*x)
	}
	return strings.Join(s, ", ")
}
