// Package persm registers the bytes-per-SM benchmarks (issue 32): which
// transfer mechanism moves data to a peer with the fewest SMs, and what a
// transfer costs a compute kernel running beside it.
//
//   - persm/<mechanism>: SM stores (st), TMA bulk copies (tma), NVSHMEM's
//     block put (put), NCCL's LSA put (nccl-lsa) over SM budgets (one CTA of
//     512 threads an SM, --sm-budgets), and the copy engine (ce, no SM
//     budget), at every size; the readers take GB/s, GB/s per SM and the
//     smallest budget reaching 90 % of each mechanism's peak from them.
//     Whether the copy engine's copies need an SM after all is checked, not
//     assumed: every point of its rows (ce, ce/beside-*, compute/*/beside-ce)
//     carries ValueCESMFree where the shim could judge it (on one H200 a
//     same-GPU copy waited for a free CTA slot).
//   - persm/<mechanism>/beside-<compute>: the same transfer while a compute
//     kernel (fma: an FMA-bound loop; mma: a tensor-core bf16 loop) holds
//     every other SM, in one fused launch; against persm/<mechanism> it is
//     the transfer's slowdown. The copy engine's (persm/ce/beside-<compute>)
//     cannot be fused: its copies run on their stream while the compute
//     holds every SM on a second one, started before the copies are timed
//     and ended by a copy-engine write after them.
//   - persm/compute/<compute>: the compute kernel alone on the SMs outside
//     each budget (and on every SM: budget 0, the copy engine's partner);
//     persm/compute/<compute>/beside-<mechanism> the same kernel with the
//     transfer beside it: the compute's slowdown. Beside the copy engine
//     (beside-ce) a host thread feeds the copies until the compute ends;
//     the point's values say how busy the copy engine was (ValueCEBusy,
//     ValueCERate) and how long a copy and the feeder's calls for it took
//     (ValueCECopy, ValueCEFeed), the shim failing a launch where it idled;
//     a copy shorter than the feeder's calls is not judged (the two times
//     only).
//
// Every point is verified: the transfer's pattern at its target, the compute
// kernel's results (they depend on how many iterations each CTA ran).
package persm

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/nvshbench/nvshbench/cuda"
	"github.com/nvshbench/nvshbench/harness"
	"github.com/nvshbench/nvshbench/record"
)

// Threads is every bytes-per-SM CTA's size (the shim's PM_THREADS).
const Threads = 512

// Mechanism is a transfer mechanism: its name in IDs and params, and the
// shim's operation.
type Mechanism struct {
	Name, Op, Desc string
	SMs            bool // runs on a budget of SMs; the copy engine has none (whether its copies need one: ValueCESMFree)
}

// Mechanisms in the order readers show them.
var Mechanisms = []Mechanism{
	{"st", "rma.pm_st", "SM load/store: 16-byte vector stores (four loads in flight a thread) into the peer through nvshmem_ptr, a system fence an iteration", true},
	{"tma", "rma.pm_tma", "TMA: cp.async.bulk global → shared → global in 16 KiB tiles, 8 stages, one issuing thread a CTA (sm_90 has no global → global bulk copy)", true},
	{"put", "rma.pm_put", "NVSHMEM: nvshmemx_putmem_nbi_block + quiet, a chunk a CTA", true},
	{"nccl-lsa", "rma.pm_lsa", "NCCL LSA put: 16-byte stores through ncclGetLsaPointer into the peer's window (NCCL 2.28+)", true},
	{"ce", ceOp, "copy engine: cudaMemcpyAsync into the peer's buffer, no SM budget (whether its copies need an SM is checked: value ce_sm_free)", false},
}

// Compute is a compute kernel run beside a transfer.
type Compute struct{ Name, Op, Desc string }

// Computes: the FMA-bound loop and the tensor-core loop.
var Computes = []Compute{
	{"fma", "rma.pm_fma", "an FMA-bound loop (8 dependent fp32 FMA chains a thread)"},
	{"mma", "rma.pm_mma", "a tensor-core loop (wmma bf16 16x16x16, fp32 accumulate, a tile a warp)"},
}

// ExtraBeside is the params' key naming the partner of a point that runs
// beside another kernel (absent: alone).
const ExtraBeside = "beside"

// ceOp is the copy engine's operation, which has no SM budget.
const ceOp = "rma.pm_ce"

var writeLimits = []string{"limit/sm-copy", "limit/ce-copy"}

const ownLaunch = "one CTA of 512 threads an SM, over --sm-budgets"

func init() {
	for _, m := range Mechanisms {
		b := harness.Benchmark{
			ID: "persm/" + m.Name, Suite: "persm",
			Desc:        "bytes per SM: " + m.Desc + ", over SM budgets and sizes",
			IgnoresCTAs: true, IgnoresThreads: true, OwnLaunch: ownLaunch,
			Metrics: []string{record.MetricBandwidth, record.MetricLatency}, Limits: writeLimits,
			Points: transferPoints(m, "", false),
			Args:   args(m.Op, ""),
			Code:   codeOf(m),
		}
		if !m.SMs {
			b.OwnLaunch = "copy engine: no kernel"
			b.Describe = ceValues
		}
		harness.Register(b)
		for _, c := range Computes {
			beside := harness.Benchmark{
				ID: "persm/" + m.Name + "/beside-" + c.Name, Suite: "persm",
				Desc:        fmt.Sprintf("bytes per SM: %s, while %s holds every other SM (one fused launch)", m.Desc, c.Desc),
				IgnoresCTAs: true, IgnoresThreads: true, OwnLaunch: ownLaunch + "; the compute on the others",
				Metrics: []string{record.MetricBandwidth, record.MetricLatency}, Limits: writeLimits,
				Points: transferPoints(m, c.Name, true),
				Args:   args(m.Op, c.Op),
				Code:   codeOf(m),
			}
			if !m.SMs {
				beside.Desc = fmt.Sprintf("bytes per SM: %s, while %s holds every SM (on a second stream, running before the copies are timed, ended by a copy-engine write after them)", m.Desc, c.Desc)
				beside.OwnLaunch = "copy engine: no kernel; the compute on every SM, a second stream"
				beside.Describe = ceValues
			}
			harness.Register(beside)
		}
	}
	for _, c := range Computes {
		harness.Register(harness.Benchmark{
			ID: "persm/compute/" + c.Name, Suite: "persm",
			Desc:        fmt.Sprintf("bytes per SM: %s alone on the SMs outside each budget (time an iteration)", c.Desc),
			IgnoresCTAs: true, IgnoresThreads: true, OwnLaunch: "one CTA of 512 threads on each SM outside --sm-budgets",
			Metrics: []string{record.MetricLatency},
			Points: func(cfg *harness.Config) []record.Params {
				var out []record.Params
				for _, b := range append([]int{0}, besideBudgets(cfg)...) { // 0: every SM, as beside the copy engine
					out = append(out, record.Params{Op: c.Name, CTAs: b, Threads: Threads, Path: cfg.Path, Dir: "uni"})
				}
				return out
			},
			Args: args(c.Op, ""),
			Code: record.Code{Calls: record.CUDAOnly},
		})
		for _, m := range Mechanisms {
			// The copy engine holds no SM: the compute beside it runs on every
			// SM (budget 0), at each size of the copies a host thread feeds.
			budgets := besideBudgets
			if !m.SMs {
				budgets = func(*harness.Config) []int { return []int{0} }
			}
			beside := harness.Benchmark{
				ID: "persm/compute/" + c.Name + "/beside-" + m.Name, Suite: "persm",
				Desc:        fmt.Sprintf("bytes per SM: %s on the SMs outside each budget while %s runs on the budget (one fused launch)", c.Desc, m.Desc),
				IgnoresCTAs: true, IgnoresThreads: true, OwnLaunch: "one CTA of 512 threads an SM: the transfer on --sm-budgets, the compute on the others",
				Metrics: []string{record.MetricLatency},
				Points: func(cfg *harness.Config) []record.Params {
					var out []record.Params
					for _, s := range cfg.Sizes {
						for _, b := range budgets(cfg) {
							out = append(out, record.Params{Size: s, Op: c.Name, CTAs: b, Threads: Threads, Path: cfg.Path, Dir: "uni",
								Extra: map[string]string{ExtraBeside: m.Name}})
						}
					}
					return out
				},
				Args: args(c.Op, m.Op),
				Code: codeOf(m), // the transfer runs in the timed launch
			}
			if !m.SMs {
				beside.Desc = fmt.Sprintf("bytes per SM: %s on every SM while %s runs beside it (a host thread keeps copies in flight from before the compute starts until it has ended)", c.Desc, m.Desc)
				beside.OwnLaunch = "one CTA of 512 threads on every SM; the copies on a second stream"
				beside.Describe = ceValues
			}
			harness.Register(beside)
		}
	}
}

// codeOf is what a mechanism's transfer runs: NVSHMEM's put, NCCL's LSA
// pointer, else CUDA alone (stores through nvshmem_ptr, TMA, the copy
// engine).
func codeOf(m Mechanism) record.Code {
	switch m.Name {
	case "put":
		return record.Code{Calls: record.NVSHMEM}
	case "nccl-lsa":
		return record.Code{Calls: record.NCCL}
	}
	return record.Code{Calls: record.CUDAOnly}
}

// besideBudgets are the budgets that leave the compute kernel an SM.
func besideBudgets(c *harness.Config) []int {
	return slices.DeleteFunc(c.Budgets(), func(b int) bool { return b >= c.GridSMs() })
}

func transferPoints(m Mechanism, beside string, compute bool) func(c *harness.Config) []record.Params {
	return func(c *harness.Config) []record.Params {
		budgets := c.Budgets()
		if compute {
			budgets = besideBudgets(c)
		}
		if !m.SMs {
			budgets = []int{0} // no SM: no budget
		}
		var out []record.Params
		for _, s := range c.Sizes {
			for _, b := range budgets {
				p := record.Params{Size: s, Op: m.Name, CTAs: b, Path: c.Path, Dir: "uni"}
				if m.SMs {
					p.Threads = Threads
				}
				if beside != "" {
					p.Extra = map[string]string{ExtraBeside: beside}
				}
				out = append(out, p)
			}
		}
		return out
	}
}

// args turns a point into the shim's arguments: op, beside partner (an
// operation of the shim's table, "" for none), PE 0 towards the job's peer.
func args(op, partner string) func(e *harness.Env, p record.Params) (cuda.Args, string) {
	return func(e *harness.Env, p record.Params) (cuda.Args, string) {
		j := e.Job
		a := cuda.NewArgs(op)
		a.Size, a.Seed, a.CTAs, a.Threads = p.Size, int64(e.Index+1), int32(p.CTAs), Threads
		if a.Size == 0 {
			a.Size = 16 // a compute kernel alone moves nothing; the shim wants a size
		}
		if a.CTAs == 0 && op == ceOp {
			a.CTAs, a.Threads = 1, 32 // the copy engine: the shim's minimal launch shape, no kernel of its own
		}
		a.Iters, a.Warmup, a.Samples = int32(e.Config.Iters), int32(e.Config.Warmup), int32(e.Config.Samples)
		a.Initiator, a.Peer, a.Elem = int32(e.Pair().From), int32(e.Pair().To), 1
		if e.Config.Verify {
			a.Verify = 1
		}
		if partner != "" {
			o, ok := cuda.LookupOp(partner)
			if !ok {
				return a, "the shim has no " + partner
			}
			a.Impl = int32(o.Value) // the shim names a partner by its operation's code
		}
		moves := []string{op, partner}
		if e.PairPath() == cuda.PathRemote && slices.ContainsFunc(moves, loadStoreOnly) {
			return a, fmt.Sprintf("PE %d is not reachable by load/store from PE %d (no P2P mapping)", e.Pair().To, e.Pair().From)
		}
		if slices.Contains(moves, "rma.pm_tma") && p.Size%16 != 0 {
			return a, fmt.Sprintf("size %d is not a multiple of 16 bytes: TMA moves 16-byte multiples", p.Size)
		}
		if slices.Contains(moves, "rma.pm_lsa") {
			if why := j.NCCLDeviceAPIMissing(); why != "" {
				return a, why
			}
		}
		return a, ""
	}
}

// loadStoreOnly: the shim's entry of op says it runs only over a load/store
// mapping to the peer (NVSHMEM's put also runs over a remote transport).
func loadStoreOnly(op string) bool {
	o, ok := cuda.LookupOp(op)
	return ok && o.Has(cuda.TraitLoadStore)
}

// The values of a compute kernel's point beside the copy engine: the least
// share of a timed window the copy engine was busy (0..1), the rate its
// copies moved in the windows (B/s), a copy's time on the copy engine (s)
// and the feeder thread's CPU time in its CUDA calls a copy (s, the most of
// a launch). Where a copy is shorter than the feeder's calls for it (no
// host thread could keep that copy engine busy), the shim does not judge
// the point: it has the two times, no busy share or rate.
const (
	// ValueCESMFree: on a persm/ce point (alone or beside a compute kernel),
	// 1 where one of its copies completed while a kernel held every CTA slot
	// of the GPU (the copy needs no SM: a copy engine's), 0 where it waited
	// for a slot (the driver ran it as a kernel: on one H200, driver 580,
	// same-GPU cudaMemcpyAsync did, results/h200-2026-12-01g); absent where
	// not checked (files before it, or the check could not hold every slot,
	// or ran under CUDA_DEVICE_MAX_CONNECTIONS=1: the shim's note says
	// "not judged", and goes).
	ValueCESMFree = "ce_sm_free"
	ValueCEBusy   = "ce_busy"
	ValueCERate   = "ce_bytes_per_s"
	ValueCECopy   = "ce_copy_s"
	ValueCEFeed   = "ce_feed_s"
)

// The shim's notes on such a point (persm.cuh, pm_end), which it writes
// into the result's detail: busyNote where it judged its launches,
// unfedNote where a copy was shorter than the feeder's calls for it, and
// "copy engine busy: not judged, ..." where no launch lasted long enough.
var (
	busyNote  = regexp.MustCompile(`^copy engine busy ([0-9.]+) % of the timed window at the least \(.*\), moving ([0-9.eE+-]+) B/s beside the compute; a copy ([0-9.eE+-]+) us, the feeder's calls ([0-9.eE+-]+) us a copy`)
	unfedNote = regexp.MustCompile(`^copy engine busy: not judged: a copy of [0-9]+ B takes ([0-9.eE+-]+) us, within twice the feeder's enqueue time \(the feeder's calls ([0-9.eE+-]+) us a copy`)
)

// The shim's answer to whether a copy-engine row's copy needs an SM
// (persm.cuh, pm_sm_check, pm_sm_note): it leads the detail of every such
// point's initiator, another note (busyNote's, unfedNote's) after it past
// "; ". "ran": a copy completed while a kernel held every CTA slot (1);
// "waited": it did not (0); "not judged: why": no value.
const smPrefix = "copy engine SM check: "

var smNote = regexp.MustCompile(`^copy engine SM check: (?:(ran|waited) while [0-9]+ CTAs held every slot|not judged: [^;]*)$`)

// ceValues is the copy engine's rows' Describe: the SM check's answer,
// then (a fed compute point) how busy the copy engine was.
func ceValues(_ *harness.Env, _ record.Params, _ cuda.Args, _ cuda.Result, o *harness.Outcome) {
	smValue(o)
	busyValues(o)
}

// smValue moves the SM check's note into ValueCESMFree (none where not
// judged) and leaves what follows it in the detail; a detail that does
// not lead with the note (a mismatch's) stays as it is.
func smValue(o *harness.Outcome) {
	if !strings.HasPrefix(o.Detail, smPrefix) {
		return
	}
	note, rest, _ := strings.Cut(o.Detail, "; ")
	m := smNote.FindStringSubmatch(note)
	if m == nil {
		return
	}
	if m[1] != "" {
		if o.Values == nil {
			o.Values = map[string]float64{}
		}
		o.Values[ValueCESMFree] = map[string]float64{"ran": 1, "waited": 0}[m[1]]
	}
	o.Detail = rest
}

// busyValues moves the shim's note into the point's values: a note, not a
// mismatch, so it leaves the detail (which the verification's record
// reads); a mismatch's detail stays.
func busyValues(o *harness.Outcome) {
	if !strings.HasPrefix(o.Detail, "copy engine busy") {
		return
	}
	var keys []string
	m := busyNote.FindStringSubmatch(o.Detail)
	if m != nil {
		keys = []string{ValueCEBusy, ValueCERate, ValueCECopy, ValueCEFeed}
	} else if m = unfedNote.FindStringSubmatch(o.Detail); m != nil {
		keys = []string{ValueCECopy, ValueCEFeed}
	} else if strings.HasPrefix(o.Detail, "copy engine busy: not judged") {
		o.Detail = "" // no launch long enough: nothing to keep
		return
	} else {
		return
	}
	vals := map[string]float64{}
	for i, k := range keys {
		v, err := strconv.ParseFloat(m[i+1], 64)
		if err != nil {
			return
		}
		switch k {
		case ValueCEBusy:
			v /= 100
		case ValueCECopy, ValueCEFeed:
			v *= 1e-6
		}
		vals[k] = v
	}
	if o.Values == nil {
		o.Values = map[string]float64{}
	}
	for k, v := range vals {
		o.Values[k] = v
	}
	o.Detail = ""
}
