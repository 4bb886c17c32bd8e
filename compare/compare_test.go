package compare_test

import (
	"bytes"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/nvshbench/nvshbench/compare"
	"github.com/nvshbench/nvshbench/internal/fixture"
	"github.com/nvshbench/nvshbench/internal/table"
	"github.com/nvshbench/nvshbench/record"
)

func TestRegressionDetected(t *testing.T) {
	base := fixture.Synthetic(fixture.Options{Seed: 1, Label: "base"})
	slow := fixture.Synthetic(fixture.Options{Seed: 2, Scale: 0.9, Label: "slow", NVSHMEM: "3.3.9"})
	res, err := compare.Compare([]*record.File{base, slow}, compare.Options{Threshold: 0.05})
	if err != nil {
		t.Fatal(err)
	}
	if res.Regressions == 0 {
		t.Fatal("a 10% slowdown was not flagged")
	}
	var put *compare.Row
	for i := range res.Rows {
		if res.Rows[i].ID == "rma/put/block" && strings.HasPrefix(res.Rows[i].Key, "size=134217728 ") {
			put = &res.Rows[i]
		}
	}
	if put == nil || !put.Regress[0] || put.Slowdown[0] < 0.08 || put.Slowdown[0] > 0.14 {
		t.Fatalf("128 MiB put row: %+v", put)
	}
	warned := false
	for _, w := range res.Warnings {
		if strings.Contains(w, `NVSHMEM is "3.4.5" in base but "3.3.9" in slow`) {
			warned = true
		}
	}
	if !warned {
		t.Errorf("version difference not warned: %q", res.Warnings)
	}
	var b bytes.Buffer
	if err := table.Render(&b, res.Table(), "text"); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "REGRESSION") {
		t.Error("table does not mark the regression")
	}
}

func TestSameDistributionIsNotSignificant(t *testing.T) {
	a := fixture.Synthetic(fixture.Options{Seed: 1})
	b := fixture.Synthetic(fixture.Options{Seed: 3})
	res, err := compare.Compare([]*record.File{a, b}, compare.Options{Threshold: 0.05})
	if err != nil {
		t.Fatal(err)
	}
	if res.Regressions != 0 {
		t.Errorf("%d regressions between two draws of the same distribution", res.Regressions)
	}
	tilde := 0
	for _, r := range res.Rows {
		if r.Deltas[0] == "~" {
			tilde++
		}
	}
	if tilde < len(res.Rows)*3/4 {
		t.Errorf("only %d of %d rows are ~", tilde, len(res.Rows))
	}
}

func TestLatencyRegressionDirection(t *testing.T) {
	a := fixture.Synthetic(fixture.Options{Seed: 1})
	fast := fixture.Synthetic(fixture.Options{Seed: 2, Scale: 1.2})
	res, err := compare.Compare([]*record.File{a, fast}, compare.Options{Threshold: 0.05})
	if err != nil {
		t.Fatal(err)
	}
	if res.Regressions != 0 {
		t.Errorf("a faster run (lower latency, higher bandwidth) gave %d regressions", res.Regressions)
	}
}

func TestNoMatchIsAnError(t *testing.T) {
	a := fixture.Synthetic(fixture.Options{Seed: 1})
	b := fixture.Synthetic(fixture.Options{Seed: 1})
	for i := range b.Points {
		b.Points[i].ID = "other/" + b.Points[i].ID
	}
	if _, err := compare.Compare([]*record.File{a, b}, compare.Options{}); err == nil {
		t.Error("files with no common point compared without error")
	}
	if _, err := compare.Compare([]*record.File{a}, compare.Options{}); err == nil {
		t.Error("one file compared")
	}
}

// A candidate point that errored, failed verification or is missing where
// the base measured it is a row of its own and fails the gate.
func TestFailedAndMissingCandidatePointsFailTheGate(t *testing.T) {
	base := fixture.Synthetic(fixture.Options{Seed: 1})
	cand := fixture.Synthetic(fixture.Options{Seed: 2})
	var keep []record.Point
	var failedKey, droppedKey string
	for _, p := range cand.Points {
		switch {
		case failedKey == "" && p.Status == record.StatusOK && p.ID == "rma/put/block":
			p.Status, p.Reason, p.Samples, p.Metrics = record.StatusFailedVerification, "3 of 1024 checked elements wrong", nil, nil
			failedKey = p.MatchKey()
		case droppedKey == "" && p.Status == record.StatusOK && p.ID == "rma/get/block":
			droppedKey = p.MatchKey()
			continue
		}
		keep = append(keep, p)
	}
	cand.Points = keep
	res, err := compare.Compare([]*record.File{base, cand}, compare.Options{Threshold: 0.5})
	if err != nil {
		t.Fatal(err)
	}
	// The fixtures' own errored point (rma/g at 1 GiB) counts too: 3.
	if res.Failures != 3 {
		t.Errorf("failures = %d, want 3 (one failed verification, one missing, the fixture's errored point)", res.Failures)
	}
	seen := map[string]string{}
	for _, r := range res.Rows {
		if len(r.Failed) > 0 && r.Failed[0] != "" {
			seen[r.ID+" "+r.Key] = r.Failed[0]
		}
	}
	var failedWhy, missingWhy string
	for k, v := range seen {
		if strings.Contains(k, "rma/put/block") {
			failedWhy = v
		}
		if strings.Contains(k, "rma/get/block") {
			missingWhy = v
		}
	}
	if !strings.HasPrefix(failedWhy, "failed-verification") || missingWhy != "missing" {
		t.Errorf("rows: %v", seen)
	}
	out := res.Table()
	if txt := fmt.Sprint(out.Tables[0].Notes); !strings.Contains(txt, "failed-verification: 3 of 1024") {
		t.Errorf("notes %s", txt)
	}
	allowed, _ := compare.Compare([]*record.File{base, cand}, compare.Options{Threshold: 0.5, AllowFailed: true})
	if allowed.Failures != 0 {
		t.Errorf("--allow-failed counted %d failures", allowed.Failures)
	}
}

// A run with another library version: each moved row says which version
// change comes with it, the summary counts them, and a row whose code runs
// no changed library says so instead.
func TestMovedRowsNameTheLibraryChange(t *testing.T) {
	base := fixture.Synthetic(fixture.Options{Seed: 1, Label: "base"})
	other := fixture.Synthetic(fixture.Options{Seed: 2, Scale: 0.8, Label: "new", NVSHMEM: "3.8.0"})
	// A copy reference (CUDA alone) that moved as much: a put's samples
	// under its ID; what each benchmark declares its code runs.
	for _, f := range []*record.File{base, other} {
		for i := range f.Points {
			f.Points[i].Code = &record.Code{Calls: record.NVSHMEM}
		}
		for _, p := range f.Points {
			if p.ID == "rma/put/block" {
				p.ID, p.Code = "limit/sm-copy", &record.Code{Calls: record.CUDAOnly}
				f.Points = append(f.Points, p)
				break
			}
		}
	}
	res, err := compare.Compare([]*record.File{base, other}, compare.Options{Threshold: 0.05})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Libraries) != 1 || len(res.Libraries[0]) != 1 || res.Libraries[0][0] != "NVSHMEM 3.4.5 → 3.8.0" {
		t.Fatalf("library changes %q", res.Libraries)
	}
	sawPut, sawLimit := false, false
	for _, row := range res.Rows {
		switch {
		case row.ID == "rma/put/block":
			sawPut = true
			if row.Library[0] != "NVSHMEM 3.4.5 → 3.8.0" {
				t.Errorf("%s: attributed %q", row.ID, row.Library[0])
			}
		case strings.HasPrefix(row.ID, "limit/"):
			sawLimit = true
			if row.Library[0] != "" {
				t.Errorf("%s (CUDA alone): attributed %q", row.ID, row.Library[0])
			}
		}
	}
	if !sawPut || !sawLimit {
		t.Fatalf("rows: rma/put/block %v, limit/sm-copy %v", sawPut, sawLimit)
	}
	var b bytes.Buffer
	if err := table.Render(&b, res.Table(), "text"); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	if !strings.Contains(out, "[NVSHMEM 3.4.5 → 3.8.0]") || !regexp.MustCompile(`new: \d+ row\(s\) moved with the library version change NVSHMEM 3.4.5 → 3.8.0`).MatchString(out) {
		t.Errorf("no per-row or summary attribution:\n%s", out)
	}
	if !strings.Contains(out, "moved in code that runs no library whose version changed") {
		t.Errorf("a copy reference that moved is not told apart:\n%s", out)
	}
}

// A version change is attributed only to rows whose code calls the library
// that changed, by what the benchmark declares it runs (Point.Code), never
// by its ID: an empty kernel, a compute kernel alone and cudaMemcpyAsync
// run neither library, a put NVSHMEM; a point whose code the reader was
// given no declaration of is not attributed, and says so.
func TestVersionChangeAttributedByDeclaredCode(t *testing.T) {
	base := fixture.Synthetic(fixture.Options{Seed: 1, Label: "base"})
	other := fixture.Synthetic(fixture.Options{Seed: 2, Scale: 0.8, Label: "new", NVSHMEM: "3.8.0"})
	code := map[string]*record.Code{
		"latency/launch":         {Calls: record.CUDAOnly},
		"persm/compute/fma":      {Calls: record.CUDAOnly},
		"rma/host/memcpy":        {Calls: record.CUDAOnly},
		"rma/put/block":          {Calls: record.NVSHMEM},
		"rma/nccl-lsa/put/block": nil, // undeclared
	}
	for _, f := range []*record.File{base, other} {
		var puts []record.Point
		for _, p := range f.Points {
			if p.ID == "rma/put/block" && p.Params.Path == "auto" {
				puts = append(puts, p)
			}
		}
		// The same moved samples under each ID.
		f.Points = nil
		for id, c := range code {
			for _, p := range puts {
				p.ID, p.Code = id, c
				f.Points = append(f.Points, p)
			}
		}
	}
	res, err := compare.Compare([]*record.File{base, other}, compare.Options{Threshold: 0.05})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"latency/launch": "", "persm/compute/fma": "", "rma/host/memcpy": "", "rma/put/block": "NVSHMEM 3.4.5 → 3.8.0",
		"rma/nccl-lsa/put/block": "not attributed: its code undeclared"}
	seen := map[string]bool{}
	for _, row := range res.Rows {
		seen[row.ID] = true
		if row.Library[0] != want[row.ID] {
			t.Errorf("%s: attributed %q, want %q", row.ID, row.Library[0], want[row.ID])
		}
	}
	if len(seen) != len(want) {
		t.Errorf("rows of %v", seen)
	}
}

// A change between two points whose GPUs ran at SM clocks more than 3 %
// apart is said to be possibly the clock's; at the same clock it is not.
func TestChangeAcrossClocksIsSaid(t *testing.T) {
	clock := func(f *record.File, hz float64) *record.File {
		for i := range f.Points {
			f.Points[i].Clock = &record.Clock{N: 5, SMMinHz: hz, SMMedianHz: hz}
		}
		return f
	}
	for _, c := range []struct {
		hz   float64
		said bool
	}{{1980e6, false}, {1700e6, true}} {
		base := clock(fixture.Synthetic(fixture.Options{Seed: 1, Label: "base"}), 1980e6)
		slow := clock(fixture.Synthetic(fixture.Options{Seed: 2, Scale: 0.9, Label: "slow"}), c.hz)
		res, err := compare.Compare([]*record.File{base, slow}, compare.Options{Threshold: 0.05})
		if err != nil {
			t.Fatal(err)
		}
		said := slices.ContainsFunc(res.Warnings, func(w string) bool {
			return strings.Contains(w, "changed between points whose GPUs ran at SM clocks more than 3 % apart")
		})
		if said != c.said || res.Regressions == 0 {
			t.Errorf("candidate at %.0f MHz: said %v (want %v), %d regressions: %q", c.hz/1e6, said, c.said, res.Regressions, res.Warnings)
		}
	}
}
