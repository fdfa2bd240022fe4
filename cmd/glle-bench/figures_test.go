package main

import (
	"context"
	"fmt"
	"io"
	"testing"

	"gonum.org/v1/plot"
)

// newTestFigRun is a figures run at n points without progress line.
func newTestFigRun(n int) *figRun {
	c := figuresConfig{n: n, k: 10, seed: 1, workers: 1}
	return &figRun{c: c, prog: newProgress(io.Discard, false), data: map[string]*figData{}}
}

// paperRows are the row titles of the paper's Figs. 3 and 4, in order.
var paperRows = []string{"S-curve", "Swiss roll", "Swiss roll with hole", "severed sphere"}

func checkShape(t *testing.T, fig string, grid [][]*plot.Plot, rows, cols int) {
	t.Helper()
	if len(grid) != rows {
		t.Fatalf("%s: %d rows, want %d", fig, len(grid), rows)
	}
	for j, row := range grid {
		if len(row) != cols {
			t.Fatalf("%s: row %d has %d panels, want %d", fig, j, len(row), cols)
		}
	}
}

// TestFig3And4Layout: Figs. 3 and 4 follow the paper's captions. Fig. 3: rows S-curve, Swiss
// roll, Swiss roll with hole, severed bowl (the severed sphere); columns LLE, four EM
// generations, four direct ones (the Swiss roll was the first row before session 34). Fig. 4:
// the same rows, (a) EM at a = 0.01, 0.1, 1, 5, 10 then (b) direct sampling at the same
// scales, every panel naming its dataset (it drew the Swiss roll alone, one row per method,
// titled "GLLE-EM, a = 0.01"). Fig. 4's a = 1 column reuses Fig. 3's generation 0.
func TestFig3And4Layout(t *testing.T) {
	ctx := context.Background()
	r := newTestFigRun(300)
	g3, err := r.fig3(ctx)
	if err != nil {
		t.Fatal(err)
	}
	checkShape(t, "fig 3", g3, 4, 1+2*figGenerations)
	for j, row := range g3 {
		want := []string{paperRows[j] + ": LLE"}
		for _, m := range []string{"GLLE-EM", "GLLE direct"} {
			for g := 1; g <= figGenerations; g++ {
				want = append(want, fmt.Sprintf("%s #%d", m, g))
			}
		}
		for i, p := range row {
			if p.Title.Text != want[i] {
				t.Errorf("fig 3 row %d panel %d: title %q, want %q", j, i, p.Title.Text, want[i])
			}
		}
	}
	gens := r.gens
	g4, err := r.fig4(ctx)
	if err != nil {
		t.Fatal(err)
	}
	checkShape(t, "fig 4", g4, 4, 2*len(fig4Scales))
	for j, row := range g4 {
		for i, p := range row {
			m := "GLLE-EM"
			if i >= len(fig4Scales) {
				m = "GLLE direct"
			}
			want := fmt.Sprintf("%s: %s, a = %g", paperRows[j], m, fig4Scales[i%len(fig4Scales)])
			if p.Title.Text != want {
				t.Errorf("fig 4 row %d panel %d: title %q, want %q", j, i, p.Title.Text, want)
			}
		}
	}
	if want := 2 * len(paperRows) * (len(fig4Scales) - 1); r.gens-gens != want {
		t.Errorf("fig 4 drew %d generations after fig 3, want %d (a = 1 reused)", r.gens-gens, want)
	}
}
