package record_test

import (
	"encoding/json"
	"math"
	"os"
	"testing"

	"github.com/nvshbench/nvshbench/record"
)

// TestPaperMatchesSharedReference checks the embedded, converted reference
// against the project's source data (../shared/reference), when present.
func TestPaperMatchesSharedReference(t *testing.T) {
	b, err := os.ReadFile("../../shared/reference/paper-demystifying-nvshmem.json")
	if err != nil {
		t.Skipf("shared reference not beside the checkout: %v", err)
	}
	var src struct {
		RMA []struct {
			ID, Path, Op string
			GBps         float64
			Bound        string
		} `json:"rma_peak_bandwidth"`
		Lat struct {
			Entries []struct {
				ID, Path, Op string
				Us           float64
			}
		} `json:"rma_latency_256B"`
		AR struct {
			Entries []struct {
				ID    string
				Scope string
				GBps  float64
				Bound string
			}
		} `json:"allreduce_peak_algbw"`
	}
	if err := json.Unmarshal(b, &src); err != nil {
		t.Fatal(err)
	}
	ref := record.Paper()
	find := func(table, key string) *record.RefRow {
		for i := range ref.Rows {
			if ref.Rows[i].Table == table && ref.Rows[i].Key == key {
				return &ref.Rows[i]
			}
		}
		t.Fatalf("embedded reference lacks %s/%s", table, key)
		return nil
	}
	near := func(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Abs(b) }
	for _, e := range src.RMA {
		r := find("rma", e.Op+"/"+e.Path)
		if !near(r.Value, e.GBps*1e9) || r.Bound != e.Bound {
			t.Errorf("rma %s/%s: embedded %v %q, source %v GB/s %q", e.Op, e.Path, r.Value, r.Bound, e.GBps, e.Bound)
		}
	}
	for _, e := range src.Lat.Entries {
		r := find("latency", e.Op+"/"+e.Path)
		if !near(r.Value, e.Us*1e-6) || r.Size != 256 {
			t.Errorf("latency %s/%s: embedded %v at %d B, source %v µs at 256 B", e.Op, e.Path, r.Value, r.Size, e.Us)
		}
	}
	n := 0
	for _, e := range src.AR.Entries {
		for i := range ref.Rows {
			r := &ref.Rows[i]
			if r.Table == "allreduce" && r.Scope == e.Scope && near(r.Value, e.GBps*1e9) && r.Bound == e.Bound {
				n++
				break
			}
		}
	}
	if n != len(src.AR.Entries) || len(src.AR.Entries) == 0 {
		t.Errorf("allreduce: %d of %d source entries found in the embedded reference", n, len(src.AR.Entries))
	}
}

func TestParseReferenceRejectsBadRows(t *testing.T) {
	for name, doc := range map[string]string{
		"duplicate": `{"rows":[{"table":"rma","key":"a","value":1,"ids":["x"],"agg":"max"},{"table":"rma","key":"a","value":1,"ids":["x"],"agg":"max"}]}`,
		"zero":      `{"rows":[{"table":"rma","key":"a","value":0,"ids":["x"],"agg":"max"}]}`,
		"no ids":    `{"rows":[{"table":"rma","key":"a","value":1,"agg":"max"}]}`,
		"agg":       `{"rows":[{"table":"rma","key":"a","value":1,"ids":["x"],"agg":"mean"}]}`,
		"pattern":   `{"rows":[{"table":"rma","key":"a","value":1,"ids":["[x"],"agg":"max"}]}`,
	} {
		if _, err := record.ParseReference([]byte(doc)); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}
