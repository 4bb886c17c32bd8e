package harness_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nvshbench/nvshbench/cuda"
	"github.com/nvshbench/nvshbench/harness"
	"github.com/nvshbench/nvshbench/record"
	_ "github.com/nvshbench/nvshbench/suites/collectives"
	_ "github.com/nvshbench/nvshbench/suites/host"
	_ "github.com/nvshbench/nvshbench/suites/latency"
	_ "github.com/nvshbench/nvshbench/suites/moe"
	_ "github.com/nvshbench/nvshbench/suites/persm"
	_ "github.com/nvshbench/nvshbench/suites/rma"
)

// runJob runs the plan on n fake PEs in this process, joined by one fabric
// whose collective calls fail on any divergence, and returns each PE's
// messages by point index.
func runJob(t *testing.T, n int, plan harness.Plan) []map[int]harness.Message {
	t.Helper()
	return runJobSpec(t, n, plan, func(r int) harness.WorkerSpec {
		return harness.WorkerSpec{Rank: r, NRanks: n, Mode: cuda.InitUID, UID: cuda.FakeUID}
	})
}

// runJobSpec is runJob with each PE's spec.
func runJobSpec(t *testing.T, n int, plan harness.Plan, spec func(r int) harness.WorkerSpec) []map[int]harness.Message {
	t.Helper()
	fabric := cuda.NewMemFabric(2 * time.Second)
	out := make([]map[int]harness.Message, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for r := 0; r < n; r++ {
		wg.Add(1)
		go func(r int) {
			defer wg.Done()
			var buf bytes.Buffer
			errs[r] = harness.RunWorker(cuda.NewFakeOn(fabric), spec(r), plan, harness.NewEmitter(&buf))
			out[r] = map[int]harness.Message{}
			for _, line := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
				var m harness.Message
				if err := json.Unmarshal([]byte(line), &m); err != nil {
					t.Errorf("PE %d: %v", r, err)
				}
				if m.Type == "result" {
					out[r][m.Index] = m
				}
			}
		}(r)
	}
	wg.Wait()
	for r, err := range errs {
		if err != nil {
			t.Fatalf("PE %d: %v", r, err)
		}
	}
	return out
}

// Two PEs on two GPUs, where each PE sees itself as local and the other as
// P2P (as on a real 2-GPU node): every benchmark of every suite makes the
// same collective calls on both PEs. Deciding a point from what one PE sees
// of itself (PE 1 taking itself for its own peer, "several PEs on one GPU")
// makes the fabric report a divergence here, as it hung the real job.
func TestEveryBenchmarkMakesTheSameCallsOnEveryPE(t *testing.T) {
	t.Setenv("NVSHBENCH_FAKE_PATH", "p2p")
	benches, err := harness.Select([]string{"rma", "limit", "latency", "collectives"})
	if err != nil {
		t.Fatal(err)
	}
	cfg := harness.DefaultConfig()
	cfg.Sizes, cfg.Samples, cfg.Bidir, cfg.Blocking, cfg.LaunchSweep = []int64{8, 4096}, 2, true, true, false
	cfg.DTypes = []string{"float", "bf16"}
	cfg.PEs = 2
	plan := harness.BuildPlan(benches, &cfg)
	got := runJob(t, 2, plan)
	ran := 0
	for _, it := range plan.Items {
		m0, m1 := got[0][it.Index], got[1][it.Index]
		if m0.Error != "" || m1.Error != "" {
			t.Errorf("%s %s: PE 0 %q, PE 1 %q", it.ID, it.Params.Key(), m0.Error, m1.Error)
			continue
		}
		if m0.Outcome == nil || m1.Outcome == nil || m0.Outcome.Waived != m1.Outcome.Waived {
			t.Errorf("%s %s: the PEs decided differently: %+v / %+v", it.ID, it.Params.Key(), m0.Outcome, m1.Outcome)
			continue
		}
		if m0.Outcome.Waived == "" {
			ran++
			if m0.Outcome.Effective == "local" && it.ID != "limit/chase-local" { // the local chase stays on PE 0's GPU
				t.Errorf("%s: effective path local between two GPUs", it.ID)
			}
		}
		if strings.HasPrefix(it.ID, "latency/pingpong") && m0.Outcome.Waived != "" {
			t.Errorf("%s waived on two GPUs: %s", it.ID, m0.Outcome.Waived)
		}
		if strings.HasPrefix(it.ID, "collectives/allreduce/nccl-ring") && m0.Outcome.Waived != "" {
			t.Errorf("%s waived on two GPUs: %s", it.ID, m0.Outcome.Waived)
		}
	}
	if ran < len(plan.Items)/2 {
		t.Errorf("only %d of %d points ran", ran, len(plan.Items))
	}
}

// A benchmark whose decision depends on the PE is refused on every PE
// before any of them starts it, and the run goes on in step.
func TestAPointThePEsDisagreeOnIsStartedByNone(t *testing.T) {
	harness.Register(harness.Benchmark{ID: "test/diverge", Suite: "test", Code: record.Code{Calls: record.NVSHMEM},
		Points: func(c *harness.Config) []record.Params { return []record.Params{{Size: 8}} },
		Args: func(e *harness.Env, p record.Params) (cuda.Args, string) {
			a := cuda.NewArgs("rma.put")
			a.Size, a.CTAs, a.Threads, a.Samples, a.Initiator, a.Peer = 8, 1, 32, 1, int32(e.Pair().From), int32(e.Pair().To)
			if e.Job.Rank == 1 { // wrong: a PE's own view
				return a, "PE 1 thinks it cannot"
			}
			return a, ""
		}})
	benches, _ := harness.Select([]string{"test/diverge", "rma/put/block"})
	cfg := harness.DefaultConfig()
	cfg.Sizes, cfg.Samples = []int64{4096}, 2
	plan := harness.BuildPlan(benches, &cfg)
	got := runJob(t, 2, plan)
	for _, it := range plan.Items {
		for r := 0; r < 2; r++ {
			m := got[r][it.Index]
			switch {
			case it.ID == "test/diverge" && !strings.Contains(m.Error, "disagree"):
				t.Errorf("PE %d ran the divergent point: %+v", r, m)
			case it.ID == "rma/put/block" && (m.Error != "" || m.Outcome == nil || m.Outcome.Waived != ""):
				t.Errorf("PE %d: the point after the divergent one: %+v", r, m)
			}
		}
	}
}
