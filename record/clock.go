package record

import (
	"fmt"
	"math"
	"slices"
)

// Clock is what a point's GPU ran at while the point ran: its SM clock and
// power draw, sampled on the worker's host (NVML) from the point's start
// to its end (calibration, warm-up, timed launches and check), of the GPU
// of the PE that timed it (where several did, the one whose median clock
// was lowest: the point is as fast as its slowest). Absent where nothing
// was sampled (no NVML; files before it).
type Clock struct {
	PE         int     `json:"pe"`           // the PE whose GPU it is
	N          int     `json:"n"`            // readings
	SMMinHz    float64 `json:"sm_min_hz"`    // the lowest SM clock read
	SMMedianHz float64 `json:"sm_median_hz"` // the median SM clock read
	// PowerW is the mean power draw read (0: not known); NVML's reading is
	// the driver's average over about a second on recent GPUs.
	PowerW float64 `json:"power_w,omitempty"`
}

// The plausible range of a recorded clock and power.
const (
	MaxClockHz = 10e9
	MaxPowerW  = 10e3
)

// ClockOf summarises a GPU's readings (SM clock Hz, power W: clocks[i],
// power[i]) of PE pe; nil for none.
func ClockOf(pe int, clocks, power []float64) *Clock {
	if len(clocks) == 0 {
		return nil
	}
	s := slices.Clone(clocks)
	slices.Sort(s)
	c := &Clock{PE: pe, N: len(s), SMMinHz: s[0], SMMedianHz: Quantile(s, 0.5)}
	sum, n := 0.0, 0
	for _, w := range power {
		if w > 0 {
			sum, n = sum+w, n+1
		}
	}
	if n > 0 {
		c.PowerW = sum / float64(n)
	}
	return c
}

// validate refuses a clock outside its physical range (a damaged record).
func (c *Clock) validate() error {
	if c == nil {
		return nil
	}
	for _, v := range []struct {
		name      string
		v, lo, hi float64
	}{{"sm_min_hz", c.SMMinHz, 1, MaxClockHz}, {"sm_median_hz", c.SMMedianHz, 1, MaxClockHz}, {"power_w", c.PowerW, 0, MaxPowerW}} {
		if math.IsNaN(v.v) || v.v < v.lo || v.v > v.hi {
			return fmt.Errorf("clock %s = %g is outside %g..%g: a damaged record", v.name, v.v, v.lo, v.hi)
		}
	}
	if c.SMMinHz > c.SMMedianHz || c.N < 1 {
		return fmt.Errorf("clock: min %g above median %g, or %d readings: a damaged record", c.SMMinHz, c.SMMedianHz, c.N)
	}
	return nil
}

// String says the clock, "SM 1980 MHz (min 1965, 23 readings), 512 W".
func (c *Clock) String() string {
	if c == nil {
		return ""
	}
	s := fmt.Sprintf("SM %.0f MHz (min %.0f, %d reading%s)", c.SMMedianHz/1e6, c.SMMinHz/1e6, c.N, map[bool]string{true: "", false: "s"}[c.N == 1])
	if c.PowerW > 0 {
		s += fmt.Sprintf(", %.0f W", c.PowerW)
	}
	return s
}

// ClockMargin: a point whose median SM clock is more than this below the
// run's (the median over its points') is flagged FlagLowClock, and two
// figures whose clocks differ by more are not set against each other as
// an effect (ClocksDiffer). The decision rule's practical margin (3 %):
// a compute-bound time scales with the clock, so a clock that far apart
// alone makes a difference the rule would claim.
const ClockMargin = 0.03

// RunClock is the run's SM clock: the median over its measured points'
// median clocks (0: none has one).
func RunClock(points []Point) float64 {
	var m []float64
	for i := range points {
		if p := &points[i]; p.Status == StatusOK && p.Clock != nil {
			m = append(m, p.Clock.SMMedianHz)
		}
	}
	if len(m) == 0 {
		return 0
	}
	slices.Sort(m)
	return Quantile(m, 0.5)
}

// ClockChecks finds the measured points whose GPU ran at a median SM clock
// more than ClockMargin below the run's (RunClock) and says why, naming
// the GPU's PE and the clocks.
func ClockChecks(points []Point) map[*Point]string {
	ref := RunClock(points)
	out := map[*Point]string{}
	if ref <= 0 {
		return out
	}
	for i := range points {
		p := &points[i]
		if c := p.Clock; p.Status == StatusOK && c != nil && c.SMMedianHz < (1-ClockMargin)*ref {
			out[p] = fmt.Sprintf("PE %d's GPU at SM %.0f MHz (min %.0f), %.0f %% below the run's %.0f MHz", c.PE, c.SMMedianHz/1e6, c.SMMinHz/1e6,
				100*(1-c.SMMedianHz/ref), ref/1e6)
		}
	}
	return out
}

// MarkClocks adds FlagLowClock to every point ClockChecks finds. Readers
// call it once a file's points are read (Read): the run's clock is known
// then.
func MarkClocks(points []Point) {
	for p := range ClockChecks(points) {
		if !p.Has(FlagLowClock) {
			p.Flags = append(p.Flags, FlagLowClock)
		}
	}
}

// ClocksDiffer says why two figures are not set against each other as an
// effect: their GPUs ran at median SM clocks more than ClockMargin apart
// ("" where they did not, or either has no clock).
func ClocksDiffer(a, b *Clock) string {
	if a == nil || b == nil || a.SMMedianHz <= 0 || b.SMMedianHz <= 0 {
		return ""
	}
	lo, hi := min(a.SMMedianHz, b.SMMedianHz), max(a.SMMedianHz, b.SMMedianHz)
	if lo >= (1-ClockMargin)*hi {
		return ""
	}
	return fmt.Sprintf("the two ran at SM clocks %.0f and %.0f MHz, %.0f %% apart", a.SMMedianHz/1e6, b.SMMedianHz/1e6, 100*(1-lo/hi))
}

// FlagReasons are the reasons of the flags that a point's file, not the
// point alone, gives it (FlagCheck: ShapeChecks; FlagLowClock:
// ClockChecks), by point and flag.
func FlagReasons(points []Point) map[*Point]map[string]string {
	out := map[*Point]map[string]string{}
	add := func(p *Point, flag, why string) {
		if out[p] == nil {
			out[p] = map[string]string{}
		}
		out[p][flag] = why
	}
	for p, why := range ShapeChecks(points) {
		add(p, FlagCheck, why)
	}
	for p, why := range ClockChecks(points) {
		add(p, FlagLowClock, why)
	}
	return out
}
