package report_test

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/nvshbench/nvshbench/internal/decide"
	"github.com/nvshbench/nvshbench/internal/fixture"
	"github.com/nvshbench/nvshbench/internal/golden"
	"github.com/nvshbench/nvshbench/internal/table"
	"github.com/nvshbench/nvshbench/plots"
	"github.com/nvshbench/nvshbench/record"
	"github.com/nvshbench/nvshbench/report"
)

func render(t *testing.T, r *table.Report, format string) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := table.Render(&b, r, format); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func TestGoldenRenderers(t *testing.T) {
	f := fixture.Synthetic(fixture.Options{Seed: 1})
	rep := report.Build([]*record.File{f}, record.Paper(), report.Options{Points: true})
	paper := report.Paper(record.Paper())
	for _, format := range table.Formats {
		golden.Check(t, "synthetic."+format, render(t, rep, format))
		golden.Check(t, "paper."+format, render(t, paper, format))
	}
}

func TestMachineFormatsParse(t *testing.T) {
	f := fixture.Synthetic(fixture.Options{Seed: 1})
	rep := report.Build([]*record.File{f}, record.Paper(), report.Options{})
	var js struct {
		Tables []struct {
			Title string
			Rows  []map[string]any
		}
	}
	if err := json.Unmarshal(render(t, rep, "json"), &js); err != nil {
		t.Fatal(err)
	}
	if len(js.Tables) != 5 || !strings.Contains(js.Tables[0].Title, "SYNTHETIC") { // the paper's three figures, Table I by group, the MoE table
		t.Fatalf("json tables: %d, first title %q", len(js.Tables), js.Tables[0].Title)
	}
	put := js.Tables[0].Rows[0]
	if put["operation"] != "put (bulk)" || put["paper"] != 313.2 {
		t.Errorf("first row %v", put)
	}
	if v, ok := put["measured"].(float64); !ok || v < 250 || v > 350 {
		t.Errorf("measured put = %v, want the fixture's ~300 GB/s as a number", put["measured"])
	}
	r := csv.NewReader(bytes.NewReader(render(t, rep, "csv")))
	r.FieldsPerRecord = -1
	recs, err := r.ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if recs[0][0] != "# "+rep.Tables[0].Title || recs[1][2] != "measured" {
		t.Errorf("csv head %q / %q", recs[0], recs[1])
	}
}

func TestSelectRules(t *testing.T) {
	f := fixture.Synthetic(fixture.Options{Seed: 1})
	ref := record.Paper()
	row := func(table, key string) *record.RefRow {
		for i := range ref.Rows {
			if ref.Rows[i].Table == table && ref.Rows[i].Key == key {
				return &ref.Rows[i]
			}
		}
		t.Fatalf("no row %s/%s", table, key)
		return nil
	}
	put := report.Select(f, row("rma", "put/p2p"))
	if put.Status != "ok" || put.Best.L2Resident || put.Best.Params.Size != 128<<20 {
		t.Errorf("put pick = %+v", put)
	}
	if got := report.Select(f, row("rma", "put/ibgda")); got.Best != nil || !strings.HasPrefix(got.Status, "waived: no InfiniBand") {
		t.Errorf("ibgda pick = %+v", got)
	}
	if got := report.Select(f, row("allreduce", "nccl-ring/inter")); !strings.Contains(got.Status, "needs 2 nodes") {
		t.Errorf("inter-node pick = %+v", got)
	}
	lat := report.Select(f, row("latency", "put/p2p"))
	if lat.Status != "ok" || lat.Best.Params.Size != 256 {
		t.Errorf("latency pick = %+v", lat)
	}
	// Only cache-served bandwidth points: no peak claimed.
	small := *f
	small.Points = nil
	for _, p := range f.Points {
		if p.ID == "rma/put/block" && p.L2Resident {
			small.Points = append(small.Points, p)
		}
	}
	if got := report.Select(&small, row("rma", "put/p2p")); got.Best != nil || got.Status != "only cache-served sizes measured" {
		t.Errorf("L2-only pick = %+v", got)
	}
}

// The RMA rows compare the paper's launch (32 × 256) with the paper; a
// faster launch from the sweep is shown beside it, never in its place.
func TestRMARowsUseThePapersLaunch(t *testing.T) {
	f := fixture.Synthetic(fixture.Options{Seed: 1})
	var sweep record.Point
	for _, p := range f.Points {
		if p.ID == "rma/g" && p.Params.Size == 128<<20 && p.Params.CTAs == 32 {
			sweep = p
		}
	}
	if sweep.ID == "" {
		t.Fatal("the fixture has no rma/g point at 128 MiB")
	}
	sweep.Params.CTAs, sweep.Params.Threads = 1056, 1024
	for i := range sweep.Samples {
		sweep.Samples[i] /= 40 // 40 times the 32 × 256 bandwidth
	}
	sweep.Metrics = nil
	if err := record.Derive(&sweep, record.MetricBandwidth); err != nil {
		t.Fatal(err)
	}
	f.Points = append(f.Points, sweep)
	rep := report.Build([]*record.File{f}, record.Paper(), report.Options{})
	rma := rep.Tables[0]
	best := -1
	for i, c := range rma.Columns {
		if c == "best launch" {
			best = i
		}
	}
	for _, r := range rma.Rows {
		if r[0].Text != "g (scalar)" || r[1].Text != "p2p" {
			continue
		}
		if *r[2].Num > 10 || !strings.Contains(r[4].Text, "32×256") {
			t.Errorf("g measured %v at %q: not the paper's launch", *r[2].Num, r[4].Text)
		}
		if best < 0 || !strings.Contains(r[best].Text, "1056×1024") {
			t.Errorf("best launch column %d: %v", best, r)
		}
		return
	}
	t.Fatal("no g row")
}

// Two runs side by side: one table per figure, a column per run and the
// ratio of the second to the first.
func TestSideBySide(t *testing.T) {
	a := fixture.Synthetic(fixture.Options{Seed: 1, Label: "base"})
	b := fixture.Synthetic(fixture.Options{Seed: 1, Label: "cand", Scale: 0.5})
	rep := report.Build([]*record.File{a, b}, record.Paper(), report.Options{})
	var fig4 *table.Table
	for i := range rep.Tables {
		if strings.HasPrefix(rep.Tables[i].Title, "Fig. 4") {
			if fig4 != nil {
				t.Fatal("two Fig. 4 tables for two runs: not side by side")
			}
			fig4 = &rep.Tables[i]
		}
	}
	if fig4 == nil || strings.Join(fig4.Columns, "|") != "operation|path|paper|base|cand|cand / base|status" {
		t.Fatalf("Fig. 4 side by side: %+v", fig4)
	}
	put := fig4.Rows[0]
	if put[0].Text != "put (bulk)" || put[5].Text != "0.50" {
		t.Errorf("put row %+v: want the candidate at 0.50 of the base", put)
	}
}

// The default text output fits a 120-column terminal; --wide shows every
// column and every reason in place.
func TestTextFitsATerminal(t *testing.T) {
	f := fixture.Synthetic(fixture.Options{Seed: 1})
	rep := report.Build([]*record.File{f}, record.Paper(), report.Options{Points: true})
	out := string(render(t, rep, "text"))
	for _, line := range strings.Split(out, "\n") {
		if n := len([]rune(line)); n > table.Width {
			t.Errorf("%d columns: %s", n, line)
		}
	}
	if !strings.Contains(out, "waived [1]") || !strings.Contains(out, "[1] waived: no InfiniBand device on this machine") {
		t.Error("a long reason is not a footnote")
	}
	rep.Wide = true
	wide := string(render(t, rep, "text"))
	if !strings.Contains(wide, "| waived: no InfiniBand device on this machine") || !strings.Contains(wide, "best launch") {
		t.Error("--wide does not show every column and reason in place")
	}
}

// CSV keeps numbers machine-readable: no dash for a missing value, the
// paper's "< 9" as 9 with its bound in a column of its own.
func TestCSVNumbersAndBounds(t *testing.T) {
	f := fixture.Synthetic(fixture.Options{Seed: 1})
	out := string(render(t, report.Build([]*record.File{f}, record.Paper(), report.Options{}), "csv"))
	if strings.Contains(out, "—") {
		t.Error("a dash in the CSV")
	}
	cr := csv.NewReader(strings.NewReader(strings.SplitN(out, "\n\n", 2)[0]))
	cr.FieldsPerRecord = -1
	recs, err := cr.ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	cols := recs[1]
	idx := map[string]int{}
	for i, c := range cols {
		idx[c] = i
	}
	for _, r := range recs[2:] {
		if r[0] == "g (scalar)" && r[1] == "p2p" && (r[idx["paper"]] != "9" || r[idx["paper bound"]] != "upper") {
			t.Errorf("g row: paper %q bound %q", r[idx["paper"]], r[idx["paper bound"]])
		}
	}
}

// Only figures make a row: a point above its physical link is never the
// peak, and an older file's second timer is never the latency (even where
// it reads lower).
func TestRowsTakeOnlyFigures(t *testing.T) {
	f := fixture.Synthetic(fixture.Options{Seed: 1})
	row := func(table, key string) *record.RefRow {
		for i, r := range record.Paper().Rows {
			if r.Table == table && r.Key == key {
				return &record.Paper().Rows[i]
			}
		}
		t.Fatalf("no row %s/%s", table, key)
		return nil
	}
	for i := range f.Points {
		p := &f.Points[i]
		if p.ID == "rma/put/block" && p.Params.Size == 128<<20 {
			q := *p
			q.Params.Size, q.Bytes = 512<<20, 512<<20
			q.Samples = []float64{float64(q.Bytes) / 600e9, float64(q.Bytes) / 600e9}
			q.Metrics = nil
			if err := record.Derive(&q, record.MetricBandwidth); err != nil {
				t.Fatal(err)
			}
			record.Annotate(&f.Header, &q)
			if !q.Has(record.FlagAboveLink) {
				t.Fatalf("600 GB/s over the fixture's 478 GB/s NVLink: flags %v", q.Flags)
			}
			f.Points = append(f.Points, q)
			break
		}
	}
	if last := f.Points[len(f.Points)-1]; last.Params.Size != 512<<20 {
		t.Fatal("the point above the link was not added")
	}
	put := report.Select(f, row("rma", "put/p2p"))
	if put.Best == nil || put.Value > 478e9 || put.Best.Params.Size != 128<<20 {
		t.Errorf("put peak %+v: the point above the link was taken", put)
	}
	for _, s := range plots.Build([]*record.File{f}, nil) {
		for _, ser := range s.Series {
			for _, pt := range ser.Points {
				if pt.X == 512<<20 && strings.HasPrefix(ser.ID, "rma/put/") {
					t.Errorf("%s: %s draws the point above the link", s.Name, ser.Label)
				}
			}
		}
	}
	old, err := record.ReadFile("../record/testdata/schema1.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	lat := report.Select(old, row("latency", "put/p2p"))
	if lat.Best == nil || lat.Best.Timer != "events" {
		t.Fatalf("latency pick %+v", lat)
	}
	for _, p := range old.Points {
		if p.ID == "latency/put/block" && p.Timer == "globaltimer" && p.Metrics[record.MetricLatency].Median < lat.Value {
			return // the lower reading exists, and was not chosen
		}
	}
	t.Error("the fixture has no lower second-timer reading: the test proves nothing")
}

// The marks that leave a point a figure are said beside it: in a table's
// status (a footnote in the narrow text) and in the points table's flags,
// a shape check with its reason; the in-kernel tails of one iteration are
// columns with --wide (and in CSV / JSON), for bandwidths as for round trips.
func TestFlagsAndTailsAreShown(t *testing.T) {
	f := fixture.Synthetic(fixture.Options{Seed: 1})
	for i := range f.Points {
		p := &f.Points[i]
		switch {
		case p.ID == "rma/put/block" && p.Params.Size == 128<<20 && p.Status == record.StatusOK:
			per := p.OpTime()
			for j := range p.Samples { // ±11.4 %: a CV of 12 %, noisy
				p.Samples[j] = per * (1 + 0.114*float64(1-2*(j%2)))
			}
			k := record.Summarize([]float64{per * 1.14, per * 1.15, per * 1.16, per * 1.3}, record.UnitSeconds) // 15 % and more off
			p.KernelTimer = &k
		case p.ID == "latency/p" && p.Params.Size == 256:
			for j := range p.Samples {
				p.Samples[j] *= 0.8 // 19 % below 64 B
			}
			k := record.Summarize([]float64{p.Samples[0], p.Samples[1]}, record.UnitSeconds)
			p.KernelTimer = &k
		default:
			continue
		}
		m := record.PrimaryMetric(p)
		p.Metrics = nil
		if err := record.Derive(p, m); err != nil {
			t.Fatal(err)
		}
		record.Annotate(&f.Header, p)
	}
	record.MarkShapes(f.Points)
	rep := report.Build([]*record.File{f}, record.Paper(), report.Options{Points: true})
	cell := func(tab table.Table, row []table.Cell, col string) table.Cell {
		for i, c := range tab.Columns {
			if c == col {
				return row[i]
			}
		}
		t.Fatalf("%s: no column %q in %v", tab.Title, col, tab.Columns)
		return table.Cell{}
	}
	rma, lat, pts := rep.Tables[0], rep.Tables[1], rep.Tables[len(rep.Tables)-1]
	put := rma.Rows[0]
	if s := cell(rma, put, "status").Text; !strings.Contains(s, "timers disagree") || !strings.Contains(s, "noisy (CV 12 %)") {
		t.Errorf("put status %q", s)
	}
	if c := cell(rma, put, "in-kernel p50 µs"); c.Num == nil || *c.Num < 1.14*float64(128<<20)/300e9/1e-6*0.9 {
		t.Errorf("put in-kernel p50 %+v", c)
	}
	var p256 []table.Cell
	for _, r := range lat.Rows {
		if r[0].Text == "p" && r[1].Text == "p2p" {
			p256 = r
		}
	}
	if s := cell(lat, p256, "status").Text; !strings.Contains(s, "check: latency falls 19 % from 64 B to 256 B (1.21 → 0.983 µs)") {
		t.Errorf("p status %q", s)
	}
	found := 0
	for _, r := range pts.Rows {
		if r[0].Text == "latency/p" && (r[1].Text == "256 B" || r[1].Text == "64 B") {
			found++
			if s := cell(pts, r, "verified; flags").Text; !strings.Contains(s, "yes; check: latency falls 19 %") {
				t.Errorf("points table %s flags %q", r[1].Text, s)
			}
			if c := cell(pts, r, "in-kernel p99 µs"); c.Num == nil || *c.Num <= 0 {
				t.Errorf("points table %s in-kernel p99 %+v", r[1].Text, c)
			}
		}
	}
	if found != 2 {
		t.Fatalf("%d latency/p rows at 64 and 256 B", found)
	}
	narrow := string(render(t, rep, "text"))
	if strings.Contains(narrow, "in-kernel p50 µs") || !regexp.MustCompile(`\[\d+\] ok; timers disagree; noisy \(CV 12 %\)`).MatchString(narrow) {
		t.Error("narrow text: the tails shown without --wide, or the put's marks not a footnote")
	}
	rep.Wide = true
	if wide := string(render(t, rep, "text")); !strings.Contains(wide, "in-kernel p50 µs") || !strings.Contains(wide, "in-kernel p99 µs") {
		t.Error("--wide: no tail columns")
	}
}

// The in-kernel timer stands beside the events as a second timer only where
// its stamps time each iteration; a fused kernel's stamps span the launch
// the events time, so their agreement confirms nothing. Each point says
// which (the points table's "in-kernel timer"), and the points table and
// the summary count only the independent pairs, with those that disagree.
func TestSecondTimerSaysItsWindow(t *testing.T) {
	f := fixture.Synthetic(fixture.Options{Seed: 1})
	var fused, perIter, off *record.Point
	for i := range f.Points {
		p := &f.Points[i]
		if p.Status != record.StatusOK {
			continue
		}
		switch {
		case p.ID == "rma/put/block" && p.Params.Size == 128<<20:
			fused = p
		case p.ID == "latency/p" && p.Params.Size == 4:
			perIter = p
		case p.ID == "latency/p" && p.Params.Size == 16:
			off = p
		}
	}
	per := fused.OpTime()
	k := record.Summarize(slices.Repeat([]float64{per}, len(fused.Samples)), record.UnitSeconds) // one period a launch
	fused.KernelTimer = &k
	for _, p := range []*record.Point{perIter, off} {
		scale := 0.97
		if p == off {
			scale = 0.8 // 20 % off the events: disagrees
		}
		k := record.Summarize(slices.Repeat([]float64{p.OpTime() * scale}, 100*len(p.Samples)), record.UnitSeconds) // a period an iteration
		p.KernelTimer = &k
		record.Annotate(&f.Header, p)
	}
	for i := range f.Points { // the fixture's other stamps: none
		if p := &f.Points[i]; p != fused && p != perIter && p != off {
			p.KernelTimer = nil
			record.Annotate(&f.Header, p)
		}
	}
	record.Annotate(&f.Header, fused)
	if fused.TimerWindow() != record.TimerSameWindow || perIter.TimerWindow() != record.TimerPerIteration || !off.Has(record.FlagTimersDisagree) {
		t.Fatalf("windows %q %q, flags %v", fused.TimerWindow(), perIter.TimerWindow(), off.Flags)
	}
	const count = "in-kernel timer: 2 points stamped per iteration, a second timer (1 disagrees with the events); 1 point stamped over the timed launch, the events' own window (not counted: agreement there confirms nothing)"
	rep := report.Build([]*record.File{f}, record.Paper(), report.Options{Points: true})
	pts := rep.Tables[len(rep.Tables)-1]
	col := slices.Index(pts.Columns, "in-kernel timer")
	if col < 0 || !slices.Contains(pts.Notes, count) {
		t.Fatalf("points table: columns %q, notes %q", pts.Columns, pts.Notes)
	}
	for _, r := range pts.Rows {
		want := ""
		switch {
		case r[0].Text == "rma/put/block" && r[1].Text == "128 MiB" && strings.Contains(r[2].Text, "path=auto"):
			want = "the launch (the events' window)"
		case r[0].Text == "latency/p" && (r[1].Text == "4 B" || r[1].Text == "16 B"):
			want = "per iteration"
		}
		if r[col].Text != want {
			t.Errorf("%s %s %s: %q, want %q", r[0].Text, r[1].Text, r[2].Text, r[col].Text, want)
		}
	}
	sum := report.Summary([]*record.File{f}, record.Paper(), decide.Default()).Tables[0]
	if !slices.Contains(sum.Notes, count) {
		t.Errorf("summary notes %q", sum.Notes)
	}
}

// Issue 47: report shows the tables a file has data for, its own first;
// the paper's tables it has none for (no point of their rows) are named in
// one line after the file's tables, and --all shows every table as
// before. A waived point is data (its reason is the row's status, and it
// counts in Table I's group); of several files a figure none has data for
// is named once, a file's own table under the file.
func TestTablesWithoutDataInOneLine(t *testing.T) {
	titles := func(r *table.Report) []string {
		var s []string
		for _, tb := range r.Tables {
			s = append(s, tb.Title)
		}
		return s
	}
	f := fixture.PerSMExample()
	rep := report.Build([]*record.File{f}, record.Paper(), report.Options{})
	got := titles(rep)
	last := rep.Tables[len(rep.Tables)-1]
	if !strings.HasPrefix(got[0], "Bytes per SM: ") || len(last.Columns) != 0 ||
		last.Title != "Not in this file: Fig. 4 (RMA), RMA latency, Fig. 5 (AllReduce), AllReduce latency, Table I (report --all shows them)" {
		t.Errorf("a bytes-per-SM file's report: %q", got)
	}
	all := titles(report.Build([]*record.File{f}, record.Paper(), report.Options{All: true}))
	if len(all) != len(got)-1+5 || !strings.HasPrefix(all[0], "Fig. 4: ") || slices.ContainsFunc(all, func(s string) bool { return strings.HasPrefix(s, "Not in") }) {
		t.Errorf("--all: %q", all)
	}
	if out := string(render(t, rep, "text")); !strings.HasSuffix(out, "\n\n"+last.Title+"\n") {
		t.Errorf("the line is not the text's last:\n%s", out)
	}

	waived := *f
	waived.Points = append(slices.Clone(f.Points), record.Point{Type: record.TypePoint, ID: "rma/put/block", Status: record.StatusWaived, Reason: "no NIC",
		Params: record.Params{Size: 1 << 30, CTAs: 32, Threads: 256, PEs: 2, Path: "ibgda", Dir: "uni", Mode: "nbi"}})
	rep = report.Build([]*record.File{&waived}, record.Paper(), report.Options{})
	rma := findTable(rep, "Fig. 4: ")
	if rma == nil || cellAt(t, rma, "status", "put (bulk)", "ibgda") != "waived: no NIC" {
		t.Fatalf("a waived RMA point: %q", titles(rep))
	}
	if l := rep.Tables[len(rep.Tables)-1].Title; l != "Not in this file: RMA latency, Fig. 5 (AllReduce), AllReduce latency (report --all shows them)" {
		t.Errorf("the line: %q", l)
	}

	a, b, c := *f, waived, *f
	a.Header.Label, b.Header.Label, c.Header.Label = "a", "b", "c"
	got = titles(report.Build([]*record.File{&a, &b}, record.Paper(), report.Options{}))
	for _, want := range []string{"Fig. 4: RMA peak bandwidth (GB/s) by operation and path: a against b", "Not in a: Table I (report --all shows it)",
		"NVSHMEM's device API by group (the paper's Table I), measured [b; SYNTHETIC data, not a measurement; NVSHMEM 3.4.5, NCCL 2.28.9]", "Not in these files: RMA latency, Fig. 5 (AllReduce), AllReduce latency (report --all shows them)"} {
		if !slices.Contains(got, want) {
			t.Errorf("two files: no %q in %q", want, got)
		}
	}
	got = titles(report.Build([]*record.File{&a, &c}, record.Paper(), report.Options{}))
	if l := got[len(got)-1]; l != "Not in these files: Fig. 4 (RMA), RMA latency, Fig. 5 (AllReduce), AllReduce latency, Table I (report --all shows them)" ||
		slices.ContainsFunc(got[:len(got)-1], func(s string) bool { return strings.HasPrefix(s, "Not in") }) {
		t.Errorf("two bytes-per-SM files: %q, want one line", got)
	}
}
