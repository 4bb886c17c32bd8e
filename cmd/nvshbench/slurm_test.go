package main

import (
	"bytes"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/nvshbench/nvshbench/record"
)

// slurm is a private single-node Slurm cluster (munged, slurmctld, slurmd)
// with its state, logs and sockets under one temporary folder, started once
// for the package's tests and stopped by PID when they end (TestMain).
type slurm struct {
	dir   string
	conf  string
	procs []*exec.Cmd
	err   string // why there is none: the tests skip with it
}

var (
	cluster     *slurm
	clusterOnce sync.Once
)

// slurmTools are what a cluster needs on this machine.
var slurmTools = []string{"munged", "slurmctld", "slurmd", "srun", "sbatch", "scancel", "sinfo", "squeue", "scontrol"}

// needSlurm starts the cluster on first use, or skips the test saying why.
func needSlurm(t *testing.T) *slurm {
	t.Helper()
	clusterOnce.Do(func() { cluster = startSlurm() })
	if cluster.err != "" {
		t.Skip("SKIPPED: " + cluster.err)
	}
	return cluster
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func startSlurm() *slurm {
	s := &slurm{}
	if runtime.GOOS != "linux" {
		s.err = "Slurm tests run on Linux"
		return s
	}
	for _, tool := range slurmTools {
		if _, err := exec.LookPath(tool); err != nil {
			s.err = "no Slurm on this machine (" + tool + " missing); .ci/run installs slurm-wlm and munge where it can (root and apt)"
			return s
		}
	}
	if os.Getuid() != 0 {
		s.err = "the private Slurm cluster needs root (slurmd starts jobs as their user)"
		return s
	}
	dir, err := os.MkdirTemp("", "nvshbench-slurm-")
	if err != nil {
		s.err = err.Error()
		return s
	}
	s.dir = dir
	fail := func(format string, a ...any) *slurm {
		s.stop()
		s.err = fmt.Sprintf(format, a...)
		return s
	}
	for _, d := range []string{"state", "spool"} {
		os.Mkdir(filepath.Join(dir, d), 0o700)
	}
	key := make([]byte, 1024)
	if f, err := os.Open("/dev/urandom"); err == nil {
		f.Read(key)
		f.Close()
	}
	if err := os.WriteFile(filepath.Join(dir, "munge.key"), key, 0o400); err != nil {
		return fail("munge key: %v", err)
	}
	sock := filepath.Join(dir, "munge.sock")
	ctldPort, err1 := freePort()
	dPort, err2 := freePort()
	if err1 != nil || err2 != nil {
		return fail("no free port for Slurm")
	}
	conf := fmt.Sprintf(`ClusterName=nvshbench-ci
SlurmctldHost=localhost(127.0.0.1)
SlurmUser=root
SlurmctldPort=%d
SlurmdPort=%d
AuthType=auth/munge
AuthInfo=socket=%s
CredType=cred/munge
StateSaveLocation=%s/state
SlurmdSpoolDir=%s/spool
SlurmctldPidFile=%s/slurmctld.pid
SlurmdPidFile=%s/slurmd.pid
SlurmctldLogFile=%s/slurmctld.log
SlurmdLogFile=%s/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
MpiDefault=pmi2
ReturnToService=2
KillWait=5
NodeName=ci-node NodeHostname=localhost NodeAddr=127.0.0.1 CPUs=%d State=UNKNOWN
PartitionName=ci Nodes=ALL Default=YES MaxTime=INFINITE State=UP OverSubscribe=YES
`, ctldPort, dPort, sock, dir, dir, dir, dir, dir, dir, runtime.NumCPU())
	s.conf = filepath.Join(dir, "slurm.conf")
	if err := os.WriteFile(s.conf, []byte(conf), 0o644); err != nil {
		return fail("slurm.conf: %v", err)
	}
	start := func(name string, args ...string) error {
		cmd := exec.Command(name, args...)
		cmd.Env = append(os.Environ(), "SLURM_CONF="+s.conf)
		log, _ := os.Create(filepath.Join(dir, name+".out"))
		cmd.Stdout, cmd.Stderr = log, log
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		if err := cmd.Start(); err != nil {
			return err
		}
		s.procs = append(s.procs, cmd)
		return nil
	}
	if err := start("munged", "-F", "-f", "-S", sock, "--key-file="+filepath.Join(dir, "munge.key"), "--log-file="+filepath.Join(dir, "munged.log"),
		"--pid-file="+filepath.Join(dir, "munged.pid"), "--seed-file="+filepath.Join(dir, "munged.seed")); err != nil {
		return fail("munged: %v", err)
	}
	for i := 0; i < 50; i++ {
		if _, err := os.Stat(sock); err == nil {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if err := start("slurmctld", "-D", "-i", "-f", s.conf); err != nil {
		return fail("slurmctld: %v", err)
	}
	if err := start("slurmd", "-D", "-N", "ci-node", "-f", s.conf); err != nil {
		return fail("slurmd: %v", err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		out, _ := s.command("sinfo", "-h", "-o", "%t").Output()
		if st := strings.TrimSpace(string(out)); st == "idle" {
			return s
		}
		if time.Now().After(deadline) {
			logs, _ := os.ReadFile(filepath.Join(dir, "slurmctld.log"))
			return fail("the private Slurm cluster did not come up in 30 s: %s", lastLines(string(logs), 5))
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func lastLines(s string, n int) string {
	l := strings.Split(strings.TrimSpace(s), "\n")
	if len(l) > n {
		l = l[len(l)-n:]
	}
	return strings.Join(l, " | ")
}

// command is a Slurm client command against this cluster.
func (s *slurm) command(name string, args ...string) *exec.Cmd {
	cmd := exec.Command(name, args...)
	cmd.Env = append(os.Environ(), "SLURM_CONF="+s.conf)
	return cmd
}

// stop ends the daemons (each in its process group) and removes the folder.
func (s *slurm) stop() {
	if s == nil {
		return
	}
	if s.conf != "" {
		s.command("scancel", "--full", "--user=root").Run()
		// Let the steps end under slurmd (which reaps them) before it goes.
		for i := 0; i < 50; i++ {
			out, err := s.command("squeue", "-h").Output()
			if err != nil || strings.TrimSpace(string(out)) == "" {
				break
			}
			time.Sleep(200 * time.Millisecond)
		}
		time.Sleep(500 * time.Millisecond)
	}
	for i := len(s.procs) - 1; i >= 0; i-- {
		p := s.procs[i]
		syscall.Kill(-p.Process.Pid, syscall.SIGTERM)
		done := make(chan struct{})
		go func() { p.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			syscall.Kill(-p.Process.Pid, syscall.SIGKILL)
			<-done
		}
	}
	if s.dir != "" {
		os.RemoveAll(s.dir)
	}
}

// testEnv is what a job needs to run this test binary as nvshbench with the
// fake GPU.
func testEnv(extra ...string) []string {
	return append(append(os.Environ(), "NVSHBENCH_TEST_CLI=1", "NVSHBENCH_SHIM=fake", "NVSHMEM_BOOTSTRAP=", "NVSHMEM_BOOTSTRAP_PMI="), extra...)
}

// pointKeys lists a file's points: id and params, sorted.
func pointKeys(t *testing.T, path string) []string {
	t.Helper()
	f := mustRead(t, path)
	var keys []string
	for i := range f.Points {
		keys = append(keys, f.Points[i].MatchKey()+" "+string(f.Points[i].Status))
	}
	sort.Strings(keys)
	return keys
}

var slurmBenches = []string{"--sizes", "4K,1M", "--samples", "3", "--timeout", "20s", "rma/put/block", "latency/pingpong/signal", "collectives/allreduce/multicta"}

// srun -n 2 and -n 4: rank 0 writes one file whose notes name Slurm, the
// ranks and the bootstrap chosen and why; the points are a local run's
// with as many PEs.
func TestSrunRanks(t *testing.T) {
	s := needSlurm(t)
	for _, n := range []int{2, 4} {
		dir := t.TempDir()
		out := filepath.Join(dir, "srun.jsonl")
		cmd := s.command("srun", "-n", strconv.Itoa(n), "--overcommit", "--chdir", dir, os.Args[0], "run", "--shim", "fake", "--out", out)
		cmd.Args = append(cmd.Args, slurmBenches...)
		cmd.Env = append(testEnv("NVSHBENCH_FAKE_RDV="+filepath.Join(dir, "rdv")), "SLURM_CONF="+s.conf)
		b, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("srun -n %d: %v\n%s", n, err, b)
		}
		f := mustRead(t, out)
		notes := strings.Join(f.Header.Notes, "; ")
		if f.Header.PEs != n || !strings.Contains(notes, fmt.Sprintf("started by slurm: %d PEs", n)) || !strings.Contains(notes, "PMI-2, chosen by nvshbench for slurm") {
			t.Errorf("srun -n %d: header PEs %d, notes %q", n, f.Header.PEs, notes)
		}
		local := filepath.Join(dir, "local.jsonl")
		args := append([]string{"run", "--shim", "fake", "--pes-per-gpu", strconv.Itoa(n), "--out", local}, slurmBenches...)
		if _, stderr, code := nvshbench(t, args...); code != 0 {
			t.Fatalf("local %d-PE run: exit %d: %s", n, code, stderr)
		}
		if a, b := pointKeys(t, out), pointKeys(t, local); strings.Join(a, "\n") != strings.Join(b, "\n") {
			t.Errorf("srun -n %d and a local %d-PE run measured different points:\n%s\n---\n%s", n, n, strings.Join(a, "\n"), strings.Join(b, "\n"))
		}
	}
}

// sbatch a shipped script as a user would (NVSHBENCH and the fake shim
// from the environment; --gpus-per-node=0 on a node without GPUs), wait
// for the job, and return its id and output.
func (s *slurm) sbatch(t *testing.T, dir string, env []string, args ...string) (string, string) {
	t.Helper()
	cmd := s.command("sbatch", append([]string{"--parsable", "--gpus-per-node=0", "--overcommit", "-o", filepath.Join(dir, "job-%j.out")}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(env, "SLURM_CONF="+s.conf)
	b, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("sbatch %v: %v: %s", args, err, b)
	}
	id := strings.TrimSpace(strings.Split(string(b), ";")[0])
	s.wait(t, id, 180*time.Second)
	outb, _ := os.ReadFile(filepath.Join(dir, "job-"+id+".out"))
	return id, string(outb)
}

// wait until the job has ended (scontrol's JobState: a query that fails
// is asked again, never taken for an end).
func (s *slurm) wait(t *testing.T, id string, limit time.Duration) {
	t.Helper()
	deadline := time.Now().Add(limit)
	state := ""
	for {
		if out, err := s.command("scontrol", "show", "job", id).Output(); err == nil {
			for _, f := range strings.Fields(string(out)) {
				if v, ok := strings.CutPrefix(f, "JobState="); ok {
					state = v
				}
			}
			switch state {
			case "COMPLETED", "FAILED", "CANCELLED", "TIMEOUT", "NODE_FAIL", "OUT_OF_MEMORY", "PREEMPTED", "BOOT_FAIL", "DEADLINE":
				return
			}
		}
		if time.Now().After(deadline) {
			s.command("scancel", id).Run()
			t.Fatalf("job %s still %s after %s", id, state, limit)
		}
		time.Sleep(300 * time.Millisecond)
	}
}

// nvshbenchExe is this test binary behind the name a script calls.
func nvshbenchExe(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	exe := filepath.Join(dir, "nvshbench")
	script := fmt.Sprintf("#!/bin/sh\nNVSHBENCH_TEST_CLI=1 exec %q \"$@\"\n", os.Args[0])
	if err := os.WriteFile(exe, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return exe
}

// Both shipped sbatch scripts, submitted as a user would: the job writes
// where it was submitted from, and report reads what it wrote.
func TestSbatchShippedScripts(t *testing.T) {
	s := needSlurm(t)
	root := repoRoot(t)
	exe := nvshbenchExe(t)

	dir := t.TempDir()
	env := testEnv("NVSHBENCH="+exe, "NVSHBENCH_ARGS=--quick", "NVSHBENCH_OUT=repro")
	_, out := s.sbatch(t, dir, env, filepath.Join(root, "scripts/slurm-reproduce.sbatch"))
	if _, stderr, code := nvshbench(t, "report", filepath.Join(dir, "repro", "results.jsonl")); code != 0 {
		t.Errorf("report of the reproduce job: exit %d: %s\njob output:\n%s", code, stderr, out)
	}

	dir = t.TempDir()
	env = testEnv("NVSHBENCH="+exe, "NVSHBENCH_OUT=mn.jsonl", "NVSHBENCH_FAKE_RDV="+filepath.Join(dir, "rdv"),
		"NVSHBENCH_ARGS="+strings.Join(slurmBenches, " "))
	_, out = s.sbatch(t, dir, env, "--nodes=1", "--ntasks-per-node=2", filepath.Join(root, "scripts/slurm-multinode.sbatch"))
	f, err := record.ReadFile(filepath.Join(dir, "mn.jsonl"))
	if err != nil || f.Header.PEs != 2 {
		t.Fatalf("the multinode job's file: %v\njob output:\n%s", err, out)
	}
	if _, err := os.Stat(filepath.Join(dir, "mn.md")); err != nil {
		t.Errorf("the multinode job wrote no report: %v\n%s", err, out)
	}
	if !strings.Contains(out, "PMIx plugin does not load here; srun --mpi=pmi2") && !strings.Contains(strings.Join(f.Header.Notes, " "), "PMIX") {
		t.Errorf("the job says nothing of srun's PMI: %s", out)
	}

	// Asked for PMIx where Slurm's plugin does not load: one line with the fix.
	if s.command("srun", "--mpi=pmix", "-n", "1", "true").Run() == nil {
		t.Log("Slurm's PMIx plugin loads here: the refusal is not exercised")
	} else {
		dir = t.TempDir()
		env = testEnv("NVSHBENCH="+exe, "NVSHBENCH_SRUN_MPI=pmix")
		_, out = s.sbatch(t, dir, env, "--nodes=1", "--ntasks-per-node=2", filepath.Join(root, "scripts/slurm-multinode.sbatch"))
		if !strings.Contains(out, "srun --mpi=pmix fails here") || !strings.Contains(out, "NVSHBENCH_SRUN_MPI=pmi2") {
			t.Errorf("pmix asked where it does not load: %s", out)
		}
	}

	// No nvshbench: one line, the job fails.
	dir = t.TempDir()
	id, out := s.sbatch(t, dir, testEnv("NVSHBENCH=/nonexistent/nvshbench"), filepath.Join(root, "scripts/slurm-reproduce.sbatch"))
	if !strings.Contains(out, "'/nonexistent/nvshbench' not found") || s.exitCode(id) == 0 {
		t.Errorf("missing nvshbench: exit %d: %s", s.exitCode(id), out)
	}
	// No GPUs where the job asked for them (the real shim): one line.
	dir = t.TempDir()
	id, out = s.sbatch(t, dir, append(testEnv("NVSHBENCH="+exe), "NVSHBENCH_SHIM="), filepath.Join(root, "scripts/slurm-reproduce.sbatch"))
	if !strings.Contains(out, "GPU(s) and the job asked for") || s.exitCode(id) == 0 {
		t.Errorf("no GPUs: exit %d: %s", s.exitCode(id), out)
	}
}

// exitCode is a finished job's exit code as Slurm recorded it (-1: unknown).
func (s *slurm) exitCode(id string) int {
	out, err := s.command("scontrol", "show", "job", id).Output()
	if err != nil {
		return -1
	}
	for _, f := range strings.Fields(string(out)) {
		if v, ok := strings.CutPrefix(f, "ExitCode="); ok {
			code, _ := strconv.Atoi(strings.Split(v, ":")[0])
			return code
		}
	}
	return -1
}

// tagged lists the live processes (zombies apart) whose environment holds
// tag.
func tagged(tag string) []int {
	ents, _ := os.ReadDir("/proc")
	var pids []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		env, err := os.ReadFile(filepath.Join("/proc", e.Name(), "environ"))
		if err != nil || !bytes.Contains(env, []byte(tag)) {
			continue
		}
		if st, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat")); err == nil {
			if i := bytes.LastIndexByte(st, ')'); i > 0 && i+2 < len(st) && st[i+2] == 'Z' {
				continue
			}
		}
		pids = append(pids, pid)
	}
	return pids
}

// scancel in the middle of a job: nothing left on the node, every finished
// point kept, and the same submission resumes.
func TestScancelKeepsPointsAndResumes(t *testing.T) {
	s := needSlurm(t)
	root := repoRoot(t)
	exe := nvshbenchExe(t)
	dir := t.TempDir()
	tag := fmt.Sprintf("NVSHBENCH_TEST_TAG=scancel-%d-%d", os.Getpid(), time.Now().UnixNano())
	env := testEnv("NVSHBENCH="+exe, "NVSHBENCH_ARGS=--quick --timeout 120s", "NVSHBENCH_OUT=repro", "NVSHBENCH_FAKE_HANG_SIZE=1048576", tag)
	cmd := s.command("sbatch", "--parsable", "--gpus-per-node=0", "-o", filepath.Join(dir, "job-%j.out"), filepath.Join(root, "scripts/slurm-reproduce.sbatch"))
	cmd.Dir, cmd.Env = dir, append(env, "SLURM_CONF="+s.conf)
	b, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("sbatch: %v %s", err, b)
	}
	id := strings.TrimSpace(string(b))
	res := filepath.Join(dir, "repro", "results.jsonl")
	deadline := time.Now().Add(60 * time.Second)
	for { // until it hangs at 1 MiB with points written
		if f, err := record.ReadFile(res); err == nil && len(f.Points) > 3 && len(tagged(tag)) > 1 {
			break
		}
		if time.Now().After(deadline) {
			out, _ := os.ReadFile(filepath.Join(dir, "job-"+id+".out"))
			t.Fatalf("the job did not get going: %s", out)
		}
		time.Sleep(200 * time.Millisecond)
	}
	time.Sleep(time.Second)
	before := len(mustRead(t, res).Points)
	if err := s.command("scancel", id).Run(); err != nil {
		t.Fatal(err)
	}
	s.wait(t, id, 60*time.Second)
	deadline = time.Now().Add(15 * time.Second)
	for len(tagged(tag)) > 0 {
		if time.Now().After(deadline) {
			left := tagged(tag)
			for _, pid := range left {
				syscall.Kill(pid, syscall.SIGKILL)
			}
			t.Fatalf("processes %v outlived the cancelled job", left)
		}
		time.Sleep(200 * time.Millisecond)
	}
	if after := len(mustRead(t, res).Points); after < before {
		t.Fatalf("cancelling lost points: %d before, %d after", before, after)
	}
	// The report of what it measured is written, and the job says how to go on.
	out, _ := os.ReadFile(filepath.Join(dir, "job-"+id+".out"))
	if _, err := os.Stat(filepath.Join(dir, "repro", "report.md")); err != nil {
		t.Errorf("no report.md after scancel: %v\njob output:\n%s", err, out)
	}
	if !strings.Contains(string(out), "submit the same job again to resume") {
		t.Errorf("the job does not say how to resume:\n%s", out)
	}
	// The same submission, without the hang, resumes.
	var env2 []string
	for _, kv := range env {
		if !strings.HasPrefix(kv, "NVSHBENCH_FAKE_HANG_SIZE=") {
			env2 = append(env2, kv)
		}
	}
	id2, out2 := s.sbatch(t, dir, env2, filepath.Join(root, "scripts/slurm-reproduce.sbatch"))
	// The first phase (RMA) had points written before the cancel: fewer to measure than planned.
	m := regexp.MustCompile(`(\d+) point\(s\) → \S+\n(?:.*\n)*?nvshbench: (\d+) point\(s\) to measure`).FindStringSubmatch(out2)
	if code := s.exitCode(id2); code != 0 || m == nil || atoi(m[2]) >= atoi(m[1]) {
		ents, _ := os.ReadDir(dir)
		t.Errorf("resubmission %s: exit %d, output:\n%s\n%v", id2, code, out2, ents)
	}
}

func atoi(s string) int {
	v, _ := strconv.Atoi(s)
	return v
}

// A rank killed under srun: rank 0 records the point in progress as an
// error (its peer never answers) and the step exits non-zero.
func TestSrunRankKilled(t *testing.T) {
	s := needSlurm(t)
	dir := t.TempDir()
	out := filepath.Join(dir, "killed.jsonl")
	tag := fmt.Sprintf("NVSHBENCH_TEST_TAG=rank-%d-%d", os.Getpid(), time.Now().UnixNano())
	cmd := s.command("srun", "-n", "2", "--overcommit", os.Args[0], "run", "--shim", "fake", "--sizes", "4K,1M", "--samples", "3", "--timeout", "8s",
		"--out", out, "rma/put/block")
	cmd.Env = append(testEnv("NVSHBENCH_FAKE_RDV="+filepath.Join(dir, "rdv"), "NVSHBENCH_FAKE_HANG_SIZE=1048576", tag), "SLURM_CONF="+s.conf)
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stderr, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Rank 1: the process of this tag with SLURM_PROCID=1.
	deadline := time.Now().Add(30 * time.Second)
	victim := 0
	for victim == 0 {
		for _, pid := range tagged(tag) {
			env, _ := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "environ"))
			cl, _ := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "cmdline"))
			if bytes.Contains(env, []byte("\x00SLURM_PROCID=1\x00")) && bytes.HasPrefix(cl, []byte(os.Args[0])) {
				victim = pid
			}
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatalf("rank 1 did not start: %s", stderr.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
	for { // until rank 0 has written the 4 KiB point and waits in the 1 MiB one
		if f, err := record.ReadFile(out); err == nil && len(f.Points) > 0 {
			break
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatalf("no point written: %s", stderr.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
	syscall.Kill(victim, syscall.SIGKILL)
	err := cmd.Wait()
	if err == nil {
		t.Errorf("the step exited 0 after a rank was killed: %s", stderr.String())
	}
	f := mustRead(t, out)
	last := f.Points[len(f.Points)-1]
	if last.Status != record.StatusError || !strings.Contains(last.Reason, "slurm") {
		t.Errorf("the point in progress: %s %q\n%s", last.Status, last.Reason, stderr.String())
	}
	if left := tagged(tag); len(left) > 0 {
		for _, pid := range left {
			syscall.Kill(pid, syscall.SIGKILL)
		}
		t.Errorf("processes %v left after the step", left)
	}
}

// The shipped scripts never replace a file they did not write, report a
// run with a failed point, and pass NVSHBENCH_ARGS through word by word:
// a glob reaches nvshbench as written, though a folder rma/ in the submit
// folder would match it.
func TestSbatchKeepsFilesReportsFailuresPassesGlobs(t *testing.T) {
	s := needSlurm(t)
	root := repoRoot(t)
	exe := nvshbenchExe(t)
	globDir := func(t *testing.T) string { // a submit folder where rma/put/b* and rma/* match files
		dir := t.TempDir()
		if err := os.MkdirAll(filepath.Join(dir, "rma", "put"), 0o755); err != nil {
			t.Fatal(err)
		}
		for _, f := range []string{"rma/put/bogus", "rma/notes"} {
			if err := os.WriteFile(filepath.Join(dir, f), nil, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		return dir
	}
	notes := []byte("# my notes\nnot a report\n")

	t.Run("multinode", func(t *testing.T) {
		dir := globDir(t)
		if err := os.WriteFile(filepath.Join(dir, "mn.md"), notes, 0o644); err != nil {
			t.Fatal(err)
		}
		env := testEnv("NVSHBENCH="+exe, "NVSHBENCH_OUT=mn.jsonl", "NVSHBENCH_FAKE_RDV="+filepath.Join(dir, "rdv"),
			"NVSHBENCH_FAKE_CORRUPT_SIZE=4096", "NVSHBENCH_ARGS=--sizes 4K,1M  --samples 3\n--timeout 20s\trma/put/b*")
		id, out := s.sbatch(t, dir, env, "--nodes=1", "--ntasks-per-node=2", filepath.Join(root, "scripts/slurm-multinode.sbatch"))
		if b, _ := os.ReadFile(filepath.Join(dir, "mn.md")); !bytes.Equal(b, notes) {
			t.Errorf("the user's mn.md was replaced: %q\njob output:\n%s", b, out)
		}
		f, err := record.ReadFile(filepath.Join(dir, "mn.jsonl"))
		if err != nil {
			t.Fatalf("the job's results: %v\njob output:\n%s", err, out)
		}
		if n := len(f.Header.Argv); n == 0 || f.Header.Argv[n-1] != "rma/put/b*" {
			t.Errorf("NVSHBENCH_ARGS did not reach nvshbench as written: argv %q", f.Header.Argv)
		}
		failed := 0
		for _, p := range f.Points {
			if p.Status == record.StatusFailedVerification {
				failed++
			}
		}
		if failed == 0 {
			t.Errorf("no point failed verification: the knob did not bite\n%s", out)
		}
		if code := s.exitCode(id); code != 1 {
			t.Errorf("a run with a failed point: job exit %d, want the run's 1\n%s", code, out)
		}
		alt := filepath.Join(dir, "mn-"+id+".md")
		rep, err := os.ReadFile(alt)
		if err != nil || !strings.HasPrefix(string(rep), "<!-- written by nvshbench's slurm-multinode.sbatch") || !strings.Contains(string(rep), "failed-verification") {
			t.Errorf("no report of the failed run in %s (%v): %s\njob output:\n%s", alt, err, rep, out)
		}
		if !strings.Contains(out, "mn.md exists and this script did not write it") {
			t.Errorf("the job does not say where the report went:\n%s", out)
		}
		// Submitted again with the report of its own in place: that one it
		// replaces (and the user's mn.md still stays).
		if err := os.Rename(alt, filepath.Join(dir, "mn2.md")); err != nil {
			t.Fatal(err)
		}
		env = testEnv("NVSHBENCH="+exe, "NVSHBENCH_OUT=mn2.jsonl", "NVSHBENCH_FAKE_RDV="+filepath.Join(dir, "rdv2"),
			"NVSHBENCH_ARGS=--sizes 4K --samples 3 rma/put/block")
		id, out = s.sbatch(t, dir, env, "--nodes=1", "--ntasks-per-node=2", filepath.Join(root, "scripts/slurm-multinode.sbatch"))
		rep, _ = os.ReadFile(filepath.Join(dir, "mn2.md"))
		if code := s.exitCode(id); code != 0 || strings.Contains(string(rep), "failed-verification") || !strings.Contains(string(rep), "Fig. 4") {
			t.Errorf("a report of the script's own was not replaced: exit %d\n%s\njob output:\n%s", code, rep, out)
		}
		if b, _ := os.ReadFile(filepath.Join(dir, "mn.md")); !bytes.Equal(b, notes) {
			t.Errorf("the user's mn.md was replaced by the second job")
		}
	})

	t.Run("reproduce", func(t *testing.T) {
		// A failed point: every sweep still runs, report.md is written, and
		// the job exits 1. The glob is --label's value.
		dir := globDir(t)
		env := testEnv("NVSHBENCH="+exe, "NVSHBENCH_OUT=repro", "NVSHBENCH_FAKE_CORRUPT_SIZE=1024", "NVSHBENCH_ARGS=--quick --label rma/*")
		id, out := s.sbatch(t, dir, env, filepath.Join(root, "scripts/slurm-reproduce.sbatch"))
		if code := s.exitCode(id); code != 1 {
			t.Errorf("reproduce with a failed point: job exit %d, want 1\n%s", code, out)
		}
		f, err := record.ReadFile(filepath.Join(dir, "repro", "results.jsonl"))
		if err != nil {
			t.Fatalf("%v\njob output:\n%s", err, out)
		}
		if f.Header.Label != "rma/*" {
			t.Errorf("NVSHBENCH_ARGS did not reach nvshbench as written: label %q, argv %q", f.Header.Label, f.Header.Argv)
		}
		ids := map[string]bool{}
		for _, p := range f.Points {
			ids[strings.SplitN(p.ID, "/", 2)[0]] = true
		}
		if !ids["latency"] || !ids["collectives"] || !ids["moe"] {
			t.Errorf("the sweeps after the failed point did not run: %v", ids)
		}
		if _, err := os.Stat(filepath.Join(dir, "repro", "report.md")); err != nil {
			t.Errorf("no report.md after a failed point: %v\n%s", err, out)
		}
		if !strings.Contains(out, "SYNTHETIC") {
			t.Errorf("the job's output does not say the numbers are synthetic:\n%s", out)
		}

		// A folder of the user's with a report.md: refused, nothing written.
		dir = t.TempDir()
		user := filepath.Join(dir, "repro", "report.md")
		os.Mkdir(filepath.Dir(user), 0o755)
		if err := os.WriteFile(user, notes, 0o644); err != nil {
			t.Fatal(err)
		}
		id, out = s.sbatch(t, dir, testEnv("NVSHBENCH="+exe, "NVSHBENCH_OUT=repro", "NVSHBENCH_ARGS=--quick"), filepath.Join(root, "scripts/slurm-reproduce.sbatch"))
		if code := s.exitCode(id); code != 2 || !strings.Contains(out, "not a reproduce folder") {
			t.Errorf("a folder of the user's: job exit %d\n%s", code, out)
		}
		if b, _ := os.ReadFile(user); !bytes.Equal(b, notes) {
			t.Errorf("the user's report.md was replaced: %q", b)
		}
		if ents, _ := os.ReadDir(filepath.Dir(user)); len(ents) != 1 {
			t.Errorf("files written into the user's folder: %v", ents)
		}
	})
}

// srun -n 8 and -n 16 on fake GPUs (a node of 8, two nodes of 8): rank 0's
// file lists every PE's GPU and node, every collective keeps every PE's
// time (gathered at rank 0) and names the late PE, and each path's pair is
// measured.
func TestSrunOnAFakeNodeAndCluster(t *testing.T) {
	s := needSlurm(t)
	for _, c := range []struct {
		nodes int
		path  string
		to    int
	}{{1, "p2p", 1}, {2, "ibgda", 8}} {
		n := 8 * c.nodes
		dir := t.TempDir()
		out := filepath.Join(dir, "srun.jsonl")
		cmd := s.command("srun", "-n", strconv.Itoa(n), "--overcommit", "--chdir", dir, os.Args[0], "run", "--shim", "fake", "--out", out, "--path", c.path)
		cmd.Args = append(cmd.Args, nodeBenches...)
		cmd.Env = append(testEnv("NVSHBENCH_FAKE_RDV="+filepath.Join(dir, "rdv"), "NVSHBENCH_FAKE_GPUS=8", fmt.Sprintf("NVSHBENCH_FAKE_NODES=%d", c.nodes),
			"NVSHBENCH_FAKE_TOPO=late:3=100us"), "SLURM_CONF="+s.conf)
		b, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("srun -n %d: %v\n%s", n, err, b)
		}
		checkFakeJob(t, fmt.Sprintf("srun -n %d", n), mustRead(t, out), n, c.nodes, c.to)
	}
}

// Values of the submitter's that look like options (an output named
// -x.jsonl) reach nvshbench, grep and the report as names: the multinode
// job writes its results and their report, the reproduce job its folder.
func TestSbatchValuesThatLookLikeOptions(t *testing.T) {
	s := needSlurm(t)
	root := repoRoot(t)
	exe := nvshbenchExe(t)
	dir := t.TempDir()
	env := testEnv("NVSHBENCH="+exe, "NVSHBENCH_OUT=-x.jsonl", "NVSHBENCH_FAKE_RDV="+filepath.Join(dir, "rdv"),
		"NVSHBENCH_ARGS=--sizes 4K --samples 3 rma/put/block")
	id, out := s.sbatch(t, dir, env, "--nodes=1", "--ntasks-per-node=2", filepath.Join(root, "scripts/slurm-multinode.sbatch"))
	rep, err := os.ReadFile(filepath.Join(dir, "-x.md"))
	if code := s.exitCode(id); code != 0 || err != nil || !strings.Contains(string(rep), "Fig. 4") {
		t.Errorf("NVSHBENCH_OUT=-x.jsonl: job exit %d, report %v %q\njob output:\n%s", code, err, rep, out)
	}
	dir = t.TempDir()
	env = testEnv("NVSHBENCH="+exe, "NVSHBENCH_OUT=-r", "NVSHBENCH_ARGS=--quick")
	id, out = s.sbatch(t, dir, env, filepath.Join(root, "scripts/slurm-reproduce.sbatch"))
	if _, err := os.Stat(filepath.Join(dir, "-r", "report.md")); s.exitCode(id) != 0 || err != nil {
		t.Errorf("NVSHBENCH_OUT=-r: job exit %d, %v\njob output:\n%s", s.exitCode(id), err, out)
	}
}

// scancel of the multinode job: the job still writes the report of what
// rank 0 wrote, and says what works next (a run under srun cannot resume:
// another NVSHBENCH_OUT); the same submission is refused with exit 2
// before anything starts, saying so.
func TestScancelMultinodeReportsAndAdvises(t *testing.T) {
	s := needSlurm(t)
	root := repoRoot(t)
	exe := nvshbenchExe(t)
	dir := t.TempDir()
	tag := fmt.Sprintf("NVSHBENCH_TEST_TAG=mn-scancel-%d-%d", os.Getpid(), time.Now().UnixNano())
	env := testEnv("NVSHBENCH="+exe, "NVSHBENCH_OUT=mn.jsonl", "NVSHBENCH_FAKE_RDV="+filepath.Join(dir, "rdv"), "NVSHBENCH_FAKE_HANG_SIZE=1048576", tag,
		"NVSHBENCH_ARGS=--sizes 4K,1M --samples 3 --timeout 120s rma/put/block")
	cmd := s.command("sbatch", "--parsable", "--gpus-per-node=0", "--overcommit", "--nodes=1", "--ntasks-per-node=2", "-o", filepath.Join(dir, "job-%j.out"),
		filepath.Join(root, "scripts/slurm-multinode.sbatch"))
	cmd.Dir, cmd.Env = dir, append(env, "SLURM_CONF="+s.conf)
	b, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("sbatch: %v %s", err, b)
	}
	id := strings.TrimSpace(string(b))
	res := filepath.Join(dir, "mn.jsonl")
	deadline := time.Now().Add(60 * time.Second)
	for { // until rank 0 waits in the hung 1 MiB point with points written
		if f, err := record.ReadFile(res); err == nil && len(f.Points) > 1 {
			break
		}
		if time.Now().After(deadline) {
			out, _ := os.ReadFile(filepath.Join(dir, "job-"+id+".out"))
			s.command("scancel", id).Run()
			t.Fatalf("the job did not get going: %s", out)
		}
		time.Sleep(200 * time.Millisecond)
	}
	time.Sleep(time.Second)
	if err := s.command("scancel", id).Run(); err != nil {
		t.Fatal(err)
	}
	s.wait(t, id, 60*time.Second)
	out, _ := os.ReadFile(filepath.Join(dir, "job-"+id+".out"))
	rep, err := os.ReadFile(filepath.Join(dir, "mn.md"))
	if err != nil || !strings.Contains(string(rep), "Fig. 4") {
		t.Errorf("no report after scancel: %v\njob output:\n%s", err, out)
	}
	if strings.Contains(string(out), "run the same command again") || !strings.Contains(string(out), "another NVSHBENCH_OUT") || strings.Contains(string(out), "interrupted: 0 point(s)") {
		t.Errorf("the advice after scancel:\n%s", out)
	}
	for _, pid := range tagged(tag) {
		syscall.Kill(pid, syscall.SIGKILL)
	}
	// The same submission: refused before it starts, exit 2, saying why.
	var env2 []string
	for _, kv := range env {
		if !strings.HasPrefix(kv, "NVSHBENCH_FAKE_HANG_SIZE=") {
			env2 = append(env2, kv)
		}
	}
	id2, out2 := s.sbatch(t, dir, env2, "--nodes=1", "--ntasks-per-node=2", filepath.Join(root, "scripts/slurm-multinode.sbatch"))
	if code := s.exitCode(id2); code != 2 || !strings.Contains(out2, "another NVSHBENCH_OUT") {
		t.Errorf("the same submission again: job exit %d, want 2 saying what to do:\n%s", code, out2)
	}
}
