package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// copyUnlabelled writes the fixture src to dir/name without its header's
// label (a file reproduce wrote without --label).
func copyUnlabelled(t *testing.T, src, dir, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(repoRoot(t), src))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitN(string(b), "\n", 2)
	for _, l := range []string{`"label":"baseline",`, `"label":"candidate",`} {
		lines[0] = strings.Replace(lines[0], l, "", 1)
	}
	if err := os.MkdirAll(filepath.Join(dir, filepath.Dir(name)), 0o755); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(lines[0]+"\n"+lines[1]), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// Issue 30: two results.jsonl files (what reproduce always writes) are two
// columns named by the folders that tell them apart; two inputs with one
// label, or one file named twice, are refused (exit 2) by report, plot and
// model alike.
func TestInputLabels(t *testing.T) {
	dir := t.TempDir()
	a := copyUnlabelled(t, "examples/baseline.jsonl", dir, "a/results.jsonl")
	b := copyUnlabelled(t, "examples/candidate.jsonl", dir, "b/results.jsonl")
	out, stderr, code := nvshbench(t, "report", "--format", "csv", a, b)
	if code != 0 || !strings.Contains(out, ",a,b,b / a,") {
		t.Errorf("report a/results.jsonl b/results.jsonl: exit %d, want columns a, b:\n%s\n%s", code, out, stderr)
	}
	for _, args := range [][]string{
		{"report", "x=" + a, "x=" + b},
		{"plot", "--out", filepath.Join(dir, "charts"), "x=" + a, "x=" + b},
		{"model", "x=" + a, "x=" + b},
		{"model", a, a},
	} {
		_, stderr, code := nvshbench(t, args...)
		want := `two inputs are labelled "x"`
		if args[len(args)-1] == a {
			want = "is named twice"
		}
		if code != exitUsage || !strings.Contains(errorLine(stderr), want) {
			t.Errorf("%v: exit %d, stderr %q; want exit 2 and one line with %q", args, code, stderr, want)
		}
	}
}

// errorLine is stderr's one "nvshbench: " line (the notes before it aside),
// "" unless there is exactly one.
func errorLine(stderr string) string {
	var found []string
	for _, l := range strings.Split(stderr, "\n") {
		if strings.HasPrefix(l, "nvshbench: ") {
			found = append(found, l)
		}
	}
	if len(found) != 1 {
		return ""
	}
	return found[0]
}
