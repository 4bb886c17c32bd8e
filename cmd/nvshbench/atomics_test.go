package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/nvshbench/nvshbench/record"
)

// NVSHMEM 3.7's float atomics on the fake GPU layer: listed, waived with
// the release they need on its default NVSHMEM 3.4.5 (waived, not failed:
// the run exits 0), run and verified where it models 3.8.0, each point
// naming its dtype (f64, f32, f16 at 8, 4, 2 bytes), on 2 PEs.
func TestFloatAtomicsWithFakeGPU(t *testing.T) {
	list, _, code := nvshbench(t, "list", "--wide", "rma/atomic/*", "latency/atomic/*")
	for _, id := range []string{"rma/atomic/float_fetch_add", "rma/atomic/float_add", "latency/atomic/float_fetch_add", "latency/atomic/float_add"} {
		if code != 0 || !strings.Contains(list, id) {
			t.Errorf("list atomic (exit %d) lacks %s:\n%s", code, id, list)
		}
	}
	ids := []string{"rma/atomic/float_*", "latency/atomic/float_*"}
	for _, c := range []struct {
		nvshmem string
		want    record.Status // every float point's status
	}{{"", record.StatusWaived}, {"3.8.0", record.StatusOK}} {
		t.Setenv("NVSHBENCH_FAKE_NVSHMEM", c.nvshmem)
		out := filepath.Join(t.TempDir(), "float.jsonl")
		_, stderr, code := nvshbench(t, append([]string{"run", "--shim", "fake", "--pes-per-gpu", "2", "--samples", "2", "--out", out}, ids...)...)
		if code != 0 {
			t.Fatalf("NVSHMEM %q: exit %d: %s", c.nvshmem, code, stderr)
		}
		f, err := record.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		dtypes := map[string]string{}
		for _, p := range f.Points {
			if !strings.Contains(p.ID, "/float_") {
				continue
			}
			dtypes[p.ID] += p.Params.DType + " "
			if want := map[string]int64{"f64": 8, "f32": 4, "f16": 2}[p.Params.DType]; p.Params.Size != want {
				t.Errorf("%s: dtype %q at %d bytes", p.ID, p.Params.DType, p.Params.Size)
			}
			switch {
			case p.Status != c.want:
				t.Errorf("NVSHMEM %q: %s %s: %s %s", c.nvshmem, p.ID, p.Params.Key(), p.Status, p.Reason)
			case c.want == record.StatusWaived && !strings.Contains(p.Reason, "needs NVSHMEM >= 3.7"):
				t.Errorf("%s %s waived for %q", p.ID, p.Params.Key(), p.Reason)
			case c.want == record.StatusOK && (!p.Verify.Checked || !p.Verify.OK):
				t.Errorf("%s %s: verify %+v", p.ID, p.Params.Key(), p.Verify)
			}
		}
		if len(dtypes) != 4 {
			t.Errorf("NVSHMEM %q: float rows run %v", c.nvshmem, dtypes)
		}
		for id, d := range dtypes {
			if d != "f64 f32 f16 " {
				t.Errorf("%s: dtypes %s", id, d)
			}
		}
	}
}
