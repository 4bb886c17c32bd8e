package report

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/nvshbench/nvshbench/internal/decide"
	"github.com/nvshbench/nvshbench/internal/table"
	"github.com/nvshbench/nvshbench/record"
	"github.com/nvshbench/nvshbench/record/moe"
)

// The MoE table: dispatch and combine by token count, the three
// implementations side by side on the same tokens and routing (same mode,
// routing, token type and launch), the fastest as the decision rule names
// it (decide: a margin and an interval corrected over the token counts of
// the series), the lowest median's link bandwidth, and the floor (the bytes
// rank 0 sends to other GPUs at the link's rate plus one round trip).

// DeepEP's published figures (H800, 8 GPUs, other hardware): compared only
// with a run of 8 PEs.
var deepEP = []struct {
	op, mode string
	tokens   int
	us, gbps float64
}{
	{"dispatch", "ll", 128, 77, 98}, {"combine", "ll", 128, 114, 127},
	{"dispatch", "normal", 4096, 0, 153}, {"combine", "normal", 4096, 0, 158},
}

const deepEPNote = "DeepEP (published; H800, 8 GPUs over NVLink and RDMA, other hardware): low latency at 128 tokens, top-8 of 288 experts: dispatch 77 µs / 98 GB/s, combine 114 µs / 127 GB/s; normal at 4096 tokens: dispatch 153 GB/s, combine 158 GB/s"

func hasMoE(f *record.File) bool {
	for i := range f.Points {
		if _, ok := moe.ParseID(f.Points[i].ID); ok {
			return true
		}
	}
	return false
}

type moeKey struct {
	op, mode, routing, dtype, launch string
	tokens                           int
}

// series is the key of a row without its token count: one family of
// comparisons for the rule.
func (k moeKey) series() moeKey { k.tokens = 0; return k }

func moeTable(f *record.File, tag string, rule decide.Rule) table.Table {
	t := table.Table{Title: "MoE dispatch / combine (µs per operation; one launch per operation)" + tag,
		Columns: []string{"op", "mode", "routing", "dtype", "launch", "tokens", "NVSHMEM", "NCCL dev API", "NCCL host", "fastest", "link GB/s", "floor µs", "of floor", "load", "status"}}
	t.Right = columnFlags(t.Columns, "tokens", "NVSHMEM", "NCCL dev API", "NCCL host", "link GB/s", "floor µs", "of floor", "load")
	t.Wide = columnFlags(t.Columns, "load")
	t.Long = columnFlags(t.Columns, "status")
	rows := map[moeKey]map[string]*record.Point{}
	var keys []moeKey
	for i := range f.Points {
		p := &f.Points[i]
		r, ok := moe.ParseID(p.ID)
		if !ok {
			continue
		}
		tk, _ := strconv.Atoi(p.Params.Extra[moe.ExtraTokens])
		launch := "plain"
		if p.Params.Mode == "graph" {
			launch = "graph"
		}
		k := moeKey{r.Op, p.Params.Extra[moe.ExtraMode], p.Params.Extra[moe.ExtraRouting], p.Params.DType, launch, tk}
		if rows[k] == nil {
			rows[k] = map[string]*record.Point{}
			keys = append(keys, k)
		}
		rows[k][r.Impl] = p
	}
	sort.Slice(keys, func(i, j int) bool {
		a, b := keys[i], keys[j]
		for _, c := range [][2]string{{a.op, b.op}, {a.mode, b.mode}, {a.routing, b.routing}, {a.dtype, b.dtype}, {a.launch, b.launch}} {
			if c[0] != c[1] {
				return c[0] < c[1]
			}
		}
		return a.tokens < b.tokens
	})
	// Each row's entries, and the family of each series: its token counts
	// the rule judges (decide.Family), as the guide counts them.
	entries := map[moeKey][]decide.Entry{}
	sized := map[moeKey][][]decide.Entry{}
	for _, k := range keys {
		for _, im := range moe.Impls {
			if p := rows[k][im.Name]; timed(p) {
				entries[k] = append(entries[k], entryOf(im.Label, p))
			}
		}
		sized[k.series()] = append(sized[k.series()], entries[k])
	}
	for _, k := range keys {
		cells := []table.Cell{table.Str(k.op), table.Str(k.mode), table.Str(k.routing), table.Str(k.dtype), table.Str(k.launch), table.Str(strconv.Itoa(k.tokens))}
		var best *record.Point
		var why []string
		for _, im := range moe.Impls {
			p := rows[k][im.Name]
			switch {
			case p == nil:
				cells = append(cells, table.Str(""))
			case p.Status != record.StatusOK:
				cells = append(cells, table.Str(""))
				why = append(why, im.Label+": "+string(p.Status)+": "+p.Reason)
			default:
				m := p.Metrics[record.MetricLatency]
				cells = append(cells, table.Sig(m.Median/us, 3))
				if best == nil || m.Median < best.Metrics[record.MetricLatency].Median {
					best = p
				}
			}
		}
		if best == nil {
			cells = append(cells, table.Str(""), table.Str(""), table.Str(""), table.Str(""), table.Str(""), table.Str(strings.Join(why, "; ")))
			t.Rows = append(t.Rows, cells)
			continue
		}
		cells = append(cells, table.Str(rule.Decide(entries[k], decide.Family(sized[k.series()])).Label()))
		if l, ok := best.Metrics[record.MetricLink]; ok {
			cells = append(cells, table.Sig(l.Median/gb, 3))
		} else {
			cells = append(cells, table.Str(""))
		}
		if fl := best.Values[moe.ValueFloor]; fl > 0 {
			cells = append(cells, table.Sig(fl/us, 3), table.Num(best.Metrics[record.MetricLatency].Median/fl, 2))
		} else {
			cells = append(cells, table.Str(""), table.Str(""))
		}
		cells = append(cells, table.Str(fmt.Sprintf("rank %.2f, expert %.2f", best.Values[moe.ValueLoadRank], best.Values[moe.ValueLoadExpert])))
		status := "ok"
		if len(why) > 0 {
			status = strings.Join(why, "; ")
		}
		for _, fl := range []string{record.FlagBelowFloor, record.FlagAboveLink} {
			if best.Has(fl) {
				status += "; " + fl
			}
		}
		t.Rows = append(t.Rows, append(cells, table.Str(status)))
	}
	t.Notes = append(t.Notes,
		"each row: the same tokens, routing and checks for every implementation; µs: the median per operation (events timer, one launch per operation, plain or a CUDA graph)",
		"fastest: "+rule.Describe()+"; m: the token counts of the row's op, mode, routing, dtype and launch",
		"link GB/s: the bytes rank 0 sent to other GPUs (payload and headers) over the lowest median time; floor: those bytes at the link's ceiling plus one round trip (the in-run cache-served chase through the peer); of floor: the lowest median over it",
		"load: the busiest rank's and the busiest expert's messages over the mean (1.00: even)",
		"dispatch ends with every message in its expert's slot and every count known at the receiver; combine with the weighted sums on the tokens' ranks")
	if f.Header.PEs == 8 {
		t.Notes = append(t.Notes, deepEPNote+" (other hardware: set beside, not a ratio)")
	} else {
		t.Notes = append(t.Notes, fmt.Sprintf("%s: not comparable here: DeepEP measured 8 GPUs, this run %d PE(s)", deepEPNote, f.Header.PEs))
	}
	return t
}

// timed: a point measured, with its samples (what a comparison weighs).
func timed(p *record.Point) bool {
	return p != nil && p.Status == record.StatusOK && len(p.Samples) > 0
}

// entryOf is a point as the decision rule's entry name: its samples, and
// why no verdict may rest on it.
func entryOf(name string, p *record.Point) decide.Entry {
	return decide.Entry{Name: name, Samples: p.Samples, Unjudged: p.Unjudged()}
}
