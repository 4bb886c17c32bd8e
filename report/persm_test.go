package report_test

import (
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/nvshbench/nvshbench/internal/fixture"
	"github.com/nvshbench/nvshbench/internal/table"
	"github.com/nvshbench/nvshbench/record"
	"github.com/nvshbench/nvshbench/report"
)

// rowOf finds the table's row whose first cells are lead, and its cell in
// column col.
func cellAt(t *testing.T, tab *table.Table, col string, lead ...string) string {
	t.Helper()
	c := slices.Index(tab.Columns, col)
	if c < 0 {
		t.Fatalf("%s: no column %q in %v", tab.Title, col, tab.Columns)
	}
rows:
	for _, r := range tab.Rows {
		for i, l := range lead {
			if r[i].Text != l {
				continue rows
			}
		}
		return r[c].Text
	}
	t.Fatalf("%s: no row %v", tab.Title, lead)
	return ""
}

// The bytes-per-SM tables: GB/s and GB/s per SM over budgets, the copy
// engine's one figure, each row's smallest budget at 90 % of its own
// peak, sizes in L2 marked; the interference table's two slowdowns.
func TestPerSMTables(t *testing.T) {
	rep := report.Build([]*record.File{fixture.PerSMExample()}, record.Paper(), report.Options{})
	bw := findTable(rep, "Bytes per SM: GB/s to the peer")
	per := findTable(rep, "Bytes per SM: GB/s per SM used")
	in := findTable(rep, "Bytes per SM: a transfer beside a compute kernel")
	if bw == nil || per == nil || in == nil {
		t.Fatal("missing a bytes-per-SM table")
	}
	for _, c := range []struct {
		tab       *table.Table
		col, want string
		lead      []string
	}{
		{bw, "4 SM", "1200.0", []string{"tma", "256 MiB"}},
		{bw, "90 % at", "8 SM", []string{"tma", "256 MiB"}},
		{bw, "90 % at", "66 SM", []string{"st", "256 MiB"}},
		{bw, "peak", "1900.0", []string{"st", "256 MiB"}},
		{bw, "peak", "2000.0", []string{"ce", "256 MiB"}},
		{bw, "90 % at", "no SM", []string{"ce", "256 MiB"}},
		{bw, "132 SM", "", []string{"ce", "256 MiB"}},
		{bw, "8 SM", "1000.0", []string{"tma", "1 MiB (L2)"}},
		{per, "4 SM", "300.00", []string{"tma", "256 MiB"}},
		{per, "66 SM", "27.27", []string{"st", "256 MiB"}},
		{in, "transfer slowdown %", "11.1", []string{"tma", "fma", "256 MiB", "8"}},
		{in, "compute slowdown %", "20.0", []string{"tma", "fma", "256 MiB", "8"}},
		{in, "compute alone µs", "10.00", []string{"tma", "fma", "256 MiB", "8"}},
		// The copy engine beside fma on every SM, against the copy engine
		// alone and fma alone on every SM (budget 0).
		{in, "beside GB/s", "1600.0", []string{"ce", "fma", "256 MiB", "0"}},
		{in, "transfer slowdown %", "25.0", []string{"ce", "fma", "256 MiB", "0"}},
		{in, "compute alone µs", "8.00", []string{"ce", "fma", "256 MiB", "0"}},
		{in, "compute slowdown %", "5.0", []string{"ce", "fma", "256 MiB", "0"}},
	} {
		if got := cellAt(t, c.tab, c.col, c.lead...); got != c.want {
			t.Errorf("%s %v %s: %q, want %q", c.tab.Title, c.lead, c.col, got, c.want)
		}
	}
	if !slices.ContainsFunc(in.Notes, func(n string) bool { return strings.HasPrefix(n, "ce: the copy engine on no SM") }) {
		t.Errorf("no note on how the copy engine's rows ran: %q", in.Notes)
	}
	// The fused launch is the SM mechanisms' only: the copy engine's rows
	// are not fused, and the note on the fused launch says so.
	for _, n := range in.Notes {
		if strings.Contains(n, "one fused launch") && !strings.HasPrefix(n, "one fused launch (SM mechanisms)") {
			t.Errorf("a note on the fused launch that does not say it is the SM mechanisms': %q", n)
		}
	}
	// The bandwidth tables' budgets stay the transfers': the compute alone
	// on every SM (budget 0) is no column.
	if slices.Contains(bw.Columns, "0 SM") {
		t.Errorf("columns %v", bw.Columns)
	}
	// A file without bytes-per-SM rows has none of these tables.
	rep = report.Build([]*record.File{fixture.Synthetic(fixture.Options{})}, record.Paper(), report.Options{})
	if findTable(rep, "Bytes per SM") != nil {
		t.Error("a bytes-per-SM table for a file without its rows")
	}
}

// A failed or unverified point is no figure of a curve; the slowdowns are
// ratios of times, NaN where a side is missing.
func TestPerSMCurvesAndSlowdowns(t *testing.T) {
	f := fixture.PerSMExample()
	for i := range f.Points {
		p := &f.Points[i]
		if p.ID == "persm/st" && p.Params.CTAs == 132 && p.Params.Size == 256<<20 {
			p.Status, p.Verify.OK = record.StatusFailedVerification, false
		}
	}
	for _, c := range report.Curves(f) {
		if c.Mechanism == "st" && c.Size == 256<<20 {
			if _, ok := c.At(132); ok {
				t.Error("a point that failed verification is in the curve")
			}
			if peak, b := c.Peak(); peak != 1800e9 || b != 66 || c.Reach(0.9) != 66 {
				t.Errorf("st: peak %g at %d, 90 %% at %d", peak, b, c.Reach(0.9))
			}
		}
	}
	// Ordered by mechanism (tma before ce); the copy engine's pairs its rows
	// beside fma with the copy engine alone and fma alone on every SM.
	ins := report.Interferences(f)
	if len(ins) != 2 || math.Abs(ins[0].TransferSlowdown()-1.0/9) > 1e-9 || math.Abs(ins[0].ComputeSlowdown()-0.2) > 1e-9 {
		t.Fatalf("%+v", ins)
	}
	if ce := ins[1]; ce.Mechanism != "ce" || ce.Compute != "fma" || ce.Budget != 0 || ce.Alone != 2000e9 || ce.Beside != 1600e9 || ce.ComputeAlone != 8e-6 ||
		math.Abs(ce.TransferSlowdown()-0.25) > 1e-9 || math.Abs(ce.ComputeSlowdown()-0.05) > 1e-9 {
		t.Errorf("the copy engine beside fma: %+v", ce)
	}
	if !math.IsNaN((report.Interference{Beside: 1}).TransferSlowdown()) || !math.IsNaN((report.Interference{ComputeAlone: 1}).ComputeSlowdown()) {
		t.Error("a slowdown without both sides")
	}
	// Each side's min-max over its samples (±1 % in the fixture) travels
	// with it: 25 % and 5 % beat that noise; overlapping ranges do not, and
	// a side not measured is no noise either.
	is := func(got, want float64) bool { return math.Abs(got/want-1) < 1e-9 }
	if ce := ins[1]; !is(ce.AloneLo, 2000e9/1.01) || !is(ce.AloneHi, 2000e9/0.99) || !is(ce.BesideLo, 1600e9/1.01) || !is(ce.ComputeAloneLo, 8e-6*0.99) ||
		!is(ce.ComputeBesideHi, 8.4e-6*1.01) || ce.TransferWithinNoise() || ce.ComputeWithinNoise() {
		t.Errorf("the copy engine beside fma's spreads: %+v", ce)
	}
	near := report.Interference{Alone: 100, Beside: 99, AloneLo: 98, AloneHi: 102, BesideLo: 97, BesideHi: 98.5,
		ComputeAlone: 1, ComputeBeside: 1.1, ComputeAloneLo: 0.99, ComputeAloneHi: 1.01, ComputeBesideLo: 1.02, ComputeBesideHi: 1.2}
	if !near.TransferWithinNoise() || near.ComputeWithinNoise() {
		t.Errorf("overlapping B/s, apart times: %+v", near)
	}
	if (report.Interference{Beside: 1, BesideLo: 1, BesideHi: 1}).TransferWithinNoise() {
		t.Error("a transfer not measured alone is within noise")
	}
}
