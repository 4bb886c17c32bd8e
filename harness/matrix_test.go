package harness_test

import (
	"testing"

	"github.com/nvshbench/nvshbench/harness"
	"github.com/nvshbench/nvshbench/record"
	_ "github.com/nvshbench/nvshbench/suites/latency"
)

// The pair matrix of 8 PEs: every row once for each of the 56 ordered
// pairs, a copy reference also for each PE with itself, bandwidth at the
// matrix's size, round trips at 8 bytes, one launch shape, no blocking
// forms; a bidirectional row once per pair.
func TestMatrixPlanCoversEveryOrderedPair(t *testing.T) {
	bs, err := harness.Select(harness.MatrixRows())
	if err != nil {
		t.Fatal(err)
	}
	cfg := harness.DefaultConfig()
	cfg.PEs, cfg.Matrix, cfg.MatrixSize, cfg.Bidir, cfg.Blocking = 8, true, 128<<20, true, true
	plan := harness.BuildPlan(bs, &cfg)
	type key struct{ id, pair, dir string }
	seen := map[key]int{}
	rows := map[string]int{}
	for _, it := range plan.Items {
		p := it.Params
		if it.ID == "limit/chase-peer" { // the floor of the round trips: the path's, not a pair's
			continue
		}
		kind := p.Extra[harness.MatrixKey]
		if kind == "" || p.Pair == "" || p.Mode == "blocking" {
			t.Fatalf("%s %s: not a matrix point (pair %q, matrix %q, mode %q)", it.ID, p.Key(), p.Pair, kind, p.Mode)
		}
		pr, err := harness.ParsePair(p.Pair)
		if kind == harness.MatrixIncast {
			if it.ID != harness.MatrixIncastRow || pr.From == pr.To || pr.From != map[bool]int{true: 1, false: 0}[pr.To == 0] {
				t.Errorf("%s: incast pair %s", it.ID, p.Pair)
			}
			rows["incast"]++
			continue
		}
		if err != nil || (pr.From == pr.To) != (kind == harness.MatrixLocal) {
			t.Errorf("%s: pair %s marked %s", it.ID, p.Pair, kind)
		}
		want := int64(128 << 20)
		if it.ID[:8] == "latency/" {
			want = 8
		}
		if p.Size != want {
			t.Errorf("%s %s: size %d, want %d", it.ID, p.Pair, p.Size, want)
		}
		dir := p.Dir
		if dir == "" { // a round trip
			dir = "uni"
		}
		seen[key{it.ID, p.Pair, dir}]++
		rows[it.ID+" "+dir]++
	}
	for k, n := range seen {
		if n != 1 {
			t.Errorf("%v measured %d times (one launch shape, one size)", k, n)
		}
	}
	if rows["incast"] != 8 {
		t.Errorf("%d incasts, want one into each of the 8 PEs", rows["incast"])
	}
	for _, id := range harness.MatrixRows() {
		if id == harness.MatrixIncastRow {
			continue
		}
		want := 56
		if id[:6] == "limit/" {
			want = 56 + 8
		}
		if rows[id+" uni"] != want {
			t.Errorf("%s: %d unidirectional points, want %d", id, rows[id+" uni"], want)
		}
	}
	for _, id := range []string{"rma/put/block", "rma/get/block"} {
		if rows[id+" bidir"] != 28 {
			t.Errorf("%s: %d bidirectional points, want one per pair (28)", id, rows[id+" bidir"])
		}
	}
}

// A pair's rows are held to its own pair's copy reference, never to
// another pair's or to a GPU's local copy.
func TestMatrixLimitsArePerPair(t *testing.T) {
	limits := map[string]float64{}
	ref := func(pair string, bps float64) *record.Point {
		return &record.Point{ID: "limit/sm-copy", Status: record.StatusOK, Params: record.Params{Pair: pair},
			Metrics: map[string]record.Summary{record.MetricBandwidth: {Median: bps, Unit: record.UnitBytesPerSec}}}
	}
	harness.RecordLimit(limits, ref("0:0", 2000e9))
	harness.RecordLimit(limits, ref("0:1", 400e9))
	harness.RecordLimit(limits, ref("1:0", 300e9))
	if limits[harness.LimitKey("limit/sm-copy", "0:1")] != 400e9 || limits[harness.LimitKey("limit/sm-copy", "1:0")] != 300e9 {
		t.Fatalf("limits %v", limits)
	}
	if _, ok := limits["limit/sm-copy"]; ok {
		t.Errorf("a pair's reference became the run's: %v", limits)
	}
}
