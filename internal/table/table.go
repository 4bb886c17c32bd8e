// Package table is the one table model of nvshbench (Table, Cell, Report)
// and its renderers: text, Markdown, CSV and JSON. Every command that
// prints a table builds one and renders it here. A leaf: it imports no
// other nvshbench package.
package table

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"unicode"

	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/renderer"
	"github.com/olekukonko/tablewriter/tw"
)

// Cell is one table cell: the text shown to people and, for numbers, the
// value written to machine formats (CSV, JSON) unrounded.
type Cell struct {
	Text string
	Num  *float64
}

// Str makes a text cell.
func Str(s string) Cell { return Cell{Text: s} }

// Num makes a numeric cell shown with the given precision.
func Num(v float64, prec int) Cell {
	return Cell{Text: strconv.FormatFloat(v, 'f', prec, 64), Num: &v}
}

// Sig makes a numeric cell shown with digits significant digits and never
// an exponent: 0.000123, 4.56, 337.4, 12345 (fixed decimals would print a
// small latency or a tiny bandwidth as 0.000).
func Sig(v float64, digits int) Cell {
	if v == 0 || math.IsNaN(v) || math.IsInf(v, 0) {
		return Cell{Text: strconv.FormatFloat(v, 'f', -1, 64), Num: &v}
	}
	mag := int(math.Floor(math.Log10(math.Abs(v))))
	dec := digits - 1 - mag
	if dec < 0 {
		dec = 0
	}
	return Cell{Text: strconv.FormatFloat(v, 'f', dec, 64), Num: &v}
}

// Table is the one table model every format renders. A table of no
// columns is a line of text, its title (what a report leaves out, say).
type Table struct {
	Title   string
	Columns []string
	Right   []bool // right-align column i (numbers)
	Rows    [][]Cell
	Notes   []string // shown under the table in text and Markdown
	// How the text and Markdown output fit a terminal (CSV and JSON always
	// carry everything): Wide columns appear only with Report.Wide; a Long
	// column's texts past LongCell characters move to numbered footnotes;
	// a Trunc column is cut to fit Width.
	Wide  []bool
	Long  []bool
	Trunc []bool
}

// Report is a list of tables plus warnings that travel beside the data
// (never inside CSV or JSON output).
type Report struct {
	Tables   []Table
	Warnings []string
	Wide     bool // text/Markdown: every column, every text in full
}

// Width is what the default text output fits; LongCell the longest text a
// Long column keeps in place.
const (
	Width    = 120
	LongCell = 24
)

func flag(b []bool, i int) bool { return i < len(b) && b[i] }

// narrow applies the table's fitting rules (not with --wide).
func narrow(t Table, md bool) Table {
	var keep []int
	for c := range t.Columns {
		empty := len(t.Rows) > 0
		for _, row := range t.Rows {
			if c < len(row) && strings.TrimSpace(row[c].Text) != "" {
				empty = false
				break
			}
		}
		if !flag(t.Wide, c) && !empty { // a column empty in every row says nothing
			keep = append(keep, c)
		}
	}
	out := Table{Title: t.Title, Notes: append([]string{}, t.Notes...)}
	for _, c := range keep {
		out.Columns = append(out.Columns, t.Columns[c])
		out.Right = append(out.Right, flag(t.Right, c))
	}
	foot := map[string]int{}
	var feet []string
	for _, row := range t.Rows {
		var r []Cell
		for _, c := range keep {
			if c >= len(row) {
				r = append(r, Str(""))
				continue
			}
			cell := row[c]
			if flag(t.Long, c) && len([]rune(cell.Text)) > LongCell {
				n, ok := foot[cell.Text]
				if !ok {
					feet = append(feet, cell.Text)
					n = len(feet)
					foot[cell.Text] = n
				}
				head := "see"
				if i := strings.Index(cell.Text, ":"); i > 0 && i <= 16 {
					head = cell.Text[:i]
				}
				cell = Str(fmt.Sprintf("%s [%d]", head, n))
			}
			r = append(r, cell)
		}
		out.Rows = append(out.Rows, r)
	}
	for i, f := range feet {
		out.Notes = append(out.Notes, fmt.Sprintf("[%d] %s", i+1, f))
	}
	// Cut the Trunc columns until the table fits Width.
	for _, c := range keep {
		if !flag(t.Trunc, c) {
			continue
		}
		idx := -1
		for i, k := range keep {
			if k == c {
				idx = i
			}
		}
		widths := make([]int, len(out.Columns))
		for i, h := range out.Columns {
			widths[i] = len([]rune(h))
		}
		for _, r := range out.Rows {
			for i, cell := range r {
				widths[i] = max(widths[i], len([]rune(cell.Text)))
			}
		}
		total := 1
		for _, w := range widths {
			total += w + 3
		}
		if total <= Width {
			continue
		}
		room := max(widths[idx]-(total-Width), 6)
		for _, r := range out.Rows {
			if rs := []rune(r[idx].Text); len(rs) > room {
				r[idx] = Str(string(rs[:room-1]) + "…")
			}
		}
	}
	if !md {
		fold(&out)
	}
	return out
}

// fold fits a text table to Width by wrapping its widest text columns
// onto more lines (a side-by-side report of several runs has more columns
// than a terminal). Numbers are never wrapped. The excess is shared: every
// text column wider than a common cap is folded to it, the cap as wide as
// the table allows (no column narrower than 20 or its header).
func fold(t *Table) {
	const least = 20
	widths := make([]int, len(t.Columns))
	for i, h := range t.Columns {
		widths[i] = len([]rune(h))
	}
	for _, r := range t.Rows {
		for i, cell := range r {
			if i >= len(widths) {
				continue
			}
			for _, l := range strings.Split(cell.Text, "\n") {
				widths[i] = max(widths[i], len([]rune(l)))
			}
		}
	}
	total := func(capW int) int {
		n := 1
		for i, w := range widths {
			if !flag(t.Right, i) && w > capW {
				w = max(capW, least, len([]rune(t.Columns[i])))
			}
			n += w + 3
		}
		return n
	}
	widest := 0
	for i, w := range widths {
		if !flag(t.Right, i) {
			widest = max(widest, w)
		}
	}
	if total(widest) <= Width {
		return
	}
	capW := widest
	for capW > least && total(capW) > Width {
		capW--
	}
	for i, w := range widths {
		room := max(capW, least, len([]rune(t.Columns[i])))
		if flag(t.Right, i) || w <= room {
			continue
		}
		for _, r := range t.Rows {
			if i < len(r) {
				r[i].Text = FoldText(r[i].Text, room)
			}
		}
	}
}

// FoldText breaks s into lines of at most width runes, at spaces where it
// can (a long name after a '/' or '-').
func FoldText(s string, width int) string {
	var lines []string
	for _, para := range strings.Split(s, "\n") {
		line := ""
		for _, word := range strings.Fields(para) {
			for len([]rune(word)) > width {
				if line != "" {
					lines, line = append(lines, line), ""
				}
				rs := []rune(word)
				cut := width
				// A long name breaks after its last '/' or '-' that fits.
				if i := strings.LastIndexAny(string(rs[:width]), "/-"); i > 0 {
					cut = len([]rune(string(rs[:width])[:i+1]))
				}
				lines, word = append(lines, string(rs[:cut])), string(rs[cut:])
			}
			switch {
			case line == "":
				line = word
			case len([]rune(line))+1+len([]rune(word)) <= width:
				line += " " + word
			default:
				lines, line = append(lines, line), word
			}
		}
		lines = append(lines, line)
	}
	return strings.Join(lines, "\n")
}

// Formats lists the output formats.
var Formats = []string{"text", "markdown", "csv", "json"}

// Render writes r in the named format.
func Render(w io.Writer, r *Report, format string) error {
	switch format {
	case "text":
		return renderTable(w, r, false)
	case "markdown", "md":
		return renderTable(w, r, true)
	case "csv":
		return renderCSV(w, r)
	case "json":
		return renderJSON(w, r)
	}
	return fmt.Errorf("unknown format %q (want one of %s)", format, strings.Join(Formats, ", "))
}

// Printable writes a text's control characters as Go escapes (\x1b, \n):
// a file's names and reasons, or a label typed on the command line, never
// reach the terminal as commands.
func Printable(s string) string { return printable(s, false) }

// printable escapes control characters, but for line breaks where a
// table's cell keeps them (fold put them there).
func printable(s string, lines bool) string {
	if !strings.ContainsFunc(s, unicode.IsControl) {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		if unicode.IsControl(r) && !(lines && r == '\n') {
			q := strconv.QuoteRune(r)
			b.WriteString(q[1 : len(q)-1])
		} else {
			b.WriteRune(r)
		}
	}
	return b.String()
}

// cellText is a header's or a cell's text as a table shows it: control
// characters escaped (a text cell keeps fold's line breaks), a Markdown
// table's pipes escaped (a run's label is a column header).
func cellText(s string, md bool) string {
	s = printable(s, !md)
	if md {
		s = strings.ReplaceAll(s, "|", `\|`)
	}
	if s == "" {
		s = " "
	}
	return s
}

func renderTable(w io.Writer, r *Report, md bool) error {
	for i, t := range r.Tables {
		if !r.Wide {
			t = narrow(t, md)
		}
		if i > 0 {
			fmt.Fprintln(w)
		}
		if len(t.Columns) == 0 {
			title := Printable(t.Title)
			if !md && !r.Wide {
				title = FoldText(title, Width)
			}
			fmt.Fprintln(w, title)
			continue
		}
		if md {
			fmt.Fprintf(w, "### %s\n\n", Printable(t.Title))
		} else if r.Wide {
			fmt.Fprintf(w, "%s\n", Printable(t.Title))
		} else {
			fmt.Fprintf(w, "%s\n", FoldText(Printable(t.Title), Width))
		}
		align := make([]tw.Align, len(t.Columns))
		for c := range align {
			align[c] = tw.AlignLeft
			if c < len(t.Right) && t.Right[c] {
				align[c] = tw.AlignRight
			}
		}
		var rend tw.Renderer
		if md {
			rend = renderer.NewMarkdown()
		} else {
			rend = renderer.NewBlueprint(tw.Rendition{Symbols: tw.NewSymbols(tw.StyleASCII)})
		}
		var buf bytes.Buffer
		tab := tablewriter.NewTable(&buf,
			tablewriter.WithRenderer(rend),
			tablewriter.WithHeaderAutoFormat(tw.Off),
			tablewriter.WithRowAutoWrap(tw.WrapNone),
			tablewriter.WithHeaderAlignment(tw.AlignLeft),
			tablewriter.WithRowAlignmentConfig(tw.CellAlignment{PerColumn: align}),
		)
		head := make([]any, len(t.Columns))
		for c, h := range t.Columns {
			head[c] = cellText(h, md)
		}
		tab.Header(head...)
		for _, row := range t.Rows {
			cells := make([]any, len(row))
			for c, cell := range row {
				cells[c] = cellText(cell.Text, md)
			}
			if err := tab.Append(cells...); err != nil {
				return err
			}
		}
		if err := tab.Render(); err != nil {
			return err
		}
		if _, err := w.Write(buf.Bytes()); err != nil {
			return err
		}
		if len(t.Notes) > 0 {
			if md {
				fmt.Fprintln(w)
			}
			for _, n := range t.Notes {
				n = Printable(n)
				if md {
					fmt.Fprintf(w, "- %s\n", n)
				} else if r.Wide {
					fmt.Fprintf(w, "  * %s\n", n)
				} else {
					fmt.Fprintf(w, "  * %s\n", wrap(n, Width-4, "    "))
				}
			}
		}
	}
	return nil
}

// renderCSV writes one block per table: a "# title" comment line, then the
// header and rows. Numbers are unrounded.
func renderCSV(w io.Writer, r *Report) error {
	cw := csv.NewWriter(w)
	for i, t := range r.Tables {
		if i > 0 {
			cw.Write(nil)
		}
		if err := cw.Write([]string{"# " + t.Title}); err != nil {
			return err
		}
		if len(t.Columns) == 0 {
			continue
		}
		cw.Write(t.Columns)
		for _, row := range t.Rows {
			rec := make([]string, len(row))
			for c, cell := range row {
				switch {
				case cell.Num != nil:
					rec[c] = strconv.FormatFloat(*cell.Num, 'g', -1, 64)
				case cell.Text == "—":
					rec[c] = "" // no value: never a dash in a column of numbers
				default:
					rec[c] = cell.Text
				}
			}
			cw.Write(rec)
		}
	}
	cw.Flush()
	return cw.Error()
}

type jsonTable struct {
	Title   string           `json:"title"`
	Columns []string         `json:"columns"`
	Rows    []map[string]any `json:"rows"`
	Notes   []string         `json:"notes,omitempty"`
}

func renderJSON(w io.Writer, r *Report) error {
	out := make([]jsonTable, 0, len(r.Tables))
	for _, t := range r.Tables {
		jt := jsonTable{Title: t.Title, Columns: append([]string{}, t.Columns...), Notes: t.Notes, Rows: []map[string]any{}}
		for _, row := range t.Rows {
			m := map[string]any{}
			for c, cell := range row {
				if c >= len(t.Columns) {
					break
				}
				if cell.Num != nil {
					m[t.Columns[c]] = *cell.Num
				} else {
					m[t.Columns[c]] = cell.Text
				}
			}
			jt.Rows = append(jt.Rows, m)
		}
		out = append(out, jt)
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(map[string]any{"tables": out})
}

// wrap breaks s at spaces so no line passes width (the first line starts
// after "  * ", the others after indent).
func wrap(s string, width int, indent string) string {
	var b strings.Builder
	line := 0
	for i, word := range strings.Fields(s) {
		n := len([]rune(word))
		if i > 0 && line+1+n > width {
			b.WriteString("\n" + indent)
			line = len(indent) - 4
		} else if i > 0 {
			b.WriteByte(' ')
			line++
		}
		b.WriteString(word)
		line += n
	}
	return b.String()
}
