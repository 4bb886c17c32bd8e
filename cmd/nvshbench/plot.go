package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/nvshbench/nvshbench/plots"
	"github.com/nvshbench/nvshbench/record"
	"github.com/nvshbench/nvshbench/verdict"
)

type plotOptions struct {
	Files   []string
	Example bool
	Out     string
	Formats []string
	NoPaper bool
	Spec    bool
	Matrix  bool
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
  nvshbench plot --example --out charts --format svg --no-paper
  # the pair matrix of a check as heat maps: nvshbench plot --matrix --out charts node1-check.jsonl`,
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
	c.Flags().BoolVar(&o.Matrix, "matrix", false, "heat maps of the pair matrix (check, run --matrix): a chart per row, PE by PE, the pairs check fails marked")
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
	if o.Matrix {
		return plotMatrix(c, o, files)
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

// heatMaps are the pair matrices of files as heat maps, marked by the
// check's verdict of each file.
func heatMaps(files []*record.File) ([]plots.HeatMap, error) {
	var out []plots.HeatMap
	labels := record.Labels(files)
	for i, f := range files {
		v, err := verdict.Judge(f, verdict.Options{Bands: verdict.DefaultBands(f.Header)})
		if err != nil {
			return nil, usageError{err}
		}
		for _, m := range verdict.Matrices(f, v) {
			unit, scale := "GB/s", 1e-9
			if m.Unit == record.UnitSeconds {
				unit, scale = "µs", 1e6
			}
			h := plots.HeatMap{Name: fmt.Sprintf("matrix-%s", strings.NewReplacer("/", "-").Replace(m.Row)), Unit: unit, Higher: m.Unit != record.UnitSeconds,
				Title: fmt.Sprintf("%s (%s)", m.Row, unit)}
			if len(files) > 1 {
				h.Name += fmt.Sprintf("-%d", i+1)
				h.Title = labels[i] + ": " + h.Title
			}
			for from := range m.Cells {
				row, marks := make([]float64, len(m.Cells[from])), make([]string, len(m.Cells[from]))
				for to, c := range m.Cells[from] {
					row[to] = c * scale
					if l := m.Marks[from][to]; l > verdict.Pass {
						marks[to] = l.String()
					}
				}
				h.Cells, h.Marks = append(h.Cells, row), append(h.Marks, marks)
			}
			h.Fill()
			out = append(out, h)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no pair matrix in %s: nvshbench check, or run --matrix, measures one", strings.Join(namesOf(files), ", "))
	}
	return out, nil
}

func namesOf(files []*record.File) []string {
	var out []string
	for _, f := range files {
		out = append(out, f.Name)
	}
	return out
}

func plotMatrix(c *cobra.Command, o *plotOptions, files []*record.File) error {
	hms, err := heatMaps(files)
	if err != nil {
		return err
	}
	if o.Spec {
		enc := json.NewEncoder(c.OutOrStdout())
		enc.SetIndent("", "  ")
		return enc.Encode(hms)
	}
	out, err := openOwned(o.Out)
	if err != nil {
		return err
	}
	for _, h := range hms {
		for _, f := range o.Formats {
			var buf bytes.Buffer
			name := h.Name + "." + f
			if err := plots.RenderHeatMap(&buf, h, f); err != nil {
				return err
			}
			if err := out.write(name, buf.Bytes()); err != nil {
				return err
			}
			fmt.Fprintln(c.OutOrStdout(), filepath.Join(o.Out, name))
		}
	}
	return nil
}
