package plots_test

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"image/png"
	"io"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nvshbench/nvshbench/internal/fixture"
	"github.com/nvshbench/nvshbench/internal/golden"
	"github.com/nvshbench/nvshbench/plots"
	"github.com/nvshbench/nvshbench/record"
)

func TestGoldenSpec(t *testing.T) {
	a := fixture.Synthetic(fixture.Options{Seed: 1, Label: "a"})
	b := fixture.Synthetic(fixture.Options{Seed: 2, Scale: 0.9, Label: "b"})
	specs := plots.Build([]*record.File{a, b}, record.Paper())
	out, err := json.MarshalIndent(specs, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	golden.Check(t, "overlay.spec.json", append(out, '\n'))
	var names []string
	for _, s := range specs {
		names = append(names, s.Name)
	}
	if strings.Join(names, " ") != "bandwidth-put bandwidth-get bandwidth-scalar latency-put latency-scalar allreduce allreduce-time" {
		t.Fatalf("charts %v, want Fig. 4 per operation, the latency families, Fig. 5", names)
	}
	bw := specs[0]
	if len(bw.Marks) != 1 || !strings.Contains(bw.Marks[0].Label, "paper: put") || !strings.HasPrefix(bw.Series[0].Label, "a: ") {
		t.Errorf("put chart: %d marks %+v, first series %q", len(bw.Marks), bw.Marks, bw.Series[0].Label)
	}
	for _, s := range specs[:3] {
		// The copy reference and the physical link of the points are drawn, once each, labelled.
		if len(s.Limits) != 2 || s.Limits[0].Y != 450 || !strings.Contains(s.Limits[0].Label, "copy reference: sm-copy 450 GB/s") ||
			!strings.Contains(s.Limits[1].Label, "physical link: nvlink 478 GB/s") || len(s.Limits[1].Dash) != 0 {
			t.Errorf("%s: limits %+v", s.Name, s.Limits)
		}
		// The fixture's L2-resident sizes (working set ≤ 60 MiB) are shaded.
		if s.L2Edge != 8<<20 {
			t.Errorf("%s: L2 edge %v, want 8 MiB", s.Name, s.L2Edge)
		}
	}
	for _, s := range specs[3:5] {
		if s.L2Edge != 0 || len(s.Limits) != 0 {
			t.Errorf("%s: a latency chart shades L2 (%v) or draws limits (%v)", s.Name, s.L2Edge, s.Limits)
		}
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
	specs := plots.Build([]*record.File{f}, record.Paper())
	for _, s := range specs {
		for _, format := range plots.Formats {
			var buf bytes.Buffer
			if err := plots.Render(&buf, s, format); err != nil {
				t.Fatalf("%s.%s: %v", s.Name, format, err)
			}
			p, data := s.Name+"."+format, buf.Bytes()
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

// No two series of a chart look alike: 25 curves on one chart (the
// AllReduce variants of three files) get 25 distinct colour + dash pairs.
func TestSeriesStylesNeverRepeat(t *testing.T) {
	f := &record.File{Name: "many.jsonl", Header: record.Header{PEs: 2, Nodes: 1}}
	for i := 0; i < 25; i++ {
		for _, size := range []int64{1 << 20, 1 << 30} {
			p := record.Point{Type: record.TypePoint, ID: fmt.Sprintf("collectives/allreduce/variant-%02d", i), Status: record.StatusOK,
				Params: record.Params{Size: size, Op: "sum", DType: "float", Launch: record.LaunchPerOp}, Bytes: size, BusFactor: 1, Samples: []float64{1e-3, 1.1e-3}}
			if err := record.Derive(&p, record.MetricAlgBW, record.MetricBusBW); err != nil {
				t.Fatal(err)
			}
			f.Points = append(f.Points, p)
		}
	}
	specs := plots.Build([]*record.File{f}, nil)
	if len(specs) != 2 || len(specs[0].Series) != 25 || specs[1].Name != "allreduce-time" {
		t.Fatalf("%d charts", len(specs))
	}
	seen := map[string]string{}
	for _, s := range specs[0].Series {
		key := s.Color + fmt.Sprint(s.Dash)
		if other, ok := seen[key]; ok {
			t.Fatalf("%s and %s share colour %s and dash %v", other, s.Label, s.Color, s.Dash)
		}
		seen[key] = s.Label
	}
}

// A cache-answered peak far above the link does not flatten the chart: the
// y axis is cut above the highest figure that measures the link, and says so.
func TestClipAboveL2Peaks(t *testing.T) {
	f := &record.File{Name: "get.jsonl", Header: record.Header{PEs: 2, Nodes: 1}}
	for _, c := range []struct {
		size int64
		bw   float64
		l2   bool
	}{{1 << 20, 1600e9, true}, {4 << 20, 1700e9, true}, {256 << 20, 120e9, false}, {1 << 30, 118e9, false}} {
		p := record.Point{Type: record.TypePoint, ID: "rma/get/block", Status: record.StatusOK, L2Resident: c.l2,
			Params: record.Params{Size: c.size, Op: "get", CTAs: 32, Threads: 256}, Bytes: c.size, Samples: []float64{float64(c.size) / c.bw},
			Limit: &record.Limit{ID: "limit/sm-copy-read", Value: 376e9}}
		if err := record.Derive(&p, record.MetricBandwidth); err != nil {
			t.Fatal(err)
		}
		f.Points = append(f.Points, p)
	}
	s := plots.Build([]*record.File{f}, nil)[0]
	if s.Name != "bandwidth-get" || s.YMax != 1.25*376 || s.L2Edge != 4<<20 {
		t.Fatalf("%s: y max %v, L2 edge %v", s.Name, s.YMax, s.L2Edge)
	}
	if !strings.Contains(strings.Join(s.Notes, " "), "y axis cut at 470") {
		t.Errorf("notes %q", s.Notes)
	}
}

func TestLinearTicksKeepOneFormat(t *testing.T) {
	for _, c := range []struct {
		min, max float64
		want     []string
	}{{0, 470, []string{"0", "100", "200", "300", "400"}}, {0, 1.9, []string{"0.00", "0.25", "0.50", "0.75", "1.00", "1.25", "1.50", "1.75"}}, {0, 0.06, []string{"0.00", "0.01", "0.02", "0.03", "0.04", "0.05", "0.06"}}} {
		var got []string
		for _, tk := range (plots.LinearTicks{}).Ticks(c.min, c.max) {
			got = append(got, tk.Label)
		}
		if strings.Join(got, " ") != strings.Join(c.want, " ") {
			t.Errorf("ticks %v..%v: %v, want %v", c.min, c.max, got, c.want)
		}
	}
	for _, tk := range (plots.LogTicks125{}).Ticks(0.5, 5000) {
		if strings.ContainsAny(tk.Label, "e+") {
			t.Errorf("log tick label %q uses an exponent", tk.Label)
		}
	}
	if ticks := (plots.Pow2Ticks{}).Ticks(8, 1<<20); ticks[len(ticks)-1].Label != "1 MiB" {
		t.Errorf("the largest size has no label: %+v", ticks[len(ticks)-1])
	}
}

// Every chart a user can ask for, pinned by one golden spec: a file with a
// two-size series of each family.
func TestGoldenEveryChart(t *testing.T) {
	f := &record.File{Name: "every.jsonl", Header: record.Header{PEs: 2, Nodes: 1}}
	add := func(id string, metrics ...string) {
		for _, size := range []int64{4 << 10, 256 << 20} {
			p := record.Point{Type: record.TypePoint, ID: id, Status: record.StatusOK, Effective: "p2p",
				Params: record.Params{Size: size, CTAs: 32, Threads: 256}, Bytes: size, BusFactor: 1, Samples: []float64{float64(size)/1e11 + 2e-6},
				L2Resident: size < 60<<20}
			if strings.HasPrefix(id, "collectives/") {
				p.Params.Launch = record.LaunchPerOp
			}
			if strings.HasPrefix(id, "rma/") {
				p.Limit = &record.Limit{ID: "limit/sm-copy", Value: 370e9}
			}
			if err := record.Derive(&p, metrics...); err != nil {
				t.Fatal(err)
			}
			f.Points = append(f.Points, p)
		}
	}
	bw := []string{record.MetricBandwidth, record.MetricLatency}
	coll := []string{record.MetricAlgBW, record.MetricBusBW, record.MetricLatency}
	for _, id := range []string{"rma/put/block", "rma/nccl-lsa/put/block", "rma/get/block", "rma/nccl-lsa/get/block", "rma/p", "rma/g", "rma/other"} {
		add(id, bw...)
	}
	for _, id := range []string{"latency/put/block", "latency/get/block", "latency/g", "latency/pingpong/signal", "latency/issue/fence", "latency/quiet"} {
		add(id, record.MetricLatency)
	}
	for _, id := range []string{"collectives/allreduce/multicta", "collectives/allreduce/nccl-lsa", "collectives/allreduce/nccl-tree", "collectives/broadcast/nccl"} {
		add(id, coll...)
	}
	add("collectives/allreduce/nvshmem-block", coll...) // fused: its own chart
	for i := len(f.Points) - 2; i < len(f.Points); i++ {
		f.Points[i].Params.Launch = record.LaunchFused
	}
	add("collectives/alltoall/nccl", coll...) // an older file's row: its own chart
	for i := len(f.Points) - 2; i < len(f.Points); i++ {
		f.Points[i].Params.Launch = ""
	}
	specs := plots.Build([]*record.File{f}, record.Paper())
	var names []string
	for _, s := range specs {
		names = append(names, s.Name)
	}
	want := "bandwidth-put bandwidth-get bandwidth-scalar bandwidth-other latency-put latency-get latency-scalar latency-pingpong latency-issue latency-other allreduce allreduce-variants allreduce-fused collectives-other collectives-mode-unknown allreduce-time allreduce-time-fused collectives-time device-api"
	if strings.Join(names, " ") != want {
		t.Fatalf("charts\n %s\nwant\n %s", strings.Join(names, " "), want)
	}
	out, err := json.MarshalIndent(specs, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	golden.Check(t, "every-chart.spec.json", append(out, '\n'))
	// and every one of them renders
	for _, s := range specs {
		if err := plots.Render(io.Discard, s, "png"); err != nil {
			t.Errorf("%s: %v", s.Name, err)
		}
	}
}

// The collectives' time per operation is charted on log–log axes (the small
// messages, flat zero on an algbw chart): the median of the samples, per
// launch mode.
func TestCollectivesTimeCharts(t *testing.T) {
	f := &record.File{Name: "t.jsonl", Header: record.Header{PEs: 8, Nodes: 1}}
	for _, id := range []string{"collectives/allreduce/nccl-ring", "collectives/alltoall/nccl"} {
		for _, size := range []int64{4, 1 << 10, 1 << 20} {
			p := record.Point{Type: record.TypePoint, ID: id, Status: record.StatusOK,
				Params: record.Params{Size: size, Op: "sum", DType: "float", Launch: record.LaunchPerOp}, Bytes: size, BusFactor: 1.75,
				Samples: []float64{5e-6 + float64(size)*1e-12, 6e-6 + float64(size)*1e-12, 7e-6 + float64(size)*1e-12}}
			if err := record.Derive(&p, record.MetricAlgBW, record.MetricBusBW); err != nil {
				t.Fatal(err)
			}
			f.Points = append(f.Points, p)
		}
	}
	specs := plots.Build([]*record.File{f}, record.Paper())
	byName := map[string]plots.Spec{}
	for _, s := range specs {
		byName[s.Name] = s
	}
	ar, ok := byName["allreduce-time"]
	if !ok || !ar.LogY || len(ar.Series) != 1 || ar.Series[0].Label != "nccl-ring (float, per-op)" {
		t.Fatalf("allreduce-time: %+v", ar)
	}
	if y := ar.Series[0].Points[0].Y; math.Abs(y-6.000004) > 1e-9 {
		t.Errorf("median time at 4 B: %v µs, want 6", y)
	}
	// The paper's small-message range (8 GPUs, as this file) is drawn up to 256 KiB.
	if len(ar.Marks) != 2 || ar.Marks[0].XMax != 256<<10 || ar.Marks[0].Y != 4.7 || ar.Marks[1].Y != 8.9 || !strings.Contains(ar.Marks[0].Label, "4.7–8.9") {
		t.Errorf("allreduce-time marks %+v", ar.Marks)
	}
	if ct, ok := byName["collectives-time"]; !ok || len(ct.Series) != 1 || ct.Series[0].ID != "collectives/alltoall/nccl" {
		t.Errorf("collectives-time: %+v", ct)
	}
	// Another GPU count: the paper's 8-GPU range is not drawn beside it.
	f.Header.PEs = 2
	for _, s := range plots.Build([]*record.File{f}, record.Paper()) {
		if s.Name == "allreduce-time" && len(s.Marks) != 0 {
			t.Errorf("2 PEs beside the paper's 8: marks %+v", s.Marks)
		}
	}
}

// A published value measured at one size is a marker at that size, not a
// line across the chart; every title fits two lines.
func TestPaperValuesAtTheirSizeAndShortTitles(t *testing.T) {
	f := fixture.Synthetic(fixture.Options{Seed: 1})
	for _, s := range plots.Build([]*record.File{f}, record.Paper()) {
		if n := len(plots.TitleLines(s.Title)); n > 2 || strings.HasSuffix(plots.TitleLines(s.Title)[n-1], "…") {
			t.Errorf("%s: title %q does not fit two lines", s.Name, s.Title)
		}
		for _, m := range s.Marks {
			if strings.Contains(m.Label, " at 256 B") && m.X != 256 {
				t.Errorf("%s: %q drawn across the chart (x %v)", s.Name, m.Label, m.X)
			}
		}
	}
}

// A quick run's sizes (×4 steps) are the labelled ticks.
func TestTicksOnMeasuredSizes(t *testing.T) {
	at := []float64{1 << 10, 1 << 12, 1 << 14, 1 << 16}
	var labelled []float64
	for _, tk := range (plots.Pow2Ticks{At: at}).Ticks(1<<10, 1<<16) {
		if tk.Label != "" {
			labelled = append(labelled, tk.Value)
		}
	}
	if fmt.Sprint(labelled) != fmt.Sprint(at) {
		t.Errorf("labelled %v, want the measured %v", labelled, at)
	}
}

// A shape check rings its points on the chart and the caption says what a
// ring means; a chart with no checked point says nothing of rings.
func TestShapeChecksAreRinged(t *testing.T) {
	f := fixture.Synthetic(fixture.Options{Seed: 1})
	for i := range f.Points {
		if p := &f.Points[i]; p.ID == "latency/p" && p.Params.Size == 256 {
			for j := range p.Samples {
				p.Samples[j] *= 0.8 // 19 % below 64 B
			}
			p.Metrics = nil
			if err := record.Derive(p, record.MetricLatency); err != nil {
				t.Fatal(err)
			}
			p.KernelTimer = nil
			record.Annotate(&f.Header, p)
		}
	}
	record.MarkShapes(f.Points)
	var scalar *plots.Spec
	specs := plots.Build([]*record.File{f}, record.Paper())
	for i, s := range specs {
		ringed := strings.Contains(strings.Join(s.Notes, " "), plots.CheckNote)
		if s.Name == "latency-scalar" {
			scalar = &specs[i]
		} else if ringed {
			t.Errorf("%s: the ring note without a checked point", s.Name)
		}
		for _, ser := range s.Series {
			for _, p := range ser.Points {
				if want := ser.ID == "latency/p" && (p.X == 64 || p.X == 256); p.Check != want {
					t.Errorf("%s %s at %v B: check %v", s.Name, ser.Label, p.X, p.Check)
				}
			}
		}
	}
	if scalar == nil || !strings.Contains(strings.Join(scalar.Notes, " "), plots.CheckNote) {
		t.Fatalf("latency-scalar chart: %+v", scalar)
	}
	var svg bytes.Buffer
	if err := plots.Render(&svg, *scalar, "svg"); err != nil {
		t.Fatal(err)
	}
	var plain bytes.Buffer
	s := *scalar
	s.Series = append([]plots.Series(nil), s.Series...)
	for i := range s.Series {
		s.Series[i].Points = append([]plots.Point(nil), s.Series[i].Points...)
		for j := range s.Series[i].Points {
			s.Series[i].Points[j].Check = false
		}
	}
	if err := plots.Render(&plain, s, "svg"); err != nil {
		t.Fatal(err)
	}
	// The rings are in the ring colour: the SVG with them has it, without not.
	if c := "stroke:#E00000"; !strings.Contains(svg.String(), c) || strings.Contains(plain.String(), c) {
		t.Errorf("ring colour %s: with checks %v, without %v", c, strings.Contains(svg.String(), c), strings.Contains(plain.String(), c))
	}
}

// Issue 30: two files both named results.jsonl (what reproduce always
// writes) are two curves labelled by the folders that tell them apart; one
// was dropped before, both taking the label "results.jsonl".
func TestTwoResultsFilesAreTwoCurves(t *testing.T) {
	var files []*record.File
	for _, dir := range []string{"h200/reproduce", "h100/reproduce"} {
		f := &record.File{Name: dir + "/results.jsonl", Header: record.Header{PEs: 2, Nodes: 1}}
		for _, size := range []int64{1 << 20, 1 << 30} {
			p := record.Point{Type: record.TypePoint, ID: "rma/put/block", Status: record.StatusOK,
				Params: record.Params{Size: size, Op: "put", CTAs: 32, Threads: 256}, Bytes: size, Samples: []float64{float64(size) / 300e9}}
			if err := record.Derive(&p, record.MetricBandwidth); err != nil {
				t.Fatal(err)
			}
			f.Points = append(f.Points, p)
		}
		files = append(files, f)
	}
	s := plots.Build(files, nil)[0]
	var labels []string
	for _, ser := range s.Series {
		labels = append(labels, ser.Label)
	}
	if len(labels) != 2 || !strings.HasPrefix(labels[0], "h200/reproduce: ") || !strings.HasPrefix(labels[1], "h100/reproduce: ") {
		t.Errorf("%s: curves %q, want one per file labelled h200/reproduce and h100/reproduce", s.Name, labels)
	}
}

// The paper's published link figures (measured between two GPUs over
// NVLink) are never drawn beside a one-GPU run's same-GPU copies (path
// local), only beside the path they were measured on.
func TestNoPaperLinkBesideSameGPUCopies(t *testing.T) {
	f := fixture.Synthetic(fixture.Options{Seed: 1})
	for i := range f.Points {
		if f.Points[i].Effective == "p2p" {
			f.Points[i].Effective = "local"
		}
	}
	for _, s := range plots.Build([]*record.File{f}, record.Paper()) {
		if !strings.HasPrefix(s.Name, "bandwidth-") {
			continue
		}
		for _, m := range s.Marks {
			if strings.Contains(m.Label, "paper:") && strings.Contains(m.Label, "p2p") {
				t.Errorf("%s: the paper's NVLink figure beside same-GPU copies: %q", s.Name, m.Label)
			}
		}
	}
}

// A MoE chart describes the floor only where it draws one: a one-GPU run
// sends nothing to another GPU and has none.
func TestMoEFloorNoteOnlyWithAFloor(t *testing.T) {
	file := func(floor bool) *record.File {
		f := &record.File{Name: "moe", Header: record.Header{PEs: 2, Synthetic: true}}
		for _, tk := range []int{128, 256} {
			p := record.Point{ID: "moe/dispatch/nvshmem", Status: record.StatusOK, Effective: "p2p",
				Params:  record.Params{DType: "bf16", Extra: map[string]string{"tokens": fmt.Sprint(tk), "moe_mode": "ll", "routing": "uniform"}},
				Metrics: map[string]record.Summary{record.MetricLatency: {Unit: record.UnitSeconds, Median: float64(tk) * 1e-8, Min: float64(tk) * 1e-8, Max: float64(tk) * 1e-8}}}
			if floor {
				p.Values = map[string]float64{"floor_s": float64(tk) * 5e-9}
			}
			f.Points = append(f.Points, p)
		}
		return f
	}
	for _, floor := range []bool{true, false} {
		var moe *plots.Spec
		specs := plots.Build([]*record.File{file(floor)}, record.Paper())
		for i := range specs {
			if strings.HasPrefix(specs[i].Name, "moe-") {
				moe = &specs[i]
			}
		}
		if moe == nil {
			t.Fatalf("floor %v: no MoE chart", floor)
		}
		drawn, said := false, false
		for _, s := range moe.Series {
			drawn = drawn || s.ID == "floor"
		}
		for _, n := range moe.Notes {
			said = said || strings.HasPrefix(n, "floor:")
		}
		if drawn != floor || said != floor {
			t.Errorf("floor in the file %v: drawn %v, described %v", floor, drawn, said)
		}
	}
}
