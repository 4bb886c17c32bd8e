// Package moe registers the MoE dispatch and combine benchmarks: the
// expert-parallel pattern that motivates device-initiated communication
// (DeepEP's), on the same tokens, routing and checks for three
// implementations: NVSHMEM (device-initiated, DeepEP's primitive mix),
// NCCL's device API (the same kernels over LSA pointers) and NCCL from the
// host (pack, counts, grouped send/recv, unpack: what frameworks do).
//
// A point is one token count of one mode (ll: a message per (token,
// expert) selection; normal: a message per (token, destination rank)),
// routing (uniform, or Zipf-skewed over the experts) and token type (bf16,
// or fp8 with a float scale per 128 values; combine returns bf16). Its
// figures: the time per operation (events, one launch per operation, plain
// or in a CUDA graph), DeepEP's bandwidth (every selected message's bytes
// over the time: params.size is rank 0's T x k x token bytes), the link
// bandwidth (the bytes rank 0 sent to another GPU, headers included, over
// the time), and the floor (those bytes at the link's rate plus one round
// trip). Every point is checked: each expert slot holds its source's token
// with a header naming it, every count matches the routing, and combine is
// the weighted sum (fp32, to bf16's precision).
package moe

import (
	"fmt"
	"strconv"

	"github.com/nvshbench/nvshbench/cuda"
	"github.com/nvshbench/nvshbench/harness"
	"github.com/nvshbench/nvshbench/record"
)

// The implementations, one benchmark ID each.
var impls = []struct {
	name string
	code int32
	desc string
}{
	{"nvshmem", cuda.ImplNVSHMEMDevice, "NVSHMEM, device-initiated: a warp per message, its slot from a remote atomic on the destination's (expert, source) counter, putmem_nbi_warp of payload and header, quiet, the last warp publishing the count with nvshmemx_signal_op"},
	{"nccl-lsa", cuda.ImplLSAOneShot, "NCCL's device API: the same kernels through ncclGetLsaPointer (16-byte stores, a system-scope atomic, a released store of the count)"},
	{"nccl", cuda.ImplNCCL, "NCCL from the host, as frameworks do it: a pack kernel, the counts exchanged, ncclSend/ncclRecv per peer in one group, an unpack kernel"},
}

// TokenBytes is what one dispatched token weighs: bf16, or fp8 with a
// 4-byte scale per 128 values (DeepEP's low-latency format).
func TokenBytes(hidden int, dtype string) int64 {
	if dtype == "fp8" {
		return int64(hidden) + int64(hidden)/128*4
	}
	return int64(hidden) * 2
}

// HeaderBytes is each message's header (ll: source, token, expert,
// selection; normal: the token's selections on the destination).
func HeaderBytes(mode string) int64 {
	if mode == "normal" {
		return 32
	}
	return 16
}

func init() {
	for _, op := range []string{"dispatch", "combine"} {
		for _, im := range impls {
			harness.Register(harness.Benchmark{
				ID: "moe/" + op + "/" + im.name, Suite: "moe", Default: false,
				Desc:        fmt.Sprintf("MoE %s: %s", op, im.desc),
				IgnoresCTAs: true, IgnoresThreads: true, OwnLaunch: "1 CTA per SM × 512 (NCCL: the library's)",
				Metrics:     []string{record.MetricLatency, record.MetricBandwidth, record.MetricLink},
				Floors:      []string{"limit/chase-peer"},
				CacheExempt: "every message lands in a slot its receiver reads once: the time is the messages' (the floor says what a link allows)",
				Points:      points(op),
				Args:        argsOf(op, im.code),
				Describe:    describe(op),
				Buffer:      buffer,
			})
		}
	}
}

func points(op string) func(c *harness.Config) []record.Params {
	return func(c *harness.Config) []record.Params {
		m := c.MoE
		var out []record.Params
		dtypes := m.DTypes
		if op == "combine" {
			dtypes = []string{"bf16"} // combine returns bf16 whatever was dispatched
		}
		mode := ""
		if c.Graph {
			mode = "graph"
		}
		for _, md := range m.Modes {
			for _, rt := range m.Routings {
				for _, dt := range dtypes {
					for _, t := range m.Tokens {
						ex := map[string]string{"tokens": strconv.Itoa(t), "hidden": strconv.Itoa(m.Hidden), "topk": strconv.Itoa(m.TopK),
							"experts": strconv.Itoa(m.Experts), "moe_mode": md, "routing": rt}
						if rt == "skewed" {
							ex["zipf"] = strconv.FormatFloat(m.Zipf, 'g', -1, 64)
						}
						out = append(out, record.Params{Size: int64(t) * int64(m.TopK) * TokenBytes(m.Hidden, dt), Op: op, DType: dt,
							CTAs: c.GridSMs(), Threads: 512, Path: c.Path, Mode: mode, Launch: record.LaunchPerOp, Extra: ex})
					}
				}
			}
		}
		return out
	}
}

// workload reads a point's MoE parameters.
func workload(p record.Params) (tokens, hidden, topk, experts int, zipf float64) {
	tokens, _ = strconv.Atoi(p.Extra["tokens"])
	hidden, _ = strconv.Atoi(p.Extra["hidden"])
	topk, _ = strconv.Atoi(p.Extra["topk"])
	experts, _ = strconv.Atoi(p.Extra["experts"])
	zipf, _ = strconv.ParseFloat(p.Extra["zipf"], 64)
	return
}

// Seed is the routing's seed of every point (the same tokens and routing
// for every implementation).
const Seed = 20260604

func argsOf(op string, impl int32) func(e *harness.Env, p record.Params) (cuda.Args, string) {
	return func(e *harness.Env, p record.Params) (cuda.Args, string) {
		j := e.Job
		a := cuda.NewArgs("moe." + op)
		tokens, hidden, topk, experts, zipf := workload(p)
		a.Size, a.Seed, a.Impl, a.CTAs, a.Threads = p.Size, Seed, impl, int32(p.CTAs), int32(p.Threads)
		a.Tokens, a.Hidden, a.TopK, a.Experts, a.Zipf = int32(tokens), int32(hidden), int32(topk), int32(experts), zipf
		a.Iters, a.Warmup, a.Samples = int32(e.Config.Iters), int32(e.Config.Warmup), int32(e.Config.Samples)
		if p.DType == "fp8" {
			a.DType = cuda.MoEFP8
		}
		if p.Extra["moe_mode"] == "normal" {
			a.MoEMode = cuda.MoENormal
		}
		if p.Mode == "graph" {
			a.Graph = 1
		}
		if e.Config.Verify {
			a.Verify = 1
		}
		switch {
		case experts%j.NPEs() != 0:
			return a, fmt.Sprintf("%d experts do not divide by %d PEs", experts, j.NPEs())
		case impl == cuda.ImplNCCL && j.NPEs() > 1 && j.SharedGPU():
			return a, "NCCL refuses two ranks on one GPU"
		case impl == cuda.ImplNCCL:
			if why := j.NCCLMissing(); why != "" {
				return a, why
			}
		case impl == cuda.ImplLSAOneShot:
			if why := j.NCCLDeviceAPIMissing(); why != "" {
				return a, why
			}
			if why := j.Unmapped(); why != "" {
				return a, "NCCL's device API dispatch needs load/store access between every pair of ranks: " + why
			}
		}
		return a, ""
	}
}

// describe records the routing's loads and rank 0's bytes to other GPUs.
func describe(op string) func(e *harness.Env, p record.Params, a cuda.Args, r cuda.Result, o *harness.Outcome) {
	return func(e *harness.Env, p record.Params, a cuda.Args, r cuda.Result, o *harness.Outcome) {
		tokens, hidden, topk, experts, zipf := workload(p)
		n := e.Job.NPEs()
		rt := Route(Seed, n, tokens, topk, experts, zipf)
		st := rt.Stats()
		o.Values = map[string]float64{"load_rank": st.LoadRank, "load_expert": st.LoadExp,
			"remote_bytes": float64(RemoteBytes(rt, op, p.Extra["moe_mode"], TokenBytes(hidden, p.DType), int64(hidden)*2))}
		o.Effective = harness.PathName(e.Job.PeerPath(), e.Config)
	}
}

// RemoteBytes are the bytes rank 0 sends to other ranks in one operation:
// dispatch, its messages to experts elsewhere (payload and header);
// combine, the outputs it returns to other ranks' tokens (ll: one per
// selection; normal: one per (token, rank) pair).
func RemoteBytes(rt *Routing, op, mode string, tok, out int64) int64 {
	n, el := rt.Ranks, rt.Experts/rt.Ranks
	var b int64
	for src := 0; src < n; src++ {
		for t := 0; t < rt.Tokens; t++ {
			var seen uint64
			for _, e := range rt.Of(src, t) {
				d := int(e) / el
				switch {
				case op == "dispatch" && src == 0 && d != 0 && mode != "normal":
					b += tok + HeaderBytes(mode)
				case op == "dispatch" && src == 0 && d != 0 && seen>>d&1 == 0:
					b += tok + HeaderBytes(mode)
				case op == "combine" && d == 0 && src != 0 && mode != "normal":
					b += out
				case op == "combine" && d == 0 && src != 0 && seen>>d&1 == 0:
					b += out
				}
				seen |= 1 << d
			}
		}
	}
	return b
}

// buffer is what a point needs of each of a PE's three buffers (the
// shim's moe_plan, the same arithmetic): the receive side for the busiest
// rank, the tables and staging.
func buffer(c *harness.Config, pes int, p record.Params) int64 {
	tokens, hidden, topk, experts, zipf := workload(p)
	if pes <= 0 || experts%pes != 0 || topk > experts || tokens <= 0 {
		return 0 // refused by the flags or waived
	}
	rt := Route(Seed, pes, tokens, topk, experts, zipf)
	st := rt.Stats()
	L := Layout(pes, tokens, topk, experts, hidden, p.DType, p.Extra["moe_mode"], st.MaxSlots, st.MaxArr)
	// A MiB of slack: the shim computes its layout itself (and refuses a
	// point that does not fit, with both sizes).
	return max(L.Remote, L.Local, int64(tokens)*TokenBytes(hidden, p.DType)) + 1<<20
}

// Layout mirrors moe_plan's: the remote and local buffers' bytes.
type LayoutBytes struct{ Remote, Local int64 }

func align256(x int64) int64 { return (x + 255) &^ 255 }

// Layout is moe_plan's arithmetic (cuda/shim/moe.cuh).
func Layout(n, t, k, e, hidden int, dtype, mode string, maxSlots, maxArr int64) LayoutBytes {
	el := int64(e / n)
	tok, out := TokenBytes(hidden, dtype), int64(hidden)*2
	sz := max(tok, out)
	normal := mode == "normal"
	var o int64
	o = align256(o + 8*(el*int64(n)+int64(n)))
	o = align256(o + 8*(el*int64(n)+int64(n)))
	o = align256(o + 8*int64(n))
	o = align256(o + maxSlots*sz)
	o = align256(o + maxSlots*16)
	if normal {
		o = align256(o + maxArr*sz)
		o = align256(o + maxArr*32)
	} else {
		o, o = align256(o), align256(o)
	}
	per := int64(k)
	if normal {
		per = int64(n)
	}
	o = align256(o + int64(t)*per*out)
	remote := o
	ntk := int64(n) * int64(t) * int64(k)
	rows := int64(t)*int64(k) + int64(t)*int64(n) + maxSlots + maxArr
	o = 0
	o = align256(o + 8*(2*int64(n)*el+2*int64(n)))
	o = align256(o + 8*1024)
	o = align256(o + 4*ntk)
	o = align256(o + 4*ntk)
	o = align256(o + 8*int64(n)*int64(e))
	o = align256(o + 8*int64(n)*el*int64(n))
	o = align256(o + 8*int64(n)*int64(n))
	o = align256(o + 8*int64(n)*int64(n))
	o = align256(o + 64*rows)
	o = align256(o + 16*4*rows + 8*int64(t)*int64(max(k, n)))
	o = align256(o + 4*el*int64(n)*int64(t))
	o = align256(o + int64(t)*out)
	o = align256(o + rows*(sz+32))
	o = align256(o + rows*(sz+32))
	return LayoutBytes{Remote: remote, Local: o}
}
