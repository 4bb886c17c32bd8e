package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/nvshbench/nvshbench/harness"
	"github.com/nvshbench/nvshbench/internal/table"
	"github.com/nvshbench/nvshbench/launcher"
	"github.com/nvshbench/nvshbench/plots"
	"github.com/nvshbench/nvshbench/record"
	"github.com/nvshbench/nvshbench/report"
)

type reproduceOptions struct {
	Out   string
	Quick bool
	run   runOptions
}

// paperBenchmarks are the sweeps behind the paper's figures that this
// version implements: Fig. 4 (RMA bandwidth by op and path, with the
// limits) and the latency figures.
var (
	paperBandwidth = []string{"rma/put/block", "rma/get/block", "rma/p", "rma/g", "rma/st", "rma/ld", "limit"}
	paperLatency   = []string{"latency"}
	paperAllReduce = []string{"collectives/allreduce"}
	// The paper's load-bearing case: MoE dispatch and combine.
	moeBenches = []string{"moe"}
	// Beyond the paper: NCCL's device API beside NVSHMEM (the AllReduce
	// implementations are in paperAllReduce).
	deviceAPI = []string{"rma/nccl-lsa/put/block", "rma/nccl-lsa/get/block", "rma/nccl-gin"}
)

func newReproduceCmd() *cobra.Command {
	o := &reproduceOptions{run: *newRunOptions()}
	c := &cobra.Command{
		Use:   "reproduce",
		Short: "Regenerate the paper's figures on this node: results, report, charts in one folder",
		Long: `reproduce runs the sweeps behind "Demystifying NVSHMEM" Fig. 4 with the paper's settings
(32 CTAs × 256 threads, 8 B … 1 GiB, plus a CTAs × threads sweep for each op's peak), the
latency suite (8 B … 1 MiB) with its in-run floors, Fig. 5 (every AllReduce implementation,
float sum, 4 B … 1 GiB, one launch per operation and fused, timed launches in a CUDA graph) and
MoE dispatch/combine (DeepEP's workload, every implementation) on all local GPUs, then writes
into --out: results.jsonl, report.md (one row per published number:
measured, paper, ratio, the in-run limit and the fraction of it, or why it was not measured),
the charts (PNG and SVG) and index.md linking them. Paths this machine lacks (IBGDA and the
CPU proxy without a NIC) are recorded as waived. Interrupted, it keeps every finished point;
run it again with the same --out to resume.`,
		Example: `  nvshbench reproduce --out repro-h200
  nvshbench reproduce --quick --out repro-quick
  nvshbench reproduce --quick --shim fake --out repro-fake   # no GPU: SYNTHETIC numbers, the whole pipeline
  srun -N1 --gpus-per-node=8 nvshbench reproduce --out repro-$SLURM_JOB_ID`,
		Args: noArgs,
		RunE: func(c *cobra.Command, args []string) error {
			return interruptible(c.Context(), c.ErrOrStderr(), func(ctx context.Context) error {
				return runReproduce(ctx, o, c.OutOrStdout(), c.ErrOrStderr())
			})
		},
	}
	c.Flags().StringVarP(&o.Out, "out", "o", "", "output folder (default nvshbench-reproduce-HOST)")
	c.Flags().BoolVar(&o.Quick, "quick", false, "a short pass: sizes 1 KiB…1 GiB by ×4, 5 samples, no launch sweep")
	c.Flags().IntVar(&o.run.GPUs, "gpus", 0, "GPUs to use (default: all visible)")
	c.Flags().IntVar(&o.run.PEsPerGPU, "pes-per-gpu", 1, "PEs per GPU (2 on a one-GPU machine exercises the multi-PE paths)")
	c.Flags().StringVar(&o.run.Shim, "shim", "", "path of a built libnvshbench.so (default: build into the cache), or fake: a fake GPU that writes SYNTHETIC numbers, to see the tool work on a machine without one")
	c.Flags().DurationVar(&o.run.Timeout, "timeout", 120*time.Second, "a point that takes longer is recorded as an error and its workers killed")
	c.Flags().DurationVar(&o.run.Startup, "startup-timeout", startupTimeout, "what the first point of each worker group gets on top of --timeout, for NVSHMEM's start-up")
	c.Flags().StringVar(&o.run.Label, "label", "", "a name for this run")
	return c
}

func runReproduce(ctx context.Context, o *reproduceOptions, stdout, stderr io.Writer) error {
	if o.Out == "" {
		host, _ := os.Hostname()
		o.Out = "nvshbench-reproduce-" + host
	}
	// Fail fast, before writing anything, on a machine without a GPU.
	if err := checkTempDir(); err != nil {
		return err
	}
	gpu, err := openGPU(o.run.Shim, stderr)
	if err != nil {
		return err
	}
	if err := claimFolder(o.Out); err != nil {
		return err
	}
	synthetic := gpu.shimPath == "fake"
	if synthetic {
		fmt.Fprintf(stderr, "nvshbench: %s\n", syntheticNote)
	}
	resFile := filepath.Join(o.Out, "results.jsonl")
	r := o.run
	r.Benches = append(append([]string{}, paperBandwidth...), deviceAPI...)
	r.Out = resFile
	r.Sizes, r.CTAs, r.Threads, r.SweepSize, r.Path = "8:1G", harness.DefaultCTAs, harness.DefaultThreads, "256M", "p2p"
	r.Warmup, r.Samples, r.Quick = 2, 10, o.Quick
	r.LaunchSweep = !o.Quick
	start := time.Now()
	err = runSweeps(ctx, o, r, resFile, stderr)
	if err != nil && ctx.Err() == nil && exitCode(err) != exitError {
		return err // refused (exit 2) or no GPU: nothing measured to report
	}
	// Finished, failed or interrupted: the report, the charts and the index
	// of what the results hold.
	fmt.Fprintf(stderr, "nvshbench: measured in %s\n", time.Since(start).Round(time.Second))
	if _, serr := os.Stat(resFile); serr == nil {
		if werr := writeReproduction(o.Out, resFile, stdout); werr != nil {
			err = joinErrors(err, werr)
		}
	}
	if synthetic {
		fmt.Fprintf(stderr, "nvshbench: %s\n", syntheticNote)
	}
	return err
}

// runSweeps measures reproduce's sweeps (r is the first's options) into
// resFile. A sweep whose points failed, or that stopped on an error of its
// own (a worker that cannot start, a write that failed), is said and the
// next one runs: the error is the command's at the end (exit 1). A refusal
// (exit 2), no GPU, or an interruption stops them all.
func runSweeps(ctx context.Context, o *reproduceOptions, r runOptions, resFile string, stderr io.Writer) error {
	var failed failedPoints
	var stopped []error
	sweep := func(name string, ro *runOptions) error {
		_, err := measure(ctx, ro, stderr)
		var fp failedPoints
		switch {
		case err == nil:
		case errors.As(err, &fp):
			failed.add(fp)
		case ctx.Err() != nil || exitCode(err) != exitError:
			return err
		default:
			fmt.Fprintf(stderr, "nvshbench: the %s sweep stopped: %v; going on with the next\n", name, err)
			stopped = append(stopped, fmt.Errorf("the %s sweep stopped: %w", name, err))
		}
		return nil
	}
	if err := sweep("RMA", &r); err != nil {
		return err
	}
	// Latency: 8 B … 1 MiB (the 256 B row of the paper's table included).
	lat := r
	lat.Benches, lat.LaunchSweep, lat.Sizes = paperLatency, false, "8:1M"
	if o.Quick {
		lat.Sizes = "8,256,4K,64K,1M"
	}
	if err := sweep("latency", &lat); err != nil {
		return err
	}
	// Fig. 5: AllReduce, float sum, 4 B … 1 GiB, iterations captured in a CUDA
	// graph as in the paper.
	ar := r
	ar.Benches, ar.LaunchSweep, ar.Graph, ar.Sizes = paperAllReduce, false, true, "4:1G"
	if o.Quick {
		ar.Sizes = "4:1G:16"
	}
	if err := sweep("AllReduce", &ar); err != nil {
		return err
	}
	// MoE dispatch and combine (DeepEP's workload): every implementation,
	// both modes; a quick pass takes two token counts and the uniform routing.
	moe := r
	moe.Benches, moe.LaunchSweep, moe.Graph = moeBenches, false, false
	moe.MoE = harness.MoEConfig{Tokens: harness.DefaultMoE().Tokens, Hidden: 7168, TopK: 8, Experts: 256, DTypes: []string{"bf16"},
		Modes: []string{"ll", "normal"}, Routings: []string{"uniform", "skewed"}, Zipf: harness.DefaultMoE().Zipf}
	if o.Quick {
		moe.MoE.Tokens, moe.MoE.Routings = []int{128, 4096}, []string{"uniform"}
	}
	if err := sweep("MoE", &moe); err != nil {
		return err
	}
	// The remote paths of Fig. 4 (IBGDA): measured where a NIC exists, else
	// recorded as waived with the reason.
	ib := r
	ib.Benches = []string{"rma/put/block", "rma/get/block", "rma/p", "rma/g", "latency/put/block", "latency/get/block", "latency/p", "latency/g"}
	ib.Path, ib.Sizes, ib.LaunchSweep = "ibgda", "256,1M", false
	ib.pathPerPoint = true // the file's header is the first sweep's: IBGDA's variables are these points' own
	if why := harness.NICReason(); why != "" {
		cfg, err := ib.config()
		if err != nil {
			return err
		}
		benches, _ := harness.Select(ib.Benches)
		cfg.PEs = 0
		plan := harness.BuildPlan(benches, cfg)
		var items []harness.Item
		for _, it := range plan.Items {
			if !strings.HasPrefix(it.ID, "limit/") {
				items = append(items, it)
			}
		}
		plan.Items = items
		if _, err := launcher.Waive(launcher.Options{Out: resFile, Plan: plan}, why); err != nil {
			return err
		}
	} else if err := sweep("IBGDA", &ib); err != nil {
		return err
	}
	var errs []error
	if failed.errors+failed.failed+failed.kept > 0 {
		errs = append(errs, failed)
	}
	return joinErrors(append(errs, stopped...)...)
}

// joined is several errors as one, on one line; errors.As finds each.
type joined []error

func (j joined) Error() string {
	msgs := make([]string, len(j))
	for i, e := range j {
		msgs[i] = e.Error()
	}
	return strings.Join(msgs, "; ")
}
func (j joined) Unwrap() []error { return j }

// joinErrors is errs but the nil ones: nil, one error, or joined.
func joinErrors(errs ...error) error {
	var j joined
	for _, e := range errs {
		if e != nil {
			j = append(j, e)
		}
	}
	switch len(j) {
	case 0:
		return nil
	case 1:
		return j[0]
	}
	return j
}

// syntheticNote is said on the terminal when the fake GPU layer measured.
const syntheticNote = "SYNTHETIC: --shim fake is the fake GPU layer; every number it writes is invented for testing, not a measurement"

// claimFolder makes dir a reproduce folder: a new or empty folder, or an
// earlier reproduce folder (whose results the run then resumes, if its
// setup matches). Any other folder with files in it is refused: reproduce
// never replaces a file it did not write.
func claimFolder(dir string) error {
	ents, err := os.ReadDir(dir)
	if err != nil && !os.IsNotExist(err) {
		return err
	}
	o, err := openOwned(dir)
	if err != nil {
		return err
	}
	if o.claimed() {
		return nil
	}
	if len(ents) > 0 {
		return usagef("--out %s: the folder has files and is not a reproduce folder (no %s): reproduce never replaces files it did not write; choose a new or empty folder", dir, manifestName)
	}
	o.list["results.jsonl"] = true
	return o.saveManifest()
}

// writeReproduction renders report.md, the charts and index.md from the
// results file, through the same code as report and plot.
func writeReproduction(dir, resFile string, stdout io.Writer) error {
	f, err := harness.Reader().ReadFile(resFile)
	if err != nil {
		return err
	}
	ref := record.Paper()
	rep := report.Build([]*record.File{f}, ref, report.Options{Points: true})
	var md strings.Builder
	fmt.Fprintf(&md, "# nvshbench reproduction of \"Demystifying NVSHMEM\"\n\n")
	rep.Wide = true // a page, not a terminal: every column
	if err := table.Render(&md, rep, "markdown"); err != nil {
		return err
	}
	out, err := openOwned(dir)
	if err != nil {
		return err
	}
	if err := out.write("report.md", []byte(md.String())); err != nil {
		return err
	}
	specs := plots.Build([]*record.File{f}, ref)
	paths, err := writeCharts(out, specs, plots.Formats)
	if err != nil {
		return err
	}
	var idx strings.Builder
	h := f.Header
	fmt.Fprintf(&idx, "# nvshbench reproduction\n\n")
	fmt.Fprintf(&idx, "- host: %s, %d GPU(s): %s\n", h.Host, len(h.GPUs), gpuNames(h.GPUs))
	fmt.Fprintf(&idx, "- driver %s, CUDA %s, NVSHMEM %s, NCCL %s; %d PE(s); created %s by nvshbench %s\n", h.Driver, h.CUDA, h.NVSHMEM, h.NCCL, h.PEs, h.Created, h.ToolVersion)
	for _, n := range h.Notes {
		fmt.Fprintf(&idx, "- note: %s\n", n)
	}
	fmt.Fprintf(&idx, "\n## Files\n\n- [results.jsonl](results.jsonl): every point, raw samples included (the input of everything below)\n- [report.md](report.md): the paper's tables beside the measured values\n")
	for _, p := range paths {
		b := filepath.Base(p)
		fmt.Fprintf(&idx, "- [%s](%s)\n", b, b)
	}
	fmt.Fprintf(&idx, "\n## Charts\n\n")
	for _, s := range specs {
		fmt.Fprintf(&idx, "### %s\n\n![%s](%s.png)\n\n", s.Title, s.Title, s.Name)
	}
	if err := out.write("index.md", []byte(idx.String())); err != nil {
		return err
	}
	fmt.Fprintln(stdout, filepath.Join(dir, "index.md"))
	return nil
}

func gpuNames(gs []record.GPU) string {
	var n []string
	for _, g := range gs {
		n = append(n, g.Name)
	}
	return strings.Join(n, ", ")
}
