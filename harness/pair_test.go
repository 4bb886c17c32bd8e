package harness_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/nvshbench/nvshbench/harness"
	"github.com/nvshbench/nvshbench/record"
)

// placed is n PEs, pesPerGPU a GPU, gpusPerNode GPUs a node.
func placed(n, pesPerGPU, gpusPerNode int) []record.GPU {
	var out []record.GPU
	for pe := 0; pe < n; pe++ {
		g := pe / pesPerGPU
		out = append(out, record.GPU{PE: pe, Index: g % gpusPerNode, Host: fmt.Sprintf("node%d", g/gpusPerNode),
			UUID: fmt.Sprintf("GPU-%d", g)})
	}
	return out
}

// The pair of a path: p2p two GPUs of one node, else two PEs of one GPU,
// else PE 0 alone; ibgda and proxy two nodes; a job without one says which
// pair it lacks.
func TestChoosePair(t *testing.T) {
	for _, c := range []struct {
		name           string
		gpus           []record.GPU
		path           string
		want           harness.Pair
		kind, whyLacks string
	}{
		{"one PE, p2p", placed(1, 1, 8), "p2p", harness.Pair{0, 0}, record.PairLoopback, ""},
		{"one PE, ibgda", placed(1, 1, 8), "ibgda", harness.Pair{}, "", "this job has one PE"},
		{"8 PEs on one GPU", placed(8, 8, 1), "p2p", harness.Pair{0, 1}, record.PairSameGPU, ""},
		{"a node of 8", placed(8, 1, 8), "p2p", harness.Pair{0, 1}, record.PairSameNode, ""},
		{"a node of 8, two PEs a GPU", placed(16, 2, 8), "p2p", harness.Pair{0, 2}, record.PairSameNode, ""},
		{"a node of 8, proxy", placed(8, 1, 8), "proxy", harness.Pair{}, "", "all 8 PEs of this job run on node0"},
		{"two nodes of 8, p2p", placed(16, 1, 8), "p2p", harness.Pair{0, 1}, record.PairSameNode, ""},
		{"two nodes of 8, ibgda", placed(16, 1, 8), "ibgda", harness.Pair{0, 8}, record.PairAcrossNodes, ""},
		{"a GPU a node, p2p", placed(2, 1, 1), "p2p", harness.Pair{}, "", "each of the 2 PEs of this job runs on a node of its own"},
		{"a GPU a node, proxy", placed(2, 1, 1), "proxy", harness.Pair{0, 1}, record.PairAcrossNodes, ""},
	} {
		p, why := harness.ChoosePair(c.gpus, c.path)
		if c.whyLacks != "" {
			if !strings.Contains(why, c.whyLacks) || !strings.Contains(why, "--path "+c.path) {
				t.Errorf("%s: %v %q, want why with %q", c.name, p, why, c.whyLacks)
			}
			continue
		}
		if why != "" || p != c.want {
			t.Errorf("%s: %v %q, want %v", c.name, p, why, c.want)
			continue
		}
		rp := harness.RecordPair(c.gpus, p)
		if rp.Kind != c.kind || rp.From.PE != p.From || rp.To.PE != p.To || rp.To.Node != c.gpus[p.To].Host || rp.To.GPU != c.gpus[p.To].Index {
			t.Errorf("%s: recorded %+v", c.name, rp)
		}
	}
}

// A pair the run names is checked against the job and the path.
func TestCheckPair(t *testing.T) {
	two := placed(16, 1, 8)
	for _, c := range []struct {
		pair, path, want string
	}{
		{"3:5", "p2p", ""},
		{"3:12", "ibgda", ""},
		{"3:12", "p2p", "PE 3 runs on node0 and PE 12 on node1, and --path p2p measures a pair within a node"},
		{"3:5", "proxy", "both PEs run on node0, and --path proxy measures a pair across nodes"},
		{"3:16", "p2p", "this job has 16 PE(s), 0..15"},
	} {
		p, err := harness.ParsePair(c.pair)
		if err != nil {
			t.Fatal(err)
		}
		if why := harness.CheckPair(two, c.path, p); (c.want == "") != (why == "") || !strings.Contains(why, c.want) {
			t.Errorf("%s over %s: %q, want %q", c.pair, c.path, why, c.want)
		}
	}
	for _, bad := range []string{"3", "3:", "a:b", "-1:2", "1:64", "1,2"} {
		if _, err := harness.ParsePair(bad); err == nil || !strings.Contains(err.Error(), "want FROM:TO") {
			t.Errorf("%q: %v", bad, err)
		}
	}
}
