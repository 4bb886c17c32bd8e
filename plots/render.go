package plots

import (
	"fmt"
	"image/color"
	"io"
	"math"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"

	"github.com/nvshbench/nvshbench/report"
)

// Size of every chart.
var (
	Width  = 13.5 * vg.Inch
	Height = 6.5 * vg.Inch
)

// Formats are the image formats Render writes.
var Formats = []string{"png", "svg"}

// Pow2Ticks labels a log2 byte axis: a tick at every power of two, every
// third one labelled counting down from the largest (so the last size
// always has its label: ..., 128 KiB, 1 MiB). Count: plain numbers (a
// token count), not bytes.
type Pow2Ticks struct{ Count bool }

// Ticks implements plot.Ticker.
func (t Pow2Ticks) Ticks(min, max float64) []plot.Tick {
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
			label = report.FormatBytes(int64(1) << e)
			if t.Count {
				label = strconv.FormatInt(int64(1)<<e, 10)
			}
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
					out = append(out, plot.Tick{Value: v, Label: FormatValue(v)})
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

// LinearTicks puts 4 to 10 labelled ticks at 1, 2 or 5 times a power of ten,
// every label with the same number of decimals (250, 500, 750 — not 250.00).
type LinearTicks struct{}

// Ticks implements plot.Ticker.
func (LinearTicks) Ticks(min, max float64) []plot.Tick {
	span := max - min
	if span <= 0 {
		return []plot.Tick{{Value: min, Label: FormatValue(min)}}
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

// build turns a spec into a gonum plot and its legend (drawn beside the
// data, never over it).
func build(s Spec) (*plot.Plot, plot.Legend, error) {
	p := plot.New()
	legend := plot.NewLegend()
	p.Title.Text = s.Title
	for _, n := range append([]string{"line: median; band: " + s.Band}, s.Notes...) {
		p.Title.Text += "\n" + n
	}
	p.X.Label.Text = s.XLabel
	p.Y.Label.Text = s.YLabel
	p.X.Scale = plot.LogScale{}
	p.X.Tick.Marker = Pow2Ticks{}
	if s.XUnit != "" {
		p.X.Tick.Marker = Pow2Ticks{Count: true}
	}
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
	}
	if s.YMax > 0 {
		maxY = s.YMax
	}
	if !s.LogY {
		minY = 0
		maxY *= 1.05
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
		legend.Add("L2-resident sizes (cache, not link)", shade)
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
		legend.Add(ser.Label, l, pts)
	}
	for _, m := range append(append([]Mark{}, s.Limits...), s.Marks...) {
		if m.Y <= 0 {
			continue
		}
		l, err := plotter.NewLine(plotter.XYs{{X: minX, Y: m.Y}, {X: maxX, Y: m.Y}})
		if err != nil {
			return nil, legend, err
		}
		l.Color = rgb(m.Color)
		l.Dashes = lengths(m.Dash)
		l.Width = vg.Points(1.2)
		p.Add(l)
		legend.Add(m.Label, l)
	}
	// p.Add widened the axes to every plotter's data: set them last.
	p.X.Min, p.X.Max, p.Y.Min, p.Y.Max = minX, maxX, minY, maxY
	legend.Top = true
	legend.Left = true
	legend.TextStyle.Font.Size = vg.Points(8)
	return p, legend, nil
}

// LegendWidth is the column right of the data that holds the legend.
var LegendWidth = 3.8 * vg.Inch

// draw lays the data out left and the legend in its own column right.
func drawChart(c draw.Canvas, p *plot.Plot, legend plot.Legend) {
	data := draw.Crop(c, 0, -LegendWidth, 0, 0)
	p.Draw(data)
	side := draw.Crop(c, c.Max.X-c.Min.X-LegendWidth+vg.Points(8), 0, 0, -vg.Points(40))
	legend.Draw(side)
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
		drawChart(draw.New(cv), p, legend)
		_, err = cv.WriteTo(w)
		return err
	case "png":
		cv := vgimg.PngCanvas{Canvas: vgimg.New(Width, Height)}
		drawChart(draw.New(cv), p, legend)
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
