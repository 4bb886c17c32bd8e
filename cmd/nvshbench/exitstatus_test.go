package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// A re-run on a file whose points of this command failed verification
// measures nothing again and still exits 1, naming the failed points it
// keeps: 0 only where every point of the command is ok or waived.
func TestRerunReportsTheFailedPointsItKeeps(t *testing.T) {
	t.Setenv("NVSHBENCH_FAKE_CORRUPT_SIZE", "4096")
	out := filepath.Join(t.TempDir(), "r.jsonl")
	args := []string{"run", "--shim", "fake", "--sizes", "1K,4K", "--samples", "2", "--out", out, "rma/put/block", "rma/get/block"}
	if _, stderr, code := nvshbench(t, args...); code != exitError {
		t.Fatalf("first run: exit %d, want 1: %s", code, stderr)
	}
	t.Setenv("NVSHBENCH_FAKE_CORRUPT_SIZE", "")
	_, stderr, code := nvshbench(t, args...)
	if code != exitError || !strings.Contains(stderr, ": 0 point(s) written") || !strings.Contains(stderr, "2 failed verification in an earlier run") {
		t.Errorf("re-run: exit %d, want 1 naming the 2 kept failures: %s", code, lastLines(stderr, 3))
	}
	// Another selection into the same file does not answer for them.
	if _, stderr, code := nvshbench(t, "run", "--shim", "fake", "--sizes", "1K", "--samples", "2", "--out", out, "rma/p"); code != 0 {
		t.Errorf("a run of other points into the file: exit %d: %s", code, lastLines(stderr, 3))
	}
}

// reproduce run again on its folder exits as the first run did.
func TestReproduceRerunKeepsItsExitStatus(t *testing.T) {
	t.Setenv("NVSHBENCH_FAKE_CORRUPT_SIZE", "1024")
	dir := filepath.Join(t.TempDir(), "repro")
	if _, stderr, code := nvshbench(t, "reproduce", "--quick", "--shim", "fake", "--out", dir); code != exitError {
		t.Fatalf("first run: exit %d, want 1: %s", code, lastLines(stderr, 3))
	}
	t.Setenv("NVSHBENCH_FAKE_CORRUPT_SIZE", "")
	_, stderr, code := nvshbench(t, "reproduce", "--quick", "--shim", "fake", "--out", dir)
	if code != exitError || !strings.Contains(stderr, "in an earlier run") {
		t.Errorf("re-run: exit %d, want 1 naming the failures it keeps: %s", code, lastLines(stderr, 3))
	}
}

// docs/exit-status.md is the one table of exit statuses: every code main.go
// maps to is in it, and the README links it.
func TestExitStatusTable(t *testing.T) {
	root := repoRoot(t)
	doc, err := os.ReadFile(filepath.Join(root, "docs", "exit-status.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, code := range []int{exitOK, exitError, exitUsage, exitRegression, exitNoGPU, 129, 130, 143} {
		if !regexp.MustCompile(`(?m)^\| ` + strconv.Itoa(code) + ` +\|`).Match(doc) {
			t.Errorf("docs/exit-status.md has no row for %d", code)
		}
	}
	readme, _ := os.ReadFile(filepath.Join(root, "README.md"))
	if !strings.Contains(string(readme), "(docs/exit-status.md)") {
		t.Error("README does not link docs/exit-status.md")
	}
}
