package main

import (
	"encoding/csv"
	"path/filepath"
	"strings"
	"testing"
)

// --id keeps the points of the benchmarks its patterns take (run's: an ID,
// a folder, a glob; repeatable) in report and compare alike; a pattern that
// is no glob, or takes no point, is bad usage; --paper takes none.
func TestReadersKeepTheBenchmarksOfID(t *testing.T) {
	root := repoRoot(t)
	base, cand := filepath.Join(root, "examples/baseline.jsonl"), filepath.Join(root, "examples/candidate.jsonl")
	ids := func(out string) map[string]bool { // the first column's IDs, of every table
		t.Helper()
		r := csv.NewReader(strings.NewReader(out))
		r.Comment, r.FieldsPerRecord = '#', -1 // a table's title; tables of their own columns
		rows, err := r.ReadAll()
		if err != nil {
			t.Fatalf("%v:\n%s", err, out)
		}
		got := map[string]bool{}
		for _, row := range rows {
			if id := row[0]; strings.Contains(id, "/") && !strings.HasPrefix(id, "#") {
				got[id] = true
			}
		}
		return got
	}
	out, stderr, code := nvshbench(t, "compare", "--format", "csv", "--id", "latency/p", "--id", "rma/*/block", base, cand)
	if code != 0 && code != exitRegression {
		t.Fatalf("compare: exit %d: %s", code, stderr)
	}
	got := ids(out)
	if len(got) < 3 || !got["latency/p"] || !got["rma/put/block"] {
		t.Errorf("compare --id latency/p --id 'rma/*/block': rows of %v", got)
	}
	for id := range got {
		if id != "latency/p" && !(strings.HasPrefix(id, "rma/") && strings.HasSuffix(id, "/block") && strings.Count(id, "/") == 2) {
			t.Errorf("compare kept %s", id)
		}
	}
	all, _, _ := nvshbench(t, "compare", "--format", "csv", base, cand)
	if len(ids(all)) <= len(got) {
		t.Errorf("compare without --id: %d benchmarks, with: %d", len(ids(all)), len(got))
	}

	out, stderr, code = nvshbench(t, "report", "--points", "--format", "csv", "--id", "limit", "--example")
	if code != 0 {
		t.Fatalf("report: exit %d: %s", code, stderr)
	}
	kept := ids(out)
	for id := range kept {
		if !strings.HasPrefix(id, "limit/") {
			t.Errorf("report --id limit kept %s", id)
		}
	}
	if !kept["limit/ce-copy"] || !kept["limit/sm-copy"] {
		t.Errorf("report --points --id limit: %v", kept)
	}

	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"report", "--example", "--id", "rma/["}, `bad --id pattern "rma/["`},
		{[]string{"report", "--example", "--id", "rma/nope"}, "--id rma/nope takes no point"},
		{[]string{"compare", "--id", "moe", base, cand}, "--id moe takes no point"},
		{[]string{"report", "--paper", "--id", "rma"}, "leave out files, --example and --id"},
	} {
		if _, stderr, code := nvshbench(t, c.args...); code != exitUsage || !strings.Contains(errorLine(stderr), c.want) {
			t.Errorf("%v: exit %d, %q; want exit 2 and one line with %q", c.args, code, stderr, c.want)
		}
	}
}
