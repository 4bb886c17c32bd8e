package record

import (
	"strings"
	"testing"
)

// A point's clock summarises its readings; a damaged one (a median under
// its min, a clock or a power out of range) fails the point's validation;
// two clocks more than ClockMargin apart are said to differ, closer ones
// not; with no point clocked, nothing is flagged.
func TestClockReadingsAndBounds(t *testing.T) {
	c := ClockOf(2, []float64{1980e6, 1965e6, 1980e6, 1410e6}, []float64{500, 0, 520, 510})
	if c.PE != 2 || c.N != 4 || c.SMMinHz != 1410e6 || c.SMMedianHz != 1972.5e6 || c.PowerW != 510 {
		t.Errorf("clock %+v", c)
	}
	if s := c.String(); s != "SM 1972 MHz (min 1410, 4 readings), 510 W" {
		t.Errorf("said %q", s)
	}
	if ClockOf(0, nil, nil) != nil {
		t.Error("no readings, a clock")
	}
	p := Point{Type: TypePoint, ID: "rma/put/block", Status: StatusOK, Samples: []float64{1e-3}, Clock: c}
	if err := p.Validate(); err != nil {
		t.Errorf("a plausible clock refused: %v", err)
	}
	for _, bad := range []Clock{{N: 1, SMMinHz: 2e9, SMMedianHz: 1e9}, {N: 1, SMMinHz: 1e9, SMMedianHz: 2e10}, {N: 1, SMMinHz: 1e9, SMMedianHz: 1e9, PowerW: -5},
		{N: 0, SMMinHz: 1e9, SMMedianHz: 1e9}} {
		p.Clock = &bad
		if err := p.Validate(); err == nil || !strings.Contains(err.Error(), "damaged record") {
			t.Errorf("clock %+v: %v", bad, err)
		}
	}
	a, b := &Clock{SMMedianHz: 1980e6}, &Clock{SMMedianHz: 1935e6}
	if why := ClocksDiffer(a, b); why != "" {
		t.Errorf("2.3 %% apart: %q", why)
	}
	b.SMMedianHz = 1800e6
	if why := ClocksDiffer(a, b); !strings.Contains(why, "1980 and 1800 MHz, 9 % apart") || ClocksDiffer(a, nil) != "" {
		t.Errorf("9 %% apart: %q", why)
	}
	pts := []Point{{Status: StatusOK}, {Status: StatusOK}}
	MarkClocks(pts)
	if len(pts[0].Flags) != 0 || RunClock(pts) != 0 {
		t.Errorf("no clocks: flags %v", pts[0].Flags)
	}
}
