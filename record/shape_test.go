package record_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/nvshbench/nvshbench/record"
)

// latSeries is a round-trip series of the given sizes and times (seconds),
// each point's samples spread ±noise around its time.
func latSeries(t *testing.T, id string, sizes []int64, times []float64, noise float64) []record.Point {
	var out []record.Point
	for i, size := range sizes {
		p := record.Point{Type: record.TypePoint, ID: id, Status: record.StatusOK, Effective: "p2p", Timer: "events",
			Params: record.Params{Size: size, Op: "lsa_get", Scope: "block", CTAs: 1, Threads: 256, PEs: 1}, Iters: 1000,
			Samples: spread(times[i], noise, 10)}
		if err := record.Derive(&p, record.MetricLatency); err != nil {
			t.Fatal(err)
		}
		out = append(out, p)
	}
	return out
}

func marked(checks map[*record.Point]string, pts []record.Point) []int64 {
	var sizes []int64
	for i := range pts {
		if _, ok := checks[&pts[i]]; ok {
			sizes = append(sizes, pts[i].Params.Size)
		}
	}
	return sizes
}

// A latency that falls with size by more than its noise and the margin
// marks both points of the pair (the skeptic's LSA get chase, block,
// 8 → 16 KiB: 1.21 → 0.94 µs); a fall within the margin (the 8 → 16 B
// get chases, 4–8 %) or within the noise does not.
func TestShapeLatencyThatFalls(t *testing.T) {
	sizes := []int64{4 << 10, 8 << 10, 16 << 10, 32 << 10}
	chase := latSeries(t, "latency/nccl-lsa/get/block", sizes, []float64{1.18e-6, 1.21e-6, 0.94e-6, 0.96e-6}, 0.01)
	checks := record.ShapeChecks(chase)
	if got := marked(checks, chase); len(got) != 2 || got[0] != 8<<10 || got[1] != 16<<10 {
		t.Fatalf("marked sizes %v, want 8 and 16 KiB", got)
	}
	if why := checks[&chase[2]]; !strings.Contains(why, "latency falls 22 % from 8 KiB to 16 KiB (1.21 → 0.940 µs)") {
		t.Errorf("why: %q", why)
	}
	small := latSeries(t, "latency/get/block", []int64{8, 16, 32}, []float64{0.806e-6, 0.743e-6, 0.745e-6}, 0.01)
	if got := marked(record.ShapeChecks(small), small); len(got) != 0 {
		t.Errorf("an 8 %% fall marked %v", got)
	}
	noisy := latSeries(t, "latency/nccl-lsa/get/block", sizes, []float64{1.18e-6, 1.21e-6, 0.94e-6, 0.96e-6}, 0.2)
	if got := marked(record.ShapeChecks(noisy), noisy); len(got) != 0 {
		t.Errorf("a fall within ±20 %% noise marked %v", got)
	}
}

// A tenfold drop of the delivered rate between neighbouring sizes beyond
// the cache marks both; the same cliff at the cache edge does not. A
// bandwidth series says it in GB/s, a latency series as a time that rises.
func TestShapeTenfoldDrop(t *testing.T) {
	h := twoGPUs()
	bw := func(sizes []int64, bps []float64) []record.Point {
		var out []record.Point
		for i, s := range sizes {
			p := bwPoint(t, "rma/get/block", s, bps[i])
			p.WorkingSetBytes, p.L2Resident = s, record.CacheServed(s, 60<<20)
			record.Annotate(&h, &p)
			out = append(out, p)
		}
		return out
	}
	beyond := bw([]int64{256 << 20, 512 << 20, 1 << 30}, []float64{120e9, 11e9, 11e9})
	checks := record.ShapeChecks(beyond)
	if got := marked(checks, beyond); len(got) != 2 || got[0] != 256<<20 || got[1] != 512<<20 {
		t.Fatalf("marked %v, want 256 and 512 MiB", got)
	}
	if why := checks[&beyond[1]]; !strings.Contains(why, "bandwidth falls ×11 from 256 MiB to 512 MiB (120 → 11.0 GB/s), beyond the cache") {
		t.Errorf("why: %q", why)
	}
	// On one GPU the L2 answers a 64 MiB copy at 3 TB/s (no link is
	// crossed: drawn); from memory a slow kernel moves 250 GB/s.
	h = oneGPU()
	edge := bw([]int64{64 << 20, 128 << 20, 256 << 20}, []float64{3000e9, 250e9, 249e9})
	if !edge[0].Drawn() || !edge[0].Has(record.FlagCacheServed) || edge[1].L2Resident {
		t.Fatalf("the fixture's cache edge: %v / %v", edge[0].Flags, edge[1].Flags)
	}
	if got := marked(record.ShapeChecks(edge), edge); len(got) != 0 {
		t.Errorf("a cliff at the cache edge marked %v", got)
	}
	h = twoGPUs()
	nine := bw([]int64{256 << 20, 512 << 20}, []float64{120e9, 13.5e9})
	if got := marked(record.ShapeChecks(nine), nine); len(got) != 0 {
		t.Errorf("a ×8.9 drop marked %v", got)
	}
	// A round trip at twice the size taking 25 times as long: the rate
	// falls ×12.5.
	rt := latSeries(t, "latency/get/block", []int64{64 << 10, 128 << 10}, []float64{2e-6, 50e-6}, 0.01)
	if why := record.ShapeChecks(rt)[&rt[1]]; !strings.Contains(why, "time rises ×25 from 64 KiB to 128 KiB (2.00 → 50.0 µs): the delivered rate falls ×12") {
		t.Errorf("why: %q", why)
	}
}

// Series are one benchmark with one set of parameters: two launch shapes
// are two series, a point above the link is no neighbour, and a reader
// marks what the shapes say (FlagCheck), a figure still.
func TestShapeSeriesAndReader(t *testing.T) {
	a := latSeries(t, "latency/nccl-lsa/get/block", []int64{8 << 10}, []float64{1.21e-6}, 0.01)
	b := latSeries(t, "latency/nccl-lsa/get/block", []int64{16 << 10}, []float64{0.94e-6}, 0.01)
	b[0].Params.Threads = 128 // another series
	pts := append(a, b...)
	if got := marked(record.ShapeChecks(pts), pts); len(got) != 0 {
		t.Errorf("two series taken for one: %v", got)
	}
	h := oneGPU()
	h.Tool, h.ToolVersion, h.Created, h.Synthetic = "nvshbench", "test", "2026-12-01T00:00:00Z", true
	path := filepath.Join(t.TempDir(), "shape.jsonl")
	w, err := record.Create(path, h)
	if err != nil {
		t.Fatal(err)
	}
	series := latSeries(t, "latency/nccl-lsa/get/block", []int64{4 << 10, 8 << 10, 16 << 10}, []float64{1.18e-6, 1.21e-6, 0.94e-6}, 0.01)
	for i := range series {
		series[i].Verify = record.Verification{Checked: true, OK: true}
	}
	f := writeAndRead(t, w, path, series...)
	for _, p := range f.Points {
		want := p.Params.Size != 4<<10
		if p.Has(record.FlagCheck) != want || !p.Figure() || !p.Drawn() {
			t.Errorf("%d KiB: flags %v, figure %v", p.Params.Size>>10, p.Flags, p.Figure())
		}
	}
}
