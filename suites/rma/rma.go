// Package rma registers the device-initiated RMA benchmarks: bulk put and
// get (thread, warp and block scope, _nbi and blocking, uni- and
// bidirectional), scalar p and g for 1/2/4/8-byte elements, plain load/store
// through nvshmem_ptr, the atomic rate, and the copy references they are
// measured against in the same run: a copy-engine peer copy and an SM copy
// kernel over a sweep of launch shapes (the best is the reference). What an
// operation is (payload, load/store only, counters) is its entry's traits
// in the shim's table: nothing here restates it.
package rma

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/nvshbench/nvshbench/cuda"
	"github.com/nvshbench/nvshbench/harness"
	"github.com/nvshbench/nvshbench/record"
)

// The limits of writes into the peer (the SM copy kernel and the copy
// engine, whichever is faster) and of reads from it.
var (
	writeLimits = []string{"limit/sm-copy", "limit/ce-copy"}
	readLimits  = []string{"limit/sm-copy-read"}
)

var scopes = map[string]int32{"thread": cuda.ScopeThread, "warp": cuda.ScopeWarp, "block": cuda.ScopeBlock}

// TMAPolicies: the NVSHMEM_TMA_POLICY values the TMA rows run under (FORCE
// fails where TMA cannot serve a transfer; ENABLE falls back to load/store).
var TMAPolicies = []string{"DISABLE", "ENABLE"}

// Regions: the points of rma/rate/put-nbi-region/block (params.extra.region):
// no region (the region kernel with its region calls skipped: one compiled
// loop for both points: rma/rate/put-nbi/block's kernel, compiled apart,
// may be scheduled otherwise, a difference of code a comparison would read
// as the region's) and a region with NVSHMEM's batch-RMA hint.
const RegionNone = "none"

var Regions = []string{RegionNone, "batch_rma"}

// Launch shapes swept by --launch-sweep: CTAs × threads per CTA.
var (
	sweepCTAs    = []int{1, 4, 16, 32, 64, 132, 264, 528, 1056}
	sweepThreads = []int{128, 256, 512, 1024}
)

func init() {
	registerBulk()
	registerTMA()
	registerPutSignal()
	registerStrided()
	registerScalarAndLoadStore()
	registerAtomics()
	registerRates()
	registerHostDriven()
	registerReferences()
	registerIncast()
}

// registerBulk: the bulk put and get at every scope.
func registerBulk() {
	for _, op := range []string{"put", "get"} {
		for _, sc := range []string{"block", "warp", "thread"} {
			limit := writeLimits
			if op == "get" {
				limit = readLimits
			}
			end := "the launch ends with quiet (gets pipeline)"
			if op == "put" {
				end = "every put ends delivered (quiet per iteration)"
			}
			harness.Register(harness.Benchmark{
				ID: "rma/" + op + "/" + sc, Suite: "rma",
				Desc:    fmt.Sprintf("bulk %smem at %s scope (nvshmem%s_%smem_nbi%s), 8 B to 1 GiB; %s", op, sc, xIf(sc), op, scopeSuffix(sc), end),
				Metrics: []string{record.MetricBandwidth, record.MetricLatency}, Limits: limit,
				Default: sc == "block",
				Points:  bulkPoints(op, sc),
				Args:    argsOf("rma." + op),
				Code:    nvshmem,
			})
		}
	}
}

// registerTMA: NVSHMEM's TMA-backed put and get (3.7 and later,
// newer.cuh): one kernel whose CTAs give NVSHMEM shared memory, under each
// TMA policy (NVSHMEM_TMA_POLICY, read at nvshmem_init: the point's own
// environment, so each policy is a worker group of its own): DISABLE
// copies with load/store, ENABLE through TMA where NVSHMEM can.
func registerTMA() {
	for _, op := range []string{"put", "get"} {
		limit := writeLimits
		if op == "get" {
			limit = readLimits
		}
		harness.Register(harness.Benchmark{
			ID: "rma/" + op + "-tma/block", Suite: "rma", Default: true,
			Desc: fmt.Sprintf("bulk nvshmemx_%smem_nbi_block in CTAs that give NVSHMEM shared memory (nvshmemx_give_smem, 64 KiB), under NVSHMEM_TMA_POLICY %s "+
				"(params.extra.tma_policy; ENABLE: TMA copies over P2P where aligned, DISABLE: load/store, the same kernel); NVSHMEM >= 3.7, waived on older", op, strings.Join(TMAPolicies, " and ")),
			Metrics: []string{record.MetricBandwidth, record.MetricLatency}, Limits: limit,
			Points: func(c *harness.Config) []record.Params {
				var out []record.Params
				for _, pol := range TMAPolicies {
					for _, s := range c.Sizes {
						out = append(out, record.Params{Size: s, Op: op + "_tma", Scope: "block", CTAs: c.CTAs, Threads: c.Threads, Path: c.Path, Dir: "uni", Mode: "nbi",
							Extra: map[string]string{"tma_policy": pol}, Env: map[string]string{"NVSHMEM_TMA_POLICY": pol}})
					}
				}
				return out
			},
			Args: argsOf("rma." + op + "_tma"),
			Code: nvshmem,
		})
	}
}

// registerPutSignal: put + signal, DeepEP's dispatch primitive (one
// signal word per scope group, added to once per operation, checked with
// the payload), and a counted signal (NVSHMEM 3.8, newer.cuh:
// nvshmemx_putmem_signal_counted_nbi_block, declared only by an NVSHMEM
// built with NVSHMEM_CFT_HANDLES_SUPPORT, which no library we build
// against is: listed, and waived by the shim with that reason, no kernel;
// not in the default selection: waived on every library we have; its
// sizes are multiples of 16, the call refuses others).
func registerPutSignal() {
	harness.Register(harness.Benchmark{
		ID: "rma/put-signal/counted", Suite: "rma",
		Desc: "bulk nvshmemx_putmem_signal_counted_nbi_block (a put whose signal word counts what landed, waited on with nvshmemx_signal_counted_wait_until) " +
			"beside rma/put-signal/block; needs NVSHMEM >= 3.8 built with NVSHMEM_CFT_HANDLES_SUPPORT (the PyPI 3.8.0 wheel is not): waived, no kernel yet",
		Metrics: []string{record.MetricBandwidth, record.MetricLatency}, Limits: writeLimits,
		Points: func(c *harness.Config) []record.Params {
			var out []record.Params
			for _, s := range c.Sizes {
				if s%16 == 0 {
					out = append(out, record.Params{Size: s, Op: "put_signal_counted", Scope: "block", CTAs: c.CTAs, Threads: c.Threads, Path: c.Path, Dir: "uni", Mode: "nbi"})
				}
			}
			return out
		},
		Args: argsOf("rma.put_signal_counted"),
		Code: nvshmem,
	})
	for _, sc := range []string{"block", "warp", "thread"} {
		harness.Register(harness.Benchmark{
			ID: "rma/put-signal/" + sc, Suite: "rma",
			Desc:    fmt.Sprintf("bulk nvshmem%s_putmem_signal_nbi%s (signal add) at %s scope, 8 B to 1 GiB", xIf(sc), scopeSuffix(sc), sc),
			Metrics: []string{record.MetricBandwidth, record.MetricLatency}, Limits: writeLimits,
			Points: func(c *harness.Config) []record.Params {
				var out []record.Params
				for _, s := range c.Sizes {
					out = append(out, record.Params{Size: s, Op: "put_signal", Scope: sc, CTAs: c.CTAs, Threads: c.Threads, Path: c.Path, Dir: "uni", Mode: "nbi"})
				}
				return out
			},
			Args: argsOf("rma.put_signal"),
			Code: nvshmem,
		})
	}
}

// registerStrided: strided RMA (iput / iget of uint64 elements): the
// peer's side every stride-th element, bandwidth of the elements moved
// only.
func registerStrided() {
	for _, op := range []string{"iput", "iget"} {
		for _, sc := range []string{"block", "warp", "thread"} {
			limit, side := writeLimits, "a contiguous array into every stride-th element of the peer's"
			if op == "iget" {
				limit, side = readLimits, "every stride-th element of the peer's array into a contiguous one"
			}
			harness.Register(harness.Benchmark{
				ID: "rma/" + op + "/" + sc, Suite: "rma", Default: sc == "block",
				Desc: fmt.Sprintf("strided nvshmem%s_uint64_%s%s at %s scope: %s, at element strides %v (bytes: the elements moved)",
					xIf(sc), op, scopeSuffix(sc), sc, side, Strides),
				Metrics: []string{record.MetricBandwidth, record.MetricLatency}, Limits: limit,
				Points: stridedPoints(op, sc),
				Buffer: func(c *harness.Config, pes int, p record.Params) int64 { return StridedSpan(p) },
				Args:   argsOf("rma." + op),
				Code:   nvshmem,
			})
		}
	}
}

// registerScalarAndLoadStore: scalar p and g, and plain loads and stores
// through nvshmem_ptr.
func registerScalarAndLoadStore() {
	for _, op := range []string{"p", "g"} {
		limit := writeLimits
		if op == "g" {
			limit = readLimits
		}
		harness.Register(harness.Benchmark{
			ID: "rma/" + op, Suite: "rma",
			Desc:    fmt.Sprintf("scalar nvshmem_<T>_%s of 1/2/4/8-byte elements, every thread strided over the buffer", op),
			Metrics: []string{record.MetricBandwidth, record.MetricLatency}, Limits: limit, Default: true,
			Points: scalarPoints(op),
			Args:   argsOf("rma." + op),
			Code:   nvshmem,
		})
	}
	harness.Register(harness.Benchmark{ID: "rma/st", Suite: "rma", Default: true,
		Desc:    "plain 16-byte stores through nvshmem_ptr (load/store path, no NVSHMEM call in the loop), a system-scope fence per iteration",
		Metrics: []string{record.MetricBandwidth, record.MetricLatency}, Limits: writeLimits,
		Points: simplePoints("st"), Args: argsOf("rma.st"), Code: cudaOnly})
	harness.Register(harness.Benchmark{ID: "rma/ld", Suite: "rma", Default: true,
		Desc:    "plain 16-byte loads through nvshmem_ptr into local memory",
		Metrics: []string{record.MetricBandwidth, record.MetricLatency}, Limits: readLimits,
		Points: simplePoints("ld"), Args: argsOf("rma.ld"), Code: cudaOnly})
}

// registerAtomics: the atomics of NVSHMEM's AMO API, as the shim's table
// lists them (atomics.cuh), on the counter types each takes (u64 and u32;
// f64, f32 and f16 for NVSHMEM 3.7's float adds); signal_add beside them.
func registerAtomics() {
	type atomic struct {
		name, desc string
		op         cuda.Op
	}
	var atomics []atomic
	for _, o := range cuda.Atomics("rma") {
		name := strings.TrimPrefix(o.Name, "rma.")
		atomics = append(atomics, atomic{name, o.Desc + " rate, every thread on its own counter in the peer's memory", o})
	}
	// The counter update of DeepEP-style dispatch/combine kernels, without
	// a payload: nvshmemx_signal_op, not an AMO of the atomics API.
	signal, _ := cuda.LookupOp("rma.signal_add")
	signal.Counters = []cuda.Counter{{DType: "u64", Bytes: 8}} // signal words are uint64_t
	atomics = append(atomics, atomic{"signal_add", "nvshmemx_signal_op(NVSHMEM_SIGNAL_ADD) rate, every thread on its own remote signal word", signal})
	for _, a := range atomics {
		harness.Register(harness.Benchmark{ID: "rma/atomic/" + a.name, Suite: "rma", Default: true,
			Desc:    a.desc,
			Metrics: []string{record.MetricRate},
			Points: func(c *harness.Config) []record.Params {
				var out []record.Params
				for _, ct := range a.op.Counters {
					out = append(out, record.Params{Op: a.name, CTAs: c.CTAs, Threads: c.Threads, Path: c.Path, DType: ct.DType, Size: int64(ct.Bytes)})
				}
				return out
			},
			Args: atomicArgs(a.op), Code: nvshmem})
	}
}

// registerRates: issue rates, 8-byte messages a second apart from their
// delivery (one quiet a launch): putmem_nbi by every scope group (and in
// an RMA region), p by every thread.
func registerRates() {
	for _, sc := range []string{"block", "warp", "thread"} {
		harness.Register(harness.Benchmark{ID: "rma/rate/put-nbi/" + sc, Suite: "rma", Default: sc != "thread",
			Desc:    fmt.Sprintf("issue rate: every %s puts its own 8-byte message with nvshmem%s_putmem_nbi%s, one quiet a launch", groupWord[sc], xIf(sc), scopeSuffix(sc)),
			Metrics: []string{record.MetricRate},
			Points: func(c *harness.Config) []record.Params {
				return []record.Params{{Op: "rate_put", Scope: sc, CTAs: c.CTAs, Threads: c.Threads, Path: c.Path, Dir: "uni", Mode: "nbi", Size: 8}}
			},
			Args: argsOf("rma.rate_put"), Code: nvshmem})
	}
	// An RMA region (NVSHMEM 3.8, newer.cuh): the block-scope burst of
	// rma/rate/put-nbi/block in a region with NVSHMEM's BATCH_RMA hint,
	// beside the same burst without one (the same kernel, its region calls
	// skipped, a point of this row: like for like in one run).
	harness.Register(harness.Benchmark{ID: "rma/rate/put-nbi-region/block", Suite: "rma", Default: true,
		Desc: "issue rate: every CTA puts its own 8-byte message with nvshmemx_putmem_nbi_block, one quiet a launch, without a region (region none: " +
			"the same kernel, its region calls skipped) and inside nvshmemx_region_start_block / stop_block with the BATCH_RMA hint (params.extra.region); " +
			"over NVLink P2P or one GPU the hint changes nothing (puts are load/store), over IBGDA it defers doorbells to the region's end, " +
			"over the CPU proxy it tags requests for batching; NVSHMEM >= 3.8, both points waived on older",
		Metrics: []string{record.MetricRate},
		Points: func(c *harness.Config) []record.Params {
			var out []record.Params
			for _, reg := range Regions {
				out = append(out, record.Params{Op: "rate_put", Scope: "block", CTAs: c.CTAs, Threads: c.Threads, Path: c.Path, Dir: "uni", Mode: "nbi", Size: 8,
					Extra: map[string]string{"region": reg}})
			}
			return out
		},
		Args: func(e *harness.Env, p record.Params) (cuda.Args, string) {
			if p.Extra["region"] == RegionNone {
				return argsOf("rma.rate_put_region_none")(e, p)
			}
			return argsOf("rma.rate_put_region")(e, p)
		}, Code: nvshmem})
	harness.Register(harness.Benchmark{ID: "rma/rate/p", Suite: "rma", Default: true,
		Desc:    "issue rate: every thread nvshmem_uint64_p's its own word, one quiet a launch",
		Metrics: []string{record.MetricRate},
		Points: func(c *harness.Config) []record.Params {
			return []record.Params{{Op: "rate_p", CTAs: c.CTAs, Threads: c.Threads, Path: c.Path, Dir: "uni", DType: "u64", Size: 8}}
		},
		Args: argsOf("rma.rate_p"), Code: nvshmem})
}

// registerHostDriven: host-driven baselines beside the device put, over
// the same sizes: the copy engine driven by cudaMemcpyAsync (the same call
// as limit/ce-copy, here over the size sweep) and by cudaMemcpyPeerAsync,
// and NCCL's send/recv.
func registerHostDriven() {
	for _, h := range []struct{ id, op, desc string }{
		{"rma/host/memcpy", "rma.ce_copy", "host-driven baseline: cudaMemcpyAsync from local memory into the peer's mapped buffer, one call an operation"},
		{"rma/host/memcpy-peer", "rma.ce_copy_peer", "host-driven baseline: cudaMemcpyPeerAsync into the peer's buffer (its device named), one call an operation"},
	} {
		harness.Register(harness.Benchmark{ID: h.id, Suite: "rma", Desc: h.desc, Default: true,
			IgnoresCTAs: true, IgnoresThreads: true, OwnLaunch: "copy engine: no kernel",
			Metrics: []string{record.MetricBandwidth, record.MetricLatency}, Limits: writeLimits,
			Points: func(c *harness.Config) []record.Params {
				var out []record.Params
				for _, s := range c.Sizes {
					out = append(out, record.Params{Size: s, Op: "copy", CTAs: 1, Threads: 32, Path: c.Path, Dir: "uni"}) // the shim's minimal launch shape: no kernel runs
				}
				return out
			},
			Args: argsOf(h.op), Code: cudaOnly})
	}
	harness.Register(harness.Benchmark{ID: "rma/nccl/send", Suite: "rma", Default: true,
		Desc:        "host-driven baseline: ncclSend from PE 0, ncclRecv at the peer (one group a side an operation; to itself on one PE)",
		IgnoresCTAs: true, IgnoresThreads: true, OwnLaunch: "NCCL's kernels",
		Metrics: []string{record.MetricBandwidth, record.MetricLatency}, Limits: writeLimits,
		Points: func(c *harness.Config) []record.Params {
			var out []record.Params
			for _, s := range c.Sizes {
				out = append(out, record.Params{Size: s, Op: "send", CTAs: 1, Threads: 32, Path: c.Path, Dir: "uni"})
			}
			return out
		},
		Args: ncclP2PArgs(argsOf("rma.nccl_send")), Code: record.Code{Calls: record.NCCL}})
}

// registerReferences: the copy references every bandwidth is checked
// against (limit/*).
func registerReferences() {
	references := []struct {
		id, desc, op string
	}{
		{"limit/ce-copy", "copy reference: copy engine (cudaMemcpyAsync) from local memory into the peer's buffer", "rma.ce_copy"},
		{"limit/sm-copy", "copy reference: SM copy kernel, 16-byte stores into the peer's buffer (a fence per iteration), over a sweep of full-GPU grids", "rma.sm_copy"},
		{"limit/sm-copy-read", "copy reference: SM copy kernel, 16-byte loads from the peer's buffer, over a sweep of full-GPU grids", "rma.sm_copy_read"},
	}
	for _, l := range references {
		own := "a sweep of full-GPU grids"
		if l.op == "rma.ce_copy" {
			own = "copy engine: no kernel"
		}
		harness.Register(harness.Benchmark{ID: l.id, Suite: "rma", Desc: l.desc, Default: true,
			IgnoresCTAs: true, IgnoresThreads: true, OwnLaunch: own,
			Metrics: []string{record.MetricBandwidth},
			Points: func(c *harness.Config) []record.Params {
				var out []record.Params
				for _, g := range referenceGrids(l.op, c) {
					out = append(out, record.Params{Size: c.LimitSize, Op: "copy", CTAs: g[0], Threads: g[1], Path: c.Path, Dir: "uni"})
				}
				return out
			},
			Args: argsOf(l.op), Code: cudaOnly})
	}
}

// What the suite's rows run: NVSHMEM's calls, or CUDA alone (plain loads
// and stores through a pointer nvshmem_ptr gave before the timed
// launches, the copy engine, the copy references).
var (
	nvshmem  = record.Code{Calls: record.NVSHMEM}
	cudaOnly = record.Code{Calls: record.CUDAOnly}
)

// referenceGrids are the launch shapes of a copy reference: CTAs per SM of
// the run's GPUs × threads per CTA, every one measured; the best is the
// reference (which shape reaches the SM copy's best depends on the GPU:
// none is assumed). A quick run tries three.
func referenceGrids(op string, c *harness.Config) [][2]int {
	if op == "rma.ce_copy" {
		return [][2]int{{1, 32}} // unused by the copy engine
	}
	perSM, threads := []int{1, 2, 4, 8}, []int{256, 512, 1024}
	if c.Quick {
		perSM, threads = []int{2, 8}, []int{1024}
	}
	var out [][2]int
	for _, k := range perSM {
		for _, t := range threads {
			out = append(out, [2]int{c.GridSMs() * k, t})
		}
	}
	if c.Quick {
		out = append(out, [2]int{c.GridSMs() * 4, 512})
	}
	return out
}

func xIf(sc string) string {
	if sc == "thread" {
		return ""
	}
	return "x"
}

func scopeSuffix(sc string) string {
	if sc == "thread" {
		return ""
	}
	return "_" + sc
}

func dirs(c *harness.Config) []string {
	if c.Bidir {
		return []string{"uni", "bidir"}
	}
	return []string{"uni"}
}

func modes(c *harness.Config) []string {
	if c.Blocking {
		return []string{"nbi", "blocking"}
	}
	return []string{"nbi"}
}

func bulkPoints(op, sc string) func(c *harness.Config) []record.Params {
	return func(c *harness.Config) []record.Params {
		var out []record.Params
		for _, m := range modes(c) {
			for _, d := range dirs(c) {
				for _, s := range c.Sizes {
					out = append(out, record.Params{Size: s, Op: op, Scope: sc, CTAs: c.CTAs, Threads: c.Threads, Path: c.Path, Dir: d, Mode: m})
				}
			}
		}
		if c.LaunchSweep && sc == "block" {
			out = append(out, launchSweep(c, record.Params{Size: c.SweepSize, Op: op, Scope: sc, Path: c.Path, Dir: "uni", Mode: "nbi"})...)
		}
		return out
	}
}

func scalarPoints(op string) func(c *harness.Config) []record.Params {
	return func(c *harness.Config) []record.Params {
		var out []record.Params
		for _, s := range c.Sizes {
			out = append(out, record.Params{Size: s, Op: op, CTAs: c.CTAs, Threads: c.Threads, Path: c.Path, Dir: "uni", DType: "u64"})
		}
		// The other element widths at one size beyond L2.
		if !c.Quick {
			for _, dt := range []string{"u8", "u16", "u32"} {
				out = append(out, record.Params{Size: 256 << 20, Op: op, CTAs: c.CTAs, Threads: c.Threads, Path: c.Path, Dir: "uni", DType: dt})
			}
		}
		if c.LaunchSweep {
			out = append(out, launchSweep(c, record.Params{Size: c.SweepSize, Op: op, Path: c.Path, Dir: "uni", DType: "u64"})...)
		}
		return out
	}
}

// Strides are the element strides of the strided RMA rows; StridedMax the
// largest size they move (its span at stride 64: 256 MiB).
var Strides = []int{1, 2, 4, 16, 64}

const StridedMax = 4 << 20

// StridedSpan is the bytes a strided point's peer side spans: its elements
// and the gaps between them.
func StridedSpan(p record.Params) int64 {
	st, _ := strconv.Atoi(p.Extra["stride"])
	if st < 1 || p.Size < 8 {
		return p.Size
	}
	return (p.Size/8-1)*int64(st)*8 + 8
}

func stridedPoints(op, sc string) func(c *harness.Config) []record.Params {
	return func(c *harness.Config) []record.Params {
		var out []record.Params
		for _, st := range Strides {
			for _, s := range c.Sizes {
				if s >= 8 && s%8 == 0 && s <= StridedMax {
					out = append(out, record.Params{Size: s, Op: op, Scope: sc, CTAs: c.CTAs, Threads: c.Threads, Path: c.Path, Dir: "uni",
						DType: "u64", Extra: map[string]string{"stride": strconv.Itoa(st)}})
				}
			}
		}
		return out
	}
}

func simplePoints(op string) func(c *harness.Config) []record.Params {
	return func(c *harness.Config) []record.Params {
		var out []record.Params
		for _, s := range c.Sizes {
			out = append(out, record.Params{Size: s, Op: op, CTAs: c.CTAs, Threads: c.Threads, Path: c.Path, Dir: "uni"})
		}
		return out
	}
}

func launchSweep(c *harness.Config, base record.Params) []record.Params {
	var out []record.Params
	for _, ctas := range sweepCTAs {
		for _, th := range sweepThreads {
			if ctas == c.CTAs && th == c.Threads && slices.Contains(c.Sizes, c.SweepSize) {
				continue // already in the size sweep
			}
			p := base
			p.CTAs, p.Threads = ctas, th
			out = append(out, p)
		}
	}
	return out
}

var groupWord = map[string]string{"block": "CTA", "warp": "warp", "thread": "thread"}

var elemBytes = map[string]int32{"u8": 1, "u16": 2, "u32": 4, "u64": 8}

// argsOf turns a point of op (a name of the shim's dispatch table) into the
// shim's arguments: the pair's initiator towards its peer, or a waiver
// decided from job-wide facts.
func argsOf(op string) func(e *harness.Env, p record.Params) (cuda.Args, string) {
	return func(e *harness.Env, p record.Params) (cuda.Args, string) {
		pr := e.Pair()
		a := cuda.NewArgs(op)
		a.Size, a.Seed, a.CTAs, a.Threads = p.Size, int64(e.Index+1), int32(p.CTAs), int32(p.Threads)
		a.Iters, a.Warmup, a.Samples = int32(e.Config.Iters), int32(e.Config.Warmup), int32(e.Config.Samples)
		a.Initiator, a.Peer, a.Elem = int32(pr.From), int32(pr.To), 1
		switch {
		case loadStoreOnly(op) && e.PairPath() == cuda.PathRemote:
			return a, fmt.Sprintf("PE %d is not reachable by load/store from PE %d (no P2P mapping)", pr.To, pr.From)
		case p.Dir == "bidir" && pr.From == pr.To:
			return a, "bidirectional transfers need 2 PEs"
		}
		if v, ok := scopes[p.Scope]; ok {
			a.Scope = v
		}
		if p.Mode == "blocking" {
			a.Blocking = 1
		}
		if p.Dir == "bidir" {
			a.Bidir = 1
		}
		if e.Config.Verify {
			a.Verify = 1
		}
		if st, err := strconv.Atoi(p.Extra["stride"]); err == nil {
			a.Stride = int32(st)
		}
		if v, ok := elemBytes[p.DType]; ok {
			a.Elem = v
			if p.Size%int64(v) != 0 {
				return a, fmt.Sprintf("size %d is not a multiple of the %d-byte element", p.Size, v)
			}
		}
		return a, ""
	}
}

// atomicArgs are argsOf(the atomic) with its counters' bytes (the point's
// size) and the waiver of a float atomic over IBGDA.
func atomicArgs(op cuda.Op) func(e *harness.Env, p record.Params) (cuda.Args, string) {
	args := argsOf(op.Name)
	return func(e *harness.Env, p record.Params) (cuda.Args, string) {
		a, why := args(e, p)
		a.Elem = int32(p.Size)
		if why == "" {
			why = cuda.FloatAtomicOverIBGDA(op, e.Job.AnyRemote(), harness.PathName(cuda.PathRemote, e.Config))
		}
		return a, why
	}
}

// loadStoreOnly: the shim's entry says the operation runs only over a
// load/store mapping to the peer.
func loadStoreOnly(op string) bool {
	o, _ := cuda.LookupOp(op)
	return o.Has(cuda.TraitLoadStore)
}

// ncclP2PArgs adds the waivers of NCCL's send/recv to args: NCCL loaded on
// every PE, one GPU per rank.
func ncclP2PArgs(args func(e *harness.Env, p record.Params) (cuda.Args, string)) func(e *harness.Env, p record.Params) (cuda.Args, string) {
	return func(e *harness.Env, p record.Params) (cuda.Args, string) {
		a, why := args(e, p)
		if why != "" {
			return a, why
		}
		return a, e.Job.NCCLHostMissing()
	}
}

// registerIncast: all to one, the pair matrix's incast: every PE but the
// pair's target puts the size into its own slot of the target's
// destination at once (a launch each, started together), quiet per
// iteration; the figure is the bytes the target received over the slowest
// sender's time. The pair's initiator is the sender whose calibration every
// PE takes.
func registerIncast() {
	harness.Register(harness.Benchmark{
		ID: "rma/put-incast/block", Suite: "rma",
		Desc:    "incast, all to one: every PE but the target puts the size (nvshmemx_putmem_nbi_block, quiet per iteration) into its own slot of the target's destination at once; the target's received bytes over the slowest sender's time",
		Metrics: []string{record.MetricBandwidth, record.MetricLatency},
		Points: func(c *harness.Config) []record.Params {
			var out []record.Params
			for _, s := range c.Sizes {
				out = append(out, record.Params{Size: s, Op: "put_incast", Scope: "block", CTAs: c.CTAs, Threads: c.Threads, Path: c.Path, Dir: "incast", Mode: "nbi"})
			}
			return out
		},
		Args: func(e *harness.Env, p record.Params) (cuda.Args, string) {
			a, why := argsOf("rma.put_incast")(e, p)
			if why == "" && e.Pair().From == e.Pair().To {
				why = "an incast needs 2 PEs or more (a target and a sender)"
			}
			return a, why
		},
		Buffer: func(c *harness.Config, pes int, p record.Params) int64 { return int64(max(pes-1, 1)) * p.Size },
		Code:   nvshmem,
	})
}
