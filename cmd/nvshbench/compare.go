package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/nvshbench/nvshbench/compare"
	"github.com/nvshbench/nvshbench/internal/table"
)

type compareOptions struct {
	Files       []string
	Format      string
	Threshold   string
	Alpha       float64
	AllowFailed bool
	Wide        bool
	IDs         []string
}

func newCompareCmd() *cobra.Command {
	o := &compareOptions{}
	c := &cobra.Command{
		Use:   "compare OLD NEW...",
		Short: "Compare runs point by point with benchstat statistics; gate on regressions",
		Long: `compare matches the points of NEW against OLD on benchmark ID and parameters and prints,
for each, the median with its 95% confidence interval and the change: a percentage where a
Mann–Whitney U test finds the difference significant (p < --alpha), "~" where it does not, and
"~" too where the samples sit on a timer's grid (a quantized timer's ticks: equal samples) and the
medians differ by no more than one step of it, which the timer does not resolve.

A significant slowdown beyond --threshold is a regression: compare then exits with code 3, so it
can gate a cluster's acceptance test. --threshold is in time per operation for every metric:
100% is twice as slow, a latency twice as long or a bandwidth (or rate) of half the base's
(slowdown = new/old − 1 for a time, old/new − 1 for a bandwidth); on a timer's grid the gate
takes the slowdown less one step. A point the base measured that a candidate did not (it errored,
failed verification, was waived or is missing), and a candidate point that errored or failed
verification, is shown as FAILED or MISSING and fails the gate too, unless --allow-failed.

Files of results schema 1 are matched as schema 2 writes the same measurement (one row per
latency point, the launch mode a collective ran with, renamed benchmarks); a row that means
something else in the other schema (schema 1's in-kernel timer rows; stores, which end delivered
at every iteration since schema 2) is shown as "schema changed" and never gates. It warns when the
setups differ (GPU, driver, CUDA, NVSHMEM or NCCL version, PE count, NVSHMEM_/NCCL_ variables).

Exit codes: 0 no regression, 1 error, 2 bad usage, 3 regression or failed/missing points.`,
		Example: `  nvshbench compare examples/baseline.jsonl examples/candidate.jsonl
  nvshbench compare --threshold 10% --format markdown before=examples/baseline.jsonl after=examples/candidate.jsonl
  nvshbench compare --id latency examples/baseline.jsonl examples/candidate.jsonl`,
		RunE: func(c *cobra.Command, args []string) error {
			if len(args) < 2 {
				return usagef("compare needs at least two results files (OLD NEW...), got %d", len(args))
			}
			o.Files = args
			if err := checkChoice("format", o.Format, table.Formats); err != nil {
				return err
			}
			if !(o.Alpha > 0 && o.Alpha < 1) { // NaN too

				return usagef("invalid --alpha %g: must be in (0, 1)", o.Alpha)
			}
			return runCompare(c, o)
		},
	}
	c.Flags().StringVarP(&o.Format, "format", "f", "text", "output format: text, markdown, csv, json")
	c.Flags().BoolVar(&o.Wide, "wide", false, "every column and every text in full (the default fits 120 columns)")
	c.Flags().StringVar(&o.Threshold, "threshold", "5%", "a significant slowdown beyond this is a regression, in time per operation for every metric: 100% = twice as slow, latency or bandwidth (e.g. 5% or 0.05)")
	c.Flags().Float64Var(&o.Alpha, "alpha", 0.05, "significance level of the Mann–Whitney U test")
	c.Flags().BoolVar(&o.AllowFailed, "allow-failed", false, "show failed and missing candidate points without failing the gate")
	addIDFlag(c.Flags(), &o.IDs)
	c.RegisterFlagCompletionFunc("format", cobra.FixedCompletions(table.Formats, cobra.ShellCompDirectiveNoFileComp))
	c.ValidArgsFunction = jsonlCompletion
	return c
}

// parseThreshold accepts "5%" or "0.05".
func parseThreshold(s string) (float64, error) {
	return parsePercent("threshold", s, "5", "0.05", " (100% = twice as slow, latency or bandwidth)")
}

func runCompare(c *cobra.Command, o *compareOptions) error {
	thr, err := parseThreshold(o.Threshold)
	if err != nil {
		return err
	}
	files, err := loadFiles(o.Files, c.ErrOrStderr())
	if err != nil {
		return err
	}
	if err := keepIDs(files, o.IDs); err != nil {
		return err
	}
	res, err := compare.Compare(files, compare.Options{Alpha: o.Alpha, Threshold: thr, AllowFailed: o.AllowFailed})
	if err != nil {
		return err
	}
	rep := res.Table()
	rep.Wide = o.Wide
	if err := table.Render(c.OutOrStdout(), rep, o.Format); err != nil {
		return err
	}
	for _, w := range rep.Warnings {
		fmt.Fprintf(c.ErrOrStderr(), "warning: %s\n", table.Printable(w))
	}
	if res.Regressions > 0 || res.Failures > 0 {
		return regressionError{n: res.Regressions, failed: res.Failures}
	}
	return nil
}
