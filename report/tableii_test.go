package report

import (
	"strings"
	"testing"

	"github.com/nvshbench/nvshbench/internal/decide"
	"github.com/nvshbench/nvshbench/record"
)

// Table II, measured: per collective and size, NVSHMEM's choice beside the
// forced algorithms, a winner only where the rule names one (a clear lead
// at one size, a tie at another), a waived algorithm's reason, and the
// algorithms in words for a collective with no forced point.
func TestTableIIForcedAlgorithms(t *testing.T) {
	f := &record.File{Header: record.Header{PEs: 2}}
	add := func(algo string, size int64, tm float64, st record.Status) {
		p := record.Point{Type: record.TypePoint, ID: "collectives/allgather/nvshmem-block", Status: st,
			Params: record.Params{Size: size, DType: "float", Launch: record.LaunchFused}}
		if algo != "" {
			p.Params.Extra = map[string]string{"nvshmem_algo": algo}
			p.Params.Env = map[string]string{"NVSHMEM_FCOLLECT_ALGO": "1"}
		}
		if st != record.StatusOK {
			p.Reason = "needs NVLink multicast"
		} else {
			for k := 0; k < 10; k++ {
				p.Samples = append(p.Samples, tm*(1+0.002*(float64(k)-4.5)))
			}
			if err := record.Derive(&p, record.MetricLatency); err != nil {
				t.Fatal(err)
			}
		}
		f.Points = append(f.Points, p)
	}
	// 1 KiB: ll8 clearly fastest; 1 MiB: the default and oneshot the same.
	add("", 1024, 10e-6, record.StatusOK)
	add("ll8", 1024, 5e-6, record.StatusOK)
	add("oneshot", 1024, 10e-6, record.StatusOK)
	add("nvls", 1024, 0, record.StatusWaived)
	add("", 1<<20, 50e-6, record.StatusOK)
	add("oneshot", 1<<20, 50.01e-6, record.StatusOK)
	if !hasForcedAlgos(f) {
		t.Fatal("a file with forced points has no Table II")
	}
	tab := tableII(f, "", decide.Default())
	rows := map[string][]string{}
	for _, r := range tab.Rows {
		var cells []string
		for _, c := range r {
			cells = append(cells, c.Text)
		}
		rows[cells[0]+" "+cells[3]] = cells
	}
	small, big := rows["allgather 1 KiB"], rows["allgather 1 MiB"]
	if small == nil || big == nil {
		t.Fatalf("rows %v", rows)
	}
	if small[4] != "10.0" || !strings.Contains(small[5], "ll8 5") || !strings.Contains(small[5], "oneshot 10") {
		t.Errorf("1 KiB: default %q, forced %q", small[4], small[5])
	}
	if !strings.HasPrefix(small[6], "ll8") || !strings.HasPrefix(small[7], "ll8") || strings.Contains(small[7], "tie") {
		t.Errorf("1 KiB: fastest forced %q, fastest %q: want ll8 a winner", small[6], small[7])
	}
	if !strings.Contains(small[8], "nvls: waived: needs NVLink multicast") {
		t.Errorf("1 KiB: the waived algorithm's reason is missing: %q", small[8])
	}
	if !strings.Contains(big[6], "alone") || !strings.Contains(big[7], "tie") {
		t.Errorf("1 MiB: fastest forced %q, fastest %q: want oneshot alone and a tie with the default", big[6], big[7])
	}
	for _, c := range []string{"allreduce", "broadcast", "reducescatter"} {
		if r := rows[c+" –"]; r == nil || !strings.Contains(r[8], "NVSHMEM's algorithms") {
			t.Errorf("%s: no words row: %v", c, r)
		}
	}
	if rows["allgather –"] != nil {
		t.Error("a measured collective also has a words row")
	}
}
