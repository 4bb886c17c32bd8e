package report

import (
	"slices"
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
