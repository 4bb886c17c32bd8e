// Package model turns measurements into decisions: α–β fits per series
// (T(S) = α + S/B, up to three segments where a protocol or algorithm
// switches; MoE as T(tokens) = a + tokens·c), a crossover guide (the
// fastest implementation per size, by how much, whether significantly),
// n-GPU predictions from one node's 2-PE runs within one NVLink domain,
// and predictions of the paper's inter-node rows from a NIC's line rate.
// A fit says when it knows nothing: too few sizes, too narrow a range, a
// line the points do not follow, an α or a B the sizes do not resolve, a
// B only the cache gave; predictions use only what passes. It reads
// results files only (no GPU), like report.
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
	// Unjudged says why no verdict may rest on this size's point ("": one
	// may; record.Point.Unjudged): a fit takes it, the guide judges no
	// size by it.
	Unjudged string
}

// Axis is what a series is fitted over: the message size in bytes, or
// (MoE) the tokens per rank.
type Axis int

// The axes.
const (
	Bytes Axis = iota
	Tokens
)

// Of is the obs' coordinate on the axis.
func (a Axis) Of(o Obs) float64 {
	if a == Tokens {
		return float64(o.Tokens)
	}
	return float64(o.Size)
}

// Format writes a coordinate: "1.23 MiB", "640 tokens".
func (a Axis) Format(x float64) string {
	if a == Tokens {
		return fmt.Sprintf("%.0f tokens", x)
	}
	return humanBytes(x)
}

// Segment is T(x) = Alpha + x·Beta over x = From..To (bytes, or tokens on
// the tokens axis): Alpha in seconds, Beta in seconds per byte (B =
// 1/Beta) or per token.
type Segment struct {
	From, To    int64
	Alpha, Beta float64
	N           int     // sizes fitted
	R2          float64 // of the times, over the segment's sizes
	Worst       float64 // the largest |T − fit| / T, but for one outlier where the segment has 8 sizes or more
	Outlier     int64   // that outlier's size (0: none set aside)
	OutlierRes  float64 // and its residual
	// AlphaT and BetaT are the estimates over their standard errors (from
	// the residuals; +Inf for points exactly on the line).
	AlphaT, BetaT float64
	// NoAlpha and NoB say why the segment does not determine α or B (""
	// where it does): a value of zero, one within its noise, or a term too
	// small a share of the time at the segment's sizes to be measured.
	NoAlpha, NoB string
	ssrv         float64 // Σ((T − fit)/T)², for choosing between splits
}

// Bandwidth is the segment's B in bytes (or tokens) per second, +Inf when
// the time does not grow with the size; NoB says whether it is known.
func (s Segment) Bandwidth() float64 {
	if s.Beta <= 0 {
		return math.Inf(1)
	}
	return 1 / s.Beta
}

// At is the fitted time at x.
func (s Segment) At(x float64) float64 { return s.Alpha + x*s.Beta }

// Fit rules. A series is split into more segments while its worst
// relative residual exceeds SplitTol; past MaxSegments with a residual over
// NoFitTol it has no fit (the residual test). A segment holds MinPerSegment
// sizes or more spanning MinSpan× or more: fewer, or a narrower range,
// test nothing. A segment determines α (or B) where the estimate is
// positive, at least MinT standard errors from zero, and at least MinShare
// of the fitted time at the segment's smallest (largest) size: a term
// below that is not measured by these sizes. A segment of 2·MinPerSegment
// sizes or more may set one outlier aside, a size whose neighbours were
// measured within OutlierGap× of it (between sizes further apart, a point
// off the line may be a regime the line misses).
const (
	SplitTol      = 0.10
	NoFitTol      = 0.15
	MaxSegments   = 3
	MinPerSegment = 4
	MinSpan       = 16
	MinT          = 3
	MinShare      = 0.05
	OutlierGap    = 4
)

// FitSeries fits obs (any order) over their sizes with one to three
// segments. It returns the segments, or why there is no fit.
func FitSeries(obs []Obs) ([]Segment, string) { return FitSeriesOver(obs, Bytes) }

// FitSeriesOver fits obs over the axis (bytes, or tokens per rank).
func FitSeriesOver(obs []Obs, axis Axis) ([]Segment, string) {
	o := make([]pt, 0, len(obs))
	for _, x := range obs {
		o = append(o, pt{x: axis.Of(x), t: x.Time})
	}
	sort.Slice(o, func(i, j int) bool { return o[i].x < o[j].x })
	what := "sizes"
	if axis == Tokens {
		what = "token counts"
	}
	for i := range o {
		if !(o[i].t > 0) || math.IsInf(o[i].t, 0) {
			return nil, fmt.Sprintf("a time of %v s at %s", o[i].t, axis.Format(o[i].x))
		}
		if !(o[i].x > 0) {
			return nil, fmt.Sprintf("a point at %s: a line in %s needs positive ones", axis.Format(o[i].x), what)
		}
		if i > 0 && o[i].x == o[i-1].x {
			return nil, fmt.Sprintf("%s measured twice in one series", axis.Format(o[i].x))
		}
	}
	switch n := len(o); {
	case n == 0:
		return nil, "no size left to fit"
	case n == 1:
		return nil, "one size: no line to fit"
	case n < MinPerSegment:
		return nil, fmt.Sprintf("%d %s: a line through them tests nothing (%d needed)", n, what, MinPerSegment)
	}
	if span := o[len(o)-1].x / o[0].x; span < MinSpan {
		return nil, fmt.Sprintf("%s – %s spans %.0f×: too narrow to tell α from B (%d× needed)", axis.Format(o[0].x), axis.Format(o[len(o)-1].x), span, MinSpan)
	}
	var best []Segment
	bestWorst := math.Inf(1)
	for k := 1; k <= MaxSegments && k*MinPerSegment <= len(o); k++ {
		segs := bestSplit(o, k, axis)
		if segs == nil {
			break // no cut into k segments of the span needed
		}
		w := worst(segs)
		if w < bestWorst-1e-12 {
			best, bestWorst = segs, w
		}
		if bestWorst <= SplitTol {
			break
		}
	}
	if bestWorst > NoFitTol {
		return best, fmt.Sprintf("no line follows the points: the worst residual stays at %.0f %% with %d segment(s) (over %.0f %%)", 100*bestWorst, len(best), 100*NoFitTol)
	}
	for _, s := range best {
		if s.NoAlpha == "" || s.NoB == "" {
			return best, ""
		}
	}
	s := best[0]
	return best, fmt.Sprintf("neither α nor B is measured by these %s (%s; %s)", what, s.NoAlpha, s.NoB)
}

// pt is one point of a fit: x on the series' axis, t seconds.
type pt struct{ x, t float64 }

func worst(segs []Segment) float64 {
	w := 0.0
	for _, s := range segs {
		w = max(w, s.Worst)
	}
	return w
}

// fits reports whether o[start:end] may be a segment: MinPerSegment
// points or more spanning MinSpan× or more.
func fits(o []pt, start, end int) bool {
	return end-start >= MinPerSegment && o[end-1].x >= MinSpan*o[start].x
}

// bestSplit tries every way of cutting o into k contiguous segments that
// fit and keeps the one with the smallest worst residual (ties: the
// smaller sum of squared relative residuals); nil where there is none.
func bestSplit(o []pt, k int, axis Axis) []Segment {
	n := len(o)
	var best []Segment
	bw, bs := math.Inf(1), math.Inf(1)
	var rec func(start, left int, acc []Segment)
	rec = func(start, left int, acc []Segment) {
		if left == 1 {
			if !fits(o, start, n) {
				return
			}
			seg := fitOne(o[start:], axis)
			all := append(append([]Segment(nil), acc...), seg)
			w := worst(all)
			sum := 0.0
			for _, a := range all {
				sum += a.ssrv
			}
			if w < bw-1e-12 || (math.Abs(w-bw) <= 1e-12 && sum < bs) {
				best, bw, bs = all, w, sum
			}
			return
		}
		for end := start + MinPerSegment; end <= n-(left-1)*MinPerSegment; end++ {
			if fits(o, start, end) {
				rec(end, left-1, append(acc, fitOne(o[start:end], axis)))
			}
		}
	}
	rec(0, k, nil)
	return best
}

// fitOne is a robust weighted least-squares line through o on relative
// error: minimise Σ wᵢ((Tᵢ − α − βxᵢ)/Tᵢ)², the weights wᵢ from Huber's
// function of the relative residuals (a few iterations), α and β kept
// non-negative; then what the segment determines.
func fitOne(o []pt, axis Axis) Segment {
	w := make([]float64, len(o))
	for i := range w {
		w[i] = 1
	}
	var l line
	for iter := 0; iter < 10; iter++ {
		l = wls(o, w)
		abs := make([]float64, len(o))
		for i, p := range o {
			abs[i] = math.Abs((p.t - l.a - l.b*p.x) / p.t)
		}
		r := append([]float64(nil), abs...)
		sort.Float64s(abs)
		scale := max(abs[len(abs)/2]/0.6745, 0.01)
		c := 1.345 * scale
		for i := range w {
			if r[i] <= c {
				w[i] = 1
			} else {
				w[i] = c / r[i]
			}
		}
	}
	seg := Segment{From: int64(math.Round(o[0].x)), To: int64(math.Round(o[len(o)-1].x)), Alpha: l.a, Beta: l.b, N: len(o)}
	mean := 0.0
	for _, p := range o {
		mean += p.t
	}
	mean /= float64(len(o))
	var ssRes, ssTot, ssRel, ssW float64
	rels := make([]float64, len(o))
	for i, p := range o {
		f := seg.At(p.x)
		ssRes += (p.t - f) * (p.t - f)
		ssTot += (p.t - mean) * (p.t - mean)
		rels[i] = math.Abs(p.t-f) / p.t
		ssRel += rels[i] * rels[i]
		ssW += w[i] * rels[i] * rels[i]
	}
	// One size may be set aside as an outlier where there are enough to
	// tell (a size NCCL or the GPU handles its own way): the worst is the
	// next one, and the outlier is reported.
	top := 0
	for i, r := range rels {
		if r > rels[top] {
			top = i
		}
	}
	// Only a size measured close to its neighbours (within OutlierGap× on
	// each side it has one) can be told from a regime the line misses.
	aside := len(o) >= 2*MinPerSegment &&
		(top == 0 || o[top].x <= OutlierGap*o[top-1].x) && (top == len(o)-1 || o[top+1].x <= OutlierGap*o[top].x)
	for i, r := range rels {
		if aside && i == top {
			continue
		}
		seg.Worst = max(seg.Worst, r)
	}
	if aside && rels[top] > SplitTol {
		seg.Outlier, seg.OutlierRes = int64(math.Round(o[top].x)), rels[top]
	}
	seg.R2 = 1
	if ssTot > 0 {
		seg.R2 = 1 - ssRes/ssTot
	}
	seg.ssrv = ssRel
	// Standard errors from the weighted relative residuals: the covariance
	// of the weighted normal equations times their variance. A term the
	// clamp set to zero has none (it was not estimated).
	free := 2
	if l.aFixed || l.bFixed {
		free = 1
	}
	dof := float64(len(o) - free)
	s2 := ssW / dof
	tstat := func(v, variance float64) float64 {
		switch {
		case v <= 0:
			return 0
		case variance <= 0:
			return math.Inf(1)
		}
		return v / math.Sqrt(variance)
	}
	switch {
	case l.aFixed:
		seg.BetaT = tstat(l.b, s2/l.s2)
	case l.bFixed:
		seg.AlphaT = tstat(l.a, s2/l.s0)
	default:
		seg.AlphaT = tstat(l.a, s2*l.s2/l.det)
		seg.BetaT = tstat(l.b, s2*l.s0/l.det)
	}
	lo, hi := o[0], o[len(o)-1]
	term := "S/B"
	if axis == Tokens {
		term = "tokens·c"
	}
	seg.NoAlpha = determined("α", l.a, seg.AlphaT, l.a/seg.At(lo.x), "the smallest point, "+axis.Format(lo.x))
	seg.NoB = determined(term, l.b, seg.BetaT, l.b*hi.x/seg.At(hi.x), "the largest point, "+axis.Format(hi.x))
	return seg
}

// determined says why a term is not measured by the segment ("" where it
// is): zero, within its noise, or too small a share of the time.
func determined(term string, v, t, share float64, where string) string {
	switch {
	case math.IsNaN(v) || math.IsInf(v, 0):
		return fmt.Sprintf("%s is not finite", term)
	case v <= 0 || share < 1e-9: // zero, but for rounding
		if term == "α" {
			return "α = 0: the line runs through the origin (the sizes are bandwidth-bound)"
		}
		return "the time does not grow with the size"
	case share < MinShare:
		return fmt.Sprintf("%s is %.1f %% of the time at %s: too small a share to measure (%.0f %% needed)", term, 100*share, where, 100*MinShare)
	case t < MinT:
		return fmt.Sprintf("%s is within %.1f standard errors of zero (%d needed)", term, t, MinT)
	}
	return ""
}

// line is a weighted least-squares line and what its standard errors need.
type line struct {
	a, b           float64
	aFixed, bFixed bool // clamped to zero, not estimated
	s0, s2, det    float64
}

// wls solves the weighted normal equations of T = α + βx with weights
// wᵢ/Tᵢ² (relative error), clamping a negative α or β to zero and refitting
// the other.
func wls(o []pt, w []float64) line {
	var s0, s1, s2, t0, t1 float64
	for i, p := range o {
		u := w[i] / (p.t * p.t)
		s0 += u
		s1 += u * p.x
		s2 += u * p.x * p.x
		t0 += u * p.t
		t1 += u * p.x * p.t
	}
	l := line{s0: s0, s2: s2, det: s0*s2 - s1*s1}
	if l.det > 0 {
		l.a = (t0*s2 - s1*t1) / l.det
		l.b = (s0*t1 - s1*t0) / l.det
	}
	if l.det <= 0 || l.a < 0 {
		l.a, l.b, l.aFixed = 0, t1/s2, true
	}
	if l.b < 0 {
		l.a, l.b, l.aFixed, l.bFixed = t0/s0, 0, false, true
	}
	return l
}
