// Package model turns measurements into decisions: α–β fits per series
// (T(S) = α + S/B, up to three segments where a protocol or algorithm
// switches), a crossover guide (the fastest implementation per size, by how
// much, whether significantly), n-GPU predictions from one node's 2-PE
// runs, and predictions of the paper's inter-node rows from a NIC's line
// rate. It reads results files only (no GPU), like report.
package model

import (
	"fmt"
	"math"
	"sort"
)

// Obs is one size of a series: the median time per operation (seconds)
// and the samples it is the median of.
type Obs struct {
	Size    int64
	Time    float64
	Samples []float64
	Tokens  int // MoE: tokens per rank (its size is the buffer they need)
}

// Segment is T(S) = Alpha + S·Beta over sizes From..To (bytes): Alpha in
// seconds, Beta in seconds per byte (B = 1/Beta).
type Segment struct {
	From, To    int64
	Alpha, Beta float64
	N           int     // sizes fitted
	R2          float64 // of the times, over the segment's sizes
	Worst       float64 // the largest |T − fit| / T, but for one outlier where the segment has 6 sizes or more
	Outlier     int64   // that outlier's size (0: none set aside)
	OutlierRes  float64 // and its residual
	ssrv        float64 // Σ((T − fit)/T)², for choosing between splits
}

// Bandwidth is the segment's B in bytes per second (+Inf when the time does
// not grow with the size).
func (s Segment) Bandwidth() float64 {
	if s.Beta <= 0 {
		return math.Inf(1)
	}
	return 1 / s.Beta
}

// At is the fitted time at size.
func (s Segment) At(size float64) float64 { return s.Alpha + size*s.Beta }

// Fit tolerances: a series is split into more segments while its worst
// relative residual exceeds SplitTol; past MaxSegments with a residual over
// NoFitTol it has no fit. MinPerSegment sizes make a segment: a line through
// two points tests nothing.
const (
	SplitTol      = 0.10
	NoFitTol      = 0.15
	MaxSegments   = 3
	MinPerSegment = 3
)

// FitSeries fits obs (any order) with one to three segments. It returns
// the segments, or why there is no fit.
func FitSeries(obs []Obs) ([]Segment, string) {
	o := append([]Obs(nil), obs...)
	sort.Slice(o, func(i, j int) bool { return o[i].Size < o[j].Size })
	for i := range o {
		if !(o[i].Time > 0) || math.IsInf(o[i].Time, 0) {
			return nil, fmt.Sprintf("a time of %v s at %d B", o[i].Time, o[i].Size)
		}
	}
	switch n := len(o); {
	case n == 0:
		return nil, "no size left to fit"
	case n == 1:
		return nil, "one size: no line to fit"
	case n < MinPerSegment:
		return nil, fmt.Sprintf("%d sizes: a line through them tests nothing (%d needed)", n, MinPerSegment)
	}
	var best []Segment
	bestWorst := math.Inf(1)
	for k := 1; k <= MaxSegments && k*MinPerSegment <= len(o); k++ {
		segs := bestSplit(o, k)
		w := worst(segs)
		if w < bestWorst-1e-12 {
			best, bestWorst = segs, w
		}
		if bestWorst <= SplitTol {
			break
		}
	}
	if bestWorst > NoFitTol {
		return best, fmt.Sprintf("the worst residual stays at %.0f %% with %d segment(s) (over %.0f %%)", 100*bestWorst, len(best), 100*NoFitTol)
	}
	return best, ""
}

func worst(segs []Segment) float64 {
	w := 0.0
	for _, s := range segs {
		w = max(w, s.Worst)
	}
	return w
}

// bestSplit tries every way of cutting o into k contiguous segments of at
// least MinPerSegment sizes and keeps the one with the smallest worst
// residual (ties: the smaller sum of squared relative residuals).
func bestSplit(o []Obs, k int) []Segment {
	n := len(o)
	var best []Segment
	bw, bs := math.Inf(1), math.Inf(1)
	var rec func(start, left int, acc []Segment)
	rec = func(start, left int, acc []Segment) {
		if left == 1 {
			seg, ss := fitOne(o[start:])
			all := append(append([]Segment(nil), acc...), seg)
			w := worst(all)
			sum := ss
			for _, a := range acc {
				sum += a.ssr()
			}
			if w < bw-1e-12 || (math.Abs(w-bw) <= 1e-12 && sum < bs) {
				best, bw, bs = all, w, sum
			}
			return
		}
		for end := start + MinPerSegment; end <= n-(left-1)*MinPerSegment; end++ {
			seg, _ := fitOne(o[start:end])
			rec(end, left-1, append(acc, seg))
		}
	}
	rec(0, k, nil)
	return best
}

// ssr is the segment's sum of squared relative residuals, kept from the fit.
func (s Segment) ssr() float64 { return s.ssrv }

// fitOne is a robust weighted least-squares line through o on relative
// error: minimise Σ wᵢ((Tᵢ − α − βSᵢ)/Tᵢ)², the weights wᵢ from Huber's
// function of the relative residuals (a few iterations), α and β kept
// non-negative.
func fitOne(o []Obs) (Segment, float64) {
	w := make([]float64, len(o))
	for i := range w {
		w[i] = 1
	}
	var a, b float64
	for iter := 0; iter < 10; iter++ {
		a, b = wls(o, w)
		r := make([]float64, len(o))
		abs := make([]float64, len(o))
		for i, x := range o {
			r[i] = (x.Time - a - b*float64(x.Size)) / x.Time
			abs[i] = math.Abs(r[i])
		}
		sort.Float64s(abs)
		scale := max(abs[len(abs)/2]/0.6745, 0.01)
		c := 1.345 * scale
		for i := range w {
			if math.Abs(r[i]) <= c {
				w[i] = 1
			} else {
				w[i] = c / math.Abs(r[i])
			}
		}
	}
	seg := Segment{From: o[0].Size, To: o[len(o)-1].Size, Alpha: a, Beta: b, N: len(o)}
	mean := 0.0
	for _, x := range o {
		mean += x.Time
	}
	mean /= float64(len(o))
	var ssRes, ssTot, ssRel float64
	rels := make([]float64, len(o))
	for i, x := range o {
		f := seg.At(float64(x.Size))
		ssRes += (x.Time - f) * (x.Time - f)
		ssTot += (x.Time - mean) * (x.Time - mean)
		rels[i] = math.Abs(x.Time-f) / x.Time
		ssRel += rels[i] * rels[i]
	}
	// One size may be set aside as an outlier where there are enough to
	// tell (a size NCCL or the GPU handles its own way): the worst is the
	// next one, and the outlier is reported.
	top := -1
	for i, r := range rels {
		if top < 0 || r > rels[top] {
			top = i
		}
	}
	for i, r := range rels {
		if len(o) >= 2*MinPerSegment && i == top {
			continue
		}
		seg.Worst = max(seg.Worst, r)
	}
	if len(o) >= 2*MinPerSegment && rels[top] > SplitTol {
		seg.Outlier, seg.OutlierRes = o[top].Size, rels[top]
	}
	seg.R2 = 1
	if ssTot > 0 {
		seg.R2 = 1 - ssRes/ssTot
	}
	seg.ssrv = ssRel
	return seg, ssRel
}

// wls solves the weighted normal equations of T = α + βS with weights
// wᵢ/Tᵢ² (relative error), clamping a negative α or β to zero and refitting
// the other.
func wls(o []Obs, w []float64) (float64, float64) {
	var s0, s1, s2, t0, t1 float64
	for i, x := range o {
		u := w[i] / (x.Time * x.Time)
		s := float64(x.Size)
		s0 += u
		s1 += u * s
		s2 += u * s * s
		t0 += u * x.Time
		t1 += u * s * x.Time
	}
	det := s0*s2 - s1*s1
	var a, b float64
	if det > 0 {
		a = (t0*s2 - s1*t1) / det
		b = (s0*t1 - s1*t0) / det
	}
	if det <= 0 || a < 0 {
		a, b = 0, t1/s2
	}
	if b < 0 {
		a, b = t0/s0, 0
	}
	return a, b
}
