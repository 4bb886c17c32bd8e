package main

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/nvshbench/nvshbench/plots"
	"github.com/nvshbench/nvshbench/record"
)

type plotOptions struct {
	Files   []string
	Example bool
	Out     string
	Formats []string
	NoPaper bool
	Spec    bool
}

func newPlotCmd() *cobra.Command {
	o := &plotOptions{}
	c := &cobra.Command{
		Use:   "plot [FILE|LABEL=FILE]...",
		Short: "Bandwidth and latency vs message size charts (PNG, SVG)",
		Long: `plot draws one chart per metric family found in the files: bandwidth vs message size,
latency vs message size, AllReduce algbw vs message size. The x axis is log2 and labelled in
bytes; each series is one benchmark with fixed parameters, drawn as its median with a
min–max band (p10–p90 for latency). Several files are overlaid and labelled; the paper's
published peaks appear as dashed reference lines.

--out may be a folder of your own: plot writes new files and replaces only charts it wrote
there before (listed in its .nvshbench-reproduce file), never one of yours.`,
		Example: `  nvshbench plot --example --out charts
  nvshbench plot --example --out charts --format svg --no-paper`,
		RunE: func(c *cobra.Command, args []string) error {
			o.Files = args
			if len(o.Formats) == 0 && !o.Spec {
				return usagef("--format is empty: want one or more of %s", strings.Join(plots.Formats, ", "))
			}
			for _, f := range o.Formats {
				if err := checkChoice("format", f, plots.Formats); err != nil {
					return err
				}
			}
			if !o.Spec && o.Out == "" {
				return usagef("--out DIR is required (or --spec to print the chart data)")
			}
			return runPlot(c, o)
		},
	}
	c.Flags().BoolVar(&o.Example, "example", false, "use the embedded example run")
	c.Flags().StringVarP(&o.Out, "out", "o", "", "directory to write the charts into")
	c.Flags().StringSliceVarP(&o.Formats, "format", "f", plots.Formats, "image formats: png, svg")
	c.Flags().BoolVar(&o.NoPaper, "no-paper", false, "leave out the published reference lines")
	c.Flags().BoolVar(&o.Spec, "spec", false, "print the charts' data (series, marks) as JSON instead of drawing")
	c.RegisterFlagCompletionFunc("format", cobra.FixedCompletions(plots.Formats, cobra.ShellCompDirectiveNoFileComp))
	c.ValidArgsFunction = jsonlCompletion
	return c
}

func runPlot(c *cobra.Command, o *plotOptions) error {
	files, err := inputFiles(o.Files, o.Example, c)
	if err != nil {
		return err
	}
	var ref *record.Reference
	if !o.NoPaper {
		ref = record.Paper()
	}
	specs := plots.Build(files, ref)
	if len(specs) == 0 {
		return fmt.Errorf("nothing to plot: no measured point with a message size in %s", strings.Join(o.Files, ", "))
	}
	if o.Spec {
		enc := json.NewEncoder(c.OutOrStdout())
		enc.SetIndent("", "  ")
		return enc.Encode(specs)
	}
	out, err := openOwned(o.Out)
	if err != nil {
		return err
	}
	paths, err := writeCharts(out, specs, o.Formats)
	for _, p := range paths {
		fmt.Fprintln(c.OutOrStdout(), p)
	}
	return err
}
