package harness_test

import (
	"strings"
	"testing"

	"github.com/nvshbench/nvshbench/cuda"
	"github.com/nvshbench/nvshbench/harness"
	_ "github.com/nvshbench/nvshbench/suites/collectives"
	_ "github.com/nvshbench/nvshbench/suites/latency"
	_ "github.com/nvshbench/nvshbench/suites/rma"
)

// twoPEJob is a job of two H200-like PEs over P2P with every capability.
func twoPEJob(t *testing.T) *harness.Job {
	info, err := cuda.NewFake().DeviceInfo(0)
	if err != nil {
		t.Fatal(err)
	}
	j := &harness.Job{Job: cuda.Job{PEs: []cuda.Info{info, info}, Paths: [][]int{{cuda.PathLocal, cuda.PathP2P}, {cuda.PathP2P, cuda.PathLocal}}},
		Caps: []int64{harness.CapNIC | harness.CapMulticast, harness.CapNIC | harness.CapMulticast}}
	j.PEs[0].MyPE, j.PEs[1].MyPE, j.PEs[1].Device = 0, 1, 1
	return j
}

// Operations cross the ABI by name: every name a benchmark asks for is an
// entry of the shim's dispatch table (read from the sources build-shim
// compiles) of the benchmark's kind, and every entry of the table is asked
// for by some benchmark. A typo or a stale name fails here, not on a GPU.
func TestEveryBenchmarkNamesAnOperationOfTheShim(t *testing.T) {
	kind := map[string]string{"rma": "rma", "latency": "lat", "collectives": "coll"}
	cfg := harness.DefaultConfig()
	cfg.Blocking, cfg.Bidir, cfg.LaunchSweep, cfg.Graph = true, true, true, true
	job := twoPEJob(t)
	used := map[string]bool{}
	for _, b := range harness.All() {
		if b.Suite == "test" {
			continue // registered by other tests of this package
		}
		pts := b.Points(&cfg)
		if len(pts) == 0 {
			t.Errorf("%s: no points under the default configuration", b.ID)
		}
		for i, p := range pts {
			a, _ := b.Args(&harness.Env{Job: job, Config: &cfg, Index: i}, p)
			name := a.OpString()
			op, ok := cuda.LookupOp(name)
			if !ok {
				t.Errorf("%s asks for %q, which the shim's table does not have", b.ID, name)
				break
			}
			if want := kind[b.Suite]; op.Kind() != want {
				t.Errorf("%s (suite %s) asks for %s, an operation of kind %s", b.ID, b.Suite, name, op.Kind())
			}
			used[name] = true
		}
	}
	for name, op := range cuda.Ops() {
		if !used[name] {
			t.Errorf("%s (%s in %s) is in the shim's table but no benchmark runs it", name, op.Code, op.File)
		}
	}
	if len(used) < 30 || !strings.HasPrefix(cuda.Ops()["rma.put"].Name, "rma.") {
		t.Fatalf("only %d operations in use", len(used))
	}
}
