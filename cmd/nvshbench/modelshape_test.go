package main

import (
	"regexp"
	"testing"
)

// --ctas/--threads keep one launch shape's bandwidth series: on the
// committed two-H200 reproduce (a size sweep at 32 × 256 and a launch sweep
// of 36 shapes at 256 MiB) the guide compares 32x256 alone; a negative
// shape is a usage error.
func TestModelOneLaunchShape(t *testing.T) {
	file := twoH200.path(t)
	shapes := func(args ...string) map[string]bool {
		t.Helper()
		out, stderr, code := nvshbench(t, append([]string{"model", "--guide", "--format", "markdown"}, args...)...)
		if code != 0 {
			t.Fatalf("model %v: exit %d: %s", args, code, stderr)
		}
		got := map[string]bool{}
		for _, m := range regexp.MustCompile(`bandwidth (\d+x\d+) `).FindAllStringSubmatch(out, -1) {
			got[m[1]] = true
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
