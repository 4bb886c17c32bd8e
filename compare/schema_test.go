package compare_test

import (
	"bytes"
	"maps"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/nvshbench/nvshbench/compare"
	"github.com/nvshbench/nvshbench/internal/fixture"
	"github.com/nvshbench/nvshbench/internal/golden"
	"github.com/nvshbench/nvshbench/internal/table"
	"github.com/nvshbench/nvshbench/record"
)

// schemaPair is one run written twice: as a schema-1 binary wrote it and
// as schema 2 writes the same measurements (the same samples).
//
//   - latency: schema 1 has a row per timer (extra.timer events /
//     globaltimer), schema 2 the events row with the in-kernel times as its
//     kernel_timer;
//   - the blocking put and the fence under their schema-1 names before
//     7ccfacc (latency/put/block mode=blocking, latency/fence), under
//     latency/issue/ in schema 2;
//   - collectives without a launch mode in schema 1; in schema 2 NCCL (a
//     host API) one launch per operation, our multi-CTA kernel fused (the
//     same samples) and per-op (a row schema 1 never had);
//   - an RMA put (a store) and get.
func schemaPair() (v1, v2 *record.File) {
	rng := rand.New(rand.NewPCG(3, 4))
	noisy := func(t float64, n int) []float64 {
		s := make([]float64, n)
		for i := range s {
			s[i] = t * (1 + 0.02*(rng.Float64()*2-1))
		}
		return s
	}
	ticks := func(t float64, n int) []float64 { // %globaltimer: whole 32 ns ticks
		s := make([]float64, n)
		for i := range s {
			s[i] = float64(int(t/tick)+rng.IntN(3)) * tick
		}
		return s
	}
	header := func(schema int, label string) record.Header {
		return record.Header{Type: record.TypeHeader, Schema: schema, Tool: "nvshbench", ToolVersion: "test", Created: "2026-12-01T00:00:00Z",
			Synthetic: true, Label: label, GPUs: []record.GPU{{Name: "NVIDIA H200", PCIBusID: "0000:1b:00.0", L2Bytes: 60 << 20}}, PEs: 1, Nodes: 1}
	}
	v1, v2 = &record.File{Name: "schema1.jsonl", Header: header(1, "schema1")}, &record.File{Name: "schema2.jsonl", Header: header(2, "schema2")}
	add := func(f *record.File, p record.Point, metrics ...string) {
		p.Type, p.Status, p.Verify = record.TypePoint, record.StatusOK, record.Verification{Checked: true, OK: true}
		if p.Timer == "" {
			p.Timer = "events"
		}
		if err := record.Derive(&p, metrics...); err != nil {
			panic(err)
		}
		record.Annotate(&f.Header, &p)
		f.Points = append(f.Points, p)
	}
	timer := func(t string) map[string]string { return map[string]string{"timer": t} }
	lat := func(id1, id2 string, prm record.Params, t float64) {
		ev, gt := noisy(t, 10), ticks(t, 100)
		p1 := prm
		p1.Extra = timer("events")
		add(v1, record.Point{ID: id1, Params: p1, Iters: 1000, Bytes: prm.Size, Samples: ev}, record.MetricLatency)
		p1.Extra = timer("globaltimer")
		add(v1, record.Point{ID: id1, Params: p1, Timer: "globaltimer", Iters: 1, Bytes: prm.Size, Samples: gt}, record.MetricLatency)
		k := record.Summarize(gt, record.UnitSeconds)
		add(v2, record.Point{ID: id2, Params: prm, Iters: 1000, Bytes: prm.Size, Samples: ev, KernelTimer: &k}, record.MetricLatency)
	}
	for _, size := range []int64{8, 4096} {
		lat("latency/put/block", "latency/put/block", record.Params{Size: size, Op: "put", Scope: "block", CTAs: 1, Threads: 256, PEs: 1, Path: "p2p", Mode: "nbi"}, 1.1e-6)
		lat("latency/put/block", "latency/issue/put/block", record.Params{Size: size, Op: "put", Scope: "block", CTAs: 1, Threads: 256, PEs: 1, Path: "p2p", Mode: "blocking"}, 0.28e-6)
		lat("latency/g", "latency/g", record.Params{Size: size, CTAs: 1, Threads: 256, PEs: 1, Path: "p2p"}, 0.57e-6)
	}
	lat("latency/fence", "latency/issue/fence", record.Params{CTAs: 1, Threads: 1, PEs: 1, Path: "p2p"}, 0.7e-6)
	coll := func(id string, prm record.Params, t float64, perOp float64) {
		s := noisy(t, 10)
		p := record.Point{ID: id, Params: prm, Iters: 20, Bytes: prm.Size, BusFactor: 1, Samples: s, WorkingSetBytes: 2 * prm.Size}
		add(v1, p, record.MetricAlgBW, record.MetricLatency)
		p.Params.Launch = record.LaunchPerOp
		if perOp == 0 { // a host API: one launch per operation, then and now
			add(v2, p, record.MetricAlgBW, record.MetricLatency)
			return
		}
		p.Params.Launch = record.LaunchFused
		add(v2, p, record.MetricAlgBW, record.MetricLatency)
		p.Params.Launch, p.Samples = record.LaunchPerOp, noisy(t+perOp, 10)
		add(v2, p, record.MetricAlgBW, record.MetricLatency)
	}
	for _, size := range []int64{4096, 256 << 20} {
		prm := record.Params{Size: size, Op: "sum", CTAs: 1, Threads: 256, PEs: 1, Path: "p2p", DType: "float", Mode: "graph"}
		coll("collectives/allreduce/nccl", prm, 4e-6+float64(size)/1500e9, 0)
		prm.CTAs, prm.Threads = 132, 512
		coll("collectives/allreduce/multicta", prm, 1.2e-6+float64(size)/1300e9, 3e-6)
	}
	for _, id := range []string{"rma/put/block", "rma/get/block"} {
		for _, size := range []int64{4096, 256 << 20} {
			prm := record.Params{Size: size, Op: strings.Split(id, "/")[1], Scope: "block", CTAs: 32, Threads: 256, PEs: 1, Path: "p2p", Dir: "uni", Mode: "nbi"}
			p := record.Point{ID: id, Params: prm, Iters: 100, Bytes: size, Samples: noisy(float64(size)/300e9+0.2e-6, 10), WorkingSetBytes: size,
				L2Resident: record.CacheServed(size, 60<<20)}
			add(v1, p, record.MetricBandwidth)
			add(v2, p, record.MetricBandwidth)
		}
	}
	return v1, v2
}

// A schema-1 baseline against a schema-2 candidate of the same numbers:
// every row that measures the same thing is matched, the schema-1 timer
// rows say "schema changed", nothing is MISSING and the gate passes. So does
// the other way round.
func TestSchema1AgainstSchema2(t *testing.T) {
	v1, v2 := schemaPair()
	golden.Check(t, "schema1.jsonl", jsonl(v1))
	golden.Check(t, "schema2.jsonl", jsonl(v2))
	res, err := compare.Compare([]*record.File{v1, v2}, compare.Options{Threshold: 0.01})
	if err != nil {
		t.Fatal(err)
	}
	if res.Failures != 0 || res.Regressions != 0 || len(res.Unmatched) != 2 { // the candidate's per-op multicta rows
		t.Errorf("schema 1 → 2, same numbers: %d failures, %d regressions, unmatched %q", res.Failures, res.Regressions, res.Unmatched)
	}
	byKey := map[string]*compare.Row{}
	for i := range res.Rows {
		byKey[res.Rows[i].ID+" "+res.Rows[i].Key] = &res.Rows[i]
	}
	timerRows, stores := 0, 0
	for _, r := range res.Rows {
		switch {
		case r.Failed[0] != "":
			t.Errorf("%s %s: %s", r.ID, r.Key, r.Failed[0])
		case r.Params.Extra["timer"] == "globaltimer":
			timerRows++
			if r.SchemaChanged[0] != compare.WhyTimerRow {
				t.Errorf("%s %s: schema changed %q", r.ID, r.Key, r.SchemaChanged[0])
			}
		case r.SchemaChanged[0] == compare.WhyStores:
			stores++
		case r.SchemaChanged[0] != "":
			t.Errorf("%s %s: schema changed %q", r.ID, r.Key, r.SchemaChanged[0])
		case r.Deltas[0] != "~" && r.Deltas[0] != "0.00%":
			t.Errorf("%s %s: the same samples give Δ %q", r.ID, r.Key, r.Deltas[0])
		}
	}
	if timerRows != 7 || stores != 2 {
		t.Errorf("%d timer rows, %d store rows marked; want 7 and 2", timerRows, stores)
	}
	for _, want := range []string{
		"latency/issue/fence ctas=1 threads=1 pes=1 path=p2p",
		"latency/issue/put/block size=8 op=put scope=block ctas=1 threads=256 pes=1 path=p2p mode=blocking",
		"latency/g size=4096 ctas=1 threads=256 pes=1 path=p2p",
		"collectives/allreduce/nccl size=4096 op=sum ctas=1 threads=256 pes=1 path=p2p dtype=float mode=graph launch=per-op",
		"collectives/allreduce/multicta size=268435456 op=sum ctas=132 threads=512 pes=1 path=p2p dtype=float mode=graph launch=fused",
	} {
		if r := byKey[want]; r == nil || r.Failed[0] != "" || r.Deltas[0] == "?" {
			t.Errorf("not matched: %s", want)
		}
	}
	var b bytes.Buffer
	table.Render(&b, res.Table(), "text")
	out := b.String()
	if strings.Contains(out, "MISSING") || !strings.Contains(out, "schema changed") || !strings.Contains(out, "schema 1 recorded no launch mode") {
		t.Errorf("table:\n%s", out)
	}

	// Schema 2 against schema 1: the per-op rows of a device kernel have
	// no schema-1 counterpart.
	back, err := compare.Compare([]*record.File{v2, v1}, compare.Options{Threshold: 0.01})
	if err != nil {
		t.Fatal(err)
	}
	perOp := 0
	for _, r := range back.Rows {
		if r.SchemaChanged[0] == compare.WhyPerOp {
			perOp++
		}
	}
	if back.Failures != 0 || back.Regressions != 0 || perOp != 2 {
		t.Errorf("schema 2 → 1: %d failures, %d regressions, %d per-op rows said (want 2)", back.Failures, back.Regressions, perOp)
	}
}

// Measured runs on one H200 (copies under testdata/ of files once in
// results/, whose folders git history keeps): the build before schema 2
// against the first schema-2 build (2026-12-01's beforeafter), and the
// reproduce of 2026-11-29 (schema 1) against that of 2026-12-01, both cut
// to every benchmark at 8 B, 256 B, 1 MiB and 256 MiB.
func TestSchemaOnCommittedRuns(t *testing.T) {
	read := func(p string) *record.File {
		f, err := record.ReadFile(filepath.Join("..", "testdata", p))
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
	before, after := read("h200-2026-12-01-before.jsonl.gz"), read("h200-2026-12-01-after.jsonl.gz")
	res, err := compare.Compare([]*record.File{before, after}, compare.Options{Threshold: 0.05})
	if err != nil {
		t.Fatal(err)
	}
	stores := map[string]bool{}
	for _, r := range res.Rows {
		if r.Failed[0] != "" {
			t.Errorf("before → after: %s %s %s", r.ID, r.Key, r.Failed[0])
		}
		if r.SchemaChanged[0] == compare.WhyStores {
			stores[r.ID] = true
			if r.Regress[0] {
				t.Errorf("%s %s: a schema change gated", r.ID, r.Key)
			}
		}
		if strings.HasPrefix(r.ID, "collectives/") && r.Params.Launch != record.LaunchFused {
			t.Errorf("%s %s: schema 1 ran the device collectives fused", r.ID, r.Key)
		}
	}
	want := []string{"rma/nccl-lsa/put/block", "rma/p", "rma/put/block", "rma/put/warp", "rma/st"}
	if got := strings.Join(sortedKeys(stores), " "); !strings.Contains(got, strings.Join(want, " ")) {
		t.Errorf("store rows marked: %s; want %v", got, want)
	}
	if res.Failures != 0 {
		t.Errorf("before → after: %d failures", res.Failures)
	}

	old, cur := read("h200-2026-11-29.jsonl.gz"), read("h200-2026-12-01.jsonl.gz")
	res, err = compare.Compare([]*record.File{old, cur}, compare.Options{Threshold: 0.05})
	if err != nil {
		t.Fatal(err)
	}
	timerRows := 0
	for _, r := range res.Rows {
		if r.Failed[0] != "" {
			t.Errorf("2026-11-29 → 2026-12-01: %s %s %s", r.ID, r.Key, r.Failed[0])
		}
		if r.SchemaChanged[0] == compare.WhyTimerRow {
			timerRows++
		}
	}
	if res.Failures != 0 || timerRows == 0 {
		t.Errorf("2026-11-29 → 2026-12-01: %d failures, %d timer rows said", res.Failures, timerRows)
	}
}

func sortedKeys(m map[string]bool) []string {
	var out []string
	for k := range maps.Keys(m) {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// A schema-1 file holding a point under its old and its new name would
// give two measurements of one point: refused, as a point measured twice.
func TestSchemaCollisionRefused(t *testing.T) {
	v1, v2 := schemaPair()
	for _, p := range v1.Points {
		if p.ID == "latency/fence" && p.Params.Extra["timer"] == "events" {
			p.ID = "latency/issue/fence"
			v1.Points = append(v1.Points, p)
			break
		}
	}
	if _, err := compare.Compare([]*record.File{v1, v2}, compare.Options{}); err == nil || !strings.Contains(err.Error(), "two points that are one") {
		t.Errorf("err = %v", err)
	}
}

// A resumed run retries the points that errored: the error record stays in
// the file before the measurement, and is no failure.
func TestRetriedErrorIsNoFailure(t *testing.T) {
	base := fixture.Synthetic(fixture.Options{Seed: 1})
	cand := fixture.Synthetic(fixture.Options{Seed: 2})
	var extra []record.Point
	for _, p := range cand.Points {
		if p.ID == "rma/put/block" && p.Status == record.StatusOK && p.Params.Size == 8 {
			fresh := p
			fresh.Params.Size = 12 // a point only the candidate has
			for _, q := range []record.Point{p, fresh} {
				e := q
				e.Status, e.Reason, e.Samples, e.Metrics = record.StatusError, "worker timed out", nil, nil
				extra = append(extra, e)
			}
			extra = append(extra, fresh)
		}
	}
	cand.Points = append(extra, cand.Points...)
	res, err := compare.Compare([]*record.File{base, cand}, compare.Options{Threshold: 0.5})
	if err != nil {
		t.Fatal(err)
	}
	if res.Failures != 1 { // the fixture's own errored rma/g
		t.Errorf("failures = %d, want 1", res.Failures)
	}
}

// A point several PEs timed (a 2-PE collective, a bidirectional put) is the
// slowest PE's since schema 3, PE 0's before: matched across the two,
// shown "schema changed" and never gated, even where PE 1 was far slower;
// a one-way put compares as ever.
func TestSchema2AgainstSchema3(t *testing.T) {
	file := func(schema int, slow float64) *record.File {
		f := &record.File{Name: "s.jsonl", Header: record.Header{Type: record.TypeHeader, Schema: schema, Tool: "nvshbench", ToolVersion: "test",
			Created: "2026-12-01T00:00:00Z", Synthetic: true, PEs: 2, Nodes: 1, GPUs: []record.GPU{{Name: "NVIDIA H200"}, {Name: "NVIDIA H200"}}}}
		same := []float64{1e-5, 1.01e-5, 1.02e-5, 0.99e-5, 1e-5}
		for _, p := range []record.Point{
			{ID: "collectives/allreduce/nccl", Params: record.Params{Size: 1 << 20, Op: "sum", PEs: 2, Launch: record.LaunchPerOp}, Bytes: 1 << 20},
			{ID: "rma/put/block", Params: record.Params{Size: 1 << 20, Op: "put", PEs: 2, Dir: "bidir"}, Bytes: 2 << 20},
			{ID: "rma/put/block", Params: record.Params{Size: 1 << 20, Op: "put", PEs: 2, Dir: "uni"}, Bytes: 1 << 20},
		} {
			p.Type, p.Status, p.Timer, p.Iters, p.Verify = record.TypePoint, record.StatusOK, "events", 10, record.Verification{Checked: true, OK: true}
			p.Samples = same
			if p.Params.Dir != "uni" { // the figure several PEs timed: PE 1 is slower by slow
				p.Samples = make([]float64, len(same))
				for i, s := range same {
					p.Samples[i] = s * slow
				}
			}
			metric := record.MetricBandwidth
			if strings.HasPrefix(p.ID, "collectives/") {
				metric = record.MetricAlgBW
			}
			if err := record.Derive(&p, metric); err != nil {
				t.Fatal(err)
			}
			f.Points = append(f.Points, p)
		}
		return f
	}
	res, err := compare.Compare([]*record.File{file(2, 1), file(3, 1.5)}, compare.Options{Threshold: 0.05})
	if err != nil {
		t.Fatal(err)
	}
	changed := 0
	for _, r := range res.Rows {
		switch {
		case r.Params.Dir == "uni" && r.SchemaChanged[0] != "":
			t.Errorf("%s %s: %q", r.ID, r.Key, r.SchemaChanged[0])
		case r.Params.Dir != "uni" && r.SchemaChanged[0] == compare.WhySlowestPE:
			changed++
		}
	}
	if changed != 2 || res.Regressions != 0 || res.Failures != 0 {
		t.Errorf("%d rows said schema changed (want 2), %d regressions, %d failures", changed, res.Regressions, res.Failures)
	}
}
