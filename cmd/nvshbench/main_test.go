package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/spf13/cobra"

	"github.com/nvshbench/nvshbench/cuda"
	"github.com/nvshbench/nvshbench/harness"
	"github.com/nvshbench/nvshbench/internal/golden"
	"github.com/nvshbench/nvshbench/record"
)

// TestMain lets the test binary serve as the worker the launcher starts
// (os.Executable is the test binary during tests), as the CLI
// (NVSHBENCH_TEST_CLI=1) and as a command slow to stop (stubborn).
func TestMain(m *testing.M) {
	if (len(os.Args) > 1 && os.Args[1] == "__worker") || os.Getenv("NVSHBENCH_TEST_CLI") == "1" {
		os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
	}
	if os.Getenv("NVSHBENCH_TEST_STUBBORN") == "1" {
		os.Exit(stubborn())
	}
	code := m.Run()
	cluster.stop() // the private Slurm cluster, if a test started it
	os.Exit(code)
}

func nvshbench(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var o, e bytes.Buffer
	code = run(args, strings.NewReader(""), &o, &e)
	return o.String(), e.String(), code
}

func TestUsageErrorsExit2(t *testing.T) {
	for _, args := range [][]string{
		{"frobnicate"},
		{"report", "--nope"},
		{"report"},
		{"report", "--paper", "--format", "yaml"},
		{"report", "--paper", "x.jsonl"},
		{"report", "--summary", "--all", "--example"},
		{"plot", "--example"},
		{"plot", "--example", "--out", "d", "--format", "gif"},
		{"plot", "--example", "--out", "d", "--format", ""},
		{"compare", "one.jsonl"},
		{"compare", "--threshold", "abc", "a", "b"},
		{"compare", "--alpha", "2", "a", "b"},
		{"list", "rma/nope"},
		{"run", "--shim", "fake", "--sizes", "0"},
		{"run", "--shim", "fake", "--sizes", "8:4"},
		{"run", "--shim", "fake", "--threads", "100"},
		{"run", "--shim", "fake", "--path", "nvlink"},
		{"run", "--shim", "fake", "--pes-per-gpu", "0"},
		{"run", "--shim", "fake", "--gpus", "3"},
		{"run", "--shim", "fake", "rma/nope"},
		{"run", "--shim", "fake", "--iters", "5000"},
		{"run", "--shim", "fake", "--sizes", "100G"},
		{"version", "extra"},
		// issue 21: a gate that means what it says, flags never ignored
		{"compare", "--threshold", "5", "a", "b"},
		{"compare", "--alpha", "NaN", "a", "b"},
		{"compare", "--threshold", "NaN%", "a", "b"},
		{"run", "--shim", "fake", "--sizes", "3:1K", "rma/put/block"},
		{"run", "--shim", "fake", "--warmup", "1000000000", "rma/put/block"},
		{"run", "--shim", "fake", "--samples", "100000000", "rma/put/block"},
		{"run", "--shim", "fake", "--graph", "rma/put/block"},
		{"run", "--shim", "fake", "--dtypes", "bf16", "rma/put/block", "latency/g"},
		{"run", "--shim", "fake", "--bidir", "latency/g"},
		{"run", "--shim", "fake", "--sizes", "4K", "moe"},
		{"run", "--shim", "fake", "--label", "x\x1b[2Jy", "rma/put/block"},
		// issue 32: SM budgets checked like the other point flags
		{"run", "--shim", "fake", "--sm-budgets", "0", "persm/st"},
		{"run", "--shim", "fake", "--sm-budgets", "4,many", "persm/st"},
		{"run", "--shim", "fake", "--sm-budgets", "200", "persm/st"},
		{"run", "--shim", "fake", "--sm-budgets", "4", "rma/put/block"},
		{"doctor", "--shim", "/nonexistent.so"},
		{"model"},
		{"model", "--predict", "1", "--example"},
		{"model", "--nic-gbps", "NaN", "--example"},
		{"model", "--ring-efficiency", "2", "--example"},
		{"model", "--sizes", "3:1K", "--example"},
		{"model", "--format", "yaml", "--example"},
	} {
		_, stderr, code := nvshbench(t, args...)
		if code != exitUsage {
			t.Errorf("%v: exit %d, want %d (stderr %q)", args, code, exitUsage, stderr)
		}
		if strings.Count(strings.TrimSpace(stderr), "\n") != 0 || !strings.HasPrefix(stderr, "nvshbench: ") {
			t.Errorf("%v: stderr is not one line: %q", args, stderr)
		}
	}
}

// A flag or argument a command does not take points at that command's help,
// named as the user types it (the root's is 'nvshbench --help', not
// 'nvshbench nvshbench --help').
func TestUsageHintNamesTheCommand(t *testing.T) {
	for _, c := range []struct {
		args []string
		hint string
	}{
		{[]string{"--bogus"}, "(see 'nvshbench --help')"},
		{[]string{"run", "--bogus"}, "(see 'nvshbench run --help')"},
		{[]string{"version", "extra"}, "(see 'nvshbench version --help')"},
	} {
		_, stderr, code := nvshbench(t, c.args...)
		if code != exitUsage || !strings.Contains(stderr, c.hint) {
			t.Errorf("%v: exit %d, stderr %q; want %d and %s", c.args, code, stderr, exitUsage, c.hint)
		}
	}
}

func TestBadFilesExit1WithOneLine(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		os.WriteFile(p, []byte(body), 0o644)
		return p
	}
	cases := map[string]string{
		filepath.Join(dir, "missing.jsonl"):                                        "no such file",
		write("empty.jsonl", ""):                                                   "empty file",
		write("bad.jsonl", "{\"type\":\"header\",\"schema\":1}\n{oops}\n"):         "bad.jsonl:2: malformed JSON",
		write("new.jsonl", `{"type":"header","schema":7,"tool_version":"9"}`+"\n"): "schema version 7",
		write("csv.jsonl", "size,bw\n8,1\n"):                                       "malformed JSON",
	}
	for path, want := range cases {
		for _, cmd := range [][]string{{"report", path}, {"plot", "--out", dir, path}, {"compare", path, path}} {
			_, stderr, code := nvshbench(t, cmd...)
			if code != exitError || !strings.Contains(stderr, want) || strings.Count(strings.TrimSpace(stderr), "\n") != 0 {
				t.Errorf("%v: exit %d, stderr %q; want exit 1 and one line containing %q", cmd, code, stderr, want)
			}
		}
	}
}

func TestReportPaperGolden(t *testing.T) {
	out, _, code := nvshbench(t, "report", "--paper")
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	golden.Check(t, "report-paper.txt", []byte(out))
	for _, want := range []string{"313.2", "141.0", "172.0", "< 9.0", "264.0", "30.0", "180.0", "252.0"} {
		if !strings.Contains(out, want) {
			t.Errorf("paper tables lack %s", want)
		}
	}
}

func TestCompareExitCodes(t *testing.T) {
	root := repoRoot(t)
	base, cand := filepath.Join(root, "examples/baseline.jsonl"), filepath.Join(root, "examples/candidate.jsonl")
	out, stderr, code := nvshbench(t, "compare", base, cand)
	if code != exitRegression || !strings.Contains(out, "REGRESSION") || !strings.Contains(stderr, "setups differ") {
		t.Errorf("regression: exit %d\n%s\n%s", code, out, stderr)
	}
	// The fixtures hold one errored point (rma/g at 1 GiB): it fails the
	// gate even against itself, unless --allow-failed.
	if out, stderr, code := nvshbench(t, "compare", base, base); code != exitRegression || !strings.Contains(out, "FAILED") ||
		!strings.Contains(out, "worker timed out") || !strings.Contains(stderr, "1 point(s) failed or missing") {
		t.Errorf("a file with an errored point against itself: exit %d\n%s\n%s", code, out, stderr)
	}
	if _, _, code := nvshbench(t, "compare", "--allow-failed", base, base); code != 0 {
		t.Errorf("a file against itself, --allow-failed: exit %d", code)
	}
	if _, _, code := nvshbench(t, "compare", "--allow-failed", "--threshold", "50%", base, cand); code != 0 {
		t.Errorf("10%% slower under a 50%% threshold: exit %d", code)
	}
	// A point the base measured and the candidate lacks is MISSING and fails.
	lines, _ := os.ReadFile(cand)
	var kept []string
	for _, l := range strings.Split(strings.TrimSpace(string(lines)), "\n") {
		if !strings.Contains(l, `"id":"rma/put/block"`) {
			kept = append(kept, l)
		}
	}
	short := filepath.Join(t.TempDir(), "short.jsonl")
	os.WriteFile(short, []byte(strings.Join(kept, "\n")+"\n"), 0o644)
	if out, _, code := nvshbench(t, "compare", "--threshold", "50%", base, short); code != exitRegression || !strings.Contains(out, "MISSING") {
		t.Errorf("missing candidate points: exit %d\n%s", code, out)
	}
	// "Twice as slow" is a threshold; NaN is not.
	if _, _, code := nvshbench(t, "compare", "--allow-failed", "--threshold", "150%", base, cand); code != 0 {
		t.Errorf("--threshold 150%%: exit %d", code)
	}
	for _, bad := range []string{"NaN", "-5%", "Inf"} {
		if _, _, code := nvshbench(t, "compare", "--threshold", bad, base, cand); code != exitUsage {
			t.Errorf("--threshold %s: exit %d, want %d", bad, code, exitUsage)
		}
	}
}

func TestCompletion(t *testing.T) {
	out, _, code := nvshbench(t, "__complete", "report", "--format", "")
	if code != 0 || !strings.Contains(out, "markdown") || !strings.Contains(out, "csv") {
		t.Errorf("completion: %d %q", code, out)
	}
	out, _, code = nvshbench(t, "completion", "bash")
	if code != 0 || !strings.Contains(out, "bash completion") {
		t.Errorf("bash completion script: exit %d", code)
	}
}

func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// needsGPU are example commands that need a GPU or the CUDA toolchain; the
// GPU tests and the shim check cover them.
func needsGPU(line string) bool {
	if strings.Contains(line, "--shim fake") {
		return false
	}
	if strings.HasPrefix(line, "nvshbench check") && !strings.Contains(line, "--judge") {
		return true // a check measures
	}
	for _, p := range []string{"nvshbench doctor", "nvshbench build-shim", "nvshbench reproduce", "nvshbench run", "srun "} {
		if strings.HasPrefix(line, p) {
			return true
		}
	}
	return false
}

// TestHelpExamples runs every example of every command's help text.
func TestHelpExamples(t *testing.T) {
	root := repoRoot(t)
	dir := t.TempDir()
	if err := os.Symlink(filepath.Join(root, "examples"), filepath.Join(dir, "examples")); err != nil {
		t.Fatal(err)
	}
	wd, _ := os.Getwd()
	if err := os.Chdir(dir); err != nil {
		t.Fatal(err)
	}
	defer os.Chdir(wd)
	var cmds []*cobra.Command
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		cmds = append(cmds, c)
		for _, s := range c.Commands() {
			walk(s)
		}
	}
	walk(newRootCmd(nil, nil, nil))
	ran := 0
	for _, c := range cmds {
		for _, line := range strings.Split(c.Example, "\n") {
			line, _, _ = strings.Cut(line, " # ") // a comment after the command
			line = strings.TrimSpace(line)
			if !strings.HasPrefix(line, "nvshbench ") || needsGPU(line) {
				continue
			}
			args := strings.Fields(strings.TrimPrefix(line, "nvshbench "))
			for i, a := range args {
				args[i] = strings.Trim(a, "'")
			}
			_, stderr, code := nvshbench(t, args...)
			if code != 0 && !(c.Name() == "compare" && code == exitRegression) {
				t.Errorf("example %q: exit %d: %s", line, code, stderr)
			}
			ran++
		}
	}
	if ran < 10 {
		t.Errorf("only %d examples ran", ran)
	}
}

func TestRunWithFakeGPU(t *testing.T) {
	out := filepath.Join(t.TempDir(), "run.jsonl")
	_, stderr, code := nvshbench(t, "run", "--shim", "fake", "--sizes", "4K,1M", "--samples", "3", "--pes-per-gpu", "2", "--out", out, "rma/put/block", "rma/g")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	f, err := record.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if !f.Header.Synthetic || f.Header.PEs != 2 || len(f.Header.GPUs) != 1 {
		t.Errorf("header: synthetic=%v pes=%d gpus=%d", f.Header.Synthetic, f.Header.PEs, len(f.Header.GPUs))
	}
	ids := map[string]int{}
	for _, p := range f.Points {
		ids[p.ID]++
		if p.Status != record.StatusOK || !p.Verify.Checked || !p.Verify.OK || len(p.Samples) != 3 {
			t.Errorf("%s %d: status %s verify %+v samples %d", p.ID, p.Params.Size, p.Status, p.Verify, len(p.Samples))
		}
		if !strings.HasPrefix(p.ID, "limit/") && (p.Limit == nil || p.Limit.Value <= 0) {
			t.Errorf("%s: no in-run limit", p.ID)
		}
	}
	// The copy references sweep 12 full-GPU grids (the best is the reference).
	if ids["limit/sm-copy"] != 12 || ids["limit/sm-copy-read"] != 12 || ids["limit/ce-copy"] != 1 || ids["rma/put/block"] != 2 || ids["rma/g"] != 5 {
		t.Errorf("points per benchmark: %v", ids)
	}
	if !strings.Contains(stderr, "point(s) written") {
		t.Errorf("no summary line: %s", stderr)
	}
	// Running the same command again resumes: nothing new to measure.
	_, stderr, code = nvshbench(t, "run", "--shim", "fake", "--sizes", "4K,1M", "--samples", "3", "--pes-per-gpu", "2", "--out", out, "rma/put/block", "rma/g")
	if code != 0 || !strings.Contains(stderr, "0 point(s) written") {
		t.Errorf("resume: exit %d, %s", code, stderr)
	}
	// and the report renders it
	rep, _, code := nvshbench(t, "report", "--points", out)
	if code != 0 || !strings.Contains(rep, "SYNTHETIC") || !strings.Contains(rep, "rma/put/block") {
		t.Errorf("report of the run: exit %d\n%s", code, rep)
	}
}

func TestWatchdogKillsHungWorkersAndGoesOn(t *testing.T) {
	out := filepath.Join(t.TempDir(), "hang.jsonl")
	t.Setenv("NVSHBENCH_FAKE_HANG_SIZE", "4096")
	t.Setenv("NVSHBENCH_FAKE_CORRUPT_SIZE", "65536")
	_, stderr, code := nvshbench(t, "run", "--shim", "fake", "--sizes", "1K,4K,64K", "--samples", "2", "--timeout", "2s", "--pes-per-gpu", "2", "--out", out, "rma/put/block")
	if code != exitError || !strings.Contains(stderr, "2 point(s) failed (1 errors, 1 failed verification)") {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	f, err := record.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	got := map[int64]record.Status{}
	for _, p := range f.Points {
		if p.ID == "rma/put/block" {
			got[p.Params.Size] = p.Status
			if p.Params.Size == 4096 && !strings.Contains(p.Reason, "--timeout 2s") {
				t.Errorf("hung point reason %q", p.Reason)
			}
		}
	}
	want := map[int64]record.Status{1024: record.StatusOK, 4096: record.StatusError, 65536: record.StatusFailedVerification}
	for s, st := range want {
		if got[s] != st {
			t.Errorf("size %d: status %q, want %q", s, got[s], st)
		}
	}
	// A resumed run retries the errored point only, and still exits 1: the
	// file keeps the point that failed verification.
	t.Setenv("NVSHBENCH_FAKE_HANG_SIZE", "")
	_, stderr, code = nvshbench(t, "run", "--shim", "fake", "--sizes", "1K,4K,64K", "--samples", "2", "--timeout", "2s", "--pes-per-gpu", "2", "--out", out, "rma/put/block")
	if code != exitError || !strings.Contains(stderr, ": 1 point(s) written (1 ok") || !strings.Contains(stderr, "1 failed verification in an earlier run") {
		t.Errorf("resume after error: exit %d: %s", code, stderr)
	}
}

// workersOf lists the live worker processes whose environment holds tag
// (the controller's, which its workers inherit).
func workersOf(t *testing.T, tag string) []int {
	t.Helper()
	if _, err := os.Stat("/proc/self"); err != nil {
		t.Skip("no /proc")
	}
	var pids []int
	for _, pid := range tagged(tag) {
		if cl, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "cmdline")); err == nil && bytes.Contains(cl, []byte("__worker")) {
			pids = append(pids, pid)
		}
	}
	return pids
}

// A controller killed with SIGKILL (no chance to clean up) takes its
// workers with it: a worker left behind would keep its GPU and block the
// next run.
func TestNoWorkerOutlivesItsController(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("reads /proc")
	}
	out := filepath.Join(t.TempDir(), "orphans.jsonl")
	plan := fmt.Sprintf("NVSHBENCH_TEST_TAG=%d-%d", os.Getpid(), time.Now().UnixNano())
	cmd := exec.Command(os.Args[0], "run", "--shim", "fake", "--pes-per-gpu", "2", "--sizes", "4K", "--samples", "2",
		"--timeout", "60s", "--out", out, "rma/put/block")
	cmd.Env = append(os.Environ(), "NVSHBENCH_TEST_CLI=1", "NVSHBENCH_FAKE_HANG_SIZE=4096", plan)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	deadline := time.Now().Add(20 * time.Second)
	for len(workersOf(t, plan)) < 2 {
		if time.Now().After(deadline) {
			t.Fatalf("the workers did not start: %v", workersOf(t, plan))
		}
		time.Sleep(50 * time.Millisecond)
	}
	time.Sleep(300 * time.Millisecond) // both inside the hung point
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	deadline = time.Now().Add(5 * time.Second)
	for {
		left := workersOf(t, plan)
		if len(left) == 0 {
			break
		}
		if time.Now().After(deadline) {
			for _, pid := range left {
				syscall.Kill(pid, syscall.SIGKILL)
			}
			t.Fatalf("workers %v outlived their controller by 5 s", left)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestRemotePathWithFakeGPU: with --path ibgda on two fake nodes, RMA runs
// on the remote path and the copy limits (which need a load/store mapping)
// are waived with the reason.
func TestRemotePathWithFakeGPU(t *testing.T) {
	out := filepath.Join(t.TempDir(), "ib.jsonl")
	t.Setenv("NVSHBENCH_FAKE_NODES", "2")
	_, stderr, code := nvshbench(t, "run", "--shim", "fake", "--path", "ibgda", "--sizes", "1M", "--samples", "2", "--out", out, "rma/put/block")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	f, _ := record.ReadFile(out)
	for _, p := range f.Points {
		if p.ID == "rma/put/block" && (p.Status != record.StatusOK || p.Effective != "ibgda") {
			t.Errorf("fake remote path: %+v", p)
		}
		if strings.HasPrefix(p.ID, "limit/") && p.Status != record.StatusWaived {
			t.Errorf("limit over a remote path should be waived (no load/store mapping): %+v", p)
		}
	}
}

func TestNoGPUExitsClearly(t *testing.T) {
	t.Setenv("NVSHBENCH_SHIM", filepath.Join(t.TempDir(), "missing.so"))
	_, stderr, code := nvshbench(t, "reproduce", "--out", filepath.Join(t.TempDir(), "r"))
	if code != exitNoGPU || !strings.Contains(stderr, "report --paper") || !strings.Contains(stderr, "'nvshbench reproduce --quick --shim fake --out DIR'") {
		t.Errorf("reproduce without GPU: exit %d, %q", code, stderr)
	}
}

// asSlurmRank0 makes this process rank 0 of a two-task srun job on nodes
// nodes, with no bootstrap chosen by hand. A run under a launcher sets the
// variables --path asks for in this process's environment (NVSHMEM reads
// the C one): they are put back as they were when the test ends, or a
// later test's header records them (a header's env is the process's).
func asSlurmRank0(t *testing.T, nodes string) {
	t.Helper()
	for _, k := range []string{"NVSHMEM_DISABLE_P2P", "NVSHMEM_IB_ENABLE_IBGDA"} {
		if v, ok := os.LookupEnv(k); ok {
			t.Cleanup(func() { os.Setenv(k, v) })
		} else {
			t.Cleanup(func() { os.Unsetenv(k) })
		}
	}
	t.Setenv("NVSHMEM_BOOTSTRAP", "")
	t.Setenv("NVSHMEM_BOOTSTRAP_PMI", "")
	t.Setenv("SLURM_MPI_TYPE", "")
	t.Setenv("SLURM_PROCID", "0")
	t.Setenv("SLURM_NTASKS", "2")
	t.Setenv("SLURM_LOCALID", "0")
	t.Setenv("SLURM_NNODES", nodes)
}

func TestRunUnderALauncher(t *testing.T) {
	out := filepath.Join(t.TempDir(), "slurm.jsonl")
	asSlurmRank0(t, "2")
	t.Setenv("NVSHBENCH_FAKE_NODES", "2") // a fake node for each task: their pair crosses the network
	_, stderr, code := nvshbench(t, "run", "--shim", "fake", "--path", "proxy", "--sizes", "4K", "--samples", "2", "--out", out, "rma/put/block")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	f, err := record.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	// The header lists every rank's GPU and counts the nodes they ran on,
	// and says how NVSHMEM bootstrapped.
	if f.Header.PEs != 2 || f.Header.Nodes != 2 || len(f.Header.GPUs) != 2 || f.Header.GPUs[1].PE != 1 || f.Header.GPUs[1].Host != "fake-node1" ||
		f.Header.Env["NVSHMEM_BOOTSTRAP_PMI"] != "PMI-2" || !strings.Contains(strings.Join(f.Header.Notes, " "), "bootstrap PMI-2, chosen by nvshbench for slurm") {
		t.Errorf("header pes %d nodes %d gpus %+v env %v notes %q", f.Header.PEs, f.Header.Nodes, f.Header.GPUs, f.Header.Env, f.Header.Notes)
	}
	for _, p := range f.Points {
		if strings.HasPrefix(p.ID, "limit/") { // copies over load/store: none across nodes
			continue
		}
		if p.Status != record.StatusOK || !p.Verify.Checked || p.Params.PEs != 2 || p.Effective != "proxy" {
			t.Errorf("%s: %s verify %+v pes %d effective %s", p.ID, p.Status, p.Verify, p.Params.PEs, p.Effective)
		}
	}
	// Resuming is refused (exit 2, as every refusal): the other ranks
	// cannot see this file.
	if _, stderr, code := nvshbench(t, "run", "--shim", "fake", "--sizes", "4K", "--out", out, "rma/put/block"); code != exitUsage || !strings.Contains(stderr, "resuming is not supported") {
		t.Errorf("resume under a launcher: exit %d %s", code, stderr)
	}
	// A bootstrap NVSHMEM does not know, or one whose plugin cannot load,
	// is refused before NVSHMEM starts (it crashes on a plugin it cannot load).
	t.Setenv("NVSHMEM_BOOTSTRAP", "PMIX")
	if _, stderr, code := nvshbench(t, "run", "--shim", "fake", "--sizes", "4K", "--out", out+"2", "rma/put/block"); code != exitUsage || !strings.Contains(stderr, "NVSHMEM_BOOTSTRAP_PMI=PMIX") {
		t.Errorf("NVSHMEM_BOOTSTRAP=PMIX: exit %d %s", code, stderr)
	}
	t.Setenv("NVSHMEM_BOOTSTRAP", "PMI")
	t.Setenv("NVSHMEM_BOOTSTRAP_PMI", "PMIX")
	t.Setenv("NVSHBENCH_FAKE_NO_BOOTSTRAP", "nvshmem_bootstrap_pmix.so.3")
	if _, stderr, code := nvshbench(t, "run", "--shim", "fake", "--sizes", "4K", "--out", out+"3", "rma/put/block"); code != exitUsage || !strings.Contains(stderr, "pmix_value_load") {
		t.Errorf("unloadable PMIx plugin: exit %d %s", code, stderr)
	}
	// Under Open MPI with no choice made, the MPI bootstrap replaces a PMIx
	// plugin that does not load, and the header says why.
	t.Setenv("NVSHMEM_BOOTSTRAP", "")
	t.Setenv("NVSHMEM_BOOTSTRAP_PMI", "")
	t.Setenv("OMPI_COMM_WORLD_RANK", "0")
	t.Setenv("OMPI_COMM_WORLD_SIZE", "2")
	t.Setenv("OMPI_COMM_WORLD_LOCAL_RANK", "0")
	ompi := filepath.Join(t.TempDir(), "ompi.jsonl")
	if _, stderr, code := nvshbench(t, "run", "--shim", "fake", "--sizes", "4K", "--samples", "2", "--out", ompi, "rma/put/block"); code != 0 {
		t.Fatalf("openmpi: exit %d %s", code, stderr)
	}
	if f, err := record.ReadFile(ompi); err != nil || f.Header.Env["NVSHMEM_BOOTSTRAP"] != "MPI" || !strings.Contains(strings.Join(f.Header.Notes, " "), "pmix_value_load") {
		t.Errorf("openmpi header: %v %+v", err, f)
	}
	for _, k := range []string{"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_RANK", "NVSHBENCH_FAKE_NO_BOOTSTRAP"} {
		t.Setenv(k, "")
	}
	// A non-zero rank measures and writes nothing.
	t.Setenv("SLURM_PROCID", "1")
	t.Setenv("SLURM_LOCALID", "1") // its fake node's device
	other := filepath.Join(t.TempDir(), "rank1.jsonl")
	if _, stderr, code := nvshbench(t, "run", "--shim", "fake", "--sizes", "4K", "--samples", "2", "--out", other, "rma/put/block"); code != 0 {
		t.Errorf("rank 1: exit %d %s", code, stderr)
	}
	if _, err := os.Stat(other); err == nil {
		t.Error("rank 1 wrote a results file")
	}
}

func TestReproduceWithFakeGPU(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "repro")
	out, stderr, code := nvshbench(t, "reproduce", "--quick", "--shim", "fake", "--out", dir)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.HasSuffix(strings.TrimSpace(out), "index.md") {
		t.Errorf("stdout %q", out)
	}
	for _, name := range []string{"results.jsonl", "report.md", "index.md", "bandwidth-put.png", "bandwidth-get.svg", "bandwidth-scalar.png", "device-api.png", "latency-put.png", "latency-pingpong.svg", "allreduce.svg"} {
		if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
			t.Errorf("reproduce did not write %s", name)
		}
	}
	rep, _ := os.ReadFile(filepath.Join(dir, "report.md"))
	if harness.NICReason() != "" && strings.Count(string(rep), "waived: no InfiniBand") < 8 {
		t.Errorf("the IBGDA rows of Fig. 4 and the latency table are not all waived with the reason")
	}
	for _, want := range []string{"put (bulk)", "RMA latency at 256 B", "NVSHMEM device block, single CTA", "| put       | ibgda |          |"} {
		if !strings.Contains(string(rep), want) {
			t.Errorf("report.md lacks %q", want)
		}
	}
	// Run again: everything is there, nothing is measured twice.
	_, stderr, code = nvshbench(t, "reproduce", "--quick", "--shim", "fake", "--out", dir)
	if code != 0 || strings.Contains(stderr, "point(s) to measure") && !strings.Contains(stderr, "0 point(s) to measure") {
		t.Errorf("second run: exit %d: %s", code, stderr)
	}
	// A folder of the user's is never written into.
	mine := t.TempDir()
	os.WriteFile(filepath.Join(mine, "index.md"), []byte("my notes\n"), 0o644)
	_, stderr, code = nvshbench(t, "reproduce", "--quick", "--shim", "fake", "--out", mine)
	if b, _ := os.ReadFile(filepath.Join(mine, "index.md")); code != exitUsage || string(b) != "my notes\n" || !strings.Contains(stderr, "never replaces") {
		t.Errorf("user folder: exit %d, index.md %q, %s", code, b, stderr)
	}
	if ents, _ := os.ReadDir(mine); len(ents) != 1 {
		t.Errorf("reproduce wrote into the user's folder: %v", ents)
	}
	// A file of the user's dropped into a reproduce folder is not replaced.
	os.Remove(filepath.Join(dir, "bandwidth-put.svg"))
	os.WriteFile(filepath.Join(dir, "bandwidth-put.svg"), []byte("mine"), 0o644)
	manifest, _ := os.ReadFile(filepath.Join(dir, manifestName))
	os.WriteFile(filepath.Join(dir, manifestName), []byte(strings.ReplaceAll(string(manifest), "bandwidth-put.svg\n", "")), 0o644)
	if _, stderr, code := nvshbench(t, "reproduce", "--quick", "--shim", "fake", "--out", dir); code == 0 || !strings.Contains(stderr, "did not write it") {
		t.Errorf("foreign file in a reproduce folder: exit %d %s", code, stderr)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "bandwidth-put.svg")); string(b) != "mine" {
		t.Error("a file reproduce did not write was replaced")
	}
}

// TestLaunchedModeUnderMpirun starts two ranks with a real Open MPI mpirun
// and the fake GPU (their collective calls meet on the fake's fabric): rank
// 0 writes one file whose header lists both ranks and the bootstrap, every
// point is verified over both ranks, and the job exits 0.
func TestLaunchedModeUnderMpirun(t *testing.T) {
	mpirun, err := exec.LookPath("mpirun")
	if err != nil {
		t.Skip("SKIPPED: no mpirun (Open MPI) on this machine; .ci/run installs it where it can")
	}
	dir := t.TempDir()
	out := filepath.Join(dir, "mpirun.jsonl")
	cmd := exec.Command(mpirun, "-np", "2", "--oversubscribe", "-x", "NVSHBENCH_TEST_CLI", "-x", "NVSHBENCH_FAKE_RDV",
		os.Args[0], "run", "--shim", "fake", "--sizes", "4K,1M", "--samples", "3", "--timeout", "20s", "--out", out,
		"rma/put/block", "latency/pingpong/signal", "collectives/allreduce/nccl-ring")
	cmd.Env = append(os.Environ(), "NVSHBENCH_TEST_CLI=1", "NVSHBENCH_FAKE_RDV="+filepath.Join(dir, "rdv"), "NVSHBENCH_FAKE_PATH=p2p",
		"OMPI_ALLOW_RUN_AS_ROOT=1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1", "OMPI_MCA_plm_rsh_agent=", "NVSHMEM_BOOTSTRAP=", "NVSHMEM_BOOTSTRAP_PMI=")
	b, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("mpirun: %v\n%s", err, b)
	}
	f, err := record.ReadFile(out)
	if err != nil {
		t.Fatalf("%v\n%s", err, b)
	}
	h := f.Header
	if h.PEs != 2 || len(h.GPUs) != 2 || h.GPUs[1].PE != 1 || h.Env["NVSHMEM_BOOTSTRAP_PMI"] != "PMIX" ||
		!strings.Contains(strings.Join(h.Notes, " "), "started by openmpi: 2 PEs") {
		t.Errorf("header: pes %d gpus %+v env %v notes %q", h.PEs, h.GPUs, h.Env, h.Notes)
	}
	n := 0
	for _, p := range f.Points {
		if strings.HasPrefix(p.ID, "limit/") {
			continue
		}
		n++
		if p.Status != record.StatusOK || (p.Bytes > 0 && !p.Verify.Checked) || p.Effective == "local" {
			t.Errorf("%s %s: %s %s verify %+v effective %s", p.ID, p.Params.Key(), p.Status, p.Reason, p.Verify, p.Effective)
		}
	}
	// rma/put/block and the AllReduce at 4 KiB and 1 MiB, the unsized
	// ping-pong once (one timer since schema 2).
	if n != 5 {
		t.Errorf("%d points, want 5\n%s", n, b)
	}
}

// A resumed run must be the setup that wrote the file: otherwise it is
// refused (exit 2), names what differs, and leaves the file as it was.
func TestResumeRefusesAnotherSetup(t *testing.T) {
	out := filepath.Join(t.TempDir(), "r.jsonl")
	args := []string{"run", "--shim", "fake", "--sizes", "4K", "--samples", "3", "--label", "a", "--out", out, "rma/put/block"}
	if _, stderr, code := nvshbench(t, args...); code != 0 {
		t.Fatalf("first run: exit %d %s", code, stderr)
	}
	before, _ := os.ReadFile(out)
	for _, c := range []struct {
		change []string
		want   string
	}{
		{[]string{"--samples", "5"}, "samples 3 → 5"},
		{[]string{"--label", "b"}, `label "a" → "b"`},
		{[]string{"--ctas", "64"}, "ctas 32 → 64"},
		{[]string{"--no-verify"}, "verify true → false"},
	} {
		a := append(append([]string{}, args...), c.change...)
		_, stderr, code := nvshbench(t, a...)
		if code != exitUsage || !strings.Contains(stderr, c.want) || !strings.Contains(stderr, "choose a new --out") {
			t.Errorf("%v: exit %d, %q", c.change, code, stderr)
		}
	}
	// Invented numbers never land in a measured file (a run appends to the
	// plain file a compressed one was).
	real := filepath.Join(t.TempDir(), "real.jsonl")
	b := gunzipFile(t, twoH200.path(t))
	os.WriteFile(real, b, 0o644)
	_, stderr, code := nvshbench(t, "run", "--shim", "fake", "--pes-per-gpu", "2", "--sizes", "4K", "--samples", "10", "--out", real, "rma/put/block")
	if code != exitUsage || !strings.Contains(stderr, "synthetic false → true") || !strings.Contains(stderr, "GPUs [GPU-") {
		t.Errorf("fake into a measured file: exit %d, %q", code, stderr)
	}
	if after, _ := os.ReadFile(real); !bytes.Equal(after, b) {
		t.Error("a refused resume changed the measured file")
	}
	if after, _ := os.ReadFile(out); !bytes.Equal(after, before) {
		t.Error("a refused resume changed the file")
	}
	// The same setup resumes.
	if _, stderr, code := nvshbench(t, args...); code != 0 || !strings.Contains(stderr, "already there") {
		t.Errorf("same setup: exit %d %s", code, stderr)
	}
}

// Without a driver or a GPU, reproduce and run stop at once with exit 4,
// before compiling anything; doctor says so and exits 4 too; a --shim that
// is no library is bad usage; build-shim without a toolchain is an error.
func TestNoGPUStopsBeforeCompiling(t *testing.T) {
	if _, err := cuda.ProbeDriver(); err == nil {
		t.Skip("this machine has a GPU")
	}
	cache := t.TempDir()
	t.Setenv("NVSHBENCH_SHIM", "")
	t.Setenv("NVSHBENCH_CACHE", cache)
	start := time.Now()
	_, stderr, code := nvshbench(t, "reproduce", "--out", filepath.Join(t.TempDir(), "r"))
	if code != exitNoGPU || !strings.Contains(stderr, "driver") || time.Since(start) > 5*time.Second {
		t.Errorf("reproduce: exit %d after %s: %q", code, time.Since(start), stderr)
	}
	if ents, _ := os.ReadDir(cache); len(ents) != 0 {
		t.Errorf("something was built without a GPU: %v", ents)
	}
	out, _, code := nvshbench(t, "doctor")
	if code != exitNoGPU || !strings.Contains(out, "none usable") {
		t.Errorf("doctor: exit %d\n%s", code, out)
	}
	if _, stderr, code := nvshbench(t, "run", "--shim", "/etc/passwd", "rma/put/block"); code != exitUsage || !strings.Contains(stderr, "not an ELF shared library") {
		t.Errorf("--shim /etc/passwd: exit %d %q", code, stderr)
	}
	if _, _, code := nvshbench(t, "completion", "tcsh"); code != exitUsage {
		t.Errorf("completion tcsh: exit %d", code)
	}
}

// Shell completion offers benchmark IDs and prefixes, and flag values.
func TestCompletionOfIDsAndValues(t *testing.T) {
	out, _, code := nvshbench(t, "__complete", "run", "rma/nccl-l")
	if code != 0 || !strings.Contains(out, "rma/nccl-lsa\tprefix") || !strings.Contains(out, "rma/nccl-lsa/put/block\tNCCL device API") ||
		strings.Contains(out, "rma/put/") {
		t.Errorf("run IDs: %q", out)
	}
	out, _, _ = nvshbench(t, "__complete", "run", "--dtypes", "float,")
	if !strings.Contains(out, "float,bf16") || !strings.Contains(out, "float,half") || strings.Contains(out, "float,float") {
		t.Errorf("--dtypes: %q", out)
	}
	out, _, _ = nvshbench(t, "__complete", "report", "--format", "")
	for _, f := range []string{"text", "markdown", "csv", "json"} {
		if !strings.Contains(out, f) {
			t.Errorf("report --format lacks %s: %q", f, out)
		}
	}
	out, _, _ = nvshbench(t, "__complete", "list", "latency/pi")
	if !strings.Contains(out, "latency/pingpong/put-signal") {
		t.Errorf("list IDs: %q", out)
	}
}

// --ctas / --threads mean what they say: refused where no selected
// benchmark takes them, a warning naming the ones that launch themselves.
func TestLaunchFlagsThatDoNotApply(t *testing.T) {
	_, stderr, code := nvshbench(t, "run", "--shim", "fake", "--ctas", "64", "latency/put/thread", "limit/sm-copy")
	if code != exitUsage || !strings.Contains(stderr, "--ctas: none of the selected benchmarks takes it") {
		t.Errorf("exit %d: %s", code, stderr)
	}
	out := filepath.Join(t.TempDir(), "r.jsonl")
	_, stderr, code = nvshbench(t, "run", "--shim", "fake", "--threads", "128", "--sizes", "4K", "--samples", "2", "--out", out,
		"rma/put/block", "collectives/allreduce/multicta")
	if code != 0 || !strings.Contains(stderr, "--threads applies to") || !strings.Contains(stderr, "collectives/allreduce/multicta") {
		t.Errorf("exit %d: %s", code, stderr)
	}
	f, err := record.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range f.Points {
		if p.ID == "rma/put/block" && p.Params.Threads != 128 {
			t.Errorf("rma/put/block ran with %d threads, asked 128", p.Params.Threads)
		}
		if p.ID == "collectives/allreduce/multicta" && (p.Params.Threads != 512 || p.Params.CTAs != 132) {
			t.Errorf("multicta: %dx%d, want one CTA per SM of the (fake) GPU × 512", p.Params.CTAs, p.Params.Threads)
		}
	}
	out, _, _ = nvshbench(t, "list", "latency/put")
	if !strings.Contains(out, "1 CTA × 32") || !strings.Contains(out, "1 CTA × --threads") {
		t.Errorf("list does not show each benchmark's launch:\n%s", out)
	}
}

// Under a launcher the same controller loop keeps the watch: a point past
// --timeout is recorded as an error naming the timeout, and the rank exits
// non-zero so the launcher ends the job.
func TestLaunchedTimeout(t *testing.T) {
	out := filepath.Join(t.TempDir(), "hang.jsonl")
	asSlurmRank0(t, "1")
	t.Setenv("NVSHBENCH_FAKE_HANG_SIZE", "4096")
	_, stderr, code := nvshbench(t, "run", "--shim", "fake", "--sizes", "1K,4K", "--samples", "2", "--timeout", "1s", "--out", out, "rma/put/block")
	if code == 0 {
		t.Fatalf("a hung point under a launcher exited 0: %s", stderr)
	}
	f, err := record.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var hung *record.Point
	for i := range f.Points {
		if f.Points[i].Params.Size == 4096 && f.Points[i].ID == "rma/put/block" {
			hung = &f.Points[i]
		}
	}
	if hung == nil || hung.Status != record.StatusError || !strings.Contains(hung.Reason, "--timeout 1s") || !strings.Contains(hung.Reason, "the job must be restarted (slurm)") {
		t.Errorf("hung point: %+v", hung)
	}
}
