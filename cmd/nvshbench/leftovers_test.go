package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nvshbench/nvshbench/record"
)

// reproduce --shim fake says SYNTHETIC on the terminal at the start and at
// the end; a point that fails verification is recorded, the other sweeps
// run, report.md is written, and the command exits 1.
func TestReproduceFakeSaysSyntheticAndReportsFailures(t *testing.T) {
	t.Setenv("NVSHBENCH_FAKE_CORRUPT_SIZE", "1024")
	out := filepath.Join(t.TempDir(), "repro")
	stdout, stderr, code := nvshbench(t, "reproduce", "--quick", "--shim", "fake", "--out", out)
	if code != exitError || !strings.Contains(stderr, "failed verification): see their reasons in") {
		t.Fatalf("exit %d, want 1 naming the failed points: %s", code, lastLines(stderr, 3))
	}
	lines := strings.Split(strings.TrimSpace(stderr), "\n")
	if !strings.Contains(lines[0], "SYNTHETIC") || strings.Count(stderr, "SYNTHETIC") != 2 || !strings.Contains(strings.Join(lines[len(lines)-3:], "\n"), "SYNTHETIC") {
		t.Errorf("SYNTHETIC is not said at the start and at the end:\n%s", stderr)
	}
	if !strings.Contains(stdout, "index.md") {
		t.Errorf("stdout: %q", stdout)
	}
	f := mustRead(t, filepath.Join(out, "results.jsonl"))
	var failed int
	suites := map[string]bool{}
	for _, p := range f.Points {
		if p.Status == record.StatusFailedVerification {
			failed++
		}
		suites[strings.SplitN(p.ID, "/", 2)[0]] = true
	}
	if failed == 0 || !suites["latency"] || !suites["collectives"] || !suites["moe"] {
		t.Errorf("%d failed points; sweeps run: %v", failed, suites)
	}
	for _, name := range []string{"report.md", "index.md", "bandwidth-put.png"} {
		if _, err := os.Stat(filepath.Join(out, name)); err != nil {
			t.Errorf("not written after a failed point: %v", err)
		}
	}
}
