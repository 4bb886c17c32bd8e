package main

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"
)

// --ctas/--threads keep one launch shape's bandwidth series: on the
// committed two-H200 reproduce (a size sweep at 32 × 256 and a launch sweep
// of 36 shapes at 256 MiB) the guide compares 32x256 alone; a negative
// shape is a usage error.
func TestModelOneLaunchShape(t *testing.T) {
	file := twoH200.path(t)
	// The launch shapes the guide's bandwidth tables compare: a row's
	// launch, or the title's where every row has the same.
	shapes := func(args ...string) map[string]bool {
		t.Helper()
		out, stderr, code := nvshbench(t, append([]string{"model", "--guide", "--format", "json"}, args...)...)
		if code != 0 {
			t.Fatalf("model %v: exit %d: %s", args, code, stderr)
		}
		var doc struct {
			Tables []struct {
				Title string           `json:"title"`
				Rows  []map[string]any `json:"rows"`
			} `json:"tables"`
		}
		if err := json.Unmarshal([]byte(out), &doc); err != nil {
			t.Fatal(err)
		}
		got := map[string]bool{}
		for _, tb := range doc.Tables {
			if !strings.Contains(tb.Title, " bandwidth ") {
				continue
			}
			if m := regexp.MustCompile(`bandwidth scope=block (\d+x\d+) `).FindStringSubmatch(tb.Title); m != nil {
				got[m[1]] = true
			}
			for _, r := range tb.Rows {
				if l, ok := r["launch"].(string); ok {
					got[strings.TrimSuffix(l, " (paper)")] = true
				}
			}
		}
		return got
	}
	if all := shapes(file); len(all) < 10 || !all["32x256"] {
		t.Fatalf("the file's guide without a shape compares %d shapes: %v", len(all), all)
	}
	if one := shapes("--ctas", "32", "--threads", "256", file); len(one) != 1 || !one["32x256"] {
		t.Errorf("--ctas 32 --threads 256: shapes %v", one)
	}
	if wide := shapes("--threads", "1024", file); len(wide) < 2 || wide["32x256"] {
		t.Errorf("--threads 1024: shapes %v", wide)
	}
	for _, args := range [][]string{{"--ctas", "-1"}, {"--threads", "-256"}, {"--ctas", "x"}} {
		if _, _, code := nvshbench(t, append([]string{"model", "--example"}, args...)...); code != exitUsage {
			t.Errorf("model %v: exit %d, want %d", args, code, exitUsage)
		}
	}
}
