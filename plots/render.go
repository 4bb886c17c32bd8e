package plots

import (
	"fmt"
	"image/color"
	"io"
	"math"
	"os"
	"path/filepath"
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
	Width  = 10 * vg.Inch
	Height = 6 * vg.Inch
)

// Formats are the image formats Render writes.
var Formats = []string{"png", "svg"}

// Pow2Ticks labels a log2 byte axis: a tick at every power of two, every
// third one labelled (8 B, 64 B, 512 B, 4 KiB, ... 1 GiB).
type Pow2Ticks struct{}

// Ticks implements plot.Ticker.
func (Pow2Ticks) Ticks(min, max float64) []plot.Tick {
	var ticks []plot.Tick
	for e := 0; e <= 50; e++ {
		v := math.Ldexp(1, e)
		if v < min*0.999 || v > max*1.001 {
			continue
		}
		label := ""
		if e%3 == 0 {
			label = report.FormatBytes(int64(v))
		}
		ticks = append(ticks, plot.Tick{Value: v, Label: label})
	}
	return ticks
}

// LogTicks125 labels a log axis at 1, 2 and 5 times each power of ten,
// falling back to every integer multiple when the range is narrow.
type LogTicks125 struct{}

// Ticks implements plot.Ticker.
func (LogTicks125) Ticks(min, max float64) []plot.Tick {
	gen := func(mults []float64) []plot.Tick {
		var out []plot.Tick
		for e := math.Floor(math.Log10(min)) - 1; e <= math.Ceil(math.Log10(max)); e++ {
			for _, m := range mults {
				v := m * math.Pow(10, e)
				if v >= min*0.999 && v <= max*1.001 {
					out = append(out, plot.Tick{Value: v, Label: strconv.FormatFloat(v, 'g', 3, 64)})
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

// build turns a spec into a gonum plot.
func build(s Spec) (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = s.Title
	for _, n := range s.Notes {
		p.Title.Text += "\n" + n
	}
	p.X.Label.Text = s.XLabel
	p.Y.Label.Text = s.YLabel + "  (line: median; band: " + s.Band + ")"
	p.X.Scale = plot.LogScale{}
	p.X.Tick.Marker = Pow2Ticks{}
	if s.LogY {
		p.Y.Scale = plot.LogScale{}
		p.Y.Tick.Marker = LogTicks125{}
	}
	p.Add(plotter.NewGrid())
	minX, maxX := math.Inf(1), math.Inf(-1)
	for i, ser := range s.Series {
		if len(ser.Points) == 0 {
			continue
		}
		col := plotutil.Color(i)
		line := make(plotter.XYs, len(ser.Points))
		band := make(plotter.XYs, 0, 2*len(ser.Points))
		for j, pt := range ser.Points {
			if pt.X <= 0 || pt.Y <= 0 || pt.Lo <= 0 || pt.Hi <= 0 {
				return nil, fmt.Errorf("series %q: non-positive value at %g B cannot be drawn on a log axis", ser.Label, pt.X)
			}
			line[j] = plotter.XY{X: pt.X, Y: pt.Y}
			band = append(band, plotter.XY{X: pt.X, Y: pt.Lo})
			minX, maxX = math.Min(minX, pt.X), math.Max(maxX, pt.X)
		}
		for j := len(ser.Points) - 1; j >= 0; j-- {
			band = append(band, plotter.XY{X: ser.Points[j].X, Y: ser.Points[j].Hi})
		}
		if len(ser.Points) > 1 {
			poly, err := plotter.NewPolygon(band)
			if err != nil {
				return nil, err
			}
			r, g, b, _ := col.RGBA()
			poly.Color = color.NRGBA{R: uint8(r >> 8), G: uint8(g >> 8), B: uint8(b >> 8), A: 50}
			poly.LineStyle.Width = 0
			p.Add(poly)
		}
		l, pts, err := plotter.NewLinePoints(line)
		if err != nil {
			return nil, err
		}
		l.Color = col
		l.Width = vg.Points(1.5)
		l.Dashes = plotutil.Dashes(i / 7) // colours repeat every 7 series: vary the dash
		pts.Color = col
		pts.Shape = plotutil.Shape(i)
		pts.Radius = vg.Points(2.5)
		p.Add(l, pts)
		p.Legend.Add(ser.Label, l, pts)
	}
	if math.IsInf(minX, 0) {
		return nil, fmt.Errorf("chart %s has no points", s.Name)
	}
	if minX == maxX {
		minX, maxX = minX/2, maxX*2
	}
	p.X.Min, p.X.Max = minX, maxX
	for i, m := range s.Marks {
		if m.Y <= 0 {
			continue
		}
		l, err := plotter.NewLine(plotter.XYs{{X: minX, Y: m.Y}, {X: maxX, Y: m.Y}})
		if err != nil {
			return nil, err
		}
		l.Color = color.Gray{Y: 90}
		if m.Series >= 0 {
			l.Color = plotutil.Color(m.Series)
		}
		l.Dashes = []vg.Length{vg.Points(6), vg.Points(3 + float64(i%3)*2)}
		l.Width = vg.Points(1)
		p.Add(l)
		p.Legend.Add(m.Label, l)
	}
	// Curves rise to the right: the top left corner is free.
	p.Legend.Top = true
	p.Legend.Left = true
	p.Legend.XOffs = vg.Points(10)
	p.Legend.TextStyle.Font.Size = vg.Points(8)
	return p, nil
}

// Render writes the chart in the given format ("png" or "svg") to w. SVG
// output embeds its fonts so it looks the same everywhere.
func Render(w io.Writer, s Spec, format string) error {
	p, err := build(s)
	if err != nil {
		return err
	}
	switch format {
	case "svg":
		cv := vgsvg.NewWith(vgsvg.UseWH(Width, Height), vgsvg.EmbedFonts(true))
		p.Draw(draw.New(cv))
		_, err = cv.WriteTo(w)
		return err
	case "png":
		cv := vgimg.PngCanvas{Canvas: vgimg.New(Width, Height)}
		p.Draw(draw.New(cv))
		_, err = cv.WriteTo(w)
		return err
	}
	return fmt.Errorf("unknown image format %q (want png or svg)", format)
}

// WriteAll renders every spec in every format into dir and returns the
// paths written.
func WriteAll(dir string, specs []Spec, formats []string) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	var paths []string
	for _, s := range specs {
		for _, f := range formats {
			path := filepath.Join(dir, s.Name+"."+f)
			fh, err := os.Create(path)
			if err != nil {
				return paths, err
			}
			err = Render(fh, s, f)
			if cerr := fh.Close(); err == nil {
				err = cerr
			}
			if err != nil {
				return paths, fmt.Errorf("%s: %w", path, err)
			}
			paths = append(paths, path)
		}
	}
	return paths, nil
}

func init() {
	// Sans-serif everywhere; both defaults must be set before plot.New.
	plot.DefaultFont = font.Font{Typeface: "Liberation", Variant: "Sans"}
	plotter.DefaultFont = plot.DefaultFont
}
