package report_test

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/nvshbench/nvshbench/internal/decide"
	"github.com/nvshbench/nvshbench/internal/fixture"
	"github.com/nvshbench/nvshbench/internal/table"
	"github.com/nvshbench/nvshbench/record"
	"github.com/nvshbench/nvshbench/record/persm"
	"github.com/nvshbench/nvshbench/report"
)

// rowOf finds the table's row whose first cells are lead, and its cell in
// column col.
func cellAt(t *testing.T, tab *table.Table, col string, lead ...string) string {
	t.Helper()
	c := slices.Index(tab.Columns, col)
	if c < 0 {
		t.Fatalf("%s: no column %q in %v", tab.Title, col, tab.Columns)
	}
rows:
	for _, r := range tab.Rows {
		for i, l := range lead {
			if r[i].Text != l {
				continue rows
			}
		}
		return r[c].Text
	}
	t.Fatalf("%s: no row %v", tab.Title, lead)
	return ""
}

// The bytes-per-SM tables: GB/s and GB/s per SM over budgets, the copy
// engine's one figure, each row's smallest budget at 90 % of its own
// peak, sizes in L2 marked; the interference table's two slowdowns.
func TestPerSMTables(t *testing.T) {
	rep := report.Build([]*record.File{fixture.PerSMExample()}, record.Paper(), report.Options{})
	bw := findTable(rep, "Bytes per SM: GB/s to the peer")
	per := findTable(rep, "Bytes per SM: GB/s per SM used")
	in := findTable(rep, "Bytes per SM: a transfer beside a compute kernel")
	if bw == nil || per == nil || in == nil {
		t.Fatal("missing a bytes-per-SM table")
	}
	for _, c := range []struct {
		tab       *table.Table
		col, want string
		lead      []string
	}{
		{bw, "4 SM", "1200.0", []string{"tma", "256 MiB"}},
		{bw, "90 % at", "8 SM", []string{"tma", "256 MiB"}},
		{bw, "90 % at", "66 SM", []string{"st", "256 MiB"}},
		{bw, "peak", "1900.0", []string{"st", "256 MiB"}},
		{bw, "peak", "2000.0", []string{"ce", "256 MiB"}},
		{bw, "90 % at", "no SM (not checked)", []string{"ce", "256 MiB"}}, // a file without ce_sm_free
		{bw, "132 SM", "", []string{"ce", "256 MiB"}},
		{bw, "8 SM", "1000.0", []string{"tma", "1 MiB (L2)"}},
		{per, "4 SM", "300.00", []string{"tma", "256 MiB"}},
		{per, "66 SM", "27.27", []string{"st", "256 MiB"}},
		{in, "transfer slowdown %", "11.1", []string{"tma", "fma", "256 MiB", "8"}},
		{in, "compute slowdown %", "20.0", []string{"tma", "fma", "256 MiB", "8"}},
		{in, "compute alone µs", "10.00", []string{"tma", "fma", "256 MiB", "8"}},
		// The copy engine beside fma on every SM, against the copy engine
		// alone and fma alone on every SM (budget 0).
		{in, "beside GB/s", "1600.0", []string{"ce", "fma", "256 MiB", "0"}},
		{in, "transfer slowdown %", "25.0", []string{"ce", "fma", "256 MiB", "0"}},
		{in, "compute alone µs", "8.00", []string{"ce", "fma", "256 MiB", "0"}},
		{in, "compute slowdown %", "5.0", []string{"ce", "fma", "256 MiB", "0"}},
	} {
		if got := cellAt(t, c.tab, c.col, c.lead...); got != c.want {
			t.Errorf("%s %v %s: %q, want %q", c.tab.Title, c.lead, c.col, got, c.want)
		}
	}
	if !slices.ContainsFunc(in.Notes, func(n string) bool { return strings.HasPrefix(n, "ce: the copy engine on no SM") }) {
		t.Errorf("no note on how the copy engine's rows ran: %q", in.Notes)
	}
	// The fused launch is the SM mechanisms' only: the copy engine's rows
	// are not fused, and the note on the fused launch says so.
	for _, n := range in.Notes {
		if strings.Contains(n, "one fused launch") && !strings.HasPrefix(n, "one fused launch (SM mechanisms)") {
			t.Errorf("a note on the fused launch that does not say it is the SM mechanisms': %q", n)
		}
	}
	// The bandwidth tables' budgets stay the transfers': the compute alone
	// on every SM (budget 0) is no column.
	if slices.Contains(bw.Columns, "0 SM") {
		t.Errorf("columns %v", bw.Columns)
	}
	// A file without bytes-per-SM rows has none of these tables.
	rep = report.Build([]*record.File{fixture.Synthetic(fixture.Options{})}, record.Paper(), report.Options{})
	if findTable(rep, "Bytes per SM") != nil {
		t.Error("a bytes-per-SM table for a file without its rows")
	}
}

// A failed or unverified point is no figure of a curve; the slowdowns are
// ratios of times, NaN where a side is missing.
func TestPerSMCurvesAndSlowdowns(t *testing.T) {
	f := fixture.PerSMExample()
	for i := range f.Points {
		p := &f.Points[i]
		if p.ID == "persm/st" && p.Params.SMBudget == 132 && p.Params.Size == 256<<20 {
			p.Status, p.Verify.OK = record.StatusFailedVerification, false
		}
	}
	for _, c := range persm.Curves(f) {
		if c.Mechanism == "st" && c.Size == 256<<20 {
			if _, ok := c.At(132); ok {
				t.Error("a point that failed verification is in the curve")
			}
			if peak, b := c.Peak(); peak != 1800e9 || b != 66 || c.ReachRate(0.9*peak) != 66 {
				t.Errorf("st: peak %g at %d, 90 %% at %d", peak, b, c.ReachRate(0.9*peak))
			}
		}
	}
	// Ordered by mechanism (tma before ce); the copy engine's pairs its rows
	// beside fma with the copy engine alone and fma alone on every SM.
	ins := persm.Interferences(f)
	if len(ins) != 2 || math.Abs(ins[0].TransferSlowdown()-1.0/9) > 1e-9 || math.Abs(ins[0].ComputeSlowdown()-0.2) > 1e-9 {
		t.Fatalf("%+v", ins)
	}
	if ce := ins[1]; ce.Mechanism != "ce" || ce.Compute != "fma" || ce.Budget != 0 || ce.Alone != 2000e9 || ce.Beside != 1600e9 || ce.ComputeAlone != 8e-6 ||
		math.Abs(ce.TransferSlowdown()-0.25) > 1e-9 || math.Abs(ce.ComputeSlowdown()-0.05) > 1e-9 {
		t.Errorf("the copy engine beside fma: %+v", ce)
	}
	if !math.IsNaN((persm.Interference{Beside: 1}).TransferSlowdown()) || !math.IsNaN((persm.Interference{ComputeAlone: 1}).ComputeSlowdown()) {
		t.Error("a slowdown without both sides")
	}
	// Each side's samples travel with it as costs (the transfer's seconds
	// per byte, the compute's seconds), and the row's family is its sizes:
	// 25 % and 5 % beat a 3 % margin and the interval at ±1 %; a side not
	// measured is no slowdown, judged or not.
	is := func(got, want float64) bool { return math.Abs(got/want-1) < 1e-9 }
	if ce := ins[1]; len(ce.AloneCost) != 5 || !is(ce.AloneCost[2], 1/2000e9) || !is(ce.BesideCost[4], 1.01/1600e9) ||
		!is(ce.ComputeAloneCost[0], 8e-6*0.99) || !is(ce.ComputeBesideCost[2], 8.4e-6) || ce.Family != 1 {
		t.Errorf("the copy engine beside fma's costs: %+v", ce)
	}
	for _, in := range ins {
		if tr, co := in.TransferJudged(decide.Default()), in.ComputeJudged(decide.Default()); tr.Outcome != persm.Claimed || co.Outcome != persm.Claimed ||
			tr.Winner != "alone" || co.Winner != "alone" {
			t.Errorf("%s beside %s: %+v, %+v, want both claimed (alone faster)", in.Mechanism, in.Compute, tr, co)
		}
	}
	if j := (persm.Interference{Beside: 1, BesideCost: []float64{1, 1, 1, 1, 1}}).TransferJudged(decide.Default()); j.Outcome != persm.NotMeasured {
		t.Errorf("a transfer not measured alone: %+v", j)
	}
	// The two sizes of ce beside fma (PerSMExampleFed) are one family.
	for _, in := range persm.Interferences(fixture.PerSMExampleFed()) {
		if want := map[string]int{"ce": 2, "tma": 1}[in.Mechanism]; in.Family != want {
			t.Errorf("%s beside %s at %d: family %d, want %d", in.Mechanism, in.Compute, in.Size, in.Family, want)
		}
	}
}

// The interference table judges each slowdown by the report's rule (its
// --margin): on a file, a 2.5 % slowdown whose samples do not overlap is
// within noise at 3 % ("~") and claimed at 1 %; points of two samples
// beside five alone are too few to judge ("?"), the reason in a note.
func TestPerSMSlowdownsJudged(t *testing.T) {
	// set gives a point new figures: its B/s or time, and its samples.
	set := func(f *record.File, id string, bw, time float64, n int) {
		g := fixture.PerSM([]fixture.PerSMPoint{{ID: id, Size: 256 << 20, BW: bw, Time: time, Samples: n}})
		for i := range f.Points {
			if p := &f.Points[i]; p.ID == id {
				p.Samples, p.Metrics = g.Points[0].Samples, g.Points[0].Metrics
			}
		}
	}
	apart := fixture.PerSMExample()
	set(apart, "persm/tma/beside-fma", 1950e9, 0, 0)           // 2.6 % slower than 2000, ±1 % apart
	set(apart, "persm/compute/fma/beside-tma", 0, 10.25e-6, 0) // 2.5 % slower than 10 µs, ±1 % apart
	few := fixture.PerSMExample()
	set(few, "persm/tma/beside-fma", 1800e9, 0, 2)
	set(few, "persm/compute/fma/beside-tma", 0, 12e-6, 2)
	for _, c := range []struct {
		name              string
		f                 *record.File
		rule              decide.Rule
		transfer, compute string
		note, never       string
	}{
		{"apart, under 3 %", apart, decide.Rule{}, "2.6 ~", "2.5 ~", "~: within noise (under the margin, or the interval includes 1): no slowdown is claimed", "?:"},
		{"apart, over 1 %", apart, decide.Rule{Margin: 0.01, Alpha: 0.05}, "2.6", "2.5", "a slowdown is claimed only where it is at least 1 % and", "?:"},
		{"two samples beside", few, decide.Rule{}, "11.1 ?", "20.0 ?", "?: too few samples to judge (5 and 2 samples; 4 a side needed): no slowdown is claimed", "overlap"},
	} {
		for _, in := range persm.Interferences(c.f) {
			if in.Mechanism == "tma" && c.f == apart {
				for _, p := range [][2][]float64{{in.AloneCost, in.BesideCost}, {in.ComputeAloneCost, in.ComputeBesideCost}} {
					if slices.Max(p[0]) >= slices.Min(p[1]) {
						t.Fatalf("%s: the samples overlap: %v %v", c.name, p[0], p[1])
					}
				}
			}
		}
		in := findTable(report.Build([]*record.File{c.f}, record.Paper(), report.Options{Rule: c.rule}), "Bytes per SM: a transfer beside a compute kernel")
		if got := cellAt(t, in, "transfer slowdown %", "tma", "fma", "256 MiB", "8"); got != c.transfer {
			t.Errorf("%s: transfer slowdown %q, want %q", c.name, got, c.transfer)
		}
		if got := cellAt(t, in, "compute slowdown %", "tma", "fma", "256 MiB", "8"); got != c.compute {
			t.Errorf("%s: compute slowdown %q, want %q", c.name, got, c.compute)
		}
		if got := cellAt(t, in, "compute slowdown %", "ce", "fma", "256 MiB"); got != "5.0" {
			t.Errorf("%s: ce beside fma's compute slowdown %q, want 5.0 (claimed)", c.name, got)
		}
		if !slices.ContainsFunc(in.Notes, func(n string) bool { return strings.HasPrefix(n, c.note) }) {
			t.Errorf("%s: no note %q: %q", c.name, c.note, in.Notes)
		}
		if slices.ContainsFunc(in.Notes, func(n string) bool { return strings.Contains(n, c.never) }) {
			t.Errorf("%s: a note says %q: %q", c.name, c.never, in.Notes)
		}
	}
}

// The copy engine's SM use is what its points' ce_sm_free says, the same in
// every row and note: 1, no SM (checked); absent, no SM only "not checked";
// 0, cudaMemcpyAsync ran on SMs (the driver's kernel), never "no SM" or a
// budget of 0. One point saying 0 outweighs others saying 1, in every row
// of the file (one setup: one path for cudaMemcpyAsync).
func TestPerSMCopyEngineCheck(t *testing.T) {
	mixed := fixture.PerSMExampleCE(1)
	for i := range mixed.Points {
		if p := &mixed.Points[i]; p.ID == "persm/ce/beside-fma" {
			p.Values[persm.ValueCESMFree] = 0
		}
	}
	for _, c := range []struct {
		name          string
		f             *record.File
		state         persm.CESM
		reach, sms    string
		bwNote, perSM string // a note of the bandwidth and per-SM tables says it
		besideNote    string
		never         []string // no cell or note of the file's tables says it
	}{
		{"checked, no SM", fixture.PerSMExampleCE(1), persm.CENoSM, "no SM (checked)", "0",
			"ce: cudaMemcpyAsync, on a copy engine with no SM (checked: a copy completed while a kernel held every CTA slot)",
			"the copy engine uses none (checked)", "ce: the copy engine on no SM (0; checked:", []string{"not checked", "on SMs here", "on SMs ("}},
		{"not checked", fixture.PerSMExample(), persm.CENotChecked, "no SM (not checked)", "0",
			"the copy engine with no SM if a copy engine ran it (not checked for SM use",
			"ce has no figure: it uses none if a copy engine ran it (not checked for SM use)", "ce: the copy engine on no SM (0) if a copy engine ran it (not checked for SM use)",
			[]string{"(checked", "uses none (checked)", "on SMs here"}},
		{"on SMs", fixture.PerSMExampleCE(0), persm.CEOnSM, "on SMs (the driver's kernel)", "on SMs",
			"ce: cudaMemcpyAsync ran on SMs here (the driver's kernel: it waited for a free CTA slot)",
			"ce has no figure: cudaMemcpyAsync ran on SMs here", "its warps compete with the compute's",
			[]string{"no SM (", "uses none", "on no SM", "(0"}},
		{"0 beside, 1 alone", mixed, persm.CEOnSM, "on SMs (the driver's kernel)", "on SMs",
			"ran on SMs here", "ran on SMs here", "ce: cudaMemcpyAsync on SMs here", []string{"no SM (", "uses none", "on no SM"}},
	} {
		if got := persm.CECheck(c.f); got != c.state {
			t.Errorf("%s: CECheck %v, want %v", c.name, got, c.state)
		}
		for _, cv := range persm.Curves(c.f) {
			if cv.Mechanism == "ce" && cv.SM != c.state {
				t.Errorf("%s: the copy engine's curve at %d B: %v", c.name, cv.Size, cv.SM)
			}
		}
		rep := report.Build([]*record.File{c.f}, record.Paper(), report.Options{})
		bw := findTable(rep, "Bytes per SM: GB/s to the peer")
		per := findTable(rep, "Bytes per SM: GB/s per SM used")
		in := findTable(rep, "Bytes per SM: a transfer beside a compute kernel")
		for _, size := range []string{"256 MiB", "1 MiB (L2)"} {
			if got := cellAt(t, bw, "90 % at", "ce", size); got != c.reach {
				t.Errorf("%s: ce's 90 %% at %s: %q, want %q", c.name, size, got, c.reach)
			}
		}
		for _, in := range persm.Interferences(c.f) {
			if in.Mechanism == "ce" && in.SM != c.state {
				t.Errorf("%s: ce beside %s: %v", c.name, in.Compute, in.SM)
			}
		}
		if got := cellAt(t, bw, "peak", "ce", "256 MiB"); got != "2000.0" {
			t.Errorf("%s: ce's figure %q (a reference in every state)", c.name, got)
		}
		if got := cellAt(t, in, "SMs", "ce", "fma", "256 MiB"); got != c.sms {
			t.Errorf("%s: ce beside fma's SMs: %q, want %q", c.name, got, c.sms)
		}
		for _, w := range []struct {
			tab  *table.Table
			says string
		}{{bw, c.bwNote}, {per, c.perSM}, {in, c.besideNote}} {
			if !slices.ContainsFunc(w.tab.Notes, func(n string) bool { return strings.Contains(n, w.says) }) {
				t.Errorf("%s: %s: no note says %q: %q", c.name, w.tab.Title, w.says, w.tab.Notes)
			}
		}
		for _, tab := range []*table.Table{bw, per, in} {
			var text []string
			text = append(text, tab.Notes...)
			for _, r := range tab.Rows {
				if r[0].Text == "ce" {
					for _, cell := range r {
						text = append(text, cell.Text)
					}
				}
			}
			for _, s := range text {
				for _, n := range c.never {
					if strings.Contains(s, n) {
						t.Errorf("%s: %s says %q: %q", c.name, tab.Title, n, s)
					}
				}
			}
		}
	}
}

// A copy-engine point that did not run to the end says nothing of the
// copies' SM use; a value on another row (a transfer on SMs) is no check of
// the copy engine's.
func TestPerSMCopyEngineCheckOnlyFromItsRows(t *testing.T) {
	f := fixture.PerSMExampleCE(1)
	for i := range f.Points {
		p := &f.Points[i]
		switch {
		case p.ID == "persm/ce/beside-fma":
			p.Status, p.Values[persm.ValueCESMFree] = record.StatusError, 0
		case p.ID == "persm/tma":
			p.Values = map[string]float64{persm.ValueCESMFree: 0}
		}
	}
	if got := persm.CECheck(f); got != persm.CENoSM {
		t.Errorf("a failed row's 0 and a tma row's: %v, want %v", got, persm.CENoSM)
	}
	// The compute kernel's row beside the copy engine is one of its rows.
	g := fixture.PerSMExample()
	for i := range g.Points {
		if p := &g.Points[i]; p.ID == "persm/compute/fma/beside-ce" {
			p.Values = map[string]float64{persm.ValueCESMFree: 0}
		}
	}
	if got := persm.CECheck(g); got != persm.CEOnSM {
		t.Errorf("the compute's row beside the copy engine saying 0: %v", got)
	}
}

// The compute kernel's slowdown beside the copy engine is read as the
// shim judged the copies fed beside it: not judged (ce_copy_s, no
// ce_busy: copies too short for a host thread to keep the copy engine
// busy) marks the cell "†" and a note says the slowdown may be
// understated, with the copy's and the feeder's times; judged (ce_busy)
// says the least busy share; none of the values (older files) says
// neither.
func TestPerSMCopyEngineFeed(t *testing.T) {
	const unjudgedNote = "†: not judged: the copies beside the compute were too short for a host thread to keep the copy engine busy (a copy 1.31 µs, the feeder's calls 2.5 µs): the compute's slowdown may be understated"
	const judgedNote = "ce: the copies beside the compute kept the copy engine busy 98.5 % of every timed window at the least (judged by the shim)"
	f := fixture.PerSMExampleFed()
	feeds := map[string]persm.Feed{}
	for _, in := range persm.Interferences(f) {
		feeds[fmt.Sprint(in.Mechanism, " ", in.Size)] = in.Feed
	}
	if fd := feeds["ce 1048576"]; fd.State != persm.CEFedNotJudged || fd.Copy != 1.31e-6 || fd.Calls != 2.5e-6 || fd.Busy != 0 {
		t.Errorf("ce beside fma at 1 MiB: %+v, want not judged", fd)
	}
	if fd := feeds["ce 268435456"]; fd.State != persm.CEFedJudged || fd.Busy != 0.985 || fd.Copy != 168e-6 {
		t.Errorf("ce beside fma at 256 MiB: %+v, want judged", fd)
	}
	if fd := feeds["tma 268435456"]; fd.State != persm.CEFedUnknown {
		t.Errorf("tma beside fma (no feeder): %+v", fd)
	}
	// Judged and not judged apart: the file's 256 MiB points alone.
	judgedOnly := fixture.PerSMExampleFed()
	judgedOnly.Points = slices.DeleteFunc(judgedOnly.Points, func(p record.Point) bool {
		return strings.Contains(p.ID, "beside") && p.ID != "persm/tma/beside-fma" && p.Params.Size == 1<<20
	})
	for _, c := range []struct {
		name    string
		f       *record.File
		cells   map[string]string // size → the ce row's compute slowdown
		notes   []string          // notes say these (none: no note says "judged")
		notNote string
	}{
		{"judged and not", f, map[string]string{"1 MiB": "10.0 †", "256 MiB": "5.0"}, []string{unjudgedNote, judgedNote}, ""},
		{"judged", judgedOnly, map[string]string{"256 MiB": "5.0"}, []string{judgedNote}, "†"},
		{"unknown", fixture.PerSMExample(), map[string]string{"256 MiB": "5.0"}, nil, ""},
	} {
		rep := report.Build([]*record.File{c.f}, record.Paper(), report.Options{})
		in := findTable(rep, "Bytes per SM: a transfer beside a compute kernel")
		for size, want := range c.cells {
			if got := cellAt(t, in, "compute slowdown %", "ce", "fma", size); got != want {
				t.Errorf("%s: ce beside fma at %s: compute slowdown %q, want %q", c.name, size, got, want)
			}
		}
		if got := cellAt(t, in, "compute slowdown %", "tma", "fma", "256 MiB"); got != "20.0" {
			t.Errorf("%s: tma beside fma (fused, no feeder): %q", c.name, got)
		}
		for _, n := range in.Notes {
			if len(c.notes) == 0 && strings.Contains(n, "judged") || c.notNote != "" && strings.Contains(n, c.notNote) {
				t.Errorf("%s: a note says %q", c.name, n)
			}
		}
		for _, n := range c.notes {
			if !slices.Contains(in.Notes, n) {
				t.Errorf("%s: no note %q: %q", c.name, n, in.Notes)
			}
		}
	}
}

// Every mechanism of record/persm (the shim's list) has its rows in both
// bytes-per-SM tables, and beside every compute kernel its row in the
// interference table: no reader lists them, so a new mechanism's rows show
// with no reader edited (record/persm's scratch test adds one to a copy of
// the module and runs this).
func TestPerSMTablesShowEveryMechanism(t *testing.T) {
	var pts []fixture.PerSMPoint
	for _, c := range persm.Computes() {
		for _, b := range []int{0, 4} {
			pts = append(pts, fixture.PerSMPoint{ID: persm.Row{Compute: c.Name, TimesCompute: true}.ID(), Budget: b, Time: 10e-6})
		}
	}
	var names []string
	for _, m := range persm.Mechanisms() {
		names = append(names, m.Name)
		b := 4
		if !m.SMs {
			b = 0
		}
		pts = append(pts, fixture.PerSMPoint{ID: persm.Row{Mechanism: m.Name}.ID(), Size: 256 << 20, Budget: b, BW: 100e9})
		for _, c := range persm.Computes() {
			pts = append(pts,
				fixture.PerSMPoint{ID: persm.Row{Mechanism: m.Name, Compute: c.Name}.ID(), Size: 256 << 20, Budget: b, Beside: c.Name, BW: 90e9},
				fixture.PerSMPoint{ID: persm.Row{Mechanism: m.Name, Compute: c.Name, TimesCompute: true}.ID(), Size: 256 << 20, Budget: b, Beside: m.Name, Time: 11e-6})
		}
	}
	t.Logf("mechanisms: %v", names)
	rep := report.Build([]*record.File{fixture.PerSM(pts)}, record.Paper(), report.Options{})
	for _, title := range []string{"Bytes per SM: GB/s to the peer", "Bytes per SM: GB/s per SM used"} {
		tab := findTable(rep, title)
		if tab == nil {
			t.Fatalf("no table %q", title)
		}
		var got []string
		for _, r := range tab.Rows {
			got = append(got, r[0].Text)
		}
		if !slices.Equal(got, names) {
			t.Errorf("%s: rows %v, want %v", title, got, names)
		}
	}
	in := findTable(rep, "Bytes per SM: a transfer beside a compute kernel")
	for _, m := range persm.Mechanisms() {
		for _, c := range persm.Computes() {
			b := "4"
			if !m.SMs {
				b = "0"
			}
			if got := cellAt(t, in, "transfer slowdown %", m.Name, c.Name, "256 MiB", b); got != "11.1" {
				t.Errorf("%s beside %s: transfer slowdown %q", m.Name, c.Name, got)
			}
		}
	}
}

// clockAt gives the points of id a sampled SM clock of hz.
func clockAt(f *record.File, id string, hz float64) {
	for i := range f.Points {
		if p := &f.Points[i]; p.ID == id {
			p.Clock = &record.Clock{N: 10, SMMinHz: hz, SMMedianHz: hz, PowerW: 500}
		}
	}
}

// A slowdown whose two sides ran at SM clocks more than 3 % apart is not
// claimed (the clock may be the difference): its cell is marked ‡ and a
// note gives both clocks; at the same clock it is claimed as before.
func TestPerSMSlowdownNotClaimedAcrossClocks(t *testing.T) {
	same, apart := fixture.PerSMExample(), fixture.PerSMExample()
	for _, f := range []*record.File{same, apart} {
		clockAt(f, "persm/compute/fma", 1980e6)
		clockAt(f, "persm/compute/fma/beside-tma", 1980e6)
	}
	clockAt(apart, "persm/compute/fma/beside-tma", 1700e6)
	for _, c := range []struct {
		f          *record.File
		want, note string
	}{{same, "20.0", ""}, {apart, "20.0 ‡", "‡: the two sides ran at different SM clocks (the two ran at SM clocks 1980 and 1700 MHz, 14 % apart): no slowdown is claimed"}} {
		in := findTable(report.Build([]*record.File{c.f}, record.Paper(), report.Options{}), "Bytes per SM: a transfer beside a compute kernel")
		if got := cellAt(t, in, "compute slowdown %", "tma", "fma", "256 MiB", "8"); got != c.want {
			t.Errorf("compute slowdown %q, want %q", got, c.want)
		}
		has := slices.ContainsFunc(in.Notes, func(n string) bool { return strings.HasPrefix(n, "‡") })
		if has != (c.note != "") || has && !slices.ContainsFunc(in.Notes, func(n string) bool { return strings.HasPrefix(n, c.note) }) {
			t.Errorf("notes %q, want %q", in.Notes, c.note)
		}
		if got := cellAt(t, in, "transfer slowdown %", "tma", "fma", "256 MiB", "8"); got != "11.1" {
			t.Errorf("the transfer's slowdown (no clocks) %q, want 11.1 claimed", got)
		}
	}
}

// "90 % at" is held to the run's best copy reference where the points carry
// one (the row's own peak and its share of the reference beside it); a
// sweep that falls as SMs are added, its samples apart, is marked ↓ and
// said; the stage-offset row's table gives each offset's share of the
// aligned rate and the alignment the stages need.
func TestPerSMAgainstTheReference(t *testing.T) {
	const ref = 2100e9
	var ps []fixture.PerSMPoint
	st := []float64{48, 720, 1240, 1900, 1990, 1995}  // reaches 1890 (90 % of 2100) at 66
	tma := []float64{50, 800, 1580, 1310, 1480, 1744} // falls at 66 and 100 below 32's, never 90 % of the reference
	for i, b := range []int{1, 16, 32, 66, 100, 132} {
		ps = append(ps, fixture.PerSMPoint{ID: "persm/st", Size: 1 << 30, Budget: b, BW: st[i] * 1e9, Ref: ref},
			fixture.PerSMPoint{ID: "persm/tma", Size: 1 << 30, Budget: b, BW: tma[i] * 1e9, Ref: ref})
	}
	for i, o := range persm.StageOffsets {
		bw := 50.3e9
		if o%32 != 0 {
			bw = 25.2e9
		}
		ps = append(ps, fixture.PerSMPoint{ID: "persm/tma/stage-offset", Size: 1 << 30, Budget: 1, BW: bw + float64(i)*1e7,
			Extra: map[string]string{persm.ExtraStageOffset: fmt.Sprint(o)}})
	}
	f := fixture.PerSM(ps)
	rep := report.Build([]*record.File{f}, record.Paper(), report.Options{})
	bw := findTable(rep, "Bytes per SM: GB/s to the peer")
	for _, c := range []struct{ col, want, mech string }{
		{"90 % at", "66 SM", "st"}, {"90 % at", "–", "tma"}, {"peak", "1995.0", "st"}, {"of ref", "0.95", "st"}, {"of ref", "0.83", "tma"},
		{"66 SM", "1310.0 ↓", "tma"}, {"100 SM", "1480.0 ↓", "tma"}, {"132 SM", "1744.0", "tma"}, {"66 SM", "1900.0", "st"},
	} {
		if got := cellAt(t, bw, c.col, c.mech, "1 GiB"); got != c.want {
			t.Errorf("%s %s: %q, want %q", c.mech, c.col, got, c.want)
		}
	}
	for _, want := range []string{"90 % at: the smallest budget reaching 90 % of the run's best copy reference",
		"90 % at: the smallest budget reaching 90 % of the run's best copy reference at the size (the faster of limit/sm-copy and limit/ce-copy: the hardware's figure), the row's own peak and its share of that reference (of ref) beside it; – where no budget does (limit/ce-copy 2100 GB/s at 1 GiB)",
		"↓: more SMs moved less than fewer did (tma at 1 GiB: 66 SM 1310 below 32 SM's 1580 GB/s; tma at 1 GiB: 100 SM 1480 below 32 SM's 1580 GB/s"} {
		if !slices.ContainsFunc(bw.Notes, func(n string) bool { return strings.HasPrefix(n, want) }) {
			t.Errorf("no note %q: %q", want, bw.Notes)
		}
	}
	if slices.ContainsFunc(bw.Notes, func(n string) bool { return strings.Contains(n, "of its own peak") }) {
		t.Errorf("every row has its reference, yet a note says own peak: %q", bw.Notes)
	}
	if cs := persm.Curves(f); len(cs) != 2 {
		t.Errorf("%d curves: the stage-offset row is on none", len(cs))
	}
	so := findTable(rep, "Bytes per SM: GB/s by the stages' offset")
	if so == nil {
		t.Fatal("no stage-offset table")
	}
	for _, c := range []struct{ col, want string }{{"+0 B", "50.3"}, {"+48 B", "25.2 (0.50)"}, {"+32 B", "50.3 (1.00)"}, {"full rate at", "multiples of 32 B"}} {
		if got := cellAt(t, so, c.col, "tma", "1 GiB"); got != c.want {
			t.Errorf("stage offsets %s: %q, want %q", c.col, got, c.want)
		}
	}
	if !slices.ContainsFunc(so.Notes, func(n string) bool {
		return strings.Contains(n, "tma at 1 GiB: stages at multiples of 32 bytes past the line ran at full rate, the others down to 0.50 of it")
	}) {
		t.Errorf("stage-offset notes %q", so.Notes)
	}
}
