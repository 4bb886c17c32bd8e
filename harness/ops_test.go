package harness_test

import (
	"slices"
	"strings"
	"testing"

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
	kind := map[string]string{"rma": "rma", "latency": "lat", "collectives": "coll", "moe": "moe", "host": "host", "persm": "rma"}
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

// What a benchmark declares agrees with what its operation's entry in the
// shim's table states, trait by trait: forgetting either side of a new
// operation fails here, on a machine without a GPU.
func TestBenchmarksAgreeWithTheirEntriesTraits(t *testing.T) {
	cfg := harness.DefaultConfig()
	cfg.Blocking, cfg.Bidir, cfg.LaunchSweep, cfg.Graph = true, true, true, true
	job := twoPEJob(t)
	remote := twoPEJob(t)
	remote.Paths = [][]int{{cuda.PathLocal, cuda.PathRemote}, {cuda.PathRemote, cuda.PathLocal}}
	copy(remote.PEs[1].Host[:], "another-node\x00") // a remote transport's pair: two nodes
	remoteCfg := cfg
	remoteCfg.Path = "proxy"
	has := func(metrics []string, m string) bool { return slices.Contains(metrics, m) }
	for _, b := range harness.All() {
		if b.Suite == "test" {
			continue
		}
		pts := b.Points(&cfg)
		if len(pts) == 0 {
			continue
		}
		a, _ := b.Args(&harness.Env{Job: job, Config: &cfg}, pts[0])
		op, ok := cuda.LookupOp(a.OpString())
		if !ok {
			continue // TestEveryBenchmarkNamesAnOperationOfTheShim says so
		}
		bw := has(b.Metrics, record.MetricBandwidth) || has(b.Metrics, record.MetricAlgBW)
		if bw != op.Has(cuda.TraitPayload) && op.Kind() != "lat" {
			t.Errorf("%s: reports a bandwidth %v, its entry %s moves a payload %v", b.ID, bw, op.Name, op.Has(cuda.TraitPayload))
		}
		if rate := op.Has(cuda.TraitCounters) || op.Has(cuda.TraitMessages); has(b.Metrics, record.MetricRate) != rate {
			t.Errorf("%s: reports a rate %v, its entry %s counts per thread or group %v", b.ID, has(b.Metrics, record.MetricRate), op.Name, rate)
		}
		roundTrip := strings.HasPrefix(b.ID, "latency/") && !strings.HasPrefix(b.ID, "latency/issue/") && b.ID != "latency/launch"
		if roundTrip != op.Has(cuda.TraitRoundTrip) {
			t.Errorf("%s: a round trip by its name %v, by its entry %s %v", b.ID, roundTrip, op.Name, op.Has(cuda.TraitRoundTrip))
		}
		if (len(b.Floors) > 0) != op.Has(cuda.TraitRoundTrip) && strings.HasPrefix(b.ID, "latency/") {
			t.Errorf("%s: floors %v, its entry %s a round trip %v", b.ID, b.Floors, op.Name, op.Has(cuda.TraitRoundTrip))
		}
		if strings.HasPrefix(b.ID, "limit/chase-") != op.Has(cuda.TraitFloor) {
			t.Errorf("%s: its entry %s a floor %v", b.ID, op.Name, op.Has(cuda.TraitFloor))
		}
		if (b.Unverifiable != "") != op.Has(cuda.TraitNoOutput) {
			t.Errorf("%s: unverifiable %q, its entry %s leaves no output %v", b.ID, b.Unverifiable, op.Name, op.Has(cuda.TraitNoOutput))
		}
		// A load/store-only operation is waived where the peer has no mapping,
		// and so is one run beside a load/store-only transfer (a bytes-per-SM
		// compute kernel names it by its code in Impl).
		loadStore := op.Has(cuda.TraitLoadStore)
		if strings.HasPrefix(op.Name, "rma.pm_") && a.Impl != 0 {
			for _, o := range cuda.Ops() {
				if o.Value == int(a.Impl) && o.Has(cuda.TraitLoadStore) {
					loadStore = true
				}
			}
		}
		if op.Kind() == "rma" && !op.Has(cuda.TraitNetwork) {
			rp := b.Points(&remoteCfg)
			if len(rp) > 0 {
				_, why := b.Args(&harness.Env{Job: remote, Config: &remoteCfg}, rp[0])
				if waived := strings.Contains(why, "load/store"); waived != loadStore {
					t.Errorf("%s: without a load/store mapping waived %v (%q), its entry %s load/store only %v", b.ID, waived, why, op.Name, loadStore)
				}
			}
		}
	}
}

// Every collective is measured one launch per operation; a device
// implementation also fused in one kernel, a host API never.
func TestEveryCollectiveHasPerOpRows(t *testing.T) {
	cfg := harness.DefaultConfig()
	n := 0
	for _, b := range harness.All() {
		if !strings.HasPrefix(b.ID, "collectives/") {
			continue
		}
		n++
		modes := map[string]bool{}
		for _, p := range b.Points(&cfg) {
			modes[p.Launch] = true
		}
		a, _ := b.Args(&harness.Env{Job: twoPEJob(t), Config: &cfg}, b.Points(&cfg)[0])
		host := a.Impl == cuda.ImplNCCL || a.Impl == cuda.ImplNCCLCE || a.Impl == cuda.ImplNVSHMEMStream
		if !modes[record.LaunchPerOp] || modes[record.LaunchFused] == host || len(modes) != map[bool]int{true: 1, false: 2}[host] {
			t.Errorf("%s: launch modes %v (host API %v)", b.ID, modes, host)
		}
	}
	if n < 20 {
		t.Fatalf("only %d collectives", n)
	}
}

// Every value the shim's sources give a point (put_value) is declared, in
// the unit the shim gives it, by a benchmark, and every value a benchmark
// declares for the shim is one the shim gives: a value written but read
// by no declaration (its points would fail) or declared and never written
// fails here, not on a GPU.
func TestEveryShimValueIsDeclared(t *testing.T) {
	declared := map[string]string{} // name → unit
	for _, b := range harness.All() {
		for _, d := range b.Values {
			if u, ok := declared[d.Name]; ok && u != d.Unit {
				t.Errorf("%s declares %s in %q, another benchmark in %q", b.ID, d.Name, d.Unit, u)
			}
			declared[d.Name] = d.Unit
		}
	}
	given := map[string]bool{}
	for _, v := range cuda.ShimValues() {
		given[v.Name] = true
		if u, ok := declared[v.Name]; !ok {
			t.Errorf("%s gives the value %s (%s), which no benchmark declares", v.File, v.Name, v.Unit)
		} else if u != v.Unit {
			t.Errorf("%s gives the value %s in %q, declared in %q", v.File, v.Name, v.Unit, u)
		}
	}
	for name := range declared {
		if !given[name] {
			t.Errorf("the value %s is declared, and the shim gives it nowhere", name)
		}
	}
	if len(given) < 5 {
		t.Fatalf("the shim gives only %v", given)
	}
}

// What a benchmark declares its timed code runs (Code) is what compare
// attributes a library's version change to and what tells NCCL's one-rank
// copy from a collective: an operation of the shim's NCCL files calls NCCL
// and not NVSHMEM, and the rows the declarations exist for say what they
// run (the empty kernel, a compute kernel alone, the copy engine, stores
// through a pointer and the copy references run neither library).
func TestBenchmarksDeclareWhatTheirCodeRuns(t *testing.T) {
	cfg := harness.DefaultConfig()
	job := twoPEJob(t)
	for _, b := range harness.All() {
		pts := b.Points(&cfg)
		if b.Suite == "test" || len(pts) == 0 {
			continue
		}
		a, _ := b.Args(&harness.Env{Job: job, Config: &cfg}, pts[0])
		op, ok := cuda.LookupOp(a.OpString())
		if ok && (op.File == "nccldev.cuh" || op.File == "ncclp2p.cuh") && b.Code.Calls != record.NCCL {
			t.Errorf("%s runs %s of %s: declares %v, want NCCL alone", b.ID, op.Name, op.File, b.Code.Calls.Names())
		}
	}
	nv, nccl, cudaOnly := record.Code{Calls: record.NVSHMEM}, record.Code{Calls: record.NCCL}, record.Code{Calls: record.CUDAOnly}
	for id, want := range map[string]record.Code{
		"latency/launch": cudaOnly, "persm/compute/fma": cudaOnly, "persm/compute/mma/beside-put": nv, "rma/host/memcpy": cudaOnly,
		"persm/ce": cudaOnly, "persm/st": cudaOnly, "rma/st": cudaOnly, "limit/sm-copy": cudaOnly, "limit/chase-peer": cudaOnly,
		"rma/put/block": nv, "latency/get/block": nv, "host/malloc": nv, "moe/dispatch/nvshmem": nv, "collectives/allreduce/multicta": nv,
		"rma/nccl-lsa/put/block": nccl, "collectives/allreduce/nccl-lsa": nccl, "moe/combine/nccl": nccl, "rma/nccl/send": nccl,
		"collectives/allreduce/nccl-ring":      {Calls: record.NCCL, Collective: record.NCCL},
		"collectives/allgather/nccl":           {Calls: record.NCCL, Collective: record.NCCL},
		"collectives/allreduce/nvshmem-stream": {Calls: record.NVSHMEM | record.NCCL, Collective: record.NVSHMEM},
	} {
		if got, ok := harness.CodeOf(id); !ok || got != want {
			t.Errorf("%s: declares %+v (registered %v), want %+v", id, got, ok, want)
		}
	}
	// The registry's reader gives each point its benchmark's declaration.
	in := `{"type":"header","schema":2,"tool_version":"t","pes":1}` + "\n" +
		`{"type":"point","id":"latency/launch","params":{"size":8},"status":"ok","timer":"events","iters":1,"samples_s":[1e-6,1e-6],"verify":{}}` + "\n" +
		`{"type":"point","id":"no/such/benchmark","params":{"size":8},"status":"ok","timer":"events","iters":1,"samples_s":[1e-6,1e-6],"verify":{}}` + "\n"
	f, err := harness.Reader().Read(strings.NewReader(in), "x.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	if c := f.Points[0].Code; c == nil || *c != cudaOnly || f.Points[1].Code != nil {
		t.Errorf("codes read: %+v, %+v", f.Points[0].Code, f.Points[1].Code)
	}
}
