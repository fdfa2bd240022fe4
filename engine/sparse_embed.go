package engine

import (
	"context"
)

// sparseEmbed holds the sparse path's reusable state: M's pattern, the ordering and symbolic
// analysis, the numeric factor.
type sparseEmbed struct {
	m *Model
}

func newSparseEmbed(m *Model) *sparseEmbed { return &sparseEmbed{m: m} }

func (s *sparseEmbed) solve(ctx context.Context, w []float64, nev int, deflate bool, warm []float64, wp int, prog func(Progress), rep *Report) ([]float64, []float64, EigenReport, error) {
	// Until the sparse solver lands, use the dense path.
	return denseSmallest(ctx, s.m.N, s.m.K, s.m.Neighbors, w, nev, deflate, warm, wp)
}
