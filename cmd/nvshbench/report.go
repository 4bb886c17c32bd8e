package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/nvshbench/nvshbench/harness"
	"github.com/nvshbench/nvshbench/internal/table"
	"github.com/nvshbench/nvshbench/record"
	"github.com/nvshbench/nvshbench/report"
	"github.com/nvshbench/nvshbench/verdict"
)

type reportOptions struct {
	Files   []string
	Paper   bool
	Example bool
	Format  string
	Points  bool
	Wide    bool
	Margin  string
	Summary bool
	IDs     []string
	All     bool
	Matrix  bool
}

func newReportCmd() *cobra.Command {
	o := &reportOptions{}
	c := &cobra.Command{
		Use:   "report [FILE|LABEL=FILE]...",
		Short: "Paper-style tables from results files, beside the published numbers",
		Long: `report prints, for each results file, the paper's tables with the measured value beside
the published one: RMA peak bandwidth by operation and path (Fig. 4), latency at 256 B, and
AllReduce peak bandwidth (Fig. 5). Each row shows the ratio to the paper and the fraction of
the hardware limit measured in the same run; rows the machine could not run say why. A
table of the paper the file has no data for (no point of its rows: a bytes-per-SM run has
none) is named in one line after the file's own tables; --all shows it as well.
Where a file measured NCCL's device API or MoE dispatch/combine, a table sets the
implementations side by side and names the faster only where the lead is at least
--margin and a confidence interval of the time ratio, corrected over a series' sizes,
excludes 1; otherwise "tie (within x %)".
--summary prints one table instead: the headline figure of each table, a row each,
chosen by the same rules; of several files, each row from the first that gives the
most of its values (a column names it). The README's tables are its output.`,
		Example: `  nvshbench report --paper
  nvshbench report --example
  nvshbench report --example --points --format markdown
  nvshbench report --example --format csv
  nvshbench report --example --margin 5%
  nvshbench report --example --all
  nvshbench report --summary --example
  nvshbench report --summary --format markdown --example
  nvshbench report --points --id rma/put --id 'latency/*/block' --example`,
		RunE: func(c *cobra.Command, args []string) error {
			o.Files = args
			if err := checkChoice("format", o.Format, table.Formats); err != nil {
				return err
			}
			return runReport(c, o)
		},
	}
	c.Flags().BoolVar(&o.Paper, "paper", false, "print the published tables alone")
	c.Flags().BoolVar(&o.Example, "example", false, "use the embedded example run (measured on an H200)")
	c.Flags().StringVarP(&o.Format, "format", "f", "text", "output format: text, markdown, csv, json")
	c.Flags().BoolVar(&o.Points, "points", false, "add a table of every point")
	c.Flags().BoolVar(&o.All, "all", false, "every table of the paper, those the file has no data for too (else named in one line)")
	c.Flags().BoolVar(&o.Matrix, "matrix", false, "the pair matrix of each file (check, run --matrix): a table per row, PE by PE, the pairs check fails marked * (WARN ~)")
	c.Flags().BoolVar(&o.Summary, "summary", false, "one table of the headline figures, a row each (of several files: each row from the first that gives most of it)")
	addMarginFlag(c.Flags(), &o.Margin)
	addIDFlag(c.Flags(), &o.IDs)
	c.Flags().BoolVar(&o.Wide, "wide", false, "every column and every text in full (the default fits 120 columns; long reasons become footnotes)")
	c.RegisterFlagCompletionFunc("format", cobra.FixedCompletions(table.Formats, cobra.ShellCompDirectiveNoFileComp))
	c.ValidArgsFunction = jsonlCompletion
	return c
}

func jsonlCompletion(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
	return []string{"jsonl", "json", "gz"}, cobra.ShellCompDirectiveFilterFileExt // gz: a gzipped results file
}

func runReport(c *cobra.Command, o *reportOptions) error {
	rule, err := parseMargin(o.Margin)
	if err != nil {
		return err
	}
	ref := record.Paper()
	out, errw := c.OutOrStdout(), c.ErrOrStderr()
	if o.Summary && (o.Paper || o.Points || o.All) {
		return usagef("--summary prints one table of the headline figures; leave out --paper, --points and --all")
	}
	if o.Paper {
		if len(o.Files) > 0 || o.Example || len(o.IDs) > 0 {
			return usagef("--paper prints the published tables alone; leave out files, --example and --id")
		}
		rep := report.Paper(ref)
		rep.Wide = o.Wide
		return table.Render(out, rep, o.Format)
	}
	files, err := inputFiles(o.Files, o.Example, c)
	if err != nil {
		return err
	}
	if err := keepIDs(files, o.IDs); err != nil {
		return err
	}
	rep := report.Build(files, ref, report.Options{Points: o.Points, Rule: rule, All: o.All})
	if o.Matrix {
		if o.Summary || o.Points || o.All {
			return usagef("--matrix prints the pair matrix alone; leave out --summary, --points and --all")
		}
		rep = &table.Report{}
		for _, f := range files {
			v, err := verdict.Judge(f, verdict.Options{Bands: verdict.DefaultBands(f.Header)})
			if err != nil {
				return usageError{err}
			}
			rep.Tables = append(rep.Tables, verdict.MatrixReport(f, v).Tables...)
		}
	}
	if o.Summary {
		rep = report.Summary(files, ref, rule)
		for _, f := range files {
			rep.Warnings = append(rep.Warnings, f.Warnings...)
		}
	}
	rep.Wide = o.Wide
	if err := table.Render(out, rep, o.Format); err != nil {
		return err
	}
	for _, w := range rep.Warnings {
		fmt.Fprintf(errw, "warning: %s\n", table.Printable(w))
	}
	return nil
}

// inputFiles loads the named files plus, with --example, the embedded one.
func inputFiles(args []string, example bool, c *cobra.Command) ([]*record.File, error) {
	if len(args) == 0 && !example {
		return nil, usagef("no results file given: name one or more files, or use --example (or 'nvshbench report --paper' for the published numbers)")
	}
	files, err := loadFiles(args, c.ErrOrStderr())
	if err != nil {
		return nil, err
	}
	if example {
		ex, err := harness.Reader().Example()
		if err != nil {
			return nil, err
		}
		files = append(files, ex)
	}
	if err := record.CheckLabels(files); err != nil {
		return nil, usagef("%v", err)
	}
	return files, nil
}
