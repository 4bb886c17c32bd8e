package plots

import (
	"bytes"
	"fmt"
	"image/png"
	"strings"
	"testing"

	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/nvshbench/nvshbench/internal/fixture"
	"github.com/nvshbench/nvshbench/record"
)

// 50 overlaid files (50 series and 50 SYNTHETIC notes on one chart): the
// data keep at least 58 % of the width and 70 % of the height, the legend
// and the caption stay on the image, and what they leave out they count.
func TestLayoutKeepsThePlotAreaWith50Series(t *testing.T) {
	var files []*record.File
	for i := range 50 {
		files = append(files, fixture.Synthetic(fixture.Options{Seed: uint64(i + 1), Label: fmt.Sprintf("a-rather-long-run-label-number-%02d", i)}))
	}
	specs := Build(files, record.Paper())
	var s *Spec
	for i := range specs {
		if specs[i].Name == "bandwidth-put" {
			s = &specs[i]
		}
	}
	if s == nil || len(s.Series) < 50 {
		t.Fatalf("no bandwidth-put chart with 50 series: %v", s)
	}
	_, rows, err := build(*s)
	if err != nil {
		t.Fatal(err)
	}
	notes := caption(*s)
	if len(notes) < 50 {
		t.Fatalf("%d notes: the fixture's files should each bring one", len(notes))
	}
	l := planLayout(Width, Height, rows, notes)
	if l.dataW < 0.58*Width || l.dataH < 0.70*Height {
		t.Errorf("the data keep %.0f × %.0f pt of %.0f × %.0f", l.dataW, l.dataH, Width, Height)
	}
	if h := legendHeight(l.legend, len(rows)); h <= Height-l.captionH-legendTop {
		t.Fatalf("the test needs a legend too tall for the chart; all %d rows are %.0f pt", len(rows), h)
	}
	shown := l.legend.Rectangle(draw.Canvas{Rectangle: vg.Rectangle{Max: vg.Point{X: Width, Y: Height}}})
	if shown.Max.Y-shown.Min.Y > Height-l.captionH-legendTop || l.legend.TextStyle.Font.Size < legendMinFont {
		t.Errorf("the legend's %.0f pt (font %.0f) pass the %.0f pt beside the data", shown.Max.Y-shown.Min.Y, l.legend.TextStyle.Font.Size, Height-l.captionH-legendTop)
	}
	if l.captionH > captionShare*Height+8 {
		t.Errorf("the caption takes %.0f pt of %.0f", l.captionH, Height)
	}
	last := l.caption[len(l.caption)-1]
	if !strings.HasPrefix(last, "… and ") || !strings.Contains(l.caption[0], "SYNTHETIC") {
		t.Errorf("the caption: %q", l.caption)
	}
	for _, line := range l.caption {
		if w := l.capStyle.Width(line); w > Width-24 {
			t.Errorf("a caption line of %.0f pt passes the image: %q", w, line)
		}
	}
	// The references and the paper's values stay; the left-out series are counted.
	var texts []string
	for _, r := range cutSeries(rows, 20) {
		texts = append(texts, r.text)
	}
	all := strings.Join(texts, "\n")
	if len(texts) != 20 || !strings.Contains(all, "copy reference") || !strings.Contains(all, "paper:") || !strings.Contains(all, "more series") {
		t.Errorf("cut to 20 rows:\n%s", all)
	}
	var buf bytes.Buffer
	if err := Render(&buf, *s, "png"); err != nil {
		t.Fatal(err)
	}
	if img, err := png.Decode(&buf); err != nil || img.Bounds().Dx() != 1944 || img.Bounds().Dy() != 936 {
		t.Errorf("the PNG: %v", err)
	}

	// A chart of a few series: nothing cut, nothing made smaller.
	small := Build(files[:1], record.Paper())
	_, rows, _ = build(small[0])
	l = planLayout(Width, Height, rows, caption(small[0]))
	if l.legend.TextStyle.Font.Size != LegendFont || len(l.caption) != len(caption(small[0])) {
		t.Errorf("one file: legend font %.0f, caption %q", l.legend.TextStyle.Font.Size, l.caption)
	}
}
