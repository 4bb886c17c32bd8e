package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
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

// Issue 30: --predict beyond one NVLink domain is refused (exit 2) with
// what an inter-node prediction needs; the NIC's flags refuse values no
// NIC has (issue 33: --nic-gbps 1e-300 printed a 330-digit number).
func TestModelRefusesWhatNoModelHolds(t *testing.T) {
	for args, want := range map[string]string{
		"--predict 16":        "--predict 16: beyond one NVLink domain (HGX H200: 8 GPUs on NVSwitch)",
		"--predict 4,1000":    "--predict 1000: beyond one NVLink domain",
		"--predict 1":         "--predict 1: want GPU counts of 2 or more",
		"--nic-gbps 1e-300":   "--nic-gbps 1e-300: want a NIC's line rate, 1 to 3200 Gb/s",
		"--nic-gbps 1e6":      "--nic-gbps 1e+06: want a NIC's line rate",
		"--nic-gbps NaN":      "--nic-gbps NaN",
		"--nic-gbps Inf":      "--nic-gbps +Inf",
		"--nic-gbps -400":     "--nic-gbps -400",
		"--wire-efficiency 0": "--wire-efficiency 0",
		"--ring-efficiency 2": "--ring-efficiency 2",
		"--fabric-rtt 0s":     "--fabric-rtt 0µs",
		"--fabric-rtt 2s":     "--fabric-rtt 2e+06µs",
		"--nics-per-node 0":   "--nics-per-node 0",
		"--gpus-per-node 500": "--gpus-per-node 500",
		"--nodes 1":           "--nodes 1",
	} {
		_, stderr, code := nvshbench(t, append(append([]string{"model"}, strings.Fields(args)...), "--example")...)
		if code != exitUsage || !strings.Contains(errorLine(stderr), want) {
			t.Errorf("model %s: exit %d, stderr %q; want exit 2 and one line with %q", args, code, stderr, want)
		}
	}
	_, stderr, _ := nvshbench(t, "model", "--predict", "16", "--example")
	if !strings.Contains(stderr, "--nic-gbps") || !strings.Contains(stderr, "inter-node rows") {
		t.Errorf("--predict 16 does not say what an inter-node prediction needs: %q", stderr)
	}
}

// Issue 30 item 8: every model table fits 120 columns, series names are
// whole (never cut with "…"), and --format json writes numbers as numbers.
func TestModelOutputFitsAndJSONHasNumbers(t *testing.T) {
	root := repoRoot(t)
	for _, args := range [][]string{
		{"model", "--example"},
		{"model", "--detail", "--example"},
		{"model", oneH200.path(t)},
		{"model", "--detail", oneH200.path(t)},
		{"model", "--predict", "2,4,8", filepath.Join(root, "testdata/h200x2-2026-11-29.jsonl.gz")},
	} {
		out, stderr, code := nvshbench(t, args...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, stderr)
		}
		for i, l := range strings.Split(out, "\n") {
			if n := len([]rune(l)); n > 120 {
				t.Errorf("%v: line %d has %d columns: %s", args, i+1, n, l)
			}
			if strings.HasPrefix(l, "| ") && strings.Contains(l, "…") {
				t.Errorf("%v: a cut name on line %d: %s", args, i+1, l)
			}
		}
		js, stderr, code := nvshbench(t, append(args, "--format", "json")...)
		if code != 0 {
			t.Fatalf("%v json: exit %d: %s", args, code, stderr)
		}
		var doc struct {
			Tables []struct {
				Title string           `json:"title"`
				Rows  []map[string]any `json:"rows"`
			} `json:"tables"`
		}
		if err := json.Unmarshal([]byte(js), &doc); err != nil {
			t.Fatalf("%v: %v", args, err)
		}
		numbers := 0
		for _, tab := range doc.Tables {
			for _, row := range tab.Rows {
				for col, v := range row {
					switch x := v.(type) {
					case float64:
						numbers++
					case string:
						if _, err := strconv.ParseFloat(strings.TrimSpace(x), 64); err == nil {
							t.Errorf("%v: %q, column %q: the number %q is a string", args, tab.Title, col, x)
						}
					}
				}
			}
		}
		if numbers == 0 {
			t.Errorf("%v: no number in the JSON", args)
		}
	}
}

// Issue 30: an H200 file and an H100 file given together are fitted apart
// and the difference is said, as compare says it.
func TestModelWarnsOnSetupDifferences(t *testing.T) {
	dir := t.TempDir()
	a := copyUnlabelled(t, "examples/baseline.jsonl", dir, "h200/results.jsonl")
	b := copyUnlabelled(t, "examples/baseline.jsonl", dir, "h100/results.jsonl")
	body, _ := os.ReadFile(b)
	os.WriteFile(b, []byte(strings.ReplaceAll(string(body), `"name":"NVIDIA H200"`, `"name":"NVIDIA H100 80GB HBM3"`)), 0o644)
	out, stderr, code := nvshbench(t, "model", a, b)
	if code != 0 || !strings.Contains(stderr, `setups differ: GPU is "2× NVIDIA H200" in h200 but "2× NVIDIA H100 80GB HBM3" in h100`) ||
		!strings.Contains(stderr, "each file is fitted on its own") {
		t.Errorf("exit %d, stderr:\n%s", code, stderr)
	}
	if !strings.Contains(out, "| h200 | 2 × NVIDIA H200 ") || !strings.Contains(out, "| h100 | 2 × NVIDIA H100 80GB HBM3 |") {
		t.Errorf("the fits' summary names no file apart:\n%s", out)
	}
	out, _, _ = nvshbench(t, "model", "--detail", a, b)
	if !strings.Contains(out, "α–β fits of h200 (2 × NVIDIA H200") || !strings.Contains(out, "α–β fits of h100 (2 × NVIDIA H100 80GB HBM3") {
		t.Errorf("--detail: no fit table per file:\n%s", out)
	}
}
