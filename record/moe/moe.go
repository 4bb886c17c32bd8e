// Package moe is the record layer of the MoE dispatch/combine family
// (moe/* rows, suites/moe): what such a row is, in one place: its ID
// grammar (moe/<op>/<implementation>), its implementations in the order
// readers show them, the keys of its workload in a point's params, and the
// values its points carry (names, units, ranges). The suite writes rows by
// it; report, model and plots read them by it.
package moe

import (
	"slices"
	"strings"

	"github.com/nvshbench/nvshbench/internal/units"
	"github.com/nvshbench/nvshbench/record"
)

// Suite is the family's suite: every row's ID starts with it.
const Suite = "moe"

// Ops are the operations, each a row per implementation.
var Ops = []string{"dispatch", "combine"}

// Impl is an implementation: its name in IDs and its label in tables.
type Impl struct {
	Name, Label string
}

// Impls are the implementations in the order readers show them.
var Impls = []Impl{{"nvshmem", "NVSHMEM"}, {"nccl-lsa", "NCCL dev API"}, {"nccl", "NCCL host"}}

// The workload's keys in a point's params.extra (its token type is
// params.dtype; a graph launch params.mode "graph").
const (
	ExtraTokens  = "tokens"   // tokens per rank
	ExtraHidden  = "hidden"   // hidden size (elements of a token)
	ExtraTopK    = "topk"     // experts each token selects
	ExtraExperts = "experts"  // experts over all PEs
	ExtraMode    = "moe_mode" // ll (a message per selection) or normal (a message per destination rank)
	ExtraRouting = "routing"  // uniform or skewed
	ExtraZipf    = "zipf"     // the skewed routing's Zipf exponent
)

// The values of a point: the routing's loads (the most loaded rank's and
// expert's share over the mean), the bytes rank 0 sent to other GPUs in
// one operation (record's: the link bandwidth's numerator), and the floor
// (record's: those bytes at the link's ceiling plus one round trip).
const (
	ValueLoadRank    = "load_rank"
	ValueLoadExpert  = "load_expert"
	ValueRemoteBytes = record.ValueRemoteBytes
	ValueFloor       = record.ValueFloor
)

// Values are the values of a MoE point, declared with their units and
// physical ranges (the suite computes the loads and bytes; record derives
// the floor). Every reader refuses a point with one outside its range.
var Values = record.Values{
	{Name: ValueLoadRank, Unit: units.One, Min: 1, Max: 1 << 30, Doc: "the most loaded rank's slots over the mean (1: even)"},
	{Name: ValueLoadExpert, Unit: units.One, Min: 1, Max: 1 << 30, Doc: "the most loaded expert's slots over the mean (1: even)"},
	// A PiB.
	{Name: ValueRemoteBytes, Unit: units.ByteCount, Min: 0, Max: 1 << 50, Doc: "the bytes rank 0 sends to other GPUs in one operation, headers included"},
	{Name: ValueFloor, Unit: units.Seconds, Min: 0, Max: record.MaxSample, Doc: "those bytes at the link's ceiling plus one round trip"},
}

func init() { record.DeclareValues(Values) }

// Row is what a moe row is, by its ID: moe/<op>/<impl>.
type Row struct {
	Op, Impl string
}

// ID is the row's benchmark ID.
func (r Row) ID() string { return Suite + "/" + r.Op + "/" + r.Impl }

// ParseID reads a moe row's ID; false where the ID is not one, or names
// an operation or implementation this tool does not know.
func ParseID(id string) (Row, bool) {
	rest, ok := strings.CutPrefix(id, Suite+"/")
	if !ok {
		return Row{}, false
	}
	op, impl, ok := strings.Cut(rest, "/")
	r := Row{op, impl}
	if !ok || !slices.Contains(Ops, op) || !slices.ContainsFunc(Impls, func(i Impl) bool { return i.Name == impl }) {
		return Row{}, false
	}
	return r, true
}
