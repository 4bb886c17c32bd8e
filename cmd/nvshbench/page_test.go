package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/nvshbench/nvshbench/record"
)

// The committed full runs whole (stored metrics dropped, as every cut):
// what a user's reproduce gives the readers.
var (
	// The one-H200 reproduce: a size sweep and a launch sweep of 28 shapes,
	// round trips of three scopes, collectives both launch modes, MoE.
	oneH200Full = committed{"h200-2026-12-01c-full", "results/h200-2026-12-01c/reproduce/results.jsonl.gz", everyPoint}
	// The two-H200 reproduce behind the README's "Which should I use?": a
	// launch sweep of 36 shapes, n-GPU predictions.
	twoH200Full = committed{"h200x2-2026-11-29-session3-full", "results/h200x2-2026-11-29/session3/reproduce/results.jsonl.gz", everyPoint}
	// A bytes-per-SM run (run persm): mechanisms over SM budgets and beside
	// a compute kernel, none of the paper's rows.
	perSMRun = committed{"h200-2026-12-01g-persm", "results/h200-2026-12-01g/callA/persm-beside-1.jsonl.gz", everyPoint}
)

func everyPoint(string, record.Params) bool { return true }

// A page is what a full-height terminal shows at once, 80 lines: every
// answer takes two at most. The one-H200 guide is the longest (put and get
// over a launch sweep of 36 shapes are 74 of its rows).
const page = 80

// Issue 47 item 5: the readers answer in a page or two. On the committed
// full runs the guide (one table per question, the launch shapes as rows)
// and model's summary (the per-series fits and a sweep's shapes behind
// --detail) take two pages at most; report of a bytes-per-SM run starts
// with its own tables and names the paper's it has no data for in one
// line.
func TestReadersAnswerInAPage(t *testing.T) {
	lines := func(args ...string) string {
		t.Helper()
		out, stderr, code := nvshbench(t, args...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, stderr)
		}
		if n := strings.Count(out, "\n"); n > 2*page {
			t.Errorf("%v prints %d lines, more than two pages (%d)", args, n, 2*page)
		}
		return out
	}
	for _, run := range []committed{oneH200Full, twoH200Full} {
		run.file(t)
		path := filepath.Join("testdata", run.name+".jsonl.gz")
		lines("model", "--guide", path)
		lines("model", path)
	}
	perSMRun.file(t)
	out := lines("report", filepath.Join("testdata", perSMRun.name+".jsonl.gz"))
	if !strings.HasPrefix(out, "Bytes per SM: ") {
		t.Errorf("report of a bytes-per-SM run starts with %q", strings.SplitN(out, "\n", 2)[0])
	}
	var notIn []string
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "Not in this file") {
			notIn = append(notIn, l)
		}
	}
	if len(notIn) != 1 || !strings.Contains(notIn[0], "Fig. 4") || !strings.Contains(notIn[0], "Table I") {
		t.Errorf("report of a bytes-per-SM run: the paper's tables it has no data for: %q, want one line naming Fig. 4 … Table I", notIn)
	}
}
