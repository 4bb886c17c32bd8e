package rma

import (
	"fmt"

	"github.com/nvshbench/nvshbench/cuda"
	"github.com/nvshbench/nvshbench/harness"
	"github.com/nvshbench/nvshbench/record"
)

// NCCL's device API (2.28): the same bulk put/get as the NVSHMEM rows, at the
// same scopes, sizes and launch shapes, verified the same way, but through
// NCCL's symmetric windows: each scope group copies its chunk with 16-byte
// stores into (loads from) the pointer ncclGetLsaPointer gives for the peer.
// And GIN (GPU-initiated networking) put + signal, which needs a GIN-capable
// network and is waived with NCCL's own refusal where there is none.
func init() {
	for _, op := range []string{"put", "get"} {
		for _, sc := range []string{"block", "warp", "thread"} {
			limit, how := writeLimits, "stores into"
			if op == "get" {
				limit, how = readLimits, "loads from"
			}
			harness.Register(harness.Benchmark{
				ID: "rma/nccl-lsa/" + op + "/" + sc, Suite: "rma",
				Desc: fmt.Sprintf("NCCL device API: bulk %s at %s scope, 16-byte %s the peer's symmetric window through ncclGetLsaPointer (NCCL 2.28+)",
					op, sc, how),
				Metrics: []string{record.MetricBandwidth, record.MetricLatency}, Limits: limit,
				Default: sc == "block",
				Points:  lsaPoints(op, sc),
				Args:    ncclDevArgs("rma.lsa_" + op),
				Code:    record.Code{Calls: record.NCCL},
			})
		}
	}
	harness.Register(harness.Benchmark{
		ID: "rma/nccl-gin/put-signal/block", Suite: "rma", Default: true,
		Desc:    "NCCL device API: GIN put + SignalInc per CTA into the peer's window, the launch ending when the target has seen every signal (needs a GIN-capable network: InfiniBand/RoCE)",
		Metrics: []string{record.MetricBandwidth, record.MetricLatency}, Limits: writeLimits,
		Points: func(c *harness.Config) []record.Params {
			var out []record.Params
			for _, s := range c.Sizes {
				out = append(out, record.Params{Size: s, Op: "gin_put_signal", Scope: "block", CTAs: c.CTAs, Threads: c.Threads, Path: c.Path, Dir: "uni"})
			}
			return out
		},
		Args: ncclDevArgs("rma.gin_put_signal"),
		Code: record.Code{Calls: record.NCCL},
	})
}

func lsaPoints(op, sc string) func(c *harness.Config) []record.Params {
	name := "lsa_" + op
	return func(c *harness.Config) []record.Params {
		var out []record.Params
		for _, d := range dirs(c) {
			for _, s := range c.Sizes {
				out = append(out, record.Params{Size: s, Op: name, Scope: sc, CTAs: c.CTAs, Threads: c.Threads, Path: c.Path, Dir: d})
			}
		}
		if c.LaunchSweep && sc == "block" {
			out = append(out, launchSweep(c, record.Params{Size: c.SweepSize, Op: name, Scope: sc, Path: c.Path, Dir: "uni"})...)
		}
		return out
	}
}

// ncclDevArgs is argsOf with the device API's own waivers (job-wide facts).
func ncclDevArgs(op string) func(e *harness.Env, p record.Params) (cuda.Args, string) {
	base := argsOf(op)
	return func(e *harness.Env, p record.Params) (cuda.Args, string) {
		a, why := base(e, p)
		if why != "" {
			return a, why
		}
		j := e.Job
		if why := j.NCCLDeviceAPIMissing(); why != "" {
			return a, why
		}
		switch op {
		case "rma.lsa_put", "rma.lsa_get":
			if e.PairPath() == cuda.PathRemote {
				return a, fmt.Sprintf("PE %d is not load/store accessible from PE %d: no LSA pointer (NCCL's device API would need GIN)", e.Pair().To, e.Pair().From)
			}
		case "rma.gin_put_signal":
			if e.Pair().From == e.Pair().To {
				return a, "GIN put + signal needs 2 PEs"
			}
		}
		return a, ""
	}
}
