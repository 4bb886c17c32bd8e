package report

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"

	"github.com/nvshbench/nvshbench/internal/decide"
	"github.com/nvshbench/nvshbench/internal/table"
	"github.com/nvshbench/nvshbench/internal/units"
	"github.com/nvshbench/nvshbench/record"
	"github.com/nvshbench/nvshbench/record/persm"
)

// The paper's launch for RMA: 32 CTAs of 256 threads.
const (
	paperCTAs    = 32
	paperThreads = 256
)

// Scaling for display: GB = 1e9 bytes, µs = 1e-6 s.
const (
	gb = 1e9
	us = 1e-6
)

var tableTitles = map[string]string{
	"rma":               "Fig. 4: RMA peak bandwidth (GB/s) by operation and path",
	"latency":           "RMA latency at 256 B (µs) by operation and path",
	"allreduce":         "Fig. 5: AllReduce peak algbw (GB/s), float sum, one launch per operation",
	"allreduce-latency": "AllReduce latency, small messages (µs), float sum, one launch per operation",
}

var tableOrder = []string{"rma", "latency", "allreduce", "allreduce-latency"}

// tableNames name the paper's tables in the line that says which a file
// has no data for.
var tableNames = map[string]string{
	"rma":               "Fig. 4 (RMA)",
	"latency":           "RMA latency",
	"allreduce":         "Fig. 5 (AllReduce)",
	"allreduce-latency": "AllReduce latency",
}

// metricScale returns the display divisor, unit label and precision of a metric.
func metricScale(metric string) (float64, string, int) {
	unit := record.UnitBytesPerSec
	switch metric {
	case record.MetricLatency:
		unit = record.UnitSeconds
	case record.MetricRate:
		unit = record.UnitOpsPerSec
	}
	s, _ := units.Of(unit)
	return s.Div, s.Label, s.Prec
}

func paperValue(r *record.RefRow) string {
	div, _, prec := metricScale(r.Metric)
	s := fmt.Sprintf("%.*f", prec, r.Value/div)
	if r.Agg == "range" {
		s = fmt.Sprintf("%.1f–%.1f", r.Value/div, r.Hi/div)
	}
	if r.Bound == "lt" {
		s = "< " + s
	}
	return s
}

// Paper builds the published tables alone.
func Paper(ref *record.Reference) *table.Report {
	rep := &table.Report{}
	for _, name := range tableOrder {
		t := table.Table{Title: tableTitles[name] + " (published)", Columns: []string{"operation", "path", "paper", "needs"}, Right: []bool{false, false, true, false}}
		for i := range ref.Rows {
			row := &ref.Rows[i]
			if row.Table != name || row.NoPaper {
				continue
			}
			where := rowWhere(row)
			t.Rows = append(t.Rows, []table.Cell{table.Str(row.Label), table.Str(where), paperCell(row), table.Str(row.Needs)})
		}
		t.Notes = append(t.Notes, fmt.Sprintf("source: %s (arXiv %s)", ref.Source.Title, ref.Source.Arxiv))
		if name != "latency" {
			t.Notes = append(t.Notes, "platform: "+ref.Platform)
		}
		rep.Tables = append(rep.Tables, t)
	}
	return rep
}

func paperCell(r *record.RefRow) table.Cell {
	if r.NoPaper {
		return table.Str("")
	}
	div, _, _ := metricScale(r.Metric)
	v := r.Value / div
	return table.Cell{Text: paperValue(r), Num: &v}
}

// Options select what Build shows.
type Options struct {
	Points bool // add a table of every point
	// All shows the paper's tables a file has no data for too (else they
	// are named in one line after the file's tables).
	All bool
	// Rule names the fastest in the MoE and device-API tables and judges
	// the bytes-per-SM slowdowns (zero: the default, a 3 % margin at 95 %).
	Rule decide.Rule
}

// Build makes the measured tables of each file beside the published numbers.
func Build(files []*record.File, ref *record.Reference, opt Options) *table.Report {
	rep := &table.Report{}
	var none []string // the paper's tables no file has data for
	if len(files) > 1 {
		// Runs side by side: one table per figure, a column per file and
		// each file's ratio to the first.
		for _, name := range tableOrder {
			if opt.All || slices.ContainsFunc(files, func(f *record.File) bool { return inFile(f, ref, name) }) {
				rep.Tables = append(rep.Tables, sideBySide(files, ref, name))
			} else {
				none = append(none, tableNames[name])
			}
		}
	}
	labels := record.Labels(files)
	for i, f := range files {
		for _, w := range f.Warnings {
			rep.Warnings = append(rep.Warnings, w)
		}
		tag := fileTag(f, len(files) > 1)
		var absent []string // the paper's tables this file has no data for
		if len(files) == 1 {
			for _, name := range tableOrder {
				if opt.All || inFile(f, ref, name) {
					rep.Tables = append(rep.Tables, measuredTable(f, ref, name, tag))
				} else {
					absent = append(absent, tableNames[name])
				}
			}
		}
		switch {
		case opt.All || inTableI(f):
			rep.Tables = append(rep.Tables, tableI(f, tag))
		case len(files) == 1 || slices.ContainsFunc(files, inTableI):
			absent = append(absent, "Table I")
		}
		if hasDeviceAPI(f) {
			rep.Tables = append(rep.Tables, deviceAPITable(f, tag, opt.Rule.OrDefault()))
		}
		if hasForcedAlgos(f) {
			rep.Tables = append(rep.Tables, tableII(f, tag, opt.Rule.OrDefault()))
		}
		if hasMoE(f) {
			rep.Tables = append(rep.Tables, moeTable(f, tag, opt.Rule.OrDefault()))
		}
		if cs, ins := persm.Curves(f), persm.Interferences(f); len(cs) > 0 || len(ins) > 0 {
			chk := persm.CECheck(f)
			rep.Tables = append(rep.Tables, perSMTable(cs, tag, false, chk), perSMTable(cs, tag, true, chk))
			if len(ins) > 0 {
				rep.Tables = append(rep.Tables, interferenceTable(ins, tag, chk, opt.Rule.OrDefault()))
			}
		}
		if so := persm.StageOffsetRows(f); len(so) > 0 {
			rep.Tables = append(rep.Tables, stageOffsetTable(so, tag))
		}
		if len(absent) > 0 {
			where := "this file"
			if len(files) > 1 {
				where = labels[i]
			}
			rep.Tables = append(rep.Tables, notIn(where, absent))
		}
		if opt.Points {
			rep.Tables = append(rep.Tables, PointsTable(f, tag))
		}
	}
	if len(files) > 1 && !opt.All && !slices.ContainsFunc(files, inTableI) {
		none = append(none, "Table I")
	}
	if len(none) > 0 {
		rep.Tables = append(rep.Tables, notIn("these files", none))
	}
	return rep
}

// notIn is the line that names the paper's tables with no data in where.
func notIn(where string, tables []string) table.Table {
	them := "them"
	if len(tables) == 1 {
		them = "it"
	}
	return table.Table{Title: "Not in " + where + ": " + strings.Join(tables, ", ") + " (report --all shows " + them + ")"}
}

// inFile reports whether some row of the paper's table name selects a
// point of the file (a value, or why it has none).
func inFile(f *record.File, ref *record.Reference, name string) bool {
	for i := range ref.Rows {
		if ref.Rows[i].Table == name && Select(f, &ref.Rows[i]).Seen {
			return true
		}
	}
	return false
}

// libraries names the NVSHMEM and NCCL a file's numbers come from ("" where
// its header names neither: an older file).
func libraries(h *record.Header) string {
	var parts []string
	if h.NVSHMEM != "" {
		parts = append(parts, "NVSHMEM "+h.NVSHMEM)
	}
	if h.NCCL != "" {
		parts = append(parts, "NCCL "+h.NCCL)
	}
	return strings.Join(parts, ", ")
}

func fileTag(f *record.File, many bool) string {
	var parts []string
	if many || f.Header.Label != "" {
		name := f.Header.Label
		if name == "" {
			name = f.Name
		}
		parts = append(parts, name)
	}
	if f.Header.Synthetic {
		parts = append(parts, "SYNTHETIC data, not a measurement")
	}
	if v := libraries(&f.Header); v != "" {
		parts = append(parts, v)
	}
	if len(parts) == 0 {
		return ""
	}
	return " [" + strings.Join(parts, "; ") + "]"
}

// ModeUnknown is why a row of an older file's collectives has no value:
// its file did not record whether each operation was launched on its own
// or fused into one launch, and the two are never compared.
const ModeUnknown = "older run: launch mode unknown, not compared"

// Pick is the outcome of selecting measured points for a reference row.
type Pick struct {
	Best   *record.Point // the point whose median is the row's value (a range's: its low end)
	Value  float64       // its median, base units
	Hi     float64       // a range's high end (agg "range")
	Status string        // "ok", or why there is no value
	// Seen: some point of the file is one the row selects (its value, or
	// why it has none); a row of what the file did not run has none.
	Seen bool
}

// Select applies a reference row's rule to a file. Only figures count: a
// point served by the cache, above its link, from an older file's second
// timer or of an unknown launch mode is never a row's value.
func Select(f *record.File, row *record.RefRow) Pick {
	nodes := f.Header.Nodes
	if row.Scope == "inter" && nodes < 2 {
		return Pick{Status: "not run: needs " + row.Needs}
	}
	if row.Scope == "intra" && nodes > 1 {
		return Pick{Status: "not run: needs a one-node run"}
	}
	if strings.Contains(row.Needs, "NVLS") && multicastDisabled(&f.Header) {
		return Pick{Status: "waived: needs NVLink multicast, disabled in this run (NVSHMEM_DISABLE_NVLS=1 / NCCL_NVLS_ENABLE=0)"}
	}
	var best, hiPt *record.Point
	bestVal, hiVal := math.NaN(), math.NaN()
	var waived, failed, resident, above, unknown *record.Point
	seen := false
	for i := range f.Points {
		p := &f.Points[i]
		if !row.MatchesID(p.ID) || (row.Size != 0 && p.Params.Size != row.Size) || (row.Mode != "" && p.Params.Mode != row.Mode) {
			continue
		}
		if (row.CTAs != 0 && p.Params.CTAs != row.CTAs) || (row.Threads != 0 && p.Params.Threads != row.Threads) {
			continue
		}
		if row.Agg == "range" && (p.Params.Size > row.MaxSize || p.Params.Size <= 0) {
			continue
		}
		if row.Path != "" && !pathMatches(row.Path, p) {
			continue
		}
		if p.Has(record.FlagSecondTimer) {
			continue // the one timer makes the figure
		}
		if row.Launch != "" && p.Params.Launch != row.Launch {
			if p.Has(record.FlagModeUnknown) {
				unknown = p
			}
			continue
		}
		seen = true
		switch p.Status {
		case record.StatusWaived:
			waived = p
			continue
		case record.StatusError, record.StatusFailedVerification:
			failed = p
			continue
		}
		m, ok := p.Metric(row.Metric)
		if !ok {
			continue
		}
		if p.Has(record.FlagAboveLink) {
			above = p // a bug until explained: never a figure
			continue
		}
		if p.L2Resident && row.Metric != record.MetricLatency {
			// Cache-served figures do not measure the link: never the peak.
			if resident == nil {
				resident = p
			}
			continue
		}
		lower := row.Agg == "min" || row.Agg == "range"
		if best == nil || (!lower && m.Median > bestVal) || (lower && m.Median < bestVal) {
			best, bestVal = p, m.Median
		}
		if row.Agg == "range" && (hiPt == nil || m.Median > hiVal) {
			hiPt, hiVal = p, m.Median
		}
	}
	switch {
	case best != nil:
		return Pick{Best: best, Value: bestVal, Hi: hiVal, Status: "ok", Seen: true}
	case waived != nil:
		return Pick{Status: "waived: " + waived.Reason, Seen: true}
	case failed != nil:
		return Pick{Status: string(failed.Status) + ": " + failed.Reason, Seen: true}
	case above != nil:
		return Pick{Status: "only points above the physical link (a bug until explained: report --points)", Seen: true}
	case resident != nil:
		return Pick{Status: "only cache-served sizes measured", Seen: true}
	case unknown != nil:
		return Pick{Status: ModeUnknown, Seen: true}
	case row.Needs != "":
		return Pick{Status: "not run: needs " + row.Needs, Seen: seen}
	}
	return Pick{Status: "not run", Seen: seen}
}

// Comparable says why a measured value may not be set beside the paper's
// ("" when it may): the paper's setup had what this run lacks (NVLink
// multicast), another GPU count, or the run measured one GPU's memory where
// the paper crossed NVLink.
func Comparable(f *record.File, row *record.RefRow, p *record.Point) string {
	switch {
	case row.NoPaper:
		return ""
	case row.PaperNeeds != "" && strings.Contains(row.PaperNeeds, "NVLS") && multicastDisabled(&f.Header):
		return "not comparable: the paper's figure used " + row.PaperNeeds + ", off in this run"
	case row.PaperPEs > 0 && f.Header.PEs != row.PaperPEs:
		return fmt.Sprintf("not comparable: the paper measured %d GPUs, this run %d PE(s)", row.PaperPEs, f.Header.PEs)
	case p != nil && p.Effective == "local" && row.Path == "p2p":
		return "not comparable: same GPU, not NVLink"
	}
	return ""
}

// multicastDisabled reports whether the run forbade NVLink multicast.
func multicastDisabled(h *record.Header) bool {
	return h.Env["NVSHMEM_DISABLE_NVLS"] == "1" || h.Env["NCCL_NVLS_ENABLE"] == "0"
}

// pathMatches accepts the effective path, else the requested one. A paper
// "p2p" row also accepts "local" (two PEs on one GPU through the same
// mapping), which the table marks.
func pathMatches(want string, p *record.Point) bool {
	got := p.Effective
	if got == "" || p.Status != record.StatusOK {
		got = p.Params.Path
	}
	if got == want {
		return true
	}
	return want == "p2p" && got == "local"
}

func measuredTable(f *record.File, ref *record.Reference, name, tag string) table.Table {
	t := table.Table{Title: tableTitles[name] + tag}
	launched := name == "rma" // rows at the paper's launch, with the sweep's best beside them
	latency := name == "latency"
	t.Columns = []string{"operation", "path", "measured", "ran as", "at", "paper", "paper bound", "ratio", "copy reference", "of reference"}
	switch {
	case launched:
		t.Columns = append(t.Columns, "best launch")
	case latency:
		t.Columns = append(t.Columns[:8:8], "in-kernel p50", "in-kernel p99", "floor", "of floor")
	case name == "allreduce-latency":
		t.Columns = append(t.Columns[:8:8], "launch")
	default:
		t.Columns = append(t.Columns, "launch")
	}
	if !latency { // the tails of one iteration (µs), with --wide
		t.Columns = append(t.Columns, tailColumns...)
	}
	t.Columns = append(t.Columns, "status")
	t.Right = columnFlags(t.Columns, append([]string{"measured", "paper", "ratio", "copy reference", "of reference", "in-kernel p50", "in-kernel p99", "floor", "of floor"}, tailColumns...)...)
	t.Wide = columnFlags(t.Columns, append([]string{"ran as", "at", "paper bound", "best launch", "in-kernel p50"}, tailColumns...)...)
	t.Long = columnFlags(t.Columns, "status")
	checks := record.FlagReasons(f.Points)
	for i := range ref.Rows {
		row := &ref.Rows[i]
		if row.Table != name {
			continue
		}
		pick := Select(f, row)
		cells := []table.Cell{table.Str(row.Label), table.Str(rowWhere(row))}
		div, _, prec := metricScale(row.Metric)
		best := ""
		if launched {
			any := *row
			any.CTAs, any.Threads = 0, 0
			if b := Select(f, &any); b.Best != nil && (pick.Best == nil || b.Value > pick.Value) {
				best = fmt.Sprintf("%.*f at %s", prec, b.Value/div, describe(b.Best))
				if l := b.Best.Limit; l != nil && l.Value > 0 {
					best += fmt.Sprintf(" (%.2f of the reference)", b.Value/l.Value)
				}
			}
		}
		bound := table.Str("")
		if row.Bound == "lt" {
			bound = table.Str("upper")
		}
		if pick.Best == nil {
			cells = append(cells, table.Str(""), table.Str(""), table.Str(""), paperCell(row), bound, table.Str(""))
			for len(cells) < len(t.Columns)-1 {
				cells = append(cells, table.Str(""))
			}
			if launched {
				cells[slices.Index(t.Columns, "best launch")] = table.Str(best)
			}
			t.Rows = append(t.Rows, append(cells, table.Str(pick.Status)))
			continue
		}
		p := pick.Best
		measured := table.Num(pick.Value/div, prec)
		if row.Agg == "range" {
			v := pick.Value / div
			measured = table.Cell{Text: fmt.Sprintf("%.*f–%.*f", prec, pick.Value/div, prec, pick.Hi/div), Num: &v}
		}
		cells = append(cells, measured, table.Str(p.Effective), table.Str(describe(p)), paperCell(row), bound)
		why := Comparable(f, row, p)
		switch {
		case row.NoPaper || why != "":
			cells = append(cells, table.Str(""))
		case row.Agg == "range":
			cells = append(cells, table.Str(fmt.Sprintf("%.2f–%.2f", pick.Value/row.Value, pick.Hi/row.Hi)))
		default:
			cells = append(cells, table.Num(pick.Value/row.Value, 2))
		}
		if !latency && row.Agg != "range" {
			if p.Limit != nil && p.Limit.Value > 0 && row.Metric != record.MetricLatency {
				cells = append(cells, table.Num(p.Limit.Value/gb, 1), table.Num(pick.Value/p.Limit.Value, 2))
			} else {
				cells = append(cells, table.Str(""), table.Str(""))
			}
		}
		switch {
		case launched:
			cells = append(cells, table.Str(best))
		case latency:
			if k := p.KernelTimer; k != nil {
				cells = append(cells, table.Sig(k.Median/us, 3), table.Sig(k.P99/us, 3))
			} else {
				cells = append(cells, table.Str(""), table.Str(""))
			}
			if fl := p.Floor; fl != nil && fl.Value > 0 {
				cells = append(cells, table.Sig(fl.Value/us, 3), table.Num(pick.Value/fl.Value, 2))
			} else {
				cells = append(cells, table.Str(""), table.Str(""))
			}
		default:
			cells = append(cells, table.Str(p.Params.Launch))
		}
		if !latency {
			cells = append(cells, tailCells(p)...)
		}
		status := "ok"
		if why != "" {
			status = why
		} else if name == "allreduce" && f.Header.PEs == 1 {
			status = "ok; " + onePE(p, 1)
		}
		if said := FlagsSaid(p, checks); said != "" {
			status += "; " + said
		}
		if row.Bound == "lt" {
			status += "; paper: upper bound"
		}
		cells = append(cells, table.Str(status))
		t.Rows = append(t.Rows, cells)
	}
	switch name {
	case "rma":
		t.Notes = append(t.Notes, "measured: at the paper's launch (32 CTAs × 256 threads), the highest median over sizes whose buffers exceed twice the L2 and stay within the physical link; ratio = measured / paper; of reference = measured / the best copy reference (SM copy over a sweep of grids, or the copy engine) measured in the same run on the same GPUs; best launch: the highest median of the CTAs × threads sweep, where it is higher")
	case "latency":
		t.Notes = append(t.Notes, "measured: the events timer (the mean per operation over a launch that loops it), the lowest median over scopes at 256 B; in-kernel p50/p99: %globaltimer stamped at every iteration of the same launches (the spread of the iterations whose mean the events give; the two must agree within 10 %); floor: the in-run chase of the same path (memory-served for chases, cache-served for the others) and the round trip's ratio to it (put: put_nbi + quiet, as the paper; get and g: pointer chases through the peer's memory; issue-time rows such as a blocking put are never taken)")
	case "allreduce":
		t.Notes = append(t.Notes, "measured: the highest median algbw over sizes whose buffers exceed twice the L2, one launch per operation (the paper's mode); a fused kernel pays no launch per operation and is never set beside these (report --points lists both)")
	case "allreduce-latency":
		t.Notes = append(t.Notes, "measured: the lowest and highest median from 4 B to 256 KiB, one launch per operation (the timed launches captured in a CUDA graph where the run asked for --graph, as reproduce does)")
	}
	return t
}

// onePE says what a collective's point of a one-PE job ran: a local
// reduction, or NCCL's one-rank copy.
func onePE(p *record.Point, pes int) string {
	if p.OneRankCopy(pes) != "" {
		return "1 PE: NCCL's one-rank copy, no reduction: never compared with one"
	}
	return "1 PE: a local reduction, no link crossed"
}

// describe gives the launch shape and size of a point.
func describe(p *record.Point) string {
	var parts []string
	if p.Params.Size > 0 {
		parts = append(parts, units.Bytes(p.Params.Size))
	}
	if p.Params.CTAs > 0 {
		parts = append(parts, fmt.Sprintf("%d×%d", p.Params.CTAs, p.Params.Threads))
	}
	if p.Params.Scope != "" {
		parts = append(parts, p.Params.Scope)
	}
	if p.Params.Mode != "" {
		parts = append(parts, p.Params.Mode)
	}
	if p.Params.Launch != "" {
		parts = append(parts, p.Params.Launch)
	}
	return strings.Join(parts, " ")
}

// tailColumns are the in-kernel timer's tails of one iteration, µs: the
// median and the 99th percentile over every stamped iteration of the
// point's timed launches (kernel_timer), beside the events figure.
var tailColumns = []string{"in-kernel p50 µs", "in-kernel p99 µs"}

// tailCells are the point's tailColumns (empty where its launches carry no
// in-kernel stamps).
func tailCells(p *record.Point) []table.Cell {
	if k := p.KernelTimer; k != nil && k.N > 0 {
		return []table.Cell{table.Sig(k.Median/us, 3), table.Sig(k.P99/us, 3)}
	}
	return []table.Cell{table.Str(""), table.Str("")}
}

// FlagsSaid are the flags said beside a figure (those that leave it one),
// a shape check and a low clock with their reasons (reasons:
// record.FlagReasons of its file).
func FlagsSaid(p *record.Point, reasons map[*record.Point]map[string]string) string {
	var out []string
	for _, fl := range []string{record.FlagTimersDisagree, record.FlagBelowFloor, record.FlagNoisy, record.FlagAtMemoryCeiling, record.FlagCheck, record.FlagStraggler, record.FlagLowClock} {
		if !p.Has(fl) {
			continue
		}
		if why := reasons[p][fl]; why != "" {
			fl += ": " + why
		}
		if fl == record.FlagStraggler && p.Straggler != nil {
			fl += " " + p.Straggler.String()
		}
		if fl == record.FlagNoisy {
			if cv, ok := p.SampleCV(); ok {
				fl += fmt.Sprintf(" (CV %.0f %%)", 100*cv)
			}
		}
		out = append(out, fl)
	}
	return strings.Join(out, "; ")
}

// PointsTable lists every point of a file: ID, params, status, the primary
// metric's median and spread, the effective path and verification.
func PointsTable(f *record.File, tag string) table.Table {
	t := table.Table{Title: "All points" + tag,
		Columns: append([]string{"id", "size", "params", "status", "metric", "median", "min", "p99", "max"}, append(tailColumns, "in-kernel timer", "ran as", "verified; flags")...)}
	t.Right = columnFlags(t.Columns, append([]string{"size", "median", "min", "p99", "max"}, tailColumns...)...)
	t.Trunc = columnFlags(t.Columns, "params")
	t.Long = columnFlags(t.Columns, "status", "verified; flags")
	t.Wide = columnFlags(t.Columns, append([]string{"min", "p99", "max", "in-kernel timer", "ran as"}, tailColumns...)...)
	checks := map[string]map[string]string{} // a copy's points: the reasons by match key
	for p, why := range record.FlagReasons(f.Points) {
		checks[p.MatchKey()] = why
	}
	pts := append([]record.Point(nil), f.Points...)
	sort.SliceStable(pts, func(i, j int) bool {
		if pts[i].ID != pts[j].ID {
			return pts[i].ID < pts[j].ID
		}
		ki, kj := pts[i].Params.KeyWithoutSize(), pts[j].Params.KeyWithoutSize()
		if ki != kj {
			return ki < kj
		}
		return pts[i].Params.Size < pts[j].Params.Size
	})
	for i := range pts {
		p := &pts[i]
		size := ""
		if p.Params.Size > 0 {
			size = units.Bytes(p.Params.Size)
		}
		params := p.Params
		params.Size = 0
		ptext := params.Key()
		if p.Params.Launch != "" { // two rows of one collective differ first by it: it leads, so a cut column keeps it
			params.Launch = ""
			ptext = strings.TrimSpace(p.Params.Launch + " " + params.Key())
		}
		row := []table.Cell{table.Str(p.ID), table.Str(size), table.Str(ptext), table.Str(statusText(p))}
		m := record.PrimaryMetric(p)
		if s, ok := p.Metric(m); ok {
			div, unit, _ := metricScale(m)
			row = append(row, table.Str(MetricUnit(m, unit)), table.Sig(s.Median/div, 4), table.Sig(s.Min/div, 4), table.Sig(s.P99/div, 4), table.Sig(s.Max/div, 4))
		} else {
			row = append(row, table.Str(""), table.Str(""), table.Str(""), table.Str(""), table.Str(""))
		}
		row = append(row, tailCells(p)...)
		row = append(row, table.Str(timerWindowText[p.TimerWindow()]))
		flags := []string{VerifiedText(p)}
		for _, fl := range p.Flags {
			if why := checks[p.MatchKey()][fl]; why != "" {
				fl += ": " + why
			}
			if fl == record.FlagStraggler && p.Straggler != nil {
				fl += " " + p.Straggler.String()
			}
			flags = append(flags, fl)
		}
		if s := RankSpread(p, m); s != "" {
			flags = append(flags, s)
		}
		ranAs := p.Effective
		if p.Pair != nil {
			ranAs += ", " + p.Pair.String()
		}
		if c := p.Clock.String(); c != "" {
			ranAs += ", " + c
		}
		row = append(row, table.Str(ranAs), table.Str(strings.Join(flags, "; ")))
		t.Rows = append(t.Rows, row)
	}
	if c := record.CountTimers(f.Points).String(); c != "" {
		t.Notes = append(t.Notes, c)
	}
	return t
}

// timerWindowText is a point's in-kernel timer in the points table.
var timerWindowText = map[string]string{record.TimerPerIteration: "per iteration", record.TimerSameWindow: "the launch (the events' window)"}

// RankSpread says, beside a figure several PEs timed (the slowest PE's at
// each launch), the median and fastest PE's value of metric: "PEs: median
// 11.2, fastest 10.1 µs" ("" for a point one PE timed).
func RankSpread(p *record.Point, metric string) string {
	med, ok1 := p.RankMetric(metric, p.RankMedian)
	fast, ok2 := p.RankMetric(metric, p.RankFastest)
	if !ok1 || !ok2 {
		return ""
	}
	div, unit, _ := metricScale(metric)
	return fmt.Sprintf("%d PEs, the figure the slowest's: median PE %.4g, fastest PE %.4g %s", len(p.PETimes), med/div, fast/div, MetricUnit(metric, unit))
}

// VerifiedText says how a point was verified: yes, FAILED, why it has
// nothing to check, or that it was not (--no-verify, or a bug).
func VerifiedText(p *record.Point) string {
	switch {
	case p.Verify.Checked && p.Verify.OK:
		return "yes"
	case p.Verify.Checked:
		return fmt.Sprintf("FAILED (%d wrong)", p.Verify.Errors)
	case p.Status != record.StatusOK:
		return ""
	case p.Verify.Unverifiable != "":
		return "unverifiable: " + p.Verify.Unverifiable
	case p.Verify.Detail != "":
		return "no: " + p.Verify.Detail
	}
	return "NOT VERIFIED"
}

func statusText(p *record.Point) string {
	if p.Status == record.StatusOK {
		return "ok"
	}
	return string(p.Status) + ": " + p.Reason
}

// columnFlags marks the named columns.
func columnFlags(cols []string, names ...string) []bool {
	out := make([]bool, len(cols))
	for i, c := range cols {
		for _, n := range names {
			if c == n {
				out[i] = true
			}
		}
	}
	return out
}

// MetricUnit names a metric by its unit where that says it (GB/s for a
// bandwidth, µs for a latency), else metric and unit (busbw GB/s).
func MetricUnit(metric, unit string) string {
	switch metric {
	case record.MetricBandwidth, record.MetricLatency, record.MetricRate:
		return unit
	}
	return metric + " " + unit
}

// sideBySide is one figure's table over several runs: the paper's value, each
// run's measured value (the same selection rule as the single-run table),
// each later run's ratio to the first, and why a run has no value.
func sideBySide(files []*record.File, ref *record.Reference, name string) table.Table {
	names := record.Labels(files)
	base := names[0]
	t := table.Table{Title: tableTitles[name] + ": " + base + " against " + strings.Join(names[1:], ", ")}
	t.Columns = []string{"operation", "path", "paper"}
	t.Columns = append(t.Columns, names...)
	for _, n := range names[1:] {
		t.Columns = append(t.Columns, n+" / "+base)
	}
	t.Columns = append(t.Columns, "status")
	t.Right = make([]bool, len(t.Columns))
	for i := 2; i < len(t.Columns)-1; i++ {
		t.Right[i] = true
	}
	t.Long = columnFlags(t.Columns, "status")
	synthetic := false
	for i := range ref.Rows {
		row := &ref.Rows[i]
		if row.Table != name {
			continue
		}
		where := rowWhere(row)
		div, _, prec := metricScale(row.Metric)
		cells := []table.Cell{table.Str(row.Label), table.Str(where), paperCell(row)}
		picks := make([]Pick, len(files))
		var why []string
		for j, f := range files {
			synthetic = synthetic || f.Header.Synthetic
			picks[j] = Select(f, row)
			if picks[j].Best == nil {
				cells = append(cells, table.Str(""))
				why = append(why, names[j]+": "+picks[j].Status)
			} else {
				cells = append(cells, table.Num(picks[j].Value/div, prec))
			}
		}
		for j := 1; j < len(files); j++ {
			if picks[0].Best != nil && picks[j].Best != nil && picks[0].Value > 0 {
				cells = append(cells, table.Num(picks[j].Value/picks[0].Value, 2))
			} else {
				cells = append(cells, table.Str(""))
			}
		}
		status := "ok"
		if len(why) > 0 {
			status = strings.Join(why, "; ")
			if len(why) == len(files) && allSame(picks) {
				status = picks[0].Status // one reason for every run
			}
		}
		t.Rows = append(t.Rows, append(cells, table.Str(status)))
	}
	t.Notes = append(t.Notes, "each run's value is chosen as in its own table (report FILE); the ratio columns divide each run by "+base+
		" (for latencies below 1 is faster)")
	if synthetic {
		t.Notes = append(t.Notes, "SYNTHETIC data among the runs: not a measurement")
	}
	return t
}

func allSame(p []Pick) bool {
	for _, x := range p[1:] {
		if x.Status != p[0].Status {
			return false
		}
	}
	return true
}

// rowWhere is a reference row's path column: the path, or for collectives
// the intra-/inter-node scope.
func rowWhere(row *record.RefRow) string {
	if row.Scope != "" {
		return row.Scope + "-node"
	}
	return row.Path
}
