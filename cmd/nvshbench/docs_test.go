package main

import (
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/nvshbench/nvshbench/internal/decide"
	"github.com/nvshbench/nvshbench/internal/golden"
	"github.com/nvshbench/nvshbench/record"
	"github.com/nvshbench/nvshbench/record/persm"
)

// Every number in the repository's Markdown (README.md, docs/, results/)
// is printed by a command from a committed file, inside a generated block:
//
//	<!-- generated: nvshbench report --summary --format markdown results/X/reproduce/results.jsonl.gz -->
//	(the command's output)
//	<!-- end -->
//
// The command runs from the repository's root; its output stands in the
// block as it is where it asks for --format markdown, else inside a code
// fence. docs/contributing.md ("Numbers in the docs") is the convention.

// checkWholeREADME: README.md's prose is checked for figures typed by hand
// from top to bottom once it is rewritten (issue 47); until then above
// "## Install" only, as before. docs/ and results/ are checked whole.
const checkWholeREADME = true

// docBlock is one generated block of a Markdown file.
type docBlock struct {
	cmd        string
	line       int // the opening marker's line
	start, end int // the output's offsets (after the opening marker's line, before the closing marker)
}

var (
	blockOpenRE  = regexp.MustCompile(`(?m)^<!-- generated: (.*?) -->[ \t]*$`)
	blockCloseRE = regexp.MustCompile(`(?m)^<!-- end -->[ \t]*$`)
	fenceRE      = regexp.MustCompile("(?ms)^ {0,3}(`{3,}|~{3,}).*?^ {0,3}(`{3,}|~{3,})[ \t]*$")
)

// outsideFences are the matches of re in s that start outside fenced code
// (a marker shown as an example is none).
func outsideFences(re *regexp.Regexp, s string) [][]int {
	fences := fenceRE.FindAllStringIndex(s, -1)
	var out [][]int
	for _, m := range re.FindAllStringSubmatchIndex(s, -1) {
		if !slices.ContainsFunc(fences, func(f []int) bool { return f[0] <= m[0] && m[0] < f[1] }) {
			out = append(out, m)
		}
	}
	return out
}

// docBlocks finds the generated blocks of a file: each opened by a marker
// naming its command and closed by the next end marker, none inside another.
func docBlocks(s string) ([]docBlock, error) {
	var out []docBlock
	closes := outsideFences(blockCloseRE, s)
	opens := outsideFences(blockOpenRE, s)
	for i, o := range opens {
		line := 1 + strings.Count(s[:o[0]], "\n")
		cmd := strings.TrimSpace(s[o[2]:o[3]])
		if !strings.HasPrefix(cmd, "nvshbench ") {
			return nil, fmt.Errorf("line %d: a generated block's command is an nvshbench command, not %q", line, cmd)
		}
		start := min(o[1]+1, len(s)) // past the marker's newline
		j := slices.IndexFunc(closes, func(c []int) bool { return c[0] >= start })
		if j < 0 || (i+1 < len(opens) && opens[i+1][0] < closes[j][0]) {
			return nil, fmt.Errorf("line %d: the block of %q has no <!-- end --> before the next block", line, cmd)
		}
		out = append(out, docBlock{cmd: cmd, line: line, start: start, end: closes[j][0]})
	}
	if len(closes) > len(out) {
		return nil, fmt.Errorf("%d <!-- end --> marker(s) close no block", len(closes)-len(out))
	}
	return out, nil
}

// markdownFiles are the repository's Markdown files, as paths from root
// (build output, test data, hidden folders and the folders reproduce or
// plot wrote, whose report.md and index.md are generated, aside).
func markdownFiles(t *testing.T, root string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if n := d.Name(); p != root && (n == "build" || n == "testdata" || strings.HasPrefix(n, ".")) {
				return filepath.SkipDir
			}
			if _, err := os.Stat(filepath.Join(p, manifestName)); err == nil {
				return filepath.SkipDir
			}
			return nil
		}
		if strings.HasSuffix(p, ".md") {
			rel, _ := filepath.Rel(root, p)
			out = append(out, filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// blockText is what a block holds for its command's output: the output
// as it is where the command asks for Markdown, else in a code fence.
func blockText(args []string, out string) string {
	out = strings.TrimSpace(out)
	if out == "" {
		return ""
	}
	markdown := false
	for i, a := range args {
		markdown = markdown || a == "--format=markdown" || a == "-f=markdown" ||
			((a == "--format" || a == "-f") && i+1 < len(args) && args[i+1] == "markdown")
	}
	if !markdown {
		out = "```\n" + out + "\n```"
	}
	return out + "\n"
}

// The generated blocks of every Markdown file are the output of their
// commands, run on the committed files from the repository's root: run
// here and compared; with -update (make golden) they are rewritten. A
// command must run to its end: exit 0, or compare's regression status (its
// verdict, part of the answer).
func TestDocsBlocksAreTheCommandsOutput(t *testing.T) {
	root := repoRoot(t)
	files := markdownFiles(t, root)
	t.Chdir(root) // the commands name files from the repository's root
	summaries := 0
	for _, name := range files {
		b, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		s := string(b)
		blocks, err := docBlocks(s)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		var updated strings.Builder
		last := 0
		for _, bl := range blocks {
			if name == "README.md" && strings.HasPrefix(bl.cmd, "nvshbench report --summary ") {
				summaries++
			}
			args := strings.Fields(strings.TrimPrefix(bl.cmd, "nvshbench "))
			for i, a := range args {
				args[i] = strings.Trim(a, "'") // a glob quoted for the shell
			}
			out, stderr, code := nvshbench(t, args...)
			if code != 0 && code != exitRegression {
				t.Errorf("%s:%d: %s: exit %d: %s", name, bl.line, bl.cmd, code, stderr)
				continue
			}
			got := blockText(args, out)
			updated.WriteString(s[last:bl.start] + got)
			last = bl.end
			if s[bl.start:bl.end] != got && !golden.Updating() {
				t.Errorf("%s:%d: the block differs from the output of %s (rerun with -update to rewrite it):\n%s", name, bl.line, bl.cmd, got)
			}
		}
		updated.WriteString(s[last:])
		if golden.Updating() && updated.String() != s {
			if err := os.WriteFile(name, []byte(updated.String()), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	if summaries == 0 {
		t.Error("README.md has no generated block of nvshbench report --summary (what the tool measured)")
	}
}

// figureRE is a number with a measurement unit: a rate, a time, a share, a
// fold, a power or a clock (ranges and lists of numbers before one unit
// included). A size (1 GiB, 256 B), a count or a version has no such unit.
var figureRE = regexp.MustCompile(`[+±~≈−-]?\d[\d,]*(?:\.\d+)?(?:\s?(?:[–/-]|to)\s?[+−-]?\d[\d,]*(?:\.\d+)?)*\s?(GB/s|TB/s|MB/s|Gop/s|Mop/s|M msg/s|µs|us|ns|ms|%|W|MHz|GHz|[x×])`)

// ruleFigures are the figures prose may state by hand: the constants of the
// tool's own rules, which its tables print in their notes, as "N%" (derived
// from the constants, so prose that names one changes with it).
func ruleFigures() map[string]bool {
	out := map[string]bool{}
	for _, share := range []float64{
		decide.DefaultMargin,       // a winner's margin
		1 - decide.Default().Alpha, // the confidence of the rule's intervals
		persm.Near,                 // bytes per SM: the budget that reaches this share of a peak
		record.TimerTolerance,      // the two timers' agreement
		record.NoiseCV,             // the noisy mark
		record.StragglerShare,      // a straggler PE
		record.ShapeMargin,         // the shape check
		record.MemoryCeilingShare,  // the memory ceiling's mark
	} {
		out[strconv.FormatFloat(math.Round(1e4*share)/100, 'f', -1, 64)+"%"] = true
	}
	return out
}

// handFigures are the measured figures of s typed outside its generated
// blocks, code (fenced or `inline`), HTML comments and link targets, as
// "line: text".
func handFigures(s string, rules map[string]bool) ([]string, error) {
	blocks, err := docBlocks(s)
	if err != nil {
		return nil, err
	}
	b := []byte(s)
	blank := func(from, to int) {
		for i := from; i < to; i++ {
			if b[i] != '\n' {
				b[i] = ' '
			}
		}
	}
	for _, bl := range blocks {
		blank(bl.start, bl.end)
	}
	for _, re := range []*regexp.Regexp{
		fenceRE,                              // fenced code
		regexp.MustCompile(`(?s)<!--.*?-->`), // comments and markers
		regexp.MustCompile("`+(?:[^`\n]|\n[^`\n])+`+"), // code spans, within a paragraph
		regexp.MustCompile(`\]\([^)]*\)`),              // link targets
	} {
		for _, m := range re.FindAllIndex(b, -1) {
			blank(m[0], m[1])
		}
	}
	var out []string
	for i, line := range strings.Split(string(b), "\n") {
		for _, m := range figureRE.FindAllStringSubmatchIndex(line, -1) {
			text, unit := line[m[0]:m[1]], line[m[2]:m[3]]
			before, _ := utf8.DecodeLastRuneInString(line[:m[0]])
			after, _ := utf8.DecodeRuneInString(line[m[1]:])
			rest := strings.TrimLeft(line[m[1]:], " ")
			next, _ := utf8.DecodeRuneInString(rest)
			switch {
			case m[0] > 0 && (isWord(before) || before == '.'): // part of a name: H200, sm_90, v3.4
			case m[1] < len(line) && isWord(after): // not a unit: 10 msg, 2 Ws
			case (unit == "x" || unit == "×") && (unicode.IsDigit(next) || unicode.IsUpper(next)): // a shape (32 × 256), a count (8× H200)
			case rules[strings.TrimLeft(strings.ReplaceAll(text, " ", ""), "+±~≈")]:
			default:
				out = append(out, fmt.Sprintf("%d: %s", i+1, strings.TrimSpace(text)))
			}
		}
	}
	return out, nil
}

func isWord(r rune) bool { return r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r) }

// Outside the generated blocks no Markdown file states a measured figure by
// hand: a number with a unit of measurement (GB/s, µs, %, 2.5x, W, MHz …)
// in prose has no command behind it. Code, and the rule constants the tool
// prints (ruleFigures), are not measurements.
func TestDocsQuoteNoFigureByHand(t *testing.T) {
	root := repoRoot(t)
	rules := ruleFigures()
	for _, name := range markdownFiles(t, root) {
		b, err := os.ReadFile(filepath.Join(root, name))
		if err != nil {
			t.Fatal(err)
		}
		s := string(b)
		if name == "README.md" && !checkWholeREADME {
			top, _, ok := strings.Cut(s, "\n## Install")
			if !ok {
				t.Fatal("README has no ## Install section")
			}
			s = top
		}
		found, err := handFigures(s, rules)
		if err != nil {
			t.Errorf("%s: %v", name, err)
		}
		for _, f := range found {
			t.Errorf("%s:%s: a figure typed by hand, outside a generated block (docs/contributing.md, \"Numbers in the docs\")", name, f)
		}
	}
}

// The block parser and the figure check on small texts: what each finds
// and what it leaves alone.
func TestDocsCheckFindsWhatItShould(t *testing.T) {
	rules := ruleFigures()
	doc := strings.Join([]string{
		"# A page",                                // 1
		"put reaches 323.7 GB/s here.",            // 2: a figure
		"a round trip of 1.31 / 1.34 µs and 2.5x", // 3: two
		"`nvshbench report --margin 5%` and 8× H200, 32 × 256 threads", // 4: code, a count, a shape
		"a winner leads by 3 % at least; 12 % faster",                  // 5: the rule's margin; a figure
		"<!-- generated: nvshbench version -->",                        // 6
		"```",
		"400 GB/s inside a block",
		"```",
		"<!-- end -->",
		"```sh",
		"echo 7 µs in a fence",
		"```",
		"sizes 256 B, 1 GiB, NVSHMEM 3.4.5, sm_90, H200 W, 2 min 45 s", // 14: none
		"-31 % issue rate, 700 W, 1980 MHz",                            // 15: three
		"[see](results/x-5%.md)",                                       // 16: a link target
		"a lone ` backtick",                                            // 17
		"",                                                             // 18
		"then 9 µs` again",                                             // 19: a figure a paragraph on
		"````markdown",                                                 // a marker shown as an example
		"<!-- generated: nvshbench list -->",
		"<!-- end -->",
		"````",
	}, "\n")
	got, err := handFigures(doc, rules)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"2: 323.7 GB/s", "3: 1.31 / 1.34 µs", "3: 2.5x", "5: 12 %", "15: -31 %", "15: 700 W", "15: 1980 MHz", "19: 9 µs"}
	if !slices.Equal(got, want) {
		t.Errorf("figures found:\n%q\nwant\n%q", got, want)
	}
	blocks, err := docBlocks(doc)
	if err != nil || len(blocks) != 1 || blocks[0].cmd != "nvshbench version" || blocks[0].line != 6 || doc[blocks[0].start:blocks[0].end] != "```\n400 GB/s inside a block\n```\n" {
		t.Errorf("blocks %+v, %v", blocks, err)
	}
	for _, bad := range []string{
		"<!-- generated: nvshbench version -->\ntext\n",                                             // no end
		"<!-- generated: nvshbench version -->\n<!-- generated: nvshbench list -->\n<!-- end -->\n", // one inside another
		"<!-- end -->\n", // an end alone
		"<!-- generated: make test -->\n<!-- end -->\n", // not nvshbench
	} {
		if _, err := docBlocks(bad); err == nil {
			t.Errorf("docBlocks(%q): no error", bad)
		}
	}
	if len(rules) != 4 || !rules["3%"] || !rules["95%"] || !rules["90%"] || !rules["10%"] {
		t.Errorf("rule figures: %v", rules)
	}
	root := t.TempDir()
	for _, f := range []string{"a.md", "docs/b.md", "build/c.md", "testdata/d.md", ".git/e.md", "repro/" + manifestName, "repro/report.md", "notes.txt"} {
		os.MkdirAll(filepath.Join(root, filepath.Dir(f)), 0o755)
		os.WriteFile(filepath.Join(root, f), nil, 0o644)
	}
	if got := markdownFiles(t, root); !slices.Equal(got, []string{"a.md", "docs/b.md"}) {
		t.Errorf("markdown files: %v", got)
	}
}
