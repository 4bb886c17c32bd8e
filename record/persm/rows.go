package persm

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"

	"github.com/nvshbench/nvshbench/internal/decide"
	"github.com/nvshbench/nvshbench/internal/units"
	"github.com/nvshbench/nvshbench/record"
)

// The persm/* rows of a results file read back as curves of GB/s over SM
// budgets and the slowdowns of a transfer and a compute kernel run beside
// each other: what report's tables, model's guide answer and the charts
// read, by the rows' IDs (ParseID) and the mechanisms' facts (no row or
// mechanism named by hand).

// Near is the fraction of its own peak a mechanism's smallest budget is
// sought for (the 90 %).
const Near = 0.9

// CESM is what a file's copy-engine points show of their SM use, the one
// reading every reader says (tables, the guide's answer, the charts).
type CESM int

const (
	// CENotChecked: no point carries ValueCESMFree (older files, or the
	// check could not hold every CTA slot): the copy engine's "no SM" is
	// not shown.
	CENotChecked CESM = iota
	// CENoSM: a point says 1 and none 0: its copies completed while a
	// kernel held every CTA slot, so they need no SM.
	CENoSM
	// CEOnSM: a point says 0: a copy waited for a free CTA slot, so
	// cudaMemcpyAsync ran as the driver's kernel, on SMs (how many is not
	// counted). It outweighs any point saying 1.
	CEOnSM
)

// merge is what two readings show together: a copy that waited for a slot
// outweighs one that did not, a check outweighs none.
func (s CESM) merge(t CESM) CESM { return max(s, t) }

// String names the state for tables and charts: "no SM (checked)", "on
// SMs (the driver's kernel)", "no SM (not checked)".
func (s CESM) String() string {
	switch s {
	case CENoSM:
		return "no SM (checked)"
	case CEOnSM:
		return "on SMs (the driver's kernel)"
	}
	return "no SM (not checked)"
}

// noSM: the row involves a mechanism with no SM of ours (the copy
// engine's rows: its copies alone or beside a compute kernel, or a compute
// kernel beside them).
func noSM(r Row) bool {
	m, ok := LookupMechanism(r.Mechanism)
	return ok && !m.SMs
}

// CECheck is what the file's copy-engine points that ran (status ok: the
// check is the copies', whatever the verification of their bytes) say in
// ValueCESMFree, over every size: the path cudaMemcpyAsync took is the
// setup's (one GPU, driver and peer path a file), so any point saying 0
// makes it CEOnSM, and every copy-engine row of the file reads the same.
func CECheck(f *record.File) CESM {
	s := CENotChecked
	for i := range f.Points {
		p := &f.Points[i]
		v, ok := p.Values[ValueCESMFree]
		r, row := ParseID(p.ID)
		if !ok || p.Status != record.StatusOK || !row || !noSM(r) {
			continue
		}
		if v < 0.5 {
			s = s.merge(CEOnSM)
		} else {
			s = s.merge(CENoSM)
		}
	}
	return s
}

// CEFed is what a compute kernel's point beside the copy engine says of
// the copies fed beside it: whether they kept the copy engine busy.
type CEFed int

const (
	// CEFedUnknown: the point carries none of the values (files before
	// the shim judged it, or no launch of the compute lasted long enough
	// to judge): nothing is said either way.
	CEFedUnknown CEFed = iota
	// CEFedJudged: the point carries ValueCEBusy: the shim judged every
	// timed window and the copy engine was busy at least Busy of each.
	CEFedJudged
	// CEFedNotJudged: the point carries ValueCECopy but no ValueCEBusy: a
	// copy was too short for a host thread to keep the copy engine busy
	// (under twice the feeder's calls for it), so the copy engine may have
	// idled beside the compute and its slowdown may be understated.
	CEFedNotJudged
)

// Feed is what a compute kernel's point beside the copy engine says of the
// copies fed beside it (FeedOf).
type Feed struct {
	State CEFed
	Busy  float64 // ValueCEBusy, where judged
	Copy  float64 // ValueCECopy, s (0: not in the point)
	Calls float64 // ValueCEFeed, s (0: not in the point)
}

// Times says the copy's and the feeder's times, "a copy 1.88 µs, the
// feeder's calls 2.5 µs" ("" where the point has neither).
func (f Feed) Times() string {
	var s []string
	if f.Copy > 0 {
		s = append(s, "a copy "+units.Value(f.Copy/1e-6)+" µs")
	}
	if f.Calls > 0 {
		s = append(s, "the feeder's calls "+units.Value(f.Calls/1e-6)+" µs")
	}
	return strings.Join(s, ", ")
}

// FeedOf reads a point's feed values: judged where it has ValueCEBusy,
// not judged where it has ValueCECopy alone, else unknown.
func FeedOf(p *record.Point) Feed {
	busy, judged := p.Values[ValueCEBusy]
	cp, timed := p.Values[ValueCECopy]
	fd := Feed{Copy: cp, Calls: p.Values[ValueCEFeed]}
	switch {
	case judged:
		fd.State, fd.Busy = CEFedJudged, busy
	case timed:
		fd.State = CEFedNotJudged
	}
	return fd
}

// Curve is one mechanism's GB/s over SM budgets at one size.
type Curve struct {
	Mechanism string
	// SMs: the mechanism runs on a budget of SMs (its fact); else no SM of
	// ours moves its bytes (the copy engine), and SM says whether its
	// copies used any.
	SMs     bool
	Size    int64
	Budgets []int     // ascending; a mechanism with no SMs has one budget, 0 (no SM counted)
	BW      []float64 // median B/s at each budget
	Lo, Hi  []float64 // the min and max over its samples
	Cached  bool      // some point's working set fit in L2: the cache's figure, not the link's
	// SM: a mechanism with no SMs only, what the file's copy-engine points
	// show of its SM use (CECheck).
	SM CESM
	// Ref is the run's best copy reference its points carry (the faster of
	// limit/sm-copy and limit/ce-copy on the same path and size: the
	// hardware's figure; 0: the run measured none), and which it is.
	Ref   float64
	RefID string
}

// FallMargin: a budget whose figure is more than this below a smaller
// budget's, beyond both points' spreads, makes the sweep fall as SMs are
// added (Falls): the decision rule's practical margin.
const FallMargin = 0.03

// Fall is a budget of a curve that moved less than a smaller one.
type Fall struct {
	Budget, Below int     // the budget, and the smaller budget it falls below
	BW, Above     float64 // their B/s
}

// Falls are the curve's budgets whose figure lies more than FallMargin
// below a smaller budget's, their samples apart (its max under the
// other's min): more SMs moved less, which a transfer's sweep should not
// (each against the smaller budget with the highest figure).
func (c Curve) Falls() []Fall {
	var out []Fall
	for j := range c.Budgets {
		best := -1
		for i := 0; i < j; i++ {
			if best < 0 || c.BW[i] > c.BW[best] {
				best = i
			}
		}
		if best >= 0 && c.BW[j] < (1-FallMargin)*c.BW[best] && c.Hi[j] < c.Lo[best] {
			out = append(out, Fall{Budget: c.Budgets[j], Below: c.Budgets[best], BW: c.BW[j], Above: c.BW[best]})
		}
	}
	return out
}

// GuideSize is the largest size of the curves whose points L2 did not
// serve, else the largest size (0: no curve): where a rate to the peer is
// the link's, not the cache's.
func GuideSize(cs []Curve) int64 {
	var beyond, any int64
	for _, c := range cs {
		any = max(any, c.Size)
		if !c.Cached {
			beyond = max(beyond, c.Size)
		}
	}
	if beyond > 0 {
		return beyond
	}
	return any
}

// Peak is the curve's highest GB/s and the smallest budget reaching it.
func (c Curve) Peak() (bw float64, budget int) {
	for i, v := range c.BW {
		if v > bw {
			bw, budget = v, c.Budgets[i]
		}
	}
	return bw, budget
}

// Against is what the curve's "90 % at" is held to: the run's best copy
// reference where it has one (the hardware's figure), else its own peak;
// ref says which.
func (c Curve) Against() (bw float64, ref bool) {
	if c.Ref > 0 {
		return c.Ref, true
	}
	peak, _ := c.Peak()
	return peak, false
}

// ReachRate is the smallest budget whose GB/s is at least bw (-1: none).
func (c Curve) ReachRate(bw float64) int {
	for i, v := range c.BW {
		if v >= bw && bw > 0 {
			return c.Budgets[i]
		}
	}
	return -1
}

// At is the curve's GB/s at a budget (false: not measured).
func (c Curve) At(budget int) (float64, bool) {
	if i := slices.Index(c.Budgets, budget); i >= 0 {
		return c.BW[i], true
	}
	return 0, false
}

// Budget is a row's SM budget: the transfer's SMs (the compute kernel
// beside it has the others); 0 where none is counted.
func Budget(p *record.Point) int { return p.Params.SMBudget }

// ok: a point the readers take (ran, verified, not above its link).
func perSMOK(p *record.Point) bool {
	return p.Drawn() && (p.Verify.Checked && p.Verify.OK || p.Verify.Unverifiable != "")
}

func bwOf(p *record.Point) (float64, bool) {
	m, ok := p.Metrics[record.MetricBandwidth]
	return m.Median, ok && m.Median > 0
}

// spreadOf is a point's min and max of metric over samples (its median
// where they are not recorded): a transfer's B/s, a compute kernel's time.
func spreadOf(p *record.Point, metric string) (lo, hi float64) {
	m := p.Metrics[metric]
	if m.Min > 0 && m.Max > 0 {
		return m.Min, m.Max
	}
	return m.Median, m.Median
}

// perByte is a transfer point's samples as seconds per byte (the inverse of
// its B/s: lower is better).
func perByte(p *record.Point) []float64 { return record.Costs(p, record.MetricBandwidth) }

// perIter is a compute kernel point's samples: its seconds an iteration.
func perIter(p *record.Point) []float64 { return slices.Clone(p.Samples) }

func timeOf(p *record.Point) (float64, bool) {
	m, ok := p.Metrics[record.MetricLatency]
	return m.Median, ok && m.Median > 0
}

// order is a mechanism's place in the order readers show them (the
// shim's list).
func order(name string) int {
	return slices.IndexFunc(mechanisms(), func(m Mechanism) bool { return m.Name == name })
}

// Curves are the file's mechanisms alone, a curve per mechanism and size
// (one initiator, the p2p or local path the run took), in the mechanisms'
// order then by size.
func Curves(f *record.File) []Curve {
	chk := CECheck(f)
	idx := map[string]*Curve{}
	var out []*Curve
	for i := range f.Points {
		p := &f.Points[i]
		r, ok := ParseID(p.ID)
		if !ok || r.TimesCompute || r.Beside() || r.StageOffset || !perSMOK(p) {
			continue
		}
		bw, ok := bwOf(p)
		if !ok {
			continue
		}
		k := fmt.Sprint(r.Mechanism, p.Params.Size)
		c := idx[k]
		if c == nil {
			m, _ := LookupMechanism(r.Mechanism)
			c = &Curve{Mechanism: m.Name, SMs: m.SMs, Size: p.Params.Size}
			if !m.SMs {
				c.SM = chk
			}
			idx[k] = c
			out = append(out, c)
		}
		lo, hi := spreadOf(p, record.MetricBandwidth)
		if j := slices.Index(c.Budgets, Budget(p)); j >= 0 {
			if bw > c.BW[j] { // a point twice (a resumed run): its best
				c.BW[j], c.Lo[j], c.Hi[j] = bw, lo, hi
			}
		} else {
			c.Budgets, c.BW = append(c.Budgets, Budget(p)), append(c.BW, bw)
			c.Lo, c.Hi = append(c.Lo, lo), append(c.Hi, hi)
		}
		c.Cached = c.Cached || p.L2Resident || p.Has(record.FlagCacheServed)
		if p.Limit != nil && p.Limit.Value > c.Ref {
			c.Ref, c.RefID = p.Limit.Value, p.Limit.ID
		}
	}
	res := make([]Curve, 0, len(out))
	for _, c := range out {
		ord := ascending(c.Budgets)
		s := Curve{Mechanism: c.Mechanism, SMs: c.SMs, Size: c.Size, Cached: c.Cached, SM: c.SM, Ref: c.Ref, RefID: c.RefID}
		for _, i := range ord {
			s.Budgets, s.BW = append(s.Budgets, c.Budgets[i]), append(s.BW, c.BW[i])
			s.Lo, s.Hi = append(s.Lo, c.Lo[i]), append(s.Hi, c.Hi[i])
		}
		res = append(res, s)
	}
	sort.SliceStable(res, func(a, b int) bool {
		ma, mb := order(res[a].Mechanism), order(res[b].Mechanism)
		if ma != mb {
			return ma < mb
		}
		return res[a].Size < res[b].Size
	})
	return res
}

// Interference is one transfer and one compute kernel run beside each
// other, each against itself alone on the same SMs: the transfer's GB/s
// and the compute's time an iteration (0 where a side was not measured).
type Interference struct {
	Mechanism, Compute string
	SMs                bool // the mechanism runs on SMs (its fact; else SM and Feed say what its copies did)
	Budget             int  // the transfer's SMs; the compute has the others
	Size               int64
	Alone, Beside      float64 // the transfer, B/s
	ComputeAlone       float64 // the compute kernel, seconds an iteration
	ComputeBeside      float64
	// Each side's samples of its cost, what the decision rule weighs
	// (TransferJudged, ComputeJudged): the transfer's seconds per byte (its
	// samples_s over the bytes it moved), the compute kernel's seconds an
	// iteration (nil: not measured, or the point kept no samples).
	AloneCost, BesideCost               []float64
	ComputeAloneCost, ComputeBesideCost []float64
	// Family is the number of sizes of its row (mechanism, compute kernel
	// and budget) in the file: the m over which the rule's intervals are
	// corrected together (Bonferroni).
	Family int
	// SM: where the mechanism has no SMs, what the file's copy-engine
	// points show of its SM use (CECheck, as its Curve's).
	SM CESM
	// Feed: where the mechanism has no SMs, whether the copies fed beside
	// the compute kernel kept the copy engine busy while it was timed (its
	// point's values, FeedOf); CEFedUnknown elsewhere.
	Feed Feed
	// Each side's SM clock while it ran (nil: not sampled): a slowdown is
	// not claimed between sides whose clocks differ (record.ClocksDiffer).
	AloneClock, BesideClock, ComputeAloneClock, ComputeBesideClock *record.Clock
}

// Outcome is what the decision rule (internal/decide) says of a slowdown.
type Outcome int

const (
	// NotMeasured: a side has no figure, so there is no slowdown.
	NotMeasured Outcome = iota
	// Claimed: the two sides differ: the lead is at least the rule's
	// margin and the confidence interval of the time ratio excludes 1.
	Claimed
	// WithinNoise: a tie: the lead is below the margin, or the interval
	// includes 1. No slowdown is claimed.
	WithinNoise
	// TooFew: too few samples a side for an interval at the level: no
	// slowdown is claimed (Verdict.Few says why).
	TooFew
	// ClocksApart: the two sides' GPUs ran at SM clocks more than
	// record.ClockMargin apart: a difference may be the clock's, so none is
	// claimed (Judgement.Clocks says the two).
	ClocksApart
)

// Judgement is a slowdown's outcome and the rule's verdict on its two
// sides, "alone" and "beside".
type Judgement struct {
	Outcome Outcome
	decide.Verdict
	Clocks string // ClocksApart: the two clocks, in words
}

// judge applies the rule to a slowdown's two sides (costs: lower is
// better) in a family of m sizes, unless their clocks differ; slowdown
// NaN: not measured.
func judge(rule decide.Rule, slowdown float64, alone, beside []float64, m int, ca, cb *record.Clock) Judgement {
	if math.IsNaN(slowdown) {
		return Judgement{Outcome: NotMeasured}
	}
	v := rule.Decide([]decide.Entry{{Name: "alone", Samples: alone}, {Name: "beside", Samples: beside}}, m)
	j := Judgement{Outcome: Claimed, Verdict: v}
	switch {
	case record.ClocksDiffer(ca, cb) != "":
		j.Outcome, j.Clocks = ClocksApart, record.ClocksDiffer(ca, cb)
	case !v.Tie():
	case v.Few != "":
		j.Outcome = TooFew
	default:
		j.Outcome = WithinNoise
	}
	return j
}

// TransferJudged is the rule's outcome on the transfer's slowdown: its
// seconds per byte beside the compute kernel against alone, in the family
// of its row's sizes.
func (i Interference) TransferJudged(rule decide.Rule) Judgement {
	return judge(rule, i.TransferSlowdown(), i.AloneCost, i.BesideCost, i.Family, i.AloneClock, i.BesideClock)
}

// ComputeJudged is the same for the compute kernel's time an iteration.
func (i Interference) ComputeJudged(rule decide.Rule) Judgement {
	return judge(rule, i.ComputeSlowdown(), i.ComputeAloneCost, i.ComputeBesideCost, i.Family, i.ComputeAloneClock, i.ComputeBesideClock)
}

// SlowdownRule says in a sentence when a slowdown is claimed, for notes:
// the decision rule as the two slowdowns apply it.
func SlowdownRule(rule decide.Rule) string {
	rule = rule.OrDefault()
	return fmt.Sprintf("a slowdown is claimed only where it is at least %s and the %.0f %% confidence interval of the time ratio beside over alone "+
		"(Hodges–Lehmann, Moses' distribution-free interval, over the two rows' samples; the transfer's as seconds per byte) excludes 1, "+
		"the intervals of a row's sizes corrected together (Bonferroni: each at 1 − %g/m over the m sizes of its mechanism, compute kernel and SMs), "+
		"and never between two sides whose GPUs ran at SM clocks more than %s apart (the clock's difference, not the partner's)",
		decide.Percent(rule.Margin), 100*(1-rule.Alpha), rule.Alpha, decide.Percent(record.ClockMargin))
}

// TransferSlowdown is how much longer the transfer took beside the compute
// kernel (0.05: 5 % longer; NaN: not measured).
func (i Interference) TransferSlowdown() float64 {
	if i.Alone <= 0 || i.Beside <= 0 {
		return math.NaN()
	}
	return i.Alone/i.Beside - 1
}

// ComputeSlowdown is how much longer an iteration of the compute kernel took
// with the transfer beside it (NaN: not measured).
func (i Interference) ComputeSlowdown() float64 {
	if i.ComputeAlone <= 0 || i.ComputeBeside <= 0 {
		return math.NaN()
	}
	return i.ComputeBeside/i.ComputeAlone - 1
}

// Interferences pairs the file's rows beside another kernel with their rows
// alone, ordered by mechanism, compute kernel, size and budget.
func Interferences(f *record.File) []Interference {
	type key struct {
		m, c string
		b    int
		s    int64
	}
	chk := CECheck(f)
	at := map[key]*Interference{}
	get := func(k key) *Interference {
		if at[k] == nil {
			m, _ := LookupMechanism(k.m)
			at[k] = &Interference{Mechanism: k.m, SMs: m.SMs, Compute: k.c, Budget: k.b, Size: k.s}
			if !m.SMs {
				at[k].SM = chk
			}
		}
		return at[k]
	}
	type fig struct {
		v     float64   // a row's median
		cost  []float64 // its samples of a cost (perByte, or seconds)
		clock *record.Clock
	}
	alone := map[string]fig{}        // persm/<m> size budget → B/s
	computeAlone := map[string]fig{} // compute budget → s
	for i := range f.Points {
		p := &f.Points[i]
		r, ok := ParseID(p.ID)
		if !ok || r.StageOffset || !perSMOK(p) {
			continue
		}
		switch {
		case !r.TimesCompute && !r.Beside():
			if v, ok := bwOf(p); ok {
				alone[fmt.Sprint(r.Mechanism, p.Params.Size, Budget(p))] = fig{v, perByte(p), p.Clock}
			}
		case r.TimesCompute && !r.Beside():
			if v, ok := timeOf(p); ok {
				computeAlone[fmt.Sprint(r.Compute, Budget(p))] = fig{v, perIter(p), p.Clock}
			}
		case !r.TimesCompute:
			if v, ok := bwOf(p); ok {
				in := get(key{r.Mechanism, r.Compute, Budget(p), p.Params.Size})
				in.Beside, in.BesideCost, in.BesideClock = v, perByte(p), p.Clock
			}
		default:
			if v, ok := timeOf(p); ok {
				in := get(key{r.Mechanism, r.Compute, Budget(p), p.Params.Size})
				in.ComputeBeside, in.ComputeBesideCost, in.ComputeBesideClock = v, perIter(p), p.Clock
				if !in.SMs {
					in.Feed = FeedOf(p)
				}
			}
		}
	}
	// The family of each row: its sizes (mechanism, compute kernel and
	// budget), every one a question the rule is asked of both slowdowns.
	family := map[key]int{}
	for k := range at {
		family[key{k.m, k.c, k.b, 0}]++
	}
	var out []Interference
	for k, in := range at {
		a, c := alone[fmt.Sprint(k.m, k.s, k.b)], computeAlone[fmt.Sprint(k.c, k.b)]
		in.Alone, in.AloneCost, in.AloneClock = a.v, a.cost, a.clock
		in.ComputeAlone, in.ComputeAloneCost, in.ComputeAloneClock = c.v, c.cost, c.clock
		in.Family = family[key{k.m, k.c, k.b, 0}]
		out = append(out, *in)
	}
	sort.Slice(out, func(a, b int) bool {
		x, y := out[a], out[b]
		if x.Mechanism != y.Mechanism {
			return order(x.Mechanism) < order(y.Mechanism)
		}
		if x.Compute != y.Compute {
			return x.Compute < y.Compute
		}
		if x.Size != y.Size {
			return x.Size < y.Size
		}
		return x.Budget < y.Budget
	})
	return out
}

// ascending is the indices of keys in their ascending order (the order to
// lay a point's parallel columns out in).
func ascending(keys []int) []int {
	ord := make([]int, len(keys))
	for i := range ord {
		ord[i] = i
	}
	sort.Slice(ord, func(a, b int) bool { return keys[ord[a]] < keys[ord[b]] })
	return ord
}
