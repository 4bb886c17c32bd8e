package results

import (
	"fmt"
	"math"
	"sort"
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
	return Summary{
		Unit:   unit,
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
		default:
			return nil, "", fmt.Errorf("unknown metric %q", metric)
		}
	}
	return out, unit, nil
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
