package report_test

import (
	"strings"
	"testing"

	"github.com/nvshbench/nvshbench/internal/decide"
	"github.com/nvshbench/nvshbench/internal/fixture"
	"github.com/nvshbench/nvshbench/internal/table"
	"github.com/nvshbench/nvshbench/record"
	"github.com/nvshbench/nvshbench/report"
)

// deviceAPIFile: NVSHMEM and NCCL-device-API points of one run.
func deviceAPIFile(t *testing.T) *record.File {
	f := &record.File{Name: "dev", Header: record.Header{PEs: 2, Nodes: 1}}
	add := func(id string, size int64, secs float64, metrics ...string) {
		p := record.Point{Type: record.TypePoint, ID: id, Status: record.StatusOK,
			Params:    record.Params{Size: size, CTAs: 32, Threads: 256, PEs: 2, Path: "p2p", Dir: "uni"},
			Effective: "p2p", Timer: "events", Iters: 10, Bytes: size, BusFactor: 1,
			Verify: record.Verification{Checked: true, OK: true}, Limit: &record.Limit{ID: "limit/ce-copy", Value: 396e9},
			WorkingSetBytes: size}
		for k := 0; k < 6; k++ {
			p.Samples = append(p.Samples, secs*(1+0.002*float64(k%3-1))) // ±0.2 %, the median secs
		}
		if strings.HasPrefix(id, "collectives/") {
			p.Params.CTAs, p.Params.Threads, p.Limit, p.Effective = 132, 512, nil, "oneshot-p2p"
			p.Params.Launch = record.LaunchPerOp
		}
		if err := record.Derive(&p, metrics...); err != nil {
			t.Fatal(err)
		}
		f.Points = append(f.Points, p)
	}
	const big = 256 << 20
	add("rma/put/block", big, big/310e9, record.MetricBandwidth)
	add("rma/nccl-lsa/put/block", big, big/350e9, record.MetricBandwidth)
	add("rma/get/block", big, big/300e9, record.MetricBandwidth)
	add("rma/nccl-lsa/get/block", big, big/303e9, record.MetricBandwidth) // 1 % apart: a tie
	add("rma/nccl-lsa/put/block", big, big/999e9, record.MetricBandwidth) // bidirectional: not this table's
	f.Points[len(f.Points)-1].Params.Dir = "bidir"
	for _, id := range []string{"collectives/allreduce/multicta", "collectives/allreduce/nccl-lsa", "collectives/allreduce/nccl-ring"} {
		add(id, 8, map[string]float64{"collectives/allreduce/multicta": 3.6e-6, "collectives/allreduce/nccl-lsa": 3.1e-6, "collectives/allreduce/nccl-ring": 5.6e-6}[id],
			record.MetricAlgBW, record.MetricBusBW, record.MetricLatency)
	}
	// A fused kernel pays no launch per operation: never beside the per-op rows.
	add("collectives/allreduce/multicta", 8, 2.0e-6, record.MetricAlgBW, record.MetricBusBW, record.MetricLatency)
	f.Points[len(f.Points)-1].Params.Launch = record.LaunchFused
	f.Points = append(f.Points, record.Point{Type: record.TypePoint, ID: "rma/nccl-gin/put-signal/block", Status: record.StatusWaived,
		Params: record.Params{Size: big, CTAs: 32, Threads: 256, PEs: 2, Path: "p2p", Dir: "uni"},
		Reason: "ncclDevCommCreate with GIN resources: invalid usage: GIN not supported."})
	f.Points = append(f.Points, record.Point{Type: record.TypePoint, ID: "rma/put-signal/block", Status: record.StatusOK})
	return f
}

func findTable(r *table.Report, prefix string) *table.Table {
	for i := range r.Tables {
		if strings.HasPrefix(r.Tables[i].Title, prefix) {
			return &r.Tables[i]
		}
	}
	return nil
}

func TestDeviceAPITable(t *testing.T) {
	rep := report.Build([]*record.File{deviceAPIFile(t)}, record.Paper(), report.Options{})
	tab := findTable(rep, "Device-initiated: NVSHMEM vs NCCL device API")
	if tab == nil {
		t.Fatal("no device-API table")
	}
	rows := map[string][]table.Cell{}
	for _, r := range tab.Rows {
		rows[r[0].Text] = r
	}
	put := rows["put, block scope"]
	if put == nil || put[2].Text != "310.0" || put[3].Text != "350.0" || put[4].Text != "1.13" || put[6].Text != "NCCL dev API" || put[7].Text != "396.0" {
		t.Errorf("put row: %+v", put)
	}
	// The verdict is the rule's: 1 % apart is a tie however tight; a
	// margin of 0.5 % makes it a winner.
	if get := rows["get, block scope"]; get == nil || get[6].Text != "tie (within 3 %)" {
		t.Errorf("get row: %+v", get)
	}
	loose := report.Build([]*record.File{deviceAPIFile(t)}, record.Paper(), report.Options{Rule: decide.Rule{Margin: 0.005, Alpha: 0.05}})
	for _, r := range findTable(loose, "Device-initiated").Rows {
		if r[0].Text == "get, block scope" && r[6].Text != "NCCL dev API" {
			t.Errorf("get row with a 0.5 %% margin: %+v", r)
		}
	}
	ar := rows["AllReduce at 8 B"]
	if ar == nil || ar[2].Text != "3.60" || ar[3].Text != "3.10" || ar[5].Text != "5.60" || ar[6].Text != "NCCL dev API" {
		t.Errorf("AllReduce 8 B row (one launch per operation on every side, the fused 2.0 µs never): %+v", ar)
	}
	gin := rows["put + signal, block scope"]
	if gin == nil || gin[6].Text != "" || !strings.Contains(gin[8].Text, "NCCL: waived: ncclDevCommCreate") || !strings.Contains(gin[8].Text, "GIN not supported") {
		t.Fatalf("GIN row: %+v", gin)
	}
	if _, ok := rows["get, warp scope"]; ok {
		t.Error("a row neither side measured is shown")
	}
	// A file without the device API gets no such table.
	plain := report.Build([]*record.File{fixture.Synthetic(fixture.Options{Seed: 1})}, record.Paper(), report.Options{})
	if findTable(plain, "Device-initiated") != nil {
		t.Error("device-API table on a file that never ran the device API")
	}
}

// On one PE, host ncclAllReduce is NCCL's one-rank copy (its benchmark
// declares NCCL's own collective: for one rank NCCL runs none), never
// compared with kernels that run an AllReduce: the table shows its time and
// why it is left out, and decides between the two kernels alone; so does
// the summary.
func TestOneRankCopyIsNotCompared(t *testing.T) {
	f := deviceAPIFile(t)
	f.Header.PEs = 1
	for i := range f.Points {
		p := &f.Points[i]
		p.Params.PEs = 1
		switch p.ID {
		case "collectives/allreduce/nccl-ring":
			p.Code = &record.Code{Calls: record.NCCL, Collective: record.NCCL}
			for k := range p.Samples {
				p.Samples[k] /= 5 // a copy: far faster than a kernel's AllReduce
			}
			if err := record.Derive(p, record.MetricAlgBW, record.MetricBusBW, record.MetricLatency); err != nil {
				t.Fatal(err)
			}
		case "collectives/allreduce/multicta":
			p.Code = &record.Code{Calls: record.NVSHMEM}
		case "collectives/allreduce/nccl-lsa":
			p.Code = &record.Code{Calls: record.NCCL}
		}
	}
	tab := findTable(report.Build([]*record.File{f}, record.Paper(), report.Options{}), "Device-initiated")
	var ar []table.Cell
	for _, r := range tab.Rows {
		if r[0].Text == "AllReduce at 8 B" {
			ar = r
		}
	}
	if ar == nil || ar[5].Text != "1.12" || ar[6].Text != "NCCL dev API" || !strings.Contains(ar[8].Text, "host NCCL: NCCL's one-rank copy") {
		t.Errorf("AllReduce at 8 B on one PE: %+v", ar)
	}
	sum := report.Summary([]*record.File{f}, record.Paper(), decide.Default()).Tables[0]
	found := false
	for _, r := range sum.Rows {
		if strings.Contains(r[0].Text, "AllReduce at 8 B") {
			found = true
			if notes := r[len(r)-1].Text; !strings.Contains(notes, "faster: NCCL device API") || !strings.Contains(notes, "host ncclAllReduce: 1 PE: NCCL's one-rank copy, no reduction: never compared") {
				t.Errorf("summary: %q", notes)
			}
		}
	}
	if !found {
		t.Error("no AllReduce at 8 B in the summary")
	}
}
