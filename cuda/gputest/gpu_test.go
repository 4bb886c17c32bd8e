//go:build gpu

package gputest

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nvshbench/nvshbench/cuda"
	"github.com/nvshbench/nvshbench/results"
)

// bin is the nvshbench binary under test ($NVSHBENCH_BIN).
func bin(t *testing.T) string {
	b := os.Getenv("NVSHBENCH_BIN")
	if b == "" {
		t.Skip("SKIPPED: set NVSHBENCH_BIN to the nvshbench binary (make gpu-test does)")
	}
	return b
}

// shim finds or builds the shim; no GPU or toolchain skips the test loudly.
func shim(t *testing.T) string {
	if p := os.Getenv("NVSHBENCH_SHIM"); p != "" {
		return p
	}
	tc, err := cuda.Discover()
	if err != nil {
		t.Skipf("SKIPPED: no CUDA toolchain: %v", err)
	}
	p, err := tc.EnsureShim(os.Stderr)
	if err != nil {
		t.Fatalf("building the shim: %v", err)
	}
	lib, err := cuda.Load(p)
	if err != nil {
		t.Skipf("SKIPPED: shim does not load: %v", err)
	}
	if n, err := lib.DeviceCount(); err != nil || n == 0 {
		t.Skipf("SKIPPED: no GPU (%v)", err)
	}
	return p
}

func runAll(t *testing.T, pesPerGPU string, extra ...string) *results.File {
	out := filepath.Join(t.TempDir(), "gpu.jsonl")
	args := append([]string{"run", "--shim", shim(t), "--pes-per-gpu", pesPerGPU, "--gpus", "1", "--sizes", "8,1000,4096,4097,1M",
		"--samples", "3", "--warmup", "1", "--timeout", "30s", "--dtypes", "float,bf16,half", "--out", out}, extra...)
	args = append(args, "rma", "limit", "latency", "collectives")
	cmd := exec.Command(bin(t), args...)
	cmd.Env = append(os.Environ(), "NVSHMEM_DISABLE_NVLS=1", "NCCL_NVLS_ENABLE=0", "TORCH_SYMM_MEM_DISABLE_MULTICAST=1")
	outb, err := cmd.CombinedOutput()
	t.Logf("%s", outb)
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	f, err := results.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func check(t *testing.T, f *results.File, wantPEs int) {
	if f.Header.PEs != wantPEs || len(f.Header.GPUs) != 1 || f.Header.NVSHMEM == "" {
		t.Errorf("header: pes %d gpus %d nvshmem %q", f.Header.PEs, len(f.Header.GPUs), f.Header.NVSHMEM)
	}
	ids := map[string]bool{}
	for _, p := range f.Points {
		ids[p.ID] = true
		if p.Status == results.StatusWaived {
			// only sizes that do not divide by the element, or bidir with one PE
			ok := strings.Contains(p.Reason, "multiple of") || strings.Contains(p.Reason, "multicast disabled") ||
				(wantPEs == 2 && (strings.Contains(p.Reason, "on one GPU") || strings.Contains(p.Reason, "one PE per GPU"))) ||
				(wantPEs == 1 && strings.Contains(p.Reason, "2 PEs")) || strings.Contains(p.Reason, "captured")
			if !ok {
				t.Errorf("%s %d: unexpectedly waived: %s", p.ID, p.Params.Size, p.Reason)
			}
			continue
		}
		if p.Status != results.StatusOK || (p.Bytes > 0 && (!p.Verify.Checked || !p.Verify.OK)) {
			t.Errorf("%s %s: %s %s verify=%+v", p.ID, p.Params.Key(), p.Status, p.Reason, p.Verify)
		}
		payload := (!strings.HasPrefix(p.ID, "latency/") && !strings.HasPrefix(p.ID, "collectives/barrier/")) || strings.Contains(p.ID, "put") || strings.Contains(p.ID, "get") ||
			p.ID == "latency/p" || p.ID == "latency/g" || p.ID == "latency/pingpong/p"
		if payload && p.Status == results.StatusOK && p.Bytes <= 0 {
			t.Errorf("%s %s: no bytes counted", p.ID, p.Params.Key())
		}
		if p.Status == results.StatusOK {
			// events: one sample per timed launch; globaltimer: one per iteration of a launch (≥ 10)
			if (p.Timer == "globaltimer" && (len(p.Samples) < 10 || p.Iters != 1)) || (p.Timer != "globaltimer" && len(p.Samples) != 3) {
				t.Errorf("%s %s: %d samples, iters %d (timer %s)", p.ID, p.Params.Key(), len(p.Samples), p.Iters, p.Timer)
			}
		}
		if !strings.HasPrefix(p.ID, "collectives/") && p.Effective != "local" && p.Effective != "loopback" {
			t.Errorf("%s: effective path %q on one GPU, want local", p.ID, p.Effective)
		}
	}
	for _, id := range []string{"rma/put/block", "rma/put/warp", "rma/put/thread", "rma/get/block", "rma/get/warp", "rma/get/thread",
		"rma/p", "rma/g", "rma/st", "rma/ld", "rma/atomic/fetch_add", "rma/atomic/add", "rma/atomic/compare_swap",
		"limit/ce-copy", "limit/sm-copy", "limit/sm-copy-read",
		"latency/put/thread", "latency/get/block", "latency/p", "latency/g", "latency/pingpong/put-signal", "latency/pingpong/p",
		"latency/pingpong/atomic", "latency/pingpong/signal", "latency/put-signal", "latency/fence", "latency/quiet",
		"latency/atomic/fetch_add", "latency/atomic/compare_swap", "latency/launch",
		"collectives/allreduce/nvshmem-block", "collectives/allreduce/nvshmem-stream", "collectives/allreduce/multicta",
		"collectives/allreduce/nccl", "collectives/broadcast/nccl", "collectives/alltoall/nvshmem-block", "collectives/barrier/nvshmem-stream"} {
		if !ids[id] {
			t.Errorf("%s was not run", id)
		}
	}
}

func TestOnePE(t *testing.T) {
	check(t, runAll(t, "1", "--blocking"), 1)
}

func TestTwoPEsOnOneGPU(t *testing.T) {
	check(t, runAll(t, "2", "--blocking", "--bidir"), 2)
}

// TestOnePEGraph runs the collectives with their timed iterations captured
// in a CUDA graph, as reproduce does.
func TestOnePEGraph(t *testing.T) {
	out := filepath.Join(t.TempDir(), "graph.jsonl")
	cmd := exec.Command(bin(t), "run", "--shim", shim(t), "--sizes", "4,64K,4M", "--samples", "3", "--timeout", "30s", "--graph", "--out", out, "collectives/allreduce")
	cmd.Env = append(os.Environ(), "NVSHMEM_DISABLE_NVLS=1", "NCCL_NVLS_ENABLE=0", "TORCH_SYMM_MEM_DISABLE_MULTICAST=1")
	b, err := cmd.CombinedOutput()
	t.Logf("%s", b)
	if err != nil {
		t.Fatal(err)
	}
	f, err := results.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range f.Points {
		if p.Status == results.StatusOK && (!p.Verify.Checked || !p.Verify.OK || p.Params.Mode != "graph") {
			t.Errorf("%s %s: verify %+v", p.ID, p.Params.Key(), p.Verify)
		}
		if p.Status != results.StatusOK && p.Status != results.StatusWaived {
			t.Errorf("%s %s: %s %s", p.ID, p.Params.Key(), p.Status, p.Reason)
		}
	}
}
