package plots_test

import (
	"io"
	"strings"
	"testing"

	"github.com/nvshbench/nvshbench/internal/fixture"
	"github.com/nvshbench/nvshbench/plots"
	"github.com/nvshbench/nvshbench/record"
)

// Bytes per SM has its own charts, GB/s against the SM budget (a curve per
// mechanism, the copy engine a line across at no SM, alone and beside a
// compute kernel), at the largest size
// beyond L2 and at 1 MiB; its rows are on no chart against message size.
func TestPerSMCharts(t *testing.T) {
	specs := plots.Build([]*record.File{fixture.PerSMExample()}, nil)
	var names []string
	var big *plots.Spec
	for i, s := range specs {
		names = append(names, s.Name)
		if s.Name == "persm-268435456" {
			big = &specs[i]
		}
		if !strings.HasPrefix(s.Name, "persm-") {
			t.Errorf("chart %s drew bytes-per-SM rows against message size", s.Name)
		}
	}
	if big == nil || len(specs) != 2 {
		t.Fatalf("charts %v: want persm-1048576 and persm-268435456", names)
	}
	if big.XUnit != "SMs" || len(big.Series) != 2 || big.Series[0].Label != "st" || big.Series[1].Label != "tma" {
		t.Fatalf("%+v", big)
	}
	tma := big.Series[1].Points
	if len(tma) != 6 || tma[0].X != 1 || tma[5].X != 132 || tma[3].Y != 2000 || tma[3].Lo > tma[3].Y || tma[3].Hi < tma[3].Y {
		t.Errorf("tma: %+v", tma)
	}
	// The copy engine alone, and beside fma on every SM (measured at 256
	// MiB only: the 1 MiB chart has no such line).
	if len(big.Marks) != 2 || big.Marks[0].Y != 2000 || big.Marks[0].Label != "copy engine (not checked for SM use): 2000 GB/s" ||
		big.Marks[1].Y != 1600 || big.Marks[1].Label != "copy engine beside fma on every SM: 1600 GB/s" {
		t.Errorf("marks %+v", big.Marks)
	}
	for _, s := range specs {
		if s.Name == "persm-1048576" && len(s.Marks) != 1 {
			t.Errorf("1 MiB: marks %+v", s.Marks)
		}
	}
	for _, s := range specs {
		if err := plots.Render(io.Discard, s, "svg"); err != nil {
			t.Errorf("%s: %v", s.Name, err)
		}
	}
}

// The copy engine's lines say what its rows' ce_sm_free shows: no SM where
// checked, "not checked" where absent (and a note), and on SMs where a copy
// waited for a CTA slot (cudaMemcpyAsync, the driver's kernel: no "no SM"
// anywhere on the chart, a note that its lines are references).
func TestPerSMChartsCopyEngineCheck(t *testing.T) {
	for _, c := range []struct {
		name          string
		f             *record.File
		alone, beside string
		note          string // a note of the chart starts so ("": none on the copy engine)
	}{
		{"checked", fixture.PerSMExampleCE(1), "copy engine, no SM (checked): 2000 GB/s", "copy engine beside fma on every SM: 1600 GB/s", ""},
		{"not checked", fixture.PerSMExample(), "copy engine (not checked for SM use): 2000 GB/s", "copy engine beside fma on every SM: 1600 GB/s",
			"the copy engine's lines: not checked for SM use"},
		{"on SMs", fixture.PerSMExampleCE(0), "cudaMemcpyAsync, on SMs (the driver's kernel): 2000 GB/s", "cudaMemcpyAsync beside fma on every SM: 1600 GB/s",
			"cudaMemcpyAsync (persm/ce) ran on SMs here (the driver's kernel: it waited for a free CTA slot)"},
	} {
		var big *plots.Spec
		specs := plots.Build([]*record.File{c.f}, nil)
		for i := range specs {
			if specs[i].Name == "persm-268435456" {
				big = &specs[i]
			}
		}
		if big == nil || len(big.Marks) != 2 {
			t.Fatalf("%s: %+v", c.name, big)
		}
		if big.Marks[0].Label != c.alone || big.Marks[1].Label != c.beside {
			t.Errorf("%s: marks %q, %q; want %q, %q", c.name, big.Marks[0].Label, big.Marks[1].Label, c.alone, c.beside)
		}
		var ce []string
		for _, n := range big.Notes {
			if strings.Contains(n, "copy engine") || strings.Contains(n, "cudaMemcpyAsync") {
				ce = append(ce, n)
			}
		}
		if c.note == "" && len(ce) != 0 || c.note != "" && (len(ce) != 1 || !strings.HasPrefix(ce[0], c.note)) {
			t.Errorf("%s: notes on the copy engine %q, want one starting %q", c.name, ce, c.note)
		}
		if c.name == "on SMs" {
			for _, s := range specs {
				for _, m := range s.Marks {
					if strings.Contains(m.Label, "no SM") {
						t.Errorf("%s: %s: mark %q", c.name, s.Name, m.Label)
					}
				}
			}
		}
	}
}
