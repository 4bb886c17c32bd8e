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
	"sync"

	"github.com/nvshbench/nvshbench/cuda"
	"github.com/nvshbench/nvshbench/harness"
	"github.com/nvshbench/nvshbench/record"
	moerec "github.com/nvshbench/nvshbench/record/moe"
)

// The implementations of record/moe, one benchmark ID each: the shim's
// implementation code, the library its timed step calls and what it does.
var impls = map[string]struct {
	code  int32
	calls record.Libraries
	desc  string
}{
	"nvshmem":  {cuda.ImplNVSHMEMDevice, record.NVSHMEM, "NVSHMEM, device-initiated: a warp per message, its slot from a remote atomic on the destination's (expert, source) counter, putmem_nbi_warp of payload and header, quiet, the last warp publishing the count with nvshmemx_signal_op"},
	"nccl-lsa": {cuda.ImplLSAOneShot, record.NCCL, "NCCL's device API: the same kernels through ncclGetLsaPointer (16-byte stores, a system-scope atomic, a released store of the count)"},
	"nccl":     {cuda.ImplNCCL, record.NCCL, "NCCL from the host, as frameworks do it: a pack kernel, the counts exchanged, ncclSend/ncclRecv per peer in one group, an unpack kernel"},
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
	for _, op := range moerec.Ops {
		for _, ri := range moerec.Impls {
			im, ok := impls[ri.Name]
			if !ok {
				panic("suites/moe: record/moe's implementation " + ri.Name + " has no code here")
			}
			harness.Register(harness.Benchmark{
				ID: moerec.Row{Op: op, Impl: ri.Name}.ID(), Suite: moerec.Suite, Default: false, AllPEs: true,
				Desc:        fmt.Sprintf("MoE %s: %s", op, im.desc),
				IgnoresCTAs: true, IgnoresThreads: true, OwnLaunch: "1 CTA per SM × 512 (NCCL: the library's)",
				Metrics:  []string{record.MetricLatency, record.MetricBandwidth, record.MetricLink},
				Floors:   []string{"limit/chase-peer"},
				Points:   points(op),
				Args:     argsOf(op, im.code),
				Describe: describe(op),
				Buffer:   buffer,
				Code:     record.Code{Calls: im.calls},
			})
		}
	}
}

// Workload is a point's MoE parameters, typed: points writes them into
// the point (record.Params: DType and Extra, the record's form) and
// workloadOf reads them back, the only two places that convert them.
type Workload struct {
	Tokens, Hidden, TopK, Experts int
	Zipf                          float64 // the skewed routing's exponent (0: uniform)
	Mode                          string  // "ll" or "normal"
	Routing                       string  // "uniform" or "skewed"
	DType                         string  // the dispatched tokens: "bf16" or "fp8"
}

// extra is the workload as the point's Extra (DType has its own field).
func (w Workload) extra() map[string]string {
	ex := map[string]string{moerec.ExtraTokens: strconv.Itoa(w.Tokens), moerec.ExtraHidden: strconv.Itoa(w.Hidden), moerec.ExtraTopK: strconv.Itoa(w.TopK),
		moerec.ExtraExperts: strconv.Itoa(w.Experts), moerec.ExtraMode: w.Mode, moerec.ExtraRouting: w.Routing}
	if w.Routing == "skewed" {
		ex[moerec.ExtraZipf] = strconv.FormatFloat(w.Zipf, 'g', -1, 64)
	}
	return ex
}

// workloadOf reads a point's workload (a value that does not parse is 0:
// the points are ours, and buffer and the shim refuse a zero).
func workloadOf(p record.Params) Workload {
	w := Workload{Mode: p.Extra[moerec.ExtraMode], Routing: p.Extra[moerec.ExtraRouting], DType: p.DType}
	w.Tokens, _ = strconv.Atoi(p.Extra[moerec.ExtraTokens])
	w.Hidden, _ = strconv.Atoi(p.Extra[moerec.ExtraHidden])
	w.TopK, _ = strconv.Atoi(p.Extra[moerec.ExtraTopK])
	w.Experts, _ = strconv.Atoi(p.Extra[moerec.ExtraExperts])
	w.Zipf, _ = strconv.ParseFloat(p.Extra[moerec.ExtraZipf], 64)
	return w
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
						w := Workload{Tokens: t, Hidden: m.Hidden, TopK: m.TopK, Experts: m.Experts, Mode: md, Routing: rt, DType: dt}
						if rt == "skewed" {
							w.Zipf = m.Zipf
						}
						out = append(out, record.Params{Size: int64(t) * int64(m.TopK) * TokenBytes(m.Hidden, dt), Op: op, DType: dt,
							CTAs: c.GridSMs(), Threads: 512, Path: c.Path, Mode: mode, Launch: record.LaunchPerOp, Extra: w.extra()})
					}
				}
			}
		}
		return out
	}
}

// routeKey names a routing: the same for every mode, token type and
// operation of a token count.
type routeKey struct {
	pes, tokens, topk, experts int
	zipf                       float64
}

var (
	routesMu sync.Mutex
	routes   = map[routeKey]Stats{}
)

// routeStats is the statistics of the workload's routing over pes ranks,
// computed once per routing in this process (the plan's buffer sizes and
// each point's record both ask).
func routeStats(pes int, w Workload) Stats {
	k := routeKey{pes, w.Tokens, w.TopK, w.Experts, w.Zipf}
	routesMu.Lock()
	defer routesMu.Unlock()
	st, ok := routes[k]
	if !ok {
		st = Route(Seed, pes, w.Tokens, w.TopK, w.Experts, w.Zipf).Stats()
		routes[k] = st
	}
	return st
}

// Seed is the routing's seed of every point (the same tokens and routing
// for every implementation).
const Seed = 20260604

func argsOf(op string, impl int32) func(e *harness.Env, p record.Params) (cuda.Args, string) {
	return func(e *harness.Env, p record.Params) (cuda.Args, string) {
		j := e.Job
		a := cuda.NewArgs("moe." + op)
		w := workloadOf(p)
		a.Size, a.Seed, a.Impl, a.CTAs, a.Threads = p.Size, Seed, impl, int32(p.CTAs), int32(p.Threads)
		a.Tokens, a.Hidden, a.TopK, a.Experts, a.Zipf = int32(w.Tokens), int32(w.Hidden), int32(w.TopK), int32(w.Experts), w.Zipf
		a.Iters, a.Warmup, a.Samples = int32(e.Config.Iters), int32(e.Config.Warmup), int32(e.Config.Samples)
		if w.DType == "fp8" {
			a.DType = cuda.MoEFP8
		}
		if w.Mode == "normal" {
			a.MoEMode = cuda.MoENormal
		}
		if p.Mode == "graph" {
			a.Graph = 1
		}
		if e.Config.Verify {
			a.Verify = 1
		}
		switch {
		case w.Experts%j.NPEs() != 0:
			return a, fmt.Sprintf("%d experts do not divide by %d PEs", w.Experts, j.NPEs())
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
		w := workloadOf(p)
		st := routeStats(e.Job.NPEs(), w)
		o.Values = map[string]float64{moerec.ValueLoadRank: st.LoadRank, moerec.ValueLoadExpert: st.LoadExp,
			moerec.ValueRemoteBytes: float64(RemoteBytes(st, op, w.Mode, TokenBytes(w.Hidden, w.DType), int64(w.Hidden)*2))}
		o.Effective = harness.PathName(e.Job.Widest(), e.Config)
	}
}

// RemoteBytes are the bytes rank 0 sends to other ranks in one operation:
// dispatch, its messages to experts elsewhere (payload and header);
// combine, the outputs it returns to other ranks' tokens (ll: one per
// selection; normal: one per (token, rank) pair).
func RemoteBytes(st Stats, op, mode string, tok, out int64) int64 {
	msgs := st.Sel // ll: a message per selection
	if mode == "normal" {
		msgs = st.Pairs // normal: per (token, rank) pair
	}
	var b int64
	for q := 1; q < len(msgs); q++ {
		if op == "dispatch" {
			b += msgs[0][q] * (tok + HeaderBytes(mode))
		} else {
			b += msgs[q][0] * out
		}
	}
	return b
}

// buffer is what a point needs of each of a PE's three buffers (the
// shim's moe_plan, the same arithmetic): the receive side for the busiest
// rank, the tables and staging.
func buffer(c *harness.Config, pes int, p record.Params) int64 {
	w := workloadOf(p)
	if pes <= 0 || w.Experts%pes != 0 || w.TopK > w.Experts || w.Tokens <= 0 {
		return 0 // refused by the flags or waived
	}
	st := routeStats(pes, w)
	L := Layout(pes, w.Tokens, w.TopK, w.Experts, w.Hidden, w.DType, w.Mode, st.MaxSlots, st.MaxArr)
	// A MiB of slack: the shim computes its layout itself (and refuses a
	// point that does not fit, with both sizes).
	return max(L.Remote, L.Local, int64(w.Tokens)*TokenBytes(w.Hidden, w.DType)) + 1<<20
}

// maxCTAs is the shim's NB_MAX_CTAS: the layout keeps an epoch word per CTA.
const maxCTAs = 1024

// LayoutBytes is moe_plan's layout: the offset of each region of the
// remote buffer (the same on every PE) and of the local one, and their
// sizes (Remote, Local), in moe_place_buffers' order.
type LayoutBytes struct {
	Ctr, Sig, CSig, Slot, SMeta, Arr, AMeta, Comb, Remote                                   int64
	Done, Epoch, Route, W, Cnt, ROff, AOff, Pairs, List, Tab, Seen, OutP, Send, Recv, Local int64
}

// place gives a region of bytes the offset *o and moves *o past it, to the
// next multiple of 256 (moe_place).
func place(o *int64, bytes int64) int64 {
	at := *o
	*o = (at + bytes + 255) &^ 255
	return at
}

// Layout is moe_plan's arithmetic (cuda/shim/moe_layout.h:
// moe_place_buffers; TestLayoutMatchesTheShim compares the two).
func Layout(pes, tokens, topk, experts, hidden int, dtype, mode string, maxSlots, maxArr int64) LayoutBytes {
	n, t, k, e := int64(pes), int64(tokens), int64(topk), int64(experts)
	el := e / n
	tok, out := TokenBytes(hidden, dtype), int64(hidden)*2
	sz := max(tok, out)
	normal := mode == "normal"
	arr, ameta, per := int64(0), int64(0), k
	if normal {
		arr, ameta, per = maxArr*sz, maxArr*32, n
	}
	var L LayoutBytes
	var o int64
	L.Ctr = place(&o, 8*(el*n+n))
	L.Sig = place(&o, 8*(el*n+n))
	L.CSig = place(&o, 8*n)
	L.Slot = place(&o, maxSlots*sz)
	L.SMeta = place(&o, maxSlots*16)
	L.Arr = place(&o, arr)
	L.AMeta = place(&o, ameta)
	L.Comb = place(&o, t*per*out)
	L.Remote = o
	ntk := n * t * k
	rows := t*k + t*n + maxSlots + maxArr
	o = 0
	L.Done = place(&o, 8*(2*n*el+2*n))
	L.Epoch = place(&o, 8*maxCTAs)
	L.Route = place(&o, 4*ntk)
	L.W = place(&o, 4*ntk)
	L.Cnt = place(&o, 8*n*e)
	L.ROff = place(&o, 8*n*el*n)
	L.AOff = place(&o, 8*n*n)
	L.Pairs = place(&o, 8*n*n)
	L.List = place(&o, 64*rows)
	L.Tab = place(&o, 16*4*rows+8*t*max(k, n))
	L.Seen = place(&o, 4*el*n*t)
	L.OutP = place(&o, t*out)
	L.Send = place(&o, rows*(sz+32))
	L.Recv = place(&o, rows*(sz+32))
	L.Local = o
	return L
}
