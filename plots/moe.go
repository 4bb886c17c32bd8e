package plots

import (
	"fmt"
	"sort"
	"strconv"

	"github.com/nvshbench/nvshbench/record"
	"github.com/nvshbench/nvshbench/record/moe"
)

// moeCharts: the time of a MoE dispatch or combine against the tokens per
// rank, one chart per mode and operation, a curve per implementation (and
// routing, token type, plain or graph where the file has several), and the
// floor (the bytes sent to other GPUs at the link's rate plus one round
// trip) drawn dashed where the file has it.
func moeCharts(files []*record.File) []Spec {
	type key struct{ mode, op string }
	charts := map[key]*Spec{}
	var order []key
	groups := map[string]*Series{}
	var gorder []string
	seriesOf := map[string]key{}
	names := record.Labels(files)
	for fi, f := range files {
		for i := range f.Points {
			p := &f.Points[i]
			r, ok := moe.ParseID(p.ID)
			if !ok || !p.Drawn() {
				continue
			}
			m, ok := p.Metrics[record.MetricLatency]
			tk, _ := strconv.Atoi(p.Params.Extra[moe.ExtraTokens])
			if !ok || tk <= 0 || m.Median <= 0 {
				continue
			}
			k := key{p.Params.Extra[moe.ExtraMode], r.Op}
			if charts[k] == nil {
				charts[k] = &Spec{Name: "moe-" + k.op + "-" + k.mode, XLabel: "tokens per rank", YLabel: "µs per operation", LogY: true, XUnit: "tokens",
					Title: fmt.Sprintf("MoE %s, %s mode: time vs tokens per rank (top-%s of %s experts, hidden %s)", k.op, k.mode,
						p.Params.Extra[moe.ExtraTopK], p.Params.Extra[moe.ExtraExperts], p.Params.Extra[moe.ExtraHidden]),
					Band: "min–max over samples"}
				order = append(order, k)
			}
			if f.Header.Synthetic {
				charts[k].Notes = appendOnce(charts[k].Notes, "SYNTHETIC data ("+names[fi]+"), not a measurement")
			}
			variant := p.Params.Extra[moe.ExtraRouting] + ", " + p.Params.DType
			if p.Params.Mode == "graph" {
				variant += ", graph"
			}
			prefix := ""
			if len(files) > 1 {
				prefix = names[fi] + ": "
			}
			add := func(id, label string, y, lo, hi float64) {
				gk := fmt.Sprint(k) + "|" + id + "|" + label
				g := groups[gk]
				if g == nil {
					g = &Series{ID: id, Path: p.Effective, Label: label}
					groups[gk] = g
					gorder = append(gorder, gk)
					seriesOf[gk] = k
				}
				g.Points = append(g.Points, Point{X: float64(tk), Y: y, Lo: lo, Hi: hi})
			}
			add(p.ID, prefix+r.Impl+" ("+variant+")", m.Median/1e-6, m.Min/1e-6, m.Max/1e-6)
			if fl := p.Values[moe.ValueFloor]; fl > 0 && r.Impl == moe.Impls[0].Name { // the floor once a series: the workload's, from the first implementation's points
				add("floor", prefix+"floor ("+variant+")", fl/1e-6, fl/1e-6, fl/1e-6)
			}
		}
	}
	sort.Strings(gorder)
	for _, gk := range gorder {
		g := groups[gk]
		sort.Slice(g.Points, func(i, j int) bool { return g.Points[i].X < g.Points[j].X })
		if len(g.Points) < 2 {
			continue
		}
		s := charts[seriesOf[gk]]
		s.Series = append(s.Series, *g)
	}
	var out []Spec
	for _, k := range order {
		s := charts[k]
		if len(s.Series) == 0 {
			continue
		}
		n, floor := 0, false
		for i := range s.Series {
			if s.Series[i].ID == "floor" {
				s.Series[i].Color, s.Series[i].Dash, s.Series[i].Shape = "#000000", []float64{4, 3}, 6
				floor = true
				continue
			}
			s.Series[i].Color, s.Series[i].Dash, s.Series[i].Shape = Style(n)
			n++
		}
		if floor { // a one-GPU run sends nothing to another GPU: no floor drawn, none described
			s.Notes = append(s.Notes, "floor: the bytes rank 0 sends to other GPUs at the link's ceiling plus one round trip (the in-run chase)")
		}
		out = append(out, *s)
	}
	return out
}
