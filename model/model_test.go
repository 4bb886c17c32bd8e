package model_test

import (
	"bytes"
	"encoding/json"
	"math"
	"math/rand"
	"strings"
	"testing"

	"github.com/nvshbench/nvshbench/internal/decide"
	"github.com/nvshbench/nvshbench/internal/golden"
	"github.com/nvshbench/nvshbench/model"
	"github.com/nvshbench/nvshbench/record"
	"github.com/nvshbench/nvshbench/report"
)

// timeFn gives the time (s) of a size.
type timeFn func(s float64) float64

func line(alphaUS, gbps float64) timeFn {
	return func(s float64) float64 { return alphaUS*1e-6 + s/(gbps*1e9) }
}

// obs samples fn at powers of two from lo to hi with ±noise relative
// jitter (seeded).
func obs(fn timeFn, lo, hi int64, noise float64, seed int64) []model.Obs {
	r := rand.New(rand.NewSource(seed))
	var out []model.Obs
	for s := lo; s <= hi; s *= 2 {
		t := fn(float64(s)) * (1 + noise*(2*r.Float64()-1))
		out = append(out, model.Obs{Size: s, Time: t, Samples: []float64{t, t, t}})
	}
	return out
}

func within(t *testing.T, what string, got, want, tol float64) {
	t.Helper()
	if math.Abs(got/want-1) > tol {
		t.Errorf("%s = %.4g, want %.4g (within %.0f %%)", what, got, want, 100*tol)
	}
}

// A known α and B are recovered within 2 %, with 1 % noise.
func TestFitRecoversAlphaAndB(t *testing.T) {
	segs, why := model.FitSeries(obs(line(5, 100), 8, 1<<30, 0.01, 1))
	if why != "" || len(segs) != 1 {
		t.Fatalf("%d segments, %q", len(segs), why)
	}
	within(t, "α", segs[0].Alpha, 5e-6, 0.02)
	within(t, "B", segs[0].Bandwidth(), 100e9, 0.02)
	if segs[0].Worst > 0.02 || segs[0].R2 < 0.999 {
		t.Errorf("worst %.3f, R² %.5f", segs[0].Worst, segs[0].R2)
	}
}

// A protocol switch (LL below 64 KiB, Simple above) is found as two
// segments, the breakpoint where it is, each within 2 %.
func TestFitFindsABreakpoint(t *testing.T) {
	small, large := line(3, 20), line(10, 300)
	fn := func(s float64) float64 {
		if s <= 64<<10 {
			return small(s)
		}
		return large(s)
	}
	segs, why := model.FitSeries(obs(fn, 8, 1<<30, 0.005, 2))
	if why != "" || len(segs) != 2 {
		t.Fatalf("%d segments (%+v), %q", len(segs), segs, why)
	}
	if segs[0].To != 64<<10 || segs[1].From != 128<<10 {
		t.Errorf("breakpoint between %d and %d, want 64 KiB and 128 KiB", segs[0].To, segs[1].From)
	}
	within(t, "α below", segs[0].Alpha, 3e-6, 0.02)
	within(t, "B below", segs[0].Bandwidth(), 20e9, 0.02)
	within(t, "α above", segs[1].Alpha, 10e-6, 0.02)
	within(t, "B above", segs[1].Bandwidth(), 300e9, 0.02)
}

// An outlier does not move a robust fit.
func TestFitIsRobustToAnOutlier(t *testing.T) {
	o := obs(line(5, 100), 8, 1<<30, 0, 3)
	o[10].Time *= 3
	segs, _ := model.FitSeries(o)
	within(t, "α", segs[0].Alpha, 5e-6, 0.02)
	within(t, "B", segs[len(segs)-1].Bandwidth(), 100e9, 0.02)
}

// Too little to fit says so, never a line through two points.
func TestNoFit(t *testing.T) {
	for n, want := range map[int]string{0: "no size", 1: "one size", 2: "2 sizes"} {
		segs, why := model.FitSeries(obs(line(5, 100), 8, 8<<uint(n), 0, 4)[:n])
		if !strings.Contains(why, want) || len(segs) != 0 {
			t.Errorf("%d sizes: %q, %d segments", n, why, len(segs))
		}
	}
	// A curve no three lines follow: no fit, with the residual.
	var o []model.Obs
	for i, s := 0, int64(8); i < 12; i, s = i+1, s*2 {
		tm := 1e-6 * (1 + float64(i%2)*3) // a saw tooth
		o = append(o, model.Obs{Size: s, Time: tm, Samples: []float64{tm}})
	}
	if _, why := model.FitSeries(o); !strings.Contains(why, "worst residual") {
		t.Errorf("saw tooth: %q", why)
	}
}

// file builds a results file of series: id → time function, with params.
type spec struct {
	id     string
	params record.Params
	fn     timeFn
	flags  []string
}

func file(name string, pes int, specs []spec, sizes []int64) *record.File {
	f := &record.File{Name: name, Header: record.Header{Type: record.TypeHeader, Schema: record.SchemaVersion, PEs: pes, Label: name}}
	r := rand.New(rand.NewSource(int64(len(name))))
	for _, sp := range specs {
		for _, s := range sizes {
			p := record.Point{Type: record.TypePoint, ID: sp.id, Params: sp.params, Status: record.StatusOK, Flags: sp.flags}
			p.Params.Size, p.Params.PEs = s, pes
			for i := 0; i < 8; i++ {
				p.Samples = append(p.Samples, sp.fn(float64(s))*(1+0.01*r.Float64()))
			}
			f.Points = append(f.Points, p)
		}
	}
	return f
}

func pow2(lo, hi int64) []int64 {
	var out []int64
	for s := lo; s <= hi; s *= 2 {
		out = append(out, s)
	}
	return out
}

var perOp = record.Params{Op: "sum", DType: "float", Launch: record.LaunchPerOp, Path: "p2p"}

// Bad inputs: one size per series, only flagged sizes, mixed PE counts:
// "no fit" rows and no comparison across PE counts, never a crash.
func TestBadInputsGiveNoFitRows(t *testing.T) {
	one := file("one", 2, []spec{{id: "collectives/allreduce/nccl", params: perOp, fn: line(5, 100)}}, []int64{4096})
	flagged := file("flagged", 2, []spec{{id: "rma/put/block", params: record.Params{Op: "put", Scope: "block", CTAs: 32, Threads: 256}, fn: line(1, 300), flags: []string{record.FlagAboveLink}}}, pow2(8, 1<<30))
	mixed2 := file("mixed", 2, []spec{{id: "collectives/allreduce/nccl", params: perOp, fn: line(5, 100)}}, pow2(8, 1<<30))
	mixed4 := file("mixed", 4, []spec{{id: "collectives/allreduce/multicta", params: perOp, fn: line(3, 80)}}, pow2(8, 1<<30))
	fits := model.FitAll(model.Collect([]*record.File{one, flagged, mixed2, mixed4}))
	var notes []string
	for _, f := range fits {
		notes = append(notes, f.NoFit)
	}
	if len(fits) != 4 || !strings.Contains(notes[0], "one size") || !strings.Contains(notes[1], "every size left out") || notes[2] != "" || notes[3] != "" {
		t.Fatalf("no-fit reasons %q", notes)
	}
	if g := model.BuildGuide(fits, decide.Default()); len(g.Comparisons) != 0 {
		t.Errorf("compared across PE counts: %+v", g.Comparisons)
	}
	var buf bytes.Buffer
	if err := report.Render(&buf, &report.Report{Tables: []report.Table{model.FitTable(fits)}}, "text"); err != nil || !strings.Contains(buf.String(), "no fit: one size") {
		t.Errorf("fit table: %v\n%s", err, buf.String())
	}
}

// guideFiles: NCCL wins small AllReduces, our multi-CTA kernel large ones,
// crossing where α + S/B meet; a 2-PE and a 4-PE file for the predictions.
func guideFiles() []*record.File {
	sizes := pow2(8, 1<<30)
	two := file("h2", 2, []spec{
		{id: "collectives/allreduce/nccl-ring", params: perOp, fn: line(8, 150)},
		{id: "collectives/allreduce/multicta", params: perOp, fn: line(12, 400)},
		{id: "collectives/allreduce/multicta-oneshot", params: perOp, fn: line(13, 380)},
		{id: "collectives/allreduce/nccl", params: perOp, fn: line(7, 150)},
		{id: "collectives/allreduce/nccl-tree", params: perOp, fn: line(6, 140)},
		{id: "latency/put/block", params: record.Params{Scope: "block", CTAs: 1, Threads: 256, Mode: "nbi"}, fn: line(2.5, 50)},
	}, sizes)
	four := file("h4", 4, []spec{{id: "collectives/allreduce/nccl-ring", params: perOp, fn: func(s float64) float64 { return 6*4e-6 + 1.5*s/150e9 }}}, sizes)
	return []*record.File{two, four}
}

func TestGuideGolden(t *testing.T) {
	fits := model.FitAll(model.Collect(guideFiles()))
	g := model.BuildGuide(fits, decide.Default())
	if len(g.Comparisons) != 1 {
		t.Fatalf("%d comparisons", len(g.Comparisons))
	}
	c := g.Comparisons[0]
	// The crossover of tree (6 µs + S/140 GB/s) and multicta (12 µs + S/400
	// GB/s): S = 6 µs / (1/140 − 1/400 GB/s) ≈ 1.29 MB.
	var x *model.Crossover
	for i := range c.Crossings {
		if strings.HasPrefix(c.Crossings[i].To, "multicta") {
			x = &c.Crossings[i]
		}
	}
	want := 6e-6 / (1/140e9 - 1/400e9)
	if x == nil || !x.FromFits || math.Abs(x.Size/want-1) > 0.05 {
		t.Errorf("crossover %+v, want near %.0f B", x, want)
	}
	var buf bytes.Buffer
	rep := &report.Report{Tables: model.GuideTables(g), Wide: true}
	if err := report.Render(&buf, rep, "text"); err != nil {
		t.Fatal(err)
	}
	golden.Check(t, "guide.txt", buf.Bytes())
	spec, _ := json.MarshalIndent(model.GuideCharts(g), "", "  ")
	golden.Check(t, "guide-chart.json", append(spec, '\n'))
}

// n-GPU predictions: the ring model from the 2-PE fit, checked against the
// 4-PE file (made to follow the ring formula): error within a few %.
func TestPredictions(t *testing.T) {
	fits := model.FitAll(model.Collect(guideFiles()))
	models := model.Models(fits)
	var names []string
	for _, m := range models {
		names = append(names, m.Name)
	}
	if strings.Join(names, ",") != "ring,NCCL's tuning model,one-shot" {
		t.Fatalf("models %v", names)
	}
	preds := model.Predict(models, fits, []int{4, 8}, []int64{4096, 1 << 30})
	for _, p := range preds {
		if p.Model == "ring" && p.N == 4 {
			if p.Measured == 0 || math.Abs(p.Error()) > 0.05 {
				t.Errorf("ring at 4 PEs, %d B: predicted %.3g, measured %.3g", p.Size, p.Predicted, p.Measured)
			}
		}
		if p.Model == "ring" && p.N == 8 && p.Size == 1<<30 {
			// 2·7·4 µs + 2·7/8 · 1 GiB / 150 GB/s
			want := 14*4e-6 + 1.75*float64(1<<30)/150e9
			within(t, "ring at 8 PEs, 1 GiB", p.Predicted, want, 0.03)
		}
		if p.N == 8 && p.Measured != 0 {
			t.Errorf("a measurement at 8 PEs where none exists: %+v", p)
		}
	}
	nic := model.PredictNIC(model.DefaultNIC(), fits)
	if nic[0].Predicted != 48 || math.Abs(nic[4].Predicted-181.33) > 0.05 || !strings.Contains(nic[2].How, "on-node 2.5") {
		t.Errorf("NIC rows %+v", nic)
	}
	ch := model.NCCLChoices(fits)
	if len(ch) == 0 || ch[0].Best != "nccl-tree" || ch[0].Miss() <= 0 {
		t.Errorf("NCCL's choice: %+v", ch)
	}
}
