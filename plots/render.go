package plots

import (
	"fmt"
	"image/color"
	"io"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"

	"github.com/nvshbench/nvshbench/internal/table"
	"github.com/nvshbench/nvshbench/internal/units"
)

// Size of every chart.
var (
	Width  = 13.5 * vg.Inch
	Height = 6.5 * vg.Inch
)

// PNGDPI is the PNG's resolution: 13.5 × 6.5 in at 144 dpi is 1944 × 936 px.
var PNGDPI = 144

// Formats are the image formats Render writes.
var Formats = []string{"png", "svg"}

// Pow2Ticks labels a log2 byte axis: a tick at every power of two, every
// third one labelled counting down from the largest (so the last size
// always has its label: ..., 128 KiB, 1 MiB). Count: plain numbers (a
// token count), not bytes. At: the sizes measured; when they are few (a
// quick run's ×4 steps) exactly they are labelled.
type Pow2Ticks struct {
	Count bool
	At    []float64
}

func (t Pow2Ticks) label(v float64) string {
	if t.Count {
		return strconv.FormatInt(int64(v), 10)
	}
	return units.Bytes(int64(v))
}

// Ticks implements plot.Ticker.
func (t Pow2Ticks) Ticks(min, max float64) []plot.Tick {
	if n := len(t.At); n > 0 && n <= 12 {
		var ticks []plot.Tick
		at := map[float64]bool{}
		for _, v := range t.At {
			at[v] = true
			ticks = append(ticks, plot.Tick{Value: v, Label: t.label(v)})
		}
		for e := 0; e <= 62; e++ { // unlabelled marks at the other powers of two
			if v := math.Ldexp(1, e); v >= min*0.999 && v <= max*1.001 && !at[v] {
				ticks = append(ticks, plot.Tick{Value: v})
			}
		}
		return ticks
	}
	var es []int
	for e := 0; e <= 62; e++ {
		v := math.Ldexp(1, e)
		if v >= min*0.999 && v <= max*1.001 {
			es = append(es, e)
		}
	}
	if len(es) == 0 {
		return nil
	}
	step := 1
	if n := len(es); n > 13 {
		step = 3
	} else if n > 7 {
		step = 2
	}
	last := es[len(es)-1]
	var ticks []plot.Tick
	for _, e := range es {
		label := ""
		if (last-e)%step == 0 {
			label = t.label(math.Ldexp(1, e))
		}
		ticks = append(ticks, plot.Tick{Value: math.Ldexp(1, e), Label: label})
	}
	return ticks
}

// LogTicks125 labels a log axis at 1, 2 and 5 times each power of ten,
// falling back to every integer multiple when the range is narrow; labels
// never use exponents (5000, not 5e+03).
type LogTicks125 struct{}

// Ticks implements plot.Ticker.
func (LogTicks125) Ticks(min, max float64) []plot.Tick {
	gen := func(mults []float64) []plot.Tick {
		var out []plot.Tick
		for e := math.Floor(math.Log10(min)) - 1; e <= math.Ceil(math.Log10(max)); e++ {
			for _, m := range mults {
				v := m * math.Pow(10, e)
				if v >= min*0.999 && v <= max*1.001 {
					out = append(out, plot.Tick{Value: v, Label: units.Value(v)})
				}
			}
		}
		return out
	}
	t := gen([]float64{1, 2, 5})
	if len(t) < 3 {
		t = gen([]float64{1, 1.5, 2, 3, 4, 5, 6, 7, 8, 9})
	}
	return t
}

// logBounds widens a log axis's range to the 1-2-5 values around the
// data, so its labelled ticks reach past the highest and lowest point.
func logBounds(lo, hi float64) (float64, float64) {
	steps := []float64{1, 2, 5, 10}
	down := func(v float64) float64 {
		e := math.Pow(10, math.Floor(math.Log10(v)))
		for i := len(steps) - 1; i >= 0; i-- {
			if steps[i]*e <= v*1.0000001 {
				return steps[i] * e
			}
		}
		return e
	}
	up := func(v float64) float64 {
		e := math.Pow(10, math.Floor(math.Log10(v)))
		for _, m := range steps {
			if m*e >= v*0.9999999 {
				return m * e
			}
		}
		return 10 * e
	}
	return down(lo), up(hi)
}

// LinearTicks puts 4 to 10 labelled ticks at 1, 2 or 5 times a power of ten,
// every label with the same number of decimals (250, 500, 750 — not 250.00).
type LinearTicks struct{}

// Ticks implements plot.Ticker.
func (LinearTicks) Ticks(min, max float64) []plot.Tick {
	span := max - min
	if span <= 0 {
		return []plot.Tick{{Value: min, Label: units.Value(min)}}
	}
	step := math.Pow(10, math.Floor(math.Log10(span/5)))
	for _, m := range []float64{1, 2, 2.5, 5, 10} {
		if span/(step*m) <= 8 {
			step *= m
			break
		}
	}
	dec := 0
	if step < 1 {
		dec = int(math.Ceil(-math.Log10(step) - 1e-9))
		if math.Abs(step*math.Pow(10, float64(dec))-math.Round(step*math.Pow(10, float64(dec)))) > 1e-9 {
			dec++
		}
	} else if step != math.Trunc(step) {
		dec = 1
	}
	var out []plot.Tick
	for v := math.Ceil(min/step-1e-9) * step; v <= max+step*1e-9; v += step {
		out = append(out, plot.Tick{Value: v, Label: strconv.FormatFloat(v+0, 'f', dec, 64)})
		if len(out) > 50 {
			break
		}
	}
	return out
}

func rgb(hex string) color.Color {
	var r, g, b uint8
	if _, err := fmt.Sscanf(hex, "#%02x%02x%02x", &r, &g, &b); err != nil {
		return color.Black
	}
	return color.NRGBA{R: r, G: g, B: b, A: 255}
}

func lengths(d []float64) []vg.Length {
	var out []vg.Length
	for _, v := range d {
		out = append(out, vg.Points(v))
	}
	return out
}

// entry is a row of a chart's legend: its text and what it shows of the
// line (none: a row of text alone).
type entry struct {
	text   string
	thumbs []plot.Thumbnailer
	series bool // a measured series (the rows a legend too long leaves out)
}

// build turns a spec into a gonum plot and its legend's rows (drawn beside
// the data, never over it: drawChart).
func build(s Spec) (*plot.Plot, []entry, error) {
	p := plot.New()
	var legend []entry
	add := func(text string, thumbs ...plot.Thumbnailer) {
		legend = append(legend, entry{text: text, thumbs: thumbs})
	}
	p.Title.Text = strings.Join(TitleLines(s.Title), "\n")
	p.X.Label.Text = s.XLabel
	p.Y.Label.Text = s.YLabel
	p.X.Scale = plot.LogScale{}
	xs := map[float64]bool{}
	for _, ser := range s.Series {
		for _, pt := range ser.Points {
			xs[pt.X] = true
		}
	}
	for _, m := range s.Marks {
		if m.X > 0 {
			xs[m.X] = true
		}
	}
	p.X.Tick.Marker = Pow2Ticks{Count: s.XUnit != "", At: slices.Sorted(maps.Keys(xs))}
	p.Y.Tick.Marker = LinearTicks{}
	if s.LogY {
		p.Y.Scale = plot.LogScale{}
		p.Y.Tick.Marker = LogTicks125{}
	}
	p.Add(plotter.NewGrid())
	minX, maxX := math.Inf(1), math.Inf(-1)
	minY, maxY := math.Inf(1), math.Inf(-1)
	for _, ser := range s.Series {
		for _, pt := range ser.Points {
			if pt.X <= 0 || pt.Y <= 0 || pt.Lo <= 0 || pt.Hi <= 0 {
				return nil, legend, fmt.Errorf("series %q: non-positive value at %g B cannot be drawn on a log axis", ser.Label, pt.X)
			}
			minX, maxX = math.Min(minX, pt.X), math.Max(maxX, pt.X)
			minY, maxY = math.Min(minY, pt.Lo), math.Max(maxY, pt.Hi)
		}
	}
	if math.IsInf(minX, 0) {
		return nil, legend, fmt.Errorf("chart %s has no points", s.Name)
	}
	if minX == maxX {
		minX, maxX = minX/2, maxX*2
	}
	for _, m := range append(append([]Mark{}, s.Marks...), s.Limits...) {
		if m.Y > 0 {
			minY, maxY = math.Min(minY, m.Y), math.Max(maxY, m.Y)
		}
		if m.X > 0 {
			minX, maxX = math.Min(minX, m.X), math.Max(maxX, m.X)
		}
	}
	if s.YMax > 0 {
		maxY = s.YMax
	}
	if !s.LogY {
		minY = 0
		maxY *= 1.05
	} else {
		minY, maxY = logBounds(minY, maxY)
	}
	if s.L2Edge > 0 {
		hi := math.Min(s.L2Edge, maxX)
		shade, err := plotter.NewPolygon(plotter.XYs{{X: minX, Y: minY}, {X: hi, Y: minY}, {X: hi, Y: maxY}, {X: minX, Y: maxY}})
		if err != nil {
			return nil, legend, err
		}
		shade.Color = color.NRGBA{R: 120, G: 120, B: 120, A: 28}
		shade.LineStyle.Width = 0
		p.Add(shade)
		add("L2-resident sizes (cache, not link)", shade)
	}
	for _, ser := range s.Series {
		col := rgb(ser.Color)
		line := make(plotter.XYs, len(ser.Points))
		band := make(plotter.XYs, 0, 2*len(ser.Points))
		for j, pt := range ser.Points {
			line[j] = plotter.XY{X: pt.X, Y: pt.Y}
			band = append(band, plotter.XY{X: pt.X, Y: pt.Lo})
		}
		for j := len(ser.Points) - 1; j >= 0; j-- {
			band = append(band, plotter.XY{X: ser.Points[j].X, Y: ser.Points[j].Hi})
		}
		if len(ser.Points) > 1 {
			poly, err := plotter.NewPolygon(band)
			if err != nil {
				return nil, legend, err
			}
			r, g, b, _ := col.RGBA()
			poly.Color = color.NRGBA{R: uint8(r >> 8), G: uint8(g >> 8), B: uint8(b >> 8), A: 50}
			poly.LineStyle.Width = 0
			p.Add(poly)
		}
		l, pts, err := plotter.NewLinePoints(line)
		if err != nil {
			return nil, legend, err
		}
		l.Color = col
		l.Width = vg.Points(1.5)
		l.Dashes = lengths(ser.Dash)
		pts.Color = col
		pts.Shape = plotutil.Shape(ser.Shape)
		pts.Radius = vg.Points(2.5)
		p.Add(l, pts)
		legend = append(legend, entry{text: ser.Label, thumbs: []plot.Thumbnailer{l, pts}, series: true})
		if err := addRings(p, ser); err != nil {
			return nil, legend, err
		}
	}
	for _, m := range append(append([]Mark{}, s.Limits...), s.Marks...) {
		if m.Y <= 0 {
			continue
		}
		if m.X > 0 { // a published value at its size: a marker there
			sc, err := plotter.NewScatter(plotter.XYs{{X: m.X, Y: m.Y}})
			if err != nil {
				return nil, legend, err
			}
			sc.Color = rgb(m.Color)
			sc.Shape = draw.CrossGlyph{}
			sc.Radius = vg.Points(6)
			p.Add(sc)
			if m.Label != "" {
				add(m.Label, sc)
			}
			continue
		}
		end := maxX
		if m.XMax > 0 {
			end = math.Min(m.XMax, maxX)
		}
		l, err := plotter.NewLine(plotter.XYs{{X: minX, Y: m.Y}, {X: end, Y: m.Y}})
		if err != nil {
			return nil, legend, err
		}
		l.Color = rgb(m.Color)
		l.Dashes = lengths(m.Dash)
		l.Width = vg.Points(1.2)
		p.Add(l)
		if m.Label != "" {
			add(m.Label, l)
		}
	}
	// p.Add widened the axes to every plotter's data: set them last.
	p.X.Min, p.X.Max, p.Y.Min, p.Y.Max = minX, maxX, minY, maxY
	return p, legend, nil
}

// addRings draws a red ring around each point of the series that a shape
// check marks (Point.Check; the caption says what a ring means).
func addRings(p *plot.Plot, ser Series) error {
	var at plotter.XYs
	for _, pt := range ser.Points {
		if pt.Check {
			at = append(at, plotter.XY{X: pt.X, Y: pt.Y})
		}
	}
	if len(at) == 0 {
		return nil
	}
	sc, err := plotter.NewScatter(at)
	if err != nil {
		return err
	}
	sc.Color, sc.Shape, sc.Radius = rgb(ringColor), draw.RingGlyph{}, vg.Points(7)
	p.Add(sc)
	return nil
}

// ringColor marks a checked point.
const ringColor = "#e00000"

// LegendFont is the legend's text size: readable at the image's size.
// A legend too long for the chart's height is set smaller, down to
// legendMinFont, and then cut, its last row saying how many rows it left
// out (plot --spec lists every series).
var LegendFont = vg.Points(11)

const legendMinFont = vg.Length(8)

// TitleLines wraps a chart's title to at most two lines of about 90
// characters (what fits above the data at the title's size); what does
// not fit is cut with an ellipsis: the rest of what a chart says is its
// caption.
func TitleLines(title string) []string {
	const width = 90
	lines := strings.Split(table.FoldText(title, width), "\n")
	if len(lines) > 2 {
		lines = lines[:2]
		lines[1] = strings.TrimRight(lines[1], " ,;:") + "…"
	}
	return lines
}

// caption is what a chart says below its axes: what the line and the band
// are, and its notes.
func caption(s Spec) []string {
	return append([]string{"line: median; band: " + s.Band}, s.Notes...)
}

// Layout shares of the image: the legend's column is at most legendShare of
// its width, the caption at most captionShare of its height, so the data
// keep the rest whatever a chart holds (50 overlaid files: 50 series and
// 50 notes).
const (
	legendShare  = 0.42
	captionShare = 0.25
)

// layout is where drawChart puts a chart's parts on a canvas of w × h.
type layout struct {
	legendW  vg.Length   // the legend's column, at the right
	legend   plot.Legend // its rows (those that fit, the last one saying what it left out)
	captionH vg.Length   // the caption's band, at the bottom
	caption  []string    // its lines
	capStyle text.Style  // their style
	dataW    vg.Length   // what the data keep: w − legendW
	dataH    vg.Length   // and h − captionH
	lineH    vg.Length   // a caption line's height
}

// legendTop is the room left above the legend's column (the title's).
const legendTop = vg.Length(40)

// planLayout sizes the legend and the caption of a chart of w × h: the
// legend a column as wide as its longest row (text cut with … where it
// would pass legendShare), set smaller and then cut where its rows pass
// the height; the caption one note a line, notes run together in lines as
// wide as the image where they would pass captionShare, and then cut.
func planLayout(w, h vg.Length, rows []entry, notes []string) layout {
	var l layout
	cs := plot.NewLegend().TextStyle
	cs.Font.Size = vg.Points(10)
	l.capStyle = cs
	l.lineH = cs.Height("Ag") * 1.25
	maxLines := max(2, int(h*captionShare/l.lineH))
	textW := w - vg.Points(24)
	l.caption = fitLines(notes, maxLines, func(t string) vg.Length { return cs.Width(t) }, textW,
		func(n int) string {
			return fmt.Sprintf("… and %d more note(s): 'nvshbench plot --spec' lists every one", n)
		})
	l.captionH = l.lineH*vg.Length(len(l.caption)) + vg.Points(8)

	avail := h - l.captionH - legendTop
	for size := LegendFont; ; size-- {
		lg := plot.NewLegend()
		lg.Top, lg.Left = true, true
		lg.TextStyle.Font.Size = size
		lg.ThumbnailWidth = vg.Points(24)
		shown := rows
		if size > legendMinFont && legendHeight(lg, len(rows)) > avail {
			continue // smaller first
		}
		if legendHeight(lg, len(rows)) > avail {
			shown = cutSeries(rows, int((avail+1e-9)/legendHeight(lg, 1)))
		}
		sty := lg.TextStyle
		wmax := w * legendShare
		room := wmax - lg.ThumbnailWidth - vg.Points(24)
		lw := vg.Length(0)
		for _, r := range shown {
			t := cutText(r.text, room, sty.Width)
			lg.Add(t, r.thumbs...)
			lw = max(lw, sty.Width(t))
		}
		l.legend = lg
		l.legendW = min(lw+lg.ThumbnailWidth+vg.Points(24), wmax)
		break
	}
	l.dataW, l.dataH = w-l.legendW, h-l.captionH
	return l
}

// cutSeries keeps n rows of a legend: every row that is no series (the
// shading, the references, the paper's values), the first series, and a
// row saying how many series it left out.
func cutSeries(rows []entry, n int) []entry {
	series := 0
	for _, r := range rows {
		if r.series {
			series++
		}
	}
	keep := max(1, min(series, n-1-(len(rows)-series))) // series rows kept
	var out []entry
	seen := 0
	for _, r := range rows {
		if !r.series {
			out = append(out, r)
			continue
		}
		seen++
		switch {
		case seen <= keep:
			out = append(out, r)
		case seen == keep+1:
			out = append(out, entry{text: fmt.Sprintf("… and %d more series: 'nvshbench plot --spec' lists them all", series-keep)})
		}
	}
	return out
}

// legendHeight is the height of n rows of a legend (gonum's rows: each
// the height of one line of its text).
func legendHeight(lg plot.Legend, n int) vg.Length {
	return lg.TextStyle.Rectangle("Ag").Max.Y * vg.Length(n)
}

// fitLines lays notes out one a line; where there are more than limit, it
// runs them together ("; ") in lines at most w wide, and where those are
// still more than limit, keeps limit−1 and says how many notes it left out.
func fitLines(notes []string, limit int, width func(string) vg.Length, w vg.Length, more func(int) string) []string {
	if len(notes) <= limit {
		return notes
	}
	var lines []string
	var in []int // notes per line
	for _, n := range notes {
		if k := len(lines) - 1; k >= 0 && width(lines[k]+"; "+n) <= w {
			lines[k] += "; " + n
			in[k]++
			continue
		}
		lines, in = append(lines, n), append(in, 1)
	}
	if len(lines) <= limit {
		return lines
	}
	left := 0
	for _, c := range in[limit-1:] {
		left += c
	}
	return append(lines[:limit-1:limit-1], more(left))
}

// cutText shortens t with … to at most w wide.
func cutText(t string, w vg.Length, width func(string) vg.Length) string {
	if width(t) <= w {
		return t
	}
	r := []rune(t)
	for len(r) > 1 && width(string(r)+"…") > w {
		r = r[:len(r)-1]
	}
	return string(r) + "…"
}

// drawChart lays the data out left, the legend in a column right, and the
// caption below both (planLayout).
func drawChart(c draw.Canvas, p *plot.Plot, rows []entry, s Spec) {
	l := planLayout(c.Max.X-c.Min.X, c.Max.Y-c.Min.Y, rows, caption(s))
	data := draw.Crop(c, 0, -l.legendW, l.captionH, 0)
	p.Draw(data)
	side := draw.Crop(c, c.Max.X-c.Min.X-l.legendW+vg.Points(8), 0, l.captionH, -legendTop)
	l.legend.Draw(side)
	y := c.Min.Y + l.captionH - l.lineH
	for _, line := range l.caption {
		c.FillText(l.capStyle, vg.Point{X: c.Min.X + vg.Points(12), Y: y}, line)
		y -= l.lineH
	}
}

// Render writes the chart in the given format ("png" or "svg") to w. SVG
// output embeds its fonts so it looks the same everywhere.
func Render(w io.Writer, s Spec, format string) error {
	p, legend, err := build(s)
	if err != nil {
		return err
	}
	switch format {
	case "svg":
		cv := vgsvg.NewWith(vgsvg.UseWH(Width, Height), vgsvg.EmbedFonts(true))
		drawChart(draw.New(cv), p, legend, s)
		_, err = cv.WriteTo(w)
		return err
	case "png":
		cv := vgimg.PngCanvas{Canvas: vgimg.NewWith(vgimg.UseWH(Width, Height), vgimg.UseDPI(PNGDPI))}
		drawChart(draw.New(cv), p, legend, s)
		_, err = cv.WriteTo(w)
		return err
	}
	return fmt.Errorf("unknown image format %q (want png or svg)", format)
}

func init() {
	// Sans-serif everywhere; both defaults must be set before plot.New.
	plot.DefaultFont = font.Font{Typeface: "Liberation", Variant: "Sans"}
	plotter.DefaultFont = plot.DefaultFont
}
