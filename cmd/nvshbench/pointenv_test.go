package main

import (
	"os"
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

// A variable the run's environment sets for the user's own reasons never
// refuses the run: points that set it themselves run under their own value
// (the controller starts their workers with it), and NVSHMEM's choice
// beside forced algorithms, which the variable would force too, is waived
// naming it; the run says which points it changes.
func TestForcedAlgoBesideTheUsersVariable(t *testing.T) {
	t.Setenv("NVSHMEM_BCAST_ALGO", "3")
	out := filepath.Join(t.TempDir(), "clash.jsonl")
	_, stderr, code := nvshbench(t, "run", "--shim", "fake", "--sizes", "1K", "--samples", "2", "--nvshmem-algos", "broadcast:put2all",
		"--out", out, "collectives/broadcast/nvshmem-block")
	if code != 0 || !strings.Contains(stderr, "NVSHMEM_BCAST_ALGO=3") || !strings.Contains(stderr, "collectives/broadcast/nvshmem-block") {
		t.Fatalf("exit %d, want 0 naming the variable and the points it changes: %s", code, stderr)
	}
	f := mustRead(t, out)
	for _, p := range f.Points {
		if p.ID != "collectives/broadcast/nvshmem-block" {
			continue
		}
		switch p.Params.Extra["nvshmem_algo"] {
		case "put2all":
			if p.Status != record.StatusOK {
				t.Errorf("forced put2all %s: %s %s", p.Params.Key(), p.Status, p.Reason)
			}
		case "":
			if p.Status != record.StatusWaived || !strings.Contains(p.Reason, "NVSHMEM_BCAST_ALGO=3") || !strings.Contains(p.Reason, "unset") {
				t.Errorf("NVSHMEM's choice under the user's NVSHMEM_BCAST_ALGO=3 %s: %s %q", p.Params.Key(), p.Status, p.Reason)
			}
		}
	}
	if f.Header.Env["NVSHMEM_BCAST_ALGO"] != "3" {
		t.Errorf("the header does not record the user's variable: %v", f.Header.Env)
	}
}

// NVSHMEM_TMA_POLICY or NVSHMEM_CUMEM_GRANULARITY set for the user's own
// reasons: a plain run of the rows that set them goes on, each point under
// its own value, and blames no flag that was not given.
func TestUsersVariableNeverRefusesAPlainRun(t *testing.T) {
	t.Setenv("NVSHBENCH_FAKE_NVSHMEM", "3.8.0") // the TMA rows run (NVSHMEM >= 3.7)
	for _, c := range []struct{ name, value, bench string }{
		{"NVSHMEM_TMA_POLICY", "ENABLE", "rma/put-tma/block"},
		{"NVSHMEM_CUMEM_GRANULARITY", "536870912", "host/heap-grow"},
	} {
		t.Setenv(c.name, c.value)
		out := filepath.Join(t.TempDir(), "user.jsonl")
		_, stderr, code := nvshbench(t, "run", "--shim", "fake", "--sizes", "4M", "--samples", "2", "--out", out, c.bench)
		if code != 0 || strings.Contains(stderr, "--nvshmem-algos") {
			t.Errorf("%s=%s, run %s: exit %d: %s", c.name, c.value, c.bench, code, lastLines(stderr, 3))
			continue
		}
		for _, p := range mustRead(t, out).Points {
			if p.ID == c.bench && p.Status != record.StatusOK {
				t.Errorf("%s %s: %s %s", p.ID, p.Params.Key(), p.Status, p.Reason)
			}
		}
		t.Setenv(c.name, "")
		os.Unsetenv(c.name)
	}
}

// Under srun / mpirun (one process per PE runs the whole plan in the
// job's environment) the job's environment may carry the variable a forced
// point needs: those points run; NVSHMEM's choice is then waived, and the
// points it does not carry say the command that measures them.
func TestForcedAlgosUnderALauncher(t *testing.T) {
	asSlurmRank0(t, "1")
	t.Setenv("NVSHBENCH_FAKE_PATH", "p2p") // the other rank on another GPU: team collectives run
	args := func(out string) []string {
		return []string{"run", "--shim", "fake", "--sizes", "1K", "--samples", "2", "--nvshmem-algos", "allgather:oneshot,broadcast:put2all",
			"--out", out, "collectives/allgather/nvshmem-block", "collectives/broadcast/nvshmem-block"}
	}
	t.Setenv("NVSHMEM_FCOLLECT_ALGO", "2")
	out := filepath.Join(t.TempDir(), "launched.jsonl")
	_, stderr, code := nvshbench(t, args(out)...)
	if code != 0 {
		t.Fatalf("NVSHMEM_FCOLLECT_ALGO=2 in the job's environment: exit %d: %s", code, lastLines(stderr, 3))
	}
	for _, p := range mustRead(t, out).Points {
		algo := p.Params.Extra["nvshmem_algo"]
		switch {
		case strings.HasPrefix(p.ID, "limit/"):
		case algo == "oneshot":
			if p.Status != record.StatusOK {
				t.Errorf("allgather:oneshot under the job's NVSHMEM_FCOLLECT_ALGO=2: %s %s", p.Status, p.Reason)
			}
		case algo == "" && strings.Contains(p.ID, "allgather"):
			if p.Status != record.StatusWaived || !strings.Contains(p.Reason, "NVSHMEM_FCOLLECT_ALGO=2") {
				t.Errorf("NVSHMEM's allgather choice in a job that forces it: %s %q", p.Status, p.Reason)
			}
		case algo == "":
			if p.Status != record.StatusOK {
				t.Errorf("NVSHMEM's broadcast choice: %s %s", p.Status, p.Reason)
			}
		case algo == "put2all":
			if p.Status != record.StatusWaived || !strings.Contains(p.Reason, "NVSHMEM_BCAST_ALGO=1") {
				t.Errorf("put2all, not in the job's environment: %s %q", p.Status, p.Reason)
			}
		}
	}
	for _, want := range []string{"NVSHMEM_BCAST_ALGO=1 srun", "--nvshmem-algos allgather:oneshot,broadcast:put2all"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("the run does not say the command that measures the waived points (%q):\n%s", want, stderr)
		}
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
