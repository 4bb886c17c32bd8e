// Package latency registers the latency benchmarks. A latency here is a
// round trip: iteration i+1 cannot start before iteration i's result is
// back. put and p complete with quiet (the remote acknowledgement); get and
// g chase pointers through a 256 MiB chain in the peer's memory (several
// times the L2), the next address read from what the last transfer
// delivered, so neither overlapping transfers nor a cache can answer;
// ping-pongs wait for the peer's reply; fetching atomics feed the returned
// value into the next address. What only measures how long an operation
// takes to issue (a blocking put returns when its source is reusable, a
// fence only orders) is registered under latency/issue/ and never enters
// the paper's latency table.
//
// One timer makes the figure: device events around a launch that loops the
// operation (the mean per operation, one sample per launch, as NVSHMEM's
// perftest measures). The same launches read %globaltimer around every
// iteration in the kernel: that distribution (p50, p99) is the point's
// kernel_timer, which must agree with the events within 10 % (else the
// point is flagged); it is never the figure. Round trips are never halved.
// With one PE a ping-pong runs as a loopback between two CTAs through the
// PE's own symmetric memory (recorded as effective path "loopback").
//
// Every round trip is compared with the in-run floor of its path, measured
// first: limit/chase-peer (one thread's dependent 8-byte loads through a
// random cycle of lines in the peer's memory, the L1 bypassed), served by
// memory (a chain of at least 4 × L2, the L2 flushed: the floor of the
// chases) and by the cache (a chain read into the L2 first: the floor of
// round trips whose result lands in the target's L2, such as a store's
// acknowledgement or an atomic). limit/chase-local is the same through
// this PE's own memory, the local reference.
package latency

import (
	"fmt"
	"strings"

	"github.com/nvshbench/nvshbench/cuda"
	"github.com/nvshbench/nvshbench/harness"
	"github.com/nvshbench/nvshbench/record"
)

// MaxSize caps the message sizes of this suite (the run's --sizes above it
// are for the bandwidth suites).
const MaxSize = 1 << 20

type kind struct {
	id, desc string
	op       string // a name of the shim's dispatch table
	scope    string // thread, warp, block, or "" (fixed shape)
	modes    []string
	sized    bool // sweeps the message size (else one 8-byte message)
	// atomic: a line of the shim's NB_ATOMICS, one counter of each of its
	// types (the size; a float atomic's points also name the dtype)
	atomic *cuda.Op
	// hostIssued: the host enqueues the calls on the stream (no kernel of ours)
	hostIssued bool
	ncclHost   bool // NCCL's host API: NCCL on every PE, one GPU per rank
	allPEs     bool // every PE takes part, or the kernel stays on one GPU: no pair (harness.Benchmark.AllPEs)
	threads    int  // fixed thread count (0: from the scope / the run)
	nccl       bool // NCCL's device API
	notDef     bool // not in the default selection
	// unverifiable: why its points have nothing to check ("" for none)
	unverifiable string
	// cudaOnly: its timed code calls neither library (the empty kernel)
	cudaOnly bool
}

// code is what a kind's timed operation runs: NCCL's (its device API or
// its host calls), CUDA alone, else NVSHMEM's.
func (k kind) code() record.Code {
	switch {
	case k.nccl || k.ncclHost:
		return record.Code{Calls: record.NCCL}
	case k.cudaOnly:
		return record.Code{Calls: record.CUDAOnly}
	}
	return record.Code{Calls: record.NVSHMEM}
}

var scopeCode = map[string]int32{"thread": cuda.ScopeThread, "warp": cuda.ScopeWarp, "block": cuda.ScopeBlock}

// pingPong: both PEs run a side of the round trip (lat.pp_* in the shim).
func (k kind) pingPong() bool { return strings.HasPrefix(k.op, "lat.pp_") }

func kinds() []kind {
	var ks []kind
	for _, sc := range []string{"thread", "warp", "block"} {
		ks = append(ks,
			kind{id: "latency/put/" + sc, op: "lat.put", scope: sc, modes: []string{"nbi"}, sized: true,
				desc: fmt.Sprintf("ROUND TRIP: putmem_nbi at %s scope + quiet per iteration (completion acknowledged by the peer)", sc)},
			kind{id: "latency/get/" + sc, op: "lat.get", scope: sc, modes: []string{"nbi", "blocking"}, sized: true,
				desc: fmt.Sprintf("ROUND TRIP: pointer chase with getmem at %s scope (nbi + quiet, and blocking) through a 256 MiB chain in the peer's memory", sc)},
			kind{id: "latency/issue/put/" + sc, op: "lat.put_issue", scope: sc, modes: []string{"blocking"}, sized: true,
				desc: fmt.Sprintf("ISSUE TIME, not a round trip: blocking putmem at %s scope returns when its source is reusable", sc)},
			kind{id: "latency/nccl-lsa/put/" + sc, op: "lat.lsa_put", scope: sc, sized: true, nccl: true, notDef: sc != "block",
				desc: fmt.Sprintf("ROUND TRIP: NCCL device API, the message stored at %s scope through ncclGetLsaPointer + a system-scope fence per iteration (as NVSHMEM's quiet over P2P)", sc)},
			kind{id: "latency/nccl-lsa/get/" + sc, op: "lat.lsa_get", scope: sc, sized: true, nccl: true, notDef: sc != "block",
				desc: fmt.Sprintf("ROUND TRIP: NCCL device API, pointer chase at %s scope loading through ncclGetLsaPointer, a 256 MiB chain in the peer's window", sc)},
		)
	}
	ks = append(ks,
		kind{id: "latency/p", op: "lat.p", sized: true, desc: "ROUND TRIP: the message as uint64 nvshmem_p's spread over one CTA, then quiet, per iteration"},
		kind{id: "latency/g", op: "lat.g", sized: true, desc: "ROUND TRIP: pointer chase with uint64 nvshmem_g's over one CTA through a 256 MiB chain in the peer's memory"},
		kind{id: "latency/pingpong/put-signal", op: "lat.pp_put_signal", sized: true, desc: "ROUND TRIP: putmem_signal_nbi_block, the peer waits on the signal and replies the same way"},
		kind{id: "latency/pingpong/p", op: "lat.pp_p", sized: true, desc: "ROUND TRIP: uint64 p's + fence + p of a flag, the peer waits on the flag and replies"},
		kind{id: "latency/pingpong/atomic", op: "lat.pp_atomic", threads: 1, desc: "ROUND TRIP: atomic add of a flag, the peer waits and replies"},
		kind{id: "latency/pingpong/signal", op: "lat.pp_signal", threads: 1, desc: "ROUND TRIP: nvshmemx_signal_op only (no payload)"},
		kind{id: "latency/pingpong/signal-spin", op: "lat.pp_signal_spin", threads: 1,
			desc: "ROUND TRIP: nvshmemx_signal_op only, each side waiting in its own acquire load loop instead of nvshmem_signal_wait_until (beside latency/pingpong/signal: what the wait call adds)"},
		kind{id: "latency/put-signal", op: "lat.put_signal", sized: true, desc: "ROUND TRIP: one-way putmem_signal_nbi_block + quiet per iteration (completion acknowledged)"},
		kind{id: "latency/issue/fence", op: "lat.fence", threads: 1, desc: "ISSUE TIME, not a round trip: 8-byte p followed by nvshmem_fence (ordering only)"},
		kind{id: "latency/quiet", op: "lat.quiet", threads: 1, desc: "ROUND TRIP: 8-byte p followed by nvshmem_quiet (completion)"},
		kind{id: "latency/issue/flush", op: "lat.flush", threads: 1,
			desc: "ISSUE TIME, not a round trip: 8-byte putmem_nbi followed by nvshmemx_flush (the source reusable; NVSHMEM >= 3.7, waived on older)"},
		kind{id: "latency/issue/region", op: "lat.region",
			desc: "ISSUE TIME, not a round trip: an empty RMA region, nvshmemx_region_start_block + nvshmemx_region_stop_block with the BATCH_RMA hint and nothing inside, one CTA (what a region adds to a burst; NVSHMEM >= 3.8, waived on older)"},
		kind{id: "latency/launch", op: "lat.launch", threads: 1, allPEs: true, desc: "empty kernel launched back to back on one stream: the floor under any host-issued operation",
			unverifiable: "an empty kernel moves no data: nothing to check", cudaOnly: true},
	)
	// Ordering and synchronisation issued on a stream from the host (no
	// kernel of ours: the events time the calls).
	ks = append(ks,
		kind{id: "latency/stream/quiet", op: "lat.quiet_on_stream", threads: 1, hostIssued: true,
			desc: "ROUND TRIP: nvshmemx_putmem_on_stream of 8 bytes + nvshmemx_quiet_on_stream per iteration, issued from the host (the on-stream twin of latency/quiet)"},
		kind{id: "latency/stream/barrier", op: "lat.barrier_on_stream", threads: 1, hostIssued: true, allPEs: true,
			desc: "ROUND TRIP: nvshmemx_barrier_all_on_stream by every PE per iteration, issued from the host"},
		kind{id: "latency/stream/sync", op: "lat.sync_on_stream", threads: 1, hostIssued: true, allPEs: true,
			desc: "ROUND TRIP: nvshmemx_sync_all_on_stream by every PE per iteration (arrival only), issued from the host"},
	)
	// NCCL's send/recv as a ping-pong: the host-driven round trip.
	ks = append(ks, kind{id: "latency/nccl/pingpong", op: "lat.nccl_pingpong", sized: true, threads: 1, hostIssued: true, ncclHost: true,
		desc: "ROUND TRIP: ncclSend PE 0 -> peer, then the peer's ncclSend back, host-issued (NCCL's kernels; to itself on one PE)"})
	// The atomics of NVSHMEM's AMO API, as the shim's table lists them
	// (atomics.cuh): one thread on one counter of each type the atomic
	// takes (u64, u32: size 8, 4; NVSHMEM 3.7's float adds f64, f32, f16).
	for _, o := range cuda.Atomics("lat") {
		ks = append(ks, kind{id: "latency/atomic/" + strings.TrimPrefix(o.Name, "lat."), op: o.Name, threads: 1, atomic: &o,
			desc: "ROUND TRIP: " + o.Desc + ", one thread on one counter (a fetching atomic's next address depends on the value returned; any other ends with quiet)"})
	}
	return ks
}

func init() {
	for _, k := range kinds() {
		harness.Register(harness.Benchmark{
			ID: k.id, Suite: "latency", Desc: k.desc, Default: !k.notDef, AllPEs: k.allPEs,
			IgnoresCTAs: true, IgnoresThreads: fixedThreads(k), OwnLaunch: ownLaunch(k),
			Metrics:      []string{record.MetricLatency},
			Floors:       floors(k.op),
			Points:       points(k),
			Args:         argsOf(k),
			Describe:     describe(k),
			Unverifiable: k.unverifiable,
			Code:         k.code(),
		})
	}
	for _, f := range []struct{ id, desc string }{
		{"limit/chase-peer", "FLOOR: one thread's dependent 8-byte loads through a random cycle of 128-byte lines in the peer's memory (the L1 bypassed), served by memory (at least 4 × L2, the L2 flushed) and by the L2 (a chain read into it first): no round trip to the peer can be faster"},
		{"limit/chase-local", "FLOOR: the same chase through this PE's own memory, served by memory and by the L2: the local reference"},
	} {
		harness.Register(harness.Benchmark{
			ID: f.id, Suite: "latency", Desc: f.desc, Default: true, AllPEs: f.id == "limit/chase-local",
			IgnoresCTAs: true, IgnoresThreads: true, OwnLaunch: "1 CTA × 1",
			Metrics: []string{record.MetricLatency},
			Points: func(c *harness.Config) []record.Params {
				var out []record.Params
				for _, served := range []string{harness.ServedMemory, harness.ServedCache} {
					out = append(out, record.Params{Size: 8, CTAs: 1, Threads: 1, Path: c.Path, Extra: map[string]string{"served": served}})
				}
				return out
			},
			Args:     chaseArgs(f.id == "limit/chase-local"),
			Describe: chaseDescribe(f.id == "limit/chase-local"),
			Code:     record.Code{Calls: record.CUDAOnly}, // plain loads
		})
	}
}

// floors: a round trip (its entry's T_ROUNDTRIP) is compared with the
// chase through the peer's memory, measured first.
func floors(op string) []string {
	if o, _ := cuda.LookupOp(op); o.Has(cuda.TraitRoundTrip) {
		return []string{"limit/chase-peer"}
	}
	return nil
}

// fixedThreads: the kind launches a thread count of its own (a fixed count,
// or the scope's: 1 thread, one warp); the others take --threads.
func fixedThreads(k kind) bool { return k.threads > 0 || k.scope == "thread" || k.scope == "warp" }

func ownLaunch(k kind) string {
	if k.ncclHost {
		return "NCCL's kernels"
	}
	if k.hostIssued {
		return "host calls on a stream: no kernel"
	}
	if fixedThreads(k) {
		return fmt.Sprintf("1 CTA × %d", threadsFor(k, &harness.Config{}))
	}
	return "1 CTA × --threads"
}

// chaseDescribe: the local chase stays on this PE's GPU, whatever the
// path to the peer.
func chaseDescribe(local bool) func(e *harness.Env, p record.Params, a cuda.Args, r cuda.Result, o *harness.Outcome) {
	return func(e *harness.Env, p record.Params, a cuda.Args, r cuda.Result, o *harness.Outcome) {
		if local {
			o.Effective = "local"
		}
	}
}

// chaseArgs: a floor through the pair's peer's memory, or PE 0's own
// (local); served by the cache: a chain of an eighth of the L2, read into
// it first.
func chaseArgs(local bool) func(e *harness.Env, p record.Params) (cuda.Args, string) {
	return func(e *harness.Env, p record.Params) (cuda.Args, string) {
		j := e.Job
		a := cuda.NewArgs("lat.chase")
		a.Size, a.Seed, a.CTAs, a.Threads = 8, int64(e.Index+1), 1, 1
		a.Iters, a.Warmup, a.Samples = int32(e.Config.Iters), int32(e.Config.Warmup), int32(e.Config.Samples)
		if !local {
			a.Initiator, a.Peer = int32(e.Pair().From), int32(e.Pair().To)
		}
		if p.Extra["served"] == harness.ServedCache {
			a.Extent = j.L2Bytes() / 8
			if a.Extent <= 0 {
				a.Extent = 4 << 20
			}
		}
		if e.Config.Verify {
			a.Verify = 1
		}
		if !local && e.PairPath() == cuda.PathRemote {
			return a, fmt.Sprintf("PE %d has no load/store mapping from PE %d: a chase through its memory needs one", e.Pair().To, e.Pair().From)
		}
		return a, ""
	}
}

func threadsFor(k kind, c *harness.Config) int {
	switch {
	case k.threads > 0:
		return k.threads
	case k.scope == "thread":
		return 1
	case k.scope == "warp":
		return 32
	}
	return c.Threads
}

func points(k kind) func(c *harness.Config) []record.Params {
	return func(c *harness.Config) []record.Params {
		sizes := []int64{8}
		dtypes := map[int64]string{}
		if k.atomic != nil {
			sizes = nil
			for _, c := range k.atomic.Counters {
				sizes = append(sizes, int64(c.Bytes))
				// A float counter's points name its dtype (f32 beside a
				// u32's 4 bytes); the integer ones keep the size alone, as
				// the results they are compared with have it.
				if k.atomic.Floating() {
					dtypes[int64(c.Bytes)] = c.DType
				}
			}
		}
		if k.sized {
			sizes = nil
			for _, s := range c.Sizes {
				if s <= MaxSize {
					sizes = append(sizes, s)
				}
			}
		}
		modes := k.modes
		if len(modes) == 0 {
			modes = []string{""}
		}
		var out []record.Params
		for _, m := range modes {
			for _, s := range sizes {
				p := record.Params{Size: s, Scope: k.scope, CTAs: 1, Threads: threadsFor(k, c), Path: c.Path, Mode: m, DType: dtypes[s]}
				if k.op == "lat.launch" {
					p.Size = 0
				}
				out = append(out, p)
			}
		}
		return out
	}
}

func argsOf(k kind) func(e *harness.Env, p record.Params) (cuda.Args, string) {
	return func(e *harness.Env, p record.Params) (cuda.Args, string) {
		j := e.Job
		size := p.Size
		if size == 0 {
			size = 8
		}
		a := cuda.NewArgs(k.op)
		a.Size, a.Seed, a.CTAs, a.Threads, a.Scope = size, int64(e.Index+1), 1, int32(p.Threads), scopeCode[p.Scope]
		if !k.allPEs {
			pr := e.Pair()
			a.Initiator, a.Peer = int32(pr.From), int32(pr.To)
		}
		a.Iters, a.Warmup, a.Samples = int32(e.Config.Iters), int32(e.Config.Warmup), int32(e.Config.Samples)
		if k.nccl {
			if why := j.NCCLDeviceAPIMissing(); why != "" {
				return a, why
			}
		}
		if k.ncclHost {
			if why := j.NCCLHostMissing(); why != "" {
				return a, why
			}
		}
		if k.pingPong() && e.Pair().From != e.Pair().To && e.PairPath() == cuda.PathLocal {
			return a, "ping-pong between two processes on one GPU: without MPS their kernels time-slice and both spin, so the round trip is not measurable (the 1-PE run measures it as a loopback between two CTAs)"
		}
		if (k.op == "lat.p" || k.op == "lat.g" || k.op == "lat.pp_p") && size%8 != 0 {
			return a, fmt.Sprintf("size %d is not a multiple of the 8-byte element", size)
		}
		if k.atomic != nil {
			a.Elem = int32(size)
			if why := cuda.FloatAtomicOverIBGDA(*k.atomic, j.AnyRemote(), harness.PathName(cuda.PathRemote, e.Config)); why != "" {
				return a, why
			}
		}
		if p.Mode == "blocking" {
			a.Blocking = 1
		}
		if e.Config.Verify {
			a.Verify = 1
		}
		return a, ""
	}
}

func describe(k kind) func(e *harness.Env, p record.Params, a cuda.Args, r cuda.Result, o *harness.Outcome) {
	return func(e *harness.Env, p record.Params, a cuda.Args, r cuda.Result, o *harness.Outcome) {
		if k.pingPong() && e.Pair().From == e.Pair().To {
			o.Effective = "loopback" // two CTAs of the one PE
		}
	}
}
