package launcher

import (
	"context"
	"io"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nvshbench/nvshbench/harness"
	"github.com/nvshbench/nvshbench/record"
)

// A worker that reports a result for another point than the one asked
// (another plan's worker, a confused one) does not get its numbers
// recorded under this point's id: the point is an error.
func TestResultForAnotherPointIsNotRecorded(t *testing.T) {
	out := filepath.Join(t.TempDir(), "r.jsonl")
	w, err := record.Create(out, record.Header{Tool: "nvshbench"})
	if err != nil {
		t.Fatal(err)
	}
	asked := harness.Item{Index: 0, ID: "rma/put/block", Params: record.Params{Size: 4096, Op: "put"}}
	other := harness.Item{Index: 0, ID: "latency/g", Params: record.Params{Size: 4096}}
	g := &group{o: Options{Stderr: io.Discard, Timeout: 5 * time.Second, Startup: 5 * time.Second}, nranks: 1, w: w,
		limits: map[string]float64{}, sum: &Summary{}, total: 1}
	g.spawn = func(g *group, rank int, _ []byte, in *inbox) (*worker, error) {
		wk := &worker{rank: rank, done: make(chan struct{})}
		go func() {
			out := harness.Outcome{Samples: []float64{1e-6, 1e-6, 1e-6}, Iters: 1, Bytes: 4096}
			in.send(event{rank: rank, msg: &harness.Message{Type: "result", Rank: rank, Index: 0, Key: harness.ItemKey(other), Outcome: &out}})
			in.send(event{rank: rank, msg: &harness.Message{Type: "done", Rank: rank}})
			close(wk.done)
			in.send(event{rank: rank, exited: true})
		}()
		return wk, nil
	}
	if _, _, err := g.run(context.Background(), []harness.Item{asked}); err != nil {
		t.Fatal(err)
	}
	w.Close()
	f, err := record.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Points) != 1 || f.Points[0].Status != record.StatusError || !strings.Contains(f.Points[0].Reason, "not point 0 of this run's plan") {
		t.Fatalf("points %+v", f.Points)
	}
}

// Workers that fail before finishing any point (a GPU that is gone, a
// library that cannot start): after 3 worker groups in a row the rest of
// the run is recorded as not started, each point once, instead of a worker
// group per point.
func TestWorkerGroupsFailingInARowStopTheRun(t *testing.T) {
	plan := testPlan(t, 2, "rma/put/block")
	o := Options{Stderr: io.Discard, Timeout: 5 * time.Second, GPUs: 1, PEsPerGPU: 1, Plan: plan,
		Out: filepath.Join(t.TempDir(), "r.jsonl"), Header: record.Header{Tool: "nvshbench"}}
	started := 0
	spawn := func(g *group, rank int, _ []byte, in *inbox) (*worker, error) {
		started++
		wk := &worker{rank: rank, done: make(chan struct{})}
		go func() {
			in.send(event{rank: rank, msg: &harness.Message{Type: "fatal", Rank: rank, Error: "NVSHMEM init: no device"}})
			close(wk.done)
		}()
		return wk, nil
	}
	sum, err := runWith(context.Background(), o, spawn)
	if err != nil {
		t.Fatal(err)
	}
	if started != 3 || sum.Errors != len(plan.Items) {
		t.Fatalf("%d worker groups started, %d of %d points errors", started, sum.Errors, len(plan.Items))
	}
	f, err := record.ReadFile(o.Out)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range f.Points[3:] {
		if !strings.HasPrefix(p.Reason, "not started: 3 worker groups in a row failed") || !strings.Contains(p.Reason, "no device") {
			t.Fatalf("%s: %q", p.ID, p.Reason)
		}
	}
}
