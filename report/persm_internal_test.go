package report

import (
	"slices"
	"strings"
	"testing"
)

// A slowdown inside the noise is marked "~" in the interference table (and a
// note says what the mark means); one that beats the noise is a plain figure.
func TestInterferenceTableMarksNoise(t *testing.T) {
	near := Interference{Mechanism: "tma", Compute: "fma", Size: 1 << 28, Budget: 1,
		Alone: 100e9, Beside: 99e9, AloneLo: 98e9, AloneHi: 102e9, BesideLo: 97e9, BesideHi: 98.5e9,
		ComputeAlone: 1e-6, ComputeBeside: 1.1e-6, ComputeAloneLo: 0.99e-6, ComputeAloneHi: 1.01e-6, ComputeBesideLo: 1.02e-6, ComputeBesideHi: 1.2e-6}
	tab := interferenceTable([]Interference{near}, "", CENotChecked)
	col := func(name string) string {
		i := slices.Index(tab.Columns, name)
		if i < 0 || len(tab.Rows) != 1 {
			t.Fatalf("columns %v, %d rows", tab.Columns, len(tab.Rows))
		}
		return tab.Rows[0][i].Text
	}
	if got := col("transfer slowdown %"); got != "1.0 ~" {
		t.Errorf("transfer slowdown within noise: %q, want \"1.0 ~\"", got)
	}
	if got := col("compute slowdown %"); got != "10.0" {
		t.Errorf("compute slowdown beyond noise: %q, want \"10.0\"", got)
	}
	if !slices.ContainsFunc(tab.Notes, func(n string) bool { return len(n) > 2 && n[:2] == "~:" }) {
		t.Errorf("no note on the mark: %q", tab.Notes)
	}
}

// Several rows not judged: the note gives the copies' and the feeder's
// times as ranges (one figure where they agree), and a time not in a
// point is left out.
func TestFeedNotesRanges(t *testing.T) {
	n := feedNotes([]Feed{{State: CEFedNotJudged, Copy: 1.31e-6, Calls: 2.5e-6}, {State: CEFedNotJudged, Copy: 3.5e-6, Calls: 2.5e-6}}, nil)
	want := "†: not judged: the copies beside the compute were too short for a host thread to keep the copy engine busy (a copy 1.31-3.5 µs, the feeder's calls 2.5 µs): the compute's slowdown may be understated"
	if len(n) != 1 || n[0] != want {
		t.Errorf("%q, want %q", n, want)
	}
	if n := feedNotes([]Feed{{State: CEFedNotJudged, Copy: 2e-6}}, []Feed{{State: CEFedJudged, Busy: 0.99}, {State: CEFedJudged, Busy: 0.93}}); len(n) != 2 ||
		!strings.Contains(n[0], "busy (a copy 2 µs): the") || !strings.Contains(n[1], "busy 93 % of every timed window") {
		t.Errorf("one time, two judged rows: %q", n)
	}
	if n := feedNotes(nil, nil); n != nil {
		t.Errorf("nothing judged or not: %q", n)
	}
}
