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
	if len(big.Marks) != 2 || big.Marks[0].Y != 2000 || !strings.Contains(big.Marks[0].Label, "copy engine, no SM") ||
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
