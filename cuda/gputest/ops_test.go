package gputest

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/nvshbench/nvshbench/cuda"
	"github.com/nvshbench/nvshbench/harness"
	_ "github.com/nvshbench/nvshbench/suites/collectives"
	_ "github.com/nvshbench/nvshbench/suites/host"
	_ "github.com/nvshbench/nvshbench/suites/latency"
	_ "github.com/nvshbench/nvshbench/suites/moe"
	_ "github.com/nvshbench/nvshbench/suites/persm"
	_ "github.com/nvshbench/nvshbench/suites/rma"
)

// benchmarkOps maps every registered benchmark to the entry of the shim's
// table its points run (the name its Args gives them, what the harness
// hands the shim), read under the default configuration with every
// optional sweep on (blocking, bidirectional, launch modes, graphs), on a
// job of two H200-like PEs over P2P with every capability (the fake
// layer's device): what the GPU tests decide by an entry's traits. A
// benchmark whose points name no entry of the table, or several, is an
// error, and so is one whose points run several entries (a row beside its
// reference, like the RMA region's burst and the same burst without one)
// that disagree on the bytes rule; otherwise the first entry by name stands
// for them.
func benchmarkOps() (map[string]cuda.Op, error) {
	info, err := cuda.NewFake().DeviceInfo(0)
	if err != nil {
		return nil, err
	}
	job := &harness.Job{Job: cuda.Job{PEs: []cuda.Info{info, info}, Paths: [][]int{{cuda.PathLocal, cuda.PathP2P}, {cuda.PathP2P, cuda.PathLocal}}},
		Caps: []int64{harness.CapNIC | harness.CapMulticast, harness.CapNIC | harness.CapMulticast}}
	job.PEs[0].MyPE, job.PEs[1].MyPE, job.PEs[1].Device = 0, 1, 1
	cfg := harness.DefaultConfig()
	cfg.Blocking, cfg.Bidir, cfg.LaunchSweep, cfg.Graph = true, true, true, true
	ops := map[string]cuda.Op{}
	var problems []string
	for _, b := range harness.All() {
		names := map[string]bool{}
		for i, p := range b.Points(&cfg) {
			a, _ := b.Args(&harness.Env{Job: job, Config: &cfg, Index: i}, p)
			names[a.OpString()] = true
		}
		if len(names) == 0 {
			problems = append(problems, fmt.Sprintf("%s: its points run no entry", b.ID))
			continue
		}
		var first cuda.Op
		for _, name := range slices.Sorted(maps.Keys(names)) {
			op, ok := cuda.LookupOp(name)
			if !ok {
				problems = append(problems, fmt.Sprintf("%s: %q is no entry of the shim's table", b.ID, name))
				continue
			}
			if first.Name == "" {
				first = op
			} else if countsBytes(op) != countsBytes(first) {
				problems = append(problems, fmt.Sprintf("%s: its points run %s and %s, which disagree on counting bytes", b.ID, first.Name, op.Name))
			}
		}
		if first.Name != "" {
			ops[b.ID] = first
		}
	}
	if len(problems) > 0 {
		sort.Strings(problems)
		return nil, fmt.Errorf("%s", strings.Join(problems, "; "))
	}
	return ops, nil
}

// countsBytes: a point of the entry op that ran reports the bytes it
// moved: a payload (T_PAYLOAD) its args.size on the initiator, an RMA
// counter or message row (T_COUNTERS, T_MESSAGES) the word each operation
// writes (the shim's rma_bytes and rate_bytes); anything else (a barrier,
// a chase, a host call, a compute kernel) none to check.
func countsBytes(op cuda.Op) bool {
	return op.Has(cuda.TraitPayload) || op.Kind() == "rma" && (op.Has(cuda.TraitCounters) || op.Has(cuda.TraitMessages))
}

// Every benchmark the GPU tests run is read as one entry of the shim's
// table, and the bytes rule follows the entries' traits: a transfer and a
// collective with data count bytes, a barrier, a sync, a chase, a host
// call and a compute kernel beside a transfer do not.
func TestEveryBenchmarkRunsOneEntry(t *testing.T) {
	ops, err := benchmarkOps()
	if err != nil {
		t.Fatal(err)
	}
	if n := len(harness.All()); len(ops) != n || n < 100 {
		t.Fatalf("%d benchmarks read, of %d registered", len(ops), n)
	}
	want := map[string]bool{
		"rma/put/block": true, "rma/atomic/fetch_add": true, "rma/rate/p": true, "latency/put/block": true, "latency/stream/quiet": true,
		"collectives/allgather/nccl-ce": true, "moe/dispatch/nvshmem": true, "persm/put/beside-fma": true, "rma/rate/put-nbi-region/block": true,
		"collectives/barrier/nccl": false, "collectives/sync/nvshmem-warp": false, "collectives/teamsync/nvshmem-block": false,
		"latency/atomic/add": false, "limit/chase-peer": false, "host/malloc": false, "persm/compute/fma/beside-put": false,
	}
	for id, counts := range want {
		op, ok := ops[id]
		if !ok {
			t.Errorf("%s: not registered", id)
		} else if countsBytes(op) != counts {
			t.Errorf("%s (%s %v): counts bytes %v, want %v", id, op.Name, op.Traits, countsBytes(op), counts)
		}
	}
}
