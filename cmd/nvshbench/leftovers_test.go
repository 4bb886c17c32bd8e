package main

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/nvshbench/nvshbench/harness"
	"github.com/nvshbench/nvshbench/internal/table"
	"github.com/nvshbench/nvshbench/record"
)

// reproduce --shim fake says SYNTHETIC on the terminal at the start and at
// the end; a point that fails verification is recorded, the other sweeps
// run, report.md is written, and the command exits 1.
func TestReproduceFakeSaysSyntheticAndReportsFailures(t *testing.T) {
	t.Setenv("NVSHBENCH_FAKE_CORRUPT_SIZE", "1024")
	out := filepath.Join(t.TempDir(), "repro")
	stdout, stderr, code := nvshbench(t, "reproduce", "--quick", "--shim", "fake", "--out", out)
	if code != exitError || !strings.Contains(stderr, "failed verification): see their reasons in") {
		t.Fatalf("exit %d, want 1 naming the failed points: %s", code, lastLines(stderr, 3))
	}
	lines := strings.Split(strings.TrimSpace(stderr), "\n")
	if !strings.Contains(lines[0], "SYNTHETIC") || strings.Count(stderr, "SYNTHETIC") != 2 || !strings.Contains(strings.Join(lines[len(lines)-3:], "\n"), "SYNTHETIC") {
		t.Errorf("SYNTHETIC is not said at the start and at the end:\n%s", stderr)
	}
	if !strings.Contains(stdout, "index.md") {
		t.Errorf("stdout: %q", stdout)
	}
	f := mustRead(t, filepath.Join(out, "results.jsonl"))
	var failed int
	suites := map[string]bool{}
	for _, p := range f.Points {
		if p.Status == record.StatusFailedVerification {
			failed++
		}
		suites[strings.SplitN(p.ID, "/", 2)[0]] = true
	}
	if failed == 0 || !suites["latency"] || !suites["collectives"] || !suites["moe"] {
		t.Errorf("%d failed points; sweeps run: %v", failed, suites)
	}
	for _, name := range []string{"report.md", "index.md", "bandwidth-put.png"} {
		if _, err := os.Stat(filepath.Join(out, name)); err != nil {
			t.Errorf("not written after a failed point: %v", err)
		}
	}
}

// A value listed twice in any list flag asks for what the single value
// asks for: the same points, measured once (compare then takes the file),
// and never "none of the selected benchmarks takes it".
func TestListFlagsDeduplicate(t *testing.T) {
	for _, c := range []struct {
		bench, flag, once, twice string
	}{
		{"moe/dispatch/nvshmem", "--moe-tokens", "128", "128,128"},
		{"moe/dispatch/nvshmem", "--moe-dtype", "bf16", "bf16,bf16"},
		{"moe/dispatch/nvshmem", "--moe-modes", "ll", "ll,ll"},
		{"moe/dispatch/nvshmem", "--moe-routing", "uniform", "uniform,uniform"},
		{"collectives/allreduce/nccl", "--dtypes", "float", "float,float"},
		{"collectives/allreduce/nccl", "--dtypes", "bf16", "bf16,bf16"},
		{"collectives/allreduce/nccl", "--nccl-protos", "LL", "LL,LL"},
		{"rma/put/block", "--sizes", "4K", "4K,4K"},
	} {
		dir := t.TempDir()
		keys := map[string]string{}
		for _, v := range []string{c.once, c.twice} {
			out := filepath.Join(dir, strings.ReplaceAll(v, ",", "_")+".jsonl")
			args := []string{"run", "--shim", "fake", "--samples", "3", "--out", out, c.flag, v}
			if c.flag != "--sizes" && !strings.HasPrefix(c.bench, "moe") {
				args = append(args, "--sizes", "4K")
			}
			if strings.HasPrefix(c.bench, "moe") {
				for _, f := range []string{"--moe-tokens", "--moe-modes", "--moe-routing"} { // one point each, but for the flag tested
					if f != c.flag {
						args = append(args, f, map[string]string{"--moe-tokens": "128", "--moe-modes": "ll", "--moe-routing": "uniform"}[f])
					}
				}
			}
			_, stderr, code := nvshbench(t, append(args, c.bench)...)
			if code != 0 {
				t.Fatalf("%s %s: exit %d: %s", c.flag, v, code, lastLines(stderr, 2))
			}
			keys[v] = strings.Join(pointKeys(t, out), "\n")
			if v == c.twice {
				if f := mustRead(t, out); len(f.Duplicates) > 0 {
					t.Errorf("%s %s: points measured twice: %v", c.flag, v, f.Duplicates)
				}
				if _, stderr, code := nvshbench(t, "compare", out, out); code != 0 {
					t.Errorf("%s %s: compare refuses the file: exit %d: %s", c.flag, v, code, lastLines(stderr, 1))
				}
			}
		}
		if keys[c.once] != keys[c.twice] {
			t.Errorf("%s %s and %s measured different points:\n%s\n---\n%s", c.flag, c.once, c.twice, keys[c.once], keys[c.twice])
		}
	}
	// The flag still means something: a value no selected benchmark takes
	// is refused, doubled or not.
	for _, v := range []string{"bf16", "bf16,bf16"} {
		if _, stderr, code := nvshbench(t, "run", "--shim", "fake", "--dtypes", v, "--out", filepath.Join(t.TempDir(), "x.jsonl"), "rma/put/block"); code != exitUsage || !strings.Contains(stderr, "none of the selected benchmarks takes it") {
			t.Errorf("--dtypes %s on rma/put/block: exit %d: %s", v, code, stderr)
		}
	}
}

// Where --out or the environment cannot work: exit 2, one line saying what
// to do, and nothing written or lost.
func TestOutAndTempDirRefusals(t *testing.T) {
	dir := t.TempDir()
	// A file cut inside its header: named, with its line and what to do.
	good := filepath.Join(dir, "good.jsonl")
	if _, stderr, code := nvshbench(t, "run", "--shim", "fake", "--sizes", "4K", "--samples", "3", "--out", good, "rma/put/block"); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	b, _ := os.ReadFile(good)
	cut := filepath.Join(dir, "cut.jsonl")
	os.WriteFile(cut, b[:bytes.IndexByte(b, '\n')/2], 0o644)
	before, _ := os.ReadFile(cut)
	_, stderr, code := nvshbench(t, "run", "--shim", "fake", "--sizes", "4K", "--samples", "3", "--out", cut, "rma/put/block")
	last := lastLines(stderr, 1)
	if code != exitUsage || !strings.Contains(last, cut+":1: the header record is cut short") || !strings.Contains(last, "move it away or pass a new --out") {
		t.Errorf("resuming a file cut in its header: exit %d: %s", code, last)
	}
	if after, _ := os.ReadFile(cut); !bytes.Equal(before, after) {
		t.Errorf("the cut file was changed")
	}
	if _, stderr, code := nvshbench(t, "report", cut); code == 0 || !strings.Contains(stderr, cut+":1: the header record is cut short") {
		t.Errorf("report of a file cut in its header: exit %d: %s", code, stderr)
	}

	notes := filepath.Join(dir, "notes.txt")
	os.WriteFile(notes, []byte("mine\n"), 0o644)
	for _, c := range []struct {
		out, want string
		env       []string
		gone      string // must not exist afterwards
	}{
		{filepath.Join(dir, "newdir") + "/", "names a folder: a run writes one results file; pass a file name such as " + filepath.Join(dir, "newdir", "results.jsonl"), nil, filepath.Join(dir, "newdir")},
		{filepath.Join(notes, "sub", "x.jsonl"), notes + " is a file, not a folder", nil, ""},
		{filepath.Join(dir, "t.jsonl"), "TMPDIR=" + filepath.Join(dir, "missing") + " is no folder", []string{"TMPDIR", filepath.Join(dir, "missing")}, filepath.Join(dir, "t.jsonl")},
	} {
		if c.env != nil {
			t.Setenv(c.env[0], c.env[1])
		}
		_, stderr, code := nvshbench(t, "run", "--shim", "fake", "--sizes", "4K", "--out", c.out, "rma/put/block")
		if code != exitUsage || !strings.Contains(stderr, c.want) || strings.Count(strings.TrimSpace(stderr), "\n") != 0 {
			t.Errorf("--out %s: exit %d, want 2 and one line with %q: %s", c.out, code, c.want, stderr)
		}
		if c.gone != "" {
			if _, err := os.Lstat(c.gone); err == nil {
				t.Errorf("--out %s: %s was made", c.out, c.gone)
			}
		}
		if c.env != nil {
			repro := filepath.Join(dir, "repro")
			_, stderr, code := nvshbench(t, "reproduce", "--quick", "--shim", "fake", "--out", repro)
			if code != exitUsage || !strings.Contains(stderr, c.want) {
				t.Errorf("reproduce with a missing TMPDIR: exit %d: %s", code, stderr)
			}
			if _, err := os.Lstat(repro); err == nil {
				t.Errorf("reproduce with a missing TMPDIR made %s", repro)
			}
			os.Unsetenv(c.env[0])
		}
	}
	if b, _ := os.ReadFile(notes); string(b) != "mine\n" {
		t.Errorf("notes.txt: %q", b)
	}
}

// The root help's opening lines name every command a user runs.
func TestRootHelpNamesEveryCommand(t *testing.T) {
	stdout, _, code := nvshbench(t, "--help")
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	opening, _, _ := strings.Cut(stdout, "Usage:")
	for _, c := range newRootCmd(nil, nil, nil).Commands() {
		name := c.Name()
		if c.Hidden || name == "help" || name == "completion" || name == "version" {
			continue
		}
		if !regexp.MustCompile(`(?m)^  .*\b` + regexp.QuoteMeta(name) + `\b`).MatchString(opening) {
			t.Errorf("the root help's opening does not name %q:\n%s", name, opening)
		}
	}
}

// list's default text fits 120 columns and shows every description whole,
// folded onto more lines (the bytes-per-SM rows' wide launch column once cut
// every description to "bytes…").
func TestListShowsWholeDescriptions(t *testing.T) {
	out, _, code := nvshbench(t, "list")
	if code != 0 {
		t.Fatalf("list: exit %d", code)
	}
	if strings.Contains(out, "…") {
		t.Errorf("list cuts a text:\n%s", out)
	}
	for _, l := range strings.Split(out, "\n") {
		if n := len([]rune(l)); n > table.Width {
			t.Errorf("a line of %d columns, over %d: %q", n, table.Width, l)
		}
	}
	// The cells' words (a word longer than its column is broken across
	// lines: its first piece must be there).
	seen := map[string]bool{}
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "+") {
			continue
		}
		for _, cell := range strings.Split(l, "|") {
			for _, w := range strings.Fields(cell) {
				seen[w] = true
			}
		}
	}
	has := func(w string) bool {
		if seen[w] {
			return true
		}
		for s := range seen {
			if len(s) >= 10 && strings.HasPrefix(w, s) {
				return true
			}
		}
		return false
	}
	for _, b := range harness.All() {
		for _, w := range strings.Fields(b.Desc) {
			if !has(w) {
				t.Errorf("%s: its description's %q is not in list's output", b.ID, w)
				break
			}
		}
	}
}

// An error naming a file the user gave escapes its control characters:
// nothing raw reaches the terminal.
func TestErrorsEscapeControlCharacters(t *testing.T) {
	name := filepath.Join(t.TempDir(), "a\x1b[31mred.jsonl")
	_, stderr, code := nvshbench(t, "report", name)
	if code == 0 || strings.ContainsRune(stderr, '\x1b') || !strings.Contains(stderr, `a\x1b[31mred.jsonl`) {
		t.Errorf("exit %d, stderr %q: want the name with its escape character written as \\x1b", code, stderr)
	}
}
