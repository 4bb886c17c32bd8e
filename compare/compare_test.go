package compare_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/nvshbench/nvshbench/compare"
	"github.com/nvshbench/nvshbench/internal/fixture"
	"github.com/nvshbench/nvshbench/report"
	"github.com/nvshbench/nvshbench/results"
)

func TestRegressionDetected(t *testing.T) {
	base := fixture.Synthetic(fixture.Options{Seed: 1, Label: "base"})
	slow := fixture.Synthetic(fixture.Options{Seed: 2, Scale: 0.9, Label: "slow", NVSHMEM: "3.3.9"})
	res, err := compare.Compare([]*results.File{base, slow}, compare.Options{Threshold: 0.05})
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
	if put == nil || !put.Regress[0] || put.Changes[0] > -0.08 || put.Changes[0] < -0.12 {
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
	if err := report.Render(&b, res.Table(), "text"); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "REGRESSION") {
		t.Error("table does not mark the regression")
	}
}

func TestSameDistributionIsNotSignificant(t *testing.T) {
	a := fixture.Synthetic(fixture.Options{Seed: 1})
	b := fixture.Synthetic(fixture.Options{Seed: 3})
	res, err := compare.Compare([]*results.File{a, b}, compare.Options{Threshold: 0.05})
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
	res, err := compare.Compare([]*results.File{a, fast}, compare.Options{Threshold: 0.05})
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
	if _, err := compare.Compare([]*results.File{a, b}, compare.Options{}); err == nil {
		t.Error("files with no common point compared without error")
	}
	if _, err := compare.Compare([]*results.File{a}, compare.Options{}); err == nil {
		t.Error("one file compared")
	}
}
