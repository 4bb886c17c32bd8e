package harness_test

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nvshbench/nvshbench/cuda"
	"github.com/nvshbench/nvshbench/harness"
	"github.com/nvshbench/nvshbench/record"
)

// A fake node of two GPUs, GPU 1 capped at 70 % of its clock: every
// measured point records its GPU's SM clock and power, the point-to-point
// rows PE 0's GPU (the one that timed them) at 1980 MHz, the AllReduce
// (every PE times it) GPU 1's 1386 MHz; read back, the AllReduce alone is
// flagged "low clock", its reason naming PE 1 and both clocks, and no
// verdict may rest on it.
func TestALowerClockIsRecordedAndFlagged(t *testing.T) {
	t.Setenv("NVSHBENCH_FAKE_GPUS", "2")
	t.Setenv("NVSHBENCH_FAKE_TOPO", "clock:1=70%")
	benches, err := harness.Select([]string{"rma/put/block", "collectives/allreduce/nccl"})
	if err != nil {
		t.Fatal(err)
	}
	cfg := harness.DefaultConfig()
	cfg.Sizes, cfg.Samples, cfg.PEs = []int64{4096, 1 << 20, 256 << 20}, 2, 2
	plan := harness.BuildPlan(benches, &cfg)
	path := filepath.Join(t.TempDir(), "r.jsonl")
	w, err := record.Create(path, record.Header{Type: record.TypeHeader, Schema: record.SchemaVersion, Tool: "nvshbench", PEs: 2})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range nodeJob(t, 2, 1, plan) {
		if err := w.WritePoint(p); err != nil {
			t.Fatal(err)
		}
	}
	w.Close()
	f, err := record.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	reasons := record.FlagReasons(f.Points)
	rma, coll := 0, 0
	for i := range f.Points {
		p := &f.Points[i]
		if p.Status != record.StatusOK || strings.HasPrefix(p.ID, "limit/") {
			continue
		}
		c := p.Clock
		if c == nil || c.N < 1 {
			t.Fatalf("%s %s: no clock recorded", p.ID, p.Params.Key())
		}
		switch {
		case strings.HasPrefix(p.ID, "rma/"):
			rma++
			if c.PE != 0 || c.SMMedianHz != 1980e6 || c.SMMinHz != 1980e6 || c.PowerW != 500 || p.Has(record.FlagLowClock) {
				t.Errorf("%s %s: clock %+v, flags %v: PE 0's GPU at 1980 MHz, not flagged", p.ID, p.Params.Key(), c, p.Flags)
			}
		default:
			coll++
			why := reasons[p][record.FlagLowClock]
			if c.PE != 1 || c.SMMedianHz != 0.7*1980e6 || c.PowerW != 350 || !p.Has(record.FlagLowClock) ||
				!strings.Contains(why, "PE 1's GPU at SM 1386 MHz") || !strings.Contains(why, "30 % below the run's 1980 MHz") {
				t.Errorf("%s %s: clock %+v, flags %v (%q): GPU 1 at 1386 MHz, flagged naming PE 1", p.ID, p.Params.Key(), c, p.Flags, why)
			}
			if u := p.Unjudged(); u != record.FlagLowClock && !p.Has(record.FlagCacheServed) {
				t.Errorf("%s %s: a verdict may rest on it (%q)", p.ID, p.Params.Key(), u)
			}
		}
	}
	if rma != 3 || coll < 1 {
		t.Errorf("%d point-to-point points, %d collectives", rma, coll)
	}
}

// Without NVML (the fake's NVSHBENCH_FAKE_NO_NVML=1) nothing is sampled:
// no point has a clock, and rank 0's info message says why (the header's
// note).
func TestNoSensorSaysSo(t *testing.T) {
	t.Setenv("NVSHBENCH_FAKE_NO_NVML", "1")
	benches, err := harness.Select([]string{"rma/put/block"})
	if err != nil {
		t.Fatal(err)
	}
	cfg := harness.DefaultConfig()
	cfg.Sizes, cfg.Samples, cfg.PEs = []int64{4096}, 2, 1
	plan := harness.BuildPlan(benches, &cfg)
	var buf bytes.Buffer
	spec := harness.WorkerSpec{Rank: 0, NRanks: 1, Mode: cuda.InitUID, UID: cuda.FakeUID}
	if err := harness.RunWorker(cuda.NewFake(), spec, plan, harness.NewEmitter(&buf)); err != nil {
		t.Fatal(err)
	}
	said, results := "", 0
	for _, line := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
		var m harness.Message
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatal(err)
		}
		switch {
		case m.Type == "info":
			said = m.Sensors
		case m.Type == "result" && m.Outcome != nil:
			results++
			if m.Outcome.Clock != nil {
				t.Errorf("point %d: a clock %+v without a sensor", m.Index, m.Outcome.Clock)
			}
		}
	}
	if !strings.Contains(said, "SM clock and power not sampled: NVML not available") || results == 0 {
		t.Errorf("info says %q (%d results)", said, results)
	}
}
