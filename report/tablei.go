package report

import (
	"fmt"
	"sort"
	"strings"

	"github.com/nvshbench/nvshbench/cuda/shim"
	"github.com/nvshbench/nvshbench/internal/ids"
	"github.com/nvshbench/nvshbench/internal/table"
	"github.com/nvshbench/nvshbench/record"
)

// apiGroup is one group of NVSHMEM's device API as the paper's Table I
// lists them, with the rows of ours that measure it, or why none does.
type apiGroup struct {
	name, api string
	rows      ids.Selector
	except    ids.Selector // rows of rows' folders that belong to another group
	none      string       // why no row measures it ("": rows do)
}

// tableIGroups: the paper's Table I groups (setup, memory management,
// teams, one-sided RMA, atomics, memory ordering, synchronization,
// collectives), in its order.
var tableIGroups = []apiGroup{
	{name: "setup", api: "nvshmem_init, nvshmem_my_pe, nvshmem_n_pes, nvshmem_finalize",
		none: "not a figure of ours: setup runs once a job (the header records the bootstrap and the PEs)"},
	{name: "memory management", api: "nvshmem_malloc, calloc, align, free; the symmetric heap's growth beside a reuse",
		rows: ids.Any(ids.Exact("host/malloc"), ids.Exact("host/calloc"), ids.Exact("host/align"), ids.Exact("host/heap-grow"), ids.Exact("host/heap-reuse"))},
	{name: "teams", api: "nvshmem_team_split_strided, split_2d, destroy; a collective on a split team (team_sync, beside sync_all on WORLD)",
		rows: ids.Any(ids.Exact("host/team-split"), ids.Exact("host/team-split-2d"), ids.Under("collectives/teamsync"))},
	{name: "one-sided RMA", api: "put, get, p, g (thread, warp, block; blocking and nbi), iput, iget, put + signal; the message rate",
		rows: ids.Any(ids.Under("rma/put"), ids.Under("rma/get"), ids.Exact("rma/p"), ids.Exact("rma/g"), ids.Under("rma/iput"), ids.Under("rma/iget"),
			ids.Under("rma/put-signal"), ids.Under("rma/rate"), ids.Under("latency/put"), ids.Under("latency/get"),
			ids.Exact("latency/p"), ids.Exact("latency/g"), ids.Exact("latency/put-signal"), ids.Under("latency/issue/put"))},
	{name: "atomics", api: "add, fetch_add, inc, fetch_inc, set, swap, compare_swap, and, or, xor and their fetch forms",
		rows: ids.Any(ids.Under("rma/atomic"), ids.Under("latency/atomic")), except: ids.Exact("rma/atomic/signal_add")},
	{name: "memory ordering", api: "nvshmem_fence, nvshmem_quiet (device and on a stream)",
		rows: ids.Any(ids.Exact("latency/quiet"), ids.Exact("latency/issue/fence"), ids.Exact("latency/stream/quiet"))},
	{name: "synchronization", api: "signal_op, signal_wait_until, barrier_all, sync_all (device and on a stream)",
		rows: ids.Any(ids.Under("latency/pingpong"), ids.Under("collectives/barrier"), ids.Under("collectives/sync"), ids.Exact("latency/stream/barrier"), ids.Exact("latency/stream/sync"),
			ids.Exact("rma/atomic/signal_add"))},
	{name: "collectives", api: "reduce (AllReduce), reducescatter, broadcast, alltoall, fcollect (allgather)", rows: movingCollectives()},
}

// movingCollectives are the rows of the shim's collectives that move a
// payload (cuda/shim's NB_COLLECTIVES, as the guide lists them: a new one
// is counted here with no edit); the barrier, sync and team sync are the
// synchronization and teams groups'.
func movingCollectives() ids.Selector {
	var sels []ids.Selector
	for _, c := range shim.Collectives() {
		if c.Has(shim.TraitPayload) {
			sels = append(sels, ids.Under("collectives/"+c.Base))
		}
	}
	return ids.Any(sels...)
}

// tableI is the paper's Table I, measured: per group, the benchmarks of the
// file that measure it and how many of their points are ok, or why none
// does (the group's reason, or the first waiver's where every point of it
// was waived).
func tableI(f *record.File, tag string) table.Table {
	t := table.Table{Title: "NVSHMEM's device API by group (the paper's Table I), measured" + tag,
		Columns: []string{"group", "the paper lists", "measured here", "points ok", "or why not"},
		Right:   []bool{false, false, false, true, false}}
	t.Long = []bool{false, true, true, false, true}
	for _, g := range tableIGroups {
		if g.none != "" {
			t.Rows = append(t.Rows, []table.Cell{table.Str(g.name), table.Str(g.api), table.Str("–"), table.Str("–"), table.Str(g.none)})
			continue
		}
		bench := map[string]bool{}
		ok, all := 0, 0
		why := ""
		for i := range f.Points {
			p := &f.Points[i]
			if !g.rows.Match(p.ID) || g.except.Match(p.ID) {
				continue
			}
			all++
			switch p.Status {
			case record.StatusOK:
				ok++
				bench[p.ID] = true
			case record.StatusWaived:
				if why == "" {
					why = p.Reason
				}
			}
		}
		var names []string
		for id := range bench {
			names = append(names, id)
		}
		sort.Strings(names)
		measured, count, reason := "–", "–", ""
		switch {
		case all == 0:
			reason = "not in this file (its suites were not run)"
		case ok == 0 && why != "":
			reason = "every point waived: " + why
		case ok == 0:
			reason = "no point ok: see report --points"
		default:
			measured = summarizeIDs(names)
			count = fmt.Sprintf("%d of %d", ok, all)
		}
		t.Rows = append(t.Rows, []table.Cell{table.Str(g.name), table.Str(g.api), table.Str(measured), table.Str(count), table.Str(reason)})
	}
	t.Notes = append(t.Notes, "groups: the paper's Table I (arXiv 2606.05951); a row is measured where some point of the group's benchmarks is ok in this file")
	return t
}

// inTableI reports whether some point of the file measures a group of
// Table I.
func inTableI(f *record.File) bool {
	for _, g := range tableIGroups {
		for i := range f.Points {
			if g.rows.Match(f.Points[i].ID) && !g.except.Match(f.Points[i].ID) {
				return true
			}
		}
	}
	return false
}

// summarizeIDs names the benchmarks by their folders: "rma/atomic/* (26)",
// a lone one by itself.
func summarizeIDs(names []string) string {
	count := map[string]int{}
	var order []string
	for _, id := range names {
		dir := id // a suite's own rows (rma/p, rma/g) stand by themselves
		if i := strings.LastIndex(id, "/"); i > 0 && strings.Contains(id[:i], "/") {
			dir = id[:i]
		}
		if count[dir] == 0 {
			order = append(order, dir)
		}
		count[dir]++
	}
	var parts []string
	for _, dir := range order {
		if count[dir] == 1 {
			for _, id := range names {
				if strings.HasPrefix(id, dir+"/") || id == dir {
					parts = append(parts, id)
					break
				}
			}
			continue
		}
		parts = append(parts, fmt.Sprintf("%s/* (%d)", dir, count[dir]))
	}
	return strings.Join(parts, ", ")
}
