package units_test

import (
	"testing"

	"github.com/nvshbench/nvshbench/internal/units"
)

func TestBytes(t *testing.T) {
	for n, want := range map[int64]string{8: "8 B", 4096: "4 KiB", 1 << 30: "1 GiB", 1536: "1536 B", 1000: "1000 B", 1 << 62: "4 EiB", 9_223_372_036_854_775_807: "9223372036854775807 B", 3 << 40: "3 TiB", 0: "0 B"} {
		if got := units.Bytes(n); got != want {
			t.Errorf("units.Bytes(%d) = %q, want %q", n, got, want)
		}
	}
}

func TestParseSizes(t *testing.T) {
	cases := map[string][]int64{
		"8:64":       {8, 16, 32, 64},
		"1K:1M:32":   {1024, 32768, 1 << 20},
		"256,4K,1G":  {256, 4096, 1 << 30},
		"1MiB":       {1 << 20},
		"2gb":        {2 << 30},
		"8:1G":       nil, // checked by length below
		" 512 , 1k ": {512, 1024},
		"4K,4096,1K": {4096, 1024}, // a size listed twice is measured once
	}
	for in, want := range cases {
		got, err := units.ParseSizes(in)
		if err != nil {
			t.Errorf("%q: %v", in, err)
			continue
		}
		if in == "8:1G" {
			if len(got) != 28 || got[27] != 1<<30 {
				t.Errorf("8:1G gave %d sizes ending %d", len(got), got[len(got)-1])
			}
			continue
		}
		if len(got) != len(want) {
			t.Errorf("%q = %v, want %v", in, got, want)
			continue
		}
		for i := range got {
			if got[i] != want[i] {
				t.Errorf("%q = %v, want %v", in, got, want)
			}
		}
	}
	for _, bad := range []string{"", "0", "-8", "8:4", "x", "1K:1M:1", "8:16:32:64", "99999999999999G"} {
		if _, err := units.ParseSizes(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

func TestValue(t *testing.T) {
	for v, want := range map[float64]string{5000: "5000", 250.4: "250", 2.504: "2.5", 0.02504: "0.025", 0: "0", -1.234: "-1.23", 12345.4: "12345"} {
		if got := units.Value(v); got != want {
			t.Errorf("Value(%v) = %q, want %q", v, got, want)
		}
	}
}

func TestOf(t *testing.T) {
	cases := []struct {
		unit  string
		label string
		div   float64
		prec  int
		known bool
	}{
		{units.BytesPerSec, "GB/s", 1e9, 1, true},
		{units.Seconds, "µs", 1e-6, 2, true},
		{units.OpsPerSec, "Mop/s", 1e6, 1, true},
		{"furlongs", "GB/s", 1e9, 1, false}, // an unknown unit reads as a bandwidth
	}
	for _, c := range cases {
		s, ok := units.Of(c.unit)
		if s.Label != c.label || s.Div != c.div || s.Prec != c.prec || ok != c.known {
			t.Errorf("Of(%q) = %+v, %v", c.unit, s, ok)
		}
	}
	if units.HigherIsBetter(units.Seconds) || !units.HigherIsBetter(units.BytesPerSec) {
		t.Error("HigherIsBetter")
	}
}
