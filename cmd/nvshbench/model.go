package main

import (
	"fmt"
	"math"
	"time"

	"github.com/spf13/cobra"

	"github.com/nvshbench/nvshbench/harness"
	"github.com/nvshbench/nvshbench/model"
	"github.com/nvshbench/nvshbench/plots"
	"github.com/nvshbench/nvshbench/report"
)

type modelOptions struct {
	Files   []string
	Example bool
	Guide   bool
	Format  string
	Wide    bool
	NS      []int
	Sizes   string
	Chart   string
	Margin  string
	NIC     model.NIC
	RTT     time.Duration
}

func newModelCmd() *cobra.Command {
	o := &modelOptions{NIC: model.DefaultNIC()}
	c := &cobra.Command{
		Use:   "model [FILE|LABEL=FILE]...",
		Short: "From measurements to decisions: α–β fits, the fastest implementation per size, n-GPU predictions",
		Long: `model reads results files (no GPU needed) and prints:

  fits        T(S) = α + S/B for every series (a benchmark at fixed parameters, on one file's PEs,
              launch mode and path), robust least squares on relative error, split into up to
              three segments where a protocol or algorithm switches; B beside the link ceiling and
              the copy reference of the same run, α beside the in-run floor and the launch.
  guide       for each pattern with several implementations on the same GPUs (one-sided put/get,
              AllReduce, all-gather, all-to-all, MoE dispatch/combine): the fastest per size where
              its lead is at least --margin and the 95 % interval of the time ratio (corrected
              over the series' sizes) excludes 1, else "tie (within x %)"; implementations that
              ran the same code here as one; cache-served sizes apart ("in cache only"); where the
              winner changes between memory-served sizes (solved from the fits). Only like with
              like: the same file, PE count, launch mode, dtype and graph setting.
  predictions AllReduce and all-to-all at --predict GPUs from a 2-PE run's fits (ring, one-shot,
              two-shot, NCCL's tuning model), beside files of that many PEs where given; the
              paper's inter-node rows predicted from a NIC's line rate (--nic-gbps ...); and
              NCCL's own algorithm against the ones forced in the same run.

--guide prints the guide alone (the README's "Which should I use?" is its output).`,
		Example: `  nvshbench model --example
  nvshbench model --guide --format markdown --example
  nvshbench model --guide --margin 5% --example
  nvshbench model --predict 4,8 --sizes 4K,1M,256M --example
  nvshbench model --nic-gbps 400 --nics-per-node 8 --fabric-rtt 4us --example
  nvshbench model --guide --chart guide-charts --example`,
		RunE: func(c *cobra.Command, args []string) error {
			o.Files = args
			if err := checkChoice("format", o.Format, report.Formats); err != nil {
				return err
			}
			o.NIC.FabricRTT = o.RTT.Seconds()
			for _, n := range o.NS {
				if n < 2 || n > 1024 {
					return usagef("--predict %d: want GPU counts from 2 to 1024", n)
				}
			}
			for _, v := range []struct {
				name string
				v    float64
				ok   bool
			}{
				{"--nic-gbps", o.NIC.Gbps, o.NIC.Gbps > 0 && o.NIC.Gbps <= 10000},
				{"--ring-efficiency", o.NIC.Ring, o.NIC.Ring > 0 && o.NIC.Ring <= 1},
				{"--wire-efficiency", o.NIC.Wire, o.NIC.Wire > 0 && o.NIC.Wire <= 1},
				{"--fabric-rtt", o.NIC.FabricRTT, o.NIC.FabricRTT >= 0 && o.NIC.FabricRTT < 1},
			} {
				if !v.ok || math.IsNaN(v.v) {
					return usagef("%s %v: out of range", v.name, v.v)
				}
			}
			if o.NIC.PerNode < 1 || o.NIC.GPUsPerNode < 1 || o.NIC.Nodes < 2 {
				return usagef("--nics-per-node, --gpus-per-node must be at least 1 and --nodes at least 2")
			}
			return runModel(c, o)
		},
	}
	f := c.Flags()
	f.BoolVar(&o.Example, "example", false, "use the embedded example run")
	f.BoolVar(&o.Guide, "guide", false, "print the guide alone: the fastest implementation per size")
	f.StringVarP(&o.Format, "format", "f", "text", "output format: text, markdown, csv, json")
	f.BoolVar(&o.Wide, "wide", false, "every column and every text in full")
	f.IntSliceVar(&o.NS, "predict", []int{4, 8}, "GPU counts to predict AllReduce and all-to-all at")
	f.StringVar(&o.Sizes, "sizes", "4K,64K,1M,16M,256M", "message sizes of the predictions")
	f.StringVar(&o.Chart, "chart", "", "also draw the guide's charts (PNG, SVG) into this folder")
	addMarginFlag(f, &o.Margin)
	f.Float64Var(&o.NIC.Gbps, "nic-gbps", o.NIC.Gbps, "inter-node predictions: line rate of one NIC, Gb/s (ConnectX-7: 400)")
	f.IntVar(&o.NIC.PerNode, "nics-per-node", o.NIC.PerNode, "inter-node predictions: NICs per node")
	f.IntVar(&o.NIC.GPUsPerNode, "gpus-per-node", o.NIC.GPUsPerNode, "inter-node predictions: GPUs per node")
	f.IntVar(&o.NIC.Nodes, "nodes", o.NIC.Nodes, "inter-node predictions: nodes")
	f.Float64Var(&o.NIC.Ring, "ring-efficiency", o.NIC.Ring, "inter-node predictions: share of the nodes' NIC bandwidth a ring's busbw reaches")
	f.Float64Var(&o.NIC.Wire, "wire-efficiency", o.NIC.Wire, "inter-node predictions: payload share of the line rate")
	f.DurationVar(&o.RTT, "fabric-rtt", time.Duration(o.NIC.FabricRTT*1e9), "inter-node predictions: a GPU-initiated round trip through the NICs and one switch, beyond the on-node one")
	c.RegisterFlagCompletionFunc("format", cobra.FixedCompletions(report.Formats, cobra.ShellCompDirectiveNoFileComp))
	c.ValidArgsFunction = jsonlCompletion
	return c
}

func runModel(c *cobra.Command, o *modelOptions) error {
	rule, err := parseMargin(o.Margin)
	if err != nil {
		return err
	}
	sizes, err := harness.ParseSizes(o.Sizes)
	if err != nil {
		return usagef("--sizes: %v", err)
	}
	files, err := inputFiles(o.Files, o.Example, c)
	if err != nil {
		return err
	}
	fits := model.FitAll(model.Collect(files))
	guide := model.BuildGuide(fits, rule)
	rep := &report.Report{Wide: o.Wide}
	if !o.Guide {
		rep.Tables = append(rep.Tables, model.FitTable(fits))
	}
	rep.Tables = append(rep.Tables, model.GuideTables(guide)...)
	if len(guide.Comparisons) == 0 {
		rep.Warnings = append(rep.Warnings, "no pattern has two implementations measured alike in these files: no guide")
	}
	if !o.Guide {
		models := model.Models(fits)
		if len(models) > 0 {
			rep.Tables = append(rep.Tables, model.PredictionTable(models, model.Predict(models, fits, o.NS, sizes)))
		} else {
			rep.Warnings = append(rep.Warnings, "no n-GPU prediction: it needs a 2-PE run with NCCL's ring (or our one-shot / two-shot, all-to-all) fitted, one launch per operation")
		}
		rep.Tables = append(rep.Tables, model.NICTable(model.PredictNIC(o.NIC, fits)))
		if ch := model.NCCLChoices(fits); len(ch) > 0 {
			rep.Tables = append(rep.Tables, model.ChoiceTable(ch))
		}
	}
	if err := report.Render(c.OutOrStdout(), rep, o.Format); err != nil {
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
