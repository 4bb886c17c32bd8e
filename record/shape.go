package record

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/nvshbench/nvshbench/internal/table"
	"github.com/nvshbench/nvshbench/internal/units"
)

// ShapeMargin: a latency that falls by more than this (relative) from one
// size to the next, and by more than its noise, is marked FlagCheck. The
// same 10 % the two timers are held to: smaller falls are seen at the
// smallest sizes of every round trip (8 → 16 B get chases: another code
// path for one 8-byte word), not errors; larger ones are worth a second
// look.
const ShapeMargin = 0.10

// ShapeDrop: a delivered rate (size over time per operation: the bandwidth
// of a bandwidth series) that falls by more than this factor between
// neighbouring sizes, both beyond the cache, is marked FlagCheck. A cache
// edge explains such a cliff (from the L2's rate to a link's);
// beyond it a rate is limited by a link or a memory that a larger message
// does not slow tenfold.
const ShapeDrop = 10.0

// ShapeChecks finds what the shapes of a file's series say. A series is
// the points of one benchmark with the same parameters but the size
// (Params.KeyWithoutSize) that are drawn (Point.Drawn) and have a size, in
// size order. It returns each marked point (of points) and why; both points
// of an odd pair are marked, as a series cannot tell which of the two is
// wrong.
func ShapeChecks(points []Point) map[*Point]string {
	groups := map[string][]*Point{}
	var order []string
	for i := range points {
		p := &points[i]
		if !p.Drawn() || p.Params.Size <= 0 {
			continue
		}
		key := p.ID + " " + p.Params.KeyWithoutSize()
		if _, ok := groups[key]; !ok {
			order = append(order, key)
		}
		groups[key] = append(groups[key], p)
	}
	out := map[*Point]string{}
	for _, key := range order {
		for p, why := range CheckSeries(groups[key]) {
			out[p] = why
		}
	}
	return out
}

// MarkShapes adds FlagCheck to every point ShapeChecks marks. Readers call
// it once a file's points are read (Read).
func MarkShapes(points []Point) {
	for p := range ShapeChecks(points) {
		if !p.Has(FlagCheck) {
			p.Flags = append(p.Flags, FlagCheck)
		}
	}
}

// CheckSeries checks one series (its points in any order; see
// ShapeChecks): in a series judged by latency (PrimaryMetric), a size
// whose time per operation is lower than the previous size's by more than
// ShapeMargin and by more than their noise (its p90 below the other's
// p10); in any series, a delivered rate (size over time) that falls by
// more than ShapeDrop from one size to the next where neither is served by
// the cache. It returns the marked points and why (a point in two odd
// pairs: both reasons).
func CheckSeries(series []*Point) map[*Point]string {
	pts := slices.Clone(series)
	slices.SortStableFunc(pts, func(a, b *Point) int { return cmp.Compare(a.Params.Size, b.Params.Size) })
	out := map[*Point]string{}
	mark := func(p *Point, why string) {
		if old, ok := out[p]; ok && !strings.Contains(old, why) {
			why = old + "; " + why
		}
		out[p] = why
	}
	for i := 1; i < len(pts); i++ {
		a, b := pts[i-1], pts[i]
		ta, tb := a.OpTime(), b.OpTime()
		if a.Params.Size == b.Params.Size || ta <= 0 || tb <= 0 {
			continue
		}
		from := fmt.Sprintf("from %s to %s", units.Bytes(a.Params.Size), units.Bytes(b.Params.Size))
		if PrimaryMetric(a) == MetricLatency && tb < ta*(1-ShapeMargin) && beyondNoise(a, b) {
			why := fmt.Sprintf("latency falls %.0f %% %s (%s → %s µs), more than its noise", 100*(1-tb/ta), from, table.Sig(ta*1e6, 3).Text, table.Sig(tb*1e6, 3).Text)
			mark(a, why)
			mark(b, why)
		}
		ra, rb := float64(a.Params.Size)/ta, float64(b.Params.Size)/tb
		if rb*ShapeDrop < ra && !cacheAnswered(a) && !cacheAnswered(b) {
			var why string
			if m := PrimaryMetric(a); m != MetricLatency && m != MetricRate && units.HigherIsBetter(a.Metrics[m].Unit) {
				why = fmt.Sprintf("%s falls ×%.0f %s (%s → %s GB/s), beyond the cache", m, ra/rb, from, table.Sig(a.Metrics[m].Median/1e9, 3).Text, table.Sig(b.Metrics[m].Median/1e9, 3).Text)
			} else {
				why = fmt.Sprintf("time rises ×%.0f %s (%s → %s µs): the delivered rate falls ×%.0f, beyond the cache", tb/ta, from, table.Sig(ta*1e6, 3).Text, table.Sig(tb*1e6, 3).Text, ra/rb)
			}
			mark(a, why)
			mark(b, why)
		}
	}
	return out
}

// beyondNoise: the later point's time lies below the earlier one's beyond
// their spreads (its p90 under the other's p10). Without samples the
// stored latency summaries say; without either, the margin alone decides.
func beyondNoise(earlier, later *Point) bool {
	spread := func(p *Point) (lo, hi float64, ok bool) {
		if len(p.Samples) > 0 {
			s := Summarize(p.Samples, UnitSeconds)
			return s.P10, s.P90, true
		}
		if m, ok := p.Metrics[MetricLatency]; ok {
			return m.P10, m.P90, true
		}
		return 0, 0, false
	}
	elo, _, eok := spread(earlier)
	_, lhi, lok := spread(later)
	return !eok || !lok || lhi < elo
}

// cacheAnswered: a bandwidth the L2 may have answered.
func cacheAnswered(p *Point) bool { return p.L2Resident || p.Has(FlagCacheServed) }
