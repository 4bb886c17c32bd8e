package decide

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
)

// Rule is the decision rule's two settings.
type Rule struct {
	// Margin is the practical margin, a fraction: a lead below it is a tie
	// however clear (0.03: 3 %).
	Margin float64
	// Alpha is the error rate of a family of sizes: each interval is made
	// at 1 − Alpha/m over the m sizes of a series (Bonferroni).
	Alpha float64
}

// DefaultMargin is the margin of the command-line flags' default.
const DefaultMargin = 0.03

// Default is a 3 % margin at 95 % confidence.
func Default() Rule { return Rule{Margin: DefaultMargin, Alpha: 0.05} }

// OrDefault is r, or Default where r was left zero (a zero Alpha: a rule
// nobody set).
func (r Rule) OrDefault() Rule {
	if r.Alpha <= 0 || r.Alpha >= 1 || math.IsNaN(r.Alpha) {
		return Default()
	}
	return r
}

// Level is the confidence of each interval in a family of m comparisons.
func (r Rule) Level(m int) float64 {
	r = r.OrDefault()
	return 1 - r.Alpha/float64(max(m, 1))
}

// Describe says the rule in a sentence, for a table's notes.
func (r Rule) Describe() string {
	r = r.OrDefault()
	return fmt.Sprintf("a winner only where its lead is at least %s and the %.0f %% confidence interval of the time ratio "+
		"(Hodges–Lehmann, Moses' distribution-free interval) excludes 1 against every other implementation, the intervals of a series' "+
		"sizes corrected together (Bonferroni: each at 1 − %g/m over its m sizes); else a tie", Percent(r.Margin), 100*(1-r.Alpha), r.Alpha)
}

// Entry is one contender at one size.
type Entry struct {
	Name string
	// Samples of a cost: lower is better (seconds per operation, or seconds
	// per byte for a bandwidth).
	Samples []float64
	// Unjudged says why no verdict may rest on this measurement ("" where
	// one may): not a figure of what is compared (a cache served it, it is
	// above its link) or a mark that says look again (noisy, ...): the
	// size is then not judged, and not one of its series' family.
	Unjudged string
}

// Verdict is the rule's answer at one size.
type Verdict struct {
	Fastest string // the lowest median
	Winner  string // Fastest where the rule names it, else "" (a tie)
	Next    string // the runner-up by median
	Lead    float64
	// Lo and Hi bound the runner-up's time ratio to the fastest's (NaN: too
	// few samples for the level).
	Lo, Hi float64
	Level  float64
	// Tied are the contenders the fastest cannot be told from, itself first.
	Tied []string
	// Within is how far apart the tied may be: at least the margin, or the
	// furthest end of their intervals (NaN: too few samples to say).
	Within float64
	// Few says why there is no interval, where the samples are too few for
	// its level ("5 and 5 samples; 6 a side needed").
	Few string
	// NotJudged says why the rule was not asked, where some contender's
	// measurement may carry no verdict (Entry.Unjudged): "cache-served"
	// where every contender's is so, else each such contender's name and
	// why ("B: noisy"). The verdict then names no one, not even the
	// fastest.
	NotJudged string
	// All is the number of contenders.
	All int
}

// Tie reports whether the rule named no winner (a tie, too few samples,
// or a size not judged).
func (v Verdict) Tie() bool { return v.Winner == "" }

// Label is the verdict in words: the winner, "tie (within 3 %)", "tie
// (within 12 %): A, B" where not every contender tied, "too few samples
// (5 and 5 samples; 6 a side needed)", "not judged: cache-served": no
// verdict.
func (v Verdict) Label() string {
	if v.NotJudged != "" {
		return "not judged: " + v.NotJudged
	}
	if !v.Tie() {
		return v.Winner
	}
	s := "tie (within " + Percent(v.Within) + ")"
	if v.Few != "" {
		s = "too few samples (" + v.Few + ")"
	}
	if len(v.Tied) < v.All {
		s += ": " + strings.Join(v.Tied, ", ")
	}
	return s
}

// Decide applies the rule to the contenders at one size of a series of
// family sizes (Family), unless some contender's measurement may carry no
// verdict (Entry.Unjudged): then no one is named (Verdict.NotJudged).
func (r Rule) Decide(entries []Entry, family int) Verdict {
	r = r.OrDefault()
	level := r.Level(family)
	v := Verdict{Lo: math.NaN(), Hi: math.NaN(), Level: level, Within: math.NaN(), All: len(entries)}
	if v.NotJudged = notJudged(entries); v.NotJudged != "" {
		v.Lead = math.NaN()
		return v
	}
	type med struct {
		Entry
		m float64
	}
	var es []med
	for _, e := range entries {
		m := median(e.Samples)
		if math.IsNaN(m) {
			m = math.Inf(1) // no samples: never the fastest
		}
		es = append(es, med{e, m})
	}
	sort.SliceStable(es, func(i, j int) bool { return es[i].m < es[j].m })
	if len(es) == 0 {
		return v
	}
	f := es[0]
	v.Fastest, v.Tied = f.Name, []string{f.Name}
	if len(es) == 1 {
		v.Winner = f.Name
		return v
	}
	v.Next, v.Lead = es[1].Name, es[1].m/f.m-1
	won := true
	within := r.Margin
	for i, e := range es[1:] {
		hl := HodgesLehmann(f.Samples, e.Samples, level)
		lead := e.m/f.m - 1
		if i == 0 {
			v.Lo, v.Hi = hl.Lo, hl.Hi
		}
		if hl.OK() && lead >= r.Margin && hl.Lo > 1 {
			continue // clearly slower
		}
		won = false
		v.Tied = append(v.Tied, e.Name)
		if !hl.OK() || math.IsNaN(lead) {
			within = math.NaN()
			v.Few = fmt.Sprintf("%d and %d samples; %d a side needed", len(f.Samples), len(e.Samples), NeedSamples(level))
			continue
		}
		within = math.Max(within, math.Max(math.Abs(lead), math.Max(hl.Hi-1, 1-hl.Lo)))
	}
	if won {
		v.Winner = f.Name
	} else {
		v.Within = within
	}
	return v
}

// Family is the number of sizes of a series that the rule judges: those
// where two contenders or more were measured and every measurement may
// carry a verdict. Every reader that names a winner of a series decides
// each of its sizes with this family, so that one comparison gets one
// answer whichever reader asks.
func Family(sizes [][]Entry) int {
	n := 0
	for _, es := range sizes {
		if len(es) >= 2 && notJudged(es) == "" {
			n++
		}
	}
	return n
}

// notJudged says why the contenders may not be judged ("" where they
// may): the one reason where every contender has it, else each unjudged
// contender's name and reason.
func notJudged(entries []Entry) string {
	var parts []string
	same := len(entries) > 0
	for _, e := range entries {
		same = same && e.Unjudged != "" && e.Unjudged == entries[0].Unjudged
		if e.Unjudged != "" {
			parts = append(parts, e.Name+": "+e.Unjudged)
		}
	}
	if same {
		return entries[0].Unjudged
	}
	return strings.Join(parts, "; ")
}

// NeedSamples is the fewest samples a side that give an interval at the
// level: the smallest n with P(U = 0) = 1 / C(2n, n) ≤ (1 − level)/2.
func NeedSamples(level float64) int {
	tail := (1 - level) / 2
	for n := 2; ; n++ {
		lg, _ := math.Lgamma(float64(2*n + 1))
		l1, _ := math.Lgamma(float64(n + 1))
		if -(lg - 2*l1) <= math.Log(tail) {
			return n
		}
	}
}

func median(xs []float64) float64 {
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	n := len(s)
	switch {
	case n == 0:
		return math.NaN()
	case n%2 == 1:
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// Percent writes a fraction as a percentage rounded up at the shown
// precision (a tie is never claimed closer than it is): 3 %, 2.5 %, 13 %.
func Percent(f float64) string {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return "?"
	}
	p := 100 * f
	if p < 10 {
		p = math.Ceil(p*10-1e-9) / 10
	} else {
		p = math.Ceil(p - 1e-9)
	}
	return strconv.FormatFloat(p, 'f', -1, 64) + " %"
}
