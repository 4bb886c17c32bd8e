package record

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

	"gonum.org/v1/gonum/stat"
)

// What the checks of a point's numbers can find (Point.Flags). Some take a
// point out of the figures (Point.Figure: above the link, cache-served, an
// older file's second timer, an unknown launch mode); the others are said
// beside a figure that stays one (timers disagree, noisy, at the memory
// ceiling, above the copy reference, below the floor, check).
const (
	// FlagTimersDisagree: the in-kernel timer's mean per iteration differs
	// from the events timer's time per operation by more than
	// TimerTolerance: any point whose launches carry in-kernel stamps
	// (latency, bandwidth, collectives, MoE alike).
	FlagTimersDisagree = "timers disagree"
	// FlagNoisy: the events timer's samples spread by more than NoiseCV
	// (their coefficient of variation): the median is still the figure,
	// and the spread is said beside it.
	FlagNoisy = "noisy"
	// FlagAtMemoryCeiling: a copy that stays on one GPU, its working set
	// beyond the cache, at MemoryCeilingShare of its memory's read+write
	// ceiling or more: memory-bound, a figure of the memory and never of a
	// link (and above what the in-run copies reach from memory: look again).
	FlagAtMemoryCeiling = "at the memory ceiling"
	// FlagCheck: the shape of the point's series says look again: a
	// latency that falls with size by more than its noise, or a tenfold
	// drop of the delivered rate between neighbouring sizes beyond the
	// cache (ShapeChecks says which and why). Readers derive it from the
	// series; a point alone cannot.
	FlagCheck = "check"
	// FlagAboveLink: a bandwidth above its path's physical ceiling (a bug
	// until explained).
	FlagAboveLink = "above the physical link"
	// FlagAboveReference: above the best copy reference of the same run but
	// within the link: fine, and said.
	FlagAboveReference = "above the copy reference"
	// FlagCacheServed: a buffer within CacheMargin × the L2 of the GPU that
	// serves it: the figure measures the cache, not the link.
	FlagCacheServed = "cache-served"
	// FlagBelowFloor: a round trip faster than the in-run dependent-load
	// chase of its path (a bug until explained).
	FlagBelowFloor = "below the in-run floor"
	// FlagModeUnknown: a collective from before launch modes were recorded:
	// never compared with another.
	FlagModeUnknown = "launch mode unknown"
	// FlagSecondTimer: an older file's in-kernel timer row: a spread, never
	// a figure.
	FlagSecondTimer = "in-kernel timer row"
	// FlagStraggler: one PE's time differs from the other PEs' by more than
	// StragglerShare (Point.Straggler names it): the figure is the slowest
	// PE's, as the operation costs, and says so.
	FlagStraggler = "straggler"
	// FlagLowClock: the point's GPU ran at a median SM clock more than
	// ClockMargin below the run's (power or heat capping, another
	// application's load): its figure is not the run's GPU at its clock.
	// Readers derive it from the run (ClockChecks says which GPU and how
	// far); a point alone cannot.
	FlagLowClock = "low clock"
)

// TimerTolerance is how far the in-kernel timer's mean may be from the
// events figure (relative).
const TimerTolerance = 0.10

// NoiseCV is the coefficient of variation (sample standard deviation over
// mean) of a point's events-timer samples (samples_s, the seconds per
// operation of each timed launch) above which it is noisy. The samples are
// what every metric is derived from, so one test holds for latency,
// bandwidth and collectives alike (a bandwidth is bytes over them: the same
// relative spread to first order). 10 %: the tolerance the two timers are
// held to — samples spread further cannot tell such a disagreement, or a
// 10 % difference between two rows, from noise. Measured runs sit far
// below it (docs/methodology.md, "Flags").
const NoiseCV = 0.10

// MemoryCeilingShare: a copy within one GPU at this fraction of its
// memory's read+write ceiling or more is at the memory ceiling: above what
// the in-run copies reach from memory (docs/methodology.md, "Flags"), so a
// copy there is memory-bound at the very least.
const MemoryCeilingShare = 0.95

// CacheMargin: a buffer up to this many times the L2 can still be answered
// by it in part: a buffer just over the L2 reads faster than larger ones
// (docs/methodology.md, "The cache rule").
const CacheMargin = 2

// CacheServed reports whether a buffer of ws bytes may be answered by an
// L2 of l2 bytes.
func CacheServed(ws, l2 int64) bool { return l2 > 0 && ws > 0 && ws <= CacheMargin*l2 }

// Has reports whether the point carries the flag.
func (p *Point) Has(flag string) bool { return slices.Contains(p.Flags, flag) }

// Figure reports whether the point may be a peak, a headline or a table's
// value: measured (ok), not served by a cache, within its link, timed by
// the one timer, of a known launch mode. The other flags leave it a figure
// and are said beside it: noisy (the median of its samples is still the
// best estimate, and compare weighs the spread), check (the shape of its
// series is odd, but which of two neighbours is wrong a series cannot
// tell), at the memory ceiling (a figure of the local path: the memory's,
// never a link's), timers disagree, above the copy reference, below the
// floor.
func (p *Point) Figure() bool {
	if p.Status != StatusOK {
		return false
	}
	for _, f := range []string{FlagAboveLink, FlagCacheServed, FlagSecondTimer, FlagModeUnknown} {
		if p.Has(f) {
			return false
		}
	}
	return true
}

// Unjudged says why no verdict (a winner, a crossover) may rest on the
// point, "" where one may: it is not measured (its status), or a flag says
// it is no figure (above the link, cache-served, an older file's second
// timer, an unknown launch mode) or asks for a second look before anyone
// draws a conclusion from it (noisy, timers disagree, above the copy
// reference, below the floor, at the memory ceiling, check, low clock:
// Read marks check from the point's series and low clock from the run).
// Every reader that names a winner asks it (decide.Entry.Unjudged).
func (p *Point) Unjudged() string {
	if p.Status != StatusOK {
		return string(p.Status)
	}
	for _, f := range []string{FlagAboveLink, FlagCacheServed, FlagSecondTimer, FlagModeUnknown,
		FlagNoisy, FlagTimersDisagree, FlagAboveReference, FlagBelowFloor, FlagAtMemoryCeiling, FlagCheck, FlagLowClock} {
		if p.Has(f) {
			return f
		}
	}
	return ""
}

// Drawn reports whether the point belongs on a curve: measured, within its
// link, timed by the one timer. Noisy points, checked points and points at
// the memory ceiling are drawn (a chart marks the checked ones).
func (p *Point) Drawn() bool {
	return p.Status == StatusOK && !p.Has(FlagAboveLink) && !p.Has(FlagSecondTimer)
}

// MovesBytes reports whether the point's figures are bytes over its time
// (bandwidth, algbw, busbw): a cache that holds its working set answers
// them (CacheServed). A round trip, a rate of messages or a compute
// kernel's time is what it is wherever its data sits.
func (p *Point) MovesBytes() bool {
	for _, m := range []string{MetricBandwidth, MetricAlgBW, MetricBusBW} {
		if _, ok := p.Metrics[m]; ok {
			return true
		}
	}
	return false
}

// BandwidthMetric is the point's bandwidth-like metric checked against the
// link: what crossed it (MoE), bandwidth, busbw, or algbw where no bus is
// crossed ("" for none).
func (p *Point) BandwidthMetric() string {
	if strings.HasPrefix(p.ID, "moe/") {
		// DeepEP's bandwidth counts every selection, also those that stay on
		// the GPU and a token read once for its k copies: only what crossed a
		// link is held to one.
		if _, ok := p.Metrics[MetricLink]; ok {
			return MetricLink
		}
		return ""
	}
	for _, m := range []string{MetricBandwidth, MetricBusBW, MetricAlgBW} {
		if _, ok := p.Metrics[m]; ok {
			return m
		}
	}
	return ""
}

// Annotate derives the point's ceiling (from the header's links) and its
// flags; writers and readers both call it, so a file's flags always follow
// from its numbers.
func Annotate(h *Header, p *Point) {
	p.Flags, p.Straggler = nil, nil
	if p.Timer == "globaltimer" {
		p.Flags = append(p.Flags, FlagSecondTimer)
	}
	if p.Status != StatusOK {
		return
	}
	if strings.HasPrefix(p.ID, "collectives/") && p.Params.Launch == "" {
		p.Flags = append(p.Flags, FlagModeUnknown)
	}
	if l := h.ceilingOf(p); l != nil {
		p.Ceiling = &Limit{ID: "link/" + l.Kind, Value: l.Bps}
	}
	// A point served by the L2 of its own GPU never reaches the memory: the
	// memory's rate is no ceiling of it (a link is: its bytes cross it).
	memoryOnly := p.Ceiling != nil && p.Ceiling.ID == "link/"+LinkMemory && p.L2Resident
	if m := p.BandwidthMetric(); m != "" {
		v := p.Metrics[m].Median
		switch {
		case p.Ceiling != nil && v > p.Ceiling.Value && !memoryOnly:
			p.Flags = append(p.Flags, FlagAboveLink)
		case p.Limit != nil && p.Limit.Value > 0 && v > p.Limit.Value && !strings.HasPrefix(p.ID, "limit/"):
			p.Flags = append(p.Flags, FlagAboveReference)
		}
	}
	if p.L2Resident && p.MovesBytes() { // a round trip is one wherever its result lands
		p.Flags = append(p.Flags, FlagCacheServed)
	}
	if atMemoryCeiling(p) {
		p.Flags = append(p.Flags, FlagAtMemoryCeiling)
	}
	if lat, ok := p.Metrics[MetricLatency]; ok {
		floor := 0.0
		if p.Floor != nil {
			floor = p.Floor.Value
		}
		if rb := p.Values[ValueRemoteBytes]; rb > 0 && p.Ceiling != nil && p.Ceiling.Value > 0 && floor > 0 {
			// What moved over a link: its bytes at the link's rate, plus one
			// round trip (the cache-served chase) to learn it arrived.
			floor += rb / p.Ceiling.Value
			if p.Values == nil {
				p.Values = map[string]float64{}
			}
			p.Values[ValueFloor] = floor
		}
		if floor > 0 && lat.Median < floor {
			p.Flags = append(p.Flags, FlagBelowFloor)
		}
	}
	if k := p.KernelTimer; k != nil && k.N > 0 {
		if t := p.OpTime(); t > 0 && math.Abs(k.Mean/t-1) > TimerTolerance {
			p.Flags = append(p.Flags, FlagTimersDisagree)
		}
	}
	if cv, ok := p.SampleCV(); ok && cv > NoiseCV && p.Timer != "globaltimer" { // an older file's in-kernel row holds iterations, not launches
		p.Flags = append(p.Flags, FlagNoisy)
	}
	if p.Straggler = FindStraggler(p.PETimes); p.Straggler != nil {
		p.Flags = append(p.Flags, FlagStraggler)
	}
}

// MarkTimerTwins compares the timers of an older file (schema 1), whose
// in-kernel timer is a row of its own (params.extra.timer "globaltimer")
// beside the events row of the same point: the events row is flagged
// FlagTimersDisagree where the other's mean per iteration is more than
// TimerTolerance from its time per operation, as a point carrying
// kernel_timer is. Readers call it once a file's points are read (Read).
func MarkTimerTwins(points []Point) {
	key := func(p *Point) string {
		q := p.Params
		q.Extra = maps.Clone(q.Extra)
		delete(q.Extra, "timer")
		return p.ID + " " + q.Key()
	}
	second := map[string]*Point{}
	for i := range points {
		if p := &points[i]; p.Timer == "globaltimer" && p.Status == StatusOK && len(p.Samples) > 0 {
			second[key(p)] = p
		}
	}
	if len(second) == 0 {
		return
	}
	for i := range points {
		p := &points[i]
		g, ok := second[key(p)]
		if p.Timer == "globaltimer" || p.Status != StatusOK || !ok || p.Has(FlagTimersDisagree) {
			continue
		}
		if t := p.OpTime(); t > 0 && math.Abs(stat.Mean(g.Samples, nil)/t-1) > TimerTolerance {
			p.Flags = append(p.Flags, FlagTimersDisagree)
		}
	}
}

// atMemoryCeiling: a copy on one GPU (the memory is its path's ceiling),
// beyond the cache, within MemoryCeilingShare of the ceiling and not above
// it (that is FlagAboveLink).
func atMemoryCeiling(p *Point) bool {
	m := p.BandwidthMetric()
	if m == "" || p.L2Resident || p.Ceiling == nil || p.Ceiling.ID != "link/"+LinkMemory || p.Ceiling.Value <= 0 {
		return false
	}
	v := p.Metrics[m].Median
	return v >= MemoryCeilingShare*p.Ceiling.Value && v <= p.Ceiling.Value
}

// How a point's in-kernel timer stands beside the events timer
// (Point.TimerWindow). The agreement of the two means is a confirmation
// only where the stamps time the iterations: a fused kernel of many CTAs
// is stamped at its start and its last CTA's end, one period a timed
// launch, which is the window the events time.
const (
	TimerPerIteration = "per iteration"
	TimerSameWindow   = "the launch"
)

// TimerWindow says how the point's in-kernel timer was stamped: per
// iteration (more periods than timed launches: a second timer of the
// iterations), over the launch (one period a timed launch: the events'
// own window), or "" where it has none (or no samples to tell).
func (p *Point) TimerWindow() string {
	k := p.KernelTimer
	switch {
	case k == nil || k.N <= 0 || len(p.Samples) == 0:
		return ""
	case k.N <= len(p.Samples):
		return TimerSameWindow
	}
	return TimerPerIteration
}

// TimerCount counts a file's measured points by their in-kernel timer:
// those stamped per iteration (a second timer), how many of them disagree
// with the events, and those stamped over the timed launch (not counted as
// a confirmation).
type TimerCount struct{ PerIteration, Disagree, SameWindow int }

// CountTimers counts the points' in-kernel timers.
func CountTimers(points []Point) TimerCount {
	var c TimerCount
	for i := range points {
		p := &points[i]
		if p.Status != StatusOK {
			continue
		}
		switch p.TimerWindow() {
		case TimerPerIteration:
			c.PerIteration++
			if p.Has(FlagTimersDisagree) {
				c.Disagree++
			}
		case TimerSameWindow:
			c.SameWindow++
		}
	}
	return c
}

// String says the count in a sentence, "" where no point has an
// in-kernel timer.
func (c TimerCount) String() string {
	if c.PerIteration+c.SameWindow == 0 {
		return ""
	}
	n := func(k int, one, many string) string {
		if k == 1 {
			return "1 " + one
		}
		return strconv.Itoa(k) + " " + many
	}
	return fmt.Sprintf("in-kernel timer: %s stamped per iteration, a second timer (%s with the events); %s stamped over the timed launch, the events' own window (not counted: agreement there confirms nothing)",
		n(c.PerIteration, "point", "points"), n(c.Disagree, "disagrees", "disagree"), n(c.SameWindow, "point", "points"))
}

// OpTime is the events timer's time per operation (seconds): the median of
// the point's samples, what every metric is derived from; for a point
// stored without samples, its stored metric turned back into a time
// (bytes over a bandwidth, one over a rate). 0 when neither says.
func (p *Point) OpTime() float64 {
	if len(p.Samples) > 0 {
		s := append([]float64(nil), p.Samples...)
		slices.Sort(s)
		return Quantile(s, 0.5)
	}
	for _, name := range []string{MetricLatency, MetricBandwidth, MetricAlgBW, MetricBusBW, MetricLink, MetricRate} {
		m, ok := p.Metrics[name]
		if !ok || m.Median <= 0 {
			continue
		}
		var per float64 // what one operation counts, in the metric's numerator
		switch name {
		case MetricLatency:
			return m.Median
		case MetricBandwidth:
			per = float64(p.Bytes)
		case MetricAlgBW:
			per = float64(p.Params.Size)
		case MetricBusBW:
			per = float64(p.Params.Size) * p.BusFactor
		case MetricLink:
			per = p.Values[ValueRemoteBytes]
		case MetricRate:
			per = 1
		}
		if per > 0 {
			return per / m.Median
		}
	}
	return 0
}

// SampleCV is the coefficient of variation of the point's events-timer
// samples (sample standard deviation over mean); false with fewer than two.
func (p *Point) SampleCV() (float64, bool) {
	if len(p.Samples) < 2 {
		return 0, false
	}
	mean, sd := stat.MeanStdDev(p.Samples, nil)
	if mean <= 0 {
		return 0, false
	}
	return sd / mean, true
}

// ceilingOf is the physical link of the point's path: its pair's GPUs
// (point-to-point; PE 0 towards PE 1 in a file before pairs), the
// narrowest pair of the PEs (collectives), a GPU's own memory where the
// data stays on it; nil for a remote transport or where the header records
// no link.
func (h *Header) ceilingOf(p *Point) *Link {
	if p.Effective == "proxy" || p.Effective == "ibgda" {
		return nil
	}
	n := p.Params.PEs
	if n <= 0 {
		n = h.PEs
	}
	if n <= 0 {
		n = 1
	}
	g0 := h.GPUOfPE(0)
	if p.Pair != nil {
		return h.LinkBetween(h.GPUOfPE(p.Pair.From.PE), h.GPUOfPE(p.Pair.To.PE))
	}
	if !strings.HasPrefix(p.ID, "collectives/") && !strings.HasPrefix(p.ID, "moe/") {
		peer := 0
		if n > 1 {
			peer = 1
		}
		return h.LinkBetween(g0, h.GPUOfPE(peer))
	}
	var narrowest *Link
	for a := 0; a < n; a++ {
		for b := a + 1; b < n; b++ {
			l := h.LinkBetween(h.GPUOfPE(a), h.GPUOfPE(b))
			if l == nil {
				return nil // a pair without a recorded link: no ceiling for the whole
			}
			if narrowest == nil || l.Bps < narrowest.Bps {
				narrowest = l
			}
		}
	}
	if n == 1 {
		return h.LinkBetween(g0, g0)
	}
	return narrowest
}
