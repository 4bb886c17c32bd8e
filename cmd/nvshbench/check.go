package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/nvshbench/nvshbench/harness"
	"github.com/nvshbench/nvshbench/record"
	"github.com/nvshbench/nvshbench/verdict"
)

// checkRows are what check measures beside the pair matrix: the floors of
// the round trips, and AllReduce and all-to-all with NCCL and NVSHMEM (a
// CTA each, and NCCL's own choice) at a few sizes, every rank's time kept.
var checkRows = []string{"limit/chase-peer", "limit/chase-local",
	"collectives/allreduce/nccl", "collectives/allreduce/nvshmem-block",
	"collectives/alltoall/nccl", "collectives/alltoall/nvshmem-block"}

type checkOptions struct {
	run   runOptions
	Bands string
	Judge string
	JSON  bool
}

// failedCheck is a check that found a FAIL (exit 5).
type failedCheck struct{ what string }

func (e failedCheck) Error() string { return e.what }

func newCheckCmd() *cobra.Command {
	o := &checkOptions{run: *newRunOptions()}
	o.run.SweepSize = "256M"
	c := &cobra.Command{
		Use:   "check",
		Short: "Bring-up acceptance: the pair matrix, floors, AllReduce and all-to-all, PASS / WARN / FAIL per GPU, pair and node",
		Long: `check measures what bringing up a node or a cluster needs and judges it: the pair matrix
(every ordered pair of PEs: the copy references, put and get bandwidth at --matrix-size, the
8-byte round trips, NVSHMEM beside NCCL's device API; each GPU's local copy), the floors of the
round trips, and AllReduce and all-to-all with NCCL and NVSHMEM at --sizes, every rank's time
kept. It prints PASS, WARN or FAIL per GPU, per pair, per node and per straggling rank, each
with its reason and the band it was held to: the node's own median of the row and link class,
the path's physical ceiling (NVML), and a reference band per GPU kind and link class (the
shipped bands, derived from committed runs, where they are for this GPU kind; --bands FILE
gives others). What this job cannot run is waived with the reason (NCCL with several PEs on
one GPU, a path without a NIC). The results file is written as every run's; --judge FILE
judges an existing file without measuring.

Exit status: 0 when nothing fails (WARN included), 5 when something FAILs, 2 for refused
input (a band file that does not parse or is for another GPU kind, a file without the pair
matrix, a node missing from the job, a PE that died mid-matrix: every pair measured before it
is kept in the file).`,
		Example: `  nvshbench check --out node1-check.jsonl
  nvshbench check --json --out node1-check.jsonl
  nvshbench check --bands my-bands.json --out node1-check.jsonl
  # on one GPU, 8 PEs: functional only (time-sliced PEs say nothing of links)
  nvshbench check --pes-per-gpu 8 --matrix-size 64M
  # without a GPU: the fake GPU layer writes SYNTHETIC numbers (NVSHBENCH_FAKE_GPUS=8: a fake node of 8)
  nvshbench check --shim fake --pes-per-gpu 4 --out fake-check.jsonl
  nvshbench check --judge fake-check.jsonl
  nvshbench check --judge fake-check.jsonl --json
`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, args []string) error {
			return runCheck(c.Context(), o, c.OutOrStdout(), c.ErrOrStderr())
		},
	}
	f := c.Flags()
	r := &o.run
	f.StringVarP(&r.Out, "out", "o", "", "results file (default nvshbench-check-HOST.jsonl); an existing file is resumed by the same setup")
	f.IntVar(&r.GPUs, "gpus", 0, "GPUs to use (default: all visible)")
	f.IntVar(&r.PEsPerGPU, "pes-per-gpu", 1, "PEs per GPU (8 on one GPU runs the matrix functionally: no link is crossed)")
	f.StringVar(&r.MatrixSize, "matrix-size", "256M", "the pair matrix's bandwidth size (beyond twice the L2)")
	f.StringVar(&r.Sizes, "sizes", "4K,1M,16M", "AllReduce and all-to-all sizes")
	f.IntVar(&r.Samples, "samples", 3, "timed launches per point")
	f.IntVar(&r.Warmup, "warmup", 1, "untimed launches before the samples")
	f.StringVar(&r.Path, "path", "p2p", "the remote transport of pairs across nodes: p2p (NVSHMEM's default between nodes: the proxy), proxy or ibgda")
	f.BoolVar(&r.Bidir, "bidir", true, "also measure each pair's bidirectional put and get")
	f.StringVar(&r.Shim, "shim", "", "path of a built libnvshbench.so (default: build it into the cache), or fake: a fake GPU that writes SYNTHETIC numbers")
	f.DurationVar(&r.Timeout, "timeout", 60*time.Second, "a point that takes longer is recorded as an error and its workers killed")
	f.DurationVar(&r.Startup, "startup-timeout", startupTimeout, "what the first point of each worker group gets on top of --timeout")
	f.StringVar(&r.Label, "label", "", "a name for this run")
	f.StringVar(&o.Bands, "bands", "", "reference bands (JSON: per GPU kind and link class, each with its source); default: the shipped bands where they are for this GPU kind")
	f.StringVar(&o.Judge, "judge", "", "judge this results file (of check or run --matrix) without measuring")
	f.BoolVar(&o.JSON, "json", false, "print the verdict as JSON (for schedulers) instead of the tables")
	return c
}

func runCheck(ctx context.Context, o *checkOptions, stdout, stderr io.Writer) error {
	var bands *verdict.Bands
	if o.Bands != "" {
		b, err := verdict.ReadBands(o.Bands)
		if err != nil {
			return usageError{err}
		}
		bands = b
	}
	path := o.Judge
	var measured error
	if path == "" {
		r := &o.run
		r.Config.Matrix = true
		r.Benches = append(harness.MatrixRows(), checkRows...)
		r.Iters = 0
		if r.Out == "" {
			host, _ := os.Hostname()
			r.Out = fmt.Sprintf("nvshbench-check-%s.jsonl", host)
		}
		err := interruptible(ctx, stderr, func(ctx context.Context) error {
			_, err := measure(ctx, r, stderr)
			return err
		})
		var fp failedPoints
		switch {
		case errors.As(err, &fp):
			measured = err // judged below: its points' errors are FAILs, or a PE that died
		case err != nil:
			return err
		}
		path = r.Out
		if _, serr := os.Stat(path); serr != nil { // nothing written (a launcher's rank other than 0)
			return err
		}
	}
	f, err := harness.Reader().ReadFile(path)
	if err != nil {
		return err
	}
	if died := diedPE(f); died != "" {
		n := 0
		for i := range f.Points {
			if f.Points[i].Params.Extra[harness.MatrixKey] != "" && f.Points[i].Status == record.StatusOK {
				n++
			}
		}
		return usagef("%s; the %d matrix point(s) measured before it are kept in %s: bring that GPU or node back (nvidia-smi, the node's logs) and run check again with a new --out; check --judge %s judges what was measured",
			died, n, path, path)
	}
	if !hasMatrix(f) { // a verdict of no pair and no GPU would PASS what was never measured
		return usagef("%s holds no point of the pair matrix: nothing to judge a node by; judge the file of a check (or of run --matrix), or run check", path)
	}
	if bands == nil {
		bands = verdict.DefaultBands(f.Header)
	}
	v, err := verdict.Judge(f, verdict.Options{Bands: bands})
	if err != nil {
		return usageError{err}
	}
	if o.JSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(v); err != nil {
			return err
		}
	} else {
		writeVerdict(stdout, v, path)
	}
	if v.Level == verdict.Fail {
		return failedCheck{fmt.Sprintf("check: FAIL (%s)", failSummary(v))}
	}
	if measured != nil && o.Judge == "" {
		return measured
	}
	return nil
}

// hasMatrix: f holds a point of the pair matrix (measured, waived or failed).
func hasMatrix(f *record.File) bool {
	for i := range f.Points {
		if f.Points[i].Params.Extra[harness.MatrixKey] != "" {
			return true
		}
	}
	return false
}

// diedPE says which PE's worker ended during the run ("" if none did): a
// point errored because its worker exited.
func diedPE(f *record.File) string {
	for i := range f.Points {
		p := &f.Points[i]
		if p.Status == record.StatusError && (strings.Contains(p.Reason, "exited") || strings.Contains(p.Reason, "died")) {
			at := p.ID
			if p.Params.Pair != "" {
				at += " pair " + p.Params.Pair
			}
			return fmt.Sprintf("a PE's worker ended mid-matrix at %s (%s)", at, firstLine(p.Reason))
		}
	}
	return ""
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	return s
}

func failSummary(v *verdict.Verdict) string {
	var parts []string
	count := func(what string, ss []*verdict.Subject) {
		n := 0
		for _, s := range ss {
			if s.Level == verdict.Fail {
				n++
			}
		}
		if n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n, what))
		}
	}
	count("pair(s)", v.Pairs)
	count("GPU(s)", v.GPUs)
	count("node(s)", v.Nodes)
	count("rank(s)", v.Ranks)
	count("job", []*verdict.Subject{v.Job})
	return strings.Join(parts, ", ") + " failed"
}

// writeVerdict prints the verdict: a line per GPU, pair, node and rank,
// the reasons of each that is not PASS under it.
func writeVerdict(w io.Writer, v *verdict.Verdict, path string) {
	section := func(title string, ss []*verdict.Subject) {
		if len(ss) == 0 {
			return
		}
		fmt.Fprintf(w, "%s\n", title)
		for _, s := range ss {
			fmt.Fprintf(w, "  %-4s  %s  (%d figure(s) held to a band)\n", s.Level, s.Name, s.Checked)
			for _, f := range s.Findings {
				fmt.Fprintf(w, "        %s: %s", f.Level, f.Reason)
				if f.Band != "" {
					fmt.Fprintf(w, "; band: %s", f.Band)
				}
				fmt.Fprintln(w)
			}
		}
	}
	section("GPUs", v.GPUs)
	section("Pairs", v.Pairs)
	section("Nodes", v.Nodes)
	section("Ranks", v.Ranks)
	if v.Job.Level > verdict.Pass {
		section("Job", []*verdict.Subject{v.Job})
	}
	for _, wv := range v.Waived {
		fmt.Fprintf(w, "waived: %s (%d point(s)): %s\n", wv.Row, wv.Points, wv.Reason)
	}
	if v.Bands != "" {
		fmt.Fprintf(w, "reference bands: %s\n", v.Bands)
	} else {
		fmt.Fprintln(w, "reference bands: none for this GPU kind (--bands FILE gives some)")
	}
	for _, n := range v.Notes {
		fmt.Fprintf(w, "note: %s\n", n)
	}
	if v.SlowestNode != "" {
		fmt.Fprintf(w, "slowest node: %s\n", v.SlowestNode)
	}
	fmt.Fprintf(w, "check: %s (%s)\n", v.Level, path)
}
