package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/nvshbench/nvshbench/harness"
	"github.com/nvshbench/nvshbench/record"
)

// Forced NVSHMEM algorithms run in workers started with their variable:
// a worker whose environment lacks a point's variable waives it (RunPoint),
// so every forced point ok proves the controller's worker groups carry
// each point's environment, and the default points still run without it.
func TestForcedAlgosRunInTheirEnvironment(t *testing.T) {
	out := filepath.Join(t.TempDir(), "algos.jsonl")
	_, stderr, code := nvshbench(t, "run", "--shim", "fake", "--sizes", "1K,64K", "--samples", "2", "--nvshmem-algos", "broadcast:put2all,allgather",
		"--out", out, "collectives/broadcast/nvshmem-block", "collectives/allgather/nvshmem-block")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	f, err := harness.Reader().ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	forced := map[string]int{}
	plain := 0
	for _, p := range f.Points {
		if p.Status != record.StatusOK {
			t.Errorf("%s %s: %s %s", p.ID, p.Params.Key(), p.Status, p.Reason)
		}
		algo := p.Params.Extra["nvshmem_algo"]
		if algo == "" {
			plain++
			if len(p.Params.Env) != 0 {
				t.Errorf("a default point with an environment: %s", p.Params.Key())
			}
			continue
		}
		forced[algo]++
		if !strings.HasSuffix(p.Effective, "-"+algo) {
			t.Errorf("%s: effective %q does not name %s", p.Params.Key(), p.Effective, algo)
		}
	}
	// 2 sizes × 2 launch modes each; ll8 only at 1 KiB (its scratch: 2 KiB a PE).
	want := map[string]int{"put2all": 4, "oneshot": 4, "nvls": 4, "ll8": 2}
	for k, n := range want {
		if forced[k] != n {
			t.Errorf("%d points of %s, want %d (all: %v)", forced[k], k, n, forced)
		}
	}
	if plain != 8 {
		t.Errorf("%d default points, want 8", plain)
	}
	if !strings.Contains(strings.Join(f.Header.Notes, "\n"), "5 environment(s)") {
		t.Errorf("header notes do not count the worker groups: %q", f.Header.Notes)
	}
}

// A variable the run's environment sets is refused where a point sets it:
// the default rows would not be NVSHMEM's default.
func TestForcedAlgoClashesWithEnvironment(t *testing.T) {
	t.Setenv("NVSHMEM_BCAST_ALGO", "3")
	out := filepath.Join(t.TempDir(), "clash.jsonl")
	_, stderr, code := nvshbench(t, "run", "--shim", "fake", "--sizes", "1K", "--samples", "2", "--nvshmem-algos", "broadcast:put2all",
		"--out", out, "collectives/broadcast/nvshmem-block")
	if code != exitUsage || !strings.Contains(stderr, "NVSHMEM_BCAST_ALGO=3") {
		t.Fatalf("exit %d, want a usage error naming the variable: %s", code, stderr)
	}
}

func TestForcedAlgoFlagChecked(t *testing.T) {
	for _, args := range [][]string{
		{"--nvshmem-algos", "allgather:ring", "collectives/allgather/nvshmem-block"},
		{"--nvshmem-algos", "allgather", "rma/put/block"},          // no selected benchmark takes it
		{"--nvshmem-algos", "barrier", "collectives/barrier/nccl"}, // barrier has no algorithm to force
	} {
		_, stderr, code := nvshbench(t, append([]string{"run", "--shim", "fake", "--sizes", "1K", "--out", filepath.Join(t.TempDir(), "x.jsonl")}, args...)...)
		if code != exitUsage {
			t.Errorf("%v: exit %d, want %d: %s", args, code, exitUsage, stderr)
		}
	}
}
