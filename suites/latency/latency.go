// Package latency registers the latency benchmarks: completion latency of
// put/get (thread, warp, block scope; _nbi + quiet, and blocking) and of
// scalar p/g, ping-pong round trips (put + signal, p + flag, atomic, signal),
// fence vs quiet, fetching atomics, one-way put + signal, and the empty
// kernel launch as the floor of host-issued work.
//
// Every point runs twice, once per timer: "events" (device events around one
// launch that loops the operation: the mean per operation, one sample per
// launch, as NVSHMEM's perftest measures) and "globaltimer" (%globaltimer
// read by thread 0 around each iteration of one launch: one sample per
// operation, so p50/p90/p99/max). Round trips are labelled as such and never
// halved. With one PE a ping-pong runs as a loopback between two CTAs through
// the PE's own symmetric memory (recorded as effective path "loopback").
package latency

import (
	"fmt"

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
	op       int32
	scope    string // thread, warp, block, or "" (fixed shape)
	modes    []string
	sized    bool // sweeps the message size (else one 8-byte message)
	threads  int  // fixed thread count (0: from the scope / the run)
	events   bool // events timer only (host launches)
}

func kinds() []kind {
	var ks []kind
	for _, op := range []struct {
		name string
		code int32
	}{{"put", cuda.LatPut}, {"get", cuda.LatGet}} {
		for _, sc := range []string{"thread", "warp", "block"} {
			ks = append(ks, kind{id: "latency/" + op.name + "/" + sc, op: op.code, scope: sc, modes: []string{"nbi", "blocking"}, sized: true,
				desc: fmt.Sprintf("%s completion latency at %s scope: %smem_nbi + quiet per iteration, and the blocking call", op.name, sc, op.name)})
		}
	}
	ks = append(ks,
		kind{id: "latency/p", op: cuda.LatP, sized: true, desc: "the message as uint64 nvshmem_p's spread over one CTA, then quiet, per iteration"},
		kind{id: "latency/g", op: cuda.LatG, sized: true, desc: "the message as uint64 nvshmem_g's spread over one CTA, per iteration"},
		kind{id: "latency/pingpong/put-signal", op: cuda.LatPPPutSignal, sized: true, desc: "ROUND TRIP: putmem_signal_nbi_block, the peer waits on the signal and replies the same way"},
		kind{id: "latency/pingpong/p", op: cuda.LatPPP, sized: true, desc: "ROUND TRIP: uint64 p's + fence + p of a flag, the peer waits on the flag and replies"},
		kind{id: "latency/pingpong/atomic", op: cuda.LatPPAtomic, threads: 1, desc: "ROUND TRIP: atomic add of a flag, the peer waits and replies"},
		kind{id: "latency/pingpong/signal", op: cuda.LatPPSignal, threads: 1, desc: "ROUND TRIP: nvshmemx_signal_op only (no payload)"},
		kind{id: "latency/put-signal", op: cuda.LatPutSignal, sized: true, desc: "one-way putmem_signal_nbi_block + quiet per iteration (completion at the source)"},
		kind{id: "latency/fence", op: cuda.LatFence, threads: 1, desc: "8-byte p followed by nvshmem_fence (ordering only)"},
		kind{id: "latency/quiet", op: cuda.LatQuiet, threads: 1, desc: "8-byte p followed by nvshmem_quiet (completion)"},
		kind{id: "latency/atomic/fetch_add", op: cuda.LatFetchAdd, threads: 1, desc: "uint64 atomic fetch_add, one thread, complete on return"},
		kind{id: "latency/atomic/compare_swap", op: cuda.LatCSwap, threads: 1, desc: "uint64 atomic compare_swap, one thread, complete on return"},
		kind{id: "latency/launch", op: cuda.LatLaunch, threads: 1, events: true, desc: "empty kernel launched back to back on one stream: the floor under any host-issued operation"},
	)
	return ks
}

func init() {
	for _, k := range kinds() {
		k := k
		harness.Register(harness.Benchmark{
			ID: k.id, Suite: "latency", Desc: k.desc, Default: true,
			Metrics: []string{results.MetricLatency},
			Points:  points(k),
			Exec:    exec(k),
		})
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
					if k.op == cuda.LatLaunch {
						p.Size = 0
					}
					out = append(out, p)
				}
			}
		}
		return out
	}
}

func exec(k kind) func(e *harness.Env, p results.Params) (harness.Outcome, error) {
	return func(e *harness.Env, p results.Params) (harness.Outcome, error) {
		var o harness.Outcome
		pr, err := harness.PeerOf(e)
		if err != nil {
			return o, err
		}
		o.Effective, o.Timer = pr.Effective, p.Extra["timer"]
		if pr.Waived != "" {
			o.Waived = pr.Waived
			return o, nil
		}
		pingpong := k.op >= cuda.LatPPPutSignal && k.op <= cuda.LatPPSignal
		if pingpong && pr.Path == cuda.PathLocal && e.NPEs > 1 {
			o.Waived = "ping-pong between two processes on one GPU: without MPS their kernels time-slice and both spin, so the round trip is not measurable (the 1-PE run measures it as a loopback between two CTAs)"
			return o, nil
		}
		if pingpong && e.NPEs == 1 {
			o.Effective = "loopback" // two CTAs of the one PE
		}
		size := p.Size
		if size == 0 {
			size = 8
		}
		if (k.op == cuda.LatP || k.op == cuda.LatG || k.op == cuda.LatPPP) && size%8 != 0 {
			o.Waived = fmt.Sprintf("size %d is not a multiple of the 8-byte element", size)
			return o, nil
		}
		a := cuda.LatArgs{Size: size, Seed: int64(e.Index + 1), Op: k.op, Threads: int32(p.Threads), Iters: int32(e.Config.Iters),
			Warmup: int32(e.Config.Warmup), Samples: int32(e.Config.Samples), Peer: int32(pr.PE)}
		if sc, ok := map[string]int32{"thread": cuda.ScopeThread, "warp": cuda.ScopeWarp, "block": cuda.ScopeBlock}[p.Scope]; ok {
			a.Scope = sc
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
		err = o.Absorb(e.Lib.Latency(a))
		return o, err
	}
}
