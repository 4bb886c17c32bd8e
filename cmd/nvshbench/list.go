package main

import (
	"github.com/spf13/cobra"
	"strings"

	"github.com/nvshbench/nvshbench/harness"
	"github.com/nvshbench/nvshbench/internal/table"
)

func newListCmd() *cobra.Command {
	var format string
	var wide bool
	c := &cobra.Command{
		Use:   "list [PATTERN...]",
		Short: "List the benchmark IDs with their descriptions",
		Long: `list shows every registered benchmark: its ID (select with 'nvshbench run ID|PREFIX|GLOB'),
the metrics it records, the limit it is compared with, whether a plain run includes it, and
what it measures.`,
		Example: `  nvshbench list
  nvshbench list rma/put
  nvshbench list 'rma/*/block' --format csv`,
		RunE: func(c *cobra.Command, args []string) error {
			if err := checkChoice("format", format, table.Formats); err != nil {
				return err
			}
			benches, err := harness.Select(args)
			if err != nil {
				return usageError{err}
			}
			if len(args) == 0 {
				benches = harness.All()
			}
			t := table.Table{Title: "Benchmarks", Columns: []string{"id", "metrics", "limit", "default", "launch", "description"},
				Wide: []bool{false, true, true, false, false, false}}
			for _, b := range benches {
				def := ""
				if b.Default {
					def = "yes"
				}
				metrics := ""
				for i, m := range b.Metrics {
					if i > 0 {
						metrics += ","
					}
					metrics += m
				}
				t.Rows = append(t.Rows, []table.Cell{table.Str(b.ID), table.Str(metrics), table.Str(strings.Join(b.Limits, ", ")), table.Str(def), table.Str(b.LaunchText()), table.Str(b.Desc)})
			}
			return table.Render(c.OutOrStdout(), &table.Report{Tables: []table.Table{t}, Wide: wide}, format)
		},
	}
	c.Flags().StringVarP(&format, "format", "f", "text", "output format: text, markdown, csv, json")
	c.Flags().BoolVar(&wide, "wide", false, "every column and every text in full (the default fits 120 columns)")
	c.ValidArgsFunction = benchmarkCompletion
	c.RegisterFlagCompletionFunc("format", cobra.FixedCompletions(table.Formats, cobra.ShellCompDirectiveNoFileComp))
	return c
}
