package main

import (
	"context"
	"encoding/json"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
)

// checkTitleFits fails unless every line of p's title fits width in p's title font, at 6
// points or more, and the title keeps every word of want (apart from line breaks).
func checkTitleFits(t *testing.T, p *plot.Plot, want string, width vg.Length) {
	t.Helper()
	st := p.Title.TextStyle
	for _, line := range strings.Split(p.Title.Text, "\n") {
		if w := st.Width(line); w > width {
			t.Errorf("title line %q is %.1f pt wide at %.1f pt, more than its panel's %.1f pt", line, w, st.Font.Size, width)
		}
	}
	if st.Font.Size < 6 {
		t.Errorf("title %q drawn at %.1f pt, below 6 pt", p.Title.Text, st.Font.Size)
	}
	if got := strings.Fields(p.Title.Text); !slices.Equal(got, strings.Fields(want)) {
		t.Errorf("title %q lost words of %q", p.Title.Text, want)
	}
}

// TestTitlesFitPanels: the titles of the plots a user reported fit their panels once drawn,
// with every word kept (session 34: the uncertainty PNG of severed-sphere read "ered-sphere,
// direct: log10 spread over 12 generat", -dim 1 panel titles ran into each other and a 33
// character file name lost the start of the base panel's title).
func TestTitlesFitPanels(t *testing.T) {
	dir := t.TempDir()
	col := []float64{0, 1, 2, 3}
	Y1 := mat.NewDense(4, 1, []float64{0, 1, 2, 3})
	Y2 := mat.NewDense(4, 2, []float64{0, 1, 2, 3, 1, 0, 3, 2})
	width := panelW - 2*vg.Millimeter // a tile of a one-column grid, at least as wide as any other
	for _, c := range []struct {
		name   string
		titles []string
		Y      *mat.Dense
	}{
		{"uncertainty", []string{"severed-sphere, direct: log10 spread over 12 generations"}, Y2},
		{"dim 1", []string{"a_very_long_input_file_name_3.npy, em mean weights", "em generation 0 (a=1)", "em generation 1 (a=1)", "em generation 2 (a=1)"}, Y1},
		{"file name", []string{"input_file_named_with_33_chars.npy, direct-paper (n=2000)"}, Y2},
	} {
		var row []*plot.Plot
		var want []string
		for _, title := range c.titles {
			p, err := embeddingPanel(title, c.Y, col)
			if err != nil {
				t.Fatal(err)
			}
			row, want = append(row, p), append(want, p.Title.Text)
		}
		if err := writeGrid(context.Background(), filepath.Join(dir, "t.png"), [][]*plot.Plot{row}); err != nil {
			t.Fatal(err)
		}
		for i, p := range row {
			checkTitleFits(t, p, want[i], width)
		}
	}
}

// TestFitTitleElides: a single word wider than the panel at the smallest size (a very long
// file name) keeps its start and end around "…"; a title that fits is left alone.
func TestFitTitleElides(t *testing.T) {
	p := plot.New()
	long := strings.Repeat("x", 40) + "_middle_" + strings.Repeat("y", 40) + ".npy"
	p.Title.Text = long + ", em mean weights"
	p.Title.TextStyle.Font.Size = vg.Points(9)
	width := vg.Points(150)
	fitTitle(&p.Title.TextStyle, &p.Title.Text, width)
	if p.Title.TextStyle.Font.Size != minTitleSize {
		t.Errorf("font size %v, want the smallest, %v", p.Title.TextStyle.Font.Size, minTitleSize)
	}
	lines := strings.Split(p.Title.Text, "\n")
	if len(lines) != 2 || !strings.HasPrefix(lines[0], "xxx") || !strings.HasSuffix(lines[0], "yy.npy,") || !strings.Contains(lines[0], "…") ||
		lines[1] != "em mean weights" {
		t.Errorf("title %q: want the file name's start and end around … then the rest", p.Title.Text)
	}
	for _, l := range lines {
		if p.Title.TextStyle.Width(l) > width {
			t.Errorf("line %q wider than %v", l, width)
		}
	}
	short := plot.New()
	short.Title.Text = "GLLE-EM #1"
	fitTitle(&short.Title.TextStyle, &short.Title.Text, width)
	if short.Title.Text != "GLLE-EM #1" || short.Title.TextStyle.Font.Size != plot.New().Title.TextStyle.Font.Size {
		t.Errorf("a short title changed: %q at %v", short.Title.Text, short.Title.TextStyle.Font.Size)
	}
	// A bracketed group is kept on one line when it fits one.
	g := plot.New()
	g.Title.Text = "em generation 6 (a=1) [axis 1 across, colour up]"
	g.Title.TextStyle.Font.Size = vg.Points(9)
	fitTitle(&g.Title.TextStyle, &g.Title.Text, vg.Points(150))
	if g.Title.Text != "em generation 6 (a=1)\n[axis 1 across, colour up]" {
		t.Errorf("title %q: want the bracketed group on its own line", g.Title.Text)
	}
}

// TestSpreadBar: the uncertainty map's colour bar names the range of log10 spreads it
// colours (the map had no scale before session 34), and a constant spread its one value.
func TestSpreadBar(t *testing.T) {
	if p := spreadBar([]float64{-3.25, -1, -2}); p.Title.Text != "colour: log10 spread, min -3.25 (dark) to max -1 (light)" {
		t.Errorf("bar title %q", p.Title.Text)
	}
	if p := spreadBar([]float64{-2, -2}); p.Title.Text != "colour: log10 spread -2 at every point" {
		t.Errorf("constant bar title %q", p.Title.Text)
	}
}

// TestUncertaintyPNGHasColourBar: the uncertainty PNG is the panel with the colour bar below
// it: taller than wide (it was one square panel).
func TestUncertaintyPNGHasColourBar(t *testing.T) {
	dir := t.TempDir()
	mustRun(t, dir, "embed", "-dataset", "scurve", "-n", "300", "-method", "direct", "-generations", "3", "-uncertainty", "-plot", "y.png", "-out", "y.npy", "-q")
	f, err := os.Open(filepath.Join(dir, "y_uncertainty.png"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatal(err)
	}
	b := img.Bounds()
	if want := int(math.Round(float64(panelH+footerH) / 72 * dpi)); b.Dy() < want-1 || b.Dy() > want+1 || b.Dx() >= b.Dy() {
		t.Fatalf("uncertainty PNG %d x %d: want %d pixels high (panel and colour bar)", b.Dx(), b.Dy(), want)
	}
	// The footer (below the panel) holds a colour gradient: many distinct chromatic colours
	// (channels apart by more than 30 of 255), which neither a blank strip nor its title's
	// anti-aliased grey text has.
	top := b.Min.Y + int(math.Round(float64(panelH)/72*dpi))
	colours := map[[3]uint32]bool{}
	for y := top; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			r, g, bl, _ := img.At(x, y).RGBA()
			c := [3]uint32{r >> 8, g >> 8, bl >> 8}
			if max(c[0], c[1], c[2])-min(c[0], c[1], c[2]) > 30 {
				colours[c] = true
			}
		}
	}
	if len(colours) < 20 {
		t.Errorf("the footer has %d distinct chromatic colours: no colour bar", len(colours))
	}
}

// TestPlotGenerationsNote: -plot draws at most maxPlotGenerations generations, and says so
// when the run drew more: a note in the summary and in -json's notes (the PNG showed
// generations 0-6 of 10 without a word before session 34); none when it draws them all.
func TestPlotGenerationsNote(t *testing.T) {
	dir := t.TempDir()
	r := mustRun(t, dir, "embed", "-dataset", "scurve", "-n", "300", "-method", "direct", "-generations", "9", "-plot", "y.png", "-out", "y.npy", "-json", "y.json")
	want := "note: -plot y.png shows generations 0-6 of 9 (it draws at most 7 beside the base embedding)"
	if !strings.Contains(r.stderr, want) {
		t.Errorf("summary lacks %q:\n%s", want, r.stderr)
	}
	var j struct{ Notes []string }
	if err := json.Unmarshal(mustRead(t, dir, "y.json"), &j); err != nil || len(j.Notes) != 1 || !strings.Contains(want, j.Notes[0]) {
		t.Errorf("-json notes %q (%v), want the note", j.Notes, err)
	}
	r = mustRun(t, dir, "embed", "-dataset", "scurve", "-n", "300", "-method", "direct", "-generations", "7", "-plot", "y.png", "-out", "y.npy")
	if strings.Contains(r.stderr, "shows generations") {
		t.Errorf("a plot of every generation has a note: %s", r.stderr)
	}
}

// TestEmbeddingGridShown: -plot's grid is the base panel and the kept generations, four to a
// row, and its last panel says how many of the run's generations are shown when not all.
func TestEmbeddingGridShown(t *testing.T) {
	Y := mat.NewDense(3, 2, []float64{0, 1, 1, 0, 2, 2})
	col := []float64{0, 1, 2}
	gens := []*mat.Dense{Y, Y, Y, Y, Y, Y, Y}
	for _, c := range []struct {
		total int
		last  string
	}{{10, "em generation 6 (a=0.5) [7 of 10 generations shown]"}, {7, "em generation 6 (a=0.5)"}} {
		grid, err := embeddingGrid("X.npy", "em", Y, gens, c.total, 0.5, col)
		if err != nil {
			t.Fatal(err)
		}
		if len(grid) != 2 || len(grid[0]) != 4 || len(grid[1]) != 4 {
			t.Fatalf("total %d: grid of %d rows, want 2 rows of 4", c.total, len(grid))
		}
		if got := grid[1][3].Title.Text; got != c.last {
			t.Errorf("total %d: last title %q, want %q", c.total, got, c.last)
		}
		if got := grid[0][0].Title.Text; got != "X.npy, em mean weights" {
			t.Errorf("base title %q", got)
		}
	}
}
