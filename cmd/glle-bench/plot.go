package main

import (
	"context"
	"fmt"
	"image/color"
	"io"
	"math"
	"path/filepath"
	"strings"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/palette"
	"gonum.org/v1/plot/palette/moreland"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/text"
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
	cs := newColorScale(col) // over every point, as the colour bar of spreadBar
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
	return writeFigure(ctx, path, grid, nil)
}

// footerH is the height of the strip below the panels that writeFigure gives a footer (the
// uncertainty map's colour bar).
const footerH = 0.75 * vg.Inch

// writeFigure is writeGrid with a footer (nil: none) drawn across the full width below the
// panels. Every panel's title is fitted to its panel first (fitTitle).
func writeFigure(ctx context.Context, path string, grid [][]*plot.Plot, footer *plot.Plot) error {
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
	tiles := draw.Tiles{Rows: rows, Cols: cols, PadX: vg.Millimeter, PadY: vg.Millimeter,
		PadTop: vg.Millimeter, PadBottom: vg.Millimeter, PadLeft: vg.Millimeter, PadRight: vg.Millimeter}
	fitTitles(full, tiles)
	w, h := vg.Length(cols)*panelW, vg.Length(rows)*panelH
	fh := vg.Length(0)
	if footer != nil {
		fh = footerH
		fitTitle(&footer.Title.TextStyle, &footer.Title.Text, w-4*vg.Millimeter)
	}
	img := vgimg.NewWith(vgimg.UseWH(w, h+fh), vgimg.UseDPI(dpi), vgimg.UseBackgroundColor(color.White))
	dc := draw.New(img)
	top := dc
	top.Min.Y += fh // vg's y axis points up: the panels sit above the footer
	canvases := plot.Align(full, tiles, top)
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
	if footer != nil {
		bottom := dc
		bottom.Max.Y = bottom.Min.Y + fh
		footer.Draw(draw.Crop(bottom, 4*vg.Millimeter, -4*vg.Millimeter, vg.Millimeter, -vg.Millimeter))
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	return dataio.AtomicWrite(path, func(w io.Writer) error {
		_, err := vgimg.PngCanvas{Canvas: img}.WriteTo(w)
		return err
	})
}

// Title fitting (fitTitle): a title that does not fit its panel on one line is wrapped, at
// the panel's font size or a smaller one down to minTitleSize, onto at most maxTitleLines
// lines (more at minTitleSize if need be). A title drawn wider than its panel was clipped at
// the image's edges or ran into its neighbour's before session 34.
const (
	maxTitleLines = 3
	minTitleSize  = vg.Length(6) // points
)

// fitTitles fits the title of every panel of the grid to its tile's width less 3 mm (room
// for plot.Align's shifts of the tiles, and a gap between neighbouring titles).
func fitTitles(grid [][]*plot.Plot, t draw.Tiles) {
	if len(grid) == 0 || len(grid[0]) == 0 {
		return
	}
	cols := vg.Length(len(grid[0]))
	width := (cols*panelW-t.PadLeft-t.PadRight-(cols-1)*t.PadX)/cols - 3*vg.Millimeter
	for _, r := range grid {
		for _, p := range r {
			if p != nil {
				fitTitle(&p.Title.TextStyle, &p.Title.Text, width)
			}
		}
	}
}

// fitTitle makes the title *txt fit width when drawn in *st, changing only where its lines
// break and the font size: it is wrapped between words, never inside a bracketed or
// parenthesised group that fits a line, at the largest size from st's down to minTitleSize
// that needs at most maxTitleLines lines. Only a single word wider than width at
// minTitleSize (a very long file name) is shortened: its middle is replaced by "…", keeping
// its start and its end.
func fitTitle(st *text.Style, txt *string, width vg.Length) {
	if *txt == "" || st.Width(*txt) <= width {
		return
	}
	units := titleUnits(*txt)
	fits := func(s string) bool { return st.Width(s) <= width }
	for size := st.Font.Size; size >= minTitleSize; size-- {
		st.Font.Size = size
		if lines, ok := wrapTitle(units, fits); ok && len(lines) <= maxTitleLines {
			*txt = strings.Join(lines, "\n")
			return
		}
	}
	st.Font.Size = minTitleSize
	var words []string
	for _, w := range strings.Fields(*txt) {
		words = append(words, elideMiddle(w, fits))
	}
	lines, _ := wrapTitle(words, fits)
	*txt = strings.Join(lines, "\n")
}

// titleUnits splits a title into the pieces a line break goes between: its words, with a
// bracketed or parenthesised group ("[axes 1-2 of 3]") kept as one piece.
func titleUnits(s string) []string {
	var units []string
	var cur []string
	depth := 0
	for _, w := range strings.Fields(s) {
		cur = append(cur, w)
		depth += strings.Count(w, "[") + strings.Count(w, "(") - strings.Count(w, "]") - strings.Count(w, ")")
		if depth <= 0 {
			units, cur, depth = append(units, strings.Join(cur, " ")), nil, 0
		}
	}
	if len(cur) > 0 {
		units = append(units, strings.Join(cur, " "))
	}
	return units
}

// wrapTitle fills lines greedily with the units (a unit wider than a line is split into its
// words); ok is false when a single word does not fit a line.
func wrapTitle(units []string, fits func(string) bool) (lines []string, ok bool) {
	ok = true
	line := ""
	add := func(u string) {
		switch {
		case line == "":
			line = u
		case fits(line + " " + u):
			line += " " + u
		default:
			lines, line = append(lines, line), u
		}
		if !fits(line) {
			ok = false
		}
	}
	for _, u := range units {
		if fits(u) || !strings.Contains(u, " ") {
			add(u)
			continue
		}
		for _, w := range strings.Fields(u) {
			add(w)
		}
	}
	if line != "" {
		lines = append(lines, line)
	}
	return lines, ok
}

// elideMiddle returns w, or, when it does not fit, its start and end around "…" with as
// many runes kept as fit (at least one at each end).
func elideMiddle(w string, fits func(string) bool) string {
	if fits(w) {
		return w
	}
	r := []rune(w)
	for keep := len(r) - 1; keep > 2; keep-- {
		head := (keep + 1) / 2
		if s := string(r[:head]) + "…" + string(r[len(r)-(keep-head):]); fits(s) {
			return s
		}
	}
	return string(r[:1]) + "…" + string(r[len(r)-1:])
}

// plotEmbedding draws -plot: the base embedding and the generations gens, the first
// len(gens) of the run's total (embed keeps at most maxPlotGenerations; the last panel's
// title says when some are left out).
func plotEmbedding(ctx context.Context, path, input, method string, base *mat.Dense, gens []*mat.Dense, total int, a float64, col []float64) error {
	grid, err := embeddingGrid(input, method, base, gens, total, a, col)
	if err != nil {
		return err
	}
	return writeGrid(ctx, path, grid)
}

// embeddingGrid lays out -plot's panels, four to a row: the base embedding, then the
// generations gens; when they are fewer than the run's total, the last panel's title says
// how many are shown (the PNG showed generations 0-6 of 10 without a word before session 34).
func embeddingGrid(input, method string, base *mat.Dense, gens []*mat.Dense, total int, a float64, col []float64) ([][]*plot.Plot, error) {
	n, _ := base.Dims()
	input = filepath.Base(input)
	var panels []*plot.Plot
	title := fmt.Sprintf("%s, %s (n=%d)", input, method, n)
	if len(gens) > 0 {
		title = fmt.Sprintf("%s, %s mean weights", input, method)
	}
	p, err := embeddingPanel(title, base, col)
	if err != nil {
		return nil, err
	}
	panels = append(panels, p)
	for g, Y := range gens {
		title := fmt.Sprintf("%s generation %d (a=%g)", method, g, a)
		if g == len(gens)-1 && len(gens) < total {
			title += fmt.Sprintf(" [%d of %d generations shown]", len(gens), total)
		}
		p, err := embeddingPanel(title, Y, col)
		if err != nil {
			return nil, err
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
	return grid, nil
}

// plotNote is the summary's note when -plot leaves generations out (empty when it draws all).
func plotNote(path string, total int) string {
	if total <= maxPlotGenerations {
		return ""
	}
	return fmt.Sprintf("-plot %s shows generations 0-%d of %d (it draws at most %d beside the base embedding)",
		path, maxPlotGenerations-1, total, maxPlotGenerations)
}

// spreadBar is the uncertainty map's colour bar: the colours of v (log10 spreads) from its
// minimum to its maximum, as scatterPanel colours them, the range in the title.
func spreadBar(v []float64) *plot.Plot {
	cs := newColorScale(v)
	p := plot.New()
	p.Title.TextStyle.Font.Size = vg.Points(8)
	p.HideY()
	p.X.Tick.Label.Font.Size = vg.Points(7)
	p.X.Padding = 0
	bar := colorBar{cs: cs, lo: cs.min, hi: cs.max}
	switch {
	case finite(cs.min):
		p.Title.Text = fmt.Sprintf("colour: log10 spread, min %.3g (dark) to max %.3g (light)", cs.min, cs.max)
	default: // one value, or none finite: every point has the middle colour
		v0 := math.NaN()
		for _, x := range v {
			if finite(x) {
				v0 = x
				break
			}
		}
		if !finite(v0) {
			p.Title.Text = "colour: log10 spread (no finite value)"
			bar.lo, bar.hi = 0, 1
		} else {
			p.Title.Text = fmt.Sprintf("colour: log10 spread %.3g at every point", v0)
			bar.lo, bar.hi = v0-0.5, v0+0.5
		}
	}
	p.Add(bar)
	return p
}

// colorBar draws its colour scale over [lo, hi] as a strip of cells.
type colorBar struct {
	cs     colorScale
	lo, hi float64
}

// colorBarCells is the number of cells of a colour bar.
const colorBarCells = 64

func (b colorBar) Plot(c draw.Canvas, p *plot.Plot) {
	trX, trY := p.Transforms(&c)
	for i := 0; i < colorBarCells; i++ {
		x0 := b.lo + (b.hi-b.lo)*float64(i)/colorBarCells
		x1 := b.lo + (b.hi-b.lo)*float64(i+1)/colorBarCells
		c.SetColor(b.cs.at((x0 + x1) / 2))
		var path vg.Path
		path.Move(vg.Point{X: trX(x0), Y: trY(0)})
		path.Line(vg.Point{X: trX(x1), Y: trY(0)})
		path.Line(vg.Point{X: trX(x1), Y: trY(1)})
		path.Line(vg.Point{X: trX(x0), Y: trY(1)})
		path.Close()
		c.Fill(path)
	}
}

func (b colorBar) DataRange() (xmin, xmax, ymin, ymax float64) { return b.lo, b.hi, 0, 1 }
