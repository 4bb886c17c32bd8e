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

// allocPoints: one point per size from least to MaxSize, in workers with
// env (nil: the run's own).
func allocPoints(least int64, env map[string]string) func(c *harness.Config) []record.Params {
	return func(c *harness.Config) []record.Params {
		var out []record.Params
		for _, s := range c.Sizes {
			if s >= least && s <= MaxSize {
				out = append(out, record.Params{Size: s, Op: "alloc", Path: c.Path, Env: env})
			}
		}
		return out
	}
}

// onePoint: a benchmark with one point, op, unsized.
func onePoint(op string) func(c *harness.Config) []record.Params {
	return func(c *harness.Config) []record.Params { return []record.Params{{Size: 0, Op: op, Path: c.Path}} }
}

func init() {
	// The heap's growth beside a reuse (host.cuh: host.heap_grow,
	// host.heap_reuse) run one call a sample, by size from the granularity
	// to MaxSize, in workers whose heap commits memory by GrowGranularity
	// (NVSHMEM's default, 512 MiB, would leave most growth calls placed in
	// memory an earlier one committed).
	grow := allocPoints(GrowGranularity, map[string]string{"NVSHMEM_CUMEM_GRANULARITY": fmt.Sprint(GrowGranularity)})
	for _, h := range []struct {
		id, op, desc, launch string
		points               func(c *harness.Config) []record.Params
	}{
		{"host/malloc", "host.malloc", "nvshmem_malloc(size) + nvshmem_free, every PE, from the host", "host calls: no kernel", allocPoints(0, nil)},
		{"host/calloc", "host.calloc", "nvshmem_calloc(1, size) + nvshmem_free, every PE, from the host", "host calls: no kernel", allocPoints(0, nil)},
		{"host/align", "host.align", "nvshmem_align(4096, size) + nvshmem_free, every PE, from the host", "host calls: no kernel", allocPoints(0, nil)},
		{"host/heap-grow", "host.heap_grow", "nvshmem_malloc(size) past every block allocated before (none freed): each call commits physical memory to the symmetric heap (NVSHMEM_CUMEM_GRANULARITY=2 MiB) and maps it on every PE; every PE, from the host, one call a sample. Growth where NVSHMEM's heap uses CUDA VMM (NVSHMEM_DISABLE_CUDA_VMM unset)",
			"host calls: no kernel, one a sample", grow},
		{"host/heap-reuse", "host.heap_reuse", "nvshmem_free of the last block + nvshmem_malloc(size) of the same size: the block just freed, memory already committed (beside host/heap-grow: the same sizes and granularity; it pays the free too); every PE, from the host, one call a sample",
			"host calls: no kernel, one a sample", grow},
		{"host/team-split", "host.team_split", "nvshmem_team_split_strided of every PE of NVSHMEM_TEAM_WORLD + nvshmem_team_destroy, every PE, from the host",
			"host calls: no kernel", onePoint("split")},
		{"host/team-split-2d", "host.team_split_2d", "nvshmem_team_split_2d of NVSHMEM_TEAM_WORLD into rows of 2 PEs and their columns + nvshmem_team_destroy of both, every PE, from the host (beside host/team-split's split_strided)",
			"host calls: no kernel", onePoint("split2d")},
	} {
		harness.Register(harness.Benchmark{ID: h.id, Suite: "host", Desc: h.desc, Default: true, AllPEs: true,
			IgnoresCTAs: true, IgnoresThreads: true, OwnLaunch: h.launch,
			Metrics: []string{record.MetricLatency}, Points: h.points, Args: argsOf(h.op), Code: record.Code{Calls: record.NVSHMEM}})
	}
}

func argsOf(op string) func(e *harness.Env, p record.Params) (cuda.Args, string) {
	return func(e *harness.Env, p record.Params) (cuda.Args, string) {
		a := cuda.NewArgs(op)
		a.Size, a.Seed, a.CTAs, a.Threads = max(p.Size, 8), int64(e.Index+1), 1, 32 // a split moves nothing: 8, the shim's least size
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
