package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/nvshbench/nvshbench/internal/decide"
)

func TestParseMargin(t *testing.T) {
	for in, want := range map[string]float64{"3%": decide.DefaultMargin, "0.03": 0.03, " 2.5 % ": 0.025, "0%": 0, "150%": 1.5} {
		r, err := parseMargin(in)
		if err != nil || r.Margin != want || r.Alpha != decide.Default().Alpha {
			t.Errorf("parseMargin(%q) = %+v, %v; want margin %v", in, r, err, want)
		}
	}
	if r, _ := parseMargin(defaultMargin); r != decide.Default() {
		t.Errorf("the flag's default %q is not decide.Default(): %+v", defaultMargin, r)
	}
}

// --margin is validated like compare's --threshold, on every command
// that names a winner, and reaches the verdicts.
func TestMarginFlag(t *testing.T) {
	for _, args := range [][]string{
		{"model", "--margin", "5", "--example"},
		{"model", "--margin", "abc", "--example"},
		{"report", "--margin", "NaN%", "--example"},
		{"report", "--margin", "-1%", "--example"},
		{"report", "--margin", "Inf%", "--example"},
	} {
		_, stderr, code := nvshbench(t, args...)
		if code != exitUsage || !strings.HasPrefix(stderr, "nvshbench: invalid --margin") || strings.Count(strings.TrimSpace(stderr), "\n") != 0 {
			t.Errorf("%v: exit %d, stderr %q", args, code, stderr)
		}
	}
	if _, stderr, code := nvshbench(t, "model", "--margin", "5", "--example"); !strings.Contains(stderr, "did you mean 5%?") || code != exitUsage {
		t.Errorf("a bare 5: %q", stderr)
	}
	// The one-H200 reproduce of 2026-12-01 (testdata's copy at four
	// sizes): NCCL's device API gets a round trip 4 % faster than
	// NVSHMEM's: a winner at 3 %, a tie at 10 %.
	file := filepath.Join(repoRoot(t), "testdata", "h200-2026-12-01.jsonl.gz")
	row := func(margin string) string {
		out, stderr, code := nvshbench(t, "report", "--margin", margin, "--format", "csv", file)
		if code != 0 {
			t.Fatalf("report --margin %s: exit %d: %s", margin, code, stderr)
		}
		for _, l := range strings.Split(out, "\n") {
			if strings.HasPrefix(l, "get round trip at 256 B,") {
				return l
			}
		}
		t.Fatalf("no get round trip row:\n%s", out)
		return ""
	}
	if r := row("3%"); !strings.Contains(r, ",NCCL dev API,") {
		t.Errorf("3 %%: %s", r)
	}
	if r := row("10%"); !strings.Contains(r, ",tie (within 10 %),") {
		t.Errorf("10 %%: %s", r)
	}
}
