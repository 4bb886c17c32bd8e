package table_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/nvshbench/nvshbench/internal/table"
)

func TestBadFormat(t *testing.T) {
	if err := table.Render(&bytes.Buffer{}, &table.Report{}, "yaml"); err == nil || !strings.Contains(err.Error(), "unknown format") {
		t.Errorf("yaml: %v", err)
	}
}

func TestMarkdownEscapesPipes(t *testing.T) {
	r := &table.Report{Tables: []table.Table{{Title: "t", Columns: []string{"a"}, Rows: [][]table.Cell{{table.Str("x|y")}}}}}
	var b bytes.Buffer
	if err := table.Render(&b, r, "markdown"); err != nil || !strings.Contains(b.String(), `x\|y`) {
		t.Errorf("pipe not escaped (%v):\n%s", err, b.String())
	}
}

func TestSignificantDigits(t *testing.T) {
	for v, want := range map[float64]string{0.000123456: "0.0001235", 4.56789: "4.568", 337.4321: "337.4", 12345.6: "12346", 0: "0"} {
		if got := table.Sig(v, 4).Text; got != want {
			t.Errorf("Sig(%v, 4) = %q, want %q", v, got, want)
		}
	}
}

// Two long text columns are both folded to fit the width, neither left
// narrow while the other keeps its full length.
func TestFoldSharesTheWidth(t *testing.T) {
	long := strings.Repeat("word ", 60)
	r := &table.Report{Tables: []table.Table{{Title: "t", Columns: []string{"id", "a", "b"},
		Rows: [][]table.Cell{{table.Str("x"), table.Str(long[:150]), table.Str(long)}}}}}
	var b bytes.Buffer
	if err := table.Render(&b, r, "text"); err != nil {
		t.Fatal(err)
	}
	var a, c int
	for _, l := range strings.Split(b.String(), "\n") {
		if n := len([]rune(l)); n > table.Width {
			t.Errorf("a line of %d runes, over %d:\n%s", n, table.Width, b.String())
		}
		if cells := strings.Split(l, "|"); len(cells) == 5 {
			a, c = max(a, len(strings.TrimSpace(cells[2]))), max(c, len(strings.TrimSpace(cells[3])))
		}
	}
	if a < 40 || c < 40 || a-c > 5 || c-a > 5 {
		t.Errorf("columns folded to %d and %d runes; want both about half the width:\n%s", a, c, b.String())
	}
}

// A column header (a run's label) is escaped as a cell is: its pipes in
// Markdown, its control characters everywhere.
func TestHeadersEscaped(t *testing.T) {
	r := &table.Report{Tables: []table.Table{{Title: "t", Columns: []string{"a|b", "c\x1bd"}, Rows: [][]table.Cell{{table.Str("1"), table.Str("2")}}}}}
	for _, f := range []string{"markdown", "text"} {
		var b bytes.Buffer
		if err := table.Render(&b, r, f); err != nil {
			t.Fatal(err)
		}
		if strings.ContainsRune(b.String(), '\x1b') || f == "markdown" && !strings.Contains(b.String(), `a\|b`) {
			t.Errorf("%s: header not escaped:\n%s", f, b.String())
		}
	}
}

// A table of no columns is a line: its title alone after a blank line in
// text and Markdown (no frame, no heading), a comment line in CSV, a
// title with no columns in JSON.
func TestTableOfNoColumnsIsALine(t *testing.T) {
	r := &table.Report{Tables: []table.Table{
		{Title: "t", Columns: []string{"a"}, Rows: [][]table.Cell{{table.Str("x")}}},
		{Title: "Not in this file: Fig. 4"},
	}}
	for format, want := range map[string]string{
		"text":     "+---+\n\nNot in this file: Fig. 4\n",
		"markdown": "| x |\n\nNot in this file: Fig. 4\n",
		"csv":      "x\n\n# Not in this file: Fig. 4\n",
		"json":     `"title": "Not in this file: Fig. 4",` + "\n      \"columns\": [],",
	} {
		var b bytes.Buffer
		if err := table.Render(&b, r, format); err != nil || !strings.Contains(b.String(), want) {
			t.Errorf("%s (%v):\n%s", format, err, b.String())
		}
	}
}
