package compare

import (
	"math"
	"slices"

	"github.com/nvshbench/nvshbench/internal/units"
	"github.com/nvshbench/nvshbench/record"
)

// Slowdown is how much longer one operation takes in the new run than in
// the old, from the two medians of a metric in unit: new/old − 1 for a time,
// old/new − 1 for a bandwidth or a rate. Twice as slow is 1 (100 %) for
// either kind; a negative slowdown is a speed-up.
func Slowdown(old, new float64, unit string) float64 {
	if units.HigherIsBetter(unit) {
		return old/new - 1
	}
	return new/old - 1
}

// TimerStep is the step of the grid that the two runs' raw samples
// (seconds per operation) sit on, or 0 where they show none. A timer that
// ticks (%globaltimer) gives samples that are whole
// ticks, so runs of a few distinct values tie; then a median one tick
// higher is "significant" to a rank test (every sample of the candidate at
// the base's slowest value is unlikely if nothing changed) although the
// true times may differ by a hair that crossed a tick. The step is taken
// only from what the samples show: the samples tie, the smallest gap
// between two distinct values of one run is the step (noise within a run
// reveals the timer's resolution; two constant runs reveal none), and
// every value of both runs lies on that grid.
func TimerStep(a, b []float64) float64 {
	pooled := append(append([]float64(nil), a...), b...)
	slices.Sort(pooled)
	distinct := slices.Compact(slices.Clone(pooled))
	if len(distinct) < 2 || len(distinct) == len(pooled) {
		return 0 // one value (nothing to resolve) or no ties (no grid)
	}
	step := math.Inf(1)
	for _, run := range [][]float64{a, b} {
		s := slices.Clone(run)
		slices.Sort(s)
		s = slices.Compact(s)
		for i := 1; i < len(s); i++ {
			if g := s[i] - s[i-1]; g > 0 && g < step {
				step = g
			}
		}
	}
	if math.IsInf(step, 1) {
		return 0
	}
	// Every value a whole number of steps from the smallest, to the
	// rounding of a float (a continuous timer's values would not be).
	for _, v := range distinct {
		n := (v - distinct[0]) / step
		if math.Abs(n-math.Round(n)) > 1e-6 {
			return 0
		}
	}
	return step
}

// median of unsorted values.
func median(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	return record.Quantile(s, 0.5)
}
