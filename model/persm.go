package model

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/nvshbench/nvshbench/internal/decide"
	"github.com/nvshbench/nvshbench/internal/table"
	"github.com/nvshbench/nvshbench/record"
	"github.com/nvshbench/nvshbench/record/persm"
)

// Bytes per SM (issue 32), the guide's answer: which mechanism moves a rate
// to the peer with the fewest SMs, and what that costs a compute kernel
// beside it (the curves and slowdowns are record/persm's reading of the
// persm/* rows).

// phrase says what a compute kernel is, for sentences (its name where the
// tool does not know it).
func phrase(compute string) string {
	if c, ok := persm.LookupCompute(compute); ok {
		return c.Phrase
	}
	return compute
}

// Answer is the guide's answer for moving a rate to the peer at one size.
type Answer struct {
	Want      float64 // B/s asked for
	Size      int64
	Mechanism string  // the SM mechanism reaching it on the fewest SMs ("": none does)
	Budget    int     // its SMs
	BW        float64 // its B/s there
	CE        float64 // the copy engine's B/s at the size (0: not measured)
	// CESM: what the file's copy-engine rows show of its SM use: no SM
	// only where checked (persm.CENoSM); on SMs (persm.CEOnSM), its rate
	// is a reference, never an answer in SMs.
	CESM persm.CESM
	// Costs: per compute kernel beside it, the compute's and the transfer's
	// slowdowns at that budget and size (NaN: not measured).
	Costs []Cost
	// CECosts: the same for the copy engine beside each compute kernel on
	// every SM.
	CECosts []Cost
	Best    float64 // the most any SM mechanism moved at the size (where none reaches Want)
}

// Cost is what running beside each other costs the two kernels.
type Cost struct {
	Compute                           string
	ComputeSlowdown, TransferSlowdown float64
	// ComputeJudged, TransferJudged: the decision rule's outcome on each
	// slowdown (persm.Interference's): claimed, within noise, or too few
	// samples to claim.
	ComputeJudged, TransferJudged persm.Judgement
	Beside                        float64 // the transfer's B/s beside the compute kernel (0: not measured)
	// Feed: beside the copy engine, whether the shim judged the copies fed
	// beside the compute kernel busy (persm.FeedOf): not judged, the
	// compute's slowdown is no measured cost (the copies may have idled).
	Feed persm.Feed
}

// costsOf are the slowdowns of mechanism m on budget SMs at size beside
// each compute kernel, where measured, judged by rule.
func costsOf(ins []persm.Interference, m string, budget int, size int64, rule decide.Rule) []Cost {
	var out []Cost
	for _, c := range persm.Computes() {
		comp := c.Name
		cost := Cost{Compute: comp, ComputeSlowdown: math.NaN(), TransferSlowdown: math.NaN()}
		seen := false
		for _, in := range ins {
			if in.Mechanism == m && in.Compute == comp && in.Budget == budget && in.Size == size {
				cost.ComputeSlowdown, cost.TransferSlowdown, cost.Beside, seen = in.ComputeSlowdown(), in.TransferSlowdown(), in.Beside, true
				cost.ComputeJudged, cost.TransferJudged = in.ComputeJudged(rule), in.TransferJudged(rule)
				cost.Feed = in.Feed
			}
		}
		if seen {
			out = append(out, cost)
		}
	}
	return out
}

// AnswerFor finds the mechanism that moves want B/s at size with the fewest
// SMs (ties: the one moving more there), from the file's curves and
// interference rows, its slowdowns judged by rule (zero: the default).
func AnswerFor(f *record.File, want float64, size int64, rule decide.Rule) Answer {
	return answerFor(persm.Curves(f), persm.Interferences(f), want, size, rule.OrDefault())
}

// bestPeak is the highest peak of an SM mechanism's curve at size.
func bestPeak(cs []persm.Curve, size int64) float64 {
	best := 0.0
	for _, c := range cs {
		if c.Size == size && c.SMs {
			p, _ := c.Peak()
			best = max(best, p)
		}
	}
	return best
}

// refAt is the run's best copy reference the curves at size carry (0:
// none).
func refAt(cs []persm.Curve, size int64) float64 {
	ref := 0.0
	for _, c := range cs {
		if c.Size == size {
			ref = max(ref, c.Ref)
		}
	}
	return ref
}

// answerFor is AnswerFor over a file's curves and interference rows.
func answerFor(cs []persm.Curve, ins []persm.Interference, want float64, size int64, rule decide.Rule) Answer {
	a := Answer{Want: want, Size: size, Budget: -1, Best: bestPeak(cs, size)}
	for _, c := range cs {
		if c.Size != size {
			continue
		}
		if !c.SMs { // the copy engine: a rate with no SM of ours, and what it costs a compute kernel on every SM
			a.CE, _ = c.Peak()
			a.CESM = c.SM
			a.CECosts = costsOf(ins, c.Mechanism, 0, size, rule)
			continue
		}
		for i, b := range c.Budgets {
			if c.BW[i] < want {
				continue
			}
			if a.Mechanism == "" || b < a.Budget || b == a.Budget && c.BW[i] > a.BW {
				a.Mechanism, a.Budget, a.BW = c.Mechanism, b, c.BW[i]
			}
			break
		}
	}
	if a.Mechanism == "" {
		return a
	}
	a.Costs = costsOf(ins, a.Mechanism, a.Budget, size, rule)
	return a
}

// slowdown says a slowdown as the decision rule judged it: "5 %" where
// claimed, "1 %, within noise" where a tie (under the margin, or its
// interval includes 1), "5 %, too few samples to claim" where its rows'
// samples are too few for an interval. The house rule: a difference only
// where it beats both a practical margin and the noise.
func slowdown(v float64, j persm.Judgement) string { return pct(v) + unclaimed(j) }

// unclaimed is what follows a slowdown the rule does not claim: ", within
// noise", ", too few samples to claim", "" where claimed.
func unclaimed(j persm.Judgement) string {
	switch j.Outcome {
	case persm.WithinNoise:
		return ", within noise"
	case persm.TooFew:
		return ", too few samples to claim"
	case persm.ClocksApart:
		return ", not claimed: " + j.Clocks
	}
	return ""
}

// ceBeside is what the copy engine moves, and what it and the kernel cost
// each other, beside each compute kernel on every SM ("" where not
// measured): ", beside an FMA-bound kernel on every SM 1600 GB/s (25 %
// slower; it costs the kernel 5 %)", saying "below the rate asked" where
// it moves less than that beside the kernel, and why it is slower where
// cudaMemcpyAsync ran on SMs ("25 % slower: its warps compete with the
// kernel's", only where the slowdown is claimed), each slowdown the rule
// does not claim said so ("1 % slower, within noise"; "it costs the
// kernel 5 %, too few samples to claim"), and no cost to the kernel where
// the shim did not judge the copies fed beside it ("its cost to the kernel
// not judged (the copies may have idled: a copy 1.31 µs, the feeder's
// calls 2.5 µs)").
func (a Answer) ceBeside() string {
	s := ""
	for _, c := range a.CECosts {
		if c.Beside <= 0 {
			continue
		}
		s += fmt.Sprintf(", beside %s on every SM %s GB/s", phrase(c.Compute), gbps(c.Beside))
		var why []string
		if c.Beside < a.Want {
			why = append(why, "below the rate asked")
		}
		if !math.IsNaN(c.TransferSlowdown) {
			w := pct(c.TransferSlowdown) + " slower" + unclaimed(c.TransferJudged)
			if a.CESM == persm.CEOnSM && c.TransferJudged.Outcome == persm.Claimed && c.TransferSlowdown > 0 {
				w += ": its warps compete with the kernel's" // the driver's kernel, on the kernel's SMs
			}
			why = append(why, w)
		}
		switch {
		case math.IsNaN(c.ComputeSlowdown):
		case c.Feed.State == persm.CEFedNotJudged:
			// The copies were too short for the feeder to keep the copy
			// engine busy: the compute's slowdown is no measured cost.
			w := "its cost to the kernel not judged (the copies may have idled"
			if t := c.Feed.Times(); t != "" {
				w += ": " + t
			}
			why = append(why, w+")")
		default:
			why = append(why, "it costs the kernel "+slowdown(c.ComputeSlowdown, c.ComputeJudged))
		}
		if len(why) > 0 {
			s += " (" + strings.Join(why, "; ") + ")"
		}
	}
	return s
}

// Sentence is the answer in words.
func (a Answer) Sentence() string {
	size := humanBytes(float64(a.Size))
	if a.Mechanism == "" {
		s := fmt.Sprintf("no mechanism moves %s GB/s to the peer at %s on the SMs measured (the most: %s GB/s)", gbps(a.Want), size, gbps(a.Best))
		if a.CE >= a.Want {
			s += "; " + a.ceSays(false)
		}
		return s
	}
	s := fmt.Sprintf("to move %s GB/s to the peer at %s with the fewest SMs, use %s on %d SM%s (%s GB/s)", gbps(a.Want), size, a.Mechanism,
		a.Budget, map[bool]string{true: "", false: "s"}[a.Budget == 1], gbps(a.BW))
	for _, c := range a.Costs {
		if !math.IsNaN(c.ComputeSlowdown) {
			s += fmt.Sprintf("; beside %s that costs it %s", phrase(c.Compute), slowdown(c.ComputeSlowdown, c.ComputeJudged))
			if !math.IsNaN(c.TransferSlowdown) {
				s += fmt.Sprintf(" (and the transfer %s)", slowdown(c.TransferSlowdown, c.TransferJudged))
			}
		}
	}
	if a.CE >= a.Want {
		s += "; " + a.ceSays(true)
	}
	return s
}

// ceSays is the copy engine's part of the answer where it moves the rate,
// as the file's copy-engine rows show its SM use (too: an SM mechanism is
// the answer; else the copy engine's is the only rate reaching it):
//   - checked, no SM: "the copy engine moves it with no SM (checked; 2000
//     GB/s), beside ..."
//   - not checked: "the copy engine (not checked for SM use) moves it
//     (2000 GB/s), beside ...: not a verified answer with no SM"
//   - on SMs: "cudaMemcpyAsync (persm/ce) moves it (2000 GB/s), beside ...,
//     but it ran on SMs here (the driver's kernel: it waited for a free CTA
//     slot), how many not counted: a reference rate, not a fewest-SM answer"
//
// Without an SM mechanism's answer, "does" stands for "moves it".
func (a Answer) ceSays(too bool) string {
	verb := "does"
	if too {
		verb = "moves it"
	}
	rate := gbps(a.CE) + " GB/s"
	switch a.CESM {
	case persm.CENoSM:
		if too {
			return fmt.Sprintf("the copy engine moves it with no SM (checked; %s)%s", rate, a.ceBeside())
		}
		return fmt.Sprintf("the copy engine does, with no SM (checked; %s)%s", rate, a.ceBeside())
	case persm.CEOnSM:
		return fmt.Sprintf("cudaMemcpyAsync (persm/ce) %s (%s)%s, but it ran on SMs here (the driver's kernel: it waited for a free CTA slot), how many not counted: a reference rate, not a fewest-SM answer",
			verb, rate, a.ceBeside())
	}
	return fmt.Sprintf("the copy engine (not checked for SM use) %s (%s)%s: not a verified answer with no SM", verb, rate, a.ceBeside())
}

// ceGuideNote is the guide table's note on the copy engine's SM use, as the
// file's copy-engine rows show it (persm.CECheck).
var ceGuideNote = map[persm.CESM]string{
	persm.CENoSM: "the copy engine: checked, a copy completed while a kernel held every CTA slot (ce_sm_free 1): it moves its rate with no SM",
	persm.CENotChecked: "the copy engine: not checked for SM use (no ce_sm_free in this file; on one H200 a same-GPU cudaMemcpyAsync ran as the driver's kernel, on SMs), " +
		"so its rate is no verified answer with no SM",
	persm.CEOnSM: "cudaMemcpyAsync (persm/ce): a copy waited for a free CTA slot (ce_sm_free 0): the driver ran it as a kernel, on SMs it did not count, " +
		"so it answers no rate with fewer SMs; its rate is a reference",
}

// PerSMGuide answers, for each file with bytes-per-SM rows, at its largest
// size beyond L2: the fewest SMs for a quarter, half and 90 % of the best SM
// mechanism's peak there, and for each rate asked (B/s); the slowdowns
// judged by rule (zero: the default). A file whose every size is
// cache-served gets no answer, and a row that says why.
func PerSMGuide(files []*record.File, rates []float64, rule decide.Rule) []table.Table {
	rule = rule.OrDefault()
	var out []table.Table
	for _, f := range files {
		cs := persm.Curves(f)
		if len(cs) == 0 {
			continue
		}
		size := persm.GuideSize(cs)
		best := bestPeak(cs, size)
		ins := persm.Interferences(f)
		t := table.Table{Title: "Bytes per SM: the fewest SMs that move a rate to the peer [" + f.Name + "]",
			Columns: []string{"rate", "size", "mechanism", "SMs", "GB/s", "answer"}, Right: []bool{true, false, false, true, true, false}}
		t.Long = []bool{false, false, false, false, false, true}
		if !slices.ContainsFunc(cs, func(c persm.Curve) bool { return c.Size == size && !c.Cached }) {
			// No rate, no peak from the cache: its figures are no link's.
			t.Rows = append(t.Rows, []table.Cell{table.Str("–"), table.Str(humanBytes(float64(size))), table.Str("–"), table.Str("–"), table.Str("–"),
				table.Str("no answer: every size measured is cache-served (within twice the L2: the cache's rates, not the link's); measure a size beyond it")})
			out = append(out, t)
			continue
		}
		// The rates asked by default are shares of the hardware's figure
		// (the run's best copy reference) where the file has one, else of
		// the best SM mechanism's peak.
		base, of := best, "the best SM mechanism's peak there"
		if ref := refAt(cs, size); ref > 0 {
			base, of = ref, fmt.Sprintf("the run's best copy reference there (%s GB/s)", gbps(ref))
		}
		wants := append([]float64{0.25 * base, 0.5 * base, persm.Near * base}, rates...)
		for _, w := range wants {
			if w <= 0 {
				continue
			}
			a := answerFor(cs, ins, w, size, rule)
			row := []table.Cell{gbpsCell(w), table.Str(humanBytes(float64(size)))}
			if a.Mechanism == "" {
				row = append(row, table.Str("–"), table.Str("–"), table.Str("–"))
			} else {
				row = append(row, table.Str(a.Mechanism), numCell(float64(a.Budget), 0), gbpsCell(a.BW))
			}
			t.Rows = append(t.Rows, append(row, table.Str(a.Sentence())))
		}
		t.Notes = append(t.Notes, fmt.Sprintf("at %s, the largest size measured beyond L2; the rates: 25, 50 and 90 %% of %s, then any asked", humanBytes(float64(size)), of),
			"costs: a compute kernel holding every other SM, its time an iteration beside the transfer against alone on the same SMs (and the transfer's against alone on its budget); beside the copy engine, the compute kernel on every SM",
			persm.SlowdownRule(rule)+"; else \"within noise\" (under the margin, or the interval includes 1), or \"too few samples to claim\" where a side's samples are too few for the interval")
		if slices.ContainsFunc(cs, func(c persm.Curve) bool { return !c.SMs && c.Size == size }) {
			t.Notes = append(t.Notes, ceGuideNote[persm.CECheck(f)])
		}
		out = append(out, t)
	}
	return out
}
