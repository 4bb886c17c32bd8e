package persm

import (
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/nvshbench/nvshbench/cuda/shim"
	"github.com/nvshbench/nvshbench/record"
)

// Every mechanism and compute kernel of the shim's lists has its line here
// (the name its rows go by), and every line names one of them: a new
// struct and list word without its Go line, or a line left behind, fails
// here, naming it. No two share a name, and none is named "compute" (the
// IDs of the compute kernels' rows).
func TestEveryListWordHasItsLine(t *testing.T) {
	lines := map[string]bool{}
	for _, l := range mechanismLines {
		lines[l.op] = true
	}
	for _, l := range computeLines {
		lines[l.op] = true
	}
	ops := map[string]bool{}
	for _, m := range shim.PerSMMechanisms() {
		ops[m.Op] = true
		if !lines[m.Op] {
			t.Errorf("the shim's mechanism %s (%s) has no line in record/persm's mechanismLines: its rows have no name", m.Struct, m.Op)
		}
	}
	for _, c := range shim.PerSMComputes() {
		ops[c.Op] = true
		if !lines[c.Op] {
			t.Errorf("the shim's compute kernel %s (%s) has no line in record/persm's computeLines", c.Struct, c.Op)
		}
	}
	for op := range lines {
		if !ops[op] {
			t.Errorf("record/persm has a line for %s, which the shim's lists do not have", op)
		}
	}
	names := map[string]bool{"compute": true}
	for _, m := range Mechanisms() {
		if names[m.Name] {
			t.Errorf("the name %s twice (or a mechanism named compute)", m.Name)
		}
		names[m.Name] = true
	}
	for _, c := range Computes() {
		if names[c.Name] {
			t.Errorf("the name %s twice", c.Name)
		}
		names[c.Name] = true
	}
	if len(Mechanisms()) != len(shim.PerSMMechanisms()) || len(Computes()) != len(shim.PerSMComputes()) || len(Mechanisms()) < 5 {
		t.Errorf("%d mechanisms, %d compute kernels", len(Mechanisms()), len(Computes()))
	}
}

// Threads is the shim's PM_THREADS.
func TestThreadsAreTheShims(t *testing.T) {
	src, err := shim.File("pm_mech.cuh")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^#define PM_THREADS (\d+)$`).FindSubmatch(src)
	if m == nil {
		t.Fatal("pm_mech.cuh defines no PM_THREADS")
	}
	if n, _ := strconv.Atoi(string(m[1])); n != Threads {
		t.Errorf("PM_THREADS %d, Threads %d", n, Threads)
	}
}

// Every row of every mechanism and compute kernel reads back from its ID;
// an ID of no row, or of a name this tool does not know, does not.
func TestIDsReadBack(t *testing.T) {
	n := 0
	for _, m := range Mechanisms() {
		for _, c := range Computes() {
			for _, r := range []Row{{Mechanism: m.Name}, {Mechanism: m.Name, Compute: c.Name}, {Compute: c.Name, TimesCompute: true},
				{Mechanism: m.Name, Compute: c.Name, TimesCompute: true}} {
				got, ok := ParseID(r.ID())
				if !ok || got != r {
					t.Errorf("%s read back as %+v (%v), want %+v", r.ID(), got, ok, r)
				}
				n++
			}
		}
	}
	if r, _ := ParseID("persm/compute/mma/beside-ce"); r.Partner() != "ce" || !r.Beside() || r.ID() != "persm/compute/mma/beside-ce" {
		t.Errorf("persm/compute/mma/beside-ce: %+v", r)
	}
	if r, _ := ParseID("persm/st/beside-fma"); r.Partner() != "fma" || r.TimesCompute {
		t.Errorf("persm/st/beside-fma: %+v", r)
	}
	// A staged mechanism's stage-offset row (TMA's), no other's.
	staged := 0
	for _, m := range Mechanisms() {
		r := Row{Mechanism: m.Name, StageOffset: true}
		got, ok := ParseID(r.ID())
		if ok != m.Staged || ok && got != r {
			t.Errorf("%s read back as %+v (%v); %s stages in shared memory: %v", r.ID(), got, ok, m.Name, m.Staged)
		}
		if m.Staged {
			staged++
		}
	}
	if r, ok := ParseID("persm/tma/stage-offset"); !ok || !r.StageOffset || r.Mechanism != "tma" || r.Beside() || r.TimesCompute || staged != 1 {
		t.Errorf("persm/tma/stage-offset: %+v %v (%d staged mechanisms)", r, ok, staged)
	}
	for _, id := range []string{"persm", "persm/", "persm/nope", "persm/st/beside-", "persm/st/beside-st", "persm/compute/fma/beside-fma",
		"persm/compute", "persm/compute/", "rma/st", "persm/st/x", "persm/compute/fma/beside-st/more", "persm/st/stage-offset",
		"persm/compute/fma/stage-offset", "persm/tma/beside-fma/stage-offset", "persm/nope/stage-offset"} {
		if r, ok := ParseID(id); ok {
			t.Errorf("%s read as %+v", id, r)
		}
	}
	if n < 40 {
		t.Errorf("%d rows", n)
	}
}

// A file written before params.sm_budget kept a row's budget in
// params.ctas: read, the budget is SMBudget and the CTAs gone, so its
// points are the same as a new file's (the same keys: compare matches
// them); a new file's rows and other families' points read as written.
func TestOldBudgetsReadAsNew(t *testing.T) {
	const file = `{"type":"header","schema":2,"tool":"nvshbench","created":"2026-12-01T00:00:00Z"}
{"type":"point","id":"persm/st","params":{"size":1024,"op":"st","ctas":8,"threads":512,"dir":"uni"},"status":"ok","samples_s":[1e-6]}
{"type":"point","id":"persm/compute/fma/beside-st","params":{"size":1024,"op":"fma","ctas":8,"threads":512,"extra":{"beside":"st"}},"status":"ok","samples_s":[1e-6]}
{"type":"point","id":"persm/ce","params":{"size":1024,"op":"ce","dir":"uni"},"status":"ok","samples_s":[1e-6]}
{"type":"point","id":"persm/tma","params":{"size":1024,"op":"tma","sm_budget":4,"threads":512,"dir":"uni"},"status":"ok","samples_s":[1e-6]}
{"type":"point","id":"rma/put/block","params":{"size":1024,"op":"put","ctas":32,"threads":256},"status":"ok","samples_s":[1e-6]}
`
	f, err := record.Read(strings.NewReader(file), "old.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	want := []struct{ budget, ctas int }{{8, 0}, {8, 0}, {0, 0}, {4, 0}, {0, 32}}
	for i, w := range want {
		p := f.Points[i].Params
		if p.SMBudget != w.budget || p.CTAs != w.ctas {
			t.Errorf("%s: budget %d, ctas %d; want %d, %d", f.Points[i].ID, p.SMBudget, p.CTAs, w.budget, w.ctas)
		}
	}
	if k := f.Points[0].Params.Key(); k != (record.Params{Size: 1024, Op: "st", SMBudget: 8, Threads: 512, Dir: "uni"}).Key() {
		t.Errorf("an old point's key %q is not a new one's", k)
	}
	if Budget(&f.Points[1]) != 8 {
		t.Errorf("the compute's budget: %d", Budget(&f.Points[1]))
	}
}

// The copy engine's values are declared to every reader as loading this
// layer: a point (of any row) with one beyond its range is refused.
func TestCEValuesBoundEveryReader(t *testing.T) {
	for _, d := range CEValues {
		got, ok := record.Declared(d.Name)
		if !ok || got != d {
			t.Errorf("%s: registered %+v, %v", d.Name, got, ok)
		}
		p := &record.Point{Type: record.TypePoint, ID: "persm/ce", Status: record.StatusOK, Samples: []float64{1e-6},
			Values: map[string]float64{d.Name: d.Max * 2}}
		if d.Max == 0 {
			p.Values[d.Name] = 1
		}
		if err := p.Validate(); err == nil || !strings.Contains(err.Error(), d.Name) {
			t.Errorf("%s beyond its range: %v", d.Name, err)
		}
	}
}

// The alignment a stage-offset row says its stages need: the smallest
// power of two whose every measured multiple runs at Full of the line's
// rate; no rule without the line's own figure or another offset.
func TestStageOffsetRule(t *testing.T) {
	row := func(slow func(o int) bool) StageOffsetRow {
		r := StageOffsetRow{Mechanism: "tma"}
		for _, o := range StageOffsets {
			bw := 50.0
			if slow(o) {
				bw = 25
			}
			r.Offsets, r.BW = append(r.Offsets, o), append(r.BW, bw)
		}
		return r
	}
	for _, c := range []struct {
		name string
		slow func(int) bool
		want int
		low  float64
	}{
		{"none slow", func(int) bool { return false }, 16, 1},
		{"off 32", func(o int) bool { return o%32 != 0 }, 32, 0.5},
		{"off 64", func(o int) bool { return o%64 != 0 }, 64, 0.5},
		{"only 48", func(o int) bool { return o == 48 }, 32, 0.5},
		{"every offset", func(o int) bool { return o != 0 }, 128, 0.5},
	} {
		r := row(c.slow)
		if a, ok := r.Rule(); !ok || a != c.want || r.Slowest(a) != c.low {
			t.Errorf("%s: rule %d (%v), slowest %.2f; want %d, %.2f", c.name, a, ok, r.Slowest(a), c.want, c.low)
		}
	}
	if _, ok := (StageOffsetRow{Offsets: []int{16, 32}, BW: []float64{1, 1}}).Rule(); ok {
		t.Error("a rule without the line's own figure")
	}
}
