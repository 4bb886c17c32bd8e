package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nvshbench/nvshbench/compare"
	"github.com/nvshbench/nvshbench/internal/fixture"
	"github.com/nvshbench/nvshbench/record"
)

// The gate on the fixtures of compare/testdata (written by compare's tests).
func TestCompareGate(t *testing.T) {
	td := filepath.Join(repoRoot(t), "compare", "testdata")
	f := func(name string) string { return filepath.Join(td, name) }

	// Ties: every candidate sample at the base's slowest is one tick of a
	// 32 ns timer: ~, and a 1 % gate passes; a 4-tick shift fails it.
	out, stderr, code := nvshbench(t, "compare", "--threshold", "1%", f("ties-base.jsonl"), f("ties-slowest.jsonl"))
	if code != 0 || strings.Contains(out, "% REGRESSION") || !strings.Contains(out, "a step of 32 ns") {
		t.Errorf("ties, one tick slower, 1%% gate: exit %d\n%s%s", code, out, stderr)
	}
	if out, _, code := nvshbench(t, "compare", "--threshold", "1%", f("ties-base.jsonl"), f("ties-shifted.jsonl")); code != exitRegression || strings.Count(out, "% REGRESSION") != 2 {
		t.Errorf("ties, 4 ticks slower, 1%% gate: exit %d\n%s", code, out)
	}

	// Schema 1 against schema 2 of the same numbers: nothing MISSING.
	out, stderr, code = nvshbench(t, "compare", "--threshold", "1%", f("schema1.jsonl"), f("schema2.jsonl"))
	if code != 0 || strings.Contains(out, "MISSING") || !strings.Contains(out, "schema changed") || !strings.Contains(stderr, "results schema 1") {
		t.Errorf("schema 1 → 2, same numbers: exit %d\n%s%s", code, out, stderr)
	}

	// --threshold in time terms: 2× slower fails a 60 % gate, as a latency
	// and as a bandwidth; 1.5× slower passes it.
	dir := t.TempDir()
	write := func(name string, o fixture.Options) string {
		p := filepath.Join(dir, name)
		os.Remove(p)
		file := fixture.Synthetic(o)
		var keep []record.Point
		for _, pt := range file.Points { // RMA bandwidth and latency rows, ok ones: the gate is about them
			if pt.Status == record.StatusOK && !strings.HasPrefix(pt.ID, "collectives/") {
				keep = append(keep, pt)
			}
		}
		w, err := record.Create(p, file.Header)
		if err != nil {
			t.Fatal(err)
		}
		defer w.Close()
		for _, pt := range keep {
			if err := w.WritePoint(pt); err != nil {
				t.Fatal(err)
			}
		}
		return p
	}
	base := write("base.jsonl", fixture.Options{Seed: 1, Label: "base"})
	for _, c := range []struct {
		slower float64
		code   int
	}{{2, exitRegression}, {1.5, 0}} {
		cand := write("cand.jsonl", fixture.Options{Seed: 2, Scale: 1 / c.slower, Label: "cand"})
		out, _, code := nvshbench(t, "compare", "--format", "csv", "--threshold", "60%", base, cand)
		if code != c.code {
			t.Errorf("%.1f× slower, 60%% gate: exit %d, want %d\n%s", c.slower, code, c.code, out)
		}
		if c.code != 0 && (!strings.Contains(out, "latency/p") || strings.Count(out, "REGRESSION") != strings.Count(out, "\n")-2) {
			t.Errorf("%.1f× slower: not every row (latency and bandwidth) is a regression:\n%s", c.slower, out)
		}
	}

	// A label's control characters reach the terminal escaped, in the
	// column header too.
	out, _, _ = nvshbench(t, "compare", "--allow-failed", "old\x1b[2J="+base, "new\x1b]0;x\x07="+base)
	if strings.ContainsAny(out, "\x1b\x07") || !strings.Contains(out, `old\x1b[2J`) || !strings.Contains(out, `new\x1b]0;x\a`) {
		t.Errorf("labels with control characters:\n%q", out)
	}
}

// The benchmarks compare's schema rules name are registered (a rename
// would make them miss).
func TestCompareSchemaIDsRegistered(t *testing.T) {
	all := registered()
	for _, id := range append(append([]string{}, compare.StoreIDs...), compare.RenamedIDs...) {
		if !takesAny(literalSelector(id), all) {
			t.Errorf("compare names %q, which no registered benchmark matches", id)
		}
	}
}
