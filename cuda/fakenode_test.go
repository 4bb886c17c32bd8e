package cuda

import (
	"math"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"
)

// A topology that does not parse is one line naming the item, what is
// wrong and what to write; a good one sets what it says.
func TestFakeClusterSpec(t *testing.T) {
	t.Setenv("NVSHBENCH_FAKE_GPUS", "4")
	t.Setenv("NVSHBENCH_FAKE_NODES", "2")
	t.Setenv("NVSHBENCH_FAKE_TOPO", " pcie:3; link:0-1=50%;clock:5=70%;late:2=20us;nic:6=25%;node:1=50%;rate:nic=25;die:7@1M ")
	c, err := FakeClusterFromEnv()
	if err != nil {
		t.Fatal(err)
	}
	if c.Devices() != 8 || !c.PCIeOnly[3] || c.Link[[2]int{0, 1}] != 0.5 || c.Clock[5] != 0.7 || c.Late[2] != 20e-6 || c.NIC[6] != 0.25 ||
		c.NodeNIC[1] != 0.5 || c.NICBps != 25e9 || c.Die[7] != 1<<20 {
		t.Errorf("cluster %+v", c)
	}
	for spec, want := range map[string]string{
		"pcie":              "no kind",
		"pcie:9":            `"9" is not a GPU`,
		"link:0-5=50%":      "joins two GPUs of one node",
		"link:0-1=50":       "not a share",
		"link:0-1=150%":     "not a share",
		"clock:1":           "not a share",
		"late:2=soon":       "not a positive duration",
		"node:2=50%":        "not a node",
		"rate:infiniband=1": "not a path",
		"die:3":             "want PE@SIZE",
		"nvlink:0":          `unknown kind "nvlink"`,
	} {
		t.Setenv("NVSHBENCH_FAKE_TOPO", spec)
		_, err := FakeClusterFromEnv()
		if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "write items separated by ';'") ||
			!strings.Contains(err.Error(), "GPUs numbered 0..7") || strings.Contains(err.Error(), "\n") {
			t.Errorf("%q: %v; want one line with %q and what to write", spec, err, want)
		}
	}
	t.Setenv("NVSHBENCH_FAKE_TOPO", "")
	for _, v := range []string{"0", "-1", "x", "65"} {
		t.Setenv("NVSHBENCH_FAKE_GPUS", v)
		if _, err := FakeClusterFromEnv(); err == nil || !strings.Contains(err.Error(), "NVSHBENCH_FAKE_GPUS="+v) {
			t.Errorf("NVSHBENCH_FAKE_GPUS=%s: %v", v, err)
		}
	}
	// A worker with a spec that does not parse fails its start-up with it.
	t.Setenv("NVSHBENCH_FAKE_GPUS", "2")
	t.Setenv("NVSHBENCH_FAKE_TOPO", "clock:4=50%")
	if err := NewFake().Init(InitUID, 0, 1, FakeUID, 0, 1<<20); err == nil || !strings.Contains(err.Error(), `"4" is not a GPU`) {
		t.Errorf("init with a bad spec: %v", err)
	}
}

// Two nodes of four: every GPU its own host, UUID and bus id; NVLinks to
// the switches but on the PCIe-only GPU; the paths of the PEs' devices.
func TestFakeClusterDevices(t *testing.T) {
	t.Setenv("NVSHBENCH_FAKE_GPUS", "4")
	t.Setenv("NVSHBENCH_FAKE_NODES", "2")
	t.Setenv("NVSHBENCH_FAKE_TOPO", "pcie:2")
	f := NewFake()
	if n, _ := f.DeviceCount(); n != 8 {
		t.Fatalf("%d devices", n)
	}
	uuids := map[string]bool{}
	for d := 0; d < 8; d++ {
		i, err := f.DeviceInfo(d)
		if err != nil {
			t.Fatal(err)
		}
		if want := []string{"fake-node0", "fake-node1"}[d/4]; i.HostString() != want || int(i.Device) != d%4 {
			t.Errorf("device %d: host %s ordinal %d", d, i.HostString(), i.Device)
		}
		uuids[i.UUIDString()] = true
		l, err := f.LinkInfo(d)
		if err != nil {
			t.Fatal(err)
		}
		if want := map[bool]int32{true: 0, false: 18}[d == 2]; l.Links != want || (want > 0 && l.RemoteOf(0) == "") {
			t.Errorf("device %d: %d NVLinks, want %d", d, l.Links, want)
		}
	}
	if len(uuids) != 8 {
		t.Errorf("UUIDs %v", uuids)
	}
	if _, err := f.DeviceInfo(8); err == nil {
		t.Error("device 8 of 8 answered")
	}
	if ok, _ := f.CanAccessPeer(1, 5); ok {
		t.Error("peer access across nodes")
	}
	// 8 PEs, two a GPU on devices 0, 1, 4, 5.
	devs := []int{0, 0, 1, 1, 4, 4, 5, 5}
	jobs := fakeJob(t, devs, func(f *Fake, rank int) any { j, err := f.Job(); mustNot(t, err); return j })
	j := jobs[3].(Job)
	want := [][]int{{0, PathP2P}, {1, PathP2P}, {2, PathLocal}, {3, PathLocal}, {4, PathRemote}, {7, PathRemote}}
	for _, w := range want {
		if got := j.Paths[3][w[0]]; got != w[1] {
			t.Errorf("PE 3 → PE %d: path %d, want %d", w[0], got, w[1])
		}
	}
	if j.PEs[6].HostString() != "fake-node1" || j.PEs[6].Device != 1 {
		t.Errorf("PE 6: %s ordinal %d", j.PEs[6].HostString(), j.PEs[6].Device)
	}
}

func mustNot(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Error(err)
	}
}

// fakeJob starts one fake a device of devs on one fabric, Job's facts
// exchanged, and returns what do gives on each.
func fakeJob(t *testing.T, devs []int, do func(f *Fake, rank int) any) []any {
	t.Helper()
	fabric := NewMemFabric(5 * time.Second)
	out := make([]any, len(devs))
	var wg sync.WaitGroup
	for r, d := range devs {
		wg.Add(1)
		go func(r, d int) {
			defer wg.Done()
			f := NewFakeOn(fabric)
			if err := f.Init(InitUID, r, len(devs), FakeUID, d, 1<<30); err != nil {
				t.Error(err)
				return
			}
			out[r] = do(f, r)
		}(r, d)
	}
	wg.Wait()
	return out
}

// timed runs a on every PE of devs after their Job, and returns each PE's
// samples' median (0 where it timed nothing).
func timed(t *testing.T, devs []int, a Args) []float64 {
	t.Helper()
	res := fakeJob(t, devs, func(f *Fake, rank int) any {
		if _, err := f.Job(); err != nil {
			t.Error(err)
			return 0.0
		}
		tm, _, err := f.Run(a)
		if err != nil {
			t.Errorf("PE %d: %v", rank, err)
			return 0.0
		}
		if len(tm.Samples) == 0 {
			return 0.0
		}
		return median(tm.Samples)
	})
	out := make([]float64, len(res))
	for i, v := range res {
		out[i], _ = v.(float64)
	}
	return out
}

func median(s []float64) float64 {
	c := append([]float64(nil), s...)
	sort.Float64s(c)
	return c[len(c)/2]
}

func putArgs(size int64, peer int) Args {
	a := NewArgs("rma.put")
	a.Size, a.CTAs, a.Threads, a.Samples, a.Peer, a.Verify = size, 32, 256, 5, int32(peer), 1
	return a
}

// The times follow the model: NVLink within a node, PCIe for a PCIe-only
// GPU, the NIC between nodes; a degraded link, a slow NIC and a slower
// clock each slow what crosses them.
func TestFakeClusterTimesFollowTheModel(t *testing.T) {
	t.Setenv("NVSHBENCH_FAKE_GPUS", "4")
	t.Setenv("NVSHBENCH_FAKE_NODES", "2")
	bw := func(spec string, devs []int) float64 {
		t.Setenv("NVSHBENCH_FAKE_TOPO", spec)
		return float64(1<<30) / timed(t, devs, putArgs(1<<30, 1))[0]
	}
	nvlink := bw("", []int{0, 1})
	if nvlink < 250e9 || nvlink > 300e9 {
		t.Errorf("put over NVLink %.0f GB/s, want the put's own 300 (within the 450 of the path)", nvlink/1e9)
	}
	for _, c := range []struct {
		spec string
		devs []int
		lo   float64
		hi   float64
	}{
		{"pcie:1", []int{0, 1}, 55e9, 63e9},
		{"link:0-1=10%", []int{0, 1}, 40e9, 45e9},
		{"", []int{0, 4}, 45e9, 50e9},
		{"nic:4=50%", []int{0, 4}, 22e9, 25e9},
		{"node:0=20%", []int{0, 4}, 8e9, 10e9},
		{"clock:0=50%", []int{0, 1}, 140e9, 150e9},
		{"clock:1=50%", []int{0, 1}, nvlink * 0.99, nvlink * 1.01}, // the target's clock: the initiator issues
	} {
		if got := bw(c.spec, c.devs); got < c.lo || got > c.hi {
			t.Errorf("%q devices %v: %.1f GB/s, want %.1f..%.1f", c.spec, c.devs, got/1e9, c.lo/1e9, c.hi/1e9)
		}
	}
}

// Every PE of a collective times it; a late PE's own time is the shortest
// (every other waited for it) and the others' are longer by its lateness;
// a slower GPU's PE takes longer than the others.
func TestFakeCollectiveLateAndSlowPEs(t *testing.T) {
	t.Setenv("NVSHBENCH_FAKE_GPUS", "4")
	a := NewArgs("coll.allreduce")
	a.Size, a.CTAs, a.Threads, a.Samples, a.Impl, a.PerOp = 1<<20, 1, 256, 5, ImplNCCL, 1
	devs := []int{0, 1, 2, 3}
	t.Setenv("NVSHBENCH_FAKE_TOPO", "")
	base := timed(t, devs, a)
	t.Setenv("NVSHBENCH_FAKE_TOPO", "late:2=50us")
	late := timed(t, devs, a)
	for r := range devs {
		want := base[r] + 50e-6
		if r == 2 {
			want = base[r]
		}
		if math.Abs(late[r]-want) > 0.01*want {
			t.Errorf("late PE 2: PE %d took %.2f µs, want %.2f", r, late[r]*1e6, want*1e6)
		}
	}
	t.Setenv("NVSHBENCH_FAKE_TOPO", "clock:1=50%")
	slow := timed(t, devs, a)
	for r := range devs {
		ratio := slow[r] / base[r]
		if (r == 1 && math.Abs(ratio-2) > 0.01) || (r != 1 && math.Abs(ratio-1) > 0.01) {
			t.Errorf("GPU 1 at half clock: PE %d %.2fx its time", r, ratio)
		}
	}
}

// The initiator issues and times, whichever PE it is; with bidir its peer
// issues back and times too; the other PEs idle.
func TestFakeHonoursTheInitiator(t *testing.T) {
	t.Setenv("NVSHBENCH_FAKE_GPUS", "8")
	t.Setenv("NVSHBENCH_FAKE_TOPO", "link:3-5=25%")
	devs := []int{0, 1, 2, 3, 4, 5, 6, 7}
	for _, c := range []struct {
		op    string
		bidir int32
		timed []int
	}{{"rma.put", 0, []int{3}}, {"rma.put", 1, []int{3, 5}}, {"lat.put", 0, []int{3}}, {"rma.get", 0, []int{3}}} {
		a := putArgs(1<<20, 5)
		a.SetOp(c.op)
		a.Initiator, a.Bidir = 3, c.bidir
		got := timed(t, devs, a)
		for pe, v := range got {
			if want := slices.Contains(c.timed, pe); (v > 0) != want {
				t.Errorf("%s bidir %d: PE %d timed %v, want %v", c.op, c.bidir, pe, v, want)
			}
		}
		// The pair's degraded link shows in the initiator's time.
		a.Initiator = 2
		if other := timed(t, devs, a); c.op == "rma.put" && c.bidir == 0 && !(got[3] > 2*other[2]) {
			t.Errorf("%s over the degraded 3-5 link %.2f µs, from PE 2 %.2f µs", c.op, got[3]*1e6, other[2]*1e6)
		}
	}
	a := putArgs(4096, 1)
	a.Initiator = 8
	_, _, err := NewFakeOn(nil).Run(a)
	if err == nil {
		t.Error("an initiator outside the job ran")
	}
}
