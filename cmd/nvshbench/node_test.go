package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nvshbench/nvshbench/record"
)

// fakeCluster sets the fake GPU layer's node size and node count.
func fakeCluster(t *testing.T, gpus, nodes int, topo string) {
	t.Helper()
	t.Setenv("NVSHBENCH_FAKE_GPUS", fmt.Sprint(gpus))
	t.Setenv("NVSHBENCH_FAKE_NODES", fmt.Sprint(nodes))
	t.Setenv("NVSHBENCH_FAKE_TOPO", topo)
}

// nodeBenches are a point-to-point row, a round trip and a collective.
var nodeBenches = []string{"--sizes", "4K,1M", "--samples", "3", "--timeout", "30s", "rma/put/block", "latency/put/block", "collectives/allreduce/nccl-ring"}

// runFake runs nodeBenches (or benches) on the fake layer and reads the file.
func runFake(t *testing.T, extra []string, benches ...string) *record.File {
	t.Helper()
	if len(benches) == 0 {
		benches = nodeBenches
	}
	out := filepath.Join(t.TempDir(), "node.jsonl")
	args := append(append([]string{"run", "--shim", "fake", "--out", out}, extra...), benches...)
	if _, stderr, code := nvshbench(t, args...); code != 0 {
		t.Fatalf("%v: exit %d: %s", args, code, stderr)
	}
	return mustRead(t, out)
}

// The local launcher starts a worker per GPU of a fake 8-GPU node and of
// two fake nodes: the header lists every GPU with its node, the NVSwitch
// ceilings of each node's pairs, and every point is measured.
func TestLocalLauncherOnAFakeNodeAndCluster(t *testing.T) {
	for _, c := range []struct{ gpus, nodes int }{{8, 1}, {8, 2}} {
		fakeCluster(t, c.gpus, c.nodes, "")
		f := runFake(t, nil)
		h := f.Header
		n := c.gpus * c.nodes
		uuids, hosts := map[string]bool{}, map[string]bool{}
		for _, g := range h.GPUs {
			uuids[g.UUID], hosts[g.Host] = true, true
		}
		if h.PEs != n || len(h.GPUs) != n || len(uuids) != n || len(hosts) != c.nodes || h.Nodes != c.nodes {
			t.Errorf("%d×%d: header PEs %d nodes %d, %d GPUs (%d UUIDs) on %d hosts", c.nodes, c.gpus, h.PEs, h.Nodes, len(h.GPUs), len(uuids), len(hosts))
		}
		switched := 0
		for _, l := range h.Links {
			if l.Kind == record.LinkNVSwitch && l.Bps == 450e9 {
				switched++
			}
		}
		if want := c.nodes * c.gpus * (c.gpus - 1) / 2; switched != want {
			t.Errorf("%d×%d: %d NVSwitch ceilings of 450 GB/s, want one a pair of a node: %d", c.nodes, c.gpus, switched, want)
		}
		for _, p := range f.Points {
			if p.Status != record.StatusOK || p.Params.PEs != n {
				t.Errorf("%d×%d: %s %s: %s %s", c.nodes, c.gpus, p.ID, p.Params.Key(), p.Status, p.Reason)
			}
		}
	}
}

// Refused input is one line and exit 2: a fake topology that does not
// parse, more GPUs than are visible.
func TestFakeClusterBadInput(t *testing.T) {
	fakeCluster(t, 8, 1, "")
	for _, c := range []struct {
		env  string
		args []string
		want string
	}{
		{"link:0-9=50%", []string{"run", "--shim", "fake", "rma/put/block"}, `"9" is not a GPU of the fake cluster`},
		{"clock:2=fast", []string{"reproduce", "--quick", "--shim", "fake", "--out", filepath.Join(t.TempDir(), "r")}, "write items separated by ';'"},
		{"", []string{"run", "--shim", "fake", "--gpus", "9", "rma/put/block"}, "--gpus 9: only 8 GPU(s) visible here; ask for at most 8"},
	} {
		t.Setenv("NVSHBENCH_FAKE_TOPO", c.env)
		_, stderr, code := nvshbench(t, c.args...)
		if code != exitUsage || !strings.Contains(stderr, c.want) || strings.Count(strings.TrimSpace(stderr), "\n") != 0 {
			t.Errorf("%q %v: exit %d, %q; want exit 2 and one line with %q", c.env, c.args, code, stderr, c.want)
		}
	}
}

// Point-to-point rows measure the pair their path asks for, recorded in
// the header and in each point: on two fake nodes, --path p2p two GPUs of
// a node and --path ibgda a GPU of each node; one PE has no pair across
// nodes and waives the row saying so; --pair names any pair.
func TestPairForEachPath(t *testing.T) {
	fakeCluster(t, 8, 2, "")
	pairOf := func(f *record.File, id string) *record.Pair {
		for _, p := range f.Points {
			if p.ID == id {
				return p.Pair
			}
		}
		return nil
	}
	for _, c := range []struct {
		path, effective string
		to              int
		node            string
		kind            string
	}{{"p2p", "p2p", 1, "fake-node0", record.PairSameNode}, {"ibgda", "ibgda", 8, "fake-node1", record.PairAcrossNodes}} {
		f := runFake(t, []string{"--path", c.path})
		h := f.Header.Pair
		if h == nil || h.From.PE != 0 || h.To.PE != c.to || h.To.Node != c.node || h.To.GPU != c.to%8 || h.Kind != c.kind {
			t.Errorf("--path %s: header pair %+v", c.path, h)
		}
		for _, p := range f.Points {
			switch {
			case strings.HasPrefix(p.ID, "collectives/"):
				if p.Pair != nil || p.Status != record.StatusOK {
					t.Errorf("--path %s: %s: %s, pair %+v", c.path, p.ID, p.Status, p.Pair)
				}
			case strings.HasPrefix(p.ID, "limit/") && c.path == "ibgda":
				if p.Status != record.StatusWaived || !strings.Contains(p.Reason, "load/store") || !strings.Contains(p.Reason, "PE 8") {
					t.Errorf("--path ibgda: %s: %s %s", p.ID, p.Status, p.Reason)
				}
			default:
				if p.Status != record.StatusOK || p.Effective != c.effective || p.Pair == nil || *p.Pair != *h {
					t.Errorf("--path %s: %s %s: %s %s effective %s pair %+v", c.path, p.ID, p.Params.Key(), p.Status, p.Reason, p.Effective, p.Pair)
				}
			}
		}
	}
	// A named pair: its points carry it in their parameters.
	fakeCluster(t, 8, 1, "")
	f := runFake(t, []string{"--pair", "3:5"})
	if p := pairOf(f, "rma/put/block"); p == nil || p.From.PE != 3 || p.To.PE != 5 || p.To.GPU != 5 {
		t.Errorf("--pair 3:5: %+v", p)
	}
	for _, p := range f.Points {
		if want := map[bool]string{true: "", false: "3:5"}[strings.HasPrefix(p.ID, "collectives/")]; p.Params.Pair != want {
			t.Errorf("--pair 3:5: %s params.pair %q", p.ID, p.Params.Pair)
		}
	}
	// One PE has no pair across nodes: waived with which pair it lacks.
	fakeCluster(t, 1, 1, "")
	f = runFake(t, []string{"--path", "ibgda"}, "--sizes", "4K", "--samples", "2", "rma/put/block")
	for _, p := range f.Points {
		if p.Status != record.StatusWaived || !strings.Contains(p.Reason, "a pair of PEs on different nodes") || !strings.Contains(p.Reason, "one PE") {
			t.Errorf("one PE over ibgda: %s %s %q", p.ID, p.Status, p.Reason)
		}
	}
	if f.Header.Pair != nil || !strings.Contains(strings.Join(f.Header.Notes, " "), "point-to-point rows: --path ibgda measures a pair of PEs on different nodes") {
		t.Errorf("one PE over ibgda: header pair %+v, notes %q", f.Header.Pair, f.Header.Notes)
	}
	// A pair the job lacks is refused before anything runs.
	fakeCluster(t, 8, 1, "")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--pair", "0:9"}, "--pair 0:9: this job has 8 PE(s), 0..7"},
		{[]string{"--pair", "0:1", "--path", "ibgda"}, "--pair 0:1: both PEs run on"},
		{[]string{"--pair", "0-1"}, "want FROM:TO"},
	} {
		_, stderr, code := nvshbench(t, append(append([]string{"run", "--shim", "fake"}, c.args...), "rma/put/block")...)
		if code != exitUsage || !strings.Contains(stderr, c.want) || strings.Count(strings.TrimSpace(stderr), "\n") != 0 {
			t.Errorf("%v: exit %d %q, want exit 2 and one line with %q", c.args, code, stderr, c.want)
		}
	}
}

// The readers use every PE's time: report names a late PE as the
// collectives' straggler with its GPU and node and sets the median and
// fastest PE beside the figure (the slowest's), and a pair beside a
// point-to-point figure; compare says when two runs measured different
// pairs; model fits the figures.
func TestReadersShowEveryPE(t *testing.T) {
	dir := t.TempDir()
	p2p, oneGPU := filepath.Join(dir, "p2p.jsonl"), filepath.Join(dir, "one.jsonl")
	for _, c := range []struct {
		out         string
		gpus, nodes int
		extra       []string
	}{{p2p, 8, 2, nil}, {oneGPU, 1, 1, []string{"--pes-per-gpu", "16"}}} {
		fakeCluster(t, c.gpus, c.nodes, "late:5=200us")
		if _, stderr, code := nvshbench(t, append(append([]string{"run", "--shim", "fake", "--out", c.out}, c.extra...), nodeBenches...)...); code != 0 {
			t.Fatalf("run %v: exit %d %s", c.extra, code, stderr)
		}
	}
	f := mustRead(t, p2p)
	for _, p := range f.Points {
		if strings.HasPrefix(p.ID, "collectives/") && (p.Straggler == nil || p.Straggler.PE != 5 || p.Straggler.Node != "fake-node0" || !p.Straggler.Late()) {
			t.Errorf("%s %s: straggler %v", p.ID, p.Params.Key(), p.Straggler)
		}
	}
	out, stderr, code := nvshbench(t, "report", "--points", "--wide", "--format", "markdown", p2p)
	for _, want := range []string{"straggler PE 5 (GPU 5, fake-node0): the others waited for it", "16 PEs, the figure the slowest's: median PE",
		"p2p, PE 0 (GPU 0, fake-node0) → PE 1 (GPU 1, fake-node0)"} {
		if code != 0 || !strings.Contains(out, want) {
			t.Errorf("report --points: exit %d, no %q in\n%s%s", code, want, out, stderr)
		}
	}
	out, stderr, _ = nvshbench(t, "compare", p2p, oneGPU)
	if !strings.Contains(out+stderr, `the point-to-point rows' pair is "PE 0 → PE 1 (same-node)"`) || !strings.Contains(out+stderr, `"PE 0 → PE 1 (same-gpu)"`) {
		t.Errorf("compare of a p2p and an ibgda run says nothing of their pairs:\n%s%s", out, stderr)
	}
	if _, stderr, code := nvshbench(t, "model", p2p); code != 0 {
		t.Errorf("model: exit %d %s", code, stderr)
	}
}

// A PE that dies mid-point: the point is an error naming the PE, its GPU
// and node; every point measured before it is kept and the run goes on
// with new workers (a failed point: exit 1).
func TestPEDiesMidPoint(t *testing.T) {
	fakeCluster(t, 8, 1, "die:5@1M")
	out := filepath.Join(t.TempDir(), "die.jsonl")
	_, stderr, code := nvshbench(t, "run", "--shim", "fake", "--out", out, "--sizes", "4K,1M,16M", "--samples", "2", "--timeout", "30s",
		"rma/put/block", "collectives/allreduce/nccl-ring")
	if code != exitError || !strings.Contains(stderr, "2 point(s) failed (2 errors") {
		t.Errorf("exit %d, want 1 and the failed points said: %s", code, stderr)
	}
	host, _ := os.Hostname()
	for _, p := range mustRead(t, out).Points {
		switch {
		case p.Params.Size == 1<<20:
			if p.Status != record.StatusError || !strings.Contains(p.Reason, fmt.Sprintf("the worker of PE 5 (GPU 5, %s) exited before finishing the point", host)) {
				t.Errorf("%s at 1 MiB: %s %q", p.ID, p.Status, p.Reason)
			}
		case p.Status != record.StatusOK:
			t.Errorf("%s %s: %s %s", p.ID, p.Params.Key(), p.Status, p.Reason)
		}
	}
}

// cliProcess starts this test binary as nvshbench with env added.
func cliProcess(t *testing.T, env []string, args ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(append(os.Environ(), "NVSHBENCH_TEST_CLI=1", "NVSHMEM_BOOTSTRAP=", "NVSHMEM_BOOTSTRAP_PMI=", "SLURM_MPI_TYPE="), env...)
	return cmd
}

// A node of the launcher's without a PE (Slurm allotted two, every task
// runs on one): every rank refuses the job before any point, in one line
// (exit 2), and nothing is written.
func TestNodeMissingFromTheJob(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "missing.jsonl")
	var cmds []*exec.Cmd
	var outs []*bytes.Buffer
	for r := 0; r < 2; r++ {
		cmd := cliProcess(t, []string{"NVSHBENCH_FAKE_RDV=" + filepath.Join(dir, "rdv"), "NVSHBENCH_FAKE_GPUS=2", "NVSHBENCH_FAKE_NODES=1",
			"SLURM_PROCID=" + fmt.Sprint(r), "SLURM_NTASKS=2", "SLURM_LOCALID=" + fmt.Sprint(r), "SLURM_NNODES=2"},
			"run", "--shim", "fake", "--sizes", "4K", "--samples", "2", "--out", out, "rma/put/block")
		var b bytes.Buffer
		cmd.Stdout, cmd.Stderr = &b, &b
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cmds, outs = append(cmds, cmd), append(outs, &b)
	}
	for r, cmd := range cmds {
		err := cmd.Wait()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		}
		msg := outs[r].String()
		if r == 0 { // rank 0 says what it will measure first
			msg = msg[strings.LastIndex(strings.TrimSpace(msg), "\n")+1:]
		}
		if code != exitUsage || !strings.Contains(msg, "slurm started this job on 2 nodes, but its 2 PE(s) run on 1") ||
			!strings.Contains(msg, "start tasks on every node") || strings.Count(strings.TrimSpace(msg), "\n") != 0 {
			t.Errorf("rank %d: exit %d, %q", r, code, outs[r].String())
		}
	}
	if _, err := os.Stat(out); err == nil {
		t.Error("a refused job wrote a results file")
	}
}

// mpirun starts 8 and 16 fake workers (a node of 8, two nodes of 8): rank
// 0's file lists every PE's GPU and node, every collective keeps every
// PE's time (gathered at rank 0), and the pair of each path is measured.
func TestMpirunOnAFakeNodeAndCluster(t *testing.T) {
	mpirun, err := exec.LookPath("mpirun")
	if err != nil {
		t.Skip("SKIPPED: no mpirun (Open MPI) on this machine; .ci/run installs it where it can")
	}
	for _, c := range []struct {
		nodes int
		path  string
		to    int
	}{{1, "p2p", 1}, {2, "ibgda", 8}} {
		n := 8 * c.nodes
		dir := t.TempDir()
		out := filepath.Join(dir, "mpirun.jsonl")
		cmd := exec.Command(mpirun, append([]string{"-np", fmt.Sprint(n), "--oversubscribe", "-x", "NVSHBENCH_TEST_CLI", "-x", "NVSHBENCH_FAKE_RDV",
			"-x", "NVSHBENCH_FAKE_GPUS", "-x", "NVSHBENCH_FAKE_NODES", "-x", "NVSHBENCH_FAKE_TOPO",
			os.Args[0], "run", "--shim", "fake", "--out", out, "--path", c.path}, nodeBenches...)...)
		cmd.Env = append(os.Environ(), "NVSHBENCH_TEST_CLI=1", "NVSHBENCH_FAKE_RDV="+filepath.Join(dir, "rdv"), "NVSHBENCH_FAKE_GPUS=8",
			fmt.Sprintf("NVSHBENCH_FAKE_NODES=%d", c.nodes), "NVSHBENCH_FAKE_TOPO=late:3=100us",
			"OMPI_ALLOW_RUN_AS_ROOT=1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1", "OMPI_MCA_plm_rsh_agent=", "NVSHMEM_BOOTSTRAP=", "NVSHMEM_BOOTSTRAP_PMI=")
		b, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("mpirun -np %d: %v\n%s", n, err, b)
		}
		checkFakeJob(t, fmt.Sprintf("mpirun -np %d", n), mustRead(t, out), n, c.nodes, c.to)
	}
}

// checkFakeJob checks a launcher's run of nodeBenches on n fake PEs over
// nodes nodes (PE 3 late): every PE's GPU and node in the header, the pair
// PE 0 → PE to of the run's path, every PE's time of every collective with
// PE 3 its straggler.
func checkFakeJob(t *testing.T, what string, f *record.File, n, nodes, to int) {
	t.Helper()
	h := f.Header
	if h.PEs != n || h.Nodes != nodes || len(h.GPUs) != n || h.GPUs[n-1].PE != n-1 || h.Pair == nil || h.Pair.To.PE != to {
		t.Errorf("%s: header PEs %d nodes %d, %d GPUs, pair %v", what, h.PEs, h.Nodes, len(h.GPUs), h.Pair)
	}
	for _, p := range f.Points {
		switch {
		case strings.HasPrefix(p.ID, "limit/") && to >= 8:
			if p.Status != record.StatusWaived {
				t.Errorf("%s: %s over the network: %s", what, p.ID, p.Status)
			}
		case p.Status != record.StatusOK || (!p.Verify.Checked && !strings.HasPrefix(p.ID, "limit/chase")): // the fake checks no chase
			t.Errorf("%s: %s %s: %s %s verify %+v", what, p.ID, p.Params.Key(), p.Status, p.Reason, p.Verify)
		case strings.HasPrefix(p.ID, "collectives/"):
			if len(p.PETimes) != n || p.PETimes[n-1].PE != n-1 || p.Straggler == nil || p.Straggler.PE != 3 {
				t.Errorf("%s: %s: %d PE times, straggler %v", what, p.ID, len(p.PETimes), p.Straggler)
			}
		case !strings.HasPrefix(p.ID, "limit/"):
			if p.Pair == nil || p.Pair.To.PE != to {
				t.Errorf("%s: %s: pair %v", what, p.ID, p.Pair)
			}
		}
	}
}

// reproduce --quick on a fake node of 8 GPUs and on two fake nodes of 8:
// every sweep runs on every PE, the collectives keep every PE's time, the
// point-to-point rows measure two GPUs of a node, and the report is written.
func TestReproduceOnAFakeNodeAndCluster(t *testing.T) {
	for _, nodes := range []int{1, 2} {
		fakeCluster(t, 8, nodes, "")
		dir := filepath.Join(t.TempDir(), "repro")
		if _, stderr, code := nvshbench(t, "reproduce", "--quick", "--shim", "fake", "--out", dir); code != 0 {
			t.Fatalf("%d node(s): exit %d %s", nodes, code, stderr)
		}
		f := mustRead(t, filepath.Join(dir, "results.jsonl"))
		n := 8 * nodes
		if f.Header.PEs != n || f.Header.Nodes != nodes {
			t.Errorf("%d node(s): header PEs %d nodes %d", nodes, f.Header.PEs, f.Header.Nodes)
		}
		every, pairs := 0, 0
		for _, p := range f.Points {
			switch {
			case p.Status != record.StatusOK:
			case len(p.PETimes) == n:
				every++
			case p.Pair != nil && p.Pair.Kind == record.PairSameNode && p.Pair.To.PE == 1:
				pairs++
			}
		}
		if every < 50 || pairs < 100 {
			t.Errorf("%d node(s): %d points with every PE's time, %d on a pair of a node", nodes, every, pairs)
		}
		if _, err := os.Stat(filepath.Join(dir, "report.md")); err != nil {
			t.Errorf("%d node(s): %v", nodes, err)
		}
	}
}

// reproduce on a machine with a NIC measures its IBGDA sweep into the same
// folder: that sweep's NVSHMEM variables (NVSHMEM_DISABLE_P2P,
// NVSHMEM_IB_ENABLE_IBGDA) are its points' own, not the file's, so it is no
// "other setup" refused after the other sweeps ran. On one node its rows are
// waived (no PE of another node to reach); on two they measure a pair across
// the nodes. Either way the run ends well and writes its report.
func TestReproduceWithANIC(t *testing.T) {
	sys := t.TempDir()
	if err := os.MkdirAll(filepath.Join(sys, "sys/class/infiniband/mlx5_0"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("NVSHBENCH_SYS_ROOT", sys)
	for _, nodes := range []int{1, 2} {
		fakeCluster(t, 2, nodes, "")
		dir := filepath.Join(t.TempDir(), "repro")
		if _, stderr, code := nvshbench(t, "reproduce", "--quick", "--shim", "fake", "--out", dir); code != 0 {
			t.Fatalf("%d node(s) with a NIC: exit %d %s", nodes, code, stderr)
		}
		f := mustRead(t, filepath.Join(dir, "results.jsonl"))
		if len(f.Header.Env) != 0 && f.Header.Env["NVSHMEM_DISABLE_P2P"] != "" {
			t.Errorf("%d node(s): the header carries the IBGDA sweep's variables: %v", nodes, f.Header.Env)
		}
		ok, waived := 0, 0
		for _, p := range f.Points {
			if p.Params.Path != "ibgda" {
				continue
			}
			if p.Params.Env["NVSHMEM_IB_ENABLE_IBGDA"] != "1" || p.Params.Env["NVSHMEM_DISABLE_P2P"] != "1" {
				t.Errorf("%d node(s): %s without the IBGDA variables of its own: %v", nodes, p.ID, p.Params.Env)
			}
			switch p.Status {
			case record.StatusOK:
				ok++
				if p.Pair == nil || p.Pair.Kind != record.PairAcrossNodes {
					t.Errorf("%d node(s): %s measured %v, not a pair across nodes", nodes, p.ID, p.Pair)
				}
			case record.StatusWaived:
				waived++
			}
		}
		if nodes == 1 && (ok != 0 || waived == 0) || nodes == 2 && ok == 0 {
			t.Errorf("%d node(s): %d IBGDA points ok, %d waived", nodes, ok, waived)
		}
		if _, err := os.Stat(filepath.Join(dir, "report.md")); err != nil {
			t.Errorf("%d node(s): no report: %v", nodes, err)
		}
	}
}
