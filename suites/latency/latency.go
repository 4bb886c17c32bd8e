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
// Every point runs twice, once per timer: "events" (device events around
// one launch that loops the operation: the mean per operation, one sample
// per launch, as NVSHMEM's perftest measures) and "globaltimer"
// (%globaltimer read by thread 0 around each iteration of one launch: one
// sample per operation, so p50/p90/p99/max). Round trips are never halved.
// With one PE a ping-pong runs as a loopback between two CTAs through the
// PE's own symmetric memory (recorded as effective path "loopback").
package latency

import (
	"fmt"
	"strings"

	"github.com/nvshbench/nvshbench/cuda"
	"github.com/nvshbench/nvshbench/harness"
	"github.com/nvshbench/nvshbench/results"
)

// MaxSize caps the message sizes of this suite (the run's --sizes above it
// are for the bandwidth suites).
const MaxSize = 1 << 20

var timers = []struct {
	name string
	code int32
}{{"events", cuda.TimerEvents}, {"globaltimer", cuda.TimerGlobal}}

type kind struct {
	id, desc string
	op       string // a name of the shim's dispatch table
	scope    string // thread, warp, block, or "" (fixed shape)
	modes    []string
	sized    bool // sweeps the message size (else one 8-byte message)
	threads  int  // fixed thread count (0: from the scope / the run)
	events   bool // events timer only (host launches)
	nccl     bool // NCCL's device API
	notDef   bool // not in the default selection
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
			kind{id: "latency/issue/put/" + sc, op: "lat.put", scope: sc, modes: []string{"blocking"}, sized: true,
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
		kind{id: "latency/put-signal", op: "lat.put_signal", sized: true, desc: "ROUND TRIP: one-way putmem_signal_nbi_block + quiet per iteration (completion acknowledged)"},
		kind{id: "latency/issue/fence", op: "lat.fence", threads: 1, desc: "ISSUE TIME, not a round trip: 8-byte p followed by nvshmem_fence (ordering only)"},
		kind{id: "latency/quiet", op: "lat.quiet", threads: 1, desc: "ROUND TRIP: 8-byte p followed by nvshmem_quiet (completion)"},
		kind{id: "latency/atomic/fetch_add", op: "lat.fetch_add", threads: 1, desc: "ROUND TRIP: uint64 atomic fetch_add, one thread, the next address depends on the value returned"},
		kind{id: "latency/atomic/compare_swap", op: "lat.compare_swap", threads: 1, desc: "ROUND TRIP: uint64 atomic compare_swap, one thread, the next address depends on the value returned"},
		kind{id: "latency/launch", op: "lat.launch", threads: 1, events: true, desc: "empty kernel launched back to back on one stream: the floor under any host-issued operation"},
	)
	return ks
}

func init() {
	for _, k := range kinds() {
		k := k
		harness.Register(harness.Benchmark{
			ID: k.id, Suite: "latency", Desc: k.desc, Default: !k.notDef,
			IgnoresCTAs: true, IgnoresThreads: k.scope != "block" || k.threads > 0, OwnLaunch: ownLaunch(k),
			Metrics:  []string{results.MetricLatency},
			Points:   points(k),
			Args:     argsOf(k),
			Describe: describe(k),
		})
	}
}

func ownLaunch(k kind) string {
	if k.threads > 0 || k.scope != "block" {
		return fmt.Sprintf("1 CTA × %d", threadsFor(k, &harness.Config{}))
	}
	return "1 CTA × --threads"
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

func points(k kind) func(c *harness.Config) []results.Params {
	return func(c *harness.Config) []results.Params {
		sizes := []int64{8}
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
		var out []results.Params
		for _, t := range timers {
			if k.events && t.code != cuda.TimerEvents {
				continue
			}
			for _, m := range modes {
				for _, s := range sizes {
					p := results.Params{Size: s, Scope: k.scope, CTAs: 1, Threads: threadsFor(k, c), Path: c.Path, Mode: m,
						Extra: map[string]string{"timer": t.name}}
					if k.op == "lat.launch" {
						p.Size = 0
					}
					out = append(out, p)
				}
			}
		}
		return out
	}
}

func argsOf(k kind) func(e *harness.Env, p results.Params) (cuda.Args, string) {
	return func(e *harness.Env, p results.Params) (cuda.Args, string) {
		j := e.Job
		size := p.Size
		if size == 0 {
			size = 8
		}
		a := cuda.NewArgs(k.op)
		a.Size, a.Seed, a.CTAs, a.Threads, a.Peer, a.Scope = size, int64(e.Index+1), 1, int32(p.Threads), int32(j.Peer()), scopeCode[p.Scope]
		a.Iters, a.Warmup, a.Samples = int32(e.Config.Iters), int32(e.Config.Warmup), int32(e.Config.Samples)
		if e.Config.Path == "p2p" && j.PeerPath() == cuda.PathRemote {
			return a, fmt.Sprintf("PE %d has no load/store mapping from PE 0 (no NVLink/PCIe P2P): measure it with --path proxy or --path ibgda", j.Peer())
		}
		if k.nccl {
			if why := j.NCCLDeviceAPIMissing(); why != "" {
				return a, why
			}
		}
		if k.pingPong() && j.NPEs() > 1 && j.SharedGPU() {
			return a, "ping-pong between two processes on one GPU: without MPS their kernels time-slice and both spin, so the round trip is not measurable (the 1-PE run measures it as a loopback between two CTAs)"
		}
		if (k.op == "lat.p" || k.op == "lat.g" || k.op == "lat.pp_p") && size%8 != 0 {
			return a, fmt.Sprintf("size %d is not a multiple of the 8-byte element", size)
		}
		if p.Mode == "blocking" {
			a.Blocking = 1
		}
		if p.Extra["timer"] == "globaltimer" {
			a.Timer = cuda.TimerGlobal
		}
		if e.Config.Verify {
			a.Verify = 1
		}
		return a, ""
	}
}

func describe(k kind) func(e *harness.Env, p results.Params, a cuda.Args, r cuda.Result, o *harness.Outcome) {
	return func(e *harness.Env, p results.Params, a cuda.Args, r cuda.Result, o *harness.Outcome) {
		if k.pingPong() && e.Job.NPEs() == 1 {
			o.Effective = "loopback" // two CTAs of the one PE
		}
	}
}
