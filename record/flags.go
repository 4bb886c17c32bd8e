package record

import (
	"math"
	"slices"
	"strings"
)

// What the checks of a point's numbers can find (Point.Flags). A flagged
// point is never a peak or a headline; one above the physical link or from
// an older file's second timer is not drawn either.
const (
	// FlagTimersDisagree: the in-kernel timer's mean differs from the events
	// figure by more than TimerTolerance.
	FlagTimersDisagree = "timers disagree"
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
)

// TimerTolerance is how far the in-kernel timer's mean may be from the
// events figure (relative).
const TimerTolerance = 0.10

// CacheMargin: a buffer up to this many times the L2 can still be answered
// by it in part (two H200s: the multi-CTA AllReduce read 337 GB/s at 64 MiB,
// a buffer just over the 60 MiB L2, and 315 GB/s from 128 MiB up).
const CacheMargin = 2

// CacheServed reports whether a buffer of ws bytes may be answered by an
// L2 of l2 bytes.
func CacheServed(ws, l2 int64) bool { return l2 > 0 && ws > 0 && ws <= CacheMargin*l2 }

// Has reports whether the point carries the flag.
func (p *Point) Has(flag string) bool { return slices.Contains(p.Flags, flag) }

// Figure reports whether the point may be a peak, a headline or a table's
// value: measured (ok), not served by a cache, within its link, timed by
// the one timer, of a known launch mode.
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

// Drawn reports whether the point belongs on a curve: measured, within its
// link, timed by the one timer.
func (p *Point) Drawn() bool {
	return p.Status == StatusOK && !p.Has(FlagAboveLink) && !p.Has(FlagSecondTimer)
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
	p.Flags = nil
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
	if p.L2Resident && p.BandwidthMetric() != "" { // a round trip is one wherever its result lands
		p.Flags = append(p.Flags, FlagCacheServed)
	}
	if lat, ok := p.Metrics[MetricLatency]; ok {
		floor := 0.0
		if p.Floor != nil {
			floor = p.Floor.Value
		}
		if rb := p.Values["remote_bytes"]; rb > 0 && p.Ceiling != nil && p.Ceiling.Value > 0 && floor > 0 {
			// What moved over a link: its bytes at the link's rate, plus one
			// round trip (the cache-served chase) to learn it arrived.
			floor += rb / p.Ceiling.Value
			if p.Values == nil {
				p.Values = map[string]float64{}
			}
			p.Values["floor_s"] = floor
		}
		if floor > 0 && lat.Median < floor {
			p.Flags = append(p.Flags, FlagBelowFloor)
		}
		if k := p.KernelTimer; k != nil && k.N > 0 && lat.Median > 0 && math.Abs(k.Mean/lat.Median-1) > TimerTolerance {
			p.Flags = append(p.Flags, FlagTimersDisagree)
		}
	}
}

// ceilingOf is the physical link of the point's path: PE 0's GPU to its
// peer's (point-to-point), the narrowest pair of the PEs (collectives), a
// GPU's own memory where the data stays on it; nil for a remote transport
// or where the header records no link.
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
