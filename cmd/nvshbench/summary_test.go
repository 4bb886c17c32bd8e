package main

import (
	"encoding/json"
	"strings"
	"testing"
)

// report --summary: one table, in every format; with --paper or --points
// it is a usage error.
func TestReportSummary(t *testing.T) {
	for _, args := range [][]string{{"--summary", "--paper"}, {"--summary", "--points", "--example"}, {"--summary"}} {
		if _, stderr, code := nvshbench(t, append([]string{"report"}, args...)...); code != exitUsage || strings.Count(strings.TrimSpace(stderr), "\n") > 0 {
			t.Errorf("report %v: exit %d, %q; want %d and one line", args, code, stderr, exitUsage)
		}
	}
	out, stderr, code := nvshbench(t, "report", "--summary", "--format", "json", "--example")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var js struct {
		Tables []struct {
			Title string
			Rows  []map[string]any
		}
	}
	if err := json.Unmarshal([]byte(out), &js); err != nil {
		t.Fatal(err)
	}
	if len(js.Tables) != 1 || !strings.HasPrefix(js.Tables[0].Title, "Summary") || len(js.Tables[0].Rows) < 5 {
		t.Fatalf("tables %+v", js.Tables)
	}
	if r := js.Tables[0].Rows[0]; r["figure"] == "" || r["measured"] == "" {
		t.Errorf("first row %v", r)
	}
}
