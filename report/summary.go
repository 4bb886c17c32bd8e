package report

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/nvshbench/nvshbench/internal/decide"
	"github.com/nvshbench/nvshbench/internal/table"
	"github.com/nvshbench/nvshbench/record"
)

// The summary (report --summary): the headline figure of each of the
// report's tables in one table, a row each, chosen by the same rules as
// those tables (Select: only figures; the events timer; collectives one
// launch per operation, never an older file's of unknown launch mode; the
// device-API rows' faster by the decision rule). What the README quotes.

// sumItem is one value of a summary row: a reference row's (its rule and
// its published value), that row at any launch (the launch sweep's best),
// a selection of its own, or a device-API row's side.
type sumItem struct {
	name string // in the row's notes ("get: waived …")
	// ref names a reference row "table key"; best takes it at any launch
	// (CTAs × threads), as the report's "best launch" column.
	ref  string
	best bool
	row  *record.RefRow // else: a selection with no published value
	dev  *deviceAPIRow  // else: a side (ids) of a device-API row
	ids  []string
	// served picks the in-run chase through the peer's memory served from
	// "memory" or "cache" (limit/chase-peer).
	served string
}

// sumRow is one row: a label, its items (one input gives them all), and
// what its notes add.
type sumRow struct {
	label   string
	items   []sumItem
	share   bool   // each value's share of its point's copy reference
	launch  bool   // each value's launch (CTAs × threads)
	verdict bool   // the faster, by the rule, of the items' samples; only where the first item ran
	paper   string // the published value where no item has one of its own
}

func summaryRows(ref *record.Reference) []sumRow {
	lim := func(id string) *record.RefRow {
		return &record.RefRow{IDs: []string{id}, Metric: record.MetricBandwidth, Agg: "max"}
	}
	pingpong := func(id string) *record.RefRow {
		return &record.RefRow{IDs: []string{id}, Metric: record.MetricLatency, Agg: "min", Size: 8}
	}
	rows := []sumRow{
		{label: "copy references, same run: copy engine / SM copy (write) / SM copy (read)",
			items: []sumItem{{name: "copy engine", row: lim("limit/ce-copy")}, {name: "SM copy (write)", row: lim("limit/sm-copy")}, {name: "SM copy (read)", row: lim("limit/sm-copy-read")}}},
		{label: "bulk put / get, 32 CTAs × 256 threads", share: true,
			items: []sumItem{{name: "put", ref: "rma put/p2p"}, {name: "get", ref: "rma get/p2p"}}},
		{label: "scalar p / g, 32 CTAs × 256 threads", share: true,
			items: []sumItem{{name: "p", ref: "rma p/p2p"}, {name: "g", ref: "rma g/p2p"}}},
		{label: "put / get / p / g, the launch sweep's best", share: true, launch: true,
			items: []sumItem{{name: "put", ref: "rma put/p2p", best: true}, {name: "get", ref: "rma get/p2p", best: true},
				{name: "p", ref: "rma p/p2p", best: true}, {name: "g", ref: "rma g/p2p", best: true}}},
		{label: "round trip at 256 B: put_nbi + quiet / get (pointer chase) / p + quiet / g (pointer chase)",
			items: []sumItem{{name: "put", ref: "latency put/p2p"}, {name: "get", ref: "latency get/p2p"}, {name: "p", ref: "latency p/p2p"}, {name: "g", ref: "latency g/p2p"}}},
		{label: "dependent load through the peer's memory, 8 B (the in-run floor of round trips): from memory / from L2",
			items: []sumItem{{name: "from memory", served: "memory"}, {name: "from L2", served: "cache"}}},
		{label: "ping-pong round trip at 8 B: signal / put + signal / p + flag",
			items: []sumItem{{name: "signal", row: pingpong("latency/pingpong/signal")}, {name: "put + signal", row: pingpong("latency/pingpong/put-signal")},
				{name: "p + flag", row: pingpong("latency/pingpong/p")}}},
		{label: "AllReduce peak algbw, one launch per operation: our multi-CTA / NCCL ring / NCCL's choice",
			items: []sumItem{{name: "multi-CTA", ref: "allreduce multicta/intra"}, {name: "NCCL ring", ref: "allreduce nccl-ring/intra"}, {name: "NCCL's choice", ref: "allreduce nccl-auto/intra"}}},
		{label: "AllReduce peak algbw with NVLink multicast: NVSHMEM on-stream / NCCL NVLS",
			items: []sumItem{{name: "NVSHMEM", ref: "allreduce nvshmem-onstream-multicta/intra"}, {name: "NCCL NVLS", ref: "allreduce nccl-nvls/intra"}}},
		{label: "NVSHMEM device-block AllReduce peak algbw (one CTA)",
			items: []sumItem{{name: "device block", ref: "allreduce nvshmem-device-block/intra"}}},
		{label: "AllReduce latency, 4 B … 256 KiB: NVSHMEM device (one CTA) / NCCL ring / our multi-CTA",
			items: []sumItem{{name: "NVSHMEM device", ref: "allreduce-latency nvshmem-device/intra"}, {name: "NCCL ring", ref: "allreduce-latency nccl-ring/intra"},
				{name: "multi-CTA", ref: "allreduce-latency multicta/intra"}}},
	}
	for i := range deviceAPIRows {
		r := &deviceAPIRows[i]
		label := "NCCL device API (LSA) / NVSHMEM: " + r.label
		if r.launch {
			label += ", 32 CTAs × 256 threads"
		}
		items := []sumItem{{name: "NCCL device API", dev: r, ids: r.nccl}, {name: "NVSHMEM", dev: r, ids: r.nvshmem}}
		if len(r.host) > 0 {
			label = strings.Replace(label, "NVSHMEM:", "NVSHMEM / host ncclAllReduce:", 1)
			items = append(items, sumItem{name: "host ncclAllReduce", dev: r, ids: r.host})
		}
		switch r.label {
		case "put, warp scope", "put, thread scope", "get, warp scope", "get, thread scope", "AllReduce at 64 KiB":
			continue // the table's further rows (report FILE)
		}
		rows = append(rows, sumRow{label: label, items: items, verdict: true})
	}
	if v := ref.Limits["nvlink_unidirectional"]; v > 0 {
		rows[0].paper = fmt.Sprintf("NVLink %.0f", v/gb)
	}
	return rows
}

// refRow finds a reference row by "table key".
func refRow(ref *record.Reference, tk string) *record.RefRow {
	for i := range ref.Rows {
		if r := &ref.Rows[i]; r.Table+" "+r.Key == tk {
			return r
		}
	}
	return nil
}

// sumPick is an item's pick in one file, with the reference row behind it
// (nil where the item has none).
type sumPick struct {
	Pick
	row    *record.RefRow
	metric string
}

func (it sumItem) pick(f, uni *record.File, ref *record.Reference) sumPick {
	switch {
	case it.ref != "":
		row := refRow(ref, it.ref)
		if row == nil {
			return sumPick{Pick: Pick{Status: "not run"}}
		}
		sel := *row
		if it.best {
			if !swept(f, row) {
				return sumPick{Pick: Pick{Status: "not run: no launch but the paper's"}, row: row, metric: row.Metric}
			}
			sel.CTAs, sel.Threads = 0, 0
		}
		return sumPick{Pick: Select(f, &sel), row: row, metric: row.Metric}
	case it.row != nil:
		return sumPick{Pick: Select(f, it.row), metric: it.row.Metric}
	case it.dev != nil:
		return sumPick{Pick: it.dev.pick(uni, it.ids), metric: it.dev.metric}
	case it.served != "":
		return sumPick{Pick: chase(f, it.served), metric: record.MetricLatency}
	}
	return sumPick{Pick: Pick{Status: "not run"}}
}

// swept reports whether the file measured a reference row's operation at
// a launch other than the row's (a launch sweep).
func swept(f *record.File, row *record.RefRow) bool {
	for i := range f.Points {
		p := &f.Points[i]
		if row.MatchesID(p.ID) && p.Status == record.StatusOK && p.Params.CTAs > 0 && (p.Params.CTAs != row.CTAs || p.Params.Threads != row.Threads) {
			return true
		}
	}
	return false
}

// sameGPU says a value was measured on one GPU (two PEs on it, or one PE
// to itself): no link crossed.
const sameGPU = "same GPU, not NVLink"

func local(p *record.Point) bool { return p.Effective == "local" || p.Effective == "loopback" }

// chase is the in-run chase through the peer's memory served from memory
// or from the cache: the floor of the file's round trips.
func chase(f *record.File, served string) Pick {
	for i := range f.Points {
		p := &f.Points[i]
		if p.ID != "limit/chase-peer" || p.Params.Extra["served"] != served || p.Has(record.FlagSecondTimer) || p.Status != record.StatusOK {
			continue
		}
		if m, ok := p.Metric(record.MetricLatency); ok {
			return Pick{Best: p, Value: m.Median, Status: "ok"}
		}
	}
	return Pick{Status: "not run"}
}

// notRun: a pick of nothing the file measured (not a refusal or a waiver).
func notRun(p sumPick) bool { return p.Best == nil && strings.HasPrefix(p.Status, "not run") }

// Summary is the headline figure of each of the report's tables, a row
// each, from the first of the files that gives most of a row's values (one
// file per row, named where there are several). Rows no file measured are
// left out.
func Summary(files []*record.File, ref *record.Reference, rule decide.Rule) *table.Report {
	if len(files) == 0 {
		return &table.Report{}
	}
	rule = rule.OrDefault()
	labels := record.Labels(files)
	uni := make([]*record.File, len(files))
	checks := make([]map[*record.Point]map[string]string, len(files))
	synthetic := false
	for i, f := range files {
		uni[i] = oneWay(f)
		checks[i] = record.FlagReasons(f.Points)
		synthetic = synthetic || f.Header.Synthetic
	}
	title := "Summary"
	if len(files) > 1 {
		title += " [" + strings.Join(labels, ", ") + "]"
	} else {
		title += fileTag(files[0], false)
	}
	if synthetic && len(files) > 1 {
		title += " [SYNTHETIC data among the runs, not a measurement]"
	}
	t := table.Table{Title: title, Columns: []string{"figure", "measured", "paper", "from", "notes"}}
	verdicts := false
	for _, row := range summaryRows(ref) {
		// The file of the row: the first that gives the most values, else
		// the first that says why it has none (a waiver, a refusal).
		var picks []sumPick
		from, most, mostSaid := -1, 0, 0
		for i, f := range files {
			ps := make([]sumPick, len(row.items))
			n, said := 0, 0
			for j, it := range row.items {
				ps[j] = it.pick(f, uni[i], ref)
				if ps[j].Best != nil {
					n++
				}
				if !notRun(ps[j]) {
					said++
				}
			}
			if row.verdict && notRun(ps[0]) {
				continue // a comparison with NCCL's device API: not without it
			}
			if n > most || (n == most && said > mostSaid) {
				from, most, mostSaid, picks = i, n, said, ps
			}
		}
		if from < 0 {
			continue // no file measured it
		}
		f := files[from]
		var vals, paper, notes []string
		unit := ""
		var why []string
		for j, p := range picks {
			it := row.items[j]
			div, u, prec := metricScale(p.metric)
			unit = u
			switch {
			case p.Best == nil:
				vals = append(vals, "–")
				why = append(why, it.name+": "+p.Status)
			case p.row != nil && p.row.Agg == "range":
				vals = append(vals, fmt.Sprintf("%.*f–%.*f", prec, p.Value/div, prec, p.Hi/div))
			default:
				vals = append(vals, fmt.Sprintf("%.*f", prec, p.Value/div))
			}
			switch {
			case p.row != nil && !p.row.NoPaper && !it.best: // the paper published no best launch
				paper = append(paper, paperValue(p.row))
			default:
				paper = append(paper, "–")
			}
		}
		measured := strings.Join(vals, " / ") + " " + unit
		if most == 0 {
			measured = strings.Join(vals, " / ")
			if c := commonStatus(why); c != "" {
				measured, why = c, nil
			}
		}
		notes = append(notes, why...)
		if row.share && most > 0 {
			var s []string
			for _, p := range picks {
				if p.Best != nil && p.Best.Limit != nil {
					s = append(s, shareOf(p.Value, p.Best.Limit.Value))
				} else {
					s = append(s, "–")
				}
			}
			notes = append(notes, strings.Join(s, " / ")+" of the copy reference")
		}
		if row.launch && most > 0 {
			var s []string
			for _, p := range picks {
				if p.Best != nil && p.Best.Params.CTAs > 0 {
					s = append(s, fmt.Sprintf("%d×%d", p.Best.Params.CTAs, p.Best.Params.Threads))
				} else {
					s = append(s, "–")
				}
			}
			notes = append(notes, "at "+strings.Join(s, " / ")+" (CTAs × threads)")
		}
		if row.verdict && most >= 2 {
			names := make([]string, len(picks))
			sides := make([]Pick, len(picks))
			for j, p := range picks {
				names[j], sides[j] = row.items[j].name, p.Pick
			}
			// A side left out (NCCL's one-rank copy) is said by its item's notes.
			if v, ok, _ := sidesVerdict(uni[from], names, sides, picks[0].metric, rule); ok {
				s := v.Label()
				if !v.Tie() {
					s = fmt.Sprintf("faster: %s, by %s", s, decide.Percent(v.Lead))
				}
				notes = append(notes, s)
				verdicts = true
			}
		}
		notes = append(notes, itemNotes(f, row, picks, checks[from])...)
		p := strings.Join(paper, " / ")
		if strings.Trim(p, "–/ ") == "" {
			p = ""
			if !slices.ContainsFunc(picks, func(p sumPick) bool { return p.Best != nil && local(p.Best) }) {
				p = row.paper // a link's figure: never beside one GPU's
			}
		}
		src := "" // one file: its label is the title's
		if len(files) > 1 {
			src = labels[from]
		}
		t.Rows = append(t.Rows, []table.Cell{table.Str(row.label), table.Str(measured), table.Str(p), table.Str(src), table.Str(strings.Join(notes, "; "))})
	}
	t.Notes = append(t.Notes,
		"measured: each value as report FILE's tables choose it: bandwidth peaks at the paper's launch (32 CTAs × 256 threads) over sizes whose buffers exceed twice the L2, or over the launch sweep's; round trips by the events timer, the lowest median over scopes; collectives one launch per operation (an older file's, whose launch mode is unknown, are not compared); values of one row are in the order its label names them, – where there is none",
		fmt.Sprintf("paper: %s (arXiv %s), %s", ref.Source.Title, ref.Source.Arxiv, ref.Platform))
	if len(files) > 1 {
		t.Notes = append(t.Notes, "from: the input a row's values come from (one per row): the first of the inputs that gives the most of them")
	}
	if verdicts {
		t.Notes = append(t.Notes, "faster, or tie: of the values shown, by the samples of the points they come from: "+rule.Describe()+"; "+familyNote)
	}
	if len(files) == 1 {
		if c := record.CountTimers(files[0].Points).String(); c != "" {
			t.Notes = append(t.Notes, c)
		}
	}
	return &table.Report{Tables: []table.Table{t}}
}

// commonStatus is why a row has no value where its items share one reason
// ("" where they differ: each item's is said in the notes).
func commonStatus(why []string) string {
	var reasons []string
	for _, w := range why {
		_, r, _ := strings.Cut(w, ": ")
		reasons = append(reasons, r)
	}
	for _, r := range reasons[1:] {
		if r != reasons[0] {
			return ""
		}
	}
	return reasons[0]
}

// itemNotes are what a row's values carry: a setup the paper's figure
// differs from, and the flags said beside a figure (noisy, check, ...),
// each once where every item says it.
func itemNotes(f *record.File, row sumRow, picks []sumPick, checks map[*record.Point]map[string]string) []string {
	var notes []string
	seen := map[string][]string{}
	var order []string
	add := func(name, s string) {
		if s == "" {
			return
		}
		if _, ok := seen[s]; !ok {
			order = append(order, s)
		}
		seen[s] = append(seen[s], name)
	}
	valued := 0
	for j, p := range picks {
		if p.Best == nil {
			continue
		}
		valued++
		name := row.items[j].name
		switch {
		case strings.HasPrefix(p.Best.ID, "collectives/") && f.Header.PEs == 1:
			add(name, onePE(p.Best, f.Header.PEs))
		case local(p.Best):
			add(name, sameGPU)
		}
		if why := ""; p.row != nil {
			if why = Comparable(f, p.row, p.Best); !strings.HasSuffix(why, sameGPU) {
				add(name, why)
			}
		}
		for _, s := range strings.Split(FlagsSaid(p.Best, checks), "; ") {
			add(name, s)
		}
	}
	for _, s := range order {
		if len(seen[s]) == valued && valued > 0 {
			notes = append(notes, s)
		} else {
			notes = append(notes, strings.Join(seen[s], ", ")+": "+s)
		}
	}
	return notes
}

// shareOf is v as a share of ref, for notes ("0.82").
func shareOf(v, ref float64) string {
	if ref <= 0 || math.IsNaN(v) {
		return "–"
	}
	return fmt.Sprintf("%.2f", v/ref)
}
