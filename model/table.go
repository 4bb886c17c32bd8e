package model

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/nvshbench/nvshbench/internal/decide"
	"github.com/nvshbench/nvshbench/internal/table"
	"github.com/nvshbench/nvshbench/internal/units"
	"github.com/nvshbench/nvshbench/plots"
	"github.com/nvshbench/nvshbench/record"
)

func us(s float64) string {
	if math.IsNaN(s) || math.IsInf(s, 0) {
		return ""
	}
	return units.Value(s * 1e6)
}

func gbps(bps float64) string {
	if math.IsNaN(bps) || math.IsInf(bps, 0) || bps <= 0 {
		return "∞"
	}
	return units.Value(bps / 1e9)
}

func pct(f float64) string {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return ""
	}
	return fmt.Sprintf("%.0f %%", 100*f)
}

// cell is a number shown as text: JSON and CSV get the number.
func cell(text string, v float64) table.Cell {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return table.Str("")
	}
	return table.Cell{Text: text, Num: &v}
}

// usCell, gbpsCell and pctCell are numeric cells in µs, GB/s and percent.
func usCell(s float64) table.Cell   { return cell(us(s), s*1e6) }
func gbpsCell(b float64) table.Cell { return cell(units.Value(b/1e9), b/1e9) }
func pctCell(f float64) table.Cell {
	return cell(strconv.FormatFloat(math.Round(100*f)+0, 'f', 0, 64), 100*f) // +0: never "-0"
}
func numCell(v float64, prec int) table.Cell {
	return cell(strconv.FormatFloat(v, 'f', prec, 64), v)
}

// distinguishing lists, per series, the parameters that tell it from the
// other series of its benchmark in its file (the rest say nothing): the
// PE count, path and launch mode have columns of their own.
func distinguishing(fits []*Fit) map[*Series]string {
	byID := map[string][]*Series{}
	for _, f := range fits {
		k := strconv.Itoa(f.file) + " " + f.ID
		byID[k] = append(byID[k], f.Series)
	}
	out := map[*Series]string{}
	for _, ss := range byID {
		vals, has := map[string]map[string]bool{}, map[string]int{}
		for _, s := range ss {
			for _, kv := range strings.Fields(s.Params) {
				k, v, _ := strings.Cut(kv, "=")
				if vals[k] == nil {
					vals[k] = map[string]bool{}
				}
				vals[k][v] = true
				has[k]++
			}
		}
		for _, s := range ss {
			var keep []string
			for _, kv := range strings.Fields(s.Params) {
				k, _, _ := strings.Cut(kv, "=")
				switch k {
				case "pes", "path", "launch":
					continue
				}
				if len(vals[k]) > 1 || has[k] < len(ss) {
					keep = append(keep, kv)
				}
			}
			out[s] = strings.Join(keep, " ")
		}
	}
	return out
}

// FitTables lists every series' fit, a table per file and family of
// benchmarks (rma, latency, collectives; MoE over tokens): a row per
// segment with what it determines, or why there is no fit.
func FitTables(fits []*Fit) []table.Table {
	var out []table.Table
	params := distinguishing(fits)
	type key struct {
		file   int
		family string
	}
	var order []key
	groups := map[key][]*Fit{}
	for _, f := range fits {
		family, _, _ := strings.Cut(f.ID, "/")
		k := key{f.file, family}
		if _, ok := groups[k]; !ok {
			order = append(order, k)
		}
		groups[k] = append(groups[k], f)
	}
	sort.SliceStable(order, func(i, j int) bool { return order[i].file < order[j].file })
	for i, k := range order {
		t := fitTable(groups[k], params, k.family)
		if i > 0 && order[i-1].file == k.file && groups[order[i-1]][0].Axis == groups[k][0].Axis {
			t.Notes = []string{"the rules: as under the first table of " + groups[k][0].File}
		}
		out = append(out, t)
	}
	return out
}

// FitSummary counts the fits of each file and family: the series, those
// fitted, those whose fit determines both terms (α and B; MoE: a and c)
// in some segment, and those with no fit (FitTables shows each and why).
func FitSummary(fits []*Fit) table.Table {
	t := table.Table{Title: "α–β fits: series per file and family (model --detail: each, segment by segment, and why a fit is missing)",
		Columns: []string{"file", "GPUs", "family", "series", "fitted", "both terms", "no fit"},
		Right:   []bool{false, false, false, true, true, true, true}}
	type key struct {
		file   int
		family string
	}
	var order []key
	count := map[key]*[4]int{}
	name := map[key][2]string{}
	for _, f := range fits {
		family, _, _ := strings.Cut(f.ID, "/")
		k := key{f.file, family}
		if count[k] == nil {
			order = append(order, k)
			count[k] = &[4]int{}
			name[k] = [2]string{f.File, gpuName(f.header)}
		}
		n := count[k]
		n[0]++
		if f.NoFit != "" || len(f.Segments) == 0 {
			n[3]++
			continue
		}
		n[1]++
		for _, seg := range f.Segments {
			if seg.NoAlpha == "" && seg.NoB == "" {
				n[2]++
				break
			}
		}
	}
	sort.SliceStable(order, func(i, j int) bool { return order[i].file < order[j].file })
	for _, k := range order {
		n := count[k]
		t.Rows = append(t.Rows, []table.Cell{table.Str(name[k][0]), table.Str(name[k][1]), table.Str(k.family),
			numCell(float64(n[0]), 0), numCell(float64(n[1]), 0), numCell(float64(n[2]), 0), numCell(float64(n[3]), 0)})
	}
	t.Notes = append(t.Notes, fmt.Sprintf("fitted: up to %d lines follow every size within %.0f %%; both terms: the fit determines α and B (MoE: a and c) in some segment: positive, %d standard errors or more from zero, %.0f %% of the time or more", MaxSegments, 100*NoFitTol, MinT, 100*MinShare))
	return t
}

func fitTable(fits []*Fit, params map[*Series]string, family string) table.Table {
	f0 := fits[0]
	axis, pes := f0.Axis, f0.header.PEs
	title := fmt.Sprintf("α–β fits of %s (%s, %s), %s/…: T(S) = α + S / B per series", f0.File, gpuName(f0.header), plural(pes, "PE"), family)
	cols := []string{"series", "params", "PEs", "launch", "sizes", "α µs", "B GB/s", "worst %", "note",
		"id", "R²", "α t", "B t", "from bytes", "to bytes", "B / link", "B / copy", "α / floor", "launch / α"}
	if axis == Tokens {
		title = fmt.Sprintf("MoE fits of %s (%s, %s), %s/…: T = a + tokens · c per series, over the tokens per rank", f0.File, gpuName(f0.header), plural(pes, "PE"), family)
		cols = []string{"series", "params", "PEs", "launch", "tokens", "a µs", "c ns/token", "worst %", "note",
			"id", "R²", "a t", "c t", "from tokens", "to tokens"}
	}
	t := table.Table{Title: title, Columns: cols, Right: make([]bool, len(cols))}
	t.Wide, t.Long = make([]bool, len(cols)), make([]bool, len(cols))
	for i, c := range cols {
		t.Right[i] = i == 2 || i >= 5 && c != "note" && c != "id"
		t.Wide[i] = i >= 9
	}
	t.Long[8] = true
	for _, f := range fits {
		name := []table.Cell{table.Str(strings.TrimPrefix(f.ID, family+"/")), table.Str(params[f.Series]), table.Str(""), table.Str(f.Launch)}
		if f.PEs != pes {
			name[2] = numCell(float64(f.PEs), 0)
		}
		if len(f.Segments) == 0 {
			n := fmt.Sprintf("%d sizes", len(f.Obs))
			switch {
			case axis == Tokens:
				n = fmt.Sprintf("%d counts", len(f.Obs))
			case len(f.Obs) == 1:
				n = "1 size"
			}
			row := append(name, table.Str(n), table.Str(""), table.Str(""), table.Str(""), table.Str("no fit: "+f.NoFit), table.Str(f.ID))
			t.Rows = append(t.Rows, row)
			continue
		}
		for i := range f.Segments {
			seg := &f.Segments[i]
			var note []string
			switch {
			case f.NoFit != "":
				note = append(note, "no fit: "+f.NoFit)
			default:
				if seg.NoAlpha != "" {
					note = append(note, "no α: "+seg.NoAlpha)
				}
				if seg.NoB != "" {
					note = append(note, "no B: "+seg.NoB)
				} else if !f.MemoryB(seg) && axis == Bytes {
					note = append(note, "B from cache-served sizes: not a link figure, never used for a prediction")
				}
			}
			if seg.Outlier > 0 {
				note = append(note, fmt.Sprintf("outlier set aside: %s at %s", axis.Format(float64(seg.Outlier)), pct(seg.OutlierRes)))
			}
			known := f.NoFit == ""
			alpha, b := table.Str(""), table.Str("")
			if known && seg.NoAlpha == "" {
				alpha = usCell(seg.Alpha)
			}
			if known && seg.NoB == "" {
				if axis == Tokens {
					b = cell(units.Value(seg.Beta*1e9), seg.Beta*1e9)
				} else {
					b = gbpsCell(seg.Bandwidth())
				}
			}
			span := units.Bytes(seg.From) + " – " + units.Bytes(seg.To)
			if axis == Tokens {
				span = fmt.Sprintf("%d – %d", seg.From, seg.To)
			}
			row := append(append([]table.Cell{}, name...), table.Str(span), alpha, b, pctCell(seg.Worst), table.Str(strings.Join(note, "; ")),
				table.Str(f.ID), numCell(seg.R2, 3), numCell(seg.AlphaT, 1), numCell(seg.BetaT, 1), numCell(float64(seg.From), 0), numCell(float64(seg.To), 0))
			if axis == Bytes {
				ratio := func(v float64) table.Cell {
					if v <= 0 || b.Num == nil {
						return table.Str("")
					}
					return numCell(seg.Bandwidth()/v, 2)
				}
				floor, launch := table.Str(""), table.Str("")
				if f.Floor > 0 && alpha.Num != nil {
					floor = numCell(seg.Alpha/f.Floor, 2)
				}
				if f.Launch0 > 0 && alpha.Num != nil && f.Launch == record.LaunchPerOp && i == 0 {
					launch = pctCell(math.Min(f.Launch0/seg.Alpha, 1))
				}
				row = append(row, ratio(f.Ceiling), ratio(f.CopyRef), floor, launch)
			}
			t.Rows = append(t.Rows, row)
		}
	}
	what := "sizes"
	if axis == Tokens {
		what = "token counts"
	}
	t.Notes = append(t.Notes,
		fmt.Sprintf("a segment holds %d %s or more spanning %d× or more; a series splits where one line leaves a residual over %.0f %% (a protocol or algorithm switch: a row per segment), at most %d segments; past %.0f %% it has no fit; a segment of %d or more may set one outlier aside, where its neighbours were measured within %d× of it", MinPerSegment, what, MinSpan, 100*SplitTol, MaxSegments, 100*NoFitTol, 2*MinPerSegment, OutlierGap),
		fmt.Sprintf("α and B are shown where the segment determines them: positive, %d standard errors or more from zero, and %.0f %% or more of the time at the segment's smallest (α) or largest (S/B) point; else the note says why", MinT, 100*MinShare),
	)
	if axis == Bytes {
		t.Notes = append(t.Notes,
			"a cache-served size stays in (it measures the round trip and the link latency too); a B is a link figure, and used for a prediction, only where two or more of its sizes are memory-served and the largest of them is bandwidth-bound",
			"--wide adds B / link (the path's physical ceiling), B / copy (the best copy reference of the same run), α / floor (the in-run dependent-load chase), launch / α (the run's empty-kernel launch over α), R², the t values, and the sizes in bytes")
	} else {
		t.Notes = append(t.Notes, "a: the fixed cost of one operation; c: the cost of each token per rank; crossovers between implementations are solved in tokens")
	}
	return t
}

// plural writes a count and its noun: "1 PE", "2 PEs".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// gpuName names a file's GPUs: "2 × NVIDIA H200".
func gpuName(h *record.Header) string {
	if h == nil || len(h.GPUs) == 0 {
		return "GPUs not recorded"
	}
	return fmt.Sprintf("%d × %s", len(h.GPUs), DomainOf(h).GPU)
}

// GuideTables are the guide, a table per question: a pattern's
// comparisons of one file and setup, a row per range of sizes of each
// (the launch shapes of a sweep, the scopes, the launch modes, MoE's
// configurations), the paper's launch first. Each range: the sizes the
// fastest wins under the rule (decide), by how much, the ties, the sizes
// not judged and why; crossovers and what ran the same code under the
// table, the rule's notes once, under the first.
func GuideTables(g Guide) []table.Table { return guideTables(g, false) }

// GuideSummary is the guide with each launch sweep's shapes of one size
// (all but the paper's) said in a note under their table: their winners,
// how many shapes each and by how much (GuideTables shows each).
func GuideSummary(g Guide) []table.Table { return guideTables(g, true) }

func guideTables(g Guide, summary bool) []table.Table {
	type question struct {
		file         int
		pattern, key string
	}
	var order []question
	asked := map[question][]*Comparison{}
	for i := range g.Comparisons {
		c := &g.Comparisons[i]
		q := question{c.file, c.Pattern, c.key.tableParts().String()}
		if _, ok := asked[q]; !ok {
			order = append(order, q)
		}
		asked[q] = append(asked[q], c)
	}
	var out []table.Table
	for i, q := range order {
		t := guideTable(asked[q], summary)
		if i == 0 {
			t.Notes = append(t.Notes,
				"fastest: "+g.Rule.Describe(),
				"lead: the next implementation's median time over the fastest's, minus one; 95 % interval: that ratio's (Hodges–Lehmann), minus one, the widest over the range; m: the sizes of the row's series judged together",
				"not judged: no verdict rests on a point that is no figure of the link (cache-served, above the physical link) or that its record marks for a second look (noisy, timers disagree, above the copy reference, below the floor, at the memory ceiling, check, low clock): such a size names no one, draws no crossover and is not one of the m sizes",
				"served from: cache where some implementation's working set may be cache-served (not judged: the cache's figure)")
		}
		out = append(out, t)
	}
	if len(g.NotCompared) > 0 {
		t := table.Table{Title: "Not compared", Columns: []string{"why"}}
		t.Long = []bool{false}
		for _, n := range g.NotCompared {
			t.Rows = append(t.Rows, []table.Cell{table.Str(n)})
		}
		out = append(out, t)
	}
	return out
}

// paperShape is the paper's launch of its bandwidth rows (CTAs, threads).
var paperShape = func() [2]int {
	for _, r := range record.Paper().Rows {
		if r.CTAs > 0 {
			return [2]int{r.CTAs, r.Threads}
		}
	}
	return [2]int{}
}()

// guideTable is one question: comparisons of one pattern that share a
// file and the key's table parts. Their row parts that every one shares
// join the title; the others are the first column, a row per range.
func guideTable(cs []*Comparison, summary bool) table.Table {
	cs = append([]*Comparison(nil), cs...)
	rank := func(c *Comparison) []int { // no launch shape, the paper's, then by CTAs and threads; scopes in order
		r := []int{2, c.shape[0], c.shape[1], 0}
		switch c.shape {
		case [2]int{}:
			r[0] = 0
		case paperShape:
			r[0] = 1
		}
		for _, p := range c.key {
			if p.name == "scope" {
				r[3] = slices.Index(scopes, p.value)
			}
		}
		return r
	}
	sort.SliceStable(cs, func(i, j int) bool { return slices.Compare(rank(cs[i]), rank(cs[j])) < 0 })
	var swept []*Comparison
	if summary {
		cs, swept = sweep(cs)
	}
	// The row parts' names, and which of them tell the comparisons apart.
	var names []string
	values := map[string]map[string]bool{}
	for _, c := range cs {
		for _, p := range c.key {
			if p.name == "" {
				continue
			}
			if values[p.name] == nil {
				names = append(names, p.name)
				values[p.name] = map[string]bool{}
			}
			values[p.name][p.value] = true
		}
	}
	varies := map[string]bool{}
	var column []string
	for _, n := range names {
		has := 0
		for _, c := range cs {
			for _, p := range c.key {
				if p.name == n {
					has++
				}
			}
		}
		if len(values[n]) > 1 || has < len(cs) {
			varies[n] = true
			column = append(column, n)
		}
	}
	var title key // the parts every comparison shares, in the key's order
	for _, p := range cs[0].key {
		if p.name == "" || !varies[p.name] {
			title = append(title, p)
		}
	}
	var impls []string
	for _, c := range cs {
		for _, im := range c.Impls {
			if !slices.Contains(impls, im) {
				impls = append(impls, im)
			}
		}
	}
	t := table.Table{Title: "Fastest " + cs[0].Pattern + " [" + title.String() + "]: " + strings.Join(impls, " vs "),
		Columns: []string{strings.Join(column, " "), "sizes", "fastest", "lead", "95 % interval", "served from", "m"},
		Right:   []bool{false, false, false, true, true, false, true}}
	first := 0 // the case column, where cases differ
	if len(column) == 0 {
		first = 1
	}
	t.Columns, t.Right = t.Columns[first:], t.Right[first:]
	cases := make([]string, len(cs))
	var notes []string
	said := map[string][]string{} // a note → the cases it was said of
	rows := make([][][]table.Cell, len(cs))
	in := map[string]int{} // a row's text but its case → how many cases have it
	for i, c := range cs {
		var cell []string
		for _, p := range c.key {
			switch {
			case !varies[p.name]:
			case p.name == "launch" && c.shape == paperShape:
				cell = append(cell, p.value+" (paper)")
			default:
				cell = append(cell, p.value)
			}
		}
		cases[i] = strings.Join(cell, " ")
		for _, r := range c.Ranges() {
			sizes := units.Bytes(r.From)
			if r.To != r.From {
				sizes += " – " + units.Bytes(r.To)
			}
			if tk := tokensOf(*c, r); tk != "" {
				sizes = tk + " tokens"
			}
			from := "memory"
			if r.Cached {
				from = "cache"
			}
			row := []table.Cell{table.Str(cases[i]), table.Str(sizes), table.Str(r.Label), table.Str(span(r.MinLead, r.MaxLead)),
				table.Str(span(r.Lo-1, r.Hi-1)), table.Str(from), numCell(float64(c.Family), 0)}
			rows[i] = append(rows[i], row)
			in[rowText(row)]++
		}
		at := func(size int64) string { // a measured size as the rows say it: MoE's in tokens
			for _, r := range c.Rows {
				if r.Size == size && r.Tokens > 0 {
					return fmt.Sprintf("%d tokens", r.Tokens)
				}
			}
			return units.Bytes(size)
		}
		var own []string
		for _, x := range c.Crossings {
			if x.FromFits {
				own = append(own, fmt.Sprintf("crossover %s → %s at %s (from the two fits; measured between %s and %s)", x.From, x.To, x.Axis.Format(x.Size), at(x.Lo), at(x.Hi)))
			} else {
				own = append(own, fmt.Sprintf("crossover %s → %s between %s and %s (%s)", x.From, x.To, at(x.Lo), at(x.Hi), x.Why))
			}
		}
		own = append(append(append(own, c.Same...), c.Left...), c.note)
		for _, n := range own {
			if n == "" {
				continue
			}
			if _, ok := said[n]; !ok {
				notes = append(notes, n)
			}
			said[n] = append(said[n], cases[i])
		}
	}
	// A range every case has alike (the sizes a cache served) is one row.
	done := map[string]bool{}
	for i := range cs {
		for _, row := range rows[i] {
			k := rowText(row)
			switch {
			case len(cs) == 1 || in[k] < len(cs):
				t.Rows = append(t.Rows, row[first:])
			case !done[k]:
				done[k] = true
				t.Rows = append(t.Rows, append([]table.Cell{table.Str("all")}, row[1:]...)[first:])
			}
		}
	}
	for _, n := range notes {
		if of := said[n]; len(column) > 0 && len(of) < len(cs) {
			n = strings.Join(of, ", ") + ": " + n // said of some rows only
		}
		t.Notes = append(t.Notes, n)
	}
	if len(swept) > 0 {
		t.Notes = append(t.Notes, sweptNote(swept))
	}
	return t
}

// sweep splits a question's comparisons into those a summary shows and a
// launch sweep's: a launch shape other than the paper's measured at one
// size, where some comparison of the question is not one.
func sweep(cs []*Comparison) (shown, swept []*Comparison) {
	for _, c := range cs {
		if c.shape != [2]int{} && c.shape != paperShape && len(c.Rows) == 1 {
			swept = append(swept, c)
		} else {
			shown = append(shown, c)
		}
	}
	if len(shown) == 0 {
		return swept, nil
	}
	return shown, swept
}

// sweptNote says a launch sweep's comparisons in a line: each verdict,
// at how many shapes (named where three or fewer), the winners' leads and
// why shapes were not judged.
func sweptNote(cs []*Comparison) string {
	type verdict struct {
		name   string
		shapes []string
		lo, hi float64
		why    []string // not judged: why
		rank   int      // winners first, then ties, too few samples, not judged
	}
	var vs []*verdict
	by := map[string]*verdict{}
	sizes := map[int64]bool{}
	for _, c := range cs {
		r := c.Rows[0]
		sizes[r.Size] = true
		name, rank := r.Winner, 0
		switch {
		case r.NotJudged != "":
			name, rank = "not judged", 3
		case r.Few != "":
			name, rank = "too few samples", 2
		case r.Tie():
			name, rank = "a tie", 1
		}
		v := by[name]
		if v == nil {
			v = &verdict{name: name, lo: r.Lead, hi: r.Lead, rank: rank}
			by[name] = v
			vs = append(vs, v)
		}
		v.shapes = append(v.shapes, fmt.Sprintf("%dx%d", c.shape[0], c.shape[1]))
		v.lo, v.hi = math.Min(v.lo, r.Lead), math.Max(v.hi, r.Lead)
		if r.NotJudged != "" && !slices.Contains(v.why, r.NotJudged) {
			v.why = append(v.why, r.NotJudged)
		}
	}
	sort.SliceStable(vs, func(i, j int) bool {
		if vs[i].rank != vs[j].rank {
			return vs[i].rank < vs[j].rank
		}
		return len(vs[i].shapes) > len(vs[j].shapes)
	})
	var says []string
	for _, v := range vs {
		s := v.name + " at " + plural(len(v.shapes), "shape")
		if len(v.shapes) <= 3 {
			s = v.name + " at " + strings.Join(v.shapes, ", ")
		}
		switch {
		case v.rank == 0:
			s += " (lead " + span(v.lo, v.hi) + ")"
		case len(v.why) > 0:
			s += " (" + strings.Join(v.why, "; ") + ")"
		}
		says = append(says, s)
	}
	at := "each at one size"
	if len(sizes) == 1 {
		at = "at " + units.Bytes(cs[0].Rows[0].Size)
	}
	return fmt.Sprintf("the launch sweep's %s %s: %s; model --guide shows each", plural(len(cs), "other shape"), at, strings.Join(says, ", "))
}

// rowText is a guide row's text but its case.
func rowText(row []table.Cell) string {
	var s []string
	for _, c := range row[1:] {
		s = append(s, c.Text)
	}
	return strings.Join(s, "\x00")
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
	names := []string{"B", "KiB", "MiB", "GiB", "TiB"}
	i := 0
	for b >= 1024 && i < len(names)-1 {
		b /= 1024
		i++
	}
	return units.Value(b) + " " + names[i]
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

// Assumptions are what every n-GPU prediction takes for granted.
var Assumptions = []string{
	"one node of the measured kind, n GPUs up to one NVLink domain, all to all through NVSwitch at the 2-PE run's per-GPU bandwidth (no incast: a GPU's links serve its peers in parallel)",
	"no protocol, algorithm or channel change beyond those the 2-PE fits saw: α from the first segment, B from the last, each only where the segment determines it (B from memory-served sizes)",
	"a ring step's latency is the 2-PE fit's α less the launch, over its two steps; one launch per operation; sizes only within those the input series measured",
}

// PredictionTables show the n-GPU predictions, a table per file and
// collective, beside measurements of the same setup and the paper's
// figure for the nearest condition.
func PredictionTables(models []Model, preds []Prediction) []table.Table {
	var out []table.Table
	type key struct{ file, coll string }
	var order []key
	rows := map[key][]Prediction{}
	for _, p := range preds {
		k := key{p.File, p.Collective}
		if _, ok := rows[k]; !ok {
			order = append(order, k)
		}
		rows[k] = append(rows[k], p)
	}
	for _, k := range order {
		var dom Domain
		for _, m := range models {
			if m.File == k.file && m.Collective == k.coll {
				dom = m.Domain
			}
		}
		t := table.Table{Title: fmt.Sprintf("Predicted %s time on n GPUs of one node (%s), from the 2-PE fits of %s", k.coll, dom.System, k.file),
			Columns: []string{"model", "n", "size", "predicted µs", "NCCL picks", "measured µs", "error %", "paper µs", "paper's setup", "note", "bytes", "paper low µs", "paper high µs", "measured in"},
			Right:   []bool{false, true, true, true, false, true, true, true, false, false, true, true, true, false}}
		t.Long = []bool{false, false, false, false, false, false, false, false, true, true}
		t.Wide = []bool{false, false, false, false, false, false, false, false, false, false, true, true, true, true}
		for _, p := range rows[k] {
			pred := table.Str("")
			if !math.IsNaN(p.Predicted) {
				pred = usCell(p.Predicted)
			}
			meas, e := table.Str(""), table.Str("")
			if p.Measured > 0 {
				meas, e = usCell(p.Measured), pctCell(p.Error())
			}
			paper, cond, lo, hi := table.Str(""), table.Str(""), table.Str(""), table.Str("")
			if p.Paper != nil {
				paper, cond, lo = table.Str(p.Paper.Text()), table.Str(p.Paper.Condition), usCell(p.Paper.Lo)
				if p.Paper.Hi > 0 {
					hi = usCell(p.Paper.Hi)
				}
			}
			note := table.Str("")
			if p.Refused != "" {
				note = table.Str("refused: " + p.Refused)
			}
			t.Rows = append(t.Rows, []table.Cell{table.Str(p.Model), numCell(float64(p.N), 0), table.Str(units.Bytes(p.Size)),
				pred, table.Str(p.How), meas, e, paper, cond, note, numCell(float64(p.Size), 0), lo, hi, table.Str(p.MeasuredIn)})
		}
		var refs []string
		for _, m := range models {
			if m.File != k.file || m.Collective != k.coll {
				continue
			}
			t.Notes = append(t.Notes, m.Name+": "+m.Basis+"; from "+strings.Join(m.Inputs, "; ")+" ("+m.File+")")
			for _, n := range m.Notes {
				if !containsString(refs, n) {
					refs = append(refs, n)
				}
			}
		}
		t.Notes = append(t.Notes, refs...)
		for _, a := range Assumptions {
			t.Notes = append(t.Notes, "assumed: "+a)
		}
		t.Notes = append(t.Notes, "measured: a file of n PEs among the inputs, of the same setup, one launch per operation; error = predicted / measured − 1; "+
			"paper: the published figure of the nearest condition, at its GPU count only (a small-message range, or its peak algbw as the least time at the size); the paper's setup says how it differs")
		out = append(out, t)
	}
	return out
}

// NICTable shows the paper's inter-node rows predicted from a NIC.
func NICTable(rows []NICRow) table.Table {
	t := table.Table{Title: "The paper's inter-node rows, PREDICTED from a NIC's line rate and this node's round trips (not measured)",
		Columns: []string{"row", "unit", "predicted", "paper", "how"}, Right: []bool{false, false, true, true, false}}
	t.Long = []bool{false, false, false, false, true}
	for _, r := range rows {
		t.Rows = append(t.Rows, []table.Cell{table.Str(r.Row), table.Str(r.Unit), cell(units.Value(r.Predicted), r.Predicted), cell(units.Value(r.Paper), r.Paper), table.Str(r.How)})
	}
	t.Notes = append(t.Notes, "a prediction to be measured on a second node: the line rate and the efficiencies are the model's inputs (model --nic-gbps, --wire-efficiency, --ring-efficiency, --fabric-rtt, --nics-per-node, --gpus-per-node, --nodes)")
	return t
}

// ChoiceTable shows whether NCCL's choice was the fastest of the
// algorithms forced in the same run, a row per size.
func ChoiceTable(cs []Choice, rule decide.Rule) table.Table {
	t := table.Table{Title: "NCCL's choice against its forced algorithms (AllReduce)",
		Columns: []string{"file", "group", "size", "NCCL's choice µs", "fastest forced", "its µs", "NCCL's miss", "miss %"},
		Right:   []bool{false, false, true, true, false, true, true, true}}
	t.Wide = []bool{false, false, false, false, false, false, false, true}
	for _, c := range cs {
		t.Rows = append(t.Rows, []table.Cell{table.Str(c.File), table.Str(c.group()), table.Str(units.Bytes(c.Size)), usCell(c.Default), table.Str(c.Best), usCell(c.BestTime),
			table.Str(c.outcome(false)), pctCell(c.Miss())})
	}
	t.Notes = choiceNotes(cs, rule)
	return t
}

// ChoiceSummary is ChoiceTable a row per run of sizes with one outcome.
func ChoiceSummary(cs []Choice, rule decide.Rule) table.Table {
	t := table.Table{Title: "NCCL's choice against its forced algorithms (AllReduce; model --detail: each size)",
		Columns: []string{"file", "group", "sizes", "NCCL's miss", "fastest forced"}}
	type run struct {
		c, last Choice
		lo, hi  float64
		best    []string
	}
	var runs []*run
	for _, c := range cs {
		n := len(runs)
		if n == 0 || runs[n-1].c.File != c.File || runs[n-1].c.Group != c.Group || runs[n-1].c.outcome(true) != c.outcome(true) {
			runs = append(runs, &run{c: c, lo: math.Inf(1), hi: math.Inf(-1)})
			n++
		}
		r := runs[n-1]
		r.last = c
		if !slices.Contains(r.best, c.Best) {
			r.best = append(r.best, c.Best)
		}
		x := c.Miss()
		if c.outcome(true) == "tie" {
			x = c.Verdict.Within
		}
		r.lo, r.hi = math.Min(r.lo, x), math.Max(r.hi, x)
	}
	for _, r := range runs {
		sizes := units.Bytes(r.c.Size)
		if r.last.Size != r.c.Size {
			sizes += " – " + units.Bytes(r.last.Size)
		}
		miss := r.c.outcome(true)
		switch {
		case r.c.Missed():
			miss = span(r.lo, r.hi) + " slower"
		case miss == "tie":
			miss = "tie (within " + span(r.lo, r.hi) + ")"
		}
		t.Rows = append(t.Rows, []table.Cell{table.Str(r.c.File), table.Str(r.c.group()), table.Str(sizes), table.Str(miss), table.Str(strings.Join(r.best, ", "))})
	}
	t.Notes = choiceNotes(cs, rule)
	return t
}

// group is a choice's like-for-like group without its file.
func (c Choice) group() string { return strings.TrimSpace(strings.TrimPrefix(c.Group, c.File)) }

// outcome says whether NCCL chose well at the choice's size; kind leaves
// out what differs between sizes of one outcome (how much slower, within
// how much a tie).
func (c Choice) outcome(kind bool) string {
	switch {
	case c.Same != "":
		return "same operation here"
	case c.Verdict.NotJudged != "":
		return "not judged"
	case c.Missed() && kind:
		return "slower"
	case c.Missed():
		return pct(c.Miss()) + " slower"
	case c.Verdict.Few != "":
		return "too few samples"
	case c.Verdict.Tie() && kind:
		return "tie"
	case c.Verdict.Tie():
		return "tie (within " + decide.Percent(c.Verdict.Within) + ")"
	}
	return "chose well"
}

// choiceNotes are the notes under NCCL's choice: what is compared, the
// rule, and why sizes were one operation, too few or not judged.
func choiceNotes(cs []Choice, rule decide.Rule) []string {
	notes := []string{"NCCL's choice: collectives/allreduce/nccl; forced: NCCL_ALGO set per communicator (nccl-ring, nccl-tree, nccl-nvls where allowed)",
		"NCCL's miss: a forced algorithm was faster only where the decision rule says so: " + rule.Describe()}
	few := ""
	var same, unjudged []string // each once
	for _, c := range cs {
		switch {
		case c.Same != "":
			if !slices.Contains(same, c.Same) {
				same = append(same, c.Same)
			}
		case c.Verdict.NotJudged != "":
			if !slices.Contains(unjudged, c.Verdict.NotJudged) {
				unjudged = append(unjudged, c.Verdict.NotJudged)
			}
		case !c.Missed() && c.Verdict.Few != "":
			few = c.Verdict.Few
		}
	}
	if len(same) > 0 {
		notes = append(notes, "same operation here: "+strings.Join(same, "; "))
	}
	if few != "" {
		notes = append(notes, "too few samples for the rule's interval: "+few)
	}
	if len(unjudged) > 0 {
		notes = append(notes, "not judged: a point no verdict may rest on ("+strings.Join(unjudged, "; ")+")")
	}
	return notes
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
			case r.NotJudged != "":
				name = "not judged: " + r.NotJudged
			case r.Few != "":
				name = "too few samples"
			case r.Tie():
				name = "tie"
			}
			ser, ok := series[name]
			if !ok {
				ser = &plots.Series{ID: name, Label: name}
				series[name] = ser
				order = append(order, name)
			}
			y := 0.1 // a tie, or a size not judged, still shows at the axis
			if r.Lead > 0.001 {
				y = 100 * r.Lead
			}
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
