package plots

import (
	"fmt"
	"image/color"
	"io"
	"math"

	"gonum.org/v1/plot"
	gpalette "gonum.org/v1/plot/palette"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"
)

// HeatMap is one row of the pair matrix as a grid of PEs: Cells[from][to]
// the pair's figure in Unit (NaN: not measured), Marks[from][to] the
// check's verdict on it where it is not PASS ("FAIL", "WARN"). Readers
// make it from a results file (the check's verdict marks it); the plots
// package draws it.
type HeatMap struct {
	Name   string       `json:"name"` // the file's name, without its extension
	Title  string       `json:"title"`
	Unit   string       `json:"unit"` // GB/s or µs
	Higher bool         `json:"higher_is_better"`
	Cells  [][]float64  `json:"-"`
	Values [][]*float64 `json:"cells"` // Cells for JSON (null: not measured)
	Marks  [][]string   `json:"marks"`
}

// Fill sets Values from Cells (JSON has no NaN).
func (h *HeatMap) Fill() {
	h.Values = make([][]*float64, len(h.Cells))
	for i, row := range h.Cells {
		h.Values[i] = make([]*float64, len(row))
		for j, v := range row {
			if !math.IsNaN(v) {
				v := v
				h.Values[i][j] = &v
			}
		}
	}
}

// grid is a heat map's GridXYZ: column c is the target PE, row r the
// source (row 0 drawn at the top).
type grid struct{ h *HeatMap }

func (g grid) Dims() (c, r int)   { return len(g.h.Cells), len(g.h.Cells) }
func (g grid) Z(c, r int) float64 { return g.h.Cells[len(g.h.Cells)-1-r][c] }
func (g grid) X(c int) float64    { return float64(c) }
func (g grid) Y(r int) float64    { return float64(r) }
func (g grid) Min() (m float64)   { return g.extreme(math.Min, math.Inf(1)) }
func (g grid) Max() (m float64)   { return g.extreme(math.Max, math.Inf(-1)) }
func (g grid) extreme(f func(a, b float64) float64, m float64) float64 {
	for _, row := range g.h.Cells {
		for _, v := range row {
			if !math.IsNaN(v) {
				m = f(m, v)
			}
		}
	}
	return m
}

// RenderHeatMap draws h as png or svg: the figure of each ordered pair in
// colour (darker: worse), each pair the check failed crossed out with its
// verdict written in the cell.
func RenderHeatMap(w io.Writer, h HeatMap, format string) error {
	n := len(h.Cells)
	if n == 0 {
		return fmt.Errorf("%s: an empty matrix", h.Name)
	}
	p := plot.New()
	p.Title.Text = h.Title
	p.X.Label.Text = "to PE"
	p.Y.Label.Text = "from PE"
	g := grid{&h}
	pal := gpalette.Heat(32, 1)
	if !h.Higher { // a round trip: longer is worse, drawn darker
		cs := pal.Colors()
		rev := make([]color.Color, len(cs))
		for i, c := range cs {
			rev[len(cs)-1-i] = c
		}
		pal = reversed(rev)
	}
	hm := plotter.NewHeatMap(g, pal)
	if hm.Min == hm.Max {
		hm.Min, hm.Max = hm.Min*0.99, hm.Max*1.01+1e-12
	}
	hm.NaN = color.Gray{Y: 0xee}
	p.Add(hm)
	var xys plotter.XYs
	var labels []string
	for from := 0; from < n; from++ {
		for to := 0; to < n; to++ {
			if m := h.Marks[from][to]; m != "" {
				xys = append(xys, plotter.XY{X: float64(to), Y: float64(n - 1 - from)})
				labels = append(labels, m)
			}
		}
	}
	if len(xys) > 0 {
		l, err := plotter.NewLabels(plotter.XYLabels{XYs: xys, Labels: labels})
		if err != nil {
			return err
		}
		for i := range l.TextStyle {
			l.TextStyle[i].Color = color.Black
			l.TextStyle[i].XAlign, l.TextStyle[i].YAlign = draw.XCenter, draw.YCenter
		}
		p.Add(l)
	}
	var ticksX, ticksY []plot.Tick
	for i := 0; i < n; i++ {
		ticksX = append(ticksX, plot.Tick{Value: float64(i), Label: fmt.Sprint(i)})
		ticksY = append(ticksY, plot.Tick{Value: float64(n - 1 - i), Label: fmt.Sprint(i)})
	}
	p.X.Tick.Marker = plot.ConstantTicks(ticksX)
	p.Y.Tick.Marker = plot.ConstantTicks(ticksY)
	side := vg.Length(60+12*n) * vg.Millimeter
	switch format {
	case "svg":
		cv := vgsvg.NewWith(vgsvg.UseWH(side, side), vgsvg.EmbedFonts(true))
		p.Draw(draw.New(cv))
		_, err := cv.WriteTo(w)
		return err
	case "png":
		cv := vgimg.PngCanvas{Canvas: vgimg.NewWith(vgimg.UseWH(side, side), vgimg.UseDPI(PNGDPI))}
		p.Draw(draw.New(cv))
		_, err := cv.WriteTo(w)
		return err
	}
	return fmt.Errorf("unknown image format %q (want png or svg)", format)
}

// reversed is a palette of colours in the order given.
type reversed []color.Color

func (r reversed) Colors() []color.Color { return r }
