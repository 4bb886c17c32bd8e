package report

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/nvshbench/nvshbench/internal/decide"
	"github.com/nvshbench/nvshbench/internal/table"
	"github.com/nvshbench/nvshbench/internal/units"
	"github.com/nvshbench/nvshbench/record/persm"
)

// Bytes per SM (issue 32): the mechanisms' GB/s and GB/s per SM over SM
// budgets at the sizes that matter, and what a transfer and a compute
// kernel cost each other beside each other.

// perSMSizes are the sizes the bytes-per-SM tables show where a file has
// more than six: small chunks, chunks about L2's size, and beyond it.
var perSMSizes = []int64{4 << 10, 64 << 10, 1 << 20, 16 << 20, 256 << 20, 1 << 30}

// shownSizes: every size of the curves where there are at most six, else
// those of perSMSizes and the largest.
func shownSizes(cs []persm.Curve) []int64 {
	var all []int64
	for _, c := range cs {
		if !slices.Contains(all, c.Size) {
			all = append(all, c.Size)
		}
	}
	slices.Sort(all)
	if len(all) <= 6 {
		return all
	}
	var out []int64
	for _, s := range all {
		if slices.Contains(perSMSizes, s) || s == all[len(all)-1] {
			out = append(out, s)
		}
	}
	return out
}

// budgetsOf are the curves' SM budgets, ascending (the copy engine's 0 apart).
func budgetsOf(cs []persm.Curve) []int {
	var out []int
	for _, c := range cs {
		for _, b := range c.Budgets {
			if b > 0 && !slices.Contains(out, b) {
				out = append(out, b)
			}
		}
	}
	slices.Sort(out)
	return out
}

// The notes on the copy engine's rows (ce, cudaMemcpyAsync), by what the
// file's points show of its SM use (persm.CECheck): the bandwidth table's, the
// per-SM table's and the interference table's.
var (
	ceBWNote = map[persm.CESM]string{
		persm.CENoSM:       "ce: cudaMemcpyAsync, on a copy engine with no SM (checked: a copy completed while a kernel held every CTA slot); its one figure is under peak",
		persm.CENotChecked: "ce: cudaMemcpyAsync, the copy engine with no SM if a copy engine ran it (not checked for SM use: on one H200 a same-GPU cudaMemcpyAsync ran as the driver's kernel, on SMs); its one figure is under peak",
		persm.CEOnSM:       "ce: cudaMemcpyAsync ran on SMs here (the driver's kernel: it waited for a free CTA slot), how many not counted; its one figure, under peak, is a reference, not a rate with no SM",
	}
	cePerSMNote = map[persm.CESM]string{
		persm.CENoSM:       "the copy engine uses none (checked)",
		persm.CENotChecked: "ce has no figure: it uses none if a copy engine ran it (not checked for SM use)",
		persm.CEOnSM:       "ce has no figure: cudaMemcpyAsync ran on SMs here (the driver's kernel), how many not counted",
	}
	ceBesideNote = map[persm.CESM]string{
		persm.CENoSM:       "ce: the copy engine on no SM (0; checked: a copy completed while a kernel held every CTA slot)",
		persm.CENotChecked: "ce: the copy engine on no SM (0) if a copy engine ran it (not checked for SM use)",
		persm.CEOnSM:       "ce: cudaMemcpyAsync on SMs here, how many not counted (the driver's kernel: it waited for a free CTA slot; its slowdown beside a compute kernel: its warps compete with the compute's on the SMs they share)",
	}
)

// perSMTables: GB/s (perSM false) or GB/s per SM used (true), a row per
// mechanism and size, a column per budget, with each row's peak and the
// smallest budget reaching 90 % of it; chk is what the file's copy-engine
// points show of its SM use (its rows' notes say it).
func perSMTable(cs []persm.Curve, tag string, perSM bool, chk persm.CESM) table.Table {
	budgets := budgetsOf(cs)
	title := "Bytes per SM: GB/s to the peer by mechanism and SM budget" + tag
	if perSM {
		title = "Bytes per SM: GB/s per SM used, by mechanism and SM budget" + tag
	}
	t := table.Table{Title: title, Columns: []string{"mechanism", "size"}}
	for _, b := range budgets {
		t.Columns = append(t.Columns, strconv.Itoa(b)+" SM")
	}
	t.Columns = append(t.Columns, "peak", "of ref", "90 % at")
	t.Right = make([]bool, len(t.Columns))
	for i := 2; i < len(t.Columns); i++ {
		t.Right[i] = true
	}
	sizes := shownSizes(cs)
	cached, ownPeak := false, false
	var falls, refs []string
	for _, c := range cs {
		if !slices.Contains(sizes, c.Size) {
			continue
		}
		size := units.Bytes(c.Size)
		if c.Cached {
			size += " (L2)"
			cached = true
		}
		row := []table.Cell{table.Str(c.Mechanism), table.Str(size)}
		peak, _ := c.Peak()
		fell := map[int]bool{}
		for _, f := range c.Falls() {
			fell[f.Budget] = true
			if !perSM {
				falls = append(falls, fmt.Sprintf("%s at %s: %d SM %s below %d SM's %s GB/s", c.Mechanism, units.Bytes(c.Size), f.Budget,
					units.Value(f.BW/gb), f.Below, units.Value(f.Above/gb)))
			}
		}
		for _, b := range budgets {
			v, ok := c.At(b)
			var cell table.Cell
			switch {
			case !ok:
				cell = table.Str("")
			case perSM:
				cell = table.Num(v/gb/float64(b), 2)
			default:
				cell = table.Num(v/gb, 1)
			}
			if fell[b] {
				cell.Text += " ↓"
			}
			row = append(row, cell)
		}
		reach := "–"
		against, ref := c.Against()
		if !c.SMs {
			reach = c.SM.String() // its one figure (under peak): at no SM, checked or not, or on SMs not counted
		} else if r := c.ReachRate(persm.Near * against); r > 0 {
			reach = strconv.Itoa(r) + " SM"
		}
		ownPeak = ownPeak || !ref && c.SMs
		if r := fmt.Sprintf("%s %s GB/s at %s", c.RefID, units.Value(c.Ref/gb), units.Bytes(c.Size)); ref && !slices.Contains(refs, r) {
			refs = append(refs, r)
		}
		if perSM && !c.SMs {
			row = append(row, table.Str("–"))
		} else {
			row = append(row, table.Num(peak/gb, 1))
		}
		if ref {
			row = append(row, table.Num(peak/c.Ref, 2))
		} else {
			row = append(row, table.Str(""))
		}
		t.Rows = append(t.Rows, append(row, table.Str(reach)))
	}
	hasCE := slices.ContainsFunc(cs, func(c persm.Curve) bool { return !c.SMs && slices.Contains(sizes, c.Size) })
	if !perSM {
		n := "one CTA of 512 threads an SM (each holding 128 KiB of shared memory, so no two share an SM); median GB/s (1e9 B/s) of the bytes that moved, every transfer verified"
		if hasCE {
			n += "; " + ceBWNote[chk]
		}
		t.Notes = append(t.Notes, n)
	} else {
		n := "GB/s divided by the SMs the transfer ran on"
		if hasCE {
			n += "; " + cePerSMNote[chk]
		}
		t.Notes = append(t.Notes, n)
	}
	n := fmt.Sprintf("90 %% at: the smallest budget reaching %.0f %% of the run's best copy reference at the size (the faster of limit/sm-copy and limit/ce-copy: the hardware's figure), "+
		"the row's own peak and its share of that reference (of ref) beside it; – where no budget does", 100*persm.Near)
	if len(refs) > 0 {
		n += " (" + strings.Join(refs, "; ") + ")"
	}
	if ownPeak {
		n += "; a row with no reference in this run: of its own peak"
	}
	t.Notes = append(t.Notes, n)
	if len(falls) > 0 {
		t.Notes = append(t.Notes, "↓: more SMs moved less than fewer did ("+strings.Join(falls, "; ")+", their samples apart): a sweep should not fall as SMs are added; "+
			"look again (runs that start off a 128-byte line, or the budget's runs meeting the memory's channels unevenly: docs/bytes-per-sm.md)")
	}
	if cached {
		t.Notes = append(t.Notes, "(L2): the working set fit in L2: the cache's figure, not the link's")
	}
	return t
}

// interferenceTable: per mechanism, compute kernel, size and budget, the
// transfer alone and beside the compute kernel, and the compute kernel's
// time an iteration alone and beside the transfer, with both slowdowns
// judged by rule (persm.SlowdownRule); chk as perSMTable's.
func interferenceTable(ins []persm.Interference, tag string, chk persm.CESM, rule decide.Rule) table.Table {
	t := table.Table{Title: "Bytes per SM: a transfer beside a compute kernel on the other SMs" + tag,
		Columns: []string{"mechanism", "compute", "size", "SMs", "alone GB/s", "beside GB/s", "transfer slowdown %", "compute alone µs", "compute beside µs", "compute slowdown %"}}
	t.Right = columnFlags(t.Columns, "SMs", "alone GB/s", "beside GB/s", "transfer slowdown %", "compute alone µs", "compute beside µs", "compute slowdown %")
	num := func(v, div float64, prec int) table.Cell {
		if v <= 0 || math.IsNaN(v) {
			return table.Str("")
		}
		return table.Num(v/div, prec)
	}
	// A slowdown the rule does not claim keeps its figure, marked: "~"
	// within noise (the guide says "within noise"), "?" too few samples to
	// judge (the guide: "too few samples to claim"), each reason once.
	var few, clocks []string
	pct := func(v float64, j persm.Judgement) table.Cell {
		if math.IsNaN(v) {
			return table.Str("")
		}
		c := table.Num(100*v, 1) // the figure stays the cell's number
		switch j.Outcome {
		case persm.WithinNoise:
			c.Text += " ~"
		case persm.TooFew:
			c.Text += " ?"
			if !slices.Contains(few, j.Few) {
				few = append(few, j.Few)
			}
		case persm.ClocksApart:
			c.Text += " ‡"
			if !slices.Contains(clocks, j.Clocks) {
				clocks = append(clocks, j.Clocks)
			}
		}
		return c
	}
	var sizes []int64
	for _, in := range ins {
		if !slices.Contains(sizes, in.Size) {
			sizes = append(sizes, in.Size)
		}
	}
	if len(sizes) > 6 {
		sizes = perSMSizes
	}
	// The compute's slowdown beside copies the shim did not judge (too
	// short for a host thread to keep the copy engine busy) is marked "†":
	// the copy engine may have idled beside it.
	var unjudged, judged []persm.Feed
	for _, in := range ins {
		if !slices.Contains(sizes, in.Size) {
			continue
		}
		compute := pct(in.ComputeSlowdown(), in.ComputeJudged(rule))
		if !in.SMs && compute.Text != "" {
			switch in.Feed.State {
			case persm.CEFedNotJudged:
				compute.Text += " †"
				unjudged = append(unjudged, in.Feed)
			case persm.CEFedJudged:
				judged = append(judged, in.Feed)
			}
		}
		sms := table.Num(float64(in.Budget), 0)
		if !in.SMs && in.SM == persm.CEOnSM {
			sms = table.Str("on SMs") // the driver's kernel: not none, and not counted
		}
		t.Rows = append(t.Rows, []table.Cell{table.Str(in.Mechanism), table.Str(in.Compute), table.Str(units.Bytes(in.Size)), sms,
			num(in.Alone, gb, 1), num(in.Beside, gb, 1), pct(in.TransferSlowdown(), in.TransferJudged(rule)),
			num(in.ComputeAlone, us, 2), num(in.ComputeBeside, us, 2), compute})
	}
	t.Notes = append(t.Notes,
		"one fused launch (SM mechanisms), one CTA an SM: the transfer on SMs, the compute kernel (fma: FMA-bound; mma: tensor-core bf16) on every other SM, each timed while the other runs beside it all along",
		"slowdown: the time beside against the time alone on the same SMs (the transfer: persm/<mechanism>; the compute: persm/compute/<kind>), 10 % = 10 % longer; the compute's results verified in every row",
		persm.SlowdownRule(rule),
		"~: within noise (under the margin, or the interval includes 1): no slowdown is claimed")
	if len(few) > 0 {
		t.Notes = append(t.Notes, "?: too few samples to judge ("+strings.Join(few, "; ")+"): no slowdown is claimed")
	}
	if len(clocks) > 0 {
		t.Notes = append(t.Notes, "‡: the two sides ran at different SM clocks ("+strings.Join(clocks, "; ")+"): no slowdown is claimed, the difference may be the clock's")
	}
	for _, in := range ins {
		if !in.SMs && slices.Contains(sizes, in.Size) {
			t.Notes = append(t.Notes, ceBesideNote[chk]+", the compute kernel on every SM of a second stream: running before the copies are timed and ended by a host-to-device cudaMemcpyAsync of the word it polls after them; timed itself while a host thread keeps copies in flight (not fused: cudaMemcpyAsync is no kernel of ours)")
			break
		}
	}
	t.Notes = append(t.Notes, feedNotes(unjudged, judged)...)
	return t
}

// feedNotes are the interference table's notes on the copies fed beside a
// compute kernel, from the ce rows' points shown: "†" where some were not
// judged (with the copy's and the feeder's times where one row's, or
// their ranges), and the least busy share where some were judged (none
// where no point says: files before the shim judged it).
func feedNotes(unjudged, judged []persm.Feed) []string {
	var out []string
	if len(unjudged) > 0 {
		times := unjudged[0].Times()
		if len(unjudged) > 1 {
			times = feedRanges(unjudged)
		}
		if times != "" {
			times = " (" + times + ")"
		}
		out = append(out, "†: not judged: the copies beside the compute were too short for a host thread to keep the copy engine busy"+times+
			": the compute's slowdown may be understated")
	}
	if len(judged) > 0 {
		least := judged[0].Busy
		for _, f := range judged {
			least = min(least, f.Busy)
		}
		out = append(out, fmt.Sprintf("ce: the copies beside the compute kept the copy engine busy %s %% of every timed window at the least (judged by the shim)", units.Value(100*least)))
	}
	return out
}

// feedRanges says the copies' and the feeder's times over several rows,
// "a copy 1.88-3.5 µs, the feeder's calls 2.5 µs" (a range only where
// they differ).
func feedRanges(fs []persm.Feed) string {
	span := func(v func(persm.Feed) float64) string {
		lo, hi := math.Inf(1), 0.0
		for _, f := range fs {
			if x := v(f); x > 0 {
				lo, hi = min(lo, x), max(hi, x)
			}
		}
		if hi == 0 {
			return ""
		}
		if a, b := units.Value(lo/us), units.Value(hi/us); a != b {
			return a + "-" + b + " µs"
		}
		return units.Value(hi/us) + " µs"
	}
	var s []string
	if c := span(func(f persm.Feed) float64 { return f.Copy }); c != "" {
		s = append(s, "a copy "+c)
	}
	if c := span(func(f persm.Feed) float64 { return f.Calls }); c != "" {
		s = append(s, "the feeder's calls "+c)
	}
	return strings.Join(s, ", ")
}

// stageOffsetTable: a staged mechanism's GB/s with its shared-memory
// stages at each offset past a 128-byte line (a column an offset, its
// share of the line's rate beside it), and the alignment each row says the
// stages need (persm.StageOffsetRow.Rule).
func stageOffsetTable(rows []persm.StageOffsetRow, tag string) table.Table {
	var offs []int
	for _, r := range rows {
		for _, o := range r.Offsets {
			if !slices.Contains(offs, o) {
				offs = append(offs, o)
			}
		}
	}
	slices.Sort(offs)
	t := table.Table{Title: "Bytes per SM: GB/s by the stages' offset past a 128-byte line in shared memory" + tag, Columns: []string{"mechanism", "size", "SMs"}}
	for _, o := range offs {
		t.Columns = append(t.Columns, fmt.Sprintf("+%d B", o))
	}
	t.Columns = append(t.Columns, "full rate at")
	t.Right = make([]bool, len(t.Columns))
	for i := 2; i < len(t.Columns); i++ {
		t.Right[i] = true
	}
	var rules []string
	for _, r := range rows {
		row := []table.Cell{table.Str(r.Mechanism), table.Str(units.Bytes(r.Size)), table.Num(float64(r.Budget), 0)}
		for _, o := range offs {
			i := slices.Index(r.Offsets, o)
			if i < 0 {
				row = append(row, table.Str(""))
				continue
			}
			c := table.Num(r.BW[i]/gb, 1)
			if sh, ok := r.Share(o); ok && o != 0 {
				c.Text += fmt.Sprintf(" (%.2f)", sh)
			}
			row = append(row, c)
		}
		rule := "–"
		if a, ok := r.Rule(); ok {
			rule = fmt.Sprintf("multiples of %d B", a)
			switch {
			case a == 16:
				rules = append(rules, fmt.Sprintf("%s at %s: every offset measured ran at full rate", r.Mechanism, units.Bytes(r.Size)))
			default:
				rules = append(rules, fmt.Sprintf("%s at %s: stages at multiples of %d bytes past the line ran at full rate, the others down to %.2f of it",
					r.Mechanism, units.Bytes(r.Size), a, r.Slowest(a)))
			}
		}
		t.Rows = append(t.Rows, append(row, table.Str(rule)))
	}
	t.Notes = append(t.Notes,
		fmt.Sprintf("one CTA on one SM, its shared-memory stages at each offset past a 128-byte line (persm/<mechanism>/stage-offset); (x): the share of the rate with the stages on the line; full rate at: the smallest alignment whose every offset measured runs at %.0f %% of it or more", 100*persm.Full))
	if len(rules) > 0 {
		t.Notes = append(t.Notes, strings.Join(rules, "; "))
	}
	return t
}
