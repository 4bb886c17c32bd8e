//go:build gpu

// Package gputest runs nvshbench on the GPUs of this machine: every
// operation with 1 PE, with 2 PEs on one GPU, and with one PE on each of two
// GPUs where two are visible, each verified, each run under a hard
// deadline so that a hang fails the test instead of stalling it. make
// gpu-test builds and runs it.
package gputest

import (
	"context"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nvshbench/nvshbench/cuda"
	"github.com/nvshbench/nvshbench/harness"
	"github.com/nvshbench/nvshbench/record"
	persmrec "github.com/nvshbench/nvshbench/record/persm"
	_ "github.com/nvshbench/nvshbench/suites/collectives"
	_ "github.com/nvshbench/nvshbench/suites/host"
	_ "github.com/nvshbench/nvshbench/suites/latency"
	_ "github.com/nvshbench/nvshbench/suites/moe"
	_ "github.com/nvshbench/nvshbench/suites/persm"
	_ "github.com/nvshbench/nvshbench/suites/rma"
)

// bin is the nvshbench binary under test ($NVSHBENCH_BIN).
func bin(t *testing.T) string {
	b := os.Getenv("NVSHBENCH_BIN")
	if b == "" {
		t.Skip("SKIPPED: set NVSHBENCH_BIN to the nvshbench binary (make gpu-test does)")
	}
	return b
}

// shim finds or builds the shim and counts the GPUs; no GPU or toolchain
// skips the test loudly.
func shim(t *testing.T) (string, int) {
	p := os.Getenv("NVSHBENCH_SHIM")
	tc, terr := cuda.Discover()
	if p == "" {
		if terr != nil {
			t.Skipf("SKIPPED: no CUDA toolchain: %v", terr)
		}
		var err error
		if p, err = tc.EnsureShim(os.Stderr); err != nil {
			t.Fatalf("building the shim: %v", err)
		}
	}
	if err := cuda.Preload(tc); err != nil {
		t.Logf("preloading NVSHMEM and NCCL: %v", err)
	}
	lib, err := cuda.Load(p)
	if err != nil {
		t.Skipf("SKIPPED: shim does not load: %v", err)
	}
	n, err := lib.DeviceCount()
	if err != nil || n == 0 {
		t.Skipf("SKIPPED: no GPU (%v)", err)
	}
	return p, n
}

// nvshbench runs the binary under a hard deadline (the controller is killed
// at the deadline; its workers die with it) and reads the results file.
func nvshbench(t *testing.T, deadline time.Duration, args ...string) *record.File {
	t.Helper()
	return nvshbenchExit(t, deadline, 0, args...)
}

// nvshbenchExit is nvshbench for a run that must exit with code want (1:
// some point failed, as every verified point of a corrupted run does).
func nvshbenchExit(t *testing.T, deadline time.Duration, want int, args ...string) *record.File {
	t.Helper()
	out := filepath.Join(t.TempDir(), "gpu.jsonl")
	if dir := os.Getenv("NVSHBENCH_GPUTEST_KEEP"); dir != "" {
		// the results files of a GPU session, to read or commit afterwards
		out = filepath.Join(dir, strings.NewReplacer("/", "-", " ", "_").Replace(t.Name())+".jsonl")
	}
	ctx, cancel := context.WithTimeout(context.Background(), deadline)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin(t), append(args, "--out", out)...)
	cmd.Env = append(os.Environ(), "NVSHMEM_DISABLE_NVLS=1", "NCCL_NVLS_ENABLE=0", "TORCH_SYMM_MEM_DISABLE_MULTICAST=1")
	b, err := cmd.CombinedOutput()
	t.Logf("%s", b)
	if ctx.Err() != nil {
		t.Fatalf("not finished within %s: killed", deadline)
	}
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("run: %v", err)
	}
	if code != want {
		t.Fatalf("run: exit code %d, want %d", code, want)
	}
	f, err := record.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func runAll(t *testing.T, gpus, pesPerGPU string, sizes string, extra ...string) *record.File {
	p, n := shim(t)
	if gpus == "2" && n < 2 {
		t.Skipf("SKIPPED: %d GPU visible, this test needs 2", n)
	}
	args := append([]string{"run", "--shim", p, "--pes-per-gpu", pesPerGPU, "--gpus", gpus, "--sizes", sizes,
		"--samples", "3", "--warmup", "1", "--timeout", "30s"}, extra...)
	args = append(args, "--moe-tokens", "64,512", "--moe-dtype", "bf16,fp8")
	return nvshbench(t, 6*time.Minute, append(args, allSuites...)...)
}

// allSuites are what runAll selects: every suite but bytes per SM (persm,
// TestPerSM: its budgets multiply its points).
var allSuites = []string{"rma", "limit", "latency", "collectives", "moe", "host"}

// check asserts every point ran verified or was waived for a reason this
// setup explains, and that every operation of the selected suites (default
// allSuites) was run.
func check(t *testing.T, f *record.File, wantPEs, gpus int, suites ...string) {
	if len(suites) == 0 {
		suites = allSuites
	}
	ids := checkPoints(t, f, wantPEs, gpus)
	// Every registered benchmark ran or was waived: a new one is covered
	// here without being listed.
	sizes := runSizes(f)
	for _, b := range harness.All() {
		suite, _, _ := strings.Cut(b.ID, "/")
		if slices.Contains(suites, suite) && !ids[b.ID] && hasPointsAt(b, sizes) {
			t.Errorf("%s was not run", b.ID)
		}
	}
}

// checkRows is check of a run of the rows named (each must have run or
// been waived) instead of whole suites.
func checkRows(t *testing.T, f *record.File, wantPEs, gpus int, rows ...string) {
	ids := checkPoints(t, f, wantPEs, gpus)
	for _, id := range rows {
		if !ids[id] {
			t.Errorf("%s was not run", id)
		}
	}
}

// checkPoints holds every point of f to what check asks of each, and
// returns the benchmarks that have points.
func checkPoints(t *testing.T, f *record.File, wantPEs, gpus int) map[string]bool {
	if f.Header.PEs != wantPEs || len(f.Header.GPUs) != gpus || f.Header.NVSHMEM == "" {
		t.Errorf("header: pes %d gpus %d nvshmem %q", f.Header.PEs, len(f.Header.GPUs), f.Header.NVSHMEM)
	}
	sharedGPU := wantPEs > gpus
	ops, err := benchmarkOps()
	if err != nil {
		t.Fatal(err)
	}
	ids := map[string]bool{}
	for _, p := range f.Points {
		ids[p.ID] = true
		if p.Status == record.StatusWaived {
			ok := strings.Contains(p.Reason, "multiple of") || strings.Contains(p.Reason, "multicast disabled") ||
				(sharedGPU && (strings.Contains(p.Reason, "on one GPU") || strings.Contains(p.Reason, "one PE per GPU"))) ||
				(wantPEs == 1 && strings.Contains(p.Reason, "2 PEs")) || strings.Contains(p.Reason, "captured") ||
				strings.Contains(p.Reason, "GIN resources") || // no GIN-capable network: NCCL's refusal, measured
				strings.Contains(p.Reason, "needs NVSHMEM >=") || // a row of a newer NVSHMEM than the shim was built against
				strings.Contains(p.Reason, "NVSHMEM_CFT_HANDLES_SUPPORT") || // the counted signal: no kernel on any build (newer.cuh)
				strings.Contains(p.Reason, "needs NCCL >=") // a row of a newer NCCL (the nccl-ce collectives: 2.31's per-collective config)
			if !ok {
				t.Errorf("%s %d: unexpectedly waived: %s", p.ID, p.Params.Size, p.Reason)
			}
			continue
		}
		// Every ok point was verified, or says why it cannot be.
		if p.Status != record.StatusOK || !((p.Verify.Checked && p.Verify.OK) || p.Verify.Unverifiable != "") {
			t.Errorf("%s %s: %s %s verify=%+v", p.ID, p.Params.Key(), p.Status, p.Reason, p.Verify)
		}
		// No round trip below its in-run floor, no bandwidth above its link.
		for _, fl := range []string{record.FlagBelowFloor, record.FlagAboveLink} {
			if p.Has(fl) {
				t.Errorf("%s %s: %s (median %v, floor %+v, ceiling %+v)", p.ID, p.Params.Key(), fl, p.Metrics, p.Floor, p.Ceiling)
			}
		}
		if p.Has(record.FlagTimersDisagree) {
			t.Logf("NOTE %s %s: timers disagree: events %v, in-kernel %+v", p.ID, p.Params.Key(), p.Metrics[record.MetricLatency], p.KernelTimer)
		}
		if op := roundTrip(p.ID); op && p.Status == record.StatusOK && p.Floor == nil {
			t.Errorf("%s %s: a round trip without its in-run floor", p.ID, p.Params.Key())
		}
		// What moved is counted, as its entry's traits say (countsBytes).
		if op, ok := ops[p.ID]; !ok {
			t.Errorf("%s: no entry of the shim's table", p.ID)
		} else if countsBytes(op) && p.Status == record.StatusOK && p.Bytes <= 0 {
			t.Errorf("%s %s: no bytes counted (%s: %v)", p.ID, p.Params.Key(), op.Name, op.Traits)
		}
		if p.Status == record.StatusOK {
			// Its GPU's SM clock and power, read through NVML while it ran:
			// within the GPU's range (its maximum clock, the header's).
			if c, g := p.Clock, f.Header.GPUOfPE(0); c == nil || c.N < 1 || c.SMMedianHz < 100e6 || g != nil && g.ClockKHz > 0 && c.SMMedianHz > 1.05e3*float64(g.ClockKHz) {
				t.Errorf("%s %s: clock %+v (the GPU's maximum %+v)", p.ID, p.Params.Key(), c, g)
			}
			// The one timer: events, one sample per timed launch; the latency
			// kernels' in-kernel times beside them (at least ten iterations).
			if p.Timer != "events" || len(p.Samples) != 3 {
				t.Errorf("%s %s: %d samples, timer %s", p.ID, p.Params.Key(), len(p.Samples), p.Timer)
			}
			if strings.HasPrefix(p.ID, "latency/") && p.ID != "latency/launch" && !strings.HasPrefix(p.ID, "latency/stream/") && !strings.HasPrefix(p.ID, "latency/nccl/") && (p.KernelTimer == nil || p.KernelTimer.N < 30) {
				t.Errorf("%s %s: in-kernel timer %+v", p.ID, p.Params.Key(), p.KernelTimer)
			}
			// Every kernel of ours stamps (a fused loop its launch, a launch
			// of one operation its operation): where its grid is surely
			// co-resident (no more CTAs than SMs, at most 512 threads) the
			// point carries the in-kernel timer beside the events.
			if stamped(p.ID) && p.Params.CTAs <= sms(f) && p.Params.Threads <= 512 && (p.KernelTimer == nil || p.KernelTimer.N < 3) {
				t.Errorf("%s %s (%d x %d): no in-kernel timer: %+v", p.ID, p.Params.Key(), p.Params.CTAs, p.Params.Threads, p.KernelTimer)
			}
		}
		want := "local"
		if gpus > 1 {
			want = "p2p"
		}
		if !strings.HasPrefix(p.ID, "collectives/") && p.ID != "limit/chase-local" && p.Effective != want && !(wantPEs == 1 && p.Effective == "loopback") {
			t.Errorf("%s: effective path %q, want %s", p.ID, p.Effective, want)
		}
	}
	return ids
}

func TestOnePE(t *testing.T) {
	f := runAll(t, "1", "1", "8,256,1000,4096,4097,1M", "--blocking", "--dtypes", "float,bf16,half")
	check(t, f, 1, 1)
	floors(t, f)
}

func TestTwoPEsOnOneGPU(t *testing.T) {
	check(t, runAll(t, "1", "2", "8,1000,4096,4097,1M", "--blocking", "--bidir", "--dtypes", "float,bf16,half"), 2, 1)
}

// TestCorruptedOutputsFail: every check can fail. Every benchmark runs once
// with --corrupt-checks (one element of what its check reads damaged after
// the timed launches, on the PE where the result lands), on 1 PE and on 2
// PEs of one GPU: every point that ran must fail verification, and none
// may pass (a check that cannot see a wrong element is no check); only an
// operation that leaves no output may say why it is unverifiable.
func TestCorruptedOutputsFail(t *testing.T) {
	for _, pes := range []string{"1", "2"} {
		t.Run(pes+"pe", func(t *testing.T) {
			p, _ := shim(t)
			f := nvshbenchExit(t, 6*time.Minute, 1, "run", "--shim", p, "--pes-per-gpu", pes, "--sizes", "1K", "--samples", "1",
				"--warmup", "0", "--timeout", "30s", "--corrupt-checks", "--moe-tokens", "64", "--sm-budgets", "2",
				"rma", "limit", "latency", "collectives", "moe", "host", "persm")
			ran, caught := 0, 0
			ids := map[string]bool{}
			unverifiable := map[string]bool{} // registered so: an operation that leaves no output (T_NO_OUTPUT)
			for _, b := range harness.All() {
				unverifiable[b.ID] = b.Unverifiable != ""
			}
			for _, pt := range f.Points {
				ids[pt.ID] = true
				switch {
				case pt.Status == record.StatusWaived:
				case pt.Verify.Unverifiable != "" && unverifiable[pt.ID]:
					t.Logf("%s: unverifiable: %s", pt.ID, pt.Verify.Unverifiable)
				case pt.Status == record.StatusFailedVerification && pt.Verify.Errors > 0:
					ran++
					caught++
				default:
					ran++
					t.Errorf("%s %s: a damaged output was not caught: %s %s verify=%+v", pt.ID, pt.Params.Key(), pt.Status, pt.Reason, pt.Verify)
				}
			}
			sizes := runSizes(f)
			for _, b := range harness.All() {
				if !ids[b.ID] && hasPointsAt(b, sizes) {
					t.Errorf("%s was not run", b.ID)
				}
			}
			t.Logf("%d of %d points that ran caught their damaged output", caught, ran)
		})
	}
}

// stamped: a benchmark whose kernels are ours and stamp %globaltimer every
// iteration (the copy engine and the host APIs cannot).
func stamped(id string) bool {
	last := id[strings.LastIndex(id, "/")+1:]
	switch {
	case strings.HasPrefix(id, "rma/nccl-gin/"), strings.HasPrefix(id, "rma/nccl/"), strings.HasPrefix(id, "rma/host/"):
		return false // NCCL's kernels (GIN's, waived without a GIN network; send/recv), the copy engine
	case strings.HasPrefix(id, "rma/"), id == "limit/sm-copy", id == "limit/sm-copy-read":
		return true
	case strings.HasPrefix(id, "persm/"):
		// A compute kernel is timed in its kernel; a transfer, where its
		// mechanism runs on SMs (not the copy engine's, alone or beside a
		// compute kernel in the background).
		r, _ := persmrec.ParseID(id)
		m, _ := persmrec.LookupMechanism(r.Mechanism)
		return r.TimesCompute || m.SMs
	case strings.HasPrefix(id, "collectives/"):
		return strings.HasPrefix(last, "nvshmem-") && last != "nvshmem-stream" || strings.HasPrefix(last, "multicta") || strings.HasPrefix(last, "nccl-lsa")
	case strings.HasPrefix(id, "moe/"):
		return last == "nvshmem" || last == "nccl-lsa"
	}
	return false
}

// sms is the smallest SM count of the run's GPUs.
func sms(f *record.File) int {
	n := 0
	for _, g := range f.Header.GPUs {
		if n == 0 || g.SMs < n {
			n = g.SMs
		}
	}
	return n
}

// roundTrip: a latency row that is a round trip (compared with its floor).
func roundTrip(id string) bool {
	return strings.HasPrefix(id, "latency/") && !strings.HasPrefix(id, "latency/issue/") && id != "latency/launch"
}

// TestTwoGPUs: one PE on each of two GPUs, every operation over NVLink/P2P,
// ping-pong between the GPUs and every collective, verified; every round
// trip at or above the in-run chase through the peer's memory (check).
func TestTwoGPUs(t *testing.T) {
	f := runAll(t, "2", "1", "8,4097,1M", "--blocking", "--bidir", "--dtypes", "float,bf16")
	check(t, f, 2, 2)
	floors(t, f)
}

// floors logs the run's floors and checks their order: a chain served by
// memory is slower than one served by the cache, on each path.
func floors(t *testing.T, f *record.File) {
	got := map[string]float64{}
	for _, p := range f.Points {
		if strings.HasPrefix(p.ID, "limit/chase-") && p.Status == record.StatusOK {
			got[p.ID+" "+p.Params.Extra["served"]] = p.Metrics[record.MetricLatency].Median
		}
	}
	t.Logf("floors: %v", got)
	for _, id := range []string{"limit/chase-local", "limit/chase-peer"} {
		if m, c := got[id+" memory"], got[id+" cache"]; m == 0 || c == 0 || m <= c {
			t.Errorf("%s: memory-served %.3g s, cache-served %.3g s", id, m, c)
		}
	}
}

// TestGraphs runs the collectives with their timed iterations captured in a
// CUDA graph, as reproduce does: on one PE, and on two GPUs where there are.
func TestGraphs(t *testing.T) {
	for _, gpus := range []string{"1", "2"} {
		t.Run(gpus+"gpu", func(t *testing.T) {
			p, n := shim(t)
			if gpus == "2" && n < 2 {
				t.Skipf("SKIPPED: %d GPU visible", n)
			}
			f := nvshbench(t, 3*time.Minute, "run", "--shim", p, "--gpus", gpus, "--sizes", "4,64K,4M", "--samples", "3", "--timeout", "30s",
				"--graph", "collectives/allreduce")
			ok := 0
			for _, p := range f.Points {
				if p.Status == record.StatusOK {
					ok++
					if !p.Verify.Checked || !p.Verify.OK || p.Params.Mode != "graph" {
						t.Errorf("%s %s: verify %+v", p.ID, p.Params.Key(), p.Verify)
					}
				}
				if p.Status != record.StatusOK && p.Status != record.StatusWaived {
					t.Errorf("%s %s: %s %s", p.ID, p.Params.Key(), p.Status, p.Reason)
				}
			}
			if ok == 0 {
				t.Error("no point ran")
			}
		})
	}
}

// runSizes are the run's --sizes (the heap's growth rows run from 2 MiB: none
// at the tests' smaller sizes; TestHeap runs them), read from rows that take
// --sizes as given, one of which every run here has (MoE's and the limits'
// sizes are their own).
func runSizes(f *record.File) []int64 {
	var sizes []int64
	for _, p := range f.Points {
		if (p.ID == "rma/put/block" || p.ID == "host/malloc") && !slices.Contains(sizes, p.Params.Size) {
			sizes = append(sizes, p.Params.Size)
		}
	}
	return sizes
}

// hasPointsAt says whether b has points at sizes.
func hasPointsAt(b *harness.Benchmark, sizes []int64) bool {
	c := harness.DefaultConfig()
	c.Sizes = sizes
	return len(b.Points(&c)) > 0
}

// TestHeap: the host suite (heap calls, its growth beside a reuse, team
// splits) at sizes the growth rows take, on 1 PE and 2 PEs of one GPU.
func TestHeap(t *testing.T) {
	for _, pes := range []string{"1", "2"} {
		t.Run(pes+"pe", func(t *testing.T) {
			p, _ := shim(t)
			f := nvshbench(t, 3*time.Minute, "run", "--shim", p, "--pes-per-gpu", pes, "--sizes", "2M,4M", "--samples", "3", "--warmup", "1",
				"--timeout", "30s", "host")
			n := 1
			if pes == "2" {
				n = 2
			}
			check(t, f, n, 1, "host")
		})
	}
}

// TestForcedAlgorithms: NVSHMEM's own collective algorithms forced through
// its variables (--nvshmem-algos all), each in a worker group started with
// its variable: every forced point runs verified, or is waived for want of
// NVLink multicast (NVSHMEM_DISABLE_NVLS=1 on our machines); a worker
// without the variable would have waived it as "needs NVSHMEM_...".
func TestForcedAlgorithms(t *testing.T) {
	p, _ := shim(t)
	f := nvshbench(t, 6*time.Minute, "run", "--shim", p, "--sizes", "1K,1M", "--samples", "3", "--warmup", "1", "--timeout", "30s",
		"--nvshmem-algos", "all", "collectives/*/nvshmem-block")
	forced := 0
	for _, pt := range f.Points {
		algo := pt.Params.Extra["nvshmem_algo"]
		if algo == "" {
			continue
		}
		forced++
		switch {
		case pt.Status == record.StatusWaived && strings.Contains(pt.Reason, "multicast"):
		case pt.Status == record.StatusOK && pt.Verify.Checked && pt.Verify.OK && pt.Effective == "nvshmem-"+algo:
		default:
			t.Errorf("%s %s: %s %s effective %q verify=%+v", pt.ID, pt.Params.Key(), pt.Status, pt.Reason, pt.Effective, pt.Verify)
		}
	}
	if forced == 0 {
		t.Error("no forced point")
	}
}

// TestPerSM: bytes per SM (issue 32) on 1 PE and on 2 PEs of one GPU:
// every mechanism over three budgets, alone and beside each compute kernel,
// and each compute kernel alone and beside each mechanism, verified (the
// compute results too); more SMs move more bytes at 64 MiB; every row
// beside another kernel has its alone row to be slowed against. The copy
// engine beside a compute kernel on every SM (a second stream, not fused)
// runs among them: its copies verified at the target and the background
// compute's results; the compute timed beside it in its own kernel; both
// logged against their rows alone at 64 MiB. Every ok point of the copy
// engine's rows (persm/ce, persm/ce/beside-*, persm/compute/*/beside-ce)
// carries the shim's answer to whether its copies need an SM (ce_sm_free,
// 0 or 1: which is the GPU's and driver's to say; logged).
func TestPerSM(t *testing.T) {
	for _, pes := range []string{"1", "2"} {
		t.Run(pes+"pe", func(t *testing.T) {
			p, _ := shim(t)
			f := nvshbench(t, 6*time.Minute, "run", "--shim", p, "--pes-per-gpu", pes, "--sizes", "1K,4097,1M,64M", "--sm-budgets", "1,4,all",
				"--samples", "3", "--warmup", "1", "--timeout", "60s", "persm")
			n := 1
			if pes == "2" {
				n = 2
			}
			check(t, f, n, 1, "persm")
			smFree := map[string][]string{}
			for _, pt := range f.Points {
				r, ok := persmrec.ParseID(pt.ID)
				if m, _ := persmrec.LookupMechanism(r.Mechanism); pt.Status != record.StatusOK || !ok || r.Mechanism == "" || m.SMs {
					continue
				}
				v, ok := pt.Values[persmrec.ValueCESMFree]
				if !ok || v != 0 && v != 1 {
					t.Errorf("%s %s: %s %v (present %v), want 0 or 1: the shim did not judge whether its copies need an SM (values %v, verify %+v)",
						pt.ID, pt.Params.Key(), persmrec.ValueCESMFree, v, ok, pt.Values, pt.Verify)
					continue
				}
				smFree[pt.ID] = append(smFree[pt.ID], fmt.Sprintf("%d B: %g", pt.Params.Size, v))
			}
			for _, id := range slices.Sorted(maps.Keys(smFree)) {
				t.Logf("%s %s (1: a copy ran while a kernel held every CTA slot, 0: it waited for one): %s", id, persmrec.ValueCESMFree, strings.Join(smFree[id], ", "))
			}
			if len(smFree) == 0 {
				t.Errorf("no ok point of the copy engine's rows")
			}
			bw := map[string]float64{}
			key := func(p record.Point) string {
				q := p.Params
				q.Extra = nil
				return p.ID + " " + q.Key()
			}
			for _, pt := range f.Points {
				if pt.Status != record.StatusOK {
					continue
				}
				if m, ok := pt.Metric(record.MetricBandwidth); ok {
					bw[key(pt)] = m.Median
				}
				if m, ok := pt.Metric(record.MetricLatency); ok && strings.HasPrefix(pt.ID, "persm/compute/") && pt.Params.Size == 0 {
					bw[key(pt)] = m.Median
				}
			}
			for _, pt := range f.Points {
				if pt.Status != record.StatusOK || pt.Params.Extra[persmrec.ExtraBeside] == "" {
					continue
				}
				alone := pt
				alone.ID = pt.ID[:strings.LastIndex(pt.ID, "/")]
				if strings.HasPrefix(pt.ID, "persm/compute/") {
					alone.Params.Size = 0
				}
				if _, ok := bw[key(alone)]; !ok {
					t.Errorf("%s %s: no alone row %s to compare with", pt.ID, pt.Params.Key(), key(alone))
				}
			}
			// The copy engine beside each compute kernel on every SM, and each
			// compute kernel on every SM beside it, against their rows alone.
			find := func(id string, size int64, beside string) *record.Point {
				for i := range f.Points {
					pt := &f.Points[i]
					if pt.ID == id && pt.Params.Size == size && pt.Params.SMBudget == 0 && pt.Params.Extra[persmrec.ExtraBeside] == beside {
						return pt
					}
				}
				return nil
			}
			for _, cc := range persmrec.Computes() {
				c := cc.Name
				ce, beside := find("persm/ce", 64<<20, ""), find("persm/ce/beside-"+c, 64<<20, c)
				comp, compBeside := find("persm/compute/"+c, 0, ""), find("persm/compute/"+c+"/beside-ce", 64<<20, "ce")
				if ce == nil || beside == nil || comp == nil || compBeside == nil {
					t.Errorf("beside the copy engine, %s: a row is missing (ce %v, ce beside %v, %s alone on every SM %v, beside ce %v)", c, ce != nil, beside != nil, c, comp != nil, compBeside != nil)
					continue
				}
				for _, pt := range []*record.Point{beside, compBeside} {
					if pt.Status != record.StatusOK || !pt.Verify.Checked || !pt.Verify.OK {
						t.Errorf("%s %s: %s %s verify=%+v", pt.ID, pt.Params.Key(), pt.Status, pt.Reason, pt.Verify)
					}
				}
				if compBeside.KernelTimer == nil {
					t.Errorf("%s beside the copy engine: no in-kernel timer (its kernel is the alone row's)", c)
				}
				a, _ := ce.Metric(record.MetricBandwidth)
				b, _ := beside.Metric(record.MetricBandwidth)
				ta, _ := comp.Metric(record.MetricLatency)
				tb, _ := compBeside.Metric(record.MetricLatency)
				t.Logf("copy engine at 64 MiB: %.1f GB/s alone, %.1f beside %s on every SM; %s on every SM: %.3f us an iteration alone, %.3f beside the copy engine (busy %.1f %% of its windows at the least, moving %.1f GB/s)",
					a.Median/1e9, b.Median/1e9, c, c, ta.Median*1e6, tb.Median*1e6, 100*compBeside.Values[persmrec.ValueCEBusy], compBeside.Values[persmrec.ValueCERate]/1e9)
				// Its ~20 ms launches are judged: the shim fails a launch where
				// the copy engine idled over a tenth of it.
				if busy, ok := compBeside.Values[persmrec.ValueCEBusy]; !ok || busy < 0.9 || compBeside.Values[persmrec.ValueCERate] <= 0 {
					t.Errorf("%s beside the copy engine: values %v, want the copy engine's busy share (at least 0.9) and rate", c, compBeside.Values)
				}
			}
			for _, mm := range persmrec.Mechanisms() {
				m := mm.Name
				if !mm.SMs || mm.Dst == "lsa" { // no SM budget; NCCL's windows (waived on two PEs of one GPU)
					continue
				}
				one, all, most := 0.0, 0.0, 0
				for _, pt := range f.Points {
					bwm, ok := pt.Metric(record.MetricBandwidth)
					if pt.ID != "persm/"+m || pt.Params.Size != 64<<20 || !ok {
						continue
					}
					if pt.Params.SMBudget == 1 {
						one = bwm.Median
					}
					if pt.Params.SMBudget > most {
						most, all = pt.Params.SMBudget, bwm.Median
					}
				}
				t.Logf("%s at 64 MiB: %.1f GB/s on 1 SM, %.1f GB/s on %d SMs", m, one/1e9, all/1e9, most)
				if one <= 0 || all <= one {
					t.Errorf("%s at 64 MiB: %.3g B/s on 1 SM, %.3g on %d SMs", m, one, all, most)
				}
			}
		})
	}
}

// nvshmemAtLeast: the NVSHMEM of the run's header ("3.8.0") is major.minor
// or later.
func nvshmemAtLeast(t *testing.T, f *record.File, major, minor int) bool {
	var v [3]int
	if n, err := fmt.Sscanf(f.Header.NVSHMEM, "%d.%d.%d", &v[0], &v[1], &v[2]); err != nil || n != 3 {
		t.Fatalf("the header's NVSHMEM version %q: %v", f.Header.NVSHMEM, err)
	}
	return v[0] > major || v[0] == major && v[1] >= minor
}

// TestNVSHMEM38Rows: the rows only NVSHMEM 3.8 has. Where the shim was
// built against 3.8 or later, an RMA region's burst and the empty region
// run, verified (the messages at their slots and every region started and
// stopped, none where the burst runs without one; the count of empty
// regions); where older, every point is waived "needs NVSHMEM >= 3.8" (the
// burst without a region is the region kernel, its calls skipped). The counted signal is waived on both (no NVSHMEM we build against
// is built with NVSHMEM_CFT_HANDLES_SUPPORT). 1 PE and 2 PEs on one GPU:
// the peer is reached by load/store, where the region's hint changes
// nothing (its puts are stores): the log shows the burst's rate with and
// without the region (expected within noise of each other) and an empty
// region's cost.
// builtAgainst reads the NVSHMEM a shim's headers are of from its "needs
// NVSHMEM >= x.y" waivers.
var builtAgainst = regexp.MustCompile(`built against NVSHMEM (\d+)\.(\d+)`)

func TestNVSHMEM38Rows(t *testing.T) {
	for _, pes := range []string{"1", "2"} {
		t.Run(pes+"pe", func(t *testing.T) {
			p, _ := shim(t)
			f := nvshbench(t, 4*time.Minute, "run", "--shim", p, "--pes-per-gpu", pes, "--sizes", "4K", "--samples", "3", "--warmup", "1",
				"--timeout", "30s", "rma/rate/put-nbi-region/block", "latency/issue/region", "rma/put-signal/counted")
			// The shim's headers decide (its waivers name them: "built against
			// NVSHMEM x.y"), not the header's NVSHMEM, which is the host
			// library loaded: a shim of 3.4.5's headers over 3.8's library
			// waives the region rows all the same.
			v38 := true
			for _, pt := range f.Points {
				if m := builtAgainst.FindStringSubmatch(pt.Reason); m != nil && strings.Contains(pt.Reason, "needs NVSHMEM >= 3.8 (") {
					major, _ := strconv.Atoi(m[1])
					minor, _ := strconv.Atoi(m[2])
					v38 = major > 3 || major == 3 && minor >= 8
				}
			}
			if v38 != nvshmemAtLeast(t, f, 3, 8) {
				t.Logf("the shim's headers and the NVSHMEM library loaded (%s) differ about 3.8: the headers decide", f.Header.NVSHMEM)
			}
			seen := map[string]bool{}
			for _, pt := range f.Points {
				if strings.HasPrefix(pt.ID, "limit/") {
					continue // the copy references of the counted put's bandwidth
				}
				what := pt.ID
				if r := pt.Params.Extra["region"]; r != "" {
					what += " region=" + r
				}
				seen[what] = true
				ran := pt.Status == record.StatusOK && pt.Verify.Checked && pt.Verify.OK
				switch {
				case pt.ID == "rma/put-signal/counted":
					if pt.Status != record.StatusWaived || !strings.Contains(pt.Reason, "NVSHMEM_CFT_HANDLES_SUPPORT") {
						t.Errorf("%s %s: %s %q, want waived for NVSHMEM_CFT_HANDLES_SUPPORT", what, pt.Params.Key(), pt.Status, pt.Reason)
					}
				case v38:
					if !ran {
						t.Errorf("%s (NVSHMEM %s): %s %q verify=%+v, want run and verified", what, f.Header.NVSHMEM, pt.Status, pt.Reason, pt.Verify)
					}
				default:
					if pt.Status != record.StatusWaived || !strings.Contains(pt.Reason, "needs NVSHMEM >= 3.8") {
						t.Errorf("%s (NVSHMEM %s): %s %q, want waived: needs NVSHMEM >= 3.8", what, f.Header.NVSHMEM, pt.Status, pt.Reason)
					}
				}
				if pt.Status == record.StatusOK {
					for _, m := range []string{record.MetricRate, record.MetricLatency} {
						if v, ok := pt.Metric(m); ok {
							t.Logf("NVSHMEM %s, %s PE(s): %s %s: %s median %.4g", f.Header.NVSHMEM, pes, what, pt.Params.Key(), m, v.Median)
						}
					}
				}
			}
			for _, w := range []string{"rma/rate/put-nbi-region/block region=none", "rma/rate/put-nbi-region/block region=batch_rma",
				"latency/issue/region", "rma/put-signal/counted"} {
				if !seen[w] {
					t.Errorf("%s: no point", w)
				}
			}
		})
	}
}
