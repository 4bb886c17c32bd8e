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
//     carries the value ce_sm_free where the shim could judge it (the
//     driver may run a same-GPU copy as a kernel: docs/bytes-per-sm.md).
//   - persm/<mechanism>/beside-<compute>: the same transfer while a compute
//     kernel (fma: an FMA-bound loop; mma: a tensor-core bf16 loop) holds
//     every other SM, in one fused launch; against persm/<mechanism> it is
//     the transfer's slowdown. The copy engine's (persm/ce/beside-<compute>)
//     cannot be fused: its copies run on their stream while the compute
//     holds every SM on a second one, started before the copies are timed
//     and ended by a copy-engine write after them.
//   - persm/<mechanism>/stage-offset: a mechanism that stages its bytes in
//     shared memory (tma) on one SM at every size, its stages at each 16
//     bytes past a 128-byte line: which alignment they need.
//   - persm/st1: st with one load in flight a thread, NVSHMEM's P2P copy
//     loop: what bounds put's rate an SM.
//   - persm/compute/<compute>: the compute kernel alone on the SMs outside
//     each budget (and on every SM: budget 0, the copy engine's partner);
//     persm/compute/<compute>/beside-<mechanism> the same kernel with the
//     transfer beside it: the compute's slowdown. Beside the copy engine
//     (beside-ce) a host thread feeds the copies until the compute ends;
//     the point's values say how busy the copy engine was and how long a
//     copy and the feeder's calls for it took, the shim failing a launch
//     where it idled; a copy shorter than the feeder's calls is not judged
//     (the two times only). The copy engine's rows' values are record/persm's
//     (CEValues), which the shim gives as named values.
//
// The mechanisms and compute kernels are the shim's lists (pm_mech.cuh),
// each with its line in record/persm, which also says what a row's ID is:
// every row here is registered from them, none by hand.
//
// Every point is verified: the transfer's pattern at its target, the compute
// kernel's results (they depend on how many iterations each CTA ran).
package persm

import (
	"fmt"
	"slices"
	"strconv"

	"github.com/nvshbench/nvshbench/cuda"
	"github.com/nvshbench/nvshbench/harness"
	"github.com/nvshbench/nvshbench/record"
	persmrec "github.com/nvshbench/nvshbench/record/persm"
)

var writeLimits = []string{"limit/sm-copy", "limit/ce-copy"}

const ownLaunch = "one CTA of 512 threads an SM, over --sm-budgets"

func init() {
	for _, m := range persmrec.Mechanisms() {
		harness.Register(transfer(m, nil))
		for _, c := range persmrec.Computes() {
			harness.Register(transfer(m, &c))
		}
		if m.Staged {
			harness.Register(stageOffset(m))
		}
	}
	for _, c := range persmrec.Computes() {
		harness.Register(computeAlone(c))
		for _, m := range persmrec.Mechanisms() {
			harness.Register(computeBeside(c, m))
		}
	}
}

// transfer is mechanism m's row, alone (c nil) or beside compute kernel c.
func transfer(m persmrec.Mechanism, c *persmrec.Compute) harness.Benchmark {
	row, partner := persmrec.Row{Mechanism: m.Name}, 0
	b := harness.Benchmark{Suite: persmrec.Suite,
		Desc:        "bytes per SM: " + m.Desc + ", over SM budgets and sizes",
		IgnoresCTAs: true, IgnoresThreads: true, OwnLaunch: ownLaunch,
		Metrics: []string{record.MetricBandwidth, record.MetricLatency}, Limits: writeLimits,
	}
	if c != nil {
		row.Compute, partner = c.Name, c.Code
		b.Desc = fmt.Sprintf("bytes per SM: %s, while %s holds every other SM (one fused launch)", m.Desc, c.Desc)
		b.OwnLaunch += "; the compute on the others"
	}
	if !m.SMs {
		b.OwnLaunch = "copy engine: no kernel"
		if c != nil {
			b.Desc = fmt.Sprintf("bytes per SM: %s, while %s holds every SM (on a second stream, running before the copies are timed, ended by a copy-engine write after them)", m.Desc, c.Desc)
			b.OwnLaunch += "; the compute on every SM, a second stream"
		}
		b.Values = persmrec.CEValues
	}
	b.ID = row.ID()
	b.Points = transferPoints(m, row.Partner(), c != nil)
	b.Args = args(m.Op, partner, &m)
	b.Code = m.Runs()
	return b
}

// stageOffset is a staged mechanism's row with its stages at each of
// persmrec.StageOffsets past a 128-byte line in shared memory, on one SM
// (a CTA's stages are its own: the rate an SM moves shows their
// alignment), at each size of the run: one run measures which alignment
// the stages need.
func stageOffset(m persmrec.Mechanism) harness.Benchmark {
	return harness.Benchmark{
		ID: persmrec.Row{Mechanism: m.Name, StageOffset: true}.ID(), Suite: persmrec.Suite,
		Desc:        fmt.Sprintf("bytes per SM: %s on one SM, its shared-memory stages at each 16 bytes past a 128-byte line (which alignment the stages need)", m.Desc),
		IgnoresCTAs: true, IgnoresThreads: true, OwnLaunch: "one CTA of 512 threads on one SM",
		Metrics: []string{record.MetricBandwidth, record.MetricLatency}, Limits: writeLimits,
		Points: func(c *harness.Config) []record.Params {
			var out []record.Params
			for _, s := range c.Sizes {
				for _, o := range persmrec.StageOffsets {
					out = append(out, record.Params{Size: s, Op: m.Name, SMBudget: 1, Threads: persmrec.Threads, Path: c.Path, Dir: "uni",
						Extra: map[string]string{persmrec.ExtraStageOffset: strconv.Itoa(o)}})
				}
			}
			return out
		},
		Args: args(m.Op, 0, &m),
		Code: m.Runs(),
	}
}

// computeAlone is compute kernel c's row alone: on the SMs outside each
// budget, and on every SM (budget 0, the copy engine's partner).
func computeAlone(c persmrec.Compute) harness.Benchmark {
	return harness.Benchmark{
		ID: persmrec.Row{Compute: c.Name, TimesCompute: true}.ID(), Suite: persmrec.Suite,
		Desc:        fmt.Sprintf("bytes per SM: %s alone on the SMs outside each budget (time an iteration)", c.Desc),
		IgnoresCTAs: true, IgnoresThreads: true, OwnLaunch: "one CTA of 512 threads on each SM outside --sm-budgets",
		Metrics: []string{record.MetricLatency},
		Points: func(cfg *harness.Config) []record.Params {
			var out []record.Params
			for _, b := range append([]int{0}, besideBudgets(cfg)...) { // 0: every SM, as beside the copy engine
				out = append(out, record.Params{Op: c.Name, SMBudget: b, Threads: persmrec.Threads, Path: cfg.Path, Dir: "uni"})
			}
			return out
		},
		Args: args(c.Op, 0, nil),
		Code: record.Code{Calls: record.CUDAOnly},
	}
}

// computeBeside is compute kernel c's row beside mechanism m's transfer.
func computeBeside(c persmrec.Compute, m persmrec.Mechanism) harness.Benchmark {
	// A mechanism with no SM holds none: the compute beside it runs on
	// every SM (budget 0), at each size of the copies a host thread feeds.
	budgets := besideBudgets
	if !m.SMs {
		budgets = func(*harness.Config) []int { return []int{0} }
	}
	b := harness.Benchmark{
		ID: persmrec.Row{Mechanism: m.Name, Compute: c.Name, TimesCompute: true}.ID(), Suite: persmrec.Suite,
		Desc:        fmt.Sprintf("bytes per SM: %s on the SMs outside each budget while %s runs on the budget (one fused launch)", c.Desc, m.Desc),
		IgnoresCTAs: true, IgnoresThreads: true, OwnLaunch: "one CTA of 512 threads an SM: the transfer on --sm-budgets, the compute on the others",
		Metrics: []string{record.MetricLatency},
		Points: func(cfg *harness.Config) []record.Params {
			var out []record.Params
			for _, s := range cfg.Sizes {
				for _, b := range budgets(cfg) {
					out = append(out, record.Params{Size: s, Op: c.Name, SMBudget: b, Threads: persmrec.Threads, Path: cfg.Path, Dir: "uni",
						Extra: map[string]string{persmrec.ExtraBeside: m.Name}})
				}
			}
			return out
		},
		Args: args(c.Op, m.Code, &m),
		Code: m.Runs(), // the transfer runs in the timed launch
	}
	if !m.SMs {
		b.Desc = fmt.Sprintf("bytes per SM: %s on every SM while %s runs beside it (a host thread keeps copies in flight from before the compute starts until it has ended)", c.Desc, m.Desc)
		b.OwnLaunch = "one CTA of 512 threads on every SM; the copies on a second stream"
		b.Values = persmrec.CEValues
	}
	return b
}

// besideBudgets are the budgets that leave the compute kernel an SM.
func besideBudgets(c *harness.Config) []int {
	return slices.DeleteFunc(c.Budgets(), func(b int) bool { return b >= c.GridSMs() })
}

func transferPoints(m persmrec.Mechanism, beside string, compute bool) func(c *harness.Config) []record.Params {
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
				p := record.Params{Size: s, Op: m.Name, SMBudget: b, Path: c.Path, Dir: "uni"}
				if m.SMs {
					p.Threads = persmrec.Threads
				}
				if beside != "" {
					p.Extra = map[string]string{persmrec.ExtraBeside: beside}
				}
				out = append(out, p)
			}
		}
		return out
	}
}

// args turns a point into the shim's arguments: the timed kernel's entry
// (op), the partner's code (0: none; the shim names a partner by its code),
// the point's pair (its initiator towards its peer). m is the row's mechanism (nil: none), whose
// needs waive a point this job or size cannot give it.
func args(op string, partner int, m *persmrec.Mechanism) func(e *harness.Env, p record.Params) (cuda.Args, string) {
	return func(e *harness.Env, p record.Params) (cuda.Args, string) {
		a := cuda.NewArgs(op)
		a.Size, a.Seed, a.CTAs, a.Threads = p.Size, int64(e.Index+1), int32(p.SMBudget), persmrec.Threads // one CTA an SM of the budget
		if a.Size == 0 {
			a.Size = 16 // a compute kernel alone moves nothing; the shim wants a size
		}
		if m != nil && !m.SMs && m.Op == op {
			a.CTAs, a.Threads = 1, 32 // no SM of ours: the shim's minimal launch shape, no kernel of its own
		}
		a.Iters, a.Warmup, a.Samples = int32(e.Config.Iters), int32(e.Config.Warmup), int32(e.Config.Samples)
		a.Initiator, a.Peer, a.Elem, a.Impl = int32(e.Pair().From), int32(e.Pair().To), 1, int32(partner)
		if o, ok := p.Extra[persmrec.ExtraStageOffset]; ok {
			n, err := strconv.Atoi(o)
			if err != nil {
				return a, fmt.Sprintf("stage offset %q is not a count of bytes", o)
			}
			a.StageOffset = int32(n)
		}
		if e.Config.Verify {
			a.Verify = 1
		}
		if m == nil {
			return a, ""
		}
		if e.PairPath() == cuda.PathRemote && m.LoadStore {
			return a, fmt.Sprintf("PE %d is not reachable by load/store from PE %d (no P2P mapping)", e.Pair().To, e.Pair().From)
		}
		if p.Size%m.Align != 0 {
			return a, fmt.Sprintf("size %d is not a multiple of %d bytes: %s moves %d-byte multiples", p.Size, m.Align, m.Name, m.Align)
		}
		if m.Dst == "lsa" {
			if why := e.Job.NCCLDeviceAPIMissing(); why != "" {
				return a, why
			}
		}
		return a, ""
	}
}
