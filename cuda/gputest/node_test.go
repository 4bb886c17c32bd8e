//go:build gpu

package gputest

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/nvshbench/nvshbench/record"
)

// severalPEsRows are what TestSeveralPEsOnOneGPU runs of each point-to-point
// family (a shape of each: bulk, scalar, load/store, strided, atomics,
// signals, issue rates, round trips, ping-pongs, the floors and copy
// references), and severalPEsMoE its MoE rows: every 3+-PE path of the shim
// in a few minutes of one GPU (the whole of rma, latency and limit is over
// 400 points a PE count, time-sliced).
var (
	severalPEsRows = []string{"rma/put/block", "rma/get/warp", "rma/p", "rma/g", "rma/ld", "rma/st", "rma/iput/block", "rma/atomic/fetch_add",
		"rma/atomic/compare_swap", "rma/put-signal/block", "rma/rate/put-nbi/block", "limit/chase-peer", "limit/sm-copy", "latency/put/block",
		"latency/get/thread", "latency/p", "latency/g", "latency/atomic/fetch_add", "latency/pingpong/signal", "latency/pingpong/put-signal",
		"latency/quiet", "latency/put-signal"}
	severalPEsMoE = []string{"moe/dispatch/nvshmem", "moe/combine/nvshmem"}
)

// TestSeveralPEsOnOneGPU: the RMA, latency and MoE rows with 4 and 8 PEs on
// one GPU (functional: time-sliced PEs say nothing of links, NVSHMEM's team
// collectives abort without MPS and NCCL refuses two ranks on one GPU, so
// those are waived): every point verified or waived for a reason this setup
// explains; each point-to-point row measures PE 0 → PE 1, two PEs of one GPU
// recorded as such; every MoE step keeps every PE's time. The 3+-PE paths
// of the shim: bidirectional rows leave PEs 2.. idle, and they meet every
// launch's start gate (an on-stream barrier of every PE); with --pair 2:3
// the initiator is not PE 0 (args.initiator), PEs 0 and 1 idle.
func TestSeveralPEsOnOneGPU(t *testing.T) {
	for _, pes := range []int{4, 8} {
		t.Run(fmt.Sprintf("%dpe", pes), func(t *testing.T) {
			p, _ := shim(t)
			f := nvshbench(t, 8*time.Minute, append([]string{"run", "--shim", p, "--pes-per-gpu", strconv.Itoa(pes), "--sizes", "8,1M", "--samples", "3",
				"--warmup", "1", "--timeout", "120s", "--bidir", "--moe-tokens", "64,512"}, append(severalPEsRows, severalPEsMoE...)...)...)
			checkRows(t, f, pes, 1, append(severalPEsRows, severalPEsMoE...)...)
			if h := f.Header.Pair; h == nil || h.From.PE != 0 || h.To.PE != 1 || h.Kind != record.PairSameGPU {
				t.Errorf("header pair %v, want PE 0 → PE 1 on one GPU", h)
			}
			bidir, moe := 0, 0
			for _, pt := range f.Points {
				if pt.Status != record.StatusOK {
					continue
				}
				switch {
				case strings.HasPrefix(pt.ID, "moe/"):
					moe++
					if len(pt.PETimes) != pes || len(pt.RankFastest) != len(pt.Samples) {
						t.Errorf("%s %s: %d PEs' times of %d", pt.ID, pt.Params.Key(), len(pt.PETimes), pes)
					}
				case pt.Pair == nil || pt.Pair.From.PE != 0 || pt.Pair.To.PE != 1 || pt.Pair.Kind != record.PairSameGPU:
					if pt.ID != "limit/chase-local" && pt.ID != "latency/launch" && !strings.HasPrefix(pt.ID, "latency/stream/") {
						t.Errorf("%s %s: pair %v", pt.ID, pt.Params.Key(), pt.Pair)
					}
				case pt.Params.Dir == "bidir":
					bidir++ // PEs 2.. met every launch's gate; both ends timed
					if len(pt.PETimes) != 2 {
						t.Errorf("%s %s: bidirectional, %d PEs' times", pt.ID, pt.Params.Key(), len(pt.PETimes))
					}
				}
			}
			if bidir == 0 || moe == 0 {
				t.Errorf("%d bidirectional points and %d MoE points ran", bidir, moe)
			}
			g := nvshbench(t, 8*time.Minute, append([]string{"run", "--shim", p, "--pes-per-gpu", strconv.Itoa(pes), "--pair", "2:3", "--sizes", "1M",
				"--samples", "3", "--warmup", "1", "--timeout", "120s", "--bidir"}, severalPEsRows...)...)
			checkRows(t, g, pes, 1, severalPEsRows...)
			for _, pt := range g.Points {
				if pt.Status == record.StatusOK && pt.Pair != nil && (pt.Pair.From.PE != 2 || pt.Pair.To.PE != 3 || pt.Params.Pair != "2:3") {
					t.Errorf("--pair 2:3: %s %s measured %v", pt.ID, pt.Params.Key(), pt.Pair)
				}
			}
		})
	}
}

// TestAPEFailsMidPoint: of 4 PEs on one GPU, PE 2's worker is killed while
// the run measures: the point in progress is an error naming PE 2 and its
// GPU (the other PEs, blocked in NVSHMEM, are killed by the controller's
// watchdog, not left hanging), every point before it is kept, and new
// workers measure the points after it (the run exits 1: a point failed).
func TestAPEFailsMidPoint(t *testing.T) {
	p, _ := shim(t)
	out := filepath.Join(t.TempDir(), "fail.jsonl")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin(t), "run", "--shim", p, "--pes-per-gpu", "4", "--sizes", "4K,1M,16M,64M,256M", "--samples", "20",
		"--timeout", "60s", "--out", out, "rma/put/block", "rma/get/block", "latency/put/block")
	cmd.Env = append(os.Environ(), "NVSHMEM_DISABLE_NVLS=1", "NCCL_NVLS_ENABLE=0", "TORCH_SYMM_MEM_DISABLE_MULTICAST=1")
	var log bytes.Buffer
	cmd.Stdout, cmd.Stderr = &log, &log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Once a few points are written, kill PE 2's worker (a child of this
	// controller started with --rank 2).
	victim := 0
	for deadline := time.Now().Add(5 * time.Minute); victim == 0; time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatalf("no points written in 5 minutes:\n%s", log.String())
		}
		if f, err := record.ReadFile(out); err != nil || len(f.Points) < 3 {
			continue
		}
		victim = workerOf(cmd.Process.Pid, 2)
	}
	before := len(mustRead(t, out).Points)
	syscall.Kill(victim, syscall.SIGKILL)
	err := cmd.Wait()
	t.Logf("%s", log.String())
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 {
		t.Fatalf("run: %v, want exit 1 (a point failed)", err)
	}
	f := mustRead(t, out)
	failed := -1
	for i, pt := range f.Points {
		if pt.Status == record.StatusError {
			if failed >= 0 || !strings.Contains(pt.Reason, "the worker of PE 2 (GPU 0, ") {
				t.Errorf("%s %s: %s", pt.ID, pt.Params.Key(), pt.Reason)
			}
			failed = i
		} else if pt.Status != record.StatusOK {
			t.Errorf("%s %s: %s %s", pt.ID, pt.Params.Key(), pt.Status, pt.Reason)
		}
	}
	if failed < before || failed == len(f.Points)-1 {
		t.Errorf("the failed point is %d of %d (%d written before the kill): the points before it must be kept and the run go on", failed, len(f.Points), before)
	}
}

// workerOf is the pid of the worker of PE rank that process parent
// started (0: none yet).
func workerOf(parent, rank int) int {
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		cl, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		i := bytes.LastIndexByte(stat, ')')
		if i < 0 || !bytes.Contains(cl, []byte("\x00__worker\x00")) || !bytes.Contains(cl, []byte(fmt.Sprintf("\x00--rank\x00%d\x00", rank))) {
			continue
		}
		if f := strings.Fields(string(stat[i+1:])); len(f) > 1 && f[1] == strconv.Itoa(parent) {
			return pid
		}
	}
	return 0
}

func mustRead(t *testing.T, path string) *record.File {
	t.Helper()
	f, err := record.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return f
}
