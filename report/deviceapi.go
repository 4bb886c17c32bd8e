package report

import (
	"strings"

	"github.com/nvshbench/nvshbench/internal/decide"
	"github.com/nvshbench/nvshbench/internal/table"
	"github.com/nvshbench/nvshbench/record"
)

// The device-API table: NVSHMEM's device-initiated calls beside NCCL's
// device API (2.28: LSA pointers and barriers over NVLink, GIN over the
// network) on the same GPUs, launches and sizes, and host-launched
// ncclAllReduce beside both AllReduces.
type deviceAPIRow struct {
	label   string
	metric  string
	agg     string
	size    int64 // 0: any size beyond L2
	nvshmem []string
	nccl    []string
	host    []string // host-launched NCCL
	launch  bool     // at the paper's launch (32 CTAs × 256 threads)
	mode    string   // NVSHMEM points of this mode only ("" any)
}

var deviceAPIRows = []deviceAPIRow{
	{"put, block scope", record.MetricBandwidth, "max", 0, []string{"rma/put/block"}, []string{"rma/nccl-lsa/put/block"}, nil, true, ""},
	{"put, warp scope", record.MetricBandwidth, "max", 0, []string{"rma/put/warp"}, []string{"rma/nccl-lsa/put/warp"}, nil, true, ""},
	{"put, thread scope", record.MetricBandwidth, "max", 0, []string{"rma/put/thread"}, []string{"rma/nccl-lsa/put/thread"}, nil, true, ""},
	{"get, block scope", record.MetricBandwidth, "max", 0, []string{"rma/get/block"}, []string{"rma/nccl-lsa/get/block"}, nil, true, ""},
	{"get, warp scope", record.MetricBandwidth, "max", 0, []string{"rma/get/warp"}, []string{"rma/nccl-lsa/get/warp"}, nil, true, ""},
	{"get, thread scope", record.MetricBandwidth, "max", 0, []string{"rma/get/thread"}, []string{"rma/nccl-lsa/get/thread"}, nil, true, ""},
	{"put round trip at 256 B", record.MetricLatency, "min", 256, []string{"latency/put/*"}, []string{"latency/nccl-lsa/put/*"}, nil, false, "nbi"},
	{"get round trip at 256 B", record.MetricLatency, "min", 256, []string{"latency/get/*"}, []string{"latency/nccl-lsa/get/*"}, nil, false, ""},
	{"put + signal, block scope", record.MetricBandwidth, "max", 0, []string{"rma/put-signal/block"}, []string{"rma/nccl-gin/put-signal/block"}, nil, true, ""},
	{"AllReduce, large sizes", record.MetricBusBW, "max", 0, []string{"collectives/allreduce/multicta"}, []string{"collectives/allreduce/nccl-lsa"},
		[]string{"collectives/allreduce/nccl", "collectives/allreduce/nccl-ring"}, false, ""},
	{"AllReduce at 8 B", record.MetricLatency, "min", 8, []string{"collectives/allreduce/multicta"}, []string{"collectives/allreduce/nccl-lsa"},
		[]string{"collectives/allreduce/nccl", "collectives/allreduce/nccl-ring"}, false, ""},
	{"AllReduce at 64 KiB", record.MetricLatency, "min", 64 << 10, []string{"collectives/allreduce/multicta"}, []string{"collectives/allreduce/nccl-lsa"},
		[]string{"collectives/allreduce/nccl", "collectives/allreduce/nccl-ring"}, false, ""},
}

// pick selects one side of the row (ids: its nvshmem, nccl or host IDs)
// from a file of one initiator's points (oneWay).
func (r deviceAPIRow) pick(uni *record.File, ids []string) Pick {
	if len(ids) == 0 {
		return Pick{}
	}
	row := &record.RefRow{IDs: ids, Metric: r.metric, Agg: r.agg, Size: r.size}
	if strings.HasPrefix(ids[0], "latency/put/") {
		row.Mode = r.mode // a round trip, never a blocking put's issue time
	}
	if strings.HasPrefix(ids[0], "collectives/") {
		row.Launch = record.LaunchPerOp // one launch per operation on every side: the host API has no other
	}
	if r.launch {
		row.CTAs, row.Threads, row.Path = paperCTAs, paperThreads, "p2p"
	}
	return Select(uni, row)
}

// hasDeviceAPI reports whether the file measured NCCL's device API at all.
func hasDeviceAPI(f *record.File) bool {
	for i := range f.Points {
		id := f.Points[i].ID
		if strings.HasPrefix(id, "rma/nccl-lsa/") || strings.HasPrefix(id, "rma/nccl-gin/") || strings.HasPrefix(id, "collectives/allreduce/nccl-lsa") ||
			strings.HasPrefix(id, "latency/nccl-lsa/") {
			return true
		}
	}
	return false
}

// oneWay is the file without bidirectional points (the table compares one
// initiator's traffic).
func oneWay(f *record.File) *record.File {
	g := *f
	g.Points = nil
	for _, p := range f.Points {
		if p.Params.Dir != "bidir" {
			g.Points = append(g.Points, p)
		}
	}
	return &g
}

// costs are a pick's samples as times per unit of its metric, lower
// better: the time itself for a latency, one over each sample's rate for a
// bandwidth (a ratio of two of them is the ratio of their times for the
// same work, whatever sizes the picks were at).
func costs(p Pick, metric string) []float64 {
	if p.Best == nil {
		return nil
	}
	return record.Costs(p.Best, metric)
}

// familyNote says how the readers' verdicts on values are asked.
const familyNote = "m: the sizes of the values' series the rule judges, as model --guide asks it; not judged where a value's point is cache-served or marked for a second look (noisy, above the copy reference, check, ...)"

// sidesVerdict is the rule's verdict on a row's sides (names[i]'s pick,
// those with a value), asked as the guide asks it: the picks' samples as
// costs of the metric, each decided with the family of the sizes judged in
// the series the picks belong to (each side's benchmark and parameters but
// the size, in f: decide.Family), and no verdict where a pick may carry
// none (record.Point.Unjudged). A side that is NCCL's one-rank copy, not
// the collective the others run, is left out (left says which and why).
// False where fewer than two sides are compared.
func sidesVerdict(f *record.File, names []string, picks []Pick, metric string, rule decide.Rule) (v decide.Verdict, ok bool, left []string) {
	var entries []decide.Entry
	series := map[string]string{} // a side's series key → its name
	for i, p := range picks {
		c := costs(p, metric)
		if len(c) == 0 {
			continue
		}
		if why := p.Best.OneRankCopy(f.Header.PEs); why != "" {
			left = append(left, names[i]+": "+why+": not compared")
			continue
		}
		entries = append(entries, decide.Entry{Name: names[i], Samples: c, Unjudged: p.Best.Unjudged()})
		series[p.Best.ID+" "+p.Best.Params.KeyWithoutSize()] = names[i]
	}
	if len(entries) < 2 {
		return decide.Verdict{}, false, left
	}
	bySize := map[int64][]decide.Entry{}
	for i := range f.Points {
		q := &f.Points[i]
		if name, ok := series[q.ID+" "+q.Params.KeyWithoutSize()]; ok && q.Status == record.StatusOK {
			bySize[q.Params.Size] = append(bySize[q.Params.Size], decide.Entry{Name: name, Unjudged: q.Unjudged()})
		}
	}
	var sizes [][]decide.Entry
	for _, es := range bySize {
		sizes = append(sizes, es)
	}
	return rule.Decide(entries, decide.Family(sizes)), true, left
}

func deviceAPITable(f *record.File, tag string, rule decide.Rule) table.Table {
	t := table.Table{Title: "Device-initiated: NVSHMEM vs NCCL device API" + tag,
		Columns: []string{"operation", "metric", "NVSHMEM", "NCCL dev API", "ratio", "host NCCL", "faster", "limit", "status"}}
	t.Right = columnFlags(t.Columns, "NVSHMEM", "NCCL dev API", "ratio", "host NCCL", "limit")
	t.Long = columnFlags(t.Columns, "status")
	t.Wide = columnFlags(t.Columns, "ratio", "limit") // the verdict says it in 120 columns; --wide, CSV and JSON keep them
	uni := oneWay(f)
	for _, r := range deviceAPIRows {
		div, unit, prec := metricScale(r.metric)
		nv, nc, host := r.pick(uni, r.nvshmem), r.pick(uni, r.nccl), r.pick(uni, r.host)
		if nv.Status == "not run" && nc.Status == "not run" {
			continue // neither side in this file
		}
		cell := func(p Pick) table.Cell {
			if p.Best == nil {
				return table.Str("")
			}
			return table.Num(p.Value/div, prec)
		}
		metric := unit
		if r.metric == record.MetricBusBW {
			metric = "busbw " + unit
		}
		cells := []table.Cell{table.Str(r.label), table.Str(metric), cell(nv), cell(nc)}
		if nv.Best != nil && nc.Best != nil && nv.Value > 0 {
			cells = append(cells, table.Num(nc.Value/nv.Value, 2))
		} else {
			cells = append(cells, table.Str(""))
		}
		if len(r.host) > 0 {
			cells = append(cells, cell(host))
		} else {
			cells = append(cells, table.Str(""))
		}
		v, ok, left := sidesVerdict(uni, []string{"NVSHMEM", "NCCL dev API", "host NCCL"}, []Pick{nv, nc, host}, r.metric, rule)
		if ok {
			cells = append(cells, table.Str(v.Label()))
		} else {
			cells = append(cells, table.Str(""))
		}
		limit := table.Str("")
		for _, p := range []Pick{nc, nv} {
			if p.Best != nil && p.Best.Limit != nil && p.Best.Limit.Value > 0 && r.metric != record.MetricLatency {
				limit = table.Num(p.Best.Limit.Value/gb, 1)
				break
			}
		}
		cells = append(cells, limit)
		var status []string
		for _, s := range []struct {
			who string
			p   Pick
		}{{"NVSHMEM", nv}, {"NCCL", nc}, {"host NCCL", host}} {
			if s.p.Best == nil && s.p.Status != "" {
				status = append(status, s.who+": "+s.p.Status) // a long one becomes a footnote of the text output
			}
		}
		status = append(status, left...)
		if len(status) == 0 {
			status = []string{"ok"}
		}
		cells = append(cells, table.Str(strings.Join(status, "; ")))
		t.Rows = append(t.Rows, cells)
	}
	t.Notes = append(t.Notes,
		"NCCL dev API: NCCL's device API (LSA pointers and barriers; GIN for put + signal); host NCCL: ncclAllReduce launched from the host; with --wide, ratio: NCCL dev API / NVSHMEM, limit: the in-run copy reference (GB/s)",
		"faster: of the values shown, by the samples of the points they come from: "+rule.Describe()+"; "+familyNote,
		"round trips: the lowest median (events timer) over scopes at 256 B (NVSHMEM put: putmem_nbi + quiet; NCCL: the CTA's stores + a system-scope fence; get: pointer chases through the peer's memory)",
		"put/get: one initiator, at the paper's launch (32 CTAs × 256 threads), the highest median over sizes beyond L2; NVSHMEM = nvshmem[x]_{put,get}mem_nbi[_warp|_block] (+ quiet), NCCL device API = each scope group's 16-byte stores into / loads from the pointer ncclGetLsaPointer gives",
		"AllReduce (float sum, busbw), one launch per operation on every side: NVSHMEM = our multi-CTA kernel over nvshmem_ptr and NVSHMEM signals; NCCL device API = the same kernel structure over LSA pointers and LSA barriers (ncclLsaBarrierSession); ncclAllReduce = host-launched, NCCL's choice or forced Ring, the better",
		"limit: the best copy reference measured in the same run on the same GPUs (puts: the faster of SM copy and copy engine; gets: SM copy read)")
	return t
}
