// Package report turns results files into paper-style tables: one table
// model (Table) built from results and the embedded reference numbers,
// rendered as text, Markdown, CSV or JSON. It reads results only; it never
// imports the suites or the GPU layer.
package report

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"

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

// Table is the one table model every format renders.
type Table struct {
	Title   string
	Columns []string
	Right   []bool // right-align column i (numbers)
	Rows    [][]Cell
	Notes   []string // shown under the table in text and Markdown
}

// Report is a list of tables plus warnings that travel beside the data
// (never inside CSV or JSON output).
type Report struct {
	Tables   []Table
	Warnings []string
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

func renderTable(w io.Writer, r *Report, md bool) error {
	for i, t := range r.Tables {
		if i > 0 {
			fmt.Fprintln(w)
		}
		if md {
			fmt.Fprintf(w, "### %s\n\n", t.Title)
		} else {
			fmt.Fprintf(w, "%s\n", t.Title)
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
		tab.Header(anySlice(t.Columns)...)
		for _, row := range t.Rows {
			cells := make([]any, len(row))
			for c, cell := range row {
				s := cell.Text
				if md {
					s = strings.ReplaceAll(s, "|", `\|`)
				}
				if s == "" {
					s = " "
				}
				cells[c] = s
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
				if md {
					fmt.Fprintf(w, "- %s\n", n)
				} else {
					fmt.Fprintf(w, "  * %s\n", n)
				}
			}
		}
	}
	return nil
}

func anySlice(s []string) []any {
	out := make([]any, len(s))
	for i, v := range s {
		out[i] = v
	}
	return out
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
		cw.Write(t.Columns)
		for _, row := range t.Rows {
			rec := make([]string, len(row))
			for c, cell := range row {
				if cell.Num != nil {
					rec[c] = strconv.FormatFloat(*cell.Num, 'g', -1, 64)
				} else {
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
		jt := jsonTable{Title: t.Title, Columns: t.Columns, Notes: t.Notes, Rows: []map[string]any{}}
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
