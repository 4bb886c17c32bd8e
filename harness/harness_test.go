package harness_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nvshbench/nvshbench/cuda"

	"github.com/nvshbench/nvshbench/harness"
	"github.com/nvshbench/nvshbench/record"
	_ "github.com/nvshbench/nvshbench/suites/moe"
	_ "github.com/nvshbench/nvshbench/suites/rma"
)

func TestConfigValidate(t *testing.T) {
	mod := []func(*harness.Config){
		func(c *harness.Config) { c.Threads = 100 },
		func(c *harness.Config) { c.Threads = 2048 },
		func(c *harness.Config) { c.CTAs = 0 },
		func(c *harness.Config) { c.Samples = 0 },
		func(c *harness.Config) { c.Path = "nvlink" },
		func(c *harness.Config) { c.Sizes = []int64{8, -1} },
		func(c *harness.Config) { c.Iters = -1 },
	}
	for i, m := range mod {
		c := harness.DefaultConfig()
		m(&c)
		if err := c.Validate(); err == nil {
			t.Errorf("case %d accepted", i)
		}
	}
	c := harness.DefaultConfig()
	if err := c.Validate(); err != nil {
		t.Error(err)
	}
}

func TestSelect(t *testing.T) {
	ids := func(pats ...string) []string {
		bs, err := harness.Select(pats)
		if err != nil {
			t.Fatalf("%v: %v", pats, err)
		}
		var out []string
		for _, b := range bs {
			out = append(out, b.ID)
		}
		return out
	}
	if got := ids("rma/put"); strings.Join(got, " ") != "rma/put/block rma/put/thread rma/put/warp" {
		t.Errorf("prefix rma/put = %v", got)
	}
	if got := ids("rma/*/block"); strings.Join(got, " ") != "rma/get-tma/block rma/get/block rma/iget/block rma/iput/block rma/put-incast/block rma/put-signal/block rma/put-tma/block rma/put/block" {
		t.Errorf("glob = %v", got)
	}
	if got := ids("rma/p"); len(got) != 1 || got[0] != "rma/p" {
		t.Errorf("exact rma/p = %v (must not take rma/put)", got)
	}
	for _, b := range ids() {
		if b == "rma/put/thread" {
			t.Error("default set includes thread-scope put")
		}
	}
	if _, err := harness.Select([]string{"rma/nope"}); err == nil || !strings.Contains(err.Error(), "unknown benchmark") {
		t.Errorf("unknown id: %v", err)
	}
	if _, err := harness.Select([]string{"[x"}); err == nil {
		t.Error("bad glob accepted")
	}
}

func TestPlanRunsLimitsFirstAndAddsThem(t *testing.T) {
	bs, _ := harness.Select([]string{"rma/put/block", "rma/g"})
	cfg := harness.DefaultConfig()
	cfg.Sizes = []int64{4096, 1 << 20}
	cfg.PEs = 2
	p := harness.BuildPlan(bs, &cfg)
	if len(p.Items) == 0 || !strings.HasPrefix(p.Items[0].ID, "limit/") || !strings.HasPrefix(p.Items[1].ID, "limit/") {
		t.Fatalf("plan starts with %v", p.Items[:2])
	}
	var sawRead, sawWrite bool
	for i, it := range p.Items {
		if it.Index != i || it.Params.PEs != 2 {
			t.Errorf("item %d: %+v", i, it)
		}
		sawRead = sawRead || it.ID == "limit/sm-copy-read"
		sawWrite = sawWrite || it.ID == "limit/sm-copy"
	}
	if !sawRead || !sawWrite {
		t.Error("the limits of put (sm-copy) and g (sm-copy-read) were not added")
	}
}

func TestMerge(t *testing.T) {
	cfg := harness.DefaultConfig()
	it := harness.Item{ID: "rma/put/block", Params: record.Params{Size: 1 << 20, Op: "put"}}
	ok := func() []*harness.Outcome {
		return []*harness.Outcome{
			{Samples: []float64{1e-5, 2e-5}, Iters: 10, Bytes: 1 << 20, Effective: "p2p", WorkSet: 1 << 20, L2Bytes: 60 << 20},
			{Checked: 1 << 20},
		}
	}
	limits := map[string]float64{"limit/sm-copy": 400e9}
	p := harness.Merge(it, ok(), nil, &cfg, limits)
	if p.Status != record.StatusOK || !p.Verify.Checked || !p.Verify.OK || p.Limit == nil || p.Limit.Value != 400e9 || !p.L2Resident {
		t.Fatalf("ok merge: %+v", p)
	}
	want := (float64(1<<20)/1e-5 + float64(1<<20)/2e-5) / 2 // median of the per-sample bandwidths
	if bw := p.Metrics[record.MetricBandwidth].Median; bw < want*(1-1e-12) || bw > want*(1+1e-12) {
		t.Errorf("median bandwidth %v", bw)
	}
	bad := ok()
	bad[1].Errors, bad[1].Detail = 5, "byte 3: got 0x00"
	if p := harness.Merge(it, bad, nil, &cfg, limits); p.Status != record.StatusFailedVerification || p.Verify.Errors != 5 || !strings.Contains(p.Reason, "PE 1: byte 3") {
		t.Errorf("failed verification merge: %+v", p)
	}
	w := ok()
	w[1].Waived = "no NIC"
	if p := harness.Merge(it, w, nil, &cfg, limits); p.Status != record.StatusWaived || p.Reason != "no NIC" {
		t.Errorf("waived merge: %+v", p)
	}
	if p := harness.Merge(it, ok(), []string{"PE 1: cuda error"}, &cfg, limits); p.Status != record.StatusError {
		t.Errorf("error merge: %+v", p)
	}
	if p := harness.Merge(it, []*harness.Outcome{ok()[0], nil}, nil, &cfg, limits); p.Status != record.StatusError {
		t.Errorf("missing rank merge: %+v", p)
	}
	nv := cfg
	nv.Verify = false
	if p := harness.Merge(it, ok(), nil, &nv, limits); p.Verify.Checked {
		t.Errorf("--no-verify merge claims a check: %+v", p.Verify)
	}
	// bidirectional: both PEs moved bytes
	bi := ok()
	bi[1].Bytes = 1 << 20
	if p := harness.Merge(it, bi, nil, &cfg, limits); p.Bytes != 2<<20 {
		t.Errorf("bidir bytes %d", p.Bytes)
	}
	lim := map[string]float64{}
	lp := harness.Merge(harness.Item{ID: "limit/sm-copy", Params: record.Params{Size: 1 << 30}}, ok(), nil, &cfg, lim)
	harness.RecordLimit(lim, &lp)
	if lim["limit/sm-copy"] <= 0 {
		t.Error("limit not recorded")
	}
}

// One cache rule for every family: a MoE dispatch whose tokens fit twice
// the L2 is cache-served as a put of the same working set is; a larger
// one, and a round trip, are not.
func TestMergeMarksEveryFamilyByTheCacheRule(t *testing.T) {
	cfg := harness.DefaultConfig()
	merge := func(id string, ws int64) record.Point {
		outs := []*harness.Outcome{{Samples: []float64{1e-4, 1e-4}, Iters: 10, Bytes: ws, Effective: "local", WorkSet: ws, L2Bytes: 60 << 20, Checked: 1}}
		return harness.Merge(harness.Item{ID: id, Params: record.Params{Size: ws, Op: "dispatch", PEs: 1}}, outs, nil, &cfg, nil)
	}
	for _, c := range []struct {
		id   string
		ws   int64
		want bool
	}{
		{"moe/dispatch/nvshmem", 14 << 20, true}, {"moe/combine/nccl", 112 << 20, true}, {"moe/dispatch/nccl-lsa", 224 << 20, false},
		{"rma/put/block", 14 << 20, true}, {"latency/put/block", 64, false},
	} {
		if p := merge(c.id, c.ws); p.Status != record.StatusOK || p.L2Resident != c.want {
			t.Errorf("%s at %d B: %s, l2_resident %v; want %v", c.id, c.ws, p.Status, p.L2Resident, c.want)
		}
	}
}

func TestNCCLDeviceAPIMissing(t *testing.T) {
	job := func(versions ...int32) *harness.Job {
		j := &harness.Job{}
		for i, v := range versions {
			j.PEs = append(j.PEs, cuda.Info{MyPE: int32(i), NCCLVersion: v, Device: int32(i), UUID: [48]byte{byte('a' + i)}})
		}
		j.Paths = make([][]int, len(versions))
		for a := range j.Paths {
			j.Paths[a] = make([]int, len(versions))
			for b := range j.Paths[a] {
				if a != b {
					j.Paths[a][b] = cuda.PathP2P
				}
			}
		}
		return j
	}
	if why := job(22809, 22809).NCCLDeviceAPIMissing(); why != "" {
		t.Errorf("2.28.9 on both PEs: %s", why)
	}
	if why := job(22809, 22705).NCCLDeviceAPIMissing(); !strings.Contains(why, "PE 1") || !strings.Contains(why, "2.27.5") {
		t.Errorf("2.27.5 on PE 1: %q", why)
	}
	if why := job(22809, 0).NCCLDeviceAPIMissing(); !strings.Contains(why, "not loadable on PE 1") {
		t.Errorf("no NCCL on PE 1: %q", why)
	}
}

// The host probe is exchanged: a capability one PE's host lacks is missing
// for the job, named with that PE.
func TestJobCapabilities(t *testing.T) {
	j := &harness.Job{Job: cuda.Job{PEs: []cuda.Info{{SMs: 132, L2Bytes: 60 << 20}, {SMs: 114, L2Bytes: 50 << 20}}},
		Caps: []int64{harness.CapNIC | harness.CapMulticast, harness.CapMulticast}}
	if why := j.NICMissing(); !strings.Contains(why, "PE 1") {
		t.Errorf("NIC missing on PE 1: %q", why)
	}
	if why := j.MulticastOff(); why != "" {
		t.Errorf("multicast on both: %q", why)
	}
	c := j.Capabilities()
	if c.SMs != 114 || c.L2Bytes != 50<<20 || c.Multicast != "allowed" || !strings.Contains(c.NIC, "PE 1") {
		t.Errorf("capabilities %+v", c)
	}
	root := t.TempDir()
	nic := filepath.Join(root, "sys/class/infiniband")
	t.Setenv("NVSHBENCH_SYS_ROOT", root)
	t.Setenv("NCCL_NVLS_ENABLE", "0")
	if m := harness.ProbeHost(); m != 0 {
		t.Errorf("empty NIC folder and NVLS off: mask %b", m)
	}
	os.MkdirAll(filepath.Join(nic, "mlx5_0"), 0o755)
	t.Setenv("NCCL_NVLS_ENABLE", "1")
	t.Setenv("NVSHMEM_DISABLE_NVLS", "")
	if m := harness.ProbeHost(); m != harness.CapNIC|harness.CapMulticast {
		t.Errorf("a NIC and NVLS allowed: mask %b", m)
	}
}
