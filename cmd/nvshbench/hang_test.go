package main

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/nvshbench/nvshbench/record"
)

// One size whose every point hangs: its points are errors (the first few
// timed out, the rest of that size not started once its restart budget is
// spent), every other size of every benchmark is measured, and the run
// exits 1 naming them.
func TestAHangCostsItsSizeOnly(t *testing.T) {
	t.Setenv("NVSHBENCH_FAKE_HANG_SIZE", "1048576")
	out := filepath.Join(t.TempDir(), "hang.jsonl")
	_, stderr, code := nvshbench(t, "run", "--shim", "fake", "--sizes", "4K,1M,4M", "--samples", "2", "--timeout", "1s", "--out", out,
		"rma/put/block", "rma/get/block", "rma/p", "rma/g", "rma/st", "rma/ld")
	if code != exitError {
		t.Fatalf("exit %d, want 1: %s", code, lastLines(stderr, 5))
	}
	f := mustRead(t, out)
	timedOut, notStarted := 0, 0
	for _, p := range f.Points {
		if strings.HasPrefix(p.ID, "limit/") {
			continue
		}
		switch {
		case p.Params.Size != 1<<20 && p.Status != record.StatusOK:
			t.Errorf("%s %s: %s %s: a size that does not hang was not measured", p.ID, p.Params.Key(), p.Status, p.Reason)
		case p.Params.Size == 1<<20 && p.Status != record.StatusError:
			t.Errorf("%s %s: %s, want an error", p.ID, p.Params.Key(), p.Status)
		case p.Params.Size == 1<<20 && strings.HasPrefix(p.Reason, "not started"):
			notStarted++
			if !strings.Contains(p.Reason, "1 MiB 3 times") || !strings.Contains(p.Reason, "timed out") {
				t.Errorf("%s %s: reason %q", p.ID, p.Params.Key(), p.Reason)
			}
		case p.Params.Size == 1<<20 && strings.HasPrefix(p.Reason, "timed out"):
			timedOut++
		case p.Params.Size == 1<<20:
			t.Errorf("%s %s: reason %q", p.ID, p.Params.Key(), p.Reason)
		}
	}
	if timedOut != 3 || notStarted != 3 {
		t.Errorf("1 MiB: %d timed out, %d not started; want 3 and 3 (the restart budget of a size)", timedOut, notStarted)
	}
}

// reproduce with one size that hangs: the hang costs that size's points,
// every sweep after it runs, and report.md, the charts and index.md are
// written for what was measured; the command exits 1.
func TestReproduceGoesOnPastAHangingSize(t *testing.T) {
	t.Setenv("NVSHBENCH_FAKE_HANG_SIZE", "1048576")
	dir := filepath.Join(t.TempDir(), "repro")
	start := time.Now()
	_, stderr, code := nvshbench(t, "reproduce", "--quick", "--shim", "fake", "--timeout", "1s", "--out", dir)
	if code != exitError {
		t.Fatalf("exit %d, want 1: %s", code, lastLines(stderr, 5))
	}
	t.Logf("reproduce with a hanging size took %s", time.Since(start).Round(time.Second))
	f := mustRead(t, filepath.Join(dir, "results.jsonl"))
	suites := map[string]bool{}
	for _, p := range f.Points {
		if p.Status == record.StatusOK {
			suites[strings.SplitN(p.ID, "/", 2)[0]] = true
		}
	}
	for _, s := range []string{"rma", "latency", "collectives", "moe"} {
		if !suites[s] {
			t.Errorf("no %s point measured after the hang: %v", s, suites)
		}
	}
	for _, name := range []string{"report.md", "index.md", "bandwidth-put.png", "latency-put.svg", "allreduce.png"} {
		if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
			t.Errorf("not written after the hang: %v", err)
		}
	}
}

// The start-up allowance of a worker group's first point is a flag of its
// own: shown in --help, recorded in the header, said by the point it let
// wait.
func TestStartupTimeoutIsAFlag(t *testing.T) {
	for _, cmd := range []string{"run", "reproduce"} {
		help, _, _ := nvshbench(t, cmd, "--help")
		if !strings.Contains(help, "--startup-timeout") {
			t.Errorf("%s --help does not show --startup-timeout", cmd)
		}
	}
	t.Setenv("NVSHBENCH_FAKE_HANG_SIZE", "4096")
	out := filepath.Join(t.TempDir(), "startup.jsonl")
	_, stderr, code := nvshbench(t, "run", "--shim", "fake", "--sizes", "4K", "--samples", "2", "--timeout", "1s", "--startup-timeout", "2s",
		"--out", out, "rma/put/block")
	if code != exitError {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	f := mustRead(t, out)
	if r := f.Header.Run; r == nil || r.Timeout != 1 || r.StartupTimeout != 2 {
		t.Errorf("header run setup %+v: want the timeout 1 s and the start-up allowance 2 s", r)
	}
	for _, p := range f.Points {
		if p.Params.Size == 4096 && !strings.Contains(p.Reason, "--timeout 1s") {
			t.Errorf("the hung point's reason %q does not name the timeout", p.Reason)
		}
	}
	if _, stderr, code := nvshbench(t, "run", "--shim", "fake", "--startup-timeout", "-1s", "--out", filepath.Join(t.TempDir(), "x.jsonl")); code != exitUsage {
		t.Errorf("--startup-timeout -1s: exit %d: %s", code, stderr)
	}
}

// reproduce interrupted (the first SIGTERM of a cancelled job): it stops,
// writes report.md, the charts and index.md of what it measured, and
// exits 143.
func TestInterruptedReproduceWritesItsReport(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "repro")
	c, err := startChild(t, []string{"NVSHBENCH_FAKE_HANG_SIZE=1048576"}, "reproduce", "--quick", "--shim", "fake", "--timeout", "60s", "--out", dir)
	if err != nil {
		t.Fatal(err)
	}
	c.waitFor(t, 30*time.Second, "points written before the hung 1 MiB point", morePoints(filepath.Join(dir, "results.jsonl"), 10))
	time.Sleep(300 * time.Millisecond)
	c.cmd.Process.Signal(syscall.SIGTERM)
	err, ok := c.end(20 * time.Second)
	if code, _ := exitOf(err); !ok || code != 143 {
		t.Fatalf("after SIGTERM: %v (ended within 20 s: %v), want exit 143:\n%s", err, ok, lastLines(c.stderr.String(), 5))
	}
	for _, name := range []string{"report.md", "index.md"} {
		if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
			t.Errorf("not written after the interrupt: %v", err)
		}
	}
	if charts, _ := filepath.Glob(filepath.Join(dir, "*.png")); len(charts) == 0 {
		t.Error("no chart written after the interrupt")
	}
}
