// Package collectives registers AllReduce (NVSHMEM device-side in one CTA at
// thread, warp and block scope; NVSHMEM on-stream; our multi-CTA one-shot and
// two-shot over symmetric memory; NCCL's device API; NCCL with its algorithm
// left to it or forced), broadcast, alltoall, allgather and barrier (NVSHMEM
// device and on-stream, NCCL). Every point is checked (exact small-integer
// sums; the barrier by rounds of words written between barriers); algbw and
// busbw use the nccl-tests factors.
//
// Launch modes (params.launch): every implementation is measured one launch
// per operation ("per-op": the host APIs always, the device kernels launched
// once per operation), and the device implementations also with the
// iterations fused in one kernel ("fused"). Only rows of one mode are ever
// compared: a fused kernel pays no launch per operation.
//
// The collectives are the shim's (cuda.Collectives: one file each,
// cuda/shim/coll_<name>.cuh); this suite adds a registration to each.
package collectives

import (
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/nvshbench/nvshbench/cuda"
	"github.com/nvshbench/nvshbench/harness"
	"github.com/nvshbench/nvshbench/record"
)

type impl struct {
	name    string // ID suffix
	code    int32
	scope   string
	algo    string // NCCL_ALGO forced ("" = NCCL's choice)
	maxSize int64  // per-PE size cap in bytes of float (perftest's scope limits); 0 = none
	def     bool
	multi   bool // our multi-CTA kernels
	nvls    bool // needs NVLink multicast
	lsa     bool // NCCL's device API
	desc    string
}

var allreduceImpls = []impl{
	{name: "nvshmem-thread", code: cuda.ImplNVSHMEMDevice, scope: "thread", maxSize: 512 * 4, def: true, desc: "nvshmem_<T>_sum_reduce by one thread of one CTA (collective launch)"},
	{name: "nvshmem-warp", code: cuda.ImplNVSHMEMDevice, scope: "warp", maxSize: 4096 * 4, def: true, desc: "nvshmemx_<T>_sum_reduce_warp in one CTA (collective launch)"},
	{name: "nvshmem-block", code: cuda.ImplNVSHMEMDevice, scope: "block", def: true, desc: "nvshmemx_<T>_sum_reduce_block in one CTA (collective launch): the paper's device-block AllReduce"},
	{name: "nvshmem-stream", code: cuda.ImplNVSHMEMStream, def: true, desc: "nvshmemx_<T>_sum_reduce_on_stream (NVSHMEM hands it to NCCL when NCCL loads and NVLS is off; --nvshmem-nccl off forbids that)"},
	{name: "multicta", code: cuda.ImplOurOneShot, def: true, multi: true, desc: "our multi-CTA device AllReduce over symmetric memory: one-shot up to 256 KiB, two-shot (reduce-scatter + all-gather) above with more than 2 PEs (with 2 PEs both read the same bytes and one-shot needs one barrier instead of two); NVLink load/store via nvshmem_ptr"},
	{name: "multicta-oneshot", code: cuda.ImplOurOneShot, multi: true, desc: "our multi-CTA AllReduce, one-shot at every size (every PE reads all peers)"},
	{name: "multicta-twoshot", code: cuda.ImplOurTwoShot, multi: true, desc: "our multi-CTA AllReduce, two-shot at every size (reduce-scatter + all-gather)"},
	{name: "nccl-lsa", code: cuda.ImplLSAOneShot, def: true, multi: true, lsa: true, desc: "NCCL device API AllReduce (2.28+): the multicta kernels' structure with NCCL's pieces: inputs in symmetric windows, peers through ncclGetLsaPointer, CTAs meeting in LSA barriers; one-shot up to 256 KiB, two-shot above with more than 2 PEs"},
	{name: "nccl-lsa-oneshot", code: cuda.ImplLSAOneShot, multi: true, lsa: true, desc: "NCCL device API AllReduce, one-shot at every size"},
	{name: "nccl-lsa-twoshot", code: cuda.ImplLSATwoShot, multi: true, lsa: true, desc: "NCCL device API AllReduce, two-shot at every size (reduce-scatter into a window + all-gather)"},
	{name: "nccl", code: cuda.ImplNCCL, def: true, desc: "ncclAllReduce, algorithm and protocol left to NCCL"},
	{name: "nccl-ring", code: cuda.ImplNCCL, algo: "Ring", def: true, desc: "ncclAllReduce with NCCL_ALGO=Ring"},
	{name: "nccl-tree", code: cuda.ImplNCCL, algo: "Tree", desc: "ncclAllReduce with NCCL_ALGO=Tree"},
	{name: "nccl-nvls", code: cuda.ImplNCCL, algo: "NVLS", nvls: true, def: true, desc: "ncclAllReduce with NCCL_ALGO=NVLS (NVLink multicast)"},
	{name: "nccl-nvlstree", code: cuda.ImplNCCL, algo: "NVLSTree", nvls: true, def: true, desc: "ncclAllReduce with NCCL_ALGO=NVLSTree (NVLink multicast, multi-node)"},
}

// collective is one collective of the shim (cuda.Collectives: its name,
// counts, traits and dtypes come from its file, cuda/shim/coll_<name>.cuh)
// with what only this suite knows of it (a registration).
type collective struct {
	cuda.Collective
	registration
}

// registration is what the suite adds to a collective of the shim: the
// params' op, a title, nccl-tests' bus factor and its implementations.
type registration struct {
	paramOp   string
	title     string // how a description names it
	busFactor func(n int) float64
	impls     []impl
	// noNCCL says why the collective has no NCCL row ("": it has one).
	noNCCL string
}

// registrations: one per collective of the shim, by its name (a
// collective of the shim without one runs nowhere, and a test says so).
var registrations = map[string]registration{
	"allreduce": {paramOp: "sum", title: "AllReduce sum", impls: allreduceImpls,
		busFactor: func(n int) float64 { return 2 * float64(n-1) / float64(n) }},
	"broadcast": {paramOp: "broadcast", title: "broadcast", impls: otherImpls,
		busFactor: func(int) float64 { return 1 }},
	"alltoall": {paramOp: "alltoall", title: "alltoall", impls: withCE(otherImpls, "ncclAlltoAllConfig"),
		busFactor: func(n int) float64 { return float64(n-1) / float64(n) }},
	// allgather: the size is the whole output (size / PEs from each), as in
	// nccl-tests; NVSHMEM's fcollect.
	"allgather": {paramOp: "allgather", title: "allgather", impls: withCE(otherImpls, "ncclAllGatherConfig"),
		busFactor: func(n int) float64 { return float64(n-1) / float64(n) }},
	"barrier": {paramOp: "barrier", title: "barrier", impls: otherImpls, busFactor: func(int) float64 { return 0 }},
	// sync: nvshmem_sync_all, a barrier without its quiet (NVSHMEM's only:
	// NCCL has none, its barrier row is the 1-element AllReduce).
	"sync": {paramOp: "sync", title: "sync_all", impls: syncImpls, busFactor: func(int) float64 { return 0 },
		noNCCL: "NCCL has no sync (nor a barrier: collectives/barrier/nccl is a 1-element AllReduce)"},
	// teamsync: the sync on a team split from WORLD (every PE, stride 1)
	// beside sync on WORLD itself: what a split team costs a collective.
	"teamsync": {paramOp: "teamsync", title: "team_sync of a team split from WORLD (every PE)", impls: teamSyncImpls, busFactor: func(int) float64 { return 0 },
		noNCCL: "NCCL's teams are its communicators: no split of one to compare"},
	// reducescatter: the size is the whole input (size / PEs to each), as
	// in nccl-tests.
	"reducescatter": {paramOp: "reducescatter", title: "reduce-scatter sum", impls: reducescatterImpls,
		busFactor: func(n int) float64 { return float64(n-1) / float64(n) }},
}

var reducescatterImpls = []impl{
	{name: "nvshmem-thread", code: cuda.ImplNVSHMEMDevice, scope: "thread", maxSize: 512 * 4, def: true, desc: "nvshmem_float_sum_reducescatter by one thread of one CTA (collective launch)"},
	{name: "nvshmem-warp", code: cuda.ImplNVSHMEMDevice, scope: "warp", maxSize: 4096 * 4, def: true, desc: "nvshmemx_float_sum_reducescatter_warp in one CTA (collective launch)"},
	{name: "nvshmem-block", code: cuda.ImplNVSHMEMDevice, scope: "block", def: true, desc: "nvshmemx_float_sum_reducescatter_block in one CTA (collective launch)"},
	{name: "nvshmem-stream", code: cuda.ImplNVSHMEMStream, def: true, desc: "nvshmemx_float_sum_reducescatter_on_stream"},
	{name: "nccl", code: cuda.ImplNCCL, def: true, desc: "ncclReduceScatter"},
}

// withCE adds NCCL's copy-engine (zero-SM) row to a collective's
// implementations: its nccl<Coll>Config entry point with the per-collective
// CTA policy NCCL_CTA_POLICY_ZERO on buffers in windows registered
// NCCL_WIN_COLL_SYMMETRIC, which is what selects the copy engines
// (cuda/shim/newer_nccl.cuh). The per-collective config is NCCL 2.31's: a
// shim built against older headers waives the row ("needs NCCL >= 2.31").
func withCE(impls []impl, fn string) []impl {
	return append(slices.Clone(impls), impl{name: "nccl-ce", code: cuda.ImplNCCLCE, lsa: true, def: true,
		desc: fn + " with CTAPolicy NCCL_CTA_POLICY_ZERO on symmetric windows: NCCL's copy engines move the data, no SM (NCCL >= 2.31; all ranks on NVLink, else NCCL runs its kernels)"})
}

// data: moves a payload (algbw, busbw); else only a latency (the barrier).
func (c collective) data() bool { return c.Has(cuda.TraitPayload) }

// blocks: the size is the whole output, one block of size / PEs per PE.
func (c collective) blocks() bool { return c.Has(cuda.TraitBlocks) }

// collectives are the shim's collectives that have a registration.
func collectives() []collective {
	var out []collective
	for _, c := range cuda.Collectives() {
		if r, ok := registrations[c.Base]; ok {
			out = append(out, collective{c, r})
		}
	}
	return out
}

var syncImpls = []impl{
	{name: "nvshmem-thread", code: cuda.ImplNVSHMEMDevice, scope: "thread", def: true, desc: "nvshmem_sync_all by one thread of one CTA (collective launch)"},
	{name: "nvshmem-warp", code: cuda.ImplNVSHMEMDevice, scope: "warp", def: true, desc: "nvshmemx_sync_all_warp in one CTA (collective launch)"},
	{name: "nvshmem-block", code: cuda.ImplNVSHMEMDevice, scope: "block", def: true, desc: "nvshmemx_sync_all_block in one CTA (collective launch), beside the barrier's nvshmemx_barrier_all_block"},
	{name: "nvshmem-stream", code: cuda.ImplNVSHMEMStream, def: true, desc: "nvshmemx_sync_all_on_stream (one launch per operation; latency/stream/sync is the same call issued by the host in a loop)"},
}

var teamSyncImpls = []impl{
	{name: "nvshmem-thread", code: cuda.ImplNVSHMEMDevice, scope: "thread", def: true, desc: "nvshmem_team_sync(split team) by one thread of one CTA (collective launch); collectives/sync/nvshmem-thread is the same on WORLD"},
	{name: "nvshmem-warp", code: cuda.ImplNVSHMEMDevice, scope: "warp", def: true, desc: "nvshmemx_team_sync_warp(split team) in one CTA (collective launch)"},
	{name: "nvshmem-block", code: cuda.ImplNVSHMEMDevice, scope: "block", def: true, desc: "nvshmemx_team_sync_block(split team) in one CTA (collective launch)"},
	{name: "nvshmem-stream", code: cuda.ImplNVSHMEMStream, def: true, desc: "nvshmemx_team_sync_on_stream(split team)"},
}

var otherImpls = []impl{
	{name: "nvshmem-block", code: cuda.ImplNVSHMEMDevice, scope: "block", def: true, desc: "device-side, one CTA (collective launch)"},
	{name: "nvshmem-stream", code: cuda.ImplNVSHMEMStream, def: true, desc: "on-stream"},
	{name: "nccl", code: cuda.ImplNCCL, def: true, desc: "NCCL"},
}

// OneShotMax is where multicta switches from one-shot to two-shot, with
// more than 2 PEs (with 2, both read the same bytes and one-shot needs one
// barrier instead of two: it runs at every size).
const OneShotMax = 256 << 10

func init() {
	for _, c := range collectives() {
		for _, im := range c.impls {
			register(c, im)
		}
	}
}

// device: the implementation is a kernel of ours or NVSHMEM's (it has a
// fused form); the host APIs make one launch per operation.
func (im impl) device() bool {
	return im.code != cuda.ImplNVSHMEMStream && im.code != cuda.ImplNCCL && im.code != cuda.ImplNCCLCE
}

func register(c collective, im impl) {
	metrics := []string{record.MetricAlgBW, record.MetricBusBW, record.MetricLatency}
	if !c.data() {
		metrics = []string{record.MetricLatency}
	}
	desc := c.title + ": " + im.desc
	if im.device() {
		desc += "; measured one launch per operation and fused (the iterations in one kernel)"
	}
	own := map[bool]string{true: "1 CTA per SM × 512", false: "1 CTA × --threads"}[im.multi]
	ignoresThreads := im.multi
	switch im.code {
	case cuda.ImplNVSHMEMStream, cuda.ImplNCCL:
		own, ignoresThreads = "the library's", true
	case cuda.ImplNCCLCE:
		own, ignoresThreads = "none: the copy engines", true
	}
	if im.scope == "thread" {
		own, ignoresThreads = "1 CTA × 32", true
	}
	harness.Register(harness.Benchmark{
		ID: "collectives/" + c.Base + "/" + im.name, Suite: "collectives", Desc: desc, Default: im.def, AllPEs: true,
		IgnoresCTAs: true, IgnoresThreads: ignoresThreads, OwnLaunch: own,
		Metrics:  metrics,
		Points:   points(c, im),
		Args:     argsOf(c, im),
		Describe: describe(c, im),
		Code:     im.codeRun(),
	})
}

// codeRun is what an implementation's timed operation runs: NCCL's own
// collective (its algorithm: none for one rank), NVSHMEM's on-stream one
// (handed to NCCL where NCCL loads), NCCL's device API in our kernel
// structure, or NVSHMEM's calls (its device collectives, our kernels' loads
// through nvshmem_ptr and NVSHMEM signals).
func (im impl) codeRun() record.Code {
	switch im.code {
	case cuda.ImplNCCL, cuda.ImplNCCLCE:
		return record.Code{Calls: record.NCCL, Collective: record.NCCL}
	case cuda.ImplNVSHMEMStream:
		return record.Code{Calls: record.NVSHMEM | record.NCCL, Collective: record.NVSHMEM}
	case cuda.ImplLSAOneShot, cuda.ImplLSATwoShot:
		return record.Code{Calls: record.NCCL}
	}
	return record.Code{Calls: record.NVSHMEM}
}

// launches are the launch modes of an implementation's points.
func launches(im impl) []string {
	if im.device() {
		return []string{record.LaunchPerOp, record.LaunchFused}
	}
	return []string{record.LaunchPerOp}
}

func points(coll collective, im impl) func(c *harness.Config) []record.Params {
	return func(c *harness.Config) []record.Params {
		op := coll.paramOp
		dtypes := c.DTypes
		if !coll.AllDTypes || im.multi {
			dtypes = []string{"float"} // our kernels and the collectives of float only
		}
		mode := ""
		if c.Graph {
			mode = "graph"
		}
		ctas, threads := 1, c.Threads
		if im.multi {
			ctas, threads = c.GridSMs(), 512 // one CTA per SM: every CTA resident (the barriers need it)
		}
		if im.scope == "thread" {
			threads = 32
		}
		var out []record.Params
		for _, l := range launches(im) {
			if !coll.data() {
				out = append(out, record.Params{Op: op, Scope: im.scope, CTAs: ctas, Threads: threads, Path: c.Path, Mode: mode, Launch: l, Extra: extra(im, "")})
				continue
			}
			// The variants of each dtype and size: NCCL's protocols forced
			// (--nccl-protos; "": its choice), then NVSHMEM's own algorithms
			// forced (--nvshmem-algos) beside its choice, each in workers
			// started with the algorithm's variable.
			type variant struct {
				extra func() map[string]string
				env   map[string]string
				skip  func(size int64) bool // no point at this size
			}
			var vs []variant
			protos := []string{""}
			if im.code == cuda.ImplNCCL && len(c.NCCLProtos) > 0 {
				protos = c.NCCLProtos
			}
			for _, pr := range protos {
				vs = append(vs, variant{extra: func() map[string]string { return extra(im, pr) },
					skip: func(s int64) bool { return im.maxSize > 0 && s > im.maxSize }})
			}
			if forces(im) {
				for _, al := range c.ForcedAlgos(coll.Base) {
					vs = append(vs, variant{extra: func() map[string]string { return map[string]string{"nvshmem_algo": al.Name} }, env: al.Env(),
						// NVSHMEM runs another algorithm there (or its scratch is too small)
						skip: func(s int64) bool { return al.MaxBlock > 0 && blockBytes(coll, s, c.PEs) > al.MaxBlock }})
				}
			}
			for _, v := range vs {
				for _, dt := range dtypes {
					for _, s := range c.Sizes {
						if v.skip(s) {
							continue
						}
						out = append(out, record.Params{Size: s, Op: op, DType: dt, Scope: im.scope, CTAs: ctas, Threads: threads,
							Path: c.Path, Mode: mode, Launch: l, Extra: v.extra(), Env: v.env})
					}
				}
			}
		}
		return out
	}
}

// forces: the implementation takes NVSHMEM's forced algorithms (the
// device-side block-scope rows, NVSHMEM's own kernels).
func forces(im impl) bool { return im.code == cuda.ImplNVSHMEMDevice && im.scope == "block" }

// blockBytes is what each PE contributes of a point of size bytes: a
// block of size / PEs where the size is the whole output or input
// (allgather, reduce-scatter), else the size.
func blockBytes(coll collective, size int64, pes int) int64 {
	if coll.blocks() && pes > 0 {
		return size / int64(pes)
	}
	return size
}

// forcedAlgo is the algorithm a point forces (ok false where it forces
// none).
func forcedAlgo(coll string, p record.Params) (harness.NVSHMEMAlgo, bool) {
	name := p.Extra["nvshmem_algo"]
	if name == "" {
		return harness.NVSHMEMAlgo{}, false
	}
	for _, a := range harness.NVSHMEMAlgos {
		if a.Collective == coll && a.Name == name {
			return a, true
		}
	}
	return harness.NVSHMEMAlgo{Name: name}, true
}

func extra(im impl, proto string) map[string]string {
	m := map[string]string{}
	if im.algo != "" {
		m["nccl_algo"] = im.algo
	}
	if proto != "" {
		m["nccl_proto"] = proto
	}
	if len(m) == 0 {
		return nil
	}
	return m
}

var dtypeCode = map[string]int32{"float": cuda.DTFloat, "bf16": cuda.DTBF16, "half": cuda.DTHalf}
var dtypeSize = map[string]int64{"float": 4, "bf16": 2, "half": 2}

// argsOf turns a point into the shim's arguments, or a waiver decided from
// job-wide facts (the same on every PE).
func argsOf(coll collective, im impl) func(e *harness.Env, p record.Params) (cuda.Args, string) {
	return func(e *harness.Env, p record.Params) (cuda.Args, string) {
		j := e.Job
		a := cuda.NewArgs(coll.Name)
		a.Size, a.Seed, a.Impl, a.DType = p.Size, int64(e.Index%7+1), im.code, dtypeCode[p.DType]
		a.CTAs, a.Threads = int32(p.CTAs), int32(p.Threads)
		a.Iters, a.Warmup, a.Samples = int32(e.Config.Iters), int32(e.Config.Warmup), int32(e.Config.Samples)
		if a.Size == 0 {
			a.Size = 4
		}
		if (im.name == "multicta" || im.name == "nccl-lsa") && p.Size > OneShotMax && j.NPEs() > 2 {
			a.Impl = map[bool]int32{false: cuda.ImplOurTwoShot, true: cuda.ImplLSATwoShot}[im.lsa]
		}
		a.Scope = map[string]int32{"thread": cuda.ScopeThread, "warp": cuda.ScopeWarp, "block": cuda.ScopeBlock}[p.Scope]
		if p.Mode == "graph" {
			a.Graph = 1
		}
		if p.Launch != record.LaunchFused {
			a.PerOp = 1
		}
		if e.Config.Verify {
			a.Verify = 1
		}
		a.SetNCCL(im.algo, p.Extra["nccl_proto"])
		if al, ok := forcedAlgo(coll.Base, p); ok {
			if al.Var == "" || !forces(im) {
				return a, fmt.Sprintf("NVSHMEM algorithm %q is not one of %s's forced algorithms here", al.Name, coll.Base)
			}
			if al.NVLS {
				if why := j.MulticastOff(); why != "" {
					return a, "NVSHMEM's " + al.Name + " needs NVLink multicast (without it NVSHMEM runs another algorithm): " + why
				}
			}
		}
		if im.nvls {
			if why := j.MulticastOff(); why != "" {
				return a, why
			}
		}
		if j.NPEs() > 1 && j.SharedGPU() {
			switch {
			case im.code == cuda.ImplNCCL || im.lsa: // the copy-engine rows are LSA rows (withCE)
				return a, "NCCL refuses two ranks on one GPU"
			case im.multi:
				return a, "our multi-CTA AllReduce spins on flags across PEs: two processes on one GPU without MPS time-slice, so it is not measurable here"
			default:
				return a, "NVSHMEM team collectives need one PE per GPU (or MPS): with several PEs on one GPU they abort (limited MPG support)"
			}
		}
		if im.lsa {
			if why := j.NCCLDeviceAPIMissing(); why != "" {
				return a, why
			}
			if why := j.Unmapped(); why != "" {
				if im.code == cuda.ImplNCCLCE {
					return a, "NCCL's copy-engine collectives need every rank in the LSA team (NVLink between every pair; else NCCL runs its kernels): " + why
				}
				return a, "an LSA AllReduce needs every rank in the LSA team (load/store access between every pair): " + why
			}
		} else if im.multi {
			if why := j.Unmapped(); why != "" {
				return a, "our multi-CTA AllReduce needs a load/store (P2P) mapping between every pair of PEs: " + why
			}
		}
		if im.code == cuda.ImplNCCL {
			if why := j.NCCLMissing(); why != "" {
				return a, why
			}
		}
		es := dtypeSize[p.DType]
		if es == 0 {
			es = 4
		}
		if coll.data() && p.Size%es != 0 {
			return a, fmt.Sprintf("size %d is not a multiple of the %d-byte %s", p.Size, es, p.DType)
		}
		if coll.blocks() && (p.Size/es)%int64(j.NPEs()) != 0 {
			return a, fmt.Sprintf("%s: %d elements do not divide by %d PEs", coll.Base, p.Size/es, j.NPEs())
		}
		return a, ""
	}
}

func describe(coll collective, im impl) func(e *harness.Env, p record.Params, a cuda.Args, r cuda.Result, o *harness.Outcome) {
	return func(e *harness.Env, p record.Params, a cuda.Args, r cuda.Result, o *harness.Outcome) {
		o.BusFactor = coll.busFactor(e.Job.NPEs())
		o.Effective = effective(im, a, e, p.Extra["nvshmem_algo"])
	}
}

// effective names what ran: nvshmem, nccl-<version>[-algo], our kernel and
// its path, or nccl-via-nvshmem when NVSHMEM's on-stream call is handed to
// NCCL (inferred from NVSHMEM's rule: built with NCCL, NCCL loadable on
// every PE, no NVLS, NVSHMEM_DISABLE_NCCL unset).
func effective(im impl, a cuda.Args, e *harness.Env, algo string) string {
	j := e.Job
	switch im.code {
	case cuda.ImplNCCL:
		s := "nccl"
		if v := j.NCCLVersion(); v != "" {
			s += "-" + v
		}
		if im.algo != "" {
			s += "-" + strings.ToLower(im.algo)
		}
		if pr := a.NCCLProtoString(); pr != "" {
			s += "-" + strings.ToLower(pr)
		}
		return s
	case cuda.ImplOurOneShot, cuda.ImplOurTwoShot:
		shot := "oneshot"
		if a.Impl == cuda.ImplOurTwoShot {
			shot = "twoshot"
		}
		return shot + "-" + harness.PathName(j.Widest(), e.Config)
	case cuda.ImplNCCLCE:
		s := "nccl"
		if v := j.NCCLVersion(); v != "" {
			s += "-" + v
		}
		return s + "-ce"
	case cuda.ImplLSAOneShot, cuda.ImplLSATwoShot:
		s := "nccl-lsa-oneshot"
		if a.Impl == cuda.ImplLSATwoShot {
			s = "nccl-lsa-twoshot"
		}
		if v := j.NCCLVersion(); v != "" {
			s += "-" + v
		}
		return s
	case cuda.ImplNVSHMEMDevice:
		if name := algo; name != "" {
			return "nvshmem-" + name
		}
	case cuda.ImplNVSHMEMStream:
		if os.Getenv("NVSHMEM_DISABLE_NCCL") != "1" && j.MulticastOff() != "" && j.NCCLMissing() == "" {
			return record.EffectiveNCCLViaNVSHMEM
		}
	}
	return "nvshmem"
}
