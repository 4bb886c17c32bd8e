package harness_test

import (
	"strings"
	"testing"

	"github.com/nvshbench/nvshbench/harness"
)

// The points of one environment are contiguous, the run's own first, and
// the indices follow the new order.
func TestPlanGroupsPointsByEnvironment(t *testing.T) {
	cfg := harness.DefaultConfig()
	cfg.Sizes, cfg.PEs, cfg.NVSHMEMAlgos = []int64{1024, 4096}, 1, []string{"broadcast", "allgather:oneshot"}
	benches, err := harness.Select([]string{"collectives/broadcast/nvshmem-block", "collectives/allgather/nvshmem-block", "rma/put/block"})
	if err != nil {
		t.Fatal(err)
	}
	plan := harness.BuildPlan(benches, &cfg)
	seen := map[string]bool{}
	last := ""
	for i, it := range plan.Items {
		if it.Index != i {
			t.Fatalf("item %d has index %d", i, it.Index)
		}
		k := harness.EnvKey(it.Params.Env)
		if k != last && seen[k] {
			t.Fatalf("environment %q comes back at item %d: its points are not together", k, i)
		}
		if i == 0 && k != "" {
			t.Fatalf("the first point has its own environment %q: the run's own (the limits) must come first", k)
		}
		seen[k], last = true, k
	}
	if plan.EnvGroups() != 5 || len(seen) != 5 { // none, put2all, tree-ll, flat-tree, allgather oneshot
		t.Errorf("%d environments (%v), want 5", plan.EnvGroups(), seen)
	}
	// a worker group runs one environment
	if g := harness.FirstEnvGroup(plan.Items); len(g) == 0 || harness.EnvKey(g[len(g)-1].Params.Env) != "" || (len(g) < len(plan.Items) && harness.EnvKey(plan.Items[len(g)].Params.Env) == "") {
		t.Errorf("the first group is not exactly the points without an environment")
	}
}

// The rule of a plan's environments: a point runs where its own variables
// are set at its values; NVSHMEM's choice of a benchmark whose other
// points force a variable is waived where the environment sets it; every
// other point runs under whatever the environment holds.
func TestEnvRule(t *testing.T) {
	cfg := harness.DefaultConfig()
	cfg.Sizes, cfg.PEs, cfg.NVSHMEMAlgos = []int64{1024}, 1, []string{"broadcast:put2all"}
	benches, _ := harness.Select([]string{"collectives/broadcast/nvshmem-block", "rma/put/block"})
	plan := harness.BuildPlan(benches, &cfg)
	env := func(kv ...string) func(string) (string, bool) {
		return func(k string) (string, bool) {
			for i := 0; i < len(kv); i += 2 {
				if kv[i] == k {
					return kv[i+1], true
				}
			}
			return "", false
		}
	}
	for _, c := range []struct {
		launched bool
		lookup   func(string) (string, bool)
		algo     string // the broadcast point: put2all, or NVSHMEM's choice
		want     string // in the waiver; "" runs
	}{
		{false, env(), "", ""},
		{false, env("NVSHMEM_BCAST_ALGO", "1"), "put2all", ""},
		{false, env("NVSHMEM_BCAST_ALGO", "3"), "", "environment sets NVSHMEM_BCAST_ALGO=3, which would force it: unset it"},
		{true, env(), "put2all", "measure it in a job started with NVSHMEM_BCAST_ALGO=1"},
		{true, env("NVSHMEM_BCAST_ALGO", "1"), "put2all", ""},
		{true, env("NVSHMEM_BCAST_ALGO", "1"), "", "a job started without it"},
		{true, env("NVSHMEM_BCAST_ALGO", "4"), "put2all", "job's environment has it =4"},
	} {
		rule := plan.EnvRule(c.launched)
		for _, it := range plan.Items {
			why := rule.Waiver(it.ID, it.Params.Env, c.lookup)
			switch {
			case it.ID == "rma/put/block" || strings.HasPrefix(it.ID, "limit/"):
				if why != "" {
					t.Errorf("%+v: %s waived: %s", c, it.ID, why)
				}
			case it.Params.Extra["nvshmem_algo"] == c.algo && c.want == "" && why != "":
				t.Errorf("%+v: %s waived: %s", c, it.Params.Key(), why)
			case it.Params.Extra["nvshmem_algo"] == c.algo && !strings.Contains(why, c.want):
				t.Errorf("%+v: %s: waiver %q", c, it.Params.Key(), why)
			}
		}
	}
}

// A worker runs a point only where its environment holds the point's
// variables, and NVSHMEM's choice only where it does not force it;
// elsewhere it is waived (on every PE: the PEs agree first).
func TestPointWaivedWithoutItsEnvironment(t *testing.T) {
	cfg := harness.DefaultConfig()
	cfg.Sizes, cfg.PEs, cfg.Samples, cfg.NVSHMEMAlgos = []int64{1024}, 1, 2, []string{"broadcast:put2all", "broadcast:tree-ll"}
	b, _ := harness.Lookup("collectives/broadcast/nvshmem-block")
	plan := harness.BuildPlan([]*harness.Benchmark{b}, &cfg)
	t.Setenv("NVSHMEM_BCAST_ALGO", "1")
	res := runJob(t, 1, plan)[0]
	ran := 0
	for _, it := range plan.Items {
		m := res[it.Index]
		if m.Outcome == nil {
			t.Fatalf("point %d: no outcome (%s)", it.Index, m.Error)
		}
		switch algo := it.Params.Extra["nvshmem_algo"]; algo {
		case "":
			if it.ID == b.ID && !strings.Contains(m.Outcome.Waived, "NVSHMEM_BCAST_ALGO=1, which would force it") {
				t.Errorf("NVSHMEM's choice under NVSHMEM_BCAST_ALGO=1: waiver %q", m.Outcome.Waived)
			}
		case "put2all":
			if m.Outcome.Waived != "" {
				t.Errorf("%s %s waived: %s", it.ID, it.Params.Key(), m.Outcome.Waived)
			}
			ran++
		case "tree-ll":
			if !strings.Contains(m.Outcome.Waived, "needs NVSHMEM_BCAST_ALGO=3") || !strings.Contains(m.Outcome.Waived, "=1") {
				t.Errorf("tree-ll under NVSHMEM_BCAST_ALGO=1: waiver %q", m.Outcome.Waived)
			}
		}
	}
	if ran != 2 {
		t.Errorf("%d points ran, want 2 (put2all, per-op and fused)", ran)
	}
}

func TestValidateEnv(t *testing.T) {
	for env, ok := range map[string]bool{"NVSHMEM_REDUCE_ALGO=3": true, "NCCL_ALGO=Ring": false, "NVSHMEM_X=": false, "nvshmem_x=1": false, "NVSHMEM_X=a\nb": false} {
		k, v, _ := strings.Cut(env, "=")
		if err := harness.ValidateEnv(map[string]string{k: v}); (err == nil) != ok {
			t.Errorf("%q: %v, want ok %v", env, err, ok)
		}
	}
}
