package record

import (
	"fmt"
	"math"
	"sort"
)

// PETime is one PE's timing of a point: its samples (seconds per
// operation, one a timed launch, aligned with every other PE's by launch),
// or their summary where a point's samples over every PE would be large
// (MaxPESamples).
type PETime struct {
	PE      int       `json:"pe"`
	GPU     int       `json:"gpu"` // the CUDA ordinal on its node
	Node    string    `json:"node,omitempty"`
	Samples []float64 `json:"samples_s,omitempty"`
	Summary *Summary  `json:"summary,omitempty"`
}

// Median is the PE's median time per operation (0: none recorded).
func (t *PETime) Median() float64 {
	if len(t.Samples) > 0 {
		s := append([]float64(nil), t.Samples...)
		sort.Float64s(s)
		return Quantile(s, 0.5)
	}
	if t.Summary != nil {
		return t.Summary.Median
	}
	return 0
}

// MaxPESamples is the most per-PE samples a point keeps in all; beyond it
// each PE keeps the summary of its samples.
const MaxPESamples = 4096

// AcrossPEs combines the aligned samples of the PEs that timed a point
// (times[pe][launch]) into the operation's cost per launch, the slowest
// PE's (the figure), with the median PE's and the fastest PE's beside it:
// a collective has finished only when its last rank has. Launches some PE
// lacks are left out.
func AcrossPEs(times [][]float64) (slowest, median, fastest []float64) {
	n := math.MaxInt
	for _, t := range times {
		n = min(n, len(t))
	}
	if len(times) == 0 || n == 0 {
		return nil, nil, nil
	}
	col := make([]float64, len(times))
	for i := 0; i < n; i++ {
		for pe, t := range times {
			col[pe] = t[i]
		}
		sort.Float64s(col)
		slowest = append(slowest, col[len(col)-1])
		median = append(median, Quantile(col, 0.5))
		fastest = append(fastest, col[0])
	}
	return slowest, median, fastest
}

// StragglerShare is how far one PE's median time may sit from the other
// PEs' median before the point names it a straggler: the tolerance the two
// timers are held to (TimerTolerance), the noise level (NoiseCV).
const StragglerShare = 0.10

// Straggler is the PE a point's other PEs differ from: slower than them,
// or faster because they waited for it (it started late).
type Straggler struct {
	PE   int    `json:"pe"`
	GPU  int    `json:"gpu"`
	Node string `json:"node,omitempty"`
	// Ratio is its median time over the other PEs' median: above 1 it is
	// slower than they are; below 1 they waited for it.
	Ratio float64 `json:"ratio"`
}

// Late: the others waited for the straggler (its own time is the shortest).
func (s *Straggler) Late() bool { return s.Ratio < 1 }

// String says who and how: "PE 5 (GPU 5, node a): 1.42x the other PEs' time".
func (s *Straggler) String() string {
	who := fmt.Sprintf("PE %d (GPU %d", s.PE, s.GPU)
	if s.Node != "" {
		who += ", " + s.Node
	}
	who += ")"
	if s.Late() {
		return fmt.Sprintf("%s: the others waited for it (its time %.0f %% below theirs: it starts late)", who, (1-s.Ratio)*100)
	}
	return fmt.Sprintf("%s: %.2fx the other PEs' time", who, s.Ratio)
}

// FindStraggler is the PE whose median time sits farthest from the other
// PEs' median, beyond StragglerShare; nil with fewer than three PEs timed
// (two that differ cannot say which one is off) or none that far.
func FindStraggler(times []PETime) *Straggler {
	if len(times) < 3 {
		return nil
	}
	med := make([]float64, len(times))
	for i := range times {
		if med[i] = times[i].Median(); med[i] <= 0 {
			return nil
		}
	}
	var best *Straggler
	worst := StragglerShare
	for i, t := range times {
		others := make([]float64, 0, len(med)-1)
		for j, m := range med {
			if j != i {
				others = append(others, m)
			}
		}
		sort.Float64s(others)
		ratio := med[i] / Quantile(others, 0.5)
		if d := math.Abs(ratio - 1); d > worst {
			worst = d
			best = &Straggler{PE: t.PE, GPU: t.GPU, Node: t.Node, Ratio: ratio}
		}
	}
	return best
}

// RankMetric is the median over launches of metric from one of the point's
// per-launch series beside its figure (RankMedian, RankFastest), in the
// metric's base unit; false where the point has no such series.
func (p *Point) RankMetric(metric string, series []float64) (float64, bool) {
	if len(series) == 0 {
		return 0, false
	}
	q := *p
	q.Samples = series
	vals, _, err := SampleValues(&q, metric)
	if err != nil || len(vals) == 0 {
		return 0, false
	}
	sort.Float64s(vals)
	return Quantile(vals, 0.5), true
}
