package persm

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/nvshbench/nvshbench/cuda"
	"github.com/nvshbench/nvshbench/harness"
	"github.com/nvshbench/nvshbench/record"
	persmrec "github.com/nvshbench/nvshbench/record/persm"
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
		if !slices.Contains(out, p.SMBudget) {
			out = append(out, p.SMBudget)
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
	// The compute alone also on every SM (budget 0): the copy engine's partner.
	if got := budgetsOf(get("persm/compute/fma")); !slices.Equal(got, append([]int{0}, all[:7]...)) || len(get("persm/compute/fma")) != 8 {
		t.Errorf("compute alone budgets %v", got)
	}
	if got := get("persm/ce"); len(got) != 2 || got[0].SMBudget != 0 || got[0].Threads != 0 {
		t.Errorf("copy engine points %+v: one a size, no SM", got)
	}
	// The copy engine beside each compute kernel, and each compute kernel
	// beside it on every SM: one point a size, no budget.
	for _, c := range []string{"fma", "mma"} {
		ce := get("persm/ce/beside-" + c)
		if len(ce) != 2 || ce[1].Size != 1<<30 || ce[0].SMBudget != 0 || ce[0].Threads != 0 || ce[0].Extra[persmrec.ExtraBeside] != c || ce[0].Op != "ce" {
			t.Errorf("copy engine beside %s: %+v", c, ce)
		}
		comp := get("persm/compute/" + c + "/beside-ce")
		if len(comp) != 2 || comp[1].Size != 1<<30 || comp[0].SMBudget != 0 || comp[0].Threads != persmrec.Threads || comp[0].Extra[persmrec.ExtraBeside] != "ce" || comp[0].Op != c {
			t.Errorf("%s beside the copy engine: %+v", c, comp)
		}
	}
	for _, p := range get("persm/compute/mma/beside-put") {
		if p.Extra[persmrec.ExtraBeside] != "put" || p.Op != "mma" || p.Threads != persmrec.Threads {
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
	a, why := run(one, "persm/tma/beside-fma", record.Params{Size: 4096, Op: "tma", SMBudget: 8, Threads: persmrec.Threads, Extra: map[string]string{persmrec.ExtraBeside: "fma"}})
	if why != "" || a.OpString() != "rma.pm_tma" || a.Impl != int32(fma.Value) || a.CTAs != 8 || a.Threads != persmrec.Threads || a.Peer != 0 {
		t.Errorf("tma beside fma: %+v %q", a, why)
	}
	a, why = run(shared, "persm/compute/fma/beside-tma", record.Params{Size: 4096, Op: "fma", SMBudget: 8, Threads: persmrec.Threads})
	if why != "" || a.OpString() != "rma.pm_fma" || a.Impl != int32(tma.Value) || a.Peer != 1 {
		t.Errorf("fma beside tma: %+v %q", a, why)
	}
	if a, why = run(one, "persm/compute/mma", record.Params{Op: "mma", SMBudget: 8, Threads: persmrec.Threads}); why != "" || a.Impl != 0 || a.Size <= 0 {
		t.Errorf("mma alone: %+v %q", a, why)
	}
	if _, why = run(one, "persm/tma", record.Params{Size: 4097, Op: "tma", SMBudget: 8, Threads: persmrec.Threads}); !strings.Contains(why, "multiple of 16") {
		t.Errorf("tma at 4097 bytes: %q", why)
	}
	if _, why = run(one, "persm/st", record.Params{Size: 4097, Op: "st", SMBudget: 8, Threads: persmrec.Threads}); why != "" {
		t.Errorf("st at 4097 bytes: %q", why)
	}
	for _, id := range []string{"persm/nccl-lsa", "persm/compute/mma/beside-nccl-lsa"} {
		if _, why = run(shared, id, record.Params{Size: 4096, Op: "x", SMBudget: 8, Threads: persmrec.Threads}); !strings.Contains(why, "two ranks on one GPU") {
			t.Errorf("%s on a shared GPU: %q", id, why)
		}
		if _, why = run(one, id, record.Params{Size: 4096, Op: "x", SMBudget: 8, Threads: persmrec.Threads}); why != "" {
			t.Errorf("%s on one PE: %q", id, why)
		}
	}
	a, why = run(one, "persm/ce", record.Params{Size: 4096, Op: "ce"})
	if why != "" || a.CTAs != 1 || a.Impl != 0 {
		t.Errorf("ce: %+v %q", a, why)
	}
	// The copy engine beside a compute kernel keeps the copy engine's shape
	// (the shim gives the compute every SM); a compute kernel on every SM,
	// alone or beside the copy engine, asks for no transfer SM (CTAs 0).
	ce, _ := cuda.LookupOp("rma.pm_ce")
	mma, _ := cuda.LookupOp("rma.pm_mma")
	a, why = run(one, "persm/ce/beside-mma", record.Params{Size: 4096, Op: "ce", Extra: map[string]string{persmrec.ExtraBeside: "mma"}})
	if why != "" || a.OpString() != "rma.pm_ce" || a.Impl != int32(mma.Value) || a.CTAs != 1 {
		t.Errorf("ce beside mma: %+v %q", a, why)
	}
	a, why = run(shared, "persm/compute/fma/beside-ce", record.Params{Size: 4096, Op: "fma", Threads: persmrec.Threads, Extra: map[string]string{persmrec.ExtraBeside: "ce"}})
	if why != "" || a.OpString() != "rma.pm_fma" || a.Impl != int32(ce.Value) || a.CTAs != 0 || a.Threads != persmrec.Threads || a.Peer != 1 {
		t.Errorf("fma beside ce: %+v %q", a, why)
	}
	if a, why = run(one, "persm/compute/fma", record.Params{Op: "fma", Threads: persmrec.Threads}); why != "" || a.CTAs != 0 || a.Impl != 0 {
		t.Errorf("fma alone on every SM: %+v %q", a, why)
	}
	// Over a remote transport the copy engine has no path, beside a compute
	// kernel or not; the compute alone needs none.
	remote := job(t, 2, false)
	remote.Paths[0][1], remote.Paths[1][0] = cuda.PathRemote, cuda.PathRemote
	for _, id := range []string{"persm/ce/beside-fma", "persm/compute/fma/beside-ce"} {
		if _, why = run(remote, id, record.Params{Size: 4096, Op: "x", Threads: persmrec.Threads}); !strings.Contains(why, "not reachable by load/store") {
			t.Errorf("%s over a remote transport: %q", id, why)
		}
	}
	if _, why = run(remote, "persm/compute/fma", record.Params{Op: "fma", Threads: persmrec.Threads}); why != "" {
		t.Errorf("compute alone over a remote transport: %q", why)
	}
}

// Every mechanism and compute kernel is an operation of the shim's table
// whose traits follow from its facts (a payload; no SM of ours: issued
// from the host), and every one has its rows registered.
func TestShimAgrees(t *testing.T) {
	for _, m := range persmrec.Mechanisms() {
		o, ok := cuda.LookupOp(m.Op)
		if !ok || !o.Has(cuda.TraitPayload) || o.Has(cuda.TraitHost) == m.SMs || o.Has(cuda.TraitLoadStore) != m.LoadStore || o.Value != m.Code {
			t.Errorf("%s: %+v", m.Op, o)
		}
		for _, id := range []string{"persm/" + m.Name, "persm/compute/fma/beside-" + m.Name} {
			if _, ok := harness.Lookup(id); !ok {
				t.Errorf("%s is not registered", id)
			}
		}
	}
	for _, c := range persmrec.Computes() {
		if o, ok := cuda.LookupOp(c.Op); !ok || o.Has(cuda.TraitPayload) || o.Value != c.Code {
			t.Errorf("%s: %+v", c.Op, o)
		}
	}
	if n := len(persmrec.Mechanisms()); n < 5 {
		t.Errorf("%d mechanisms", n)
	}
}

// fakeRun runs the benchmarks sel select on one fake PE and returns each
// point's outcome by key(ID, size, SM budget), failing the test on an error or
// a waiver.
func fakeRun(t *testing.T, cfg *harness.Config, sel ...string) map[string]*harness.Outcome {
	t.Helper()
	got, errs := fakeRunErrors(t, cfg, sel...)
	for k, e := range errs {
		t.Errorf("%s: %s", k, e)
	}
	return got
}

// fakeRunErrors is fakeRun that returns the points that failed or were
// waived (their error or waiver by key) instead of failing the test.
func fakeRunErrors(t *testing.T, cfg *harness.Config, sel ...string) (map[string]*harness.Outcome, map[string]string) {
	t.Helper()
	benches, err := harness.Select(sel)
	if err != nil {
		t.Fatal(err)
	}
	plan := harness.BuildPlan(benches, cfg)
	var buf bytes.Buffer
	spec := harness.WorkerSpec{Rank: 0, NRanks: 1, Mode: cuda.InitUID, UID: cuda.FakeUID}
	if err := harness.RunWorker(cuda.NewFake(), spec, plan, harness.NewEmitter(&buf)); err != nil {
		t.Fatal(err)
	}
	type pt struct {
		id string
		p  record.Params
	}
	got, errs := map[string]*harness.Outcome{}, map[string]string{}
	items := map[int]pt{}
	for _, it := range plan.Items {
		items[it.Index] = pt{it.ID, it.Params}
	}
	for _, line := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
		var m harness.Message
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatal(err)
		}
		if m.Type != "result" {
			continue
		}
		it := items[m.Index]
		k := key(it.id, it.p.Size, it.p.SMBudget)
		if o, ok := it.p.Extra[persmrec.ExtraStageOffset]; ok {
			k += " " + o // a stage-offset row's points differ by it alone
		}
		switch {
		case m.Error != "":
			errs[k] = "error: " + m.Error
		case m.Outcome == nil:
			errs[k] = "no outcome"
		case m.Outcome.Waived != "":
			errs[k] = "waived: " + m.Outcome.Waived
		default:
			got[k] = m.Outcome
		}
	}
	return got, errs
}

func key(id string, size int64, budget int) string { return fmt.Sprint(id, " ", size, " ", budget) }

// The fake layer runs every bytes-per-SM row, the copy engine's beside a
// compute kernel among them: each point of the copy engine beside fma and
// mma, and of each compute kernel beside the copy engine, ran verified with
// its samples (the copies' bytes counted; the compute's none), no in-kernel
// times where no kernel of ours is timed, and the fake's slowdowns (the
// copy engine 2 % beside a compute kernel, the compute 1 % beside it); the
// compute's point beside the copy engine carries how busy the copy engine
// was in its values (the shim's note, moved out of the detail); every
// point of the copy engine's rows the SM check's answer (the fake's copy
// engine needs no SM), and no other point any value.
func TestFakeRunsTheCopyEngineBeside(t *testing.T) {
	cfg := harness.DefaultConfig()
	cfg.Sizes, cfg.Samples, cfg.SMBudgets, cfg.PEs = []int64{4096, 64 << 20}, 3, []int{4, 0}, 1
	got := fakeRun(t, &cfg, "persm")
	median := func(o *harness.Outcome) float64 { return o.Samples[len(o.Samples)/2] }
	for _, c := range []string{"fma", "mma"} {
		alone := got[key("persm/compute/"+c, 0, 0)]
		if alone == nil || len(alone.Samples) != 3 {
			t.Fatalf("%s alone on every SM: %+v", c, alone)
		}
		for _, size := range cfg.Sizes {
			ce, beside := got[key("persm/ce", size, 0)], got[key("persm/ce/beside-"+c, size, 0)]
			if ce == nil || beside == nil || len(beside.Samples) != 3 || beside.Bytes != size || beside.Checked == 0 || beside.Errors != 0 || len(beside.Kernel) != 0 {
				t.Fatalf("the copy engine beside %s at %d: %+v (alone %+v)", c, size, beside, ce)
			}
			if r := median(beside) / median(ce); math.Abs(r-1/0.98) > 1e-9 {
				t.Errorf("the copy engine beside %s at %d: %.4f of its time alone, want the fake's 1/0.98", c, size, r)
			}
			comp := got[key("persm/compute/"+c+"/beside-ce", size, 0)]
			if comp == nil || len(comp.Samples) != 3 || comp.Bytes != 0 || comp.Checked == 0 || len(comp.Kernel) == 0 {
				t.Fatalf("%s beside the copy engine at %d: %+v", c, size, comp)
			}
			if r := median(comp) / median(alone); math.Abs(r-1.01) > 1e-9 {
				t.Errorf("%s beside the copy engine at %d: %.4f of its time alone, want the fake's 1.01", c, size, r)
			}
			// The fake's copy engine: busy 99.5 %, at its rate beside a
			// compute kernel (its samples' first: the fake's time a copy),
			// the numbers as the shim gave them (no text between).
			rate := float64(size) / beside.Samples[0]
			if comp.Values[persmrec.ValueCEBusy] != 0.995 || comp.Values[persmrec.ValueCESMFree] != 1 || len(comp.Values) != 5 || math.Abs(comp.Values[persmrec.ValueCERate]/rate-1) > 1e-12 || comp.Detail != "" ||
				math.Abs(comp.Values[persmrec.ValueCECopy]*rate/float64(size)-1) > 1e-12 || comp.Values[persmrec.ValueCEFeed] != 2e-6 {
				t.Errorf("%s beside the copy engine at %d: values %v (want busy 0.995, %.4g B/s, a copy %.4g s, the feeder 2e-6 s), detail %q",
					c, size, comp.Values, rate, float64(size)/rate, comp.Detail)
			}
			for _, o := range []*harness.Outcome{ce, beside} {
				if len(o.Values) != 1 || o.Values[persmrec.ValueCESMFree] != 1 || o.Detail != "" {
					t.Errorf("the copy engine at %d (beside %s or not): values %v, detail %q: want the SM check's answer only", size, c, o.Values, o.Detail)
				}
			}
			if len(alone.Values) != 0 {
				t.Errorf("values where no copy engine runs: %v", alone.Values)
			}
		}
	}
}

// NVSHBENCH_FAKE_CE_ON_SM=1: the fake's copy engine needs an SM, and every
// point of its rows says so (ce_sm_free 0), the fed point's busy values
// read as before; no other row carries the value.
func TestFakeCEOnSM(t *testing.T) {
	t.Setenv("NVSHBENCH_FAKE_CE_ON_SM", "1")
	cfg := harness.DefaultConfig()
	cfg.Sizes, cfg.Samples, cfg.SMBudgets, cfg.PEs = []int64{64 << 20}, 3, []int{4}, 1
	got := fakeRun(t, &cfg, "persm/ce", "persm/ce/beside-fma", "persm/compute/fma/beside-ce", "persm/st")
	for _, id := range []string{"persm/ce", "persm/ce/beside-fma", "persm/compute/fma/beside-ce"} {
		o := got[key(id, 64<<20, 0)]
		if o == nil {
			t.Fatalf("%s: no point (%v)", id, got)
		}
		if v, ok := o.Values[persmrec.ValueCESMFree]; !ok || v != 0 || o.Detail != "" {
			t.Errorf("%s: values %v, detail %q: want %s 0", id, o.Values, o.Detail, persmrec.ValueCESMFree)
		}
	}
	if o := got[key("persm/compute/fma/beside-ce", 64<<20, 0)]; o.Values[persmrec.ValueCEBusy] != 0.995 {
		t.Errorf("the fed point's busy share %v, want the fake's 0.995 beside the SM note", o.Values)
	}
	if o := got[key("persm/st", 64<<20, 4)]; o == nil || len(o.Values) != 0 {
		t.Errorf("persm/st: %+v, want no values", o)
	}
}

// A value the readers do not declare, one in another unit, or more than
// a point's result holds (the fake's, as the shim's put_value refuses the
// ninth): each fails every point of the copy engine's rows with its
// sentence, none dropped; a row without values runs as before.
func TestBadValuesFailThePoint(t *testing.T) {
	for knob, want := range map[string]string{
		"unknown": "the shim gave the value ce_idle (1), which this benchmark does not declare",
		"unit":    `the shim gave the value ce_busy in "%"; it is declared in "1"`,
		"many":    "does not fit: a point's result holds 8 values",
		"range":   "the shim gave the value ce_sm_free = 2 1, outside its declared range 0..1",
	} {
		t.Run(knob, func(t *testing.T) {
			t.Setenv("NVSHBENCH_FAKE_BAD_VALUE", knob)
			cfg := harness.DefaultConfig()
			cfg.Sizes, cfg.Samples, cfg.SMBudgets, cfg.PEs = []int64{64 << 20}, 3, []int{4}, 1
			got, errs := fakeRunErrors(t, &cfg, "persm/ce", "persm/ce/beside-fma", "persm/compute/fma/beside-ce", "persm/st")
			for _, id := range []string{"persm/ce", "persm/ce/beside-fma", "persm/compute/fma/beside-ce"} {
				if e := errs[key(id, 64<<20, 0)]; !strings.HasPrefix(e, "error: ") || !strings.Contains(e, want) {
					t.Errorf("%s: %q, want an error saying %q", id, e, want)
				}
			}
			if o := got[key("persm/st", 64<<20, 4)]; o == nil || len(o.Values) != 0 {
				t.Errorf("persm/st: %+v (%v), want it run without values", o, errs)
			}
		})
	}
}

// A staged mechanism (TMA) has a stage-offset row: every 16 bytes of a
// line on one SM at each size, the offset in the shim's arguments; no
// other mechanism has one. On the fake (which stands for the rule the
// row measured on an H200: full rate on a 128-byte line, 0.84 on another
// 32-byte multiple, half off one) the offsets 16 and 48 read half of 0,
// 32 and 96 0.84 of it; an offset on a
// point that stages nothing is refused, as the shim refuses it.
func TestStageOffsetRow(t *testing.T) {
	cfg := harness.DefaultConfig()
	cfg.SMs, cfg.Samples, cfg.Sizes, cfg.PEs = 132, 3, []int64{256 << 20}, 1
	for _, m := range persmrec.Mechanisms() {
		_, ok := harness.Lookup(persmrec.Row{Mechanism: m.Name, StageOffset: true}.ID())
		if ok != m.Staged {
			t.Errorf("%s: a stage-offset row %v, staged %v", m.Name, ok, m.Staged)
		}
	}
	b, ok := harness.Lookup("persm/tma/stage-offset")
	if !ok {
		t.Fatal("persm/tma/stage-offset is not registered")
	}
	two := cfg
	two.Sizes = []int64{1 << 20, 256 << 20}
	if n := len(b.Points(&two)); n != 16 {
		t.Errorf("two sizes: %d points, want 8 a size", n)
	}
	ps := b.Points(&cfg)
	var offs []string
	for _, p := range ps {
		if p.Size != 256<<20 || p.SMBudget != 1 || p.Threads != persmrec.Threads || p.Op != "tma" {
			t.Errorf("point %+v: want 256 MiB, 1 SM", p)
		}
		offs = append(offs, p.Extra[persmrec.ExtraStageOffset])
	}
	if want := []string{"0", "16", "32", "48", "64", "80", "96", "112"}; !slices.Equal(offs, want) {
		t.Errorf("offsets %v, want %v", offs, want)
	}
	a, why := b.Args(&harness.Env{Job: job(t, 1, false), Config: &cfg}, ps[3])
	if why != "" || a.StageOffset != 48 || a.OpString() != "rma.pm_tma" || a.CTAs != 1 {
		t.Errorf("48 bytes past the line: %+v %q", a, why)
	}
	got := fakeRun(t, &cfg, "persm/tma/stage-offset")
	rate := map[int]float64{}
	for _, p := range ps {
		o := got[key("persm/tma/stage-offset", p.Size, 1)+" "+p.Extra[persmrec.ExtraStageOffset]]
		if o == nil {
			continue
		}
		n, _ := strconv.Atoi(p.Extra[persmrec.ExtraStageOffset])
		rate[n] = float64(p.Size) / o.Samples[0]
	}
	if len(rate) != 8 || math.Abs(rate[16]/rate[0]-0.5) > 0.01 || math.Abs(rate[48]/rate[0]-0.5) > 0.01 || math.Abs(rate[32]/rate[0]-0.84) > 0.01 || math.Abs(rate[96]/rate[0]-0.84) > 0.01 {
		t.Errorf("the fake's rates by offset: %v", rate)
	}
	st := cuda.NewArgs("rma.pm_st")
	st.Size, st.CTAs, st.Threads, st.Samples, st.Iters, st.StageOffset = 4096, 1, persmrec.Threads, 1, 1, 32
	f := cuda.NewFake()
	if err := f.Init(cuda.InitUID, 0, 1, cuda.FakeUID, 0, 1<<20); err != nil {
		t.Fatal(err)
	}
	if _, _, err := f.Run(st); err == nil || !strings.Contains(err.Error(), "stages nothing in shared memory") {
		t.Errorf("st with a stage offset: %v", err)
	}
}

// st1 (st with one load in flight a thread, NVSHMEM's copy loop) is a
// mechanism like the others, run on the fake below st on one SM, near put.
func TestSt1BesidePut(t *testing.T) {
	cfg := harness.DefaultConfig()
	cfg.Samples, cfg.Sizes, cfg.SMBudgets, cfg.PEs = 3, []int64{256 << 20}, []int{1}, 1
	got := fakeRun(t, &cfg, "persm/st", "persm/st1", "persm/put")
	bw := func(id string) float64 {
		o := got[key(id, 256<<20, 1)]
		if o == nil {
			t.Fatalf("%s: no point", id)
		}
		return float64(256<<20) / o.Samples[0]
	}
	if st, st1, put := bw("persm/st"), bw("persm/st1"), bw("persm/put"); !(st1 < 0.5*st) || math.Abs(st1/put-1) > 0.1 {
		t.Errorf("one SM: st %.3g, st1 %.3g, put %.3g B/s", st, st1, put)
	}
}
