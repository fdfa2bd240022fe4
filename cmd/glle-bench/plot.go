package main

import (
	"context"
	"fmt"
	"image/color"
	"io"
	"math"
	"path/filepath"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/palette"
	"gonum.org/v1/plot/palette/moreland"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"

	"glle/bench/dataio"
)

// Panel geometry of the PNG figures.
const (
	panelW = 2.4 * vg.Inch
	panelH = 2.4 * vg.Inch
	dpi    = 110
)

// colorScale maps values to colours of a perceptually ordered map, avoiding its nearly black
// and nearly white ends.
type colorScale struct {
	cm       palette.ColorMap
	min, max float64
}

func newColorScale(v []float64) colorScale {
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, x := range v {
		if finite(x) {
			lo, hi = math.Min(lo, x), math.Max(hi, x)
		}
	}
	if !(lo < hi) {
		// One value (or none finite): every point gets the middle colour, whatever the
		// value (it was placed on [0, 1], so a constant 7 drew light and -7 dark).
		lo, hi = math.Inf(-1), math.Inf(1)
	}
	cm := moreland.Kindlmann()
	cm.SetMin(0)
	cm.SetMax(1)
	return colorScale{cm: cm, min: lo, max: hi}
}

func (s colorScale) at(x float64) color.Color {
	t := 0.5
	if finite(x) && finite(s.min) {
		t = (x - s.min) / (s.max - s.min)
	}
	t = 0.12 + 0.76*math.Min(1, math.Max(0, t))
	c, err := s.cm.At(t)
	if err != nil {
		return color.Gray{Y: 128}
	}
	return c
}

// scatterPanel is one titled panel: the points (xs[i], ys[i]) coloured by col[i].
func scatterPanel(title string, xs, ys, col []float64) (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = title
	p.Title.TextStyle.Font.Size = vg.Points(9)
	p.HideAxes()
	// A panel of a few hundred pixels shows no more with more points, and each point costs
	// memory until the PNG is drawn (32 bytes) and drawing time (about 2.5 us): above
	// maxPanelPoints every step-th point is plotted, and the title says so. figures at
	// -n 20000000 kept 36 full panels (23 GB) before session 32.
	step := (len(xs) + maxPanelPoints - 1) / maxPanelPoints
	if step > 1 {
		p.Title.Text += fmt.Sprintf(" [1 in %d points shown]", step)
		xs, ys, col = everyNth(xs, step), everyNth(ys, step), everyNth(col, step)
	}
	xy := make(plotter.XYs, len(xs))
	for i := range xs {
		xy[i] = plotter.XY{X: xs[i], Y: ys[i]}
	}
	sc, err := plotter.NewScatter(xy)
	if err != nil {
		return nil, fmt.Errorf("panel %q: %w", title, err)
	}
	cs := newColorScale(col)
	radius := vg.Points(1.1)
	if len(xs) > 3000 {
		radius = vg.Points(0.8)
	}
	sc.GlyphStyleFunc = func(i int) draw.GlyphStyle {
		return draw.GlyphStyle{Color: cs.at(col[i]), Radius: radius, Shape: draw.CircleGlyph{}}
	}
	p.Add(sc)
	return p, nil
}

// maxPanelPoints is the most points one scatter panel draws (scatterPanel).
const maxPanelPoints = 250000

// everyNth returns x[0], x[step], x[2 step], ... (x itself for step <= 1).
func everyNth(x []float64, step int) []float64 {
	if step <= 1 {
		return x
	}
	out := make([]float64, 0, (len(x)+step-1)/step)
	for i := 0; i < len(x); i += step {
		out = append(out, x[i])
	}
	return out
}

// embeddingPanel plots the first two columns of Y (a 1-D embedding against the colour); the
// title says so when Y has other than two columns.
func embeddingPanel(title string, Y *mat.Dense, col []float64) (*plot.Plot, error) {
	_, p := Y.Dims()
	xs := column(Y, 0)
	ys := col
	switch {
	case p >= 2:
		ys = column(Y, 1)
		if p > 2 {
			title += fmt.Sprintf(" [axes 1-2 of %d]", p)
		}
	default:
		title += " [axis 1 across, colour up]"
	}
	return scatterPanel(title, xs, ys, col)
}

// writeGrid draws the panels (rows of equal length; nil cells stay empty) into one PNG,
// atomically. A cancelled ctx stops it between panels (a panel of 200,000 points takes about
// half a second) and before the PNG is encoded.
func writeGrid(ctx context.Context, path string, grid [][]*plot.Plot) error {
	rows := len(grid)
	cols := 0
	for _, r := range grid {
		cols = max(cols, len(r))
	}
	full := make([][]*plot.Plot, rows)
	for j, r := range grid {
		full[j] = make([]*plot.Plot, cols)
		copy(full[j], r)
	}
	img := vgimg.NewWith(vgimg.UseWH(vg.Length(cols)*panelW, vg.Length(rows)*panelH), vgimg.UseDPI(dpi),
		vgimg.UseBackgroundColor(color.White))
	dc := draw.New(img)
	tiles := draw.Tiles{Rows: rows, Cols: cols, PadX: vg.Millimeter, PadY: vg.Millimeter,
		PadTop: vg.Millimeter, PadBottom: vg.Millimeter, PadLeft: vg.Millimeter, PadRight: vg.Millimeter}
	canvases := plot.Align(full, tiles, dc)
	for j := range full {
		for i, p := range full[j] {
			if err := ctx.Err(); err != nil {
				return err
			}
			if p != nil {
				p.Draw(canvases[j][i])
			}
		}
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	return dataio.AtomicWrite(path, func(w io.Writer) error {
		_, err := vgimg.PngCanvas{Canvas: img}.WriteTo(w)
		return err
	})
}

// plotEmbedding draws -plot: the base embedding and up to maxPlotGenerations generations.
func plotEmbedding(ctx context.Context, path, input, method string, base *mat.Dense, gens []*mat.Dense, a float64, col []float64) error {
	n, _ := base.Dims()
	input = filepath.Base(input)
	var panels []*plot.Plot
	title := fmt.Sprintf("%s, %s (n=%d)", input, method, n)
	if len(gens) > 0 {
		title = fmt.Sprintf("%s, %s mean weights", input, method)
	}
	p, err := embeddingPanel(title, base, col)
	if err != nil {
		return err
	}
	panels = append(panels, p)
	for g, Y := range gens {
		p, err := embeddingPanel(fmt.Sprintf("%s generation %d (a=%g)", method, g, a), Y, col)
		if err != nil {
			return err
		}
		panels = append(panels, p)
	}
	const perRow = 4
	var grid [][]*plot.Plot
	for len(panels) > 0 {
		m := min(perRow, len(panels))
		grid = append(grid, panels[:m])
		panels = panels[m:]
	}
	return writeGrid(ctx, path, grid)
}
