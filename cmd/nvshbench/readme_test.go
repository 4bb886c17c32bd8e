package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/nvshbench/nvshbench/internal/golden"
)

// readmeBlock is a generated part of the README: the text between
// <!-- NAME:begin --> and <!-- NAME:end -->, and the command that prints
// it: the last one quoted (`nvshbench ...`) between the previous block and
// this one.
type readmeBlock struct {
	name, cmd  string
	start, end int // the text's offsets in the README
}

var (
	readmeBlockRE = regexp.MustCompile(`(?s)<!-- (model-guide|readme-table):begin -->\n(.*?)\n?<!-- (model-guide|readme-table):end -->`)
	readmeCmdRE   = regexp.MustCompile("`(nvshbench [^`]+)`")
)

func readmeBlocks(t *testing.T, s string) []readmeBlock {
	t.Helper()
	var out []readmeBlock
	prev := 0
	for _, m := range readmeBlockRE.FindAllStringSubmatchIndex(s, -1) {
		name, endName := s[m[2]:m[3]], s[m[6]:m[7]]
		if name != endName {
			t.Fatalf("README: a %s block ends as %s", name, endName)
		}
		cmds := readmeCmdRE.FindAllStringSubmatch(s[prev:m[0]], -1)
		if len(cmds) == 0 {
			t.Fatalf("README: the %s block at offset %d names no command before it", name, m[0])
		}
		out = append(out, readmeBlock{name: name, cmd: cmds[len(cmds)-1][1], start: m[4], end: m[5]})
		prev = m[1]
	}
	return out
}

// The README's generated blocks ("Which should I use?" and the tables of
// measured figures) are the output of the commands quoted before them, run
// on the committed results files from the repository's root: regenerated
// here and compared. With -update (make golden) they are rewritten.
func TestReadmeBlocksAreTheCommandsOutput(t *testing.T) {
	root := repoRoot(t)
	path := filepath.Join(root, "README.md")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	blocks := readmeBlocks(t, s)
	kinds := map[string]int{}
	t.Chdir(root) // the commands name files from the repository's root
	var updated strings.Builder
	last := 0
	for _, bl := range blocks {
		kinds[bl.name]++
		want := map[string]string{"model-guide": "nvshbench model --guide ", "readme-table": "nvshbench report --summary "}[bl.name]
		if !strings.HasPrefix(bl.cmd, want) || !strings.Contains(bl.cmd, "--format markdown") {
			t.Errorf("README: the %s block's command %q: want %q… --format markdown", bl.name, bl.cmd, want)
			continue
		}
		out, stderr, code := nvshbench(t, strings.Fields(strings.TrimPrefix(bl.cmd, "nvshbench "))...)
		if code != 0 {
			t.Errorf("%s: exit %d: %s", bl.cmd, code, stderr)
			continue
		}
		got := strings.TrimSpace(out)
		updated.WriteString(s[last:bl.start] + got)
		if !strings.HasPrefix(s[bl.end:], "\n") {
			updated.WriteString("\n") // an empty block: its end marker on a line of its own
		}
		last = bl.end
		if s[bl.start:bl.end] != got {
			if !golden.Updating() {
				t.Errorf("README's %s block differs from the output of %s (rerun with -update to rewrite it):\n%s", bl.name, bl.cmd, out)
			}
		}
	}
	if kinds["model-guide"] != 1 || kinds["readme-table"] < 1 {
		t.Errorf("README's generated blocks: %v; want one model-guide and a readme-table or more", kinds)
	}
	if golden.Updating() && !t.Failed() {
		updated.WriteString(s[last:])
		if updated.String() != s {
			if err := os.WriteFile(path, []byte(updated.String()), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// Above "## Install" a measured figure (GB/s, µs) stands only inside a
// generated block: a number typed by hand has no command behind it.
func TestReadmeTopQuotesNoFigureByHand(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(repoRoot(t), "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	top, _, ok := strings.Cut(s, "\n## Install")
	if !ok {
		t.Fatal("README has no ## Install section")
	}
	hasTable := strings.Contains(top, "<!-- readme-table:begin -->")
	top = readmeBlockRE.ReplaceAllString(top, "")
	figure := regexp.MustCompile(`\d[\d.,]*(?:\s*[–/-]\s*\d[\d.,]*)*\s*(?:GB/s|TB/s|µs|us|ns)\b`)
	for _, f := range figure.FindAllString(top, -1) {
		t.Errorf("README quotes %q above ## Install outside a generated block", f)
	}
	if !hasTable {
		t.Error("README's top sections hold no generated table")
	}
}
