// Package report turns results files into paper-style tables: the tables
// (table.Table) built from results and the embedded reference numbers,
// rendered by package table as text, Markdown, CSV or JSON. It reads
// results only; it never imports the suites or the GPU layer.
package report
