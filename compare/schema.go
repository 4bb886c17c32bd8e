package compare

import (
	"maps"
	"strings"

	"github.com/nvshbench/nvshbench/record"
)

// What changed between results schema 1 and 2 (record.SchemaVersion), as
// far as matching points goes. Schema 1 timed every latency point twice,
// one row per timer (params.extra.timer "events" and "globaltimer");
// schema 2 has one row, the events figure, with the in-kernel times as its
// kernel_timer. Schema 1 recorded no launch mode for collectives: its
// device kernels looped the operations in one kernel (fused), the host APIs
// launched once per operation; schema 2 says which (params.launch) and
// measures the device kernels both ways. Schema 2 (202d209) also ends every
// iteration of a store with quiet or a system-scope fence, where schema 1
// waited once per launch: at sizes a cache holds, such a row measures
// something else now. And within schema 1 (7ccfacc) the blocking put and the
// fence moved to latency/issue/ (issue times, not round trips): the same
// operations under new names. Schema 3 takes a point several PEs time
// (a collective, MoE, a bidirectional transfer) as its slowest PE's time,
// where schema 2 took PE 0's.
const (
	// WhyTimerRow: a schema-1 in-kernel timer row has no schema-2 row.
	WhyTimerRow = "schema 1's in-kernel timer row (extra.timer=globaltimer): schema 2 keeps those times as the kernel_timer of the events row, a spread beside the figure, not a row of its own"
	// WhyPerOp: schema 1 measured no device collective one launch per operation.
	WhyPerOp = "schema 1 ran the device collectives fused only (the operations looped in one kernel): it has no one-launch-per-operation row"
	// WhySlowestPE: since schema 3 a figure several PEs timed is the slowest PE's.
	WhySlowestPE = "since schema 3 a point several PEs time (a collective, a MoE step, a bidirectional transfer) is the slowest PE's time at each launch, as the operation costs; schema 2 recorded PE 0's"
	// WhyStores: the store operations end delivered at every iteration since schema 2.
	WhyStores = "since schema 2 every iteration of a store (put, put+signal, p, st, the LSA put, the SM copy) ends with quiet or a system-scope fence; schema 1 waited once per launch, so at cache-held sizes the two rows time different things"
)

// inferredLaunch is said under the table where schema-1 collectives were
// given the launch mode they ran with.
const inferredLaunch = "schema 1 recorded no launch mode: its collectives are matched as they ran then (device kernels fused in one kernel, the host APIs one launch per operation, as a schema-2 file of the comparison shows for each benchmark)"

// upgrade rewrites a schema-1 point's identity as schema 2 writes the same
// measurement, in place (the params' extra map is copied, never changed):
// the events timer's row loses its timer parameter, renamed benchmarks take
// their new IDs, and a collective without a launch mode gets the one it ran
// with where a schema-2 file measured that benchmark (device: it has fused
// rows). It reports whether it inferred a launch mode.
func upgrade(p *record.Point, measured, fused map[string]bool) bool {
	if p.Params.Extra["timer"] == "events" {
		p.Params.Extra = maps.Clone(p.Params.Extra)
		delete(p.Params.Extra, "timer")
		if len(p.Params.Extra) == 0 {
			p.Params.Extra = nil
		}
	}
	switch {
	case p.ID == "latency/fence":
		p.ID = "latency/issue/fence"
	case strings.HasPrefix(p.ID, "latency/put/") && p.Params.Mode == "blocking":
		p.ID = "latency/issue/put/" + strings.TrimPrefix(p.ID, "latency/put/")
	}
	if strings.HasPrefix(p.ID, "collectives/") && p.Params.Launch == "" && measured[p.ID] {
		p.Params.Launch = record.LaunchPerOp
		if fused[p.ID] {
			p.Params.Launch = record.LaunchFused
		}
		return true
	}
	return false
}

// timerRow reports whether p is a schema-1 in-kernel timer row.
func timerRow(p *record.Point) bool {
	return p.Timer == "globaltimer" || p.Params.Extra["timer"] == "globaltimer"
}

// gone says why a point of a file of schema from has no counterpart in a
// file of schema to because of what changed between them ("" when the
// schemas do not explain it: then it is missing). fused are the
// collectives a schema-2 file measured fused.
func gone(p *record.Point, from, to int, fused map[string]bool) string {
	switch {
	case from < 2 && to >= 2 && timerRow(p):
		return WhyTimerRow
	case from >= 2 && to < 2 && strings.HasPrefix(p.ID, "collectives/") && p.Params.Launch == record.LaunchPerOp && fused[p.ID]:
		return WhyPerOp
	}
	return ""
}

// changed says why a point matched across schemas a and b measures
// something else in one than in the other ("" when it does not).
func changed(p *record.Point, a, b int) string {
	if (a < 3) != (b < 3) && severalTimers(p) {
		return WhySlowestPE
	}
	if (a < 2) == (b < 2) {
		return ""
	}
	id, mode := p.ID, p.Params.Mode
	switch {
	case id == "rma/p", id == "rma/st", id == "limit/sm-copy", strings.HasPrefix(id, "rma/nccl-lsa/put/"):
		return WhyStores
	case strings.HasPrefix(id, "rma/put/"), strings.HasPrefix(id, "rma/put-signal/"):
		if mode != "blocking" { // a blocking store returned delivered in both
			return WhyStores
		}
	}
	return ""
}

// severalTimers: the point's figure comes from several PEs' timing (every
// PE times a collective and a MoE step; both PEs a bidirectional
// transfer).
func severalTimers(p *record.Point) bool {
	if p.Params.Dir == "bidir" {
		return true
	}
	return (strings.HasPrefix(p.ID, "collectives/") || strings.HasPrefix(p.ID, "moe/")) && p.Params.PEs > 1
}

// StoreIDs and RenamedIDs name the benchmarks the schema rules above know,
// for a test that they are still registered.
var (
	StoreIDs   = []string{"rma/p", "rma/st", "limit/sm-copy", "rma/nccl-lsa/put/", "rma/put/", "rma/put-signal/"}
	RenamedIDs = []string{"latency/issue/fence", "latency/issue/put/"}
)
