package main

import (
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/nvshbench/nvshbench/internal/table"
	"github.com/nvshbench/nvshbench/internal/units"
	"github.com/nvshbench/nvshbench/model"
	"github.com/nvshbench/nvshbench/plots"
	"github.com/nvshbench/nvshbench/record"
)

type modelOptions struct {
	Files   []string
	Example bool
	Guide   bool
	Detail  bool
	Format  string
	Wide    bool
	NS      []int
	Sizes   string
	Chart   string
	Margin  string
	NIC     model.NIC
	RTT     time.Duration
	// CTAs and Threads keep the bandwidth series of one launch shape (0:
	// every shape).
	CTAs, Threads int
	// PerSMGBps are the rates (GB/s) the bytes-per-SM guide also answers for.
	PerSMGBps []float64
	// NSGiven: --predict was set; a count beyond one NVLink domain is then
	// refused (exit 2), where the default's is left out with a note.
	NSGiven bool
}

func newModelCmd() *cobra.Command {
	o := &modelOptions{NIC: model.DefaultNIC()}
	c := &cobra.Command{
		Use:   "model [FILE|LABEL=FILE]...",
		Short: "From measurements to decisions: α–β fits, the fastest implementation per size, n-GPU predictions",
		Long: `model reads results files (no GPU needed) and prints:

  fits        T(S) = α + S/B for every series (a benchmark at fixed parameters, on one file's PEs,
              launch mode and path; MoE as T = a + tokens·c over the tokens per rank), robust
              least squares on relative error, split into up to three segments where a protocol or
              algorithm switches. A segment holds 4 sizes or more spanning 16× or more and passes a
              residual test; α and B are shown where it determines them (positive, 3 standard
              errors from zero, 5 % of the time or more), else "no fit" or "no B" with the reason.
              A B only cache-served sizes give is said so and never used for a prediction.
  guide       for each pattern with several implementations on the same GPUs (one-sided put/get,
              AllReduce, all-gather, all-to-all, MoE dispatch/combine): the fastest per size where
              its lead is at least --margin and the 95 % interval of the time ratio (corrected
              over the series' sizes) excludes 1, else "tie (within x %)"; implementations that
              ran the same code here as one; "not judged: why" where a cache served a size or a
              point is marked for a second look; where the winner changes between judged sizes
              (solved from the fits). Only like with like: the same file, PE count, launch
              mode, dtype and graph setting.
  predictions AllReduce and all-to-all at --predict GPUs of one node from a 2-PE run's fits (ring,
              one-shot, two-shot, NCCL's tuning model with its source lines), each naming its
              inputs, within one NVLink domain of the measured GPUs (8 on HGX H100 / H200) and the
              sizes measured, beside files of that many PEs of the same setup and the paper's
              8 × H200 figures; the paper's inter-node rows predicted from a NIC's line rate
              (--nic-gbps ...); and NCCL's own algorithm against the ones forced in the same run.

By default it prints a summary: the fits counted per file and family, the guide with each launch
sweep's shapes of one size said in a note under their table, the predictions, NCCL's choice by
runs of sizes with one outcome. --detail prints every series' fit, every launch shape and NCCL's
choice at every size. The guide is one table per question (a pattern on one file and setup): the
scopes, launch modes, launch shapes (the paper's first) and MoE's configurations are its rows.

Files whose setups differ (GPU, driver, versions, NVSHMEM_/NCCL_ variables) are said, as compare
says them, and never fitted together. --predict beyond one NVLink domain is refused (exit 2):
across nodes the NIC path decides. --guide prints the guide alone (the README's "Which should I
use?" is its output), every launch shape. --ctas and --threads keep the bandwidth series (rma/...) of that launch
shape only: a launch sweep's other shapes, each a series of one size, are left out.`,
		Example: `  nvshbench model --example
  nvshbench model --detail --example
  nvshbench model --guide --format markdown --example
  nvshbench model --guide --margin 5% --example
  nvshbench model --predict 4,8 --sizes 4K,1M,256M --example
  nvshbench model --nic-gbps 400 --nics-per-node 8 --fabric-rtt 4us --example
  nvshbench model --guide --chart guide-charts --example
  nvshbench model --guide --ctas 32 --threads 256 --example`,
		RunE: func(c *cobra.Command, args []string) error {
			o.Files = args
			if err := checkChoice("format", o.Format, table.Formats); err != nil {
				return err
			}
			o.NIC.FabricRTT = o.RTT.Seconds()
			for _, n := range o.NS {
				if n < 2 {
					return usagef("--predict %d: want GPU counts of 2 or more", n)
				}
			}
			if err := o.NIC.Check(); err != nil {
				return usagef("%v", err)
			}
			if o.CTAs < 0 || o.Threads < 0 {
				return usagef("--ctas %d --threads %d: want a positive launch shape (or 0: every shape)", o.CTAs, o.Threads)
			}
			o.NSGiven = c.Flags().Changed("predict")
			return runModel(c, o)
		},
	}
	f := c.Flags()
	f.BoolVar(&o.Example, "example", false, "use the embedded example run")
	f.BoolVar(&o.Guide, "guide", false, "print the guide alone: the fastest implementation per size, every launch shape")
	f.BoolVar(&o.Detail, "detail", false, "every series' fit, every launch shape of the guide, NCCL's choice at every size")
	f.StringVarP(&o.Format, "format", "f", "text", "output format: text, markdown, csv, json")
	f.BoolVar(&o.Wide, "wide", false, "every column and every text in full")
	f.IntSliceVar(&o.NS, "predict", []int{4, 8}, "GPU counts of one node to predict AllReduce and all-to-all at (up to one NVLink domain: 8 on HGX H100 / H200)")
	f.StringVar(&o.Sizes, "sizes", "4K,64K,1M,16M,256M", "message sizes of the predictions")
	f.Float64SliceVar(&o.PerSMGBps, "persm-gbps", nil, "bytes per SM: also answer which mechanism moves these rates (GB/s) to the peer with the fewest SMs")
	f.StringVar(&o.Chart, "chart", "", "also draw the guide's charts (PNG, SVG) into this folder")
	addMarginFlag(f, &o.Margin)
	f.IntVar(&o.CTAs, "ctas", 0, "bandwidth series of this many CTAs only (the paper's and reproduce's size sweep: 32; 0: every launch)")
	f.IntVar(&o.Threads, "threads", 0, "bandwidth series of this many threads per CTA only (the paper's: 256; 0: every launch)")
	f.Float64Var(&o.NIC.Gbps, "nic-gbps", o.NIC.Gbps, "inter-node predictions: line rate of one NIC, 1 to 3200 Gb/s (ConnectX-7: 400)")
	f.IntVar(&o.NIC.PerNode, "nics-per-node", o.NIC.PerNode, "inter-node predictions: NICs per node (1 to 72)")
	f.IntVar(&o.NIC.GPUsPerNode, "gpus-per-node", o.NIC.GPUsPerNode, "inter-node predictions: GPUs per node (1 to 72)")
	f.IntVar(&o.NIC.Nodes, "nodes", o.NIC.Nodes, "inter-node predictions: nodes (2 or more)")
	f.Float64Var(&o.NIC.Ring, "ring-efficiency", o.NIC.Ring, "inter-node predictions: share of the nodes' NIC bandwidth a ring's busbw reaches (above 0, at most 1)")
	f.Float64Var(&o.NIC.Wire, "wire-efficiency", o.NIC.Wire, "inter-node predictions: payload share of the line rate (above 0, at most 1)")
	f.DurationVar(&o.RTT, "fabric-rtt", time.Duration(o.NIC.FabricRTT*1e9), "inter-node predictions: a GPU-initiated round trip through the NICs and one switch, beyond the on-node one (above 0, at most 1ms)")
	c.RegisterFlagCompletionFunc("format", cobra.FixedCompletions(table.Formats, cobra.ShellCompDirectiveNoFileComp))
	c.ValidArgsFunction = jsonlCompletion
	return c
}

func runModel(c *cobra.Command, o *modelOptions) error {
	rule, err := parseMargin(o.Margin)
	if err != nil {
		return err
	}
	sizes, err := units.ParseSizes(o.Sizes)
	if err != nil {
		return usagef("--sizes: %v", err)
	}
	files, err := inputFiles(o.Files, o.Example, c)
	if err != nil {
		return err
	}
	files = oneLaunchShape(files, o.CTAs, o.Threads)
	ns := o.NS
	if err := model.CheckN(files, ns); err != nil {
		if o.NSGiven {
			return usagef("--predict %v", err)
		}
		ns = nil
		for _, n := range o.NS {
			if model.CheckN(files, []int{n}) == nil {
				ns = append(ns, n)
			}
		}
	}
	fits := model.FitAll(model.Collect(files))
	guide := model.BuildGuide(fits, rule)
	rep := &table.Report{Wide: o.Wide}
	rep.Warnings = append(rep.Warnings, model.SetupDiffs(files)...)
	if len(rep.Warnings) > 0 {
		rep.Warnings = append(rep.Warnings, "each file is fitted on its own: no series, guide row or prediction spans files whose setups differ")
	}
	switch {
	case o.Guide:
		rep.Tables = append(rep.Tables, model.GuideTables(guide)...)
	case o.Detail:
		rep.Tables = append(rep.Tables, model.FitTables(fits)...)
		rep.Tables = append(rep.Tables, model.GuideTables(guide)...)
	default:
		if len(fits) > 0 {
			rep.Tables = append(rep.Tables, model.FitSummary(fits))
		}
		rep.Tables = append(rep.Tables, model.GuideSummary(guide)...)
	}
	var rates []float64
	for _, g := range o.PerSMGBps {
		if !(g > 0 && g < 1e6) { // NaN too
			return usagef("--persm-gbps %v: want a rate in GB/s above 0", g)
		}
		rates = append(rates, g*1e9)
	}
	perSM := model.PerSMGuide(files, rates, rule)
	rep.Tables = append(rep.Tables, perSM...)
	if len(guide.Comparisons) == 0 && len(perSM) == 0 {
		rep.Warnings = append(rep.Warnings, "no pattern has two implementations measured alike in these files: no guide")
	}
	if !o.Guide {
		models, skipped := model.Models(fits)
		for _, s := range skipped {
			rep.Warnings = append(rep.Warnings, s)
		}
		switch {
		case len(models) == 0:
			rep.Warnings = append(rep.Warnings, "no n-GPU prediction: it needs a 2-PE run with NCCL's ring (or our one-shot / two-shot, all-to-all) fitted, one launch per operation, α and a memory-served B determined")
		case len(ns) < len(o.NS):
			rep.Warnings = append(rep.Warnings, fmt.Sprintf("--predict %v: the counts beyond one NVLink domain of these GPUs are left out. %s", o.NS, model.InterNode))
		}
		if len(models) > 0 && len(ns) > 0 {
			rep.Tables = append(rep.Tables, model.PredictionTables(models, model.Predict(models, fits, ns, sizes, record.Paper()))...)
		}
		rep.Tables = append(rep.Tables, model.NICTable(model.PredictNIC(o.NIC, fits)))
		if ch := model.NCCLChoices(fits, rule); len(ch) > 0 && o.Detail {
			rep.Tables = append(rep.Tables, model.ChoiceTable(ch, rule))
		} else if len(ch) > 0 {
			rep.Tables = append(rep.Tables, model.ChoiceSummary(ch, rule))
		}
	}
	if err := table.Render(c.OutOrStdout(), rep, o.Format); err != nil {
		return err
	}
	for _, w := range rep.Warnings {
		fmt.Fprintf(c.ErrOrStderr(), "note: %s\n", w)
	}
	if o.Chart != "" {
		out, err := openOwned(o.Chart)
		if err != nil {
			return err
		}
		paths, err := writeCharts(out, model.GuideCharts(guide), plots.Formats)
		for _, p := range paths {
			fmt.Fprintln(c.ErrOrStderr(), p)
		}
		return err
	}
	return nil
}

// oneLaunchShape keeps, of each file's bandwidth points (rma/...), those of
// ctas CTAs and threads threads per CTA (0: any); everything else stays.
func oneLaunchShape(files []*record.File, ctas, threads int) []*record.File {
	if ctas == 0 && threads == 0 {
		return files
	}
	out := make([]*record.File, len(files))
	for i, f := range files {
		g := *f
		g.Points = nil
		for _, p := range f.Points {
			if strings.HasPrefix(p.ID, "rma/") && ((ctas > 0 && p.Params.CTAs != ctas) || (threads > 0 && p.Params.Threads != threads)) {
				continue
			}
			g.Points = append(g.Points, p)
		}
		out[i] = &g
	}
	return out
}
