package model_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/nvshbench/nvshbench/internal/decide"
	"github.com/nvshbench/nvshbench/internal/fixture"
	"github.com/nvshbench/nvshbench/model"
	"github.com/nvshbench/nvshbench/record"
	"github.com/nvshbench/nvshbench/record/persm"
)

// The guide's bytes-per-SM answer: the mechanism reaching the rate on the
// fewest SMs (at a tie of SMs, the one moving more), what running beside a
// compute kernel costs both, the copy engine where it reaches the rate with
// no SM, and no answer beyond every mechanism.
func TestPerSMAnswer(t *testing.T) {
	f := fixture.PerSMExampleCE(1) // its copies checked: no SM
	const size = 256 << 20
	for _, c := range []struct {
		want   float64
		mech   string
		budget int
		says   []string
	}{
		{1500e9, "tma", 8, []string{"use tma on 8 SMs (2000 GB/s)", "beside an FMA-bound kernel that costs it 20 %", "(and the transfer 11 %)"}},
		{1000e9, "tma", 4, []string{"use tma on 4 SMs"}},
		{15e9, "tma", 1, []string{"use tma on 1 SM (300 GB/s)", "the copy engine moves it with no SM (checked; 2000 GB/s), beside an FMA-bound kernel on every SM 1600 GB/s (25 % slower; it costs the kernel 5 %)"}},
		{2100e9, "tma", 66, []string{"use tma on 66 SMs"}},
		{3000e9, "", -1, []string{"no mechanism moves 3000 GB/s", "the most: 2150 GB/s"}},
	} {
		a := model.AnswerFor(f, c.want, size, decide.Rule{})
		if a.Mechanism != c.mech || a.Budget != c.budget {
			t.Errorf("%g B/s: %s on %d SMs, want %s on %d", c.want, a.Mechanism, a.Budget, c.mech, c.budget)
		}
		s := a.Sentence()
		for _, w := range c.says {
			if !strings.Contains(s, w) {
				t.Errorf("%g B/s: %q does not say %q", c.want, s, w)
			}
		}
		if c.want > 2000e9 && strings.Contains(s, "copy engine") {
			t.Errorf("%g B/s: the copy engine (2000 GB/s) does not reach it: %q", c.want, s)
		}
	}
	// The copy engine's cost beside a compute kernel is said only where its
	// rows were measured: without the compute's row beside it, the
	// transfer's figure stands alone; without either, nothing is said.
	g := fixture.PerSMExampleCE(1)
	var kept []record.Point
	for _, p := range g.Points {
		if p.ID != "persm/compute/fma/beside-ce" {
			kept = append(kept, p)
		}
	}
	g.Points = kept
	if s := model.AnswerFor(g, 15e9, size, decide.Rule{}).Sentence(); !strings.HasSuffix(s, "beside an FMA-bound kernel on every SM 1600 GB/s (25 % slower)") {
		t.Errorf("without the compute's row beside the copy engine: %q", s)
	}
	kept = nil
	for _, p := range g.Points {
		if p.ID != "persm/ce/beside-fma" {
			kept = append(kept, p)
		}
	}
	g.Points = kept
	if s := model.AnswerFor(g, 15e9, size, decide.Rule{}).Sentence(); strings.Contains(s, "every SM") {
		t.Errorf("without the copy engine's rows beside a compute kernel: %q", s)
	}
	// Where st were faster than tma on one SM, it would be the answer.
	g = fixture.PerSMExample()
	for i := range g.Points {
		p := &g.Points[i]
		if p.ID == "persm/st" && p.Params.SMBudget == 1 && p.Params.Size == size {
			p.Metrics[record.MetricBandwidth] = record.Summary{Median: 400e9, Min: 400e9, Max: 400e9, N: 5}
		}
	}
	if a := model.AnswerFor(g, 15e9, size, decide.Rule{}); a.Mechanism != "st" || a.Budget != 1 {
		t.Errorf("st at 400 GB/s on 1 SM: the answer is %s on %d", a.Mechanism, a.Budget)
	}
}

// The copy engine reaches a rate alone but not beside a compute kernel:
// the guide says so ("below the rate asked") where it says what it moves
// there, and only there.
func TestPerSMCopyEngineBelowTheRate(t *testing.T) {
	f := fixture.PerSMExampleCE(1)
	const size = 256 << 20
	s := model.AnswerFor(f, 1800e9, size, decide.Rule{}).Sentence() // ce: 2000 GB/s alone, 1600 beside fma
	if !strings.Contains(s, "the copy engine moves it with no SM (checked; 2000 GB/s), beside an FMA-bound kernel on every SM 1600 GB/s (below the rate asked; 25 % slower; it costs the kernel 5 %)") {
		t.Errorf("1800 GB/s: %q", s)
	}
	if s := model.AnswerFor(f, 1500e9, size, decide.Rule{}).Sentence(); strings.Contains(s, "below the rate asked") || !strings.Contains(s, "1600 GB/s (25 % slower") {
		t.Errorf("1500 GB/s (1600 beside fma reaches it): %q", s)
	}
}

// A slowdown is said plainly only where the decision rule claims it (a
// lead at least the margin, an interval of the time ratio without 1):
// else "within noise", even where the samples beside and alone do not
// overlap, or "too few samples to claim"; for the SM mechanisms' costs and
// the copy engine's alike, and by the rule given (its margin).
func TestPerSMSlowdownJudged(t *testing.T) {
	const size = 256 << 20
	// set gives the points id new samples: n over ±spread of a time an
	// iteration, or of the time a transfer's B/s moves the size in.
	set := func(f *record.File, id string, v, spread float64, n int) {
		for i := range f.Points {
			p := &f.Points[i]
			if p.ID != id || p.Params.Size != size {
				continue
			}
			tm, metrics := v, []string{record.MetricLatency}
			if p.Bytes > 0 {
				tm, metrics = float64(p.Bytes)/v, []string{record.MetricBandwidth, record.MetricLatency}
			}
			p.Samples, p.Metrics = nil, nil
			for k := range n {
				p.Samples = append(p.Samples, tm*(1+spread*(2*float64(k)/float64(n-1)-1)))
			}
			if err := record.Derive(p, metrics...); err != nil {
				t.Fatal(err)
			}
		}
	}
	// Against the fixture's sides alone (±1 %): tma 2000 GB/s on 8 SMs,
	// fma 10 µs on the other SMs; the copy engine 2000 GB/s, fma 8 µs on
	// every SM.
	beside := func(compute, ce, tma, cebw, spread float64, n int) *record.File {
		f := fixture.PerSMExample()
		set(f, "persm/compute/fma/beside-tma", compute, spread, n)
		set(f, "persm/compute/fma/beside-ce", ce, spread, n)
		set(f, "persm/tma/beside-fma", tma, spread, n)
		set(f, "persm/ce/beside-fma", cebw, spread, n)
		return f
	}
	overlap := beside(10.1e-6, 8.08e-6, 1980e9, 1980e9, 0.01, 5) // 1 % slower, samples ±1 %: overlapping
	apart := beside(10.2e-6, 8.16e-6, 1960e9, 1960e9, 0.001, 5)  // 2 % slower, samples ±0.1 %: apart from alone's
	few := beside(12e-6, 8.4e-6, 1800e9, 1600e9, 0.01, 2)        // 20, 5, 11 and 25 %, two samples beside
	for _, in := range persm.Interferences(apart) {
		if slices.Max(in.AloneCost) >= slices.Min(in.BesideCost) || slices.Max(in.ComputeAloneCost) >= slices.Min(in.ComputeBesideCost) {
			t.Fatalf("%s beside %s: the samples overlap", in.Mechanism, in.Compute)
		}
	}
	for _, c := range []struct {
		name      string
		f         *record.File
		rule      decide.Rule
		says      []string
		neverSays string
	}{
		{"overlapping", overlap, decide.Rule{}, []string{
			"use tma on 8 SMs (2000 GB/s); beside an FMA-bound kernel that costs it 1 %, within noise (and the transfer 1 %, within noise)",
			"beside an FMA-bound kernel on every SM 1980 GB/s (1 % slower, within noise; it costs the kernel 1 %, within noise)",
		}, "too few"},
		{"apart, under the margin", apart, decide.Rule{}, []string{
			"beside an FMA-bound kernel that costs it 2 %, within noise (and the transfer 2 %, within noise)",
			"beside an FMA-bound kernel on every SM 1960 GB/s (2 % slower, within noise; it costs the kernel 2 %, within noise)",
		}, "too few"},
		{"apart, over a 1 % margin", apart, decide.Rule{Margin: 0.01, Alpha: 0.05}, []string{
			"beside an FMA-bound kernel that costs it 2 % (and the transfer 2 %)",
			"beside an FMA-bound kernel on every SM 1960 GB/s (2 % slower; it costs the kernel 2 %)",
		}, "noise"},
		{"two samples beside", few, decide.Rule{}, []string{
			"beside an FMA-bound kernel that costs it 20 %, too few samples to claim (and the transfer 11 %, too few samples to claim)",
			"beside an FMA-bound kernel on every SM 1600 GB/s (25 % slower, too few samples to claim; it costs the kernel 5 %, too few samples to claim)",
		}, "noise"},
	} {
		s := model.AnswerFor(c.f, 1500e9, size, c.rule).Sentence()
		for _, w := range c.says {
			if !strings.Contains(s, w) {
				t.Errorf("%s: %q does not say %q", c.name, s, w)
			}
		}
		if strings.Contains(s, c.neverSays) {
			t.Errorf("%s: %q says %q", c.name, s, c.neverSays)
		}
	}
	// Where cudaMemcpyAsync ran on SMs, why it is slower is said only of a
	// slowdown claimed.
	onSM := few
	for i := range onSM.Points {
		if p := &onSM.Points[i]; strings.HasPrefix(p.ID, "persm/ce") {
			p.Values = map[string]float64{persm.ValueCESMFree: 0}
		}
	}
	if s := model.AnswerFor(onSM, 1500e9, size, decide.Rule{}).Sentence(); !strings.Contains(s, "1600 GB/s (25 % slower, too few samples to claim; it costs") || strings.Contains(s, "compete") {
		t.Errorf("on SMs, too few samples: %q", s)
	}
}

// The guide's table note states the rule its slowdowns are judged by, at
// the margin given, and never the samples' overlap.
func TestPerSMGuideNoteStatesTheRule(t *testing.T) {
	for _, c := range []struct {
		rule decide.Rule
		says string
	}{
		{decide.Rule{}, "a slowdown is claimed only where it is at least 3 % and the 95 % confidence interval of the time ratio beside over alone"},
		{decide.Rule{Margin: 0.05, Alpha: 0.05}, "a slowdown is claimed only where it is at least 5 % and"},
	} {
		ts := model.PerSMGuide([]*record.File{fixture.PerSMExample()}, nil, c.rule)
		if len(ts) != 1 {
			t.Fatalf("%d tables", len(ts))
		}
		n := 0
		for _, note := range ts[0].Notes {
			if strings.HasPrefix(note, c.says) && strings.HasSuffix(note, `else "within noise" (under the margin, or the interval includes 1), or "too few samples to claim" where a side's samples are too few for the interval`) {
				n++
			}
			if strings.Contains(note, "overlap") {
				t.Errorf("a note on the samples' overlap: %q", note)
			}
		}
		if n != 1 {
			t.Errorf("%d notes saying %q: %q", n, c.says, ts[0].Notes)
		}
	}
}

// The guide's table answers at the largest size beyond L2, for a quarter,
// half and 90 % of the best peak and each rate asked.
func TestPerSMGuideTable(t *testing.T) {
	ts := model.PerSMGuide([]*record.File{fixture.PerSMExample(), fixture.Synthetic(fixture.Options{})}, []float64{100e9}, decide.Rule{})
	if len(ts) != 1 {
		t.Fatalf("%d tables, want one (the second file has no bytes-per-SM rows)", len(ts))
	}
	tab := ts[0]
	if len(tab.Rows) != 4 {
		t.Fatalf("%d rows", len(tab.Rows))
	}
	for i, want := range [][2]string{{"tma", "2"}, {"tma", "4"}, {"tma", "8"}, {"tma", "1"}} { // 538, 1075, 1935 and 100 GB/s
		if tab.Rows[i][1].Text != "256 MiB" || tab.Rows[i][2].Text != want[0] || tab.Rows[i][3].Text != want[1] {
			t.Errorf("row %d: %v", i, tab.Rows[i])
		}
	}
}

// A compute kernel's rows are no message-size series: their size is the
// transfer's beside them. The transfers' rows are.
func TestPerSMComputeRowsAreNoSeries(t *testing.T) {
	n := 0
	for _, s := range model.Collect([]*record.File{fixture.PerSMExample()}) {
		if strings.HasPrefix(s.ID, "persm/compute/") {
			t.Errorf("series %s", s.ID)
		}
		if s.ID == "persm/tma" {
			n++
		}
	}
	if n == 0 {
		t.Error("no persm/tma series")
	}
}

// The copy engine's part of the answer says what its rows' ce_sm_free
// shows: checked, no SM; not checked, no verified answer with no SM; on
// SMs (the driver's kernel), a reference rate only, never "no SM", with
// the reason it slows beside a compute kernel. Where no SM mechanism
// reaches the rate, the same.
func TestPerSMAnswerCopyEngineCheck(t *testing.T) {
	const size = 256 << 20
	for _, c := range []struct {
		name  string
		f     *record.File
		state persm.CESM
		says  []string // with an SM mechanism's answer (15 GB/s), without one (the copy engine alone reaching 2000 GB/s)
		never []string
	}{
		{"checked", fixture.PerSMExampleCE(1), persm.CENoSM, []string{
			"; the copy engine moves it with no SM (checked; 2000 GB/s), beside an FMA-bound kernel on every SM 1600 GB/s (25 % slower; it costs the kernel 5 %)",
			"; the copy engine does, with no SM (checked; 2000 GB/s), beside an FMA-bound kernel on every SM 1600 GB/s (below the rate asked; 25 % slower; it costs the kernel 5 %)",
		}, []string{"not checked", "on SMs here", "compete"}},
		{"not checked", fixture.PerSMExample(), persm.CENotChecked, []string{
			"; the copy engine (not checked for SM use) moves it (2000 GB/s), beside an FMA-bound kernel on every SM 1600 GB/s (25 % slower; it costs the kernel 5 %): not a verified answer with no SM",
			"; the copy engine (not checked for SM use) does (2000 GB/s), beside an FMA-bound kernel on every SM 1600 GB/s (below the rate asked; 25 % slower; it costs the kernel 5 %): not a verified answer with no SM",
		}, []string{"with no SM (", "does, with no SM", "on SMs here", "compete"}},
		{"on SMs", fixture.PerSMExampleCE(0), persm.CEOnSM, []string{
			"; cudaMemcpyAsync (persm/ce) moves it (2000 GB/s), beside an FMA-bound kernel on every SM 1600 GB/s (25 % slower: its warps compete with the kernel's; it costs the kernel 5 %), " +
				"but it ran on SMs here (the driver's kernel: it waited for a free CTA slot), how many not counted: a reference rate, not a fewest-SM answer",
			"; cudaMemcpyAsync (persm/ce) does (2000 GB/s), beside an FMA-bound kernel on every SM 1600 GB/s (below the rate asked; 25 % slower: its warps compete with the kernel's; it costs the kernel 5 %), " +
				"but it ran on SMs here (the driver's kernel: it waited for a free CTA slot), how many not counted: a reference rate, not a fewest-SM answer",
		}, []string{"no SM", "copy engine", "0 SM"}},
	} {
		with := model.AnswerFor(c.f, 15e9, size, decide.Rule{})
		// Without an SM mechanism reaching the rate: tma's rows left out,
		// st moves at most 1900 GB/s at 256 MiB, the copy engine 2000.
		g := c.f
		var kept []record.Point
		for _, p := range g.Points {
			if p.ID != "persm/tma" {
				kept = append(kept, p)
			}
		}
		g.Points = kept
		without := model.AnswerFor(g, 1950e9, size, decide.Rule{})
		if with.Mechanism != "tma" || with.Budget != 1 || without.Mechanism != "" {
			t.Fatalf("%s: the answers %s on %d, %q", c.name, with.Mechanism, with.Budget, without.Mechanism)
		}
		if with.CESM != c.state || without.CESM != c.state {
			t.Errorf("%s: the copy engine's state %v, %v, want %v", c.name, with.CESM, without.CESM, c.state)
		}
		for i, s := range []string{with.Sentence(), without.Sentence()} {
			if !strings.HasSuffix(s, c.says[i]) {
				t.Errorf("%s: %q\ndoes not end %q", c.name, s, c.says[i])
			}
			for _, n := range c.never {
				if strings.Contains(s, n) {
					t.Errorf("%s: %q says %q", c.name, s, n)
				}
			}
		}
	}
}

// The guide's table: no row answers with the copy engine (its mechanism
// column is an SM mechanism or none), and a note says how far its rate is
// an answer with no SM, as the file's rows show.
func TestPerSMGuideCopyEngineNote(t *testing.T) {
	for _, c := range []struct {
		f    *record.File
		note string
	}{
		{fixture.PerSMExampleCE(1), "the copy engine: checked, a copy completed while a kernel held every CTA slot (ce_sm_free 1): it moves its rate with no SM"},
		{fixture.PerSMExample(), "the copy engine: not checked for SM use (no ce_sm_free in this file;"},
		{fixture.PerSMExampleCE(0), "cudaMemcpyAsync (persm/ce): a copy waited for a free CTA slot (ce_sm_free 0): the driver ran it as a kernel, on SMs it did not count, so it answers no rate with fewer SMs"},
	} {
		ts := model.PerSMGuide([]*record.File{c.f}, []float64{1950e9}, decide.Rule{})
		if len(ts) != 1 {
			t.Fatalf("%d tables", len(ts))
		}
		n := 0
		for _, note := range ts[0].Notes {
			if strings.HasPrefix(note, c.note) {
				n++
			}
			if strings.Contains(note, "ce_sm_free") && !strings.HasPrefix(note, c.note) {
				t.Errorf("another note on the check: %q", note)
			}
		}
		if n != 1 {
			t.Errorf("%d notes %q in %q", n, c.note, ts[0].Notes)
		}
		for _, r := range ts[0].Rows {
			if r[2].Text == "ce" {
				t.Errorf("a row answers with the copy engine: %v", r)
			}
		}
	}
}

// The copy engine's cost to a compute kernel is said as the shim judged the
// copies fed beside it: judged (ce_busy) or not known (files before it),
// the compute's slowdown; not judged (ce_copy_s alone: copies too short
// for a host thread to keep the copy engine busy), no cost, and why.
func TestPerSMCopyEngineCostJudged(t *testing.T) {
	f := fixture.PerSMExampleFed() // 256 MiB judged, 1 MiB not
	for _, c := range []struct {
		name  string
		f     *record.File
		want  float64
		size  int64
		says  string
		never string
	}{
		{"judged", f, 1500e9, 256 << 20, "beside an FMA-bound kernel on every SM 1600 GB/s (25 % slower; it costs the kernel 5 %)", "judged"},
		{"not judged", f, 500e9, 1 << 20,
			"the copy engine moves it with no SM (checked; 1000 GB/s), beside an FMA-bound kernel on every SM 800 GB/s (25 % slower; its cost to the kernel not judged (the copies may have idled: a copy 1.31 µs, the feeder's calls 2.5 µs))",
			"costs the kernel"},
		{"unknown", fixture.PerSMExample(), 1500e9, 256 << 20, "beside an FMA-bound kernel on every SM 1600 GB/s (25 % slower; it costs the kernel 5 %)", "judged"},
	} {
		s := model.AnswerFor(c.f, c.want, c.size, decide.Rule{}).Sentence()
		if !strings.Contains(s, c.says) || strings.Contains(s, c.never) {
			t.Errorf("%s: %q: want %q, never %q", c.name, s, c.says, c.never)
		}
	}
	// The SM mechanisms' costs (one fused launch, no feeder) are said as
	// before beside a file whose copy engine was not judged.
	if s := model.AnswerFor(f, 1500e9, 256<<20, decide.Rule{}).Sentence(); !strings.Contains(s, "use tma on 8 SMs (2000 GB/s); beside an FMA-bound kernel that costs it 20 %") {
		t.Errorf("tma's cost: %q", s)
	}
}

// No answer from a cache-served size: where every size a file measured fits
// twice the L2 (here 1 MiB only), the cache's rates are no link's, and the
// guide says so instead of answering the fewest SMs at 1 MiB.
func TestPerSMGuideAnswersNoCacheServedRate(t *testing.T) {
	f := fixture.PerSMExample()
	var small []record.Point
	for _, p := range f.Points {
		if p.Params.Size != 256<<20 {
			small = append(small, p)
		}
	}
	f.Points = small
	ts := model.PerSMGuide([]*record.File{f}, []float64{100e9}, decide.Rule{})
	if len(ts) != 1 {
		t.Fatalf("%d tables", len(ts))
	}
	for _, r := range ts[0].Rows {
		if r[2].Text != "–" || !strings.Contains(r[5].Text, "cache-served") {
			t.Errorf("an answer at a cache-served size: %v", r)
		}
	}
	if len(ts[0].Rows) == 0 {
		t.Error("no row says why there is no answer")
	}
}

// The guide claims no cost between sides whose GPUs ran at SM clocks more
// than 3 % apart, and says both clocks.
func TestPerSMNoCostClaimedAcrossClocks(t *testing.T) {
	f := fixture.PerSMExample()
	for i := range f.Points {
		p := &f.Points[i]
		switch p.ID {
		case "persm/compute/fma":
			p.Clock = &record.Clock{N: 5, SMMinHz: 1980e6, SMMedianHz: 1980e6}
		case "persm/compute/fma/beside-tma":
			p.Clock = &record.Clock{N: 5, SMMinHz: 1700e6, SMMedianHz: 1700e6}
		}
	}
	s := model.AnswerFor(f, 1500e9, 256<<20, decide.Rule{}).Sentence()
	if want := "beside an FMA-bound kernel that costs it 20 %, not claimed: the two ran at SM clocks 1980 and 1700 MHz, 14 % apart"; !strings.Contains(s, want) {
		t.Errorf("%q does not say %q", s, want)
	}
}
