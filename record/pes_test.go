package record

import (
	"math"
	"slices"
	"strings"
	"testing"
)

// Per launch, the slowest PE's time is the figure, the median and fastest
// PE's beside it; launches some PE lacks are left out.
func TestAcrossPEs(t *testing.T) {
	s, m, f := AcrossPEs([][]float64{{1, 5, 3}, {2, 2, 2, 9}, {3, 1, 1}})
	if !slices.Equal(s, []float64{3, 5, 3}) || !slices.Equal(m, []float64{2, 2, 2}) || !slices.Equal(f, []float64{1, 1, 1}) {
		t.Errorf("slowest %v median %v fastest %v", s, m, f)
	}
	if s, _, _ := AcrossPEs(nil); s != nil {
		t.Errorf("no PE: %v", s)
	}
}

func peTimes(medians ...float64) []PETime {
	var out []PETime
	for pe, m := range medians {
		out = append(out, PETime{PE: pe, GPU: pe % 4, Node: []string{"a", "b"}[pe/4], Samples: []float64{m * 0.99, m, m * 1.01}})
	}
	return out
}

// The straggler is the PE farthest from the others' median beyond
// StragglerShare: a slow one above it, a late one (the others waited)
// below it; none within it, none with two PEs (which one is off?).
func TestFindStraggler(t *testing.T) {
	for _, c := range []struct {
		medians []float64
		pe      int // -1: none
		late    bool
	}{
		{[]float64{10, 10, 10, 10, 10, 14, 10, 10}, 5, false},
		{[]float64{15, 15, 10, 15, 15, 15, 15, 15}, 2, true},
		{[]float64{10, 10.5, 10.9, 10, 10.2, 10, 10, 10}, -1, false},
		{[]float64{10, 20}, -1, false},
		{[]float64{10, 10, 30}, 2, false},
	} {
		s := FindStraggler(peTimes(c.medians...))
		if c.pe < 0 {
			if s != nil {
				t.Errorf("%v: straggler %+v", c.medians, s)
			}
			continue
		}
		if s == nil || s.PE != c.pe || s.Late() != c.late || s.GPU != c.pe%4 || s.Node != []string{"a", "b"}[c.pe/4] {
			t.Errorf("%v: straggler %+v, want PE %d late %v", c.medians, s, c.pe, c.late)
			continue
		}
		if want := map[bool]string{true: "the others waited for it", false: "x the other PEs' time"}[c.late]; !strings.Contains(s.String(), want) {
			t.Errorf("%v: %q", c.medians, s)
		}
	}
	// A PE kept as a summary counts by its median.
	ts := peTimes(10, 10, 10)
	ts[1].Samples, ts[1].Summary = nil, &Summary{Unit: UnitSeconds, Median: 20}
	if s := FindStraggler(ts); s == nil || s.PE != 1 || math.Abs(s.Ratio-2) > 1e-9 {
		t.Errorf("summarised PE: %+v", s)
	}
}

// Annotate derives the straggler and its flag from the PEs' times, again
// on every read; the figure stays one. A PE's sample that is no time is
// refused like a point's.
func TestStragglerFlag(t *testing.T) {
	p := Point{Type: TypePoint, ID: "collectives/allreduce/nccl", Status: StatusOK, Params: Params{Size: 1 << 20, PEs: 4, Launch: LaunchPerOp},
		Samples: []float64{2e-5, 2e-5}, PETimes: peTimes(1e-5, 1e-5, 2e-5, 1e-5), Metrics: map[string]Summary{}}
	Annotate(&Header{}, &p)
	if !p.Has(FlagStraggler) || p.Straggler == nil || p.Straggler.PE != 2 || !p.Figure() {
		t.Errorf("flags %v straggler %+v figure %v", p.Flags, p.Straggler, p.Figure())
	}
	p.PETimes = peTimes(1e-5, 1e-5, 1e-5, 1e-5)
	Annotate(&Header{}, &p)
	if p.Has(FlagStraggler) || p.Straggler != nil {
		t.Errorf("even PEs: flags %v straggler %+v", p.Flags, p.Straggler)
	}
	p.PETimes[3].Samples[1] = -1
	if err := p.Validate(); err == nil || !strings.Contains(err.Error(), "not a positive time") {
		t.Errorf("a PE's negative sample: %v", err)
	}
}
