package report

import (
	"fmt"
	"strings"
	"testing"

	"github.com/nvshbench/nvshbench/cuda/shim"
	"github.com/nvshbench/nvshbench/record"
)

// Table I, measured: every group of the paper's a row; a group with an ok
// point names its benchmarks, one whose points were all waived says the
// waiver, one the file did not run says so, and the groups no benchmark
// measures give their reason.
func TestTableIGroups(t *testing.T) {
	f := &record.File{Header: record.Header{PEs: 1}}
	add := func(id string, st record.Status, reason string) {
		f.Points = append(f.Points, record.Point{ID: id, Status: st, Reason: reason, Params: record.Params{Size: 8}})
	}
	add("rma/atomic/fetch_and", record.StatusOK, "")
	add("rma/atomic/xor", record.StatusOK, "")
	add("latency/atomic/inc", record.StatusOK, "")
	add("rma/put/block", record.StatusOK, "")
	add("rma/atomic/signal_add", record.StatusOK, "") // signal_op: synchronization, not the atomics
	add("collectives/reducescatter/nccl", record.StatusWaived, "NCCL refuses two ranks on one GPU")
	tab := tableI(f, "")
	if len(tab.Rows) != len(tableIGroups) {
		t.Fatalf("%d rows for %d groups", len(tab.Rows), len(tableIGroups))
	}
	row := map[string][]string{}
	for _, r := range tab.Rows {
		var cells []string
		for _, c := range r {
			cells = append(cells, c.Text)
		}
		row[cells[0]] = cells
	}
	if r := row["atomics"]; r[2] != "latency/atomic/inc, rma/atomic/* (2)" || r[3] != "3 of 3" || r[4] != "" {
		t.Errorf("atomics: %q", r)
	}
	if r := row["collectives"]; r[2] != "–" || !strings.Contains(r[4], "every point waived: NCCL refuses two ranks") {
		t.Errorf("collectives: %q", r)
	}
	if r := row["synchronization"]; r[2] != "rma/atomic/signal_add" || r[3] != "1 of 1" {
		t.Errorf("synchronization: %q", r)
	}
	if r := row["memory ordering"]; !strings.Contains(r[4], "not in this file") {
		t.Errorf("memory ordering: %q", r)
	}
	if r := row["teams"]; r[2] != "–" || !strings.Contains(r[4], "not in this file") {
		t.Errorf("teams: %q", r)
	}
	if r := row["setup"]; r[2] != "–" || !strings.Contains(r[4], "setup runs once a job") {
		t.Errorf("setup: %q", r)
	}
	if r := row["one-sided RMA"]; r[2] != "rma/put/block" || r[3] != "1 of 1" {
		t.Errorf("one-sided RMA: %q", r)
	}
}

// Table I's collectives group is every collective of the shim that moves
// a payload (its NB_COLLECTIVES, as the guide's): a point of each counts,
// a barrier's does not (synchronization's); a new collective's rows count
// with no edit here (record/persm's scratch test adds one and runs this).
func TestTableICountsEveryCollective(t *testing.T) {
	f := &record.File{Header: record.Header{PEs: 1}}
	var moving []string
	for _, c := range shim.Collectives() {
		f.Points = append(f.Points, record.Point{ID: "collectives/" + c.Base + "/nccl", Status: record.StatusOK, Params: record.Params{Size: 8}})
		if c.Has(shim.TraitPayload) {
			moving = append(moving, c.Base)
		}
	}
	t.Logf("collectives moving a payload: %v", moving)
	if len(moving) < 5 {
		t.Fatalf("only %v", moving)
	}
	for _, r := range tableI(f, "").Rows {
		if r[0].Text == "collectives" {
			if want := fmt.Sprintf("%d of %d", len(moving), len(moving)); r[3].Text != want {
				t.Errorf("collectives: %q points ok, want %q (%q)", r[3].Text, want, r[2].Text)
			}
			return
		}
	}
	t.Error("no collectives row")
}
