package harness_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/nvshbench/nvshbench/cuda"
	"github.com/nvshbench/nvshbench/harness"
	"github.com/nvshbench/nvshbench/record"
)

// Several PEs timed a point: its figure is the slowest PE's time at each
// launch, the median and fastest PE's beside it, every PE's samples kept
// with its GPU and node (summaries where they would be many), the in-kernel
// spread the slowest PE's.
func TestMergeAcrossPEs(t *testing.T) {
	cfg := harness.DefaultConfig()
	it := harness.Item{ID: "collectives/allreduce/nccl", Params: record.Params{Size: 1 << 20, Op: "sum", PEs: 3, Launch: record.LaunchPerOp}}
	outs := []*harness.Outcome{
		{PE: 0, GPU: 0, Node: "a", Samples: []float64{1e-5, 3e-5, 1e-5}, Kernel: []float64{1e-5}, Iters: 10, Bytes: 1 << 20, Checked: 5},
		{PE: 1, GPU: 1, Node: "a", Samples: []float64{2e-5, 2e-5, 2e-5}, Kernel: []float64{2e-5}, Iters: 10, Bytes: 1 << 20, Checked: 5},
		{PE: 2, GPU: 0, Node: "b", Samples: []float64{3e-5, 1e-5, 2.5e-5}, Kernel: []float64{3e-5}, Iters: 10, Bytes: 1 << 20, Checked: 5},
	}
	p := harness.Merge(it, outs, nil, &cfg, nil)
	if p.Status != record.StatusOK || !slices.Equal(p.Samples, []float64{3e-5, 3e-5, 2.5e-5}) || !slices.Equal(p.RankMedian, []float64{2e-5, 2e-5, 2e-5}) ||
		!slices.Equal(p.RankFastest, []float64{1e-5, 1e-5, 1e-5}) {
		t.Fatalf("merged %s: samples %v median %v fastest %v", p.Status, p.Samples, p.RankMedian, p.RankFastest)
	}
	if len(p.PETimes) != 3 || p.PETimes[2].Node != "b" || p.PETimes[2].GPU != 0 || !slices.Equal(p.PETimes[1].Samples, outs[1].Samples) {
		t.Errorf("per-PE times %+v", p.PETimes)
	}
	if p.KernelTimer == nil || p.KernelTimer.Median != 3e-5 { // PE 2's median (2.5e-5) is the highest: its in-kernel times
		t.Errorf("kernel timer %+v, want the slowest PE's (PE 2)", p.KernelTimer)
	}
	if !p.Verify.Checked || p.Bytes != 3<<20 {
		t.Errorf("verify %+v bytes %d", p.Verify, p.Bytes)
	}
	// Many samples: each PE's summary.
	many := make([]*harness.Outcome, 4)
	for r := range many {
		s := make([]float64, 2000)
		for i := range s {
			s[i] = float64(r+1) * 1e-6
		}
		many[r] = &harness.Outcome{PE: r, Samples: s, Iters: 1, Bytes: 8}
	}
	p = harness.Merge(it, many, nil, &cfg, nil)
	if len(p.PETimes) != 4 || p.PETimes[3].Samples != nil || p.PETimes[3].Summary == nil || p.PETimes[3].Summary.Median != 4e-6 || len(p.Samples) != 2000 {
		t.Errorf("4 × 2000 samples: %d per-PE entries, PE 3 %+v, %d samples", len(p.PETimes), p.PETimes[3], len(p.Samples))
	}
}

// nodeJob runs plan on n fake PEs, pesPerGPU a GPU, in this process (one
// fabric), and merges each point as the controller does.
func nodeJob(t *testing.T, n, pesPerGPU int, plan harness.Plan) []record.Point {
	t.Helper()
	msgs := runJobOn(t, n, pesPerGPU, plan)
	var out []record.Point
	for _, it := range plan.Items {
		outs := make([]*harness.Outcome, n)
		var errs []string
		for r := 0; r < n; r++ {
			m := msgs[r][it.Index]
			outs[r] = m.Outcome
			if m.Error != "" {
				errs = append(errs, fmt.Sprintf("PE %d: %s", r, m.Error))
			}
		}
		p := harness.Merge(it, outs, errs, &plan.Config, map[string]float64{})
		record.Annotate(&record.Header{}, &p)
		out = append(out, p)
	}
	return out
}

// Every suite's plan at 1, 2, 8 and 16 PEs (one GPU; a node of 2 and of 8
// GPUs; two nodes of 8): every PE makes the same calls, every point is
// measured or waived with its reason, a point-to-point row measures two
// GPUs of a node where there are two, and what every PE times keeps every
// PE's time.
func TestEverySuiteAt1To16PEs(t *testing.T) {
	for _, c := range []struct{ pes, gpus, nodes int }{{1, 1, 1}, {2, 2, 1}, {8, 8, 1}, {16, 8, 2}} {
		t.Run(fmt.Sprintf("%dPEs", c.pes), func(t *testing.T) {
			t.Setenv("NVSHBENCH_FAKE_GPUS", fmt.Sprint(c.gpus))
			t.Setenv("NVSHBENCH_FAKE_NODES", fmt.Sprint(c.nodes))
			benches, err := harness.Select([]string{"rma", "limit", "latency", "collectives", "moe", "host", "persm"})
			if err != nil {
				t.Fatal(err)
			}
			cfg := harness.DefaultConfig()
			cfg.Sizes, cfg.Samples, cfg.Warmup, cfg.PEs, cfg.Quick = []int64{4096}, 2, 0, c.pes, true
			cfg.SMBudgets, cfg.MoE.Tokens = []int{4}, []int{128}
			plan := harness.BuildPlan(benches, &cfg)
			ok := 0
			for _, p := range nodeJob(t, c.pes, 1, plan) {
				switch {
				case p.Status == record.StatusWaived && p.Reason != "":
				case p.Status != record.StatusOK:
					t.Errorf("%s %s: %s %s", p.ID, p.Params.Key(), p.Status, p.Reason)
				default:
					ok++
					if p.Pair != nil && c.pes > 1 && (p.Pair.Kind != record.PairSameNode || p.Pair.From.Node != p.Pair.To.Node) {
						t.Errorf("%s: pair %s", p.ID, p.Pair)
					}
					every := strings.HasPrefix(p.ID, "collectives/") || strings.HasPrefix(p.ID, "moe/")
					if every && c.pes > 1 && (len(p.PETimes) != c.pes || len(p.RankFastest) != len(p.Samples)) {
						t.Errorf("%s: %d PEs' times of %d", p.ID, len(p.PETimes), c.pes)
					}
					if p.Params.Dir == "incast" && c.pes > 2 && len(p.PETimes) != c.pes-1 {
						t.Errorf("%s: an incast, %d senders' times of %d", p.ID, len(p.PETimes), c.pes-1)
					}
					if !every && len(p.PETimes) > 0 && p.Params.Dir != "bidir" && p.Params.Dir != "incast" {
						t.Errorf("%s: one PE timed it, %d PE times", p.ID, len(p.PETimes))
					}
				}
			}
			t.Logf("%d PEs: %d of %d points ok", c.pes, ok, len(plan.Items))
			if ok < len(plan.Items)/2 {
				t.Errorf("%d of %d points ok", ok, len(plan.Items))
			}
		})
	}
}

// On a fake node of 8, a PE that starts every iteration late is the
// straggler every collective names (the others waited for it: their time,
// the figure, is longer by its lateness), and a GPU at a lower clock shows
// in its PE's samples and is named as the slow one.
func TestCollectivesNameTheStraggler(t *testing.T) {
	t.Setenv("NVSHBENCH_FAKE_GPUS", "8")
	benches, err := harness.Select([]string{"collectives/allreduce", "moe/dispatch"})
	if err != nil {
		t.Fatal(err)
	}
	cfg := harness.DefaultConfig()
	cfg.Sizes, cfg.Samples, cfg.PEs, cfg.MoE.Tokens = []int64{1 << 20}, 3, 8, []int{128}
	plan := harness.BuildPlan(benches, &cfg)
	run := func(topo string) map[string]record.Point {
		t.Setenv("NVSHBENCH_FAKE_TOPO", topo)
		out := map[string]record.Point{}
		for _, p := range nodeJob(t, 8, 1, plan) {
			if p.Status == record.StatusOK && !strings.HasPrefix(p.ID, "limit/") {
				out[p.MatchKey()] = p
			}
		}
		return out
	}
	base, late, slow := run(""), run("late:5=100us"), run("clock:3=50%")
	if len(base) < 10 {
		t.Fatalf("only %d points ok", len(base))
	}
	for k, b := range base {
		l, s := late[k], slow[k]
		if b.Straggler != nil {
			t.Errorf("%s: no fault, straggler %s", k, b.Straggler)
		}
		if l.Straggler == nil || l.Straggler.PE != 5 || !l.Straggler.Late() || l.Straggler.GPU != 5 || !l.Has(record.FlagStraggler) {
			t.Errorf("%s: PE 5 late: straggler %v", k, l.Straggler)
		}
		if d := l.OpTime() - b.OpTime(); d < 95e-6 || d > 105e-6 {
			t.Errorf("%s: PE 5 late by 100 µs made the figure %.1f µs longer", k, d*1e6)
		}
		if s.Straggler == nil || s.Straggler.PE != 3 || s.Straggler.Late() || s.Straggler.Ratio < 1.9 {
			t.Errorf("%s: GPU 3 at half clock: straggler %v", k, s.Straggler)
		}
		for _, pt := range s.PETimes {
			if r := pt.Median() / b.PETimes[pt.PE].Median(); (pt.PE == 3) != (r > 1.9) {
				t.Errorf("%s: GPU 3 at half clock: PE %d's samples %.2fx", k, pt.PE, r)
			}
		}
	}
}

// runJobOn is runJob with the PEs spread over the fake's devices,
// pesPerGPU a device, as the local launcher spreads them.
func runJobOn(t *testing.T, n, pesPerGPU int, plan harness.Plan) []map[int]harness.Message {
	t.Helper()
	return runJobSpec(t, n, plan, func(r int) harness.WorkerSpec {
		return harness.WorkerSpec{Rank: r, NRanks: n, Device: r / pesPerGPU, Mode: cuda.InitUID, UID: cuda.FakeUID}
	})
}
