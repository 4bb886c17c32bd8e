package plots_test

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"image/png"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nvshbench/nvshbench/internal/fixture"
	"github.com/nvshbench/nvshbench/internal/golden"
	"github.com/nvshbench/nvshbench/plots"
	"github.com/nvshbench/nvshbench/results"
)

func TestGoldenSpec(t *testing.T) {
	a := fixture.Synthetic(fixture.Options{Seed: 1, Label: "a"})
	b := fixture.Synthetic(fixture.Options{Seed: 2, Scale: 0.9, Label: "b"})
	specs := plots.Build([]*results.File{a, b}, results.Paper())
	out, err := json.MarshalIndent(specs, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	golden.Check(t, "overlay.spec.json", append(out, '\n'))
	var names []string
	for _, s := range specs {
		names = append(names, s.Name)
	}
	if strings.Join(names, " ") != "bandwidth latency-put latency-scalar allreduce" {
		t.Fatalf("charts %v, want bandwidth, the latency families, allreduce", names)
	}
	bw := specs[0]
	if bw.Name != "bandwidth" || len(bw.Marks) != 4 || !strings.HasPrefix(bw.Series[0].Label, "a: ") {
		t.Errorf("bandwidth chart: name %s, %d marks, first series %q", bw.Name, len(bw.Marks), bw.Series[0].Label)
	}
	for _, s := range bw.Series {
		for i := 1; i < len(s.Points); i++ {
			if s.Points[i].X <= s.Points[i-1].X {
				t.Fatalf("series %s not sorted by size", s.Label)
			}
		}
		for _, p := range s.Points {
			if !(p.Lo <= p.Y && p.Y <= p.Hi) {
				t.Fatalf("series %s: median %v outside band [%v, %v]", s.Label, p.Y, p.Lo, p.Hi)
			}
		}
	}
	if !strings.Contains(strings.Join(bw.Notes, " "), "SYNTHETIC") {
		t.Error("synthetic data not flagged on the chart")
	}
}

func TestRenderPNGAndSVG(t *testing.T) {
	f := fixture.Synthetic(fixture.Options{Seed: 1})
	specs := plots.Build([]*results.File{f}, results.Paper())
	dir := t.TempDir()
	paths, err := plots.WriteAll(dir, specs, plots.Formats)
	if err != nil {
		t.Fatal(err)
	}
	if len(paths) != 2*len(specs) {
		t.Fatalf("wrote %d files", len(paths))
	}
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		switch filepath.Ext(p) {
		case ".png":
			img, err := png.Decode(bytes.NewReader(data))
			if err != nil {
				t.Fatalf("%s: %v", p, err)
			}
			if img.Bounds().Dx() < 500 {
				t.Errorf("%s: %d px wide", p, img.Bounds().Dx())
			}
		case ".svg":
			dec := xml.NewDecoder(bytes.NewReader(data))
			for {
				if _, err := dec.Token(); err == io.EOF {
					break
				} else if err != nil {
					t.Fatalf("%s: not valid XML: %v", p, err)
				}
			}
			if !bytes.Contains(data, []byte("@font-face")) {
				t.Errorf("%s: fonts not embedded", p)
			}
		}
	}
}

func TestRenderRefusesNonPositive(t *testing.T) {
	s := plots.Spec{Name: "x", Series: []plots.Series{{Label: "s", Points: []plots.Point{{X: 8, Y: 0, Lo: 0, Hi: 1}}}}}
	if err := plots.Render(io.Discard, s, "png"); err == nil {
		t.Error("a zero value on a log axis was drawn")
	}
	if err := plots.Render(io.Discard, s, "gif"); err == nil {
		t.Error("gif accepted")
	}
}

func TestPow2Ticks(t *testing.T) {
	ticks := plots.Pow2Ticks{}.Ticks(8, 1<<30)
	labels := map[string]bool{}
	for _, tk := range ticks {
		if tk.Label != "" {
			labels[tk.Label] = true
		}
	}
	for _, want := range []string{"8 B", "64 B", "4 KiB", "2 MiB", "1 GiB"} {
		if !labels[want] {
			t.Errorf("missing tick label %q in %v", want, labels)
		}
	}
	if len(ticks) != 28 {
		t.Errorf("%d ticks from 8 B to 1 GiB, want 28", len(ticks))
	}
}
