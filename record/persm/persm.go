package persm

import (
	"slices"
	"strings"
	"sync"

	"github.com/nvshbench/nvshbench/cuda/shim"
	"github.com/nvshbench/nvshbench/record"
)

// Suite is the family's suite: every row's ID starts with it.
const Suite = "persm"

// ExtraBeside is the params' key naming the partner of a point that runs
// beside another kernel (absent: alone); its ID names the partner too.
const ExtraBeside = "beside"

// ExtraStageOffset is the params' key of a stage-offset row's point: the
// bytes its mechanism's shared-memory stages sit past a 128-byte line.
const ExtraStageOffset = "stage_offset"

// StageOffsets are the offsets a stage-offset row measures: every 16 bytes
// of a 128-byte line (a bulk copy's shared-memory address is 16-byte
// aligned), so one run tells which alignment the stages need.
var StageOffsets = []int{0, 16, 32, 48, 64, 80, 96, 112}

// Threads is every bytes-per-SM CTA's size (the shim's PM_THREADS; a test
// keeps them in step): one CTA of Threads threads an SM.
const Threads = 512

// Mechanism is a transfer mechanism of the persm rows: the name its rows
// go by (persm/<Name>), what it is in words, and the shim's facts of it
// (its entry, its code, whether it runs on SMs, what it needs).
type Mechanism struct {
	Name, Desc string
	shim.PerSMMechanism
}

// Compute is a compute kernel run beside a transfer: its name in rows
// (persm/compute/<Name>), what it is, and its phrase in sentences.
type Compute struct {
	Name, Desc, Phrase string
	shim.PerSMCompute
}

// A mechanism's and a compute kernel's line: the name its rows go by and
// what it is, by the shim's entry; everything else is the shim's (its
// struct in cuda/shim/pm_mech.cuh). Adding a mechanism is its struct, its
// word in NB_PM_MECHANISMS and its line here.
var (
	mechanismLines = []struct{ op, name, desc string }{
		{"rma.pm_st", "st", "SM load/store: 16-byte vector stores (four loads in flight a thread) into the peer through nvshmem_ptr, the budget's threads striding over the buffer together, a system fence an iteration"},
		{"rma.pm_tma", "tma", "TMA: cp.async.bulk global → shared → global in 16 KiB tiles, 8 stages, one issuing thread a CTA, a tile-aligned run a CTA (sm_90 has no global → global bulk copy)"},
		{"rma.pm_put", "put", "NVSHMEM: nvshmemx_putmem_nbi_block + quiet, a tile-aligned run a CTA"},
		{"rma.pm_st1", "st1", "st with one 16-byte load in flight a thread: NVSHMEM's P2P copy loop, which its block put runs on a load/store peer (set beside put)"},
		{"rma.pm_lsa", "nccl-lsa", "NCCL LSA put: 16-byte stores through ncclGetLsaPointer into the peer's window (NCCL 2.28+)"},
		{"rma.pm_ce", "ce", "copy engine: cudaMemcpyAsync into the peer's buffer, no SM budget (whether its copies need an SM is checked: value ce_sm_free)"},
	}
	computeLines = []struct{ op, name, desc, phrase string }{
		{"rma.pm_fma", "fma", "an FMA-bound loop (8 dependent fp32 FMA chains a thread)", "an FMA-bound kernel"},
		{"rma.pm_mma", "mma", "a tensor-core loop (wmma bf16 16x16x16, fp32 accumulate, a tile a warp)", "a tensor-core (bf16 mma) kernel"},
	}
)

// Mechanisms are the shim's mechanisms that have their line here, in the
// shim's order (the order readers show them).
func Mechanisms() []Mechanism { return slices.Clone(mechanisms()) }

// Computes are the shim's compute kernels that have their line here.
func Computes() []Compute { return slices.Clone(computes()) }

var (
	mechanisms = sync.OnceValue(func() []Mechanism {
		var out []Mechanism
		for _, m := range shim.PerSMMechanisms() {
			if i := slices.IndexFunc(mechanismLines, func(l struct{ op, name, desc string }) bool { return l.op == m.Op }); i >= 0 {
				out = append(out, Mechanism{Name: mechanismLines[i].name, Desc: mechanismLines[i].desc, PerSMMechanism: m})
			}
		}
		return out
	})
	computes = sync.OnceValue(func() []Compute {
		var out []Compute
		for _, c := range shim.PerSMComputes() {
			if i := slices.IndexFunc(computeLines, func(l struct{ op, name, desc, phrase string }) bool { return l.op == c.Op }); i >= 0 {
				l := computeLines[i]
				out = append(out, Compute{Name: l.name, Desc: l.desc, Phrase: l.phrase, PerSMCompute: c})
			}
		}
		return out
	})
)

// Runs is what the mechanism's transfer runs (its benchmark's code): NVSHMEM
// where its bytes land at NVSHMEM's symmetric address (NVSHMEM's put names
// the PE), NCCL where in the peer's NCCL window (its LSA pointer), else
// CUDA alone (stores through nvshmem_ptr, TMA, the copy engine).
func (m Mechanism) Runs() record.Code {
	switch m.Dst {
	case "symmetric":
		return record.Code{Calls: record.NVSHMEM}
	case "lsa":
		return record.Code{Calls: record.NCCL}
	}
	return record.Code{Calls: record.CUDAOnly}
}

// LookupMechanism finds a mechanism by its rows' name.
func LookupMechanism(name string) (Mechanism, bool) {
	ms := mechanisms()
	i := slices.IndexFunc(ms, func(m Mechanism) bool { return m.Name == name })
	if i < 0 {
		return Mechanism{}, false
	}
	return ms[i], true
}

// LookupCompute finds a compute kernel by its rows' name.
func LookupCompute(name string) (Compute, bool) {
	cs := computes()
	i := slices.IndexFunc(cs, func(c Compute) bool { return c.Name == name })
	if i < 0 {
		return Compute{}, false
	}
	return cs[i], true
}

// Row is what a persm row is, by its ID:
//
//	persm/<mechanism>                     a transfer alone
//	persm/<mechanism>/beside-<compute>    a transfer beside a compute kernel
//	persm/<mechanism>/stage-offset        a staged transfer alone, its stages off their line (ExtraStageOffset)
//	persm/compute/<compute>               a compute kernel alone
//	persm/compute/<compute>/beside-<mechanism>  a compute kernel beside a transfer
type Row struct {
	Mechanism string // the transfer's ("": a compute kernel alone)
	Compute   string // the compute kernel's ("": a transfer alone)
	// TimesCompute: the row times the compute kernel (its time an
	// iteration), else the transfer (its rate).
	TimesCompute bool
	// StageOffset: the row places a staged mechanism's stages at each of
	// StageOffsets past a 128-byte line (alone; not on its curve).
	StageOffset bool
}

const stageOffsetTail = "/stage-offset"

// ID is the row's benchmark ID.
func (r Row) ID() string {
	if r.StageOffset {
		return Suite + "/" + r.Mechanism + stageOffsetTail
	}
	if r.TimesCompute {
		id := Suite + "/compute/" + r.Compute
		if r.Mechanism != "" {
			id += "/beside-" + r.Mechanism
		}
		return id
	}
	id := Suite + "/" + r.Mechanism
	if r.Compute != "" {
		id += "/beside-" + r.Compute
	}
	return id
}

// Beside reports whether the row's timed kernel ran beside the other.
func (r Row) Beside() bool { return r.Mechanism != "" && r.Compute != "" }

// Partner names what the timed kernel ran beside ("": alone).
func (r Row) Partner() string {
	if !r.Beside() {
		return ""
	}
	if r.TimesCompute {
		return r.Mechanism
	}
	return r.Compute
}

// ParseID reads a persm row's ID; false where the ID is not one, or names
// a mechanism or compute kernel this tool does not know.
func ParseID(id string) (Row, bool) {
	rest, ok := strings.CutPrefix(id, Suite+"/")
	if !ok {
		return Row{}, false
	}
	if m, ok := strings.CutSuffix(rest, stageOffsetTail); ok {
		if mm, known := LookupMechanism(m); !known || !mm.Staged {
			return Row{}, false
		}
		return Row{Mechanism: m, StageOffset: true}, true
	}
	var r Row
	head, beside, has := strings.Cut(rest, "/beside-")
	if c, ok := strings.CutPrefix(head, "compute/"); ok {
		r = Row{Compute: c, TimesCompute: true}
		if has {
			r.Mechanism = beside
		}
	} else {
		r = Row{Mechanism: head}
		if has {
			r.Compute = beside
		}
	}
	if has && beside == "" || r.Mechanism == "" && r.Compute == "" {
		return Row{}, false
	}
	if _, ok := LookupMechanism(r.Mechanism); r.Mechanism != "" && !ok {
		return Row{}, false
	}
	if _, ok := LookupCompute(r.Compute); r.Compute != "" && !ok {
		return Row{}, false
	}
	return r, r.ID() == id
}
