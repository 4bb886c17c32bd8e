package record_test

import (
	"strings"
	"testing"

	"github.com/nvshbench/nvshbench/record"
)

// twoGPUs: a header of two H200-like GPUs joined by 18 NVLinks (478 GB/s
// per direction), each with its memory.
func twoGPUs() record.Header {
	return record.Header{Type: record.TypeHeader, Schema: record.SchemaVersion, PEs: 2, Nodes: 1,
		GPUs: []record.GPU{{Index: 0, PCIBusID: "0000:1B:00.0", L2Bytes: 60 << 20}, {Index: 1, PCIBusID: "0000:43:00.0", L2Bytes: 60 << 20}},
		Links: []record.Link{
			{From: "00000000:1b:00.0", To: "0000:43:00.0", Kind: record.LinkNVLink, Count: 18, PerLinkBps: 26.5625e9, Bps: 478.125e9},
			{From: "0000:1b:00.0", To: "0000:1b:00.0", Kind: record.LinkMemory, Bps: 2.4e12},
		}}
}

// bwPoint is an ok bandwidth point of size bytes moving at bps.
func bwPoint(t *testing.T, id string, size int64, bps float64) record.Point {
	p := record.Point{Type: record.TypePoint, ID: id, Status: record.StatusOK, Effective: "p2p",
		Params: record.Params{Size: size, CTAs: 32, Threads: 256, PEs: 2}, Timer: "events", Iters: 10, Bytes: size,
		Samples: []float64{float64(size) / bps, float64(size) / bps}, Verify: record.Verification{Checked: true, OK: true},
		Limit: &record.Limit{ID: "limit/sm-copy", Value: 370e9}}
	if err := record.Derive(&p, record.MetricBandwidth); err != nil {
		t.Fatal(err)
	}
	return p
}

// A point above its path's physical ceiling is flagged, is no figure and is
// not drawn; one above the copy reference but within the link says so and
// stays a figure.
func TestAboveTheLinkIsFlagged(t *testing.T) {
	h := twoGPUs()
	above := bwPoint(t, "rma/put/block", 1<<30, 500e9)
	record.Annotate(&h, &above)
	if above.Ceiling == nil || above.Ceiling.Value != 478.125e9 || above.Ceiling.ID != "link/nvlink" {
		t.Fatalf("ceiling %+v", above.Ceiling)
	}
	if !above.Has(record.FlagAboveLink) || above.Figure() || above.Drawn() {
		t.Errorf("500 GB/s over a 478 GB/s link: flags %v, figure %v, drawn %v", above.Flags, above.Figure(), above.Drawn())
	}
	within := bwPoint(t, "rma/put/block", 1<<30, 400e9)
	record.Annotate(&h, &within)
	if within.Has(record.FlagAboveLink) || !within.Has(record.FlagAboveReference) || !within.Figure() {
		t.Errorf("400 GB/s, reference 370, link 478: flags %v", within.Flags)
	}
	// Two PEs on one GPU: the ceiling is its memory's.
	h.GPUs = h.GPUs[:1]
	local := bwPoint(t, "rma/put/block", 1<<30, 2.5e12)
	local.Effective = "local"
	record.Annotate(&h, &local)
	if local.Ceiling == nil || local.Ceiling.ID != "link/memory" || !local.Has(record.FlagAboveLink) {
		t.Errorf("local: ceiling %+v flags %v", local.Ceiling, local.Flags)
	}
	// ... unless the L2 serves it: then the memory is not its path.
	small := bwPoint(t, "rma/put/block", 1<<20, 3.2e12)
	small.Effective, small.L2Resident = "local", true
	record.Annotate(&h, &small)
	if small.Has(record.FlagAboveLink) || !small.Has(record.FlagCacheServed) {
		t.Errorf("a cache-served local point: flags %v", small.Flags)
	}
	// Over NVLink every byte crosses the link, cache-served or not.
	h = twoGPUs()
	remote := bwPoint(t, "rma/put/block", 1<<20, 595e9)
	remote.L2Resident = true
	record.Annotate(&h, &remote)
	if !remote.Has(record.FlagAboveLink) {
		t.Errorf("595 GB/s over NVLink at 1 MiB: flags %v", remote.Flags)
	}
}

// The events timer is the figure; an in-kernel mean more than 10 % away is
// flagged, never taken instead.
func TestTimersThatDisagreeAreFlagged(t *testing.T) {
	h := twoGPUs()
	p := record.Point{Type: record.TypePoint, ID: "latency/g", Status: record.StatusOK, Effective: "p2p", Timer: "events",
		Params: record.Params{Size: 256, PEs: 2}, Iters: 100, Samples: []float64{1.3e-6, 1.3e-6}}
	if err := record.Derive(&p, record.MetricLatency); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		kernel   float64
		disagree bool
	}{{1.25e-6, false}, {1.1e-6, true}, {1.5e-6, true}} {
		k := record.Summarize([]float64{c.kernel, c.kernel}, record.UnitSeconds)
		p.KernelTimer = &k
		record.Annotate(&h, &p)
		if p.Has(record.FlagTimersDisagree) != c.disagree {
			t.Errorf("events 1.3 µs, in-kernel %.2f µs: flags %v", c.kernel*1e6, p.Flags)
		}
		if m := p.Metrics[record.MetricLatency]; m.Median != 1.3e-6 {
			t.Errorf("the figure moved to %v", m.Median)
		}
	}
	// A round trip below its in-run floor is flagged.
	p.KernelTimer = nil
	p.Floor = &record.Limit{ID: "limit/chase-peer memory", Value: 1.4e-6}
	record.Annotate(&h, &p)
	if !p.Has(record.FlagBelowFloor) {
		t.Errorf("1.3 µs under a 1.4 µs floor: flags %v", p.Flags)
	}
}

// A file of schema 1 still reads: its second timer's rows and its
// collectives (no launch mode) are flagged, never figures.
func TestSchemaOneStillReads(t *testing.T) {
	f, err := record.ReadFile("testdata/schema1.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	if f.Header.Schema != 1 {
		t.Fatalf("schema %d", f.Header.Schema)
	}
	var second, unknown int
	for _, p := range f.Points {
		switch {
		case p.Timer == "globaltimer":
			second++
			if !p.Has(record.FlagSecondTimer) || p.Figure() || p.Drawn() {
				t.Errorf("%s globaltimer row: flags %v", p.ID, p.Flags)
			}
		case strings.HasPrefix(p.ID, "collectives/"):
			unknown++
			if !p.Has(record.FlagModeUnknown) || p.Figure() {
				t.Errorf("%s: flags %v", p.ID, p.Flags)
			}
		default:
			if !p.Figure() {
				t.Errorf("%s %d: an events row of an old file is still a figure: flags %v", p.ID, p.Params.Size, p.Flags)
			}
		}
	}
	if second == 0 || unknown == 0 {
		t.Fatalf("the fixture lacks a second-timer row (%d) or a collective (%d)", second, unknown)
	}
}

// The cache rule: a buffer within twice the L2 may be served by it.
func TestCacheServed(t *testing.T) {
	l2 := int64(60 << 20)
	for ws, want := range map[int64]bool{32 << 20: true, 64 << 20: true, 120 << 20: true, 128 << 20: false, 0: false} {
		if got := record.CacheServed(ws, l2); got != want {
			t.Errorf("%d MiB against a 60 MiB L2: %v", ws>>20, got)
		}
	}
	if record.CacheServed(1<<20, 0) {
		t.Error("an unknown L2 serves nothing")
	}
}

// PCI ids as NVML and CUDA write them name one device.
func TestNormalPCI(t *testing.T) {
	if a, b := record.NormalPCI("00000000:1B:00.0"), record.NormalPCI("0000:1b:00.0"); a != b || a != "0000:1b:00.0" {
		t.Errorf("%q vs %q", a, b)
	}
}

// oneGPU: a header of one H200 whose memory's read+write ceiling is what
// the committed 1-H200 reproduce recorded (4814 GB/s peak, halved).
func oneGPU() record.Header {
	return record.Header{Type: record.TypeHeader, Schema: record.SchemaVersion, PEs: 1, Nodes: 1,
		GPUs:  []record.GPU{{Index: 0, PCIBusID: "0000:00:06.0", L2Bytes: 60 << 20}},
		Links: []record.Link{{From: "0000:00:06.0", To: "0000:00:06.0", Kind: record.LinkMemory, Bps: 2407.152e9}}}
}

// spread returns n samples around t whose coefficient of variation is
// about cv (alternately t(1-cv) and t(1+cv)).
func spread(t, cv float64, n int) []float64 {
	s := make([]float64, n)
	for i := range s {
		s[i] = t * (1 + cv*float64(1-2*(i%2)))
	}
	return s
}

// A point whose events-timer samples spread by more than 10 % (their CV)
// is noisy, whatever its metric, and stays a figure; one at 8 % is not.
func TestNoisyAboveTheThreshold(t *testing.T) {
	h := twoGPUs()
	for _, c := range []struct {
		cv    float64
		noisy bool
	}{{0.08, false}, {0.12, true}, {0, false}} {
		bw := bwPoint(t, "rma/put/block", 1<<30, 300e9)
		bw.Samples = spread(bw.Samples[0], c.cv, 10)
		lat := record.Point{Type: record.TypePoint, ID: "latency/p", Status: record.StatusOK, Effective: "p2p", Timer: "events",
			Params: record.Params{Size: 8, PEs: 2}, Iters: 100, Samples: spread(1.2e-6, c.cv, 10)}
		if err := record.Derive(&bw, record.MetricBandwidth); err != nil {
			t.Fatal(err)
		}
		if err := record.Derive(&lat, record.MetricLatency); err != nil {
			t.Fatal(err)
		}
		for _, p := range []*record.Point{&bw, &lat} {
			record.Annotate(&h, p)
			cv, ok := p.SampleCV()
			if !ok || (c.cv > 0 && (cv < c.cv*0.9 || cv > c.cv*1.1)) {
				t.Fatalf("%s: CV %v of samples spread by %v", p.ID, cv, c.cv)
			}
			if p.Has(record.FlagNoisy) != c.noisy || !p.Figure() || !p.Drawn() {
				t.Errorf("%s, CV %.2f: flags %v, figure %v, drawn %v", p.ID, cv, p.Flags, p.Figure(), p.Drawn())
			}
		}
	}
	// One sample has no spread to judge.
	one := bwPoint(t, "rma/put/block", 1<<30, 300e9)
	one.Samples = one.Samples[:1]
	if _, ok := one.SampleCV(); ok {
		t.Error("a CV from one sample")
	}
}

// The skeptic's case: the LSA put on one H200 at 256 MiB, 1056 × 1024,
// 2403 GB/s of a 2407 GB/s read+write ceiling, is at the memory ceiling
// (and a figure of the local path); the copy engine's 2122 is not; a
// cache-served local copy is cache-served instead, one above the ceiling
// above the link, and a copy over NVLink at 96 % of the link is no memory
// figure.
func TestAtTheMemoryCeiling(t *testing.T) {
	h := oneGPU()
	local := func(bps float64, l2 bool) record.Point {
		p := bwPoint(t, "rma/nccl-lsa/put/block", 256<<20, bps)
		p.Effective, p.Params.PEs, p.Params.CTAs, p.Params.Threads = "local", 1, 1056, 1024
		p.L2Resident, p.WorkingSetBytes = l2, 256<<20
		p.Limit = &record.Limit{ID: "limit/ce-copy", Value: 2121.6e9}
		return p
	}
	put := local(2403.3e9, false)
	record.Annotate(&h, &put)
	if put.Ceiling == nil || put.Ceiling.ID != "link/memory" || put.Ceiling.Value != 2407.152e9 {
		t.Fatalf("ceiling %+v", put.Ceiling)
	}
	if !put.Has(record.FlagAtMemoryCeiling) || !put.Has(record.FlagAboveReference) || put.Has(record.FlagAboveLink) || !put.Figure() || !put.Drawn() {
		t.Errorf("2403 of 2407 GB/s: flags %v, figure %v", put.Flags, put.Figure())
	}
	for _, c := range []struct {
		name string
		p    record.Point
		want string
	}{
		{"the copy engine's 2122 GB/s", local(2121.6e9, false), ""},
		{"0.95 of the ceiling exactly", local(0.95*2407.152e9, false), record.FlagAtMemoryCeiling},
		{"cache-served", local(2403.3e9, true), record.FlagCacheServed},
		{"above the ceiling", local(3276e9, false), record.FlagAboveLink},
	} {
		record.Annotate(&h, &c.p)
		if at := c.p.Has(record.FlagAtMemoryCeiling); at != (c.want == record.FlagAtMemoryCeiling) || (c.want != "" && !c.p.Has(c.want)) {
			t.Errorf("%s: flags %v", c.name, c.p.Flags)
		}
	}
	two := twoGPUs()
	nv := bwPoint(t, "rma/put/block", 1<<30, 0.96*478.125e9)
	record.Annotate(&two, &nv)
	if nv.Has(record.FlagAtMemoryCeiling) || nv.Has(record.FlagAboveLink) {
		t.Errorf("NVLink at 96 %%: flags %v", nv.Flags)
	}
}

// Timers are compared per operation, whatever the point's metric: the
// in-kernel mean per iteration against the events timer's seconds per
// operation (a bandwidth's bytes over it). A bandwidth point whose stamps
// are 15 % off is flagged, 5 % off is not; so are a collective judged by
// algbw and a point stored with its metric but no samples.
func TestTimersDisagreeForEveryMetric(t *testing.T) {
	h := twoGPUs()
	kernel := func(p *record.Point, per float64) {
		k := record.Summarize([]float64{per * 0.99, per, per * 1.01}, record.UnitSeconds)
		p.KernelTimer = &k
	}
	coll := record.Point{Type: record.TypePoint, ID: "collectives/allreduce/multicta", Status: record.StatusOK, Effective: "p2p", Timer: "events",
		Params: record.Params{Size: 64 << 20, PEs: 2, Launch: record.LaunchFused}, Iters: 20, BusFactor: 1, Samples: []float64{200e-6, 201e-6, 199e-6}}
	if err := record.Derive(&coll, record.MetricAlgBW, record.MetricBusBW); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		off      float64
		disagree bool
	}{{1.15, true}, {1.05, false}, {0.85, true}, {0.95, false}} {
		bw := bwPoint(t, "rma/put/block", 1<<30, 300e9) // 3.579 ms per operation
		kernel(&bw, float64(1<<30)/300e9*c.off)
		record.Annotate(&h, &bw)
		if bw.Has(record.FlagTimersDisagree) != c.disagree {
			t.Errorf("bandwidth, stamps ×%.2f: flags %v", c.off, bw.Flags)
		}
		if m := bw.Metrics[record.MetricBandwidth]; m.Median != 300e9 {
			t.Errorf("the figure moved to %v", m.Median)
		}
		kernel(&coll, 200e-6*c.off)
		record.Annotate(&h, &coll)
		if coll.Has(record.FlagTimersDisagree) != c.disagree {
			t.Errorf("collective, stamps ×%.2f: flags %v", c.off, coll.Flags)
		}
		stored := bwPoint(t, "rma/get/block", 1<<30, 300e9)
		stored.Samples = nil // metrics only: bytes over the bandwidth
		kernel(&stored, float64(1<<30)/300e9*c.off)
		record.Annotate(&h, &stored)
		if stored.Has(record.FlagTimersDisagree) != c.disagree {
			t.Errorf("stored metric, stamps ×%.2f: op time %v, flags %v", c.off, stored.OpTime(), stored.Flags)
		}
	}
}

// An older file's timers are two rows: its events row is flagged where the
// in-kernel row of the same point is more than 10 % away (the committed
// schema-1 fixture's are 3 % apart: not flagged). The in-kernel row's
// samples are iterations, not launches: never "noisy".
func TestOlderFilesTimerTwins(t *testing.T) {
	f, err := record.ReadFile("testdata/schema1.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	var events, second *record.Point
	for i := range f.Points {
		if p := &f.Points[i]; p.ID == "latency/put/block" {
			if p.Timer == "globaltimer" {
				second = p
			} else {
				events = p
			}
		}
	}
	if events == nil || second == nil {
		t.Fatal("the fixture lacks the two rows of latency/put/block")
	}
	if events.Has(record.FlagTimersDisagree) || second.Has(record.FlagNoisy) {
		t.Errorf("events row flags %v, in-kernel row flags %v", events.Flags, second.Flags)
	}
	for _, c := range []struct {
		scale    float64
		disagree bool
	}{{1.2, true}, {1.05, false}, {0.85, true}} {
		pts := []record.Point{*events, *second}
		pts[0].Flags = nil
		pts[0].Samples = append([]float64(nil), events.Samples...)
		for i := range pts[0].Samples {
			pts[0].Samples[i] *= c.scale
		}
		record.MarkTimerTwins(pts)
		if pts[0].Has(record.FlagTimersDisagree) != c.disagree || pts[1].Has(record.FlagTimersDisagree) {
			t.Errorf("events ×%.2f: flags %v / %v", c.scale, pts[0].Flags, pts[1].Flags)
		}
	}
}
