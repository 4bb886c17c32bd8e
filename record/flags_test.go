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
