package model

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/nvshbench/nvshbench/internal/decide"
	"github.com/nvshbench/nvshbench/plots"
	"github.com/nvshbench/nvshbench/report"
)

func us(s float64) string {
	if math.IsNaN(s) || math.IsInf(s, 0) {
		return ""
	}
	return plots.FormatValue(s * 1e6)
}

func gbps(bps float64) string {
	if math.IsNaN(bps) || math.IsInf(bps, 0) || bps <= 0 {
		return "∞"
	}
	return plots.FormatValue(bps / 1e9)
}

func pct(f float64) string {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return ""
	}
	return fmt.Sprintf("%.0f %%", 100*f)
}

// seriesName is a series' benchmark and the parameters that tell it from
// its neighbours (the PE count, path and launch have their own columns).
func seriesName(s *Series) string {
	var keep []string
	for _, kv := range strings.Fields(s.Params) {
		k, _, _ := strings.Cut(kv, "=")
		switch k {
		case "pes", "path", "launch", "op":
			continue
		}
		keep = append(keep, kv)
	}
	return strings.TrimSpace(s.ID + " " + strings.Join(keep, " "))
}

// FitTable lists every series' fit: one row per segment, or why there is
// none.
func FitTable(fits []*Fit) report.Table {
	t := report.Table{Title: "α–β fits: T(S) = α + S / B per series (robust least squares on relative error; up to three segments)",
		Columns: []string{"file", "series", "PEs", "launch", "sizes", "α µs", "B GB/s", "R²", "worst", "B / link", "B / copy", "α / floor", "launch / α", "note"},
		Right:   []bool{false, false, true, false, false, true, true, true, true, true, true, true, true, false}}
	t.Long = make([]bool, len(t.Columns))
	t.Long[13] = true
	t.Trunc = make([]bool, len(t.Columns))
	t.Trunc[1] = true
	for _, f := range fits {
		base := []report.Cell{report.Str(f.File), report.Str(seriesName(f.Series)), report.Str(fmt.Sprint(f.PEs)), report.Str(f.Launch)}
		if f.NoFit != "" && len(f.Segments) == 0 {
			t.Rows = append(t.Rows, append(base, report.Str(fmt.Sprintf("%d", len(f.Obs))), report.Str(""), report.Str(""), report.Str(""), report.Str(""),
				report.Str(""), report.Str(""), report.Str(""), report.Str(""), report.Str("no fit: "+f.NoFit)))
			continue
		}
		for i, seg := range f.Segments {
			note := ""
			if f.NoFit != "" {
				note = "no fit: " + f.NoFit
			} else if f.CachedOnly(&seg) {
				note = "B from cache-served sizes only: not a link figure"
			}
			if seg.Outlier > 0 {
				note = strings.TrimPrefix(note+"; ", "; ") + fmt.Sprintf("outlier set aside: %s at %s", report.FormatBytes(seg.Outlier), pct(seg.OutlierRes))
			}
			if i > 0 {
				note = strings.TrimSpace("after a switch at " + report.FormatBytes(seg.From) + "; " + note)
				note = strings.TrimSuffix(note, "; ")
			}
			b := seg.Bandwidth()
			ratio := func(v float64) string {
				if v <= 0 || math.IsInf(b, 0) {
					return ""
				}
				return fmt.Sprintf("%.2f", b/v)
			}
			floor, launch := "", ""
			if f.Floor > 0 && seg.Alpha > 0 {
				floor = fmt.Sprintf("%.2f", seg.Alpha/f.Floor)
			}
			if f.Launch0 > 0 && seg.Alpha > 0 && f.Launch == "per-op" && i == 0 {
				launch = pct(math.Min(f.Launch0/seg.Alpha, 1))
			}
			t.Rows = append(t.Rows, append(append([]report.Cell{}, base...),
				report.Str(report.FormatBytes(seg.From)+" – "+report.FormatBytes(seg.To)), report.Str(us(seg.Alpha)), report.Str(gbps(b)),
				report.Str(fmt.Sprintf("%.3f", seg.R2)), report.Str(pct(seg.Worst)), report.Str(ratio(f.Ceiling)), report.Str(ratio(f.CopyRef)),
				report.Str(floor), report.Str(launch), report.Str(note)))
		}
	}
	t.Notes = append(t.Notes,
		"sizes: those measured, within the link and timed by the one timer; a cache-served size stays in (it measures the round trip and the link latency too), and a bandwidth only such sizes give is said in the note",
		fmt.Sprintf("a series splits where one line leaves a residual over %.0f %% (a protocol or algorithm switch), at most %d segments of %d sizes or more; past %.0f %% it has no fit; a segment of %d sizes or more may set one outlier aside (said in the note)", 100*SplitTol, MaxSegments, MinPerSegment, 100*NoFitTol, 2*MinPerSegment),
		"B / link: the path's physical ceiling; B / copy: the best copy reference of the same run; α / floor: the in-run dependent-load chase of the path; launch / α: the run's empty-kernel launch (latency/launch) over α, one launch per operation")
	return t
}

// GuideTables are the guide: per comparison, the sizes each implementation
// wins under the rule (decide), by how much, the ties, and the crossovers;
// cache-served sizes in ranges of their own.
func GuideTables(g Guide) []report.Table {
	var out []report.Table
	for i, c := range g.Comparisons {
		t := report.Table{Title: "Fastest " + c.Pattern + " [" + c.Group + "]: " + strings.Join(c.Impls, " vs "),
			Columns: []string{"sizes", "fastest", "lead over the next", "95 % interval", "served from"},
			Right:   []bool{false, false, true, true, false}}
		for _, r := range c.Ranges() {
			sizes := report.FormatBytes(r.From)
			if r.To != r.From {
				sizes += " – " + report.FormatBytes(r.To)
			}
			if tk := tokensOf(c, r); tk != "" {
				sizes += " (" + tk + " tokens)"
			}
			from := "memory"
			if r.Cached {
				from = "cache"
			}
			t.Rows = append(t.Rows, []report.Cell{report.Str(sizes), report.Str(r.Label), report.Str(span(r.MinLead, r.MaxLead)),
				report.Str(span(r.Lo-1, r.Hi-1)), report.Str(from)})
		}
		for _, x := range c.Crossings {
			if x.FromFits {
				t.Notes = append(t.Notes, fmt.Sprintf("crossover %s → %s at %s (from the two fits; measured between %s and %s)", x.From, x.To, humanBytes(x.Size), report.FormatBytes(x.Lo), report.FormatBytes(x.Hi)))
			} else {
				t.Notes = append(t.Notes, fmt.Sprintf("crossover %s → %s between %s and %s (%s)", x.From, x.To, report.FormatBytes(x.Lo), report.FormatBytes(x.Hi), x.Why))
			}
		}
		for _, s := range c.Same {
			t.Notes = append(t.Notes, s)
		}
		if i == 0 {
			t.Notes = append(t.Notes,
				"fastest: "+g.Rule.Describe(),
				"lead: the next implementation's median time over the fastest's, minus one; 95 % interval: that ratio's (Hodges–Lehmann), minus one, the widest over the range",
				"served from: cache where some implementation's working set may be cache-served: a winner there holds in the cache only, never for larger working sets, and no crossover is drawn from it")
		} else {
			t.Notes = append(t.Notes, "fastest, lead, 95 % interval, served from: as under the first table")
		}
		t.Notes = append(t.Notes, fmt.Sprintf("m = %d sizes: each interval at %.4g %%", c.Family, 100*g.Rule.Level(c.Family)))
		out = append(out, t)
	}
	if len(g.NotCompared) > 0 {
		t := report.Table{Title: "Not compared", Columns: []string{"why"}}
		t.Long = []bool{false}
		for _, n := range g.NotCompared {
			t.Rows = append(t.Rows, []report.Cell{report.Str(n)})
		}
		out = append(out, t)
	}
	return out
}

// span writes two fractions as a percentage range, a decimal below 10 %:
// "4.2 – 17 %", "2.8 %", "" for NaN (too few samples).
func span(lo, hi float64) string {
	if math.IsNaN(lo) || math.IsNaN(hi) {
		return ""
	}
	a, b := leadPct(lo), leadPct(hi)
	if a == b {
		return a + " %"
	}
	return a + " – " + b + " %"
}

func leadPct(f float64) string {
	if math.Abs(f) < 0.1 {
		return strconv.FormatFloat(100*f, 'f', 1, 64)
	}
	return strconv.FormatFloat(100*f, 'f', 0, 64)
}

// humanBytes writes a size that is no power of two with three digits: 1.23 MiB.
func humanBytes(b float64) string {
	units := []string{"B", "KiB", "MiB", "GiB", "TiB"}
	i := 0
	for b >= 1024 && i < len(units)-1 {
		b /= 1024
		i++
	}
	return plots.FormatValue(b) + " " + units[i]
}

func tokensOf(c Comparison, r Range) string {
	var lo, hi int
	for _, row := range c.Rows {
		if row.Size == r.From {
			lo = row.Tokens
		}
		if row.Size == r.To {
			hi = row.Tokens
		}
	}
	switch {
	case lo == 0:
		return ""
	case lo == hi:
		return fmt.Sprint(lo)
	}
	return fmt.Sprintf("%d – %d", lo, hi)
}

// PredictionTable shows the n-GPU predictions beside measurements.
func PredictionTable(models []Model, preds []Prediction) report.Table {
	t := report.Table{Title: "Predicted time per operation on n GPUs of one node, from the 2-PE fits",
		Columns: []string{"collective", "model", "n", "size", "predicted µs", "measured µs", "error"},
		Right:   []bool{false, false, true, true, true, true, true}}
	for _, p := range preds {
		m := ""
		if p.Measured > 0 {
			m = us(p.Measured)
		}
		t.Rows = append(t.Rows, []report.Cell{report.Str(p.Collective), report.Str(p.Model), report.Str(fmt.Sprint(p.N)), report.Str(report.FormatBytes(p.Size)),
			report.Str(us(p.Predicted)), report.Str(m), report.Str(pct(p.Error()))})
	}
	for _, m := range models {
		t.Notes = append(t.Notes, m.Name+" ("+m.Collective+"): "+m.Basis)
	}
	for _, a := range Assumptions {
		t.Notes = append(t.Notes, "assumed: "+a)
	}
	t.Notes = append(t.Notes, "measured: a file of n PEs among the inputs, one launch per operation; error = predicted / measured − 1")
	return t
}

// NICTable shows the paper's inter-node rows predicted from a NIC.
func NICTable(rows []NICRow) report.Table {
	t := report.Table{Title: "The paper's inter-node rows, PREDICTED from a NIC's line rate and this node's round trips (not measured)",
		Columns: []string{"row", "unit", "predicted", "paper", "how"}, Right: []bool{false, false, true, true, false}}
	t.Long = []bool{false, false, false, false, true}
	for _, r := range rows {
		v := ""
		if !math.IsNaN(r.Predicted) {
			v = plots.FormatValue(r.Predicted)
		}
		t.Rows = append(t.Rows, []report.Cell{report.Str(r.Row), report.Str(r.Unit), report.Str(v), report.Str(plots.FormatValue(r.Paper)), report.Str(r.How)})
	}
	t.Notes = append(t.Notes, "a prediction to be measured on a second node: the line rate and the efficiencies are the model's inputs (model --nic-gbps, --ring-efficiency, --fabric-rtt)")
	return t
}

// ChoiceTable shows whether NCCL's own choice was the fastest of the
// algorithms forced in the same run.
func ChoiceTable(cs []Choice) report.Table {
	t := report.Table{Title: "NCCL's choice against its forced algorithms (AllReduce)",
		Columns: []string{"group", "size", "NCCL's choice µs", "fastest forced", "its µs", "NCCL's miss"},
		Right:   []bool{false, true, true, false, true, true}}
	t.Trunc = []bool{true}
	for _, c := range cs {
		miss := "chose well"
		if m := c.Miss(); m > 0.005 {
			miss = pct(m) + " slower"
		}
		t.Rows = append(t.Rows, []report.Cell{report.Str(c.Group), report.Str(report.FormatBytes(c.Size)), report.Str(us(c.Default)), report.Str(c.Best), report.Str(us(c.BestTime)), report.Str(miss)})
	}
	t.Notes = append(t.Notes, "NCCL's choice: collectives/allreduce/nccl; forced: NCCL_ALGO set per communicator (nccl-ring, nccl-tree, nccl-nvls where allowed); within 0.5 % counts as chosen well")
	return t
}

// GuideCharts draws each comparison: size on x, the lead of the fastest
// over the next (%) at each size, a series per winner and one for the ties.
func GuideCharts(g Guide) []plots.Spec {
	var out []plots.Spec
	for i, c := range g.Comparisons {
		s := plots.Spec{Name: fmt.Sprintf("guide-%02d-%s", i+1, strings.NewReplacer(" ", "-", ",", "").Replace(c.Pattern)),
			Title: "Fastest " + c.Pattern + ": the lead over the next, by size", XLabel: "message size", YLabel: "lead over the next (%)",
			Band: "none (a lead, not a spread)", Notes: []string{c.Group, fmt.Sprintf("a winner: a lead of %s or more and a 95 %% interval of the time ratio without 1 (model --guide)", decide.Percent(g.Rule.Margin))}}
		series := map[string]*plots.Series{}
		var order []string
		for _, r := range c.Rows {
			name := r.Winner
			switch {
			case r.Few != "":
				name = "too few samples"
			case r.Tie():
				name = "tie"
			}
			switch {
			case r.Cached && !r.Tie():
				name += " (in cache only)"
			case r.Cached:
				name += " (cache-served)"
			}
			ser, ok := series[name]
			if !ok {
				ser = &plots.Series{ID: name, Label: name}
				series[name] = ser
				order = append(order, name)
			}
			y := math.Max(100*r.Lead, 0.1) // a tie still shows at the axis
			ser.Points = append(ser.Points, plots.Point{X: float64(r.Size), Y: y, Lo: y, Hi: y})
		}
		for j, name := range order {
			ser := series[name]
			ser.Color, ser.Dash, ser.Shape = plots.Style(j)
			s.Series = append(s.Series, *ser)
		}
		out = append(out, s)
	}
	return out
}
