// Package plots draws bandwidth-vs-size and latency-vs-size charts from
// results files with gonum/plot. A chart is first built as a Spec (plain
// data: series, axes, reference marks), which is what the golden tests pin;
// Render turns a Spec into PNG or SVG. It reads results only.
package plots

import (
	"fmt"
	"sort"
	"strings"

	"github.com/nvshbench/nvshbench/results"
)

// Point of a series: x is the message size in bytes, y the median, lo/hi the
// min and max over samples (or p10/p90 for latency percentiles), in display units.
type Point struct {
	X  float64 `json:"x"`
	Y  float64 `json:"y"`
	Lo float64 `json:"lo"`
	Hi float64 `json:"hi"`
}

// Series is one curve: one benchmark with fixed parameters, over sizes.
type Series struct {
	ID     string  `json:"id"`   // benchmark ID
	Path   string  `json:"path"` // effective path
	Label  string  `json:"label"`
	Points []Point `json:"points"`
}

// Mark is a horizontal reference line (a published peak).
type Mark struct {
	Label  string  `json:"label"`
	Y      float64 `json:"y"`
	Series int     `json:"series"` // index of the first series it belongs to (drawn in its colour)
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
	Marks  []Mark   `json:"marks,omitempty"`
	Notes  []string `json:"notes,omitempty"`
}

// chartKind is a family of metrics shown on one chart.
type chartKind struct {
	name, title, ylabel, metric string
	div                         float64
	logY                        bool
	refTable                    string
}

var kinds = []chartKind{
	{"bandwidth", "Bandwidth vs message size", "GB/s (1e9 B/s)", results.MetricBandwidth, 1e9, false, "rma"},
	{"latency", "Latency vs message size", "µs", results.MetricLatency, 1e-6, true, "latency"},
	{"allreduce", "AllReduce algorithm bandwidth vs message size", "algbw GB/s", results.MetricAlgBW, 1e9, false, "allreduce"},
}

// Build makes the chart specs for the given files: one chart per metric
// family that has points. Several files are overlaid, their series labelled
// by file; ref adds the published peaks as marks (nil for none).
func Build(files []*results.File, ref *results.Reference) []Spec {
	var out []Spec
	for _, k := range kinds {
		s := Spec{Name: k.name, Title: k.title, XLabel: "message size", YLabel: k.ylabel, LogY: k.logY, Band: "min–max over samples"}
		if k.metric == results.MetricLatency {
			s.Band = "p10–p90 over samples"
		}
		for _, f := range files {
			if f.Header.Synthetic {
				s.Notes = appendOnce(s.Notes, "SYNTHETIC data ("+fileName(f)+"), not a measurement")
			}
			s.Series = append(s.Series, series(f, k, len(files) > 1)...)
		}
		if len(s.Series) == 0 {
			continue
		}
		if k.metric == results.MetricLatency {
			// One chart per family, or the legend hides the curves.
			for _, g := range splitLatency(s) {
				if ref != nil {
					g.Marks = marks(ref, k, g.Series, multiNode(files))
				}
				out = append(out, g)
			}
			continue
		}
		if k.metric != results.MetricLatency && anyL2Resident(files) {
			s.Notes = append(s.Notes, "sizes whose working set fits in L2 measure the cache, not the link")
		}
		if ref != nil {
			s.Marks = marks(ref, k, s.Series, multiNode(files))
		}
		out = append(out, s)
	}
	return out
}

func fileName(f *results.File) string {
	if f.Header.Label != "" {
		return f.Header.Label
	}
	return f.Name
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
func belongs(p *results.Point, k chartKind) bool {
	if _, ok := p.Metrics[k.metric]; !ok {
		return false
	}
	if k.metric == results.MetricAlgBW {
		return true
	}
	return results.PrimaryMetric(p) == k.metric
}

func series(f *results.File, k chartKind, many bool) []Series {
	groups := map[string]*Series{}
	var order []string
	for i := range f.Points {
		p := &f.Points[i]
		if p.Status != results.StatusOK || p.Params.Size <= 0 || !belongs(p, k) {
			continue
		}
		m := p.Metrics[k.metric]
		if m.Median <= 0 || m.Min <= 0 {
			continue // log axes cannot show it
		}
		key := p.ID + " " + p.Params.KeyWithoutSize()
		g, ok := groups[key]
		if !ok {
			label := p.ID + seriesSuffix(p)
			if many {
				label = fileName(f) + ": " + label
			}
			g = &Series{ID: p.ID, Path: p.Effective, Label: label}
			groups[key] = g
			order = append(order, key)
		}
		lo, hi := m.Min, m.Max
		if k.metric == results.MetricLatency {
			lo, hi = m.P10, m.P90
		}
		g.Points = append(g.Points, Point{X: float64(p.Params.Size), Y: m.Median / k.div, Lo: lo / k.div, Hi: hi / k.div})
	}
	sort.Strings(order)
	out := make([]Series, 0, len(order))
	for _, key := range order {
		g := groups[key]
		if len(g.Points) < 2 {
			continue // a launch-sweep point at one size is no curve (report --points lists it)
		}
		sort.Slice(g.Points, func(i, j int) bool { return g.Points[i].X < g.Points[j].X })
		out = append(out, *g)
	}
	return out
}

// seriesSuffix names what distinguishes curves of one benchmark.
func seriesSuffix(p *results.Point) string {
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
	if p.Timer == "globaltimer" {
		parts = append(parts, "in-kernel timer")
	}
	if len(parts) == 0 {
		return ""
	}
	return " (" + strings.Join(parts, ", ") + ")"
}

// marks adds the published value of each reference row whose benchmark IDs
// appear in the chart.
func marks(ref *results.Reference, k chartKind, ss []Series, multinode bool) []Mark {
	var out []Mark
	for i := range ref.Rows {
		r := &ref.Rows[i]
		if r.Table != k.refTable || r.Metric != k.metric || r.NoPaper || (r.Scope == "inter" && !multinode) {
			continue
		}
		idx := -1
		for i, s := range ss {
			if r.MatchesID(s.ID) && (r.Path == "" || r.Path == s.Path || (r.Path == "p2p" && s.Path == "local")) {
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
		out = append(out, Mark{Label: fmt.Sprintf("paper: %s %s%s %s%.3g", r.Label, where, at, bound, r.Value/k.div), Y: r.Value / k.div, Series: idx})
	}
	return out
}

func anyL2Resident(files []*results.File) bool {
	for _, f := range files {
		for i := range f.Points {
			if f.Points[i].L2Resident {
				return true
			}
		}
	}
	return false
}

func multiNode(files []*results.File) bool {
	for _, f := range files {
		if f.Header.Nodes > 1 {
			return true
		}
	}
	return false
}

// latencyFamilies split the latency chart: name suffix, title, ID prefixes.
var latencyFamilies = []struct {
	name, title string
	prefixes    []string
}{
	{"put", "put round trip (put_nbi + quiet)", []string{"latency/put/", "latency/put-signal"}},
	{"get", "get round trip (pointer chase through the peer's memory)", []string{"latency/get/"}},
	{"scalar", "scalar p / g round trip (p + quiet; g pointer chase)", []string{"latency/p", "latency/g"}},
	{"pingpong", "ping-pong ROUND TRIP latency (not halved)", []string{"latency/pingpong/"}},
	{"issue", "ISSUE TIME, not a round trip (blocking put, fence)", []string{"latency/issue/"}},
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
			for _, pre := range fam.prefixes {
				if ser.ID == pre || (strings.HasSuffix(pre, "/") && strings.HasPrefix(ser.ID, pre)) || strings.HasPrefix(ser.ID, pre+"-") {
					g.Series = append(g.Series, ser)
					used[i] = true
					break
				}
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
