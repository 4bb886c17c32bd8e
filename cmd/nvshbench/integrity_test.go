package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/nvshbench/nvshbench/record"
)

// fakeRun runs the fake GPU into out and fails the test on a non-zero exit.
func fakeRun(t *testing.T, out string, args ...string) {
	t.Helper()
	all := append([]string{"run", "--shim", "fake", "--samples", "3", "--out", out}, args...)
	if _, stderr, code := nvshbench(t, all...); code != 0 {
		t.Fatalf("%v: exit %d: %s", all, code, stderr)
	}
}

// startHung starts a run (a child process) whose point of 4 KiB hangs, and
// returns once it has written its header: it holds its results file.
func startHung(t *testing.T, out string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], "run", "--shim", "fake", "--sizes", "4K", "--samples", "2", "--timeout", "60s", "--out", out, "rma/put/block")
	cmd.Env = append(os.Environ(), "NVSHBENCH_TEST_CLI=1", "NVSHBENCH_FAKE_HANG_SIZE=4096")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		syscall.Kill(cmd.Process.Pid, syscall.SIGKILL)
		cmd.Wait()
	})
	deadline := time.Now().Add(20 * time.Second)
	for {
		if b, _ := os.ReadFile(out); bytes.Contains(b, []byte(`"type":"header"`)) {
			return cmd
		}
		if time.Now().After(deadline) {
			t.Fatal("the first run did not start")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Two runs on one --out: the second exits 2 naming the first's PID and
// leaves the file as the first wrote it.
func TestOneRunPerResultsFile(t *testing.T) {
	out := filepath.Join(t.TempDir(), "shared.jsonl")
	first := startHung(t, out)
	before, _ := os.ReadFile(out)
	_, stderr, code := nvshbench(t, "run", "--shim", "fake", "--sizes", "1M", "--samples", "2", "--out", out, "latency/g")
	if code != exitUsage || !strings.Contains(stderr, fmt.Sprintf("PID %d", first.Process.Pid)) || !strings.Contains(stderr, "one run per results file") {
		t.Errorf("second run: exit %d: %s", code, stderr)
	}
	if after, _ := os.ReadFile(out); !bytes.Equal(before, after) {
		t.Errorf("the second run changed the file:\n%s", after)
	}
}

// No side file: the plan reaches the workers on stdin. A user's file named
// like the old plan file is left alone, and a long legal --out works.
func TestNoFileBesideTheResults(t *testing.T) {
	dir := t.TempDir()
	name := strings.Repeat("r", 249-len(".jsonl")) + ".jsonl" // 249 characters: legal, with no room for a suffix
	out := filepath.Join(dir, name)
	mine := filepath.Join(dir, "mine.jsonl.plan.json")
	os.WriteFile(mine, []byte("my file"), 0o644)
	fakeRun(t, out, "--pes-per-gpu", "2", "--sizes", "4K", "rma/put/block")
	fakeRun(t, filepath.Join(dir, "mine.jsonl"), "--pes-per-gpu", "2", "--sizes", "4K", "rma/put/block")
	if b, _ := os.ReadFile(mine); string(b) != "my file" {
		t.Errorf("the user's file became %q", b)
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 3 {
		var names []string
		for _, e := range ents {
			names = append(names, e.Name())
		}
		t.Errorf("files in the folder: %v", names)
	}
}

// A complete last record without its newline is kept by resume.
func TestResumeKeepsACompleteLastRecord(t *testing.T) {
	out := filepath.Join(t.TempDir(), "r.jsonl")
	fakeRun(t, out, "--sizes", "4K", "rma/put/block")
	b, _ := os.ReadFile(out)
	os.WriteFile(out, bytes.TrimRight(b, "\n"), 0o644)
	n := len(mustRead(t, out).Points)
	fakeRun(t, out, "--sizes", "4K,8K", "rma/put/block")
	f := mustRead(t, out)
	if len(f.Points) != n+1 {
		t.Errorf("%d points after resume, want %d (the complete last record kept, one new)", len(f.Points), n+1)
	}
}

func mustRead(t *testing.T, path string) *record.File {
	t.Helper()
	f, err := record.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// A gzip file, a FIFO, a folder, a symbolic link: refused with exit 2, and
// the file is unchanged.
func TestOutThatIsNoPlainResultsFile(t *testing.T) {
	dir := t.TempDir()
	plain := filepath.Join(dir, "plain.jsonl")
	fakeRun(t, plain, "--sizes", "4K", "rma/put/block")
	raw, _ := os.ReadFile(plain)
	gz := filepath.Join(dir, "packed.jsonl")
	packed := gzipBytes(t, raw)
	os.WriteFile(gz, packed, 0o644)
	fifo := filepath.Join(dir, "fifo.jsonl")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link.jsonl")
	os.Symlink(plain, link)
	for _, c := range []struct{ out, want string }{{gz, "gzip"}, {fifo, "not a regular file"}, {dir, "folder"}, {link, "symbolic link"}} {
		done := make(chan struct{})
		var stderr string
		var code int
		go func() {
			_, stderr, code = nvshbench(t, "run", "--shim", "fake", "--sizes", "4K,8K", "--samples", "3", "--out", c.out, "rma/put/block")
			close(done)
		}()
		select {
		case <-done:
		case <-time.After(20 * time.Second):
			t.Fatalf("--out %s: still running after 20 s", c.out)
		}
		if code != exitUsage || !strings.Contains(stderr, c.want) {
			t.Errorf("--out %s: exit %d: %s", c.out, code, stderr)
		}
	}
	if b, _ := os.ReadFile(gz); !bytes.Equal(b, packed) {
		t.Error("the compressed file was changed")
	}
	if b, _ := os.ReadFile(plain); !bytes.Equal(b, raw) {
		t.Error("the file behind the link was changed")
	}
}

// NVSHMEM variables from the environment are part of the setup: a resume
// under another one is refused.
func TestResumeRefusesAnotherNVSHMEMEnvironment(t *testing.T) {
	out := filepath.Join(t.TempDir(), "r.jsonl")
	fakeRun(t, out, "--sizes", "4K", "rma/put/block")
	for _, kv := range [][2]string{{"NVSHMEM_DISABLE_P2P", "1"}, {"NVSHMEM_IB_ENABLE_IBGDA", "1"}} {
		t.Setenv(kv[0], kv[1])
		_, stderr, code := nvshbench(t, "run", "--shim", "fake", "--sizes", "4K,8K", "--samples", "3", "--out", out, "rma/put/block")
		if code != exitUsage || !strings.Contains(stderr, kv[0]) {
			t.Errorf("resume with %s=%s: exit %d: %s", kv[0], kv[1], code, stderr)
		}
		os.Unsetenv(kv[0])
	}
}

// stripMetrics rewrites a results file with every point's stored metrics
// removed (the samples kept).
func stripMetrics(t *testing.T, in, out string) {
	t.Helper()
	b, _ := os.ReadFile(in)
	var lines []string
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatal(err)
		}
		delete(m, "metrics")
		nb, _ := json.Marshal(m)
		lines = append(lines, string(nb))
	}
	os.WriteFile(out, []byte(strings.Join(lines, "\n")+"\n"), 0o644)
}

// A point stored without metrics reads as the same figures in report,
// plot and compare: one derivation from the samples.
func TestMetricsDerivedWhenAbsent(t *testing.T) {
	dir := t.TempDir()
	os.Mkdir(filepath.Join(dir, "a"), 0o755)
	os.Mkdir(filepath.Join(dir, "b"), 0o755)
	full := filepath.Join(dir, "a", "run.jsonl") // one name: the charts' notes name the file
	fakeRun(t, full, "--sizes", "64K,1M", "rma/put/block", "latency/g")
	bare := filepath.Join(dir, "b", "run.jsonl")
	stripMetrics(t, full, bare)
	a, _, c1 := nvshbench(t, "report", "--points", full)
	b, _, c2 := nvshbench(t, "report", "--points", bare)
	if c1 != 0 || c2 != 0 || a != b {
		t.Errorf("report differs without stored metrics (exit %d %d):\n%s\n---\n%s", c1, c2, a, b)
	}
	if strings.Contains(b, "not run") && !strings.Contains(a, "not run") {
		t.Error("report says not run")
	}
	sa, _, _ := nvshbench(t, "plot", "--spec", full)
	sb, stderr, code := nvshbench(t, "plot", "--spec", bare)
	if code != 0 || sa != sb {
		t.Errorf("plot differs without stored metrics (exit %d): %s", code, stderr)
	}
	out, stderr, code := nvshbench(t, "compare", "--format", "csv", full, bare)
	if code != 0 || strings.Contains(out, "%") {
		t.Errorf("compare of a file with itself stripped: exit %d: %s %s", code, out, stderr)
	}
}

// Two records of one measured point: readers warn, compare refuses.
func TestDuplicatePoints(t *testing.T) {
	dir := t.TempDir()
	a := filepath.Join(dir, "a.jsonl")
	fakeRun(t, a, "--sizes", "64K", "rma/put/block")
	b, _ := os.ReadFile(a)
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	dup := filepath.Join(dir, "dup.jsonl")
	os.WriteFile(dup, []byte(strings.Join(append(lines, lines[len(lines)-1]), "\n")+"\n"), 0o644)
	_, stderr, code := nvshbench(t, "report", dup)
	if code != 0 || !strings.Contains(stderr, "already measured at line") {
		t.Errorf("report of a duplicate: exit %d: %s", code, stderr)
	}
	_, stderr, code = nvshbench(t, "compare", a, dup)
	if code != exitError || !strings.Contains(stderr, "measured twice") {
		t.Errorf("compare with a duplicate: exit %d: %s", code, stderr)
	}
}

// withLastPoint writes, beside the results file a, bad.jsonl: a with its
// last line (a point) changed by edit; it returns its path and that line's
// number.
func withLastPoint(t *testing.T, a string, edit func(line string) string) (string, int) {
	t.Helper()
	b, err := os.ReadFile(a)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	lines[len(lines)-1] = edit(lines[len(lines)-1])
	f := filepath.Join(filepath.Dir(a), "bad.jsonl")
	if err := os.WriteFile(f, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return f, len(lines)
}

// Samples that make no figure (1e308 s, 5e-324 s) are refused on reading,
// naming file and line; plot leaves no empty image behind.
func TestImplausibleSamplesRefused(t *testing.T) {
	dir := t.TempDir()
	a := filepath.Join(dir, "a.jsonl")
	fakeRun(t, a, "--sizes", "64K", "rma/put/block")
	for _, bad := range []string{"1e308", "5e-324"} {
		f, line := withLastPoint(t, a, func(l string) string {
			return regexp.MustCompile(`"samples_s":\[[^,\]]+`).ReplaceAllString(l, `"samples_s":[`+bad)
		})
		charts := filepath.Join(dir, "charts")
		for _, args := range [][]string{{"report", "--format", "json", f}, {"compare", "--format", "json", a, f}, {"plot", "--out", charts, f}} {
			_, stderr, code := nvshbench(t, args...)
			if code != exitError || !strings.Contains(stderr, fmt.Sprintf("bad.jsonl:%d", line)) {
				t.Errorf("sample %s, %v: exit %d: %s", bad, args[0], code, stderr)
			}
		}
		if ents, _ := os.ReadDir(charts); len(ents) > 0 {
			t.Errorf("plot left files: %v", ents)
		}
	}
}

// plot writes into a folder of the user's without replacing the user's
// files; reproduce never writes through a link it finds in its folder.
func TestChartsNeverReplaceAUsersFile(t *testing.T) {
	dir := t.TempDir()
	a := filepath.Join(dir, "a.jsonl")
	fakeRun(t, a, "--sizes", "64K,1M", "rma/put/block")
	charts := filepath.Join(dir, "charts")
	os.Mkdir(charts, 0o755)
	out, stderr, code := nvshbench(t, "plot", "--out", charts, a)
	if code != 0 {
		t.Fatalf("plot: exit %d: %s", code, stderr)
	}
	first := strings.Fields(out)[0]
	// Replotting replaces the charts plot wrote.
	if _, stderr, code := nvshbench(t, "plot", "--out", charts, a); code != 0 {
		t.Fatalf("replot: exit %d: %s", code, stderr)
	}
	// A user's file of a chart's name is not replaced.
	other := filepath.Join(dir, "other")
	os.Mkdir(other, 0o755)
	os.WriteFile(filepath.Join(other, filepath.Base(first)), []byte("mine"), 0o644)
	_, stderr, code = nvshbench(t, "plot", "--out", other, a)
	if b, _ := os.ReadFile(filepath.Join(other, filepath.Base(first))); code == 0 || string(b) != "mine" || !strings.Contains(stderr, "did not write it") {
		t.Errorf("user's chart: exit %d, now %q: %s", code, b, stderr)
	}
	// reproduce: report.md turned into a link to a file outside the folder.
	rep := filepath.Join(dir, "repro")
	if _, stderr, code := nvshbench(t, "reproduce", "--quick", "--shim", "fake", "--out", rep); code != 0 {
		t.Fatalf("reproduce: exit %d: %s", code, stderr)
	}
	outside := filepath.Join(dir, "outside.md")
	os.WriteFile(outside, []byte("keep"), 0o644)
	os.Remove(filepath.Join(rep, "report.md"))
	os.Symlink(outside, filepath.Join(rep, "report.md"))
	nvshbench(t, "reproduce", "--quick", "--shim", "fake", "--out", rep)
	if b, _ := os.ReadFile(outside); string(b) != "keep" {
		t.Errorf("reproduce wrote through a link: %q", b)
	}
}

// Control characters in ids from a file never reach the terminal raw; a
// label typed on the command line is shown escaped.
func TestControlCharactersNeverReachTheTerminal(t *testing.T) {
	dir := t.TempDir()
	a := filepath.Join(dir, "a.jsonl")
	fakeRun(t, a, "--sizes", "64K", "rma/put/block")
	b, _ := os.ReadFile(a)
	bad := filepath.Join(dir, "bad.jsonl")
	os.WriteFile(bad, bytes.Replace(b, []byte(`"id":"rma/put/block"`), []byte(`"id":"rma/put/block\u001b[2J"`), 1), 0o644)
	_, stderr, code := nvshbench(t, "report", bad)
	if code != exitError || strings.ContainsRune(stderr, 0x1b) || !strings.Contains(stderr, "control character") {
		t.Errorf("id with ESC: exit %d: %q", code, stderr)
	}
	out, stderr, _ := nvshbench(t, "report", "x\x1b[2Jy="+a)
	if strings.ContainsRune(out+stderr, 0x1b) {
		t.Errorf("a label's ESC reached the output: %q", out)
	}
}

// SIGHUP (an ssh session dropped) ends a run like Ctrl-C: points kept,
// "interrupted", exit 129 (128 + its number), no worker left.
func TestHangUpEndsTheRunCleanly(t *testing.T) {
	out := filepath.Join(t.TempDir(), "hup.jsonl")
	cmd := exec.Command(os.Args[0], "run", "--shim", "fake", "--sizes", "1K,4K", "--samples", "2", "--timeout", "60s", "--out", out, "rma/put/block")
	tag := fmt.Sprintf("NVSHBENCH_TEST_TAG=hup-%d-%d", os.Getpid(), time.Now().UnixNano())
	cmd.Env = append(os.Environ(), "NVSHBENCH_TEST_CLI=1", "NVSHBENCH_FAKE_HANG_SIZE=4096", tag)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		if f, err := record.ReadFile(out); err == nil && len(f.Points) > 0 {
			break // 1 KiB written; 4 KiB hangs
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatal("the run did not write its first point")
		}
		time.Sleep(20 * time.Millisecond)
	}
	cmd.Process.Signal(syscall.SIGHUP)
	err := cmd.Wait()
	ee, ok := err.(*exec.ExitError)
	if !ok || ee.ExitCode() != exitSignal+int(syscall.SIGHUP) || !strings.Contains(stderr.String(), "interrupted") {
		t.Errorf("after SIGHUP: %v: %s", err, stderr.String())
	}
	if f := mustRead(t, out); len(f.Points) == 0 {
		t.Error("the written point was lost")
	}
	time.Sleep(200 * time.Millisecond)
	if left := workersOf(t, tag); len(left) > 0 {
		for _, pid := range left {
			syscall.Kill(pid, syscall.SIGKILL)
		}
		t.Errorf("workers %v outlived the hang-up", left)
	}
}

// doctor on a node with NICs says what IBGDA and the CPU proxy lack, from
// the /sys and /proc it reads (a fabricated tree here).
func TestDoctorNICReadiness(t *testing.T) {
	root := t.TempDir()
	write := func(p, s string) {
		p = filepath.Join(root, p)
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, []byte(s), 0o644)
	}
	write("sys/devices/pci0000:17/0000:17:00.0/0000:1a:00.0/numa_node", "0\n")
	os.MkdirAll(filepath.Join(root, "sys/bus/pci/devices"), 0o755)
	os.Symlink(filepath.Join(root, "sys/devices/pci0000:17/0000:17:00.0/0000:1a:00.0"), filepath.Join(root, "sys/bus/pci/devices/0000:1a:00.0"))
	os.MkdirAll(filepath.Join(root, "sys/class/infiniband/mlx5_0"), 0o755)
	os.Symlink(filepath.Join(root, "sys/bus/pci/devices/0000:1a:00.0"), filepath.Join(root, "sys/class/infiniband/mlx5_0/device"))
	write("sys/class/infiniband/mlx5_0/ports/1/state", "4: ACTIVE\n")
	write("proc/version", "Linux version 6.8.0-45-generic\n")
	write("proc/driver/nvidia/version", "NVRM version: NVIDIA UNIX x86_64 Kernel Module  570.86.15\n")
	write("proc/driver/nvidia/params", "RegistryDwords: \"\"\n")
	t.Setenv("NVSHBENCH_SYS_ROOT", root)
	out, stderr, code := nvshbench(t, "doctor", "--shim", "fake")
	if code != 0 {
		t.Fatalf("doctor: exit %d: %s", code, stderr)
	}
	for _, want := range []string{"proxy     not ready", "ibgda     not ready", "ok      RDMA ports: 1 of 1 port(s) ACTIVE",
		"MISSING GPU memory registration", "modprobe nvidia_peermem", "MISSING driver PeerMappingOverride", "NVreg_RegistryDwords", "MISSING GDRCopy"} {
		if !strings.Contains(out, want) {
			t.Errorf("doctor lacks %q:\n%s", want, out)
		}
	}
	write("sys/module/nvidia_peermem/refcnt", "1\n")
	write("proc/driver/nvidia/params", "RegistryDwords: \"PeerMappingOverride=1;\"\n")
	out, _, _ = nvshbench(t, "doctor", "--shim", "fake")
	if !strings.Contains(out, "ibgda     ready") || !strings.Contains(out, "proxy     not ready") {
		t.Errorf("peermem and the override set: IBGDA should be ready, the proxy not (no GDRCopy):\n%s", out)
	}
}

// --corrupt-checks (hidden, for the GPU test) hands every check a damaged
// output: every verified point fails verification, the run exits 1, and
// its header says the run was corrupted on purpose.
func TestCorruptChecksFailEveryVerifiedPoint(t *testing.T) {
	out := filepath.Join(t.TempDir(), "corrupt.jsonl")
	_, stderr, code := nvshbench(t, "run", "--shim", "fake", "--sizes", "4K,1M", "--samples", "2", "--corrupt-checks", "--out", out,
		"rma/put/block", "rma/get/warp", "latency/put/block")
	if code != 1 {
		t.Fatalf("exit %d, want 1: %s", code, stderr)
	}
	f, err := record.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if f.Header.Run == nil || !f.Header.Run.CorruptChecks {
		t.Errorf("the header does not say the checks were handed damaged output: %+v", f.Header.Run)
	}
	failed := 0
	for _, p := range f.Points {
		if p.Verify.Checked && p.Status != record.StatusFailedVerification {
			t.Errorf("%s %s: %s with a damaged output", p.ID, p.Params.Key(), p.Status)
		}
		if p.Status == record.StatusFailedVerification && !strings.HasPrefix(p.ID, "limit/") {
			failed++
		}
	}
	if failed != 6 { // the in-run limits the run adds fail too
		t.Errorf("%d points asked for failed verification, want all 6", failed)
	}
	clean := filepath.Join(t.TempDir(), "clean.jsonl")
	fakeRun(t, clean, "--sizes", "4K", "rma/put/block")
	if g, err := record.ReadFile(clean); err != nil || g.Header.Run == nil || g.Header.Run.CorruptChecks {
		t.Errorf("a plain run's header: %v", err)
	}
}

// The header records the libraries as the job loaded them (the fake layer's
// reports NVSHMEM 3.4.5 and NCCL 2.28.9), not as a toolchain search found
// them (none, or a folder given by NVSHMEM_HOME, leaves them empty).
func TestHeaderRecordsTheLoadedLibraries(t *testing.T) {
	out := filepath.Join(t.TempDir(), "versions.jsonl")
	fakeRun(t, out, "--sizes", "4K", "rma/put/block")
	f, err := record.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if f.Header.NVSHMEM != "3.4.5" || f.Header.NCCL != "2.28.9" {
		t.Errorf("header NVSHMEM %q NCCL %q, want the loaded 3.4.5 and 2.28.9", f.Header.NVSHMEM, f.Header.NCCL)
	}
}
