package plots

import "testing"

// A log axis reaches the 1-2-5 values around its data, so a labelled tick
// lies above the highest point (ping-pong 2.1 … 9.3 µs: ticks up to 10).
func TestLogBoundsBracketTheData(t *testing.T) {
	for _, c := range []struct{ lo, hi, wlo, whi float64 }{
		{2.1, 9.3, 2, 10}, {0.37, 0.41, 0.2, 0.5}, {1, 5, 1, 5}, {120, 3400, 100, 5000},
	} {
		lo, hi := logBounds(c.lo, c.hi)
		if lo != c.wlo || hi != c.whi {
			t.Errorf("logBounds(%v, %v) = %v, %v; want %v, %v", c.lo, c.hi, lo, hi, c.wlo, c.whi)
		}
		top := 0.0
		for _, tk := range (LogTicks125{}).Ticks(lo, hi) {
			if tk.Label != "" {
				top = max(top, tk.Value)
			}
		}
		if top < c.hi {
			t.Errorf("[%v, %v]: highest labelled tick %v is below the data", c.lo, c.hi, top)
		}
	}
}
