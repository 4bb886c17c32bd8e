package main

import (
	"fmt"
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
