package persm

import (
	"slices"
	"strings"
	"testing"

	"github.com/nvshbench/nvshbench/cuda"
	"github.com/nvshbench/nvshbench/harness"
	"github.com/nvshbench/nvshbench/record"
)

// job is a job of n H200-like PEs (the fake's), on one GPU (shared) or on
// one GPU each over P2P.
func job(t *testing.T, n int, shared bool) *harness.Job {
	info, err := cuda.NewFake().DeviceInfo(0)
	if err != nil {
		t.Fatal(err)
	}
	info.NCCLVersion = 22809
	j := &harness.Job{Job: cuda.Job{}}
	for q := 0; q < n; q++ {
		j.PEs = append(j.PEs, info)
		j.PEs[q].MyPE = int32(q)
		row := make([]int, n)
		for r := range row {
			switch {
			case r == q || shared:
				row[r] = cuda.PathLocal
			default:
				row[r] = cuda.PathP2P
			}
		}
		j.Paths = append(j.Paths, row)
	}
	return j
}

func budgetsOf(ps []record.Params) []int {
	var out []int
	for _, p := range ps {
		if !slices.Contains(out, p.CTAs) {
			out = append(out, p.CTAs)
		}
	}
	return out
}

// The default budgets resolve on the run's GPU ("all" to its SMs); a
// compute kernel keeps an SM, so the beside rows stop below all; the copy
// engine has no budget.
func TestPointsOverBudgets(t *testing.T) {
	c := harness.DefaultConfig()
	c.SMs = 132
	c.Sizes = []int64{1 << 10, 1 << 30}
	get := func(id string) []record.Params {
		b, ok := harness.Lookup(id)
		if !ok {
			t.Fatalf("%s is not registered", id)
		}
		return b.Points(&c)
	}
	all := []int{1, 2, 4, 8, 16, 32, 66, 132}
	if got := budgetsOf(get("persm/tma")); !slices.Equal(got, all) {
		t.Errorf("persm/tma budgets %v, want %v", got, all)
	}
	if got := budgetsOf(get("persm/st/beside-mma")); !slices.Equal(got, all[:7]) {
		t.Errorf("beside budgets %v, want %v", got, all[:7])
	}
	if got := budgetsOf(get("persm/compute/fma")); !slices.Equal(got, all[:7]) || len(get("persm/compute/fma")) != 7 {
		t.Errorf("compute alone budgets %v", got)
	}
	if got := get("persm/ce"); len(got) != 2 || got[0].CTAs != 0 || got[0].Threads != 0 {
		t.Errorf("copy engine points %+v: one a size, no SM", got)
	}
	for _, p := range get("persm/compute/mma/beside-put") {
		if p.Extra[ExtraBeside] != "put" || p.Op != "mma" || p.Threads != Threads {
			t.Fatalf("%+v", p)
		}
	}
	// A smaller GPU: the default 66 is left out, all is its SMs.
	c.SMs = 46
	if got := budgetsOf(get("persm/st")); !slices.Equal(got, []int{1, 2, 4, 8, 16, 32, 46}) {
		t.Errorf("on 46 SMs: %v", got)
	}
	c.SMBudgets = []int{8, 0, 8, 4}
	c.Dedupe()
	if got := budgetsOf(get("persm/st")); !slices.Equal(got, []int{4, 8, 46}) {
		t.Errorf("--sm-budgets 8,all,8,4: %v", got)
	}
}

// A point names its partner by the partner's code in the shim's table; TMA
// wants 16-byte multiples; NCCL's LSA is waived where two ranks share a GPU.
func TestArgs(t *testing.T) {
	c := harness.DefaultConfig()
	c.SMs = 132
	one, shared := job(t, 1, false), job(t, 2, true)
	run := func(j *harness.Job, id string, p record.Params) (cuda.Args, string) {
		b, _ := harness.Lookup(id)
		return b.Args(&harness.Env{Job: j, Config: &c}, p)
	}
	fma, _ := cuda.LookupOp("rma.pm_fma")
	tma, _ := cuda.LookupOp("rma.pm_tma")
	a, why := run(one, "persm/tma/beside-fma", record.Params{Size: 4096, Op: "tma", CTAs: 8, Threads: Threads, Extra: map[string]string{ExtraBeside: "fma"}})
	if why != "" || a.OpString() != "rma.pm_tma" || a.Impl != int32(fma.Value) || a.CTAs != 8 || a.Threads != Threads || a.Peer != 0 {
		t.Errorf("tma beside fma: %+v %q", a, why)
	}
	a, why = run(shared, "persm/compute/fma/beside-tma", record.Params{Size: 4096, Op: "fma", CTAs: 8, Threads: Threads})
	if why != "" || a.OpString() != "rma.pm_fma" || a.Impl != int32(tma.Value) || a.Peer != 1 {
		t.Errorf("fma beside tma: %+v %q", a, why)
	}
	if a, why = run(one, "persm/compute/mma", record.Params{Op: "mma", CTAs: 8, Threads: Threads}); why != "" || a.Impl != 0 || a.Size <= 0 {
		t.Errorf("mma alone: %+v %q", a, why)
	}
	if _, why = run(one, "persm/tma", record.Params{Size: 4097, Op: "tma", CTAs: 8, Threads: Threads}); !strings.Contains(why, "multiple of 16") {
		t.Errorf("tma at 4097 bytes: %q", why)
	}
	if _, why = run(one, "persm/st", record.Params{Size: 4097, Op: "st", CTAs: 8, Threads: Threads}); why != "" {
		t.Errorf("st at 4097 bytes: %q", why)
	}
	for _, id := range []string{"persm/nccl-lsa", "persm/compute/mma/beside-nccl-lsa"} {
		if _, why = run(shared, id, record.Params{Size: 4096, Op: "x", CTAs: 8, Threads: Threads}); !strings.Contains(why, "two ranks on one GPU") {
			t.Errorf("%s on a shared GPU: %q", id, why)
		}
		if _, why = run(one, id, record.Params{Size: 4096, Op: "x", CTAs: 8, Threads: Threads}); why != "" {
			t.Errorf("%s on one PE: %q", id, why)
		}
	}
	a, why = run(one, "persm/ce", record.Params{Size: 4096, Op: "ce"})
	if why != "" || a.CTAs != 1 || a.Impl != 0 {
		t.Errorf("ce: %+v %q", a, why)
	}
}

// Every mechanism and compute kernel is an operation of the shim's table,
// and the shim's sources state the role-split rules this package assumes.
func TestShimAgrees(t *testing.T) {
	for _, m := range Mechanisms {
		o, ok := cuda.LookupOp(m.Op)
		if !ok || o.Has(cuda.TraitPayload) != true || o.Has(cuda.TraitHost) == m.SMs {
			t.Errorf("%s: %+v", m.Op, o)
		}
	}
	for _, c := range Computes {
		if o, ok := cuda.LookupOp(c.Op); !ok || o.Has(cuda.TraitPayload) {
			t.Errorf("%s: %+v", c.Op, o)
		}
	}
	src, err := cuda.ShimFile("persm.cuh")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(src), "#define PM_THREADS 512") || Threads != 512 {
		t.Error("the shim's PM_THREADS and Threads differ")
	}
}
