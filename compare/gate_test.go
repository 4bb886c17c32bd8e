package compare_test

import (
	"bytes"
	"encoding/json"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/nvshbench/nvshbench/compare"
	"github.com/nvshbench/nvshbench/internal/fixture"
	"github.com/nvshbench/nvshbench/internal/golden"
	"github.com/nvshbench/nvshbench/internal/table"
	"github.com/nvshbench/nvshbench/record"
)

// --threshold is a slowdown in time per operation for every metric: twice
// as slow is 100 %, a latency twice as long and a bandwidth of half the
// base's alike.
func TestThresholdIsTimeForEveryMetric(t *testing.T) {
	base := fixture.Synthetic(fixture.Options{Seed: 1})
	for _, c := range []struct {
		slower  float64
		regress bool
	}{{2, true}, {1.5, false}} {
		cand := fixture.Synthetic(fixture.Options{Seed: 2, Scale: 1 / c.slower})
		res, err := compare.Compare([]*record.File{base, cand}, compare.Options{Threshold: 0.6})
		if err != nil {
			t.Fatal(err)
		}
		kinds := map[string]int{}
		for _, r := range res.Rows {
			if math.IsNaN(r.Slowdown[0]) || strings.HasPrefix(r.ID, "collectives/") { // a collective's fixed cost does not scale
				continue
			}
			kinds[r.Unit]++
			if got := r.Slowdown[0]; math.Abs(got-(c.slower-1)) > 0.05 {
				t.Errorf("%.1f× slower: %s %s slowdown %.3f, want %.2f", c.slower, r.ID, r.Key, got, c.slower-1)
			}
			if r.Regress[0] != c.regress {
				t.Errorf("%.1f× slower under a 60%% gate: %s %s (%s) regression %v, want %v", c.slower, r.ID, r.Key, r.Unit, r.Regress[0], c.regress)
			}
		}
		if kinds[record.UnitSeconds] == 0 || kinds[record.UnitBytesPerSec] == 0 {
			t.Fatalf("the fixture lacks a latency or a bandwidth row: %v", kinds)
		}
	}
}

func TestSlowdown(t *testing.T) {
	for _, c := range []struct {
		old, new float64
		unit     string
		want     float64
	}{
		{1e-6, 2e-6, record.UnitSeconds, 1},
		{100e9, 50e9, record.UnitBytesPerSec, 1},
		{1e9, 0.5e9, record.UnitOpsPerSec, 1},
		{100e9, 200e9, record.UnitBytesPerSec, -0.5},
		{2e-6, 1e-6, record.UnitSeconds, -0.5},
	} {
		if got := compare.Slowdown(c.old, c.new, c.unit); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("Slowdown(%g, %g, %s) = %g, want %g", c.old, c.new, c.unit, got, c.want)
		}
	}
}

// tick is %globaltimer's step on an H200.
const tick = 32e-9

// tiesFile is a run whose every sample is a whole number of timer ticks:
// a latency point and a bandwidth point (8 bytes per operation) timed alike.
func tiesFile(label string, ticks []int) *record.File {
	f := &record.File{Name: label + ".jsonl", Header: record.Header{Type: record.TypeHeader, Schema: record.SchemaVersion,
		Tool: "nvshbench", ToolVersion: "test", Created: "2026-12-01T00:00:00Z", Synthetic: true, Label: label,
		GPUs: []record.GPU{{Name: "NVIDIA H200"}}, PEs: 1}}
	samples := make([]float64, len(ticks))
	for i, n := range ticks {
		samples[i] = float64(n) * tick
	}
	for _, p := range []record.Point{
		{ID: "latency/p", Params: record.Params{Size: 8, Op: "p", Threads: 1, PEs: 1}},
		{ID: "rma/g", Params: record.Params{Size: 8, Op: "g", Threads: 1, PEs: 1}, Bytes: 8},
	} {
		p.Type, p.Status, p.Timer, p.Iters = record.TypePoint, record.StatusOK, "events", 1
		p.Verify = record.Verification{Checked: true, OK: true}
		p.Samples = append([]float64(nil), samples...)
		m := record.MetricLatency
		if p.Bytes > 0 {
			m = record.MetricBandwidth
		}
		if err := record.Derive(&p, m); err != nil {
			panic(err)
		}
		record.Annotate(&f.Header, &p)
		f.Points = append(f.Points, p)
	}
	return f
}

func repeat(n, times int) []int {
	out := make([]int, times)
	for i := range out {
		out[i] = n
	}
	return out
}

func join(parts ...[]int) []int {
	var out []int
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

// The ties fixtures: 10 samples of 3 distinct values on a 32 ns grid
// (40, 41, 42 ticks: 1.28, 1.312, 1.344 µs), as %globaltimer gives.
var ties = map[string][]int{
	"ties-base":    join([]int{40}, repeat(41, 8), []int{42}),
	"ties-same":    join(repeat(40, 2), repeat(41, 7), []int{42}), // the same three values, another draw
	"ties-slowest": repeat(42, 10),                                // every sample at the base's slowest
	"ties-shifted": join([]int{44}, repeat(45, 8), []int{46}),     // 4 ticks (9.8 %) slower
}

// jsonl writes a file as the record writer does: a header line, a line per
// point.
func jsonl(f *record.File) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.Encode(f.Header)
	for _, p := range f.Points {
		enc.Encode(p)
	}
	return b.Bytes()
}

// No false significance with ties: a candidate whose every sample equals
// the base's slowest is one timer tick slower at the median; the rank
// test calls that significant (p < 0.001: it is a shift of the quantized
// values, and the test is exact), but a tick is what the timer resolves, so
// it is ~ and no gate fails on it. A real shift on the same grid still is a
// regression, judged less one tick.
func TestTiesWithinOneTimerStep(t *testing.T) {
	files := map[string]*record.File{}
	for name, ticks := range ties {
		files[name] = tiesFile(strings.TrimPrefix(name, "ties-"), ticks)
		golden.Check(t, name+".jsonl", jsonl(files[name])) // the fixtures the CLI tests read
	}
	base := files["ties-base"]
	cmp := func(cand string, thr float64) *compare.Result {
		t.Helper()
		res, err := compare.Compare([]*record.File{base, files[cand]}, compare.Options{Threshold: thr})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Rows) != 2 {
			t.Fatalf("%s: %d rows, want 2", cand, len(res.Rows))
		}
		return res
	}
	for _, cand := range []string{"ties-same", "ties-slowest"} {
		res := cmp(cand, 0.01)
		if res.Regressions != 0 || res.Failures != 0 {
			t.Errorf("%s under a 1%% gate: %d regressions, %d failures", cand, res.Regressions, res.Failures)
		}
		for _, r := range res.Rows {
			if r.Deltas[0] != "~" || r.Regress[0] {
				t.Errorf("%s: %s Δ %q regress %v, want ~", cand, r.ID, r.Deltas[0], r.Regress[0])
			}
			if math.Abs(r.Step[0]-tick) > 1e-15 {
				t.Errorf("%s: %s step %g, want %g", cand, r.ID, r.Step[0], tick)
			}
			if cand == "ties-slowest" && !(r.Cmp[0].P < 0.001 && r.Unresolved[0]) {
				t.Errorf("ties-slowest: %s p = %g unresolved %v; the rank test should find the one-tick shift (p < 0.001) and the step rule undo it", r.ID, r.Cmp[0].P, r.Unresolved[0])
			}
		}
		var b bytes.Buffer
		table.Render(&b, res.Table(), "text")
		if cand == "ties-slowest" && !strings.Contains(b.String(), "timer's grid (a step of 32 ns)") {
			t.Errorf("the table does not say why p < alpha is ~:\n%s", b.String())
		}
	}
	for _, c := range []struct {
		thr     float64
		regress bool
	}{{0.01, true}, {0.05, true}, {0.08, false}} { // 9.8 % observed, 7.3 % less one tick
		res := cmp("ties-shifted", c.thr)
		for _, r := range res.Rows {
			if r.Deltas[0] == "~" || r.Unresolved[0] || r.Cmp[0].P >= 0.001 {
				t.Errorf("a 4-tick shift: %s Δ %q p %g, want significant", r.ID, r.Deltas[0], r.Cmp[0].P)
			}
			if r.Regress[0] != c.regress {
				t.Errorf("a 4-tick shift under a %.0f%% gate: %s regression %v, want %v", c.thr*100, r.ID, r.Regress[0], c.regress)
			}
		}
	}
	// Two constant runs show no grid: a 2× slowdown stays one.
	flat, twice := tiesFile("flat", repeat(41, 10)), tiesFile("twice", repeat(82, 10))
	res, err := compare.Compare([]*record.File{flat, twice}, compare.Options{Threshold: 0.6})
	if err != nil {
		t.Fatal(err)
	}
	if res.Regressions != 2 {
		t.Errorf("constant samples, 2× slower, 60%% gate: %d regressions, want 2 (latency and bandwidth)", res.Regressions)
	}
}

func TestTimerStep(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	cont := func() []float64 {
		s := make([]float64, 10)
		for i := range s {
			s[i] = 1.3e-6 * (1 + 0.02*rng.Float64())
		}
		return s
	}
	ticks := func(n ...int) []float64 {
		s := make([]float64, len(n))
		for i, v := range n {
			s[i] = float64(v) * tick
		}
		return s
	}
	for _, c := range []struct {
		name string
		a, b []float64
		want float64
	}{
		{"continuous", cont(), cont(), 0},
		{"whole ticks", ticks(40, 41, 41, 42), ticks(42, 42), tick},
		{"ticks apart only between runs", ticks(41, 41, 41), ticks(43, 43), 0},
		{"ties off the grid", []float64{1e-6, 1e-6, 1.1e-6}, []float64{1.25e-6, 1.25e-6}, 0},
		{"one value", ticks(41, 41), ticks(41), 0},
	} {
		if got := compare.TimerStep(c.a, c.b); math.Abs(got-c.want) > 1e-15 {
			t.Errorf("%s: step %g, want %g", c.name, got, c.want)
		}
	}
}

// A label is the user's text: its control characters never reach the
// terminal raw, in the column header too.
func TestLabelControlCharactersEscaped(t *testing.T) {
	a := fixture.Synthetic(fixture.Options{Seed: 1, Label: "old\x1b[31m"})
	b := fixture.Synthetic(fixture.Options{Seed: 2, Label: "new\x1b]0;pwned\x07"})
	res, err := compare.Compare([]*record.File{a, b}, compare.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, format := range []string{"text", "markdown"} {
		var out bytes.Buffer
		rep := res.Table()
		rep.Wide = true
		if err := table.Render(&out, rep, format); err != nil {
			t.Fatal(err)
		}
		s := out.String()
		if strings.ContainsAny(s, "\x1b\x07") {
			t.Errorf("%s: a raw control character in the output:\n%q", format, s)
		}
		if !strings.Contains(s, `old\x1b[31m`) || !strings.Contains(s, `new\x1b]0;pwned\a`) {
			t.Errorf("%s: the labels are not shown escaped:\n%s", format, s)
		}
	}
}
