package plots_test

import (
	"bytes"
	"math"
	"strings"
	"testing"

	"github.com/nvshbench/nvshbench/plots"
)

// A heat map draws in both formats, its marked cell's verdict written in
// the SVG; an empty matrix and an unknown format are errors.
func TestHeatMapRenders(t *testing.T) {
	h := plots.HeatMap{Name: "m", Title: "rma/put/block (GB/s)", Unit: "GB/s", Higher: true,
		Cells: [][]float64{{math.NaN(), 300, 299}, {301, math.NaN(), 180}, {300, 299, math.NaN()}},
		Marks: [][]string{{"", "", ""}, {"", "", "FAIL"}, {"", "", ""}}}
	h.Fill()
	if h.Values[0][0] != nil || h.Values[1][2] == nil || *h.Values[1][2] != 180 {
		t.Errorf("values %v", h.Values)
	}
	var svg, png bytes.Buffer
	if err := plots.RenderHeatMap(&svg, h, "svg"); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(svg.String(), "FAIL") {
		t.Error("the SVG does not write the failed pair's verdict")
	}
	if err := plots.RenderHeatMap(&png, h, "png"); err != nil || !bytes.HasPrefix(png.Bytes(), []byte("\x89PNG")) {
		t.Errorf("png: %v", err)
	}
	if err := plots.RenderHeatMap(&png, h, "gif"); err == nil {
		t.Error("gif accepted")
	}
	if err := plots.RenderHeatMap(&png, plots.HeatMap{Name: "e"}, "png"); err == nil {
		t.Error("an empty matrix drawn")
	}
}
