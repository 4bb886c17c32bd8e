package report

import (
	"slices"
	"strings"
	"testing"

	"github.com/nvshbench/nvshbench/internal/decide"
	"github.com/nvshbench/nvshbench/record/persm"
)

// spread: n costs evenly over t·(1 ± noise).
func spread(t, noise float64, n int) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = t * (1 + noise*(2*float64(i)/float64(max(n-1, 1))-1))
	}
	return out
}

// disjoint: every cost of a is below every cost of b (min-max apart).
func disjoint(a, b []float64) bool { return slices.Max(a) < slices.Min(b) }

// Each slowdown is judged by the decision rule (internal/decide), not by
// its two sides' ranges: claimed (a plain figure) where it is at least the
// margin and its interval excludes 1; "~" within noise where it is under
// the margin, even with the samples apart, or the interval includes 1;
// "?" with too few samples for the interval, the reason in a note.
func TestInterferenceTableJudgesSlowdowns(t *testing.T) {
	// in: a row whose transfer moves aloneBW and besideBW B/s and whose
	// compute takes 1 µs alone and computeBeside beside, each side's
	// samples n costs over ±noise.
	in := func(budget int, besideBW, computeBeside, noise float64, n int) persm.Interference {
		return persm.Interference{Mechanism: "tma", Compute: "fma", Size: 1 << 28, Budget: budget, Family: 1,
			Alone: 100e9, Beside: besideBW, AloneCost: spread(1/100e9, noise, n), BesideCost: spread(1/besideBW, noise, n),
			ComputeAlone: 1e-6, ComputeBeside: computeBeside, ComputeAloneCost: spread(1e-6, noise, n), ComputeBesideCost: spread(computeBeside, noise, n)}
	}
	rows := []persm.Interference{
		in(1, 90e9, 1.2e-6, 0.01, 5),   // 11.1 % and 20 %, tight: claimed
		in(2, 98e9, 1.02e-6, 0.001, 5), // 2 %, samples apart: under the margin
		in(4, 80e9, 1.25e-6, 0.3, 5),   // 25 %, samples ±30 %: the interval includes 1
		in(8, 80e9, 1.25e-6, 0.01, 3),  // 25 %, tight, three samples a side: no interval at 95 %
	}
	if r := rows[1]; !disjoint(r.AloneCost, r.BesideCost) || !disjoint(r.ComputeAloneCost, r.ComputeBesideCost) {
		t.Fatalf("the 2 %% row's samples overlap: %+v", r)
	}
	tab := interferenceTable(rows, "", persm.CENotChecked, decide.Default())
	cols := []string{"transfer slowdown %", "compute slowdown %"}
	for i, want := range [][2]string{{"11.1", "20.0"}, {"2.0 ~", "2.0 ~"}, {"25.0 ~", "25.0 ~"}, {"25.0 ?", "25.0 ?"}} {
		for k, col := range cols {
			if got := tab.Rows[i][slices.Index(tab.Columns, col)].Text; got != want[k] {
				t.Errorf("row %d (%d SMs) %s: %q, want %q", i, rows[i].Budget, col, got, want[k])
			}
		}
	}
	for _, n := range []string{
		"a slowdown is claimed only where it is at least 3 % and the 95 % confidence interval of the time ratio beside over alone (Hodges–Lehmann, Moses' distribution-free interval, over the two rows' samples; the transfer's as seconds per byte) excludes 1, the intervals of a row's sizes corrected together (Bonferroni: each at 1 − 0.05/m over the m sizes of its mechanism, compute kernel and SMs), and never between two sides whose GPUs ran at SM clocks more than 3 % apart (the clock's difference, not the partner's)",
		"~: within noise (under the margin, or the interval includes 1): no slowdown is claimed",
		"?: too few samples to judge (3 and 3 samples; 4 a side needed): no slowdown is claimed",
	} {
		if !slices.Contains(tab.Notes, n) {
			t.Errorf("no note %q: %q", n, tab.Notes)
		}
	}
	for _, n := range tab.Notes {
		if strings.Contains(n, "overlap") {
			t.Errorf("a note on overlapping samples: %q", n)
		}
	}
	// The rule is the one given: a 1 % margin claims the 2 % apart; no
	// row too few, no note on it.
	tab = interferenceTable(rows[:3], "", persm.CENotChecked, decide.Rule{Margin: 0.01, Alpha: 0.05})
	for _, col := range cols {
		if got := tab.Rows[1][slices.Index(tab.Columns, col)].Text; got != "2.0" {
			t.Errorf("at a 1 %% margin, %s: %q, want \"2.0\"", col, got)
		}
	}
	noted := func(prefix string) bool {
		return slices.ContainsFunc(tab.Notes, func(n string) bool { return strings.HasPrefix(n, prefix) })
	}
	if !noted("a slowdown is claimed only where it is at least 1 % and") || noted("?:") {
		t.Errorf("notes at a 1 %% margin, none too few: %q", tab.Notes)
	}
}

// Several rows not judged: the note gives the copies' and the feeder's
// times as ranges (one figure where they agree), and a time not in a
// point is left out.
func TestFeedNotesRanges(t *testing.T) {
	n := feedNotes([]persm.Feed{{State: persm.CEFedNotJudged, Copy: 1.31e-6, Calls: 2.5e-6}, {State: persm.CEFedNotJudged, Copy: 3.5e-6, Calls: 2.5e-6}}, nil)
	want := "†: not judged: the copies beside the compute were too short for a host thread to keep the copy engine busy (a copy 1.31-3.5 µs, the feeder's calls 2.5 µs): the compute's slowdown may be understated"
	if len(n) != 1 || n[0] != want {
		t.Errorf("%q, want %q", n, want)
	}
	if n := feedNotes([]persm.Feed{{State: persm.CEFedNotJudged, Copy: 2e-6}}, []persm.Feed{{State: persm.CEFedJudged, Busy: 0.99}, {State: persm.CEFedJudged, Busy: 0.93}}); len(n) != 2 ||
		!strings.Contains(n[0], "busy (a copy 2 µs): the") || !strings.Contains(n[1], "busy 93 % of every timed window") {
		t.Errorf("one time, two judged rows: %q", n)
	}
	if n := feedNotes(nil, nil); n != nil {
		t.Errorf("nothing judged or not: %q", n)
	}
}
