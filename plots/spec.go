// Package plots draws bandwidth-vs-size and latency-vs-size charts from
// results files with gonum/plot. A chart is first built as a Spec (plain
// data: series, axes, reference marks), which is what the golden tests pin;
// Render turns a Spec into PNG or SVG. It reads results only.
package plots

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/nvshbench/nvshbench/internal/ids"
	"github.com/nvshbench/nvshbench/internal/units"
	"github.com/nvshbench/nvshbench/record"
	"github.com/nvshbench/nvshbench/record/persm"
)

// Point of a series: x is the message size in bytes, y the median, lo/hi the
// min and max over samples (or p10/p90 for latency percentiles), in display units.
type Point struct {
	X  float64 `json:"x"`
	Y  float64 `json:"y"`
	Lo float64 `json:"lo"`
	Hi float64 `json:"hi"`
	// Check: the series' shape marks this point (record.FlagCheck): drawn
	// ringed, the caption says what a ring means.
	Check bool `json:"check,omitempty"`
}

// CheckNote is the caption of a chart with ringed points.
const CheckNote = "ringed: a shape check (a latency that falls with size beyond its noise, or a tenfold drop between neighbouring sizes beyond the cache): report --points says why"

// Series is one curve: one benchmark with fixed parameters, over sizes.
// Color and Dash are its style: within one chart no two series share both.
type Series struct {
	ID     string    `json:"id"`   // benchmark ID
	Path   string    `json:"path"` // effective path
	Label  string    `json:"label"`
	Color  string    `json:"color"`          // #rrggbb
	Dash   []float64 `json:"dash,omitempty"` // on/off lengths in points; empty: solid
	Shape  int       `json:"shape"`          // marker shape index
	Points []Point   `json:"points"`
}

// Mark is a horizontal reference line: a published value (drawn in its
// series' colour, dashed), an in-run copy reference (black, dotted) or the
// path's physical link (black, solid).
type Mark struct {
	Label string  `json:"label"`
	Y     float64 `json:"y"`
	// X is the message size a published value was measured at: drawn as a
	// marker there, not a line across every size (0: a line).
	X float64 `json:"x,omitempty"`
	// XMax ends a line at this size (a published range over small
	// messages); 0: across the chart.
	XMax   float64   `json:"x_max,omitempty"`
	Series int       `json:"series"` // index of the first series it belongs to; -1: none
	Color  string    `json:"color"`
	Dash   []float64 `json:"dash"`
}

// Spec is one chart.
type Spec struct {
	Name   string   `json:"name"` // file name without extension
	Title  string   `json:"title"`
	XLabel string   `json:"xlabel"`
	YLabel string   `json:"ylabel"`
	LogY   bool     `json:"log_y"`
	Band   string   `json:"band"` // what the band shows
	Series []Series `json:"series"`
	Marks  []Mark   `json:"marks,omitempty"`  // published values
	Limits []Mark   `json:"limits,omitempty"` // hardware limits measured in the same run
	// L2Edge is the largest message size at which some point of the chart
	// had a working set that fit in L2: sizes up to it are shaded.
	L2Edge float64 `json:"l2_edge,omitempty"`
	// YMax clips the y axis (0: fit the data): cache-answered points far
	// above the link would otherwise flatten every curve that matters.
	YMax float64 `json:"y_max,omitempty"`
	// XUnit names what x counts: "" bytes (a log2 size axis), "tokens".
	XUnit string   `json:"x_unit,omitempty"`
	Notes []string `json:"notes,omitempty"`
}

// palette: ten distinguishable colours (Tableau 10); past ten, the dash
// changes, so colour and dash together never repeat within a chart.
var palette = []string{"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"}

var dashes = [][]float64{nil, {6, 3}, {2, 2}, {8, 3, 2, 3}}

// Style gives series i of a chart its colour, dash and marker.
func Style(i int) (color string, dash []float64, shape int) {
	return palette[i%len(palette)], dashes[(i/len(palette))%len(dashes)], i % 7
}

// chartKind is a family of metrics shown on one chart.
type chartKind struct {
	name, title, ylabel, metric string
	div                         float64
	logY                        bool
	refTable                    string
	// prefixes select the benchmark IDs of the chart ("" prefix: every
	// series no earlier chart of the same metric took); trim is cut from
	// the legend labels.
	prefixes []string
	trim     string
	limits   bool   // draw the copy references and the physical links of its points
	needs    string // drawn only if a series' ID starts with this ("" always)
	launch   string // only points of this launch mode ("" any): a chart never sets fused beside per-op
	// time: the chart shows the time per operation from the samples (a
	// collective's small-message regime, flat zero on a linear algbw chart,
	// on log–log axes).
	time bool
}

// The charts, in order. A series goes on the first chart of its metric
// whose prefixes match it (the paper's Fig. 4 per operation; Fig. 5 the
// AllReduce against NCCL, its variants on their own chart).
var kinds = []chartKind{
	{name: "bandwidth-put", title: "Fig. 4: put bandwidth vs message size", ylabel: "GB/s (1e9 B/s)", metric: record.MetricBandwidth, div: 1e9, refTable: "rma",
		prefixes: []string{"rma/put/", "rma/put-signal/", "rma/st", "rma/nccl-lsa/put/", "rma/nccl-gin/"}, trim: "rma/", limits: true},
	{name: "bandwidth-get", title: "Fig. 4: get bandwidth vs message size", ylabel: "GB/s (1e9 B/s)", metric: record.MetricBandwidth, div: 1e9, refTable: "rma",
		prefixes: []string{"rma/get/", "rma/ld", "rma/nccl-lsa/get/"}, trim: "rma/", limits: true},
	{name: "bandwidth-scalar", title: "Fig. 4: scalar p / g bandwidth vs message size", ylabel: "GB/s (1e9 B/s)", metric: record.MetricBandwidth, div: 1e9, refTable: "rma",
		prefixes: []string{"rma/p", "rma/g"}, trim: "rma/", limits: true},
	{name: "bandwidth-other", title: "Bandwidth vs message size: other operations", ylabel: "GB/s (1e9 B/s)", metric: record.MetricBandwidth, div: 1e9, refTable: "rma",
		prefixes: []string{""}, limits: true},
	{name: "latency", title: "Latency vs message size", ylabel: "µs", metric: record.MetricLatency, div: 1e-6, logY: true, refTable: "latency", prefixes: []string{""}},
	{name: "allreduce", title: "Fig. 5: AllReduce algorithm bandwidth vs message size, NVSHMEM against NCCL, one launch per operation", ylabel: "algbw GB/s", metric: record.MetricAlgBW, div: 1e9, refTable: "allreduce",
		prefixes: []string{"=collectives/allreduce/nvshmem-block", "=collectives/allreduce/nvshmem-stream", "=collectives/allreduce/multicta",
			"=collectives/allreduce/nccl-lsa", "=collectives/allreduce/nccl", "=collectives/allreduce/nccl-ring", "=collectives/allreduce/nccl-nvls"},
		trim: "collectives/allreduce/", launch: record.LaunchPerOp},
	{name: "allreduce-variants", title: "AllReduce algorithm bandwidth vs message size: the other variants, one launch per operation", ylabel: "algbw GB/s", metric: record.MetricAlgBW, div: 1e9, refTable: "allreduce",
		prefixes: []string{"collectives/allreduce/"}, trim: "collectives/allreduce/", launch: record.LaunchPerOp},
	{name: "allreduce-fused", title: "AllReduce algorithm bandwidth vs message size: device kernels with the iterations fused in one launch", ylabel: "algbw GB/s", metric: record.MetricAlgBW, div: 1e9,
		prefixes: []string{"collectives/allreduce/"}, trim: "collectives/allreduce/", launch: record.LaunchFused},
	{name: "collectives-other", title: "Other collectives: algorithm bandwidth vs message size, one launch per operation", ylabel: "algbw GB/s", metric: record.MetricAlgBW, div: 1e9, prefixes: []string{""}, trim: "collectives/", launch: record.LaunchPerOp},
	{name: "collectives-other-fused", title: "Other collectives: algorithm bandwidth vs message size, fused in one launch", ylabel: "algbw GB/s", metric: record.MetricAlgBW, div: 1e9, prefixes: []string{""}, trim: "collectives/", launch: record.LaunchFused},
	// An older file's collectives: their launch mode is unknown, so they are
	// drawn apart from every chart of a known mode.
	{name: "collectives-mode-unknown", title: "Collectives of an older file (launch mode unknown): algorithm bandwidth vs message size", ylabel: "algbw GB/s", metric: record.MetricAlgBW, div: 1e9, prefixes: []string{"collectives/"}, trim: "collectives/", launch: launchUnknown},
	// The same collectives as time per operation on log–log axes: the
	// small messages, where the libraries differ most.
	{name: "allreduce-time", title: "AllReduce time per operation vs message size, one launch per operation", ylabel: "µs per operation", metric: record.MetricLatency, div: 1e-6, logY: true, time: true, refTable: "allreduce-latency",
		prefixes: []string{"collectives/allreduce/"}, trim: "collectives/allreduce/", launch: record.LaunchPerOp},
	{name: "allreduce-time-fused", title: "AllReduce time per operation vs message size, iterations fused in one launch", ylabel: "µs per operation", metric: record.MetricLatency, div: 1e-6, logY: true, time: true,
		prefixes: []string{"collectives/allreduce/"}, trim: "collectives/allreduce/", launch: record.LaunchFused},
	{name: "collectives-time", title: "Other collectives (all-to-all, ...): time per operation vs message size, one launch per operation", ylabel: "µs per operation", metric: record.MetricLatency, div: 1e-6, logY: true, time: true,
		prefixes: []string{"collectives/"}, trim: "collectives/", launch: record.LaunchPerOp},
	{name: "collectives-time-fused", title: "Other collectives (all-to-all, ...): time per operation vs message size, fused in one launch", ylabel: "µs per operation", metric: record.MetricLatency, div: 1e-6, logY: true, time: true,
		prefixes: []string{"collectives/"}, trim: "collectives/", launch: record.LaunchFused},
	// Beyond the paper: NVSHMEM against NCCL's device API, block scope.
	{name: "device-api", title: "Device-initiated put / get: NVSHMEM vs NCCL device API (LSA), block scope", ylabel: "GB/s (1e9 B/s)", metric: record.MetricBandwidth, div: 1e9,
		prefixes: []string{"=rma/put/block", "=rma/nccl-lsa/put/block", "=rma/get/block", "=rma/nccl-lsa/get/block"}, trim: "rma/", limits: true,
		needs: "rma/nccl-lsa/"},
}

// launchUnknown selects the points that record no launch mode.
const launchUnknown = "?"

// launchOf is the point's launch mode as the charts select it.
func launchOf(p *record.Point) string {
	if p.Params.Launch == "" {
		return launchUnknown
	}
	return p.Params.Launch
}

// takes reports whether the chart's prefixes select id, read as
// ids.Chart: "=x" selects x exactly; "x/" every ID under x; else x, x-…
// and x/… (rma/p, not rma/put).
func (k chartKind) takes(id string) bool {
	for _, pre := range k.prefixes {
		if ids.Chart(pre).Match(id) {
			return true
		}
	}
	return false
}

// Build makes the chart specs for the given files: the charts that have
// series. Several files are overlaid, their series labelled by file; ref
// adds the published values as marks (nil for none).
func Build(files []*record.File, ref *record.Reference) []Spec {
	out := append(append(buildKinds(files, ref), moeCharts(files)...), perSMCharts(files)...)
	if note := librariesNote(files); note != "" {
		for i := range out {
			out[i].Notes = append(out[i].Notes, note)
		}
	}
	return out
}

// librariesNote names the NVSHMEM and NCCL versions the files' numbers come
// from, for every chart's caption: one set for all, or each file's where
// they differ ("" where no header names them).
func librariesNote(files []*record.File) string {
	names := record.Labels(files)
	var sets []string
	byFile := make([]string, len(files))
	for i, f := range files {
		var parts []string
		if f.Header.NVSHMEM != "" {
			parts = append(parts, "NVSHMEM "+f.Header.NVSHMEM)
		}
		if f.Header.NCCL != "" {
			parts = append(parts, "NCCL "+f.Header.NCCL)
		}
		byFile[i] = strings.Join(parts, ", ")
		if byFile[i] != "" && !slices.Contains(sets, byFile[i]) {
			sets = append(sets, byFile[i])
		}
	}
	switch {
	case len(sets) == 0:
		return ""
	case len(sets) == 1:
		return "libraries: " + sets[0]
	}
	var each []string
	for i, v := range byFile {
		if v != "" {
			each = append(each, names[i]+": "+v)
		}
	}
	return "libraries: " + strings.Join(each, "; ")
}

func buildKinds(files []*record.File, ref *record.Reference) []Spec {
	var out []Spec
	taken := map[string]bool{} // metric + series key: already on an earlier chart
	names := record.Labels(files)
	for _, k := range kinds {
		s := Spec{Name: k.name, Title: k.title, XLabel: "message size", YLabel: k.ylabel, LogY: k.logY, Band: "min–max over samples"}
		if k.metric == record.MetricLatency {
			s.Band = "p10–p90 over samples"
		}
		exclusive := k.name != "device-api" // the device-API chart repeats series of the put/get charts
		var limits map[string]float64
		for fi, f := range files {
			if f.Header.Synthetic {
				s.Notes = appendOnce(s.Notes, "SYNTHETIC data ("+names[fi]+"), not a measurement")
			}
			ser, lim, edge := series(f, names[fi], k, len(files) > 1, taken, exclusive)
			s.Series = append(s.Series, ser...)
			for id, v := range lim {
				if limits == nil {
					limits = map[string]float64{}
				}
				limits[id] = v
			}
			s.L2Edge = max(s.L2Edge, edge)
		}
		if len(s.Series) == 0 || !anyID(s.Series, k.needs) {
			continue
		}
		for i := range s.Series {
			s.Series[i].Color, s.Series[i].Dash, s.Series[i].Shape = Style(i)
		}
		if k.limits {
			s.Limits = limitMarks(limits, k.div)
		}
		if k.metric == record.MetricLatency && !k.time {
			// Round trips are not cache answers: no L2 shading. One chart
			// per family, or the legend hides the curves.
			s.L2Edge = 0
			for _, g := range splitLatency(s) {
				for i := range g.Series {
					g.Series[i].Color, g.Series[i].Dash, g.Series[i].Shape = Style(i)
				}
				if ref != nil {
					g.Marks = marks(ref, k, g.Series, multiNode(files), pesOf(files))
				}
				if anyCheck(g.Series) {
					g.Notes = append(slices.Clone(g.Notes), CheckNote)
				}
				out = append(out, g)
			}
			continue
		}
		if s.L2Edge > 0 {
			s.Notes = append(s.Notes, "shaded: sizes whose working set fits in L2 measure the cache, not the link")
		}
		if ref != nil && k.refTable != "" {
			s.Marks = marks(ref, k, s.Series, multiNode(files), pesOf(files))
		}
		if anyCheck(s.Series) {
			s.Notes = append(s.Notes, CheckNote)
		}
		clip(&s)
		out = append(out, s)
	}
	return out
}

// anyCheck: some point of the series is ringed.
func anyCheck(ss []Series) bool {
	for _, s := range ss {
		for _, p := range s.Points {
			if p.Check {
				return true
			}
		}
	}
	return false
}

func anyID(ss []Series, prefix string) bool {
	for _, s := range ss {
		if strings.HasPrefix(s.ID, prefix) {
			return true
		}
	}
	return false
}

// limitMarks draws each in-run copy reference once, black and dotted, and
// each physical link (IDs link/*) black and solid.
func limitMarks(limits map[string]float64, div float64) []Mark {
	ids := make([]string, 0, len(limits))
	for id := range limits {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	var out []Mark
	for i, id := range ids {
		v := limits[id] / div
		if strings.HasPrefix(id, "link/") {
			out = append(out, Mark{Label: fmt.Sprintf("physical link: %s %s GB/s", strings.TrimPrefix(id, "link/"), units.Value(v)), Y: v, Series: -1, Color: "#000000"})
			continue
		}
		out = append(out, Mark{Label: fmt.Sprintf("copy reference: %s %s GB/s", strings.TrimPrefix(id, "limit/"), units.Value(v)), Y: v, Series: -1,
			Color: "#000000", Dash: [][]float64{{1, 2}, {4, 2, 1, 2}}[i%2]})
	}
	return out
}

// clip caps the y axis of a linear chart whose cache-answered points rise
// far above everything that measures the link (a get at 1 MiB served by the
// L2, far above the copy reference).
func clip(s *Spec) {
	if s.LogY {
		return
	}
	ref := 0.0 // the highest value that is not a cache answer
	for _, m := range append(append([]Mark{}, s.Marks...), s.Limits...) {
		ref = max(ref, m.Y)
	}
	top := 0.0
	for _, ser := range s.Series {
		for _, p := range ser.Points {
			top = max(top, p.Hi)
			if p.X > s.L2Edge {
				ref = max(ref, p.Hi)
			}
		}
	}
	if ref > 0 && top > 1.5*ref {
		s.YMax = 1.25 * ref
		s.Notes = append(s.Notes, fmt.Sprintf("y axis cut at %s: L2-resident points above it are off the chart (report --points lists them)", units.Value(s.YMax)))
	}
}

func appendOnce(s []string, v string) []string {
	for _, x := range s {
		if x == v {
			return s
		}
	}
	return append(s, v)
}

// which metric a point contributes to which chart: a point goes on the
// chart of its primary metric only (latency points carry bytes but are not
// bandwidth curves), except collectives whose algbw is charted.
func belongs(p *record.Point, k chartKind) bool {
	if k.time {
		return strings.HasPrefix(p.ID, "collectives/") && len(p.Samples) > 0
	}
	if _, ok := p.Metrics[k.metric]; !ok {
		return false
	}
	if k.metric == record.MetricAlgBW {
		return true
	}
	return record.PrimaryMetric(p) == k.metric
}

// series collects the file's curves for chart k (the file labelled name) (series other charts took
// are skipped when exclusive), the in-run limits of their points (limit ID
// → B/s) and the largest L2-resident size.
func series(f *record.File, name string, k chartKind, many bool, taken map[string]bool, exclusive bool) ([]Series, map[string]float64, float64) {
	groups := map[string]*Series{}
	var order []string
	limits := map[string]float64{}
	edge := 0.0
	for i := range f.Points {
		p := &f.Points[i]
		if !p.Drawn() || p.Params.Size <= 0 || !belongs(p, k) || !k.takes(p.ID) || (k.launch != "" && launchOf(p) != k.launch) ||
			strings.HasPrefix(p.ID, "moe/") || strings.HasPrefix(p.ID, persm.Suite+"/") {
			continue // a point above its link or an older file's second timer is never drawn; MoE and bytes per SM have their own charts
		}
		m := p.Metrics[k.metric]
		if k.time {
			m = record.Summarize(p.Samples, record.UnitSeconds)
		}
		if m.Median <= 0 || m.Min <= 0 {
			continue // log axes cannot show it
		}
		key := p.ID + " " + p.Params.KeyWithoutSize()
		tk := takenKey(k) + " " + name + " " + key
		if exclusive && taken[tk] {
			continue
		}
		g, ok := groups[key]
		if !ok {
			label := strings.TrimPrefix(p.ID, k.trim) + seriesSuffix(p)
			if many {
				label = name + ": " + label
			}
			g = &Series{ID: p.ID, Path: p.Effective, Label: label}
			groups[key] = g
			order = append(order, key)
		}
		lo, hi := m.Min, m.Max
		if k.metric == record.MetricLatency {
			lo, hi = m.P10, m.P90
			if kt := p.KernelTimer; kt != nil && kt.N > 0 {
				lo, hi = kt.P10, kt.P90 // the in-kernel spread of the same launches
			}
		}
		g.Points = append(g.Points, Point{X: float64(p.Params.Size), Y: m.Median / k.div, Lo: lo / k.div, Hi: hi / k.div, Check: p.Has(record.FlagCheck)})
	}
	sort.Strings(order)
	out := make([]Series, 0, len(order))
	for _, key := range order {
		g := groups[key]
		if len(g.Points) < 2 {
			continue // a launch-sweep point at one size is no curve (report --points lists it)
		}
		if exclusive {
			taken[takenKey(k)+" "+name+" "+key] = true
		}
		sort.Slice(g.Points, func(i, j int) bool { return g.Points[i].X < g.Points[j].X })
		out = append(out, *g)
	}
	// What the chosen curves' points say about limits and L2.
	for i := range f.Points {
		p := &f.Points[i]
		if p.Status != record.StatusOK || !k.takes(p.ID) || !belongs(p, k) {
			continue
		}
		if _, ok := groups[p.ID+" "+p.Params.KeyWithoutSize()]; !ok {
			continue
		}
		if p.Limit != nil && p.Limit.Value > 0 {
			limits[p.Limit.ID] = p.Limit.Value
		}
		if p.Ceiling != nil && p.Ceiling.Value > 0 {
			limits[p.Ceiling.ID] = p.Ceiling.Value
		}
		if p.L2Resident {
			edge = max(edge, float64(p.Params.Size))
		}
	}
	return out, limits, edge
}

// takenKey: a series appears once per metric family (time charts apart).
func takenKey(k chartKind) string {
	if k.time {
		return "time"
	}
	return k.metric
}

// seriesSuffix names what distinguishes curves of one benchmark.
func seriesSuffix(p *record.Point) string {
	var parts []string
	if p.Effective != "" {
		parts = append(parts, p.Effective)
	}
	if p.Params.CTAs > 0 {
		parts = append(parts, fmt.Sprintf("%dx%d", p.Params.CTAs, p.Params.Threads))
	}
	for _, v := range []string{p.Params.Mode, p.Params.Dir, p.Params.DType} {
		if v != "" && v != "uni" {
			parts = append(parts, v)
		}
	}
	if p.Params.Launch != "" {
		parts = append(parts, p.Params.Launch)
	}
	if len(parts) == 0 {
		return ""
	}
	return " (" + strings.Join(parts, ", ") + ")"
}

// marks adds the published value of each reference row whose benchmark IDs
// appear in the chart.
func marks(ref *record.Reference, k chartKind, ss []Series, multinode bool, pes []int) []Mark {
	var out []Mark
	for i := range ref.Rows {
		r := &ref.Rows[i]
		if r.Table != k.refTable || r.Metric != k.metric || r.NoPaper || (r.Scope == "inter" && !multinode) {
			continue
		}
		if r.PaperPEs > 0 && (len(pes) != 1 || pes[0] != r.PaperPEs) {
			continue // another GPU count: not comparable, not drawn beside it (the report says so)
		}
		idx := -1
		for i, s := range ss {
			// A published link figure is drawn beside the same path only:
			// never beside a one-GPU run's same-GPU copies (path local).
			if r.MatchesID(s.ID) && (r.Path == "" || r.Path == s.Path) {
				idx = i
				break
			}
		}
		if idx < 0 {
			continue
		}
		where := r.Path
		if r.Scope != "" {
			where = r.Scope
		}
		bound := ""
		if r.Bound == "lt" {
			bound = "< "
		}
		at := ""
		if r.Size > 0 {
			at = fmt.Sprintf(" at %d B", r.Size)
		}
		if r.Agg == "range" {
			label := fmt.Sprintf("paper: %s %s %s–%s, sizes up to %s", r.Label, where, units.Value(r.Value/k.div), units.Value(r.Hi/k.div), units.Bytes(r.MaxSize))
			out = append(out, Mark{Label: label, Y: r.Value / k.div, XMax: float64(r.MaxSize), Series: idx, Color: ss[idx].Color, Dash: []float64{6, 3}},
				Mark{Y: r.Hi / k.div, XMax: float64(r.MaxSize), Series: idx, Color: ss[idx].Color, Dash: []float64{6, 3}})
			continue
		}
		out = append(out, Mark{Label: fmt.Sprintf("paper: %s %s%s %s%s", r.Label, where, at, bound, units.Value(r.Value/k.div)), Y: r.Value / k.div, X: float64(r.Size), Series: idx,
			Color: ss[idx].Color, Dash: []float64{6, 3}})
	}
	return out
}

// pesOf lists the files' PE counts, once each.
func pesOf(files []*record.File) []int {
	var out []int
	for _, f := range files {
		if !slices.Contains(out, f.Header.PEs) {
			out = append(out, f.Header.PEs)
		}
	}
	return out
}

func anyL2Resident(files []*record.File) bool {
	for _, f := range files {
		for i := range f.Points {
			if f.Points[i].L2Resident {
				return true
			}
		}
	}
	return false
}

func multiNode(files []*record.File) bool {
	for _, f := range files {
		if f.Header.Nodes > 1 {
			return true
		}
	}
	return false
}

// latencyFamilies split the latency chart: name suffix, title, the IDs.
var latencyFamilies = []struct {
	name, title string
	ids         ids.Selector
}{
	{"put", "put round trip (put_nbi + quiet; NCCL LSA: stores + fence)", ids.Any(ids.Under("latency/put/"), ids.Variants("latency/put-signal"), ids.Under("latency/nccl-lsa/put/"))},
	{"get", "get round trip (pointer chase through the peer's memory)", ids.Any(ids.Under("latency/get/"), ids.Under("latency/nccl-lsa/get/"))},
	{"scalar", "scalar p / g round trip (p + quiet; g pointer chase)", ids.Any(ids.Variants("latency/p"), ids.Variants("latency/g"))},
	{"pingpong", "ping-pong ROUND TRIP latency (not halved)", ids.Under("latency/pingpong/")},
	{"issue", "ISSUE TIME, not a round trip (blocking put, fence)", ids.Under("latency/issue/")},
}

func splitLatency(s Spec) []Spec {
	var out []Spec
	used := map[int]bool{}
	for _, fam := range latencyFamilies {
		g := s
		g.Name, g.Title, g.Series = "latency-"+fam.name, "Latency vs message size: "+fam.title, nil
		for i, ser := range s.Series {
			if used[i] {
				continue
			}
			if fam.ids.Match(ser.ID) {
				g.Series = append(g.Series, ser)
				used[i] = true
			}
		}
		if len(g.Series) > 0 {
			out = append(out, g)
		}
	}
	rest := s
	rest.Series = nil
	for i, ser := range s.Series {
		if !used[i] {
			rest.Series = append(rest.Series, ser)
		}
	}
	if len(rest.Series) > 0 {
		rest.Name, rest.Title = "latency-other", "Latency vs message size: other operations"
		out = append(out, rest)
	}
	return out
}
