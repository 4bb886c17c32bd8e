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
	if c := plan.EnvConflicts(func(k string) (string, bool) { return "9", k == "NVSHMEM_BCAST_ALGO" }); len(c) != 1 || !strings.Contains(c[0], "NVSHMEM_BCAST_ALGO=9") {
		t.Errorf("conflicts %q, want NVSHMEM_BCAST_ALGO's", c)
	}
}

// A worker runs a point only where its environment holds the point's
// variables; elsewhere it is waived (on every PE: the PEs agree first).
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
		case "put2all", "":
			if algo == "" && it.ID != b.ID {
				continue // a limit
			}
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
	if ran != 4 {
		t.Errorf("%d points ran, want 4 (default and put2all, per-op and fused)", ran)
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
