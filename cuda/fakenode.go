package cuda

import (
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/nvshbench/nvshbench/internal/units"
)

// FakeCluster is what the fake GPU layer stands for: Nodes nodes of GPUs
// GPUs each, joined as an H200 node is (NVSwitch, every pair NV18; a NIC
// per GPU between nodes), with the rates of each path and the faults a
// test injects. Every node's GPUs are visible to one process: device d is
// GPU d % GPUs of node d / GPUs, so one controller (or one machine's
// launcher) starts every PE of a fake cluster. Read from the environment
// by FakeClusterFromEnv:
//
//	NVSHBENCH_FAKE_GPUS=N    GPUs a node (default 1)
//	NVSHBENCH_FAKE_NODES=M   nodes (default 1)
//	NVSHBENCH_FAKE_TOPO=SPEC rates and faults, items separated by ';' (GPUs
//	                         numbered over the cluster, 0 .. N×M-1):
//	  pcie:G          GPU G has no NVLink: its pairs on its node cross PCIe
//	  link:A-B=P%     the NVLink path between GPUs A and B at P % of its rate
//	  clock:G=P%      GPU G's SMs at P % of their clock (power or thermal capping)
//	  late:PE=D       PE starts every iteration of what every PE runs (a collective,
//	                  a MoE step) D late (a duration: 20us): the others wait for it
//	  nic:G=P%        GPU G's NIC at P % of its rate
//	  node:N=P%       every NIC of node N at P % (a node on a worse switch)
//	  rate:KIND=R     the rate of a path in GB/s per direction: nvlink (a pair
//	                  over NVSwitch, default 450), pcie (63), nic (50)
//	  die:PE@SIZE     PE's process exits when it starts a point of SIZE bytes
type FakeCluster struct {
	GPUs, Nodes int
	PCIeOnly    map[int]bool       // GPUs without NVLink
	Link        map[[2]int]float64 // a pair's NVLink path: share of its rate (the pair ordered low, high)
	Clock       map[int]float64    // a GPU's clock: share of the nominal
	Late        map[int]float64    // a PE's lateness at each iteration, seconds
	NIC         map[int]float64    // a GPU's NIC: share of its rate
	NodeNIC     map[int]float64    // a node's NICs: share of their rate
	NVLinkBps   float64            // a pair over NVSwitch, bytes/s per direction
	PCIeBps     float64            // a pair over PCIe
	NICBps      float64            // a NIC
	Die         map[int]int64      // a PE that exits at a point of this size
}

// The fake's rates, bytes/s per direction: 18 NVLink 4 links of 25 GB/s
// through NVSwitch, PCIe gen 5 x16, a 400 Gb/s NIC.
const (
	fakeLinkBps   = 25e9
	fakeNVLinks   = 18
	fakePCIeBps   = 16 * 32e9 * 128 / 130 / 8
	fakeNICBps    = 50e9
	fakeTopoItems = "pcie:G, link:A-B=P%, clock:G=P%, late:PE=DURATION, nic:G=P%, node:N=P%, rate:nvlink|pcie|nic=GB/s, die:PE@SIZE"
)

// FakeClusterFromEnv reads the fake cluster from NVSHBENCH_FAKE_GPUS,
// NVSHBENCH_FAKE_NODES and NVSHBENCH_FAKE_TOPO; an error is one line that
// says what to write instead.
func FakeClusterFromEnv() (*FakeCluster, error) {
	c := &FakeCluster{GPUs: 1, Nodes: 1, PCIeOnly: map[int]bool{}, Link: map[[2]int]float64{}, Clock: map[int]float64{},
		Late: map[int]float64{}, NIC: map[int]float64{}, NodeNIC: map[int]float64{}, Die: map[int]int64{},
		NVLinkBps: fakeNVLinks * fakeLinkBps, PCIeBps: fakePCIeBps, NICBps: fakeNICBps}
	for _, v := range []struct {
		name string
		to   *int
	}{{"NVSHBENCH_FAKE_GPUS", &c.GPUs}, {"NVSHBENCH_FAKE_NODES", &c.Nodes}} {
		s := os.Getenv(v.name)
		if s == "" {
			continue
		}
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > MaxPEs {
			return nil, fmt.Errorf("%s=%s: want a count of 1..%d", v.name, s, MaxPEs)
		}
		*v.to = n
	}
	if c.GPUs*c.Nodes > MaxPEs {
		return nil, fmt.Errorf("NVSHBENCH_FAKE_GPUS=%d × NVSHBENCH_FAKE_NODES=%d: at most %d GPUs in all", c.GPUs, c.Nodes, MaxPEs)
	}
	spec := os.Getenv("NVSHBENCH_FAKE_TOPO")
	for _, item := range strings.Split(spec, ";") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		if why := c.parse(item); why != "" {
			return nil, fmt.Errorf("NVSHBENCH_FAKE_TOPO item %q: %s; write items separated by ';' (%s), GPUs numbered 0..%d over %d node(s) of %d",
				item, why, fakeTopoItems, c.Devices()-1, c.Nodes, c.GPUs)
		}
	}
	return c, nil
}

// parse adds one item of the topology spec ("": done, else what is wrong).
func (c *FakeCluster) parse(item string) string {
	kind, rest, ok := strings.Cut(item, ":")
	if !ok {
		return "no kind (a name before ':')"
	}
	target, value, hasValue := strings.Cut(rest, "=")
	gpu := func(s string) (int, string) {
		g, err := strconv.Atoi(s)
		if err != nil || g < 0 || g >= c.Devices() {
			return 0, fmt.Sprintf("%q is not a GPU of the fake cluster", s)
		}
		return g, ""
	}
	share := func() (float64, string) {
		v, err := strconv.ParseFloat(strings.TrimSuffix(value, "%"), 64)
		if !hasValue || !strings.HasSuffix(value, "%") || err != nil || !(v > 0 && v <= 100) {
			return 0, fmt.Sprintf("%q is not a share in (0, 100]%%", value)
		}
		return v / 100, ""
	}
	switch kind {
	case "pcie":
		g, why := gpu(target)
		if why == "" && hasValue {
			why = "takes no value"
		}
		c.PCIeOnly[g] = true
		return why
	case "link":
		a, b, ok := strings.Cut(target, "-")
		if !ok {
			return "want two GPUs A-B"
		}
		ga, why := gpu(a)
		if why != "" {
			return why
		}
		gb, why := gpu(b)
		if why != "" {
			return why
		}
		if ga == gb || ga/c.GPUs != gb/c.GPUs {
			return "an NVLink path joins two GPUs of one node"
		}
		v, why := share()
		c.Link[pairKey(ga, gb)] = v
		return why
	case "clock", "nic":
		g, why := gpu(target)
		if why != "" {
			return why
		}
		v, why := share()
		map[string]map[int]float64{"clock": c.Clock, "nic": c.NIC}[kind][g] = v
		return why
	case "node":
		n, err := strconv.Atoi(target)
		if err != nil || n < 0 || n >= c.Nodes {
			return fmt.Sprintf("%q is not a node of the fake cluster (0..%d)", target, c.Nodes-1)
		}
		v, why := share()
		c.NodeNIC[n] = v
		return why
	case "late":
		pe, err := strconv.Atoi(target)
		if err != nil || pe < 0 || pe >= MaxPEs {
			return fmt.Sprintf("%q is not a PE", target)
		}
		d, err := time.ParseDuration(value)
		if !hasValue || err != nil || d <= 0 {
			return fmt.Sprintf("%q is not a positive duration (20us)", value)
		}
		c.Late[pe] = d.Seconds()
		return ""
	case "rate":
		v, err := strconv.ParseFloat(strings.TrimSuffix(value, "GB/s"), 64)
		if !hasValue || err != nil || !(v > 0 && v < 1e6) {
			return fmt.Sprintf("%q is not a rate in GB/s", value)
		}
		to := map[string]*float64{"nvlink": &c.NVLinkBps, "pcie": &c.PCIeBps, "nic": &c.NICBps}[target]
		if to == nil {
			return fmt.Sprintf("%q is not a path (nvlink, pcie, nic)", target)
		}
		*to = v * 1e9
		return ""
	case "die":
		p, s, ok := strings.Cut(target, "@")
		pe, err := strconv.Atoi(p)
		if !ok || hasValue || err != nil || pe < 0 || pe >= MaxPEs {
			return "want PE@SIZE"
		}
		size, err := units.ParseSize(s)
		if err != nil {
			return err.Error()
		}
		c.Die[pe] = size
		return ""
	}
	return fmt.Sprintf("unknown kind %q", kind)
}

func pairKey(a, b int) [2]int {
	if a > b {
		a, b = b, a
	}
	return [2]int{a, b}
}

// Devices is the number of GPUs of the cluster.
func (c *FakeCluster) Devices() int { return c.GPUs * c.Nodes }

// NodeOf is the node of device d.
func (c *FakeCluster) NodeOf(d int) int { return d / c.GPUs }

// Host is the name of device d's node: this machine's for a cluster of
// one node, fake-nodeK otherwise.
func (c *FakeCluster) Host(d int) string {
	if c.Nodes == 1 {
		h, _ := os.Hostname()
		return h
	}
	return fmt.Sprintf("fake-node%d", c.NodeOf(d))
}

// shareOf is m[k], 1 where absent.
func shareOf(m map[int]float64, k int) float64 {
	if v, ok := m[k]; ok {
		return v
	}
	return 1
}

// ClockOf is device d's clock as a share of the nominal.
func (c *FakeCluster) ClockOf(d int) float64 { return shareOf(c.Clock, d) }

// PathBps is the rate of the path from device a to device b, bytes/s per
// direction: +Inf on one GPU (its memory: the operation's own rate limits
// it), NVLink (at the pair's share) or PCIe within a node, the slower NIC
// of the two (each at its node's share) between nodes.
func (c *FakeCluster) PathBps(a, b int) float64 {
	switch {
	case a == b:
		return math.Inf(1)
	case c.NodeOf(a) != c.NodeOf(b):
		return c.NICBps * min(shareOf(c.NIC, a)*shareOf(c.NodeNIC, c.NodeOf(a)), shareOf(c.NIC, b)*shareOf(c.NodeNIC, c.NodeOf(b)))
	case c.PCIeOnly[a] || c.PCIeOnly[b]:
		return c.PCIeBps
	}
	return c.NVLinkBps * c.linkShare(a, b)
}

func (c *FakeCluster) linkShare(a, b int) float64 {
	if v, ok := c.Link[pairKey(a, b)]; ok {
		return v
	}
	return 1
}

// Path is how a PE on device a reaches one on device b, as NVSHMEM would
// map it: its own GPU, load/store within a node, a remote transport
// between nodes.
func (c *FakeCluster) Path(a, b int) int {
	switch {
	case a == b:
		return PathLocal
	case c.NodeOf(a) == c.NodeOf(b):
		return PathP2P
	}
	return PathRemote
}

// LatencyBase is the fixed part of a round trip over the path from device
// a to device b: 1.2 µs over NVLink or one GPU, 1.8 µs over PCIe, 3 µs
// through the NICs.
func (c *FakeCluster) LatencyBase(a, b int) float64 {
	switch {
	case c.NodeOf(a) != c.NodeOf(b):
		return 3e-6
	case a != b && (c.PCIeOnly[a] || c.PCIeOnly[b]):
		return 1.8e-6
	}
	return 1.2e-6
}
