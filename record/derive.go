package record

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/nvshbench/nvshbench/internal/units"
)

// Quantile returns the q-quantile (0 ≤ q ≤ 1) of sorted values by linear
// interpolation between the closest ranks (the R-7 / NumPy default), so the
// median of an even count is the mean of the two middle values.
func Quantile(sorted []float64, q float64) float64 {
	n := len(sorted)
	if n == 0 {
		return math.NaN()
	}
	if n == 1 {
		return sorted[0]
	}
	h := q * float64(n-1)
	lo := int(math.Floor(h))
	if lo >= n-1 {
		return sorted[n-1]
	}
	return sorted[lo] + (h-float64(lo))*(sorted[lo+1]-sorted[lo])
}

// Summarize computes the summary of values in the given unit.
func Summarize(values []float64, unit string) Summary {
	s := append([]float64(nil), values...)
	sort.Float64s(s)
	if len(s) == 0 {
		return Summary{Unit: unit}
	}
	sum := 0.0
	for _, v := range s {
		sum += v
	}
	return Summary{
		Unit:   unit,
		Mean:   sum / float64(len(s)),
		Median: Quantile(s, 0.5),
		Min:    s[0],
		Max:    s[len(s)-1],
		P10:    Quantile(s, 0.10),
		P90:    Quantile(s, 0.90),
		P99:    Quantile(s, 0.99),
		N:      len(s),
	}
}

// SampleValues turns the point's per-operation times into per-sample values
// of the named metric: latency is the time itself, bandwidth is counted bytes
// over time, algbw is the message size over time and busbw algbw times the
// bus factor, rate is operations per second.
func SampleValues(p *Point, metric string) ([]float64, string, error) {
	out := make([]float64, len(p.Samples))
	var unit string
	for i, t := range p.Samples {
		switch metric {
		case MetricLatency:
			out[i], unit = t, UnitSeconds
		case MetricBandwidth:
			if p.Bytes <= 0 {
				return nil, "", fmt.Errorf("point %s: bandwidth needs counted bytes", p.ID)
			}
			out[i], unit = float64(p.Bytes)/t, UnitBytesPerSec
		case MetricAlgBW:
			out[i], unit = float64(p.Params.Size)/t, UnitBytesPerSec
		case MetricBusBW:
			if p.BusFactor <= 0 {
				return nil, "", fmt.Errorf("point %s: busbw needs a bus factor", p.ID)
			}
			out[i], unit = float64(p.Params.Size)/t*p.BusFactor, UnitBytesPerSec
		case MetricRate:
			out[i], unit = 1/t, UnitOpsPerSec
		case MetricLink:
			rb := p.Values[ValueRemoteBytes]
			if rb <= 0 {
				return nil, "", fmt.Errorf("point %s: a link bandwidth needs the remote bytes", p.ID)
			}
			out[i], unit = rb/t, UnitBytesPerSec
		default:
			return nil, "", fmt.Errorf("unknown metric %q", metric)
		}
	}
	return out, unit, nil
}

// Costs are the point's samples of metric as costs, lower is better: the
// metric's per-sample values, inverted where higher is better (a
// bandwidth's seconds per byte); nil where the point cannot give it. What
// the decision rule weighs (internal/decide).
func Costs(p *Point, metric string) []float64 {
	vs, unit, err := SampleValues(p, metric)
	if err != nil {
		return nil
	}
	if units.HigherIsBetter(unit) {
		for i, v := range vs {
			vs[i] = 1 / v
		}
	}
	return vs
}

// Derive fills p.Metrics with the summaries of the named metrics computed
// from p.Samples. Points without samples get no metrics.
func Derive(p *Point, metrics ...string) error {
	if len(p.Samples) == 0 {
		return nil
	}
	if p.Metrics == nil {
		p.Metrics = map[string]Summary{}
	}
	for _, m := range metrics {
		vals, unit, err := SampleValues(p, m)
		if err != nil {
			return err
		}
		p.Metrics[m] = Summarize(vals, unit)
	}
	return nil
}

// Derivable keeps, of names, the metrics the point's record can give:
// busbw needs a bus factor (one PE crosses no bus; nccl-tests prints 0),
// algbw and bandwidth a message size, link bandwidth bytes that crossed to
// another GPU.
func Derivable(p *Point, names []string) []string {
	var out []string
	for _, m := range names {
		switch {
		case m == MetricBusBW && p.BusFactor <= 0,
			(m == MetricAlgBW || m == MetricBandwidth) && p.Params.Size <= 0,
			m == MetricLink && p.Values[ValueRemoteBytes] <= 0:
			continue
		}
		out = append(out, m)
	}
	return out
}

// deriveMissing fills the metrics of a point stored without them: those
// metricsOf names (Reader.Metrics; nil: none), else those the record can give.
func deriveMissing(p *Point, metricsOf func(id string) []string) error {
	if len(p.Metrics) > 0 || len(p.Samples) == 0 {
		return nil
	}
	var names []string
	if metricsOf != nil {
		names = metricsOf(p.ID)
	}
	if len(names) == 0 {
		names = []string{MetricLatency, MetricAlgBW, MetricBusBW, MetricLink}
		if p.Bytes > 0 {
			names = append(names, MetricBandwidth)
		}
	}
	return Derive(p, Derivable(p, names)...)
}

// PrimaryMetric is the metric a point is judged by: busbw for collectives
// (algbw with one PE, where no bus is crossed), bandwidth when bytes are
// counted, else latency.
func PrimaryMetric(p *Point) string {
	for _, m := range []string{MetricBusBW, MetricAlgBW, MetricBandwidth, MetricRate, MetricLatency} {
		if _, ok := p.Metrics[m]; ok {
			return m
		}
	}
	return ""
}

// Rederive recomputes the point's stored metrics from its raw samples, so
// every reader (report, plot, compare) uses one derivation of the same
// numbers. A stored summary that disagrees with the samples (a hand-edited
// or damaged record) is replaced, and the returned warning says so; a
// metric the samples cannot give (bandwidth without counted bytes) is
// dropped. Points without samples keep what they have.
func (p *Point) Rederive() string {
	if len(p.Samples) == 0 || len(p.Metrics) == 0 {
		return ""
	}
	var changed []string
	for name, stored := range p.Metrics {
		vals, unit, err := SampleValues(p, name)
		if err != nil {
			delete(p.Metrics, name)
			changed = append(changed, fmt.Sprintf("%s dropped (%v)", name, err))
			continue
		}
		fresh := Summarize(vals, unit)
		if !nearly(stored.Median, fresh.Median) || !nearly(stored.Min, fresh.Min) || !nearly(stored.Max, fresh.Max) || stored.Unit != fresh.Unit {
			changed = append(changed, fmt.Sprintf("%s median %.6g %s stored, %.6g from the samples", name, stored.Median, stored.Unit, fresh.Median))
		}
		p.Metrics[name] = fresh
	}
	if len(changed) == 0 {
		return ""
	}
	sort.Strings(changed)
	return fmt.Sprintf("%s %s: the stored metrics disagree with the raw samples (%s); using the samples", p.ID, p.Params.Key(), strings.Join(changed, "; "))
}

// nearly: equal to 1e-9 relative (what a JSON round trip keeps).
func nearly(a, b float64) bool {
	if a == b {
		return true
	}
	return math.Abs(a-b) <= 1e-9*math.Max(math.Abs(a), math.Abs(b))
}
