// Package host registers the host calls of NVSHMEM's API that the paper's
// Table I opens with (the shim's host.cuh): the symmetric heap's
// allocations (nvshmem_malloc, calloc, align, each with its free) by size,
// and a team split of every PE with its destroy. Every PE makes each call
// (they are collective); the events around a launch's calls time them, the
// stream idle. Heap growth (an allocation past the part of the heap already
// mapped) has rows of its own: host/heap-grow (every allocation commits
// memory) beside host/heap-reuse (every allocation the block just freed),
// both under a 2 MiB NVSHMEM_CUMEM_GRANULARITY (their points' own
// environment); host/malloc's timed allocations reuse the block the last
// one freed.
package host

import (
	"fmt"

	"github.com/nvshbench/nvshbench/cuda"
	"github.com/nvshbench/nvshbench/harness"
	"github.com/nvshbench/nvshbench/record"
)

// MaxSize caps the allocations (the run's larger sizes are for the
// bandwidth suites; the symmetric heap also holds the run's buffers).
const MaxSize = 64 << 20

// GrowGranularity is the granularity the heap's growth rows run under
// (NVSHMEM_CUMEM_GRANULARITY; a Hopper GPU's own is 2 MiB, and NVSHMEM
// takes the larger of the two): their sizes start there, so no allocation
// fits in what the one before committed.
const GrowGranularity = 2 << 20

func init() {
	for _, h := range []struct{ id, op, desc string }{
		{"host/malloc", "host.malloc", "nvshmem_malloc(size) + nvshmem_free, every PE, from the host"},
		{"host/calloc", "host.calloc", "nvshmem_calloc(1, size) + nvshmem_free, every PE, from the host"},
		{"host/align", "host.align", "nvshmem_align(4096, size) + nvshmem_free, every PE, from the host"},
	} {
		harness.Register(harness.Benchmark{ID: h.id, Suite: "host", Desc: h.desc, Default: true,
			IgnoresCTAs: true, IgnoresThreads: true, OwnLaunch: "host calls: no kernel",
			Metrics: []string{record.MetricLatency},
			Points: func(c *harness.Config) []record.Params {
				var out []record.Params
				for _, s := range c.Sizes {
					if s <= MaxSize {
						out = append(out, record.Params{Size: s, Op: "alloc", Path: c.Path})
					}
				}
				return out
			},
			Args: argsOf(h.op)})
	}
	// The heap's growth beside a reuse (host.cuh: host.heap_grow,
	// host.heap_reuse): one call a sample, by size from the granularity to
	// MaxSize, in workers whose heap commits memory by GrowGranularity
	// (NVSHMEM's default, 512 MiB, would leave most growth calls placed in
	// memory an earlier one committed).
	for _, h := range []struct{ id, op, desc string }{
		{"host/heap-grow", "host.heap_grow", "nvshmem_malloc(size) past every block allocated before (none freed): each call commits physical memory to the symmetric heap (NVSHMEM_CUMEM_GRANULARITY=2 MiB) and maps it on every PE; every PE, from the host, one call a sample. Growth where NVSHMEM's heap uses CUDA VMM (NVSHMEM_DISABLE_CUDA_VMM unset)"},
		{"host/heap-reuse", "host.heap_reuse", "nvshmem_free of the last block + nvshmem_malloc(size) of the same size: the block just freed, memory already committed (beside host/heap-grow: the same sizes and granularity; it pays the free too); every PE, from the host, one call a sample"},
	} {
		harness.Register(harness.Benchmark{ID: h.id, Suite: "host", Desc: h.desc, Default: true,
			IgnoresCTAs: true, IgnoresThreads: true, OwnLaunch: "host calls: no kernel, one a sample",
			Metrics: []string{record.MetricLatency},
			Points: func(c *harness.Config) []record.Params {
				var out []record.Params
				for _, s := range c.Sizes {
					if s >= GrowGranularity && s <= MaxSize {
						out = append(out, record.Params{Size: s, Op: "alloc", Path: c.Path,
							Env: map[string]string{"NVSHMEM_CUMEM_GRANULARITY": fmt.Sprint(GrowGranularity)}})
					}
				}
				return out
			},
			Args: argsOf(h.op)})
	}
	harness.Register(harness.Benchmark{ID: "host/team-split", Suite: "host", Default: true,
		Desc:        "nvshmem_team_split_strided of every PE of NVSHMEM_TEAM_WORLD + nvshmem_team_destroy, every PE, from the host",
		IgnoresCTAs: true, IgnoresThreads: true, OwnLaunch: "host calls: no kernel",
		Metrics: []string{record.MetricLatency},
		Points: func(c *harness.Config) []record.Params {
			return []record.Params{{Size: 0, Op: "split", Path: c.Path}}
		},
		Args: argsOf("host.team_split")})
	harness.Register(harness.Benchmark{ID: "host/team-split-2d", Suite: "host", Default: true,
		Desc:        "nvshmem_team_split_2d of NVSHMEM_TEAM_WORLD into rows of 2 PEs and their columns + nvshmem_team_destroy of both, every PE, from the host (beside host/team-split's split_strided)",
		IgnoresCTAs: true, IgnoresThreads: true, OwnLaunch: "host calls: no kernel",
		Metrics: []string{record.MetricLatency},
		Points: func(c *harness.Config) []record.Params {
			return []record.Params{{Size: 0, Op: "split2d", Path: c.Path}}
		},
		Args: argsOf("host.team_split_2d")})
}

func argsOf(op string) func(e *harness.Env, p record.Params) (cuda.Args, string) {
	return func(e *harness.Env, p record.Params) (cuda.Args, string) {
		a := cuda.NewArgs(op)
		a.Size, a.Seed, a.CTAs, a.Threads, a.Peer = max(p.Size, 8), int64(e.Index+1), 1, 32, int32(e.Job.Peer()) // a split moves nothing: 8, the shim's least size
		a.Iters, a.Warmup, a.Samples = int32(e.Config.Iters), int32(e.Config.Warmup), int32(e.Config.Samples)
		if e.Config.Verify {
			a.Verify = 1
		}
		if (op == "host.team_split" || op == "host.team_split_2d") && e.Job.NPEs() > 1 && e.Job.SharedGPU() {
			return a, fmt.Sprintf("NVSHMEM's teams with %d PEs on one GPU: its limited multi-PE-per-GPU mode does not make teams (one GPU per PE)", e.Job.NPEs())
		}
		return a, ""
	}
}
