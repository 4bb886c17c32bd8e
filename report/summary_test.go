package report_test

import (
	"strings"
	"testing"

	"github.com/nvshbench/nvshbench/internal/decide"
	"github.com/nvshbench/nvshbench/internal/fixture"
	"github.com/nvshbench/nvshbench/internal/golden"
	"github.com/nvshbench/nvshbench/internal/table"
	"github.com/nvshbench/nvshbench/record"
	"github.com/nvshbench/nvshbench/report"
)

func TestGoldenSummary(t *testing.T) {
	rep := report.Summary([]*record.File{fixture.Synthetic(fixture.Options{Seed: 1})}, record.Paper(), decide.Rule{})
	for _, format := range []string{"text", "markdown"} {
		golden.Check(t, "summary."+format, render(t, rep, format))
	}
}

// summaryRows maps a summary's rows by the start of their label: measured,
// paper, from, notes.
func summaryRows(t *testing.T, rep *table.Report) map[string][]string {
	t.Helper()
	if len(rep.Tables) != 1 {
		t.Fatalf("%d tables, want one", len(rep.Tables))
	}
	out := map[string][]string{}
	for _, r := range rep.Tables[0].Rows {
		var cells []string
		for _, c := range r[1:] {
			cells = append(cells, c.Text)
		}
		out[r[0].Text] = cells
	}
	return out
}

func row(t *testing.T, rows map[string][]string, prefix string) []string {
	t.Helper()
	for label, cells := range rows {
		if strings.HasPrefix(label, prefix) {
			return cells
		}
	}
	t.Fatalf("no row %q in %v", prefix, rows)
	return nil
}

// The committed two-H200 reproduce of 2026-11-29 (schema 1), as the README
// quotes it (testdata's copy keeps schema 1's in-kernel timer rows at 8 and
// 256 B only): round trips by the events timer (the in-kernel timer's row
// gave 1.31 / 1.34 / 1.63 / 1.18 µs), get / p / g peaks from 128 MiB up
// (64 MiB is within twice the L2: 121.7 / 167.2 / 60.9 there), collectives
// refused for their unknown launch mode, no row the file did not measure.
func TestSummaryOfTheCommittedTwoH200Run(t *testing.T) {
	f, err := record.ReadFile("../testdata/h200x2-2026-11-29.jsonl.gz")
	if err != nil {
		t.Fatal(err)
	}
	rows := summaryRows(t, report.Summary([]*record.File{f}, record.Paper(), decide.Rule{}))
	for prefix, want := range map[string]string{
		"round trip at 256 B":                  "1.38 / 1.42 / 1.69 / 1.26 µs",
		"bulk put / get":                       "323.7 / 118.6 GB/s",
		"scalar p / g":                         "166.2 / 59.0 GB/s",
		"copy references":                      "396.1 / 369.4 / 375.6 GB/s",
		"ping-pong":                            "1.64 / 4.34 / 5.12 µs",
		"AllReduce peak algbw, one launch":     report.ModeUnknown,
		"AllReduce latency":                    report.ModeUnknown,
		"NVSHMEM device-block AllReduce":       report.ModeUnknown,
		"AllReduce peak algbw with NVLink mul": "waived: needs NVLink multicast, disabled in this run (NVSHMEM_DISABLE_NVLS=1 / NCCL_NVLS_ENABLE=0)",
	} {
		if got := row(t, rows, prefix)[0]; got != want {
			t.Errorf("%s: %q, want %q", prefix, got, want)
		}
	}
	if got := row(t, rows, "round trip at 256 B")[1]; got != "2.50 / 2.50 / 1.30 / 2.20" {
		t.Errorf("round trips' paper: %q", got)
	}
	for label := range rows {
		if strings.HasPrefix(label, "dependent load") || strings.HasPrefix(label, "NCCL device API (LSA) / NVSHMEM: put,") {
			t.Errorf("a row the file did not measure: %q", label)
		}
	}
}

// Of several files, each row comes from the first that gives the most of
// its values, all of them from that one file (named); a row no file
// measured is left out.
func TestSummaryOneFilePerRow(t *testing.T) {
	a := fixture.Synthetic(fixture.Options{Seed: 1, Label: "a"})
	b := fixture.Synthetic(fixture.Options{Seed: 2, Label: "b", Scale: 2})
	var kept []record.Point
	for _, p := range a.Points {
		if p.ID != "rma/get/block" && !strings.HasPrefix(p.ID, "latency/") {
			kept = append(kept, p)
		}
	}
	a.Points = kept // a: no get, no round trip
	rows := summaryRows(t, report.Summary([]*record.File{a, b}, record.Paper(), decide.Rule{}))
	alone := summaryRows(t, report.Summary([]*record.File{b}, record.Paper(), decide.Rule{}))
	for prefix, from := range map[string]string{"bulk put / get": "b", "round trip at 256 B": "b", "scalar p / g": "a", "NVSHMEM device-block": "a"} {
		r := row(t, rows, prefix)
		if r[2] != from {
			t.Errorf("%s from %q, want %q", prefix, r[2], from)
		}
		if from == "b" && r[0] != row(t, alone, prefix)[0] {
			t.Errorf("%s: %q, not b's %q: values mixed across files", prefix, r[0], row(t, alone, prefix)[0])
		}
	}
	if r := row(t, rows, "scalar p / g"); r[0] == row(t, alone, "scalar p / g")[0] {
		t.Errorf("scalar p / g: %q is b's, want a's (first of two complete)", r[0])
	}
	for label := range rows {
		if strings.HasPrefix(label, "ping-pong") || strings.HasPrefix(label, "dependent load") {
			t.Errorf("a row no file measured: %q", label)
		}
	}
}

// The device-API rows name the faster by the rule: a tie within the margin.
func TestSummaryFasterByTheRule(t *testing.T) {
	f := fixture.Synthetic(fixture.Options{Seed: 1})
	var lsa []record.Point
	for _, p := range f.Points {
		if p.ID == "rma/put/block" && p.Status == record.StatusOK {
			q := p
			q.ID = "rma/nccl-lsa/put/block"
			q.Samples = append([]float64(nil), p.Samples...)
			lsa = append(lsa, q)
		}
	}
	same := *f
	same.Points = append(append([]record.Point(nil), f.Points...), lsa...)
	r := row(t, summaryRows(t, report.Summary([]*record.File{&same}, record.Paper(), decide.Rule{})), "NCCL device API (LSA) / NVSHMEM: put, block")
	if !strings.HasPrefix(r[3], "tie (within") {
		t.Errorf("identical samples: %q", r[3])
	}
	for i := range lsa {
		for j := range lsa[i].Samples {
			lsa[i].Samples[j] /= 1.2 // 20 % faster
		}
		if err := record.Derive(&lsa[i], record.MetricBandwidth); err != nil {
			t.Fatal(err)
		}
	}
	faster := *f
	faster.Points = append(append([]record.Point(nil), f.Points...), lsa...)
	r = row(t, summaryRows(t, report.Summary([]*record.File{&faster}, record.Paper(), decide.Rule{})), "NCCL device API (LSA) / NVSHMEM: put, block")
	if !strings.HasPrefix(r[3], "faster: NCCL device API, by 2") {
		t.Errorf("20 %% faster: %q", r[3])
	}
}
