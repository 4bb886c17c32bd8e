package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/nvshbench/nvshbench/cuda"
	"github.com/nvshbench/nvshbench/harness"
	"github.com/nvshbench/nvshbench/internal/units"
	"github.com/nvshbench/nvshbench/launcher"
	"github.com/nvshbench/nvshbench/record"

	// The suites register their benchmarks.
	_ "github.com/nvshbench/nvshbench/suites/collectives"
	_ "github.com/nvshbench/nvshbench/suites/host"
	_ "github.com/nvshbench/nvshbench/suites/latency"
	_ "github.com/nvshbench/nvshbench/suites/moe"
	_ "github.com/nvshbench/nvshbench/suites/persm"
	_ "github.com/nvshbench/nvshbench/suites/rma"
)

type runOptions struct {
	// Config is the harness configuration the flags make: the flags that
	// are one of its fields bind to it (options start from
	// harness.DefaultConfig: newRunOptions); config() parses the others
	// into it.
	harness.Config
	Benches   []string
	Out       string
	GPUs      int
	PEsPerGPU int
	// The text of --sizes, --sweep-size and --sm-budgets, which config()
	// parses into the Config fields of those names.
	Sizes, SweepSize string
	MatrixSize       string // --matrix-size
	SMBudgets        []string
	NoVerify         bool
	Timeout          time.Duration
	Startup          time.Duration // --startup-timeout
	StopOnError      bool
	Shim             string
	Label            string
	NVSHMEMNCCL      string
	// set on the command line (not defaults): checked against what the
	// selected benchmarks take
	ctasSet, threadsSet bool
	// cmd is the command whose flags were parsed (nil when a caller built
	// the options, as reproduce does): flags that select points are
	// checked against the benchmarks that take them.
	cmd *cobra.Command
	// pathPerPoint: the variables --path sets are the points' own
	// (params.env), not the run's (the header's): reproduce's remote sweep,
	// appended to a file the other sweeps wrote without them.
	pathPerPoint bool
}

// newRunOptions are options with the harness's default configuration,
// before any flag binds to them.
func newRunOptions() *runOptions { return &runOptions{Config: harness.DefaultConfig()} }

func addRunFlags(c *cobra.Command, o *runOptions) {
	f := c.Flags()
	f.StringVarP(&o.Out, "out", "o", "", "results file (default nvshbench-HOST.jsonl in the current folder); an existing file is resumed by the same setup, never overwritten")
	f.IntVar(&o.GPUs, "gpus", 0, "GPUs to use, one worker per PE (default: all visible)")
	f.IntVar(&o.PEsPerGPU, "pes-per-gpu", 1, "PEs per GPU; 2 on one GPU tests multi-PE code paths (not link performance)")
	f.StringVar(&o.Sizes, "sizes", "8:1G", "message sizes: LO:HI (the powers of two from a power-of-two LO), LO:HI:FACTOR, or a list 256,4K,1M")
	f.IntVar(&o.CTAs, "ctas", harness.DefaultCTAs, "CTAs per launch (the paper: 32)")
	f.IntVar(&o.Threads, "threads", harness.DefaultThreads, "threads per CTA (the paper: 256)")
	f.BoolVar(&o.LaunchSweep, "launch-sweep", false, "also sweep CTAs × threads at --sweep-size to find each op's peak")
	f.StringVar(&o.SweepSize, "sweep-size", "256M", "message size of the launch sweep")
	f.StringVar(&o.Path, "path", "p2p", "path to measure: p2p (NVLink/PCIe load-store), proxy (CPU proxy over IB), ibgda")
	f.StringVar(&o.Pair, "pair", "", "point-to-point rows: measure PE FROM towards PE TO (FROM:TO) instead of the pair --path chooses (p2p: two GPUs of a node; proxy, ibgda: two nodes)")
	f.BoolVar(&o.Matrix, "matrix", false, "the pair matrix: the point-to-point rows of 'nvshbench check' (copy references, put/get bandwidth at --matrix-size, 8-byte round trips; NVSHMEM and NCCL's device API) for every ordered pair of PEs, and each GPU's local copy")
	f.StringVar(&o.MatrixSize, "matrix-size", "256M", "the pair matrix's bandwidth size (beyond twice the L2: a link's figure, not a cache's)")
	f.IntVar(&o.Iters, "iters", 0, "operations per timed launch (0: calibrated so one launch takes about 20 ms, 1..1000)")
	f.IntVar(&o.Warmup, "warmup", 2, "untimed launches before the samples (0..1000)")
	f.IntVar(&o.Samples, "samples", 10, "timed launches per point (1..10000)")
	f.BoolVar(&o.NoVerify, "no-verify", false, "skip the data check of every point (recorded in the results)")
	f.BoolVar(&o.CorruptChecks, "corrupt-checks", false, "tests only: damage one element of what each check reads, so every verified point must fail")
	_ = f.MarkHidden("corrupt-checks")
	f.BoolVar(&o.Bidir, "bidir", false, "also measure bidirectional put/get")
	f.BoolVar(&o.Blocking, "blocking", false, "also measure the blocking forms of put/get")
	f.DurationVar(&o.Timeout, "timeout", 120*time.Second, "a point that takes longer is recorded as an error and its workers killed")
	f.DurationVar(&o.Startup, "startup-timeout", startupTimeout, "what the first point of each worker group gets on top of --timeout, for NVSHMEM's start-up")
	f.BoolVar(&o.StopOnError, "stop-on-error", false, "stop at the first point that errors instead of going on")
	f.StringVar(&o.Shim, "shim", "", "path of a built libnvshbench.so (default: build it into the cache when missing or stale), or fake: a fake GPU that writes SYNTHETIC numbers")
	f.StringVar(&o.Label, "label", "", "a name for this run, shown in reports and charts (no control characters)")
	f.BoolVar(&o.Quick, "quick", false, "fewer sizes (1 KiB…1 GiB by ×4) and 5 samples")
	f.StringSliceVar(&o.DTypes, "dtypes", []string{"float"}, "collectives: data types of AllReduce (float, bf16, half)")
	f.BoolVar(&o.Graph, "graph", false, "collectives: capture the timed iterations in a CUDA graph (as the paper did)")
	f.StringSliceVar(&o.NCCLProtos, "nccl-protos", nil, "collectives: also force these NCCL protocols (LL, LL128, Simple) with NCCL_PROTO; default: NCCL's choice")
	f.StringSliceVar(&o.NVSHMEMAlgos, "nvshmem-algos", nil, "collectives: also force NVSHMEM's own algorithms on the nvshmem-block rows (collective:name, a collective, or all; e.g. allgather:ll8,broadcast), each through NVSHMEM's variable in its workers' environment; default: NVSHMEM's choice")
	f.StringSliceVar(&o.SMBudgets, "sm-budgets", []string{"1", "2", "4", "8", "16", "32", "66", "all"}, "bytes per SM (persm/*): SM budgets, one CTA an SM: counts of SMs or all")
	f.StringVar(&o.NVSHMEMNCCL, "nvshmem-nccl", "auto", "on-stream NVSHMEM collectives: auto (NVSHMEM may hand them to NCCL) or off (NVSHMEM_DISABLE_NCCL=1, NVSHMEM's own kernels)")
	d := harness.DefaultMoE()
	f.IntSliceVar(&o.MoE.Tokens, "moe-tokens", d.Tokens, "MoE: tokens per rank")
	f.IntVar(&o.MoE.Hidden, "moe-hidden", d.Hidden, "MoE: hidden size (elements of a token)")
	f.IntVar(&o.MoE.TopK, "moe-topk", d.TopK, "MoE: experts each token selects")
	f.IntVar(&o.MoE.Experts, "moe-experts", d.Experts, "MoE: experts over all PEs (a multiple of the PE count)")
	f.StringSliceVar(&o.MoE.DTypes, "moe-dtype", d.DTypes, "MoE: dispatched token types (bf16, fp8: 1 byte a value and a float scale per 128); combine returns bf16")
	f.StringSliceVar(&o.MoE.Modes, "moe-modes", d.Modes, "MoE: ll (a message per selection) and/or normal (a message per destination rank)")
	f.StringSliceVar(&o.MoE.Routings, "moe-routing", d.Routings, "MoE: uniform and/or skewed (Zipf over the experts)")
	f.Float64Var(&o.MoE.Zipf, "moe-zipf", d.Zipf, "MoE: the skewed routing's Zipf exponent")
	c.RegisterFlagCompletionFunc("moe-dtype", listCompletion([]string{"bf16", "fp8"}))
	c.RegisterFlagCompletionFunc("moe-modes", listCompletion([]string{"ll", "normal"}))
	c.RegisterFlagCompletionFunc("moe-routing", listCompletion([]string{"uniform", "skewed"}))
	c.RegisterFlagCompletionFunc("path", cobra.FixedCompletions([]string{"p2p", "proxy", "ibgda"}, cobra.ShellCompDirectiveNoFileComp))
	c.RegisterFlagCompletionFunc("dtypes", listCompletion([]string{"float", "bf16", "half"}))
	c.RegisterFlagCompletionFunc("nccl-protos", listCompletion([]string{"LL", "LL128", "Simple"}))
	c.RegisterFlagCompletionFunc("nvshmem-algos", listCompletion(harness.AlgoFlags()))
	c.RegisterFlagCompletionFunc("nvshmem-nccl", cobra.FixedCompletions([]string{"auto", "off"}, cobra.ShellCompDirectiveNoFileComp))
	c.RegisterFlagCompletionFunc("sizes", cobra.FixedCompletions([]string{"8:1G", "8:1M", "1K:1G:4", "256,4K,1M"}, cobra.ShellCompDirectiveNoFileComp|cobra.ShellCompDirectiveNoSpace))
	c.RegisterFlagCompletionFunc("out", func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		return []string{"jsonl"}, cobra.ShellCompDirectiveFilterFileExt
	})
}

func newRunCmd() *cobra.Command {
	o := newRunOptions()
	c := &cobra.Command{
		Use:   "run [BENCHMARK|PREFIX|GLOB...]",
		Short: "Measure benchmarks on the local GPUs and write a results file",
		Long: `run starts one worker per PE on the local GPUs, measures every selected benchmark over the
sizes and launch shapes asked for, verifies each transfer against a pattern, and appends each
point to the results file as it finishes. With no benchmark named it runs the default set
('nvshbench list' marks it). The limits every figure is compared with (copy engine and SM copy
over the same path) are measured first, in the same run.

Under srun or mpirun, start one nvshbench per GPU; the workers then use NVSHMEM's launcher
bootstrap (nvshbench picks one that loads: PMIx or MPI under mpirun, PMIx or PMI-2 under srun;
'nvshbench doctor' lists them) and rank 0 writes the file (scripts/).

Interrupt it at any time: every finished point is kept, and the same command resumes.`,
		Example: `  nvshbench run rma/put rma/get --sizes 1M:1G --out puts.jsonl
  nvshbench run --pes-per-gpu 2 --quick rma
  nvshbench run --launch-sweep rma/put/block rma/p
  nvshbench run latency collectives --graph --sizes 8:1M
  # try the CLI without a GPU: the fake GPU layer writes SYNTHETIC numbers, flagged as such
  nvshbench run --shim fake --sizes 4K,1M --samples 3 --out fake-example.jsonl rma/put/block`,
		RunE: func(c *cobra.Command, args []string) error {
			o.Benches = args
			o.ctasSet, o.threadsSet = c.Flags().Changed("ctas"), c.Flags().Changed("threads")
			o.cmd = c
			return interruptible(c.Context(), c.ErrOrStderr(), func(ctx context.Context) error {
				_, err := measure(ctx, o, c.ErrOrStderr())
				return err
			})
		},
	}
	addRunFlags(c, o)
	c.ValidArgsFunction = benchmarkCompletion
	return c
}

// config is the options' harness configuration: the fields the flags set,
// and those parsed from their text (sizes, the sweep's size, SM budgets,
// the pair), checked.
func (o *runOptions) config() (*harness.Config, error) {
	cfg := o.Config
	sizes := o.Sizes
	if o.Quick && sizes == "8:1G" {
		sizes = "1K:1G:4"
	}
	var err error
	if cfg.Sizes, err = units.ParseSizes(sizes); err != nil {
		return nil, usagef("--sizes: %v", err)
	}
	if cfg.SweepSize, err = units.ParseSize(o.SweepSize); err != nil {
		return nil, usagef("--sweep-size: %v", err)
	}
	if o.MatrixSize == "" { // a caller's options (reproduce): the default
		o.MatrixSize = "256M"
	}
	if cfg.MatrixSize, err = units.ParseSize(o.MatrixSize); err != nil || cfg.MatrixSize <= 0 {
		return nil, usagef("--matrix-size %q: want a size such as 256M", o.MatrixSize)
	}
	if cfg.Matrix && cfg.Pair != "" {
		return nil, usagef("--matrix measures every pair: leave --pair out")
	}
	if cfg.Pair != "" { // --pair FROM:TO, written as the harness writes it
		p, err := harness.ParsePair(cfg.Pair)
		if err != nil {
			return nil, usagef("--%v", err)
		}
		cfg.Pair = p.String()
	}
	if o.Quick && o.Samples == 10 {
		cfg.Samples = 5
	}
	cfg.Verify = !o.NoVerify
	if len(cfg.DTypes) == 0 { // --dtypes "": the default
		cfg.DTypes = harness.DefaultConfig().DTypes
	}
	if o.SMBudgets != nil { // the flag's (a caller's options keep the default budgets)
		if cfg.SMBudgets, err = harness.ParseSMBudgets(o.SMBudgets); err != nil {
			return nil, usageError{err}
		}
	}
	cfg.Dedupe() // every list flag: a value given twice is measured once
	if o.NVSHMEMNCCL == "" {
		o.NVSHMEMNCCL = "auto"
	}
	if o.NVSHMEMNCCL != "auto" && o.NVSHMEMNCCL != "off" {
		return nil, usagef("--nvshmem-nccl %q: want auto or off", o.NVSHMEMNCCL)
	}
	if o.PEsPerGPU < 1 {
		return nil, usagef("--pes-per-gpu %d: must be at least 1", o.PEsPerGPU)
	}
	if o.GPUs < 0 {
		return nil, usagef("--gpus %d: must not be negative", o.GPUs)
	}
	if o.Timeout <= 0 {
		return nil, usagef("--timeout %s: must be positive", o.Timeout)
	}
	if o.Startup < 0 {
		return nil, usagef("--startup-timeout %s: must not be negative", o.Startup)
	}
	if c := record.ControlIn(o.Label); c != "" {
		return nil, usagef("--label: holds a control character (%s); a label is shown in tables and charts", c)
	}
	if err := cfg.Validate(); err != nil {
		return nil, usageError{err}
	}
	return &cfg, nil
}

// pathEnv is what a requested path sets for NVSHMEM (recorded in the header).
func pathEnv(path string) map[string]string {
	switch path {
	case "proxy":
		return map[string]string{"NVSHMEM_DISABLE_P2P": "1", "NVSHMEM_IB_ENABLE_IBGDA": "0"}
	case "ibgda":
		return map[string]string{"NVSHMEM_DISABLE_P2P": "1", "NVSHMEM_IB_ENABLE_IBGDA": "1"}
	}
	return map[string]string{}
}

// runPathEnv is what the run's environment adds for --path (the header
// records it), or, with pathPerPoint, nothing: the variables go into every
// point's own environment instead, which its workers start with.
func runPathEnv(o *runOptions, cfg *harness.Config, plan *harness.Plan) map[string]string {
	env := pathEnv(cfg.Path)
	if cfg.Matrix { // a node's pairs over its NVLink, only those between nodes over --path's transport
		env = harness.MatrixEnv(env)
	}
	if !o.pathPerPoint || len(env) == 0 {
		return env
	}
	for i := range plan.Items {
		p := &plan.Items[i].Params
		own := maps.Clone(env)
		maps.Copy(own, p.Env)
		p.Env = own
	}
	return map[string]string{}
}

// checkLaunchFlags refuses --ctas / --threads when no selected benchmark
// takes them, and says which ignore them when some do.
func checkLaunchFlags(o *runOptions, benches []*harness.Benchmark, stderr io.Writer) error {
	if !o.ctasSet && !o.threadsSet {
		return nil
	}
	var ignore []string
	for _, b := range benches {
		if (o.ctasSet && b.IgnoresCTAs) || (o.threadsSet && b.IgnoresThreads) {
			ignore = append(ignore, b.ID)
		}
	}
	if len(ignore) == 0 {
		return nil
	}
	flags := map[[2]bool]string{{true, false}: "--ctas", {false, true}: "--threads", {true, true}: "--ctas/--threads"}[[2]bool{o.ctasSet, o.threadsSet}]
	eg := ignore[0]
	if len(ignore) > 1 {
		eg += ", ..."
	}
	if len(ignore) == len(benches) {
		return usagef("%s: none of the selected benchmarks takes it (%s launch themselves; 'nvshbench list' shows each one's launch)", flags, eg)
	}
	fmt.Fprintf(stderr, "nvshbench: %s applies to %d of the %d selected benchmarks; %d (%s) launch themselves ('nvshbench list' shows how)\n",
		flags, len(benches)-len(ignore), len(benches), len(ignore), eg)
	return nil
}

// pointFlags are the run flags that choose which points a benchmark
// measures (the others say how every point is measured).
var pointFlags = []string{"sizes", "pair", "graph", "dtypes", "bidir", "blocking", "nccl-protos", "nvshmem-algos", "launch-sweep", "sweep-size",
	"sm-budgets", "moe-tokens", "moe-hidden", "moe-topk", "moe-experts", "moe-dtype", "moe-modes", "moe-routing", "moe-zipf"}

// checkPointFlags finds, for each point flag the user set, the selected
// benchmarks whose points it does not change (their points with the flag
// at its default are the same): none taking it is a usage error, some not
// taking it is said. One rule for every flag, from the benchmarks' own
// point lists, so a new flag or benchmark cannot be silently ignored.
func checkPointFlags(o *runOptions, cfg *harness.Config, benches []*harness.Benchmark) (notes []string, err error) {
	if o.cmd == nil {
		return nil, nil
	}
	for _, name := range pointFlags {
		f := o.cmd.Flags().Lookup(name)
		if f == nil || !f.Changed || f.Value.String() == f.DefValue {
			continue
		}
		alt, err := optionsWithout(o.cmd, name)
		if err != nil {
			return nil, err
		}
		acfg, err := alt.config()
		if err != nil {
			continue // the default's config is not the question here
		}
		if reflect.DeepEqual(cfg, acfg) {
			continue // what the default asks for (--dtypes float,float): nothing to check
		}
		var ignore []string
		for _, b := range benches {
			if samePoints(b, cfg, acfg) {
				ignore = append(ignore, b.ID)
			}
		}
		switch {
		case len(ignore) == 0:
		case len(ignore) == len(benches):
			return nil, usagef("--%s: none of the selected benchmarks takes it (their points are the same without it: %s)", name, listSome(ignore))
		default:
			notes = append(notes, fmt.Sprintf("--%s applies to %d of the %d selected benchmarks, not to %s",
				name, len(benches)-len(ignore), len(benches), listSome(ignore)))
		}
	}
	return notes, nil
}

// checkSizes names, for each selected benchmark, the sizes --sizes asks
// for that it takes no point at, with the range it takes (of the default
// sizes): sizes no selected benchmark takes are refused (exit 2), sizes
// some do not take are said.
func checkSizes(o *runOptions, cfg *harness.Config, benches []*harness.Benchmark) (notes []string, err error) {
	if o.cmd == nil || !o.cmd.Flags().Changed("sizes") {
		return nil, nil
	}
	takes := func(b *harness.Benchmark, s int64) bool {
		c := *cfg
		c.Sizes, c.PEs = []int64{s}, 2 // two PEs: a stand-in for the job's count
		return len(b.Points(&c)) > 0
	}
	measured := false
	for _, b := range benches {
		var dropped []string
		for _, s := range cfg.Sizes {
			if !takes(b, s) {
				dropped = append(dropped, units.Bytes(s))
			}
		}
		measured = measured || len(dropped) < len(cfg.Sizes)
		if len(dropped) == 0 {
			continue
		}
		var took []int64
		all := harness.DefaultConfig().Sizes
		for _, s := range all {
			if takes(b, s) {
				took = append(took, s)
			}
		}
		what := "takes no size of " + units.Bytes(all[0]) + " … " + units.Bytes(all[len(all)-1])
		if len(took) > 0 {
			what = "takes " + units.Bytes(took[0]) + " … " + units.Bytes(took[len(took)-1])
		}
		notes = append(notes, fmt.Sprintf("--sizes: %s %s: %s not measured", b.ID, what, listSome(dropped)))
	}
	if !measured {
		return nil, usagef("--sizes %s: no selected benchmark takes these sizes (%s)", o.Sizes, strings.TrimPrefix(strings.Join(notes, "; "), "--sizes: "))
	}
	return notes, nil
}

// optionsWithout parses the command's flags again, all but name (left at
// its default).
func optionsWithout(c *cobra.Command, name string) (*runOptions, error) {
	alt := newRunOptions()
	tmp := &cobra.Command{Use: "check"}
	addRunFlags(tmp, alt)
	var err error
	c.Flags().Visit(func(f *pflag.Flag) {
		t := tmp.Flags().Lookup(f.Name)
		if f.Name == name || t == nil || err != nil {
			return
		}
		if sv, ok := f.Value.(pflag.SliceValue); ok {
			err = t.Value.(pflag.SliceValue).Replace(sv.GetSlice())
		} else {
			err = t.Value.Set(f.Value.String())
		}
	})
	return alt, err
}

// samePoints: b measures the same points under both configurations (with
// two PEs, a stand-in for the job's count).
func samePoints(b *harness.Benchmark, c1, c2 *harness.Config) bool {
	key := func(c *harness.Config) string {
		cc := *c
		cc.PEs = 2
		var ks []string
		for _, p := range harness.PointsOf(b, &cc) {
			ks = append(ks, p.Key())
		}
		return strings.Join(ks, "\n")
	}
	return key(c1) == key(c2)
}

// listSome names the first IDs of a list.
func listSome(ids []string) string {
	if len(ids) <= 3 {
		return strings.Join(ids, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(ids[:3], ", "), len(ids)-3)
}

// measure runs the options' benchmarks into a results file.
func measure(ctx context.Context, o *runOptions, stderr io.Writer) (*launcher.Summary, error) {
	cfg, err := o.config()
	if err != nil {
		return nil, err
	}
	benches, err := harness.Select(o.Benches)
	if err != nil {
		return nil, usageError{err}
	}
	if err := checkLaunchFlags(o, benches, stderr); err != nil {
		return nil, err
	}
	flagNotes, err := checkPointFlags(o, cfg, benches)
	if err != nil {
		return nil, err
	}
	sizeNotes, err := checkSizes(o, cfg, benches)
	if err != nil {
		return nil, err
	}
	flagNotes = append(flagNotes, sizeNotes...)
	if err := record.Usable(o.Out); err != nil {
		return nil, err
	}
	if err := checkTempDir(); err != nil {
		return nil, err
	}
	gpu, err := openGPU(o.Shim, stderr)
	if err != nil {
		return nil, err
	}
	ndev, _ := gpu.lib.DeviceCount()
	mem, sms := smallestGPU(gpu, ndev)
	cfg.SMs = sms // full-GPU grids sized by the GPUs, not by an H200's 132
	if o.cmd != nil && o.cmd.Flags().Changed("sm-budgets") {
		if err := cfg.CheckSMBudgets(); err != nil {
			return nil, usageError{err}
		}
	}
	if o.GPUs > ndev {
		return nil, usagef("--gpus %d: only %d GPU(s) visible here; ask for at most %d, or leave --gpus out to use every visible GPU", o.GPUs, ndev, ndev)
	}
	if l, ok := launcher.DetectLauncher(); ok {
		return measureLaunched(ctx, o, cfg, benches, gpu, l, ndev, mem, stderr)
	}
	gpus := o.GPUs
	if gpus == 0 {
		gpus = ndev
	}
	cfg.PEs = gpus * o.PEsPerGPU
	if err := checkPair(cfg); err != nil {
		return nil, err
	}
	plan, err := buildPlan(benches, cfg, mem, o.PEsPerGPU)
	if err != nil {
		return nil, err
	}
	out := o.Out
	if out == "" {
		host, _ := os.Hostname()
		out = fmt.Sprintf("nvshbench-%s.jsonl", host) // the same command resumes it
	}
	extra := runPathEnv(o, cfg, &plan)
	addUIDPlugin(gpu, extra) // the workers' unique-ID bootstrap plugin, by its full path
	if o.NVSHMEMNCCL == "off" {
		extra["NVSHMEM_DISABLE_NCCL"] = "1"
	}
	envNote, envSay, err := checkPointEnvs(plan, extra, nil, o, out)
	if err != nil {
		return nil, err
	}
	header := buildHeader(gpu, gpus, o.PEsPerGPU, extra)
	header.Label = o.Label
	// The pair the point-to-point rows measure: the PEs' places as the
	// workers will see them (PE r on device r / --pes-per-gpu).
	placement := make([]record.GPU, 0, cfg.PEs)
	for r := 0; r < cfg.PEs; r++ {
		info, err := gpu.lib.DeviceInfo(r / o.PEsPerGPU)
		if err != nil {
			return nil, err
		}
		placement = append(placement, harness.GPUOf(&info, r))
	}
	var why string
	if header.Pair, why = harness.RunPair(placement, cfg); why != "" {
		if cfg.Pair != "" {
			return nil, usagef("--%s", why)
		}
		header.Notes = append(header.Notes, "point-to-point rows: "+why)
	}
	if envNote != "" {
		header.Notes = append(header.Notes, envNote)
	}
	header.Run = o.runSetup(cfg)
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	lo := launcher.Options{
		Exe: exe, WorkerArgs: []string{"--shim", gpu.shimPath}, Env: gpu.workerEnv(extra),
		GPUs: gpus, PEsPerGPU: o.PEsPerGPU, Plan: plan, Out: out, Header: header,
		Timeout: o.Timeout, Startup: o.Startup, StopOnError: o.StopOnError,
		Progress: newProgress(stderr), Stderr: stderr,
	}
	if gpu.shimPath == "fake" {
		// The fakes' collective calls meet in this folder, so a divergence
		// between PEs fails the run as it would hang a real one.
		dir, err := os.MkdirTemp("", "nvshbench-fake-")
		if err != nil {
			return nil, err
		}
		defer os.RemoveAll(dir)
		lo.Env = append(lo.Env, "NVSHBENCH_FAKE_RDV="+dir)
	}
	var sum *launcher.Summary
	if cfg.Path != "p2p" && gpu.shimPath != "fake" {
		if why := harness.NICReason(); why != "" {
			sum, err = launcher.Waive(lo, why)
			reportSummary(stderr, sum)
			return sum, err
		}
	}
	for _, n := range append(flagNotes, envSay...) {
		fmt.Fprintf(stderr, "nvshbench: %s\n", n)
	}
	// run says it; reproduce (no command of its own here) says it once.
	synthetic := gpu.shimPath == "fake" && o.cmd != nil
	if synthetic {
		fmt.Fprintf(stderr, "nvshbench: %s\n", syntheticNote)
	}
	fmt.Fprintf(stderr, "nvshbench: %d PE(s) on %d GPU(s), %d point(s) → %s\n", cfg.PEs, gpus, len(plan.Items), out)
	sum, err = launcher.Run(ctx, lo)
	err = finish(stderr, sum, err)
	if synthetic && sum != nil {
		fmt.Fprintf(stderr, "nvshbench: %s\n", syntheticNote)
	}
	return sum, err
}

// startupTimeout is --startup-timeout's default: NVSHMEM's start-up (its
// bootstrap, the symmetric heap, NCCL's communicators for its teams) on a
// node of 8 GPUs.
const startupTimeout = 60 * time.Second

// runSetup is the header's record of how every point was measured.
func (o *runOptions) runSetup(cfg *harness.Config) *record.RunSetup {
	return &record.RunSetup{Samples: cfg.Samples, Warmup: cfg.Warmup, Iters: cfg.Iters, Verify: cfg.Verify, CTAs: cfg.CTAs, Threads: cfg.Threads,
		CorruptChecks: cfg.CorruptChecks, Timeout: o.Timeout.Seconds(), StartupTimeout: o.Startup.Seconds()}
}

// checkPointEnvs checks the points' own NVSHMEM variables (params.env) and
// says what the run's environment (this process's, plus extra: what the
// run adds) changes of them (harness.EnvRule): a point whose environment a
// worker cannot start with, or NVSHMEM's choice that a variable set there
// would force, is waived, never the run refused. It returns the header's
// note on the worker groups ("" where no point has its own environment)
// and the lines to say before the run: which points are waived and why,
// and what measures them (under a launcher, l, the command with the
// environment each needs; locally, unsetting the user's variable).
func checkPointEnvs(plan harness.Plan, extra map[string]string, l *launcher.Launched, o *runOptions, out string) (note string, say []string, err error) {
	for _, it := range plan.Items {
		if err := harness.ValidateEnv(it.Params.Env); err != nil {
			return "", nil, fmt.Errorf("%s: %v", it.ID, err)
		}
	}
	if len(plan.PointEnvs()) == 0 {
		return "", nil, nil
	}
	base := func(k string) (string, bool) {
		if v, ok := extra[k]; ok {
			return v, true
		}
		return os.LookupEnv(k)
	}
	rule := plan.EnvRule(l != nil)
	type group struct {
		why  string
		set  []string // K=V the environment that measures them must add (under a launcher)
		drop []string // the variables it must not have
		ids  []string
		n    int
	}
	var groups []*group
	byEnv := map[string]*group{}
	for _, it := range plan.Items {
		lookup := base
		if l == nil { // the controller starts the point's workers with its own variables
			lookup = func(k string) (string, bool) {
				if v, ok := it.Params.Env[k]; ok {
					return v, true
				}
				return base(k)
			}
		}
		why := rule.Waiver(it.ID, it.Params.Env, lookup)
		if why == "" {
			continue
		}
		// The environment that runs it: its own variables, and none of the
		// others its benchmark's points set.
		var set, drop []string
		for _, kv := range harness.EnvList(it.Params.Env) {
			if k, v, _ := strings.Cut(kv, "="); !isSet(lookup, k, v) {
				set = append(set, kv)
			}
		}
		for _, k := range rule.Forced(it.ID, it.Params.Env) {
			if _, ok := base(k); ok {
				drop = append(drop, k)
			}
		}
		key := strings.Join(set, " ") + " -" + strings.Join(drop, " -")
		g := byEnv[key]
		if g == nil {
			g = &group{why: why, set: set, drop: drop}
			byEnv[key] = g
			groups = append(groups, g)
		}
		if !slices.Contains(g.ids, it.ID) {
			g.ids = append(g.ids, it.ID)
		}
		g.n++
	}
	for i, g := range groups {
		var words []string
		if len(g.drop) > 0 {
			words = append(words, "env")
			for _, k := range g.drop {
				words = append(words, "-u", k)
			}
		}
		words = append(words, g.set...)
		switch {
		case l == nil:
		case l.By == "openmpi": // mpirun passes a variable to the ranks it is asked to
			words = append(words, "mpirun")
			for _, kv := range g.set {
				k, _, _ := strings.Cut(kv, "=")
				words = append(words, "-x", k)
			}
			words = append(words, "…")
		case l.By == "slurm":
			words = append(words, "srun", "…")
		default:
			words = append(words, "mpiexec", "…")
		}
		words = append(words, o.commandLine(fmt.Sprintf("%s-env%d.jsonl", strings.TrimSuffix(out, ".jsonl"), i+1)))
		say = append(say, fmt.Sprintf("%d point(s) of %s are waived (%s); to measure them: %s", g.n, listSome(g.ids), g.why, strings.Join(words, " ")))
	}
	note = fmt.Sprintf("points with params.env ran in workers started with those NVSHMEM variables added to the environment above (read at nvshmem_init): %d environment(s), a worker group each", plan.EnvGroups())
	return note, say, nil
}

// isSet: lookup has k at v.
func isSet(lookup func(string) (string, bool), k, v string) bool {
	have, ok := lookup(k)
	return ok && have == v
}

// commandLine is this run's command as typed again with --out set to out:
// the flags given and the benchmarks named (nvshbench's own argv where the
// options did not come from its flags).
func (o *runOptions) commandLine(out string) string {
	words := []string{"nvshbench", "run"}
	if o.cmd == nil {
		words = append([]string{"nvshbench"}, os.Args[1:]...)
		for i, w := range words {
			if (w == "--out" || w == "-o") && i+1 < len(words) {
				words = append(words[:i], words[i+2:]...)
				break
			}
		}
		return strings.Join(append(words, "--out", shellWord(out)), " ")
	}
	o.cmd.Flags().Visit(func(f *pflag.Flag) {
		switch {
		case f.Name == "out":
		case f.Value.Type() == "bool":
			if f.Value.String() == "true" {
				words = append(words, "--"+f.Name)
			}
		default:
			v := f.Value.String()
			if sv, ok := f.Value.(pflag.SliceValue); ok {
				v = strings.Join(sv.GetSlice(), ",")
			}
			words = append(words, "--"+f.Name, shellWord(v))
		}
	})
	words = append(words, "--out", shellWord(out))
	for _, b := range o.Benches {
		words = append(words, shellWord(b))
	}
	return strings.Join(words, " ")
}

// shellWord quotes s for a POSIX shell where it needs it.
func shellWord(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_./:,=+-@%") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// checkTempDir refuses a TMPDIR that names no folder (Go falls back to
// /tmp only when it is unset): the fake GPU's rendezvous, the shim's build
// and, without a home folder, its cache live there.
func checkTempDir() error {
	d := os.Getenv("TMPDIR")
	if d == "" {
		return nil
	}
	if st, err := os.Stat(d); err != nil || !st.IsDir() {
		return usagef("TMPDIR=%s is no folder: nvshbench needs a temporary folder (the shim's build, the fake GPU's rendezvous); set TMPDIR to an existing folder, or unset it", d)
	}
	return nil
}

// buildPlan lists the points for the job's PEs and refuses what cannot
// fit: a MoE workload whose experts do not divide by the PEs, buffers
// larger than the GPUs.
func buildPlan(benches []*harness.Benchmark, cfg *harness.Config, mem int64, pesPerGPU int) (harness.Plan, error) {
	for _, b := range benches {
		if b.Suite == "moe" && cfg.PEs > 0 && cfg.MoE.Experts%cfg.PEs != 0 {
			return harness.Plan{}, usagef("--moe-experts %d: does not divide by the job's %d PEs", cfg.MoE.Experts, cfg.PEs)
		}
	}
	plan := harness.BuildPlan(benches, cfg)
	if len(plan.Items) == 0 {
		return plan, fmt.Errorf("nothing to measure")
	}
	return plan, fitsMemory(&plan.Config, mem, pesPerGPU)
}

// smallestGPU is the smallest memory and SM count among the visible GPUs
// (0 where no device says).
func smallestGPU(gpu *gpuSetup, ndev int) (mem int64, sms int) {
	for i := 0; i < ndev; i++ {
		info, err := gpu.lib.DeviceInfo(i)
		if err != nil {
			continue
		}
		if info.MemBytes > 0 && (mem == 0 || info.MemBytes < mem) {
			mem = info.MemBytes
		}
		if info.SMs > 0 && (sms == 0 || int(info.SMs) < sms) {
			sms = int(info.SMs)
		}
	}
	return mem, sms
}

// fitsMemory refuses sizes whose buffers cannot fit the GPUs: every PE
// holds a source, a destination and a scratch buffer of the largest size
// in NVSHMEM's symmetric heap, plus its reserves.
// mem is the smallest GPU memory of the run (0: unknown).
func fitsMemory(cfg *harness.Config, mem int64, pesPerGPU int) error {
	if mem <= 0 {
		return nil
	}
	max := cfg.MaxSize()
	const reserve = 1 << 30
	if max > (mem-reserve)/int64(3*pesPerGPU) {
		what := fmt.Sprintf("--sizes: the largest size, %s,", units.Bytes(max))
		if cfg.NeedBytes >= max {
			what = fmt.Sprintf("the MoE workload (--moe-tokens/--moe-hidden/--moe-routing): its receive buffers, %s,", units.Bytes(max))
		}
		return usagef("%s need 3 buffers of it per PE (%d PE(s) per GPU), more than the %s of the GPU", what, pesPerGPU, units.Bytes(mem))
	}
	return nil
}

// measureLaunched is measure under srun / mpirun: this process is one PE;
// NVSHMEM bootstraps through the launcher (chooseBootstrap) and
// rank 0 writes the results file.
func measureLaunched(ctx context.Context, o *runOptions, cfg *harness.Config, benches []*harness.Benchmark, gpu *gpuSetup,
	l launcher.Launched, ndev int, mem int64, stderr io.Writer) (*launcher.Summary, error) {
	cfg.PEs = l.Size
	if err := checkPair(cfg); err != nil {
		return nil, err
	}
	plan, err := buildPlan(benches, cfg, mem, 1)
	if err != nil {
		return nil, err
	}
	out := o.Out
	if out == "" {
		// Every rank must name the same file, and resuming is not possible
		// under a launcher: the job's own name, with the start time.
		out = fmt.Sprintf("nvshbench-%s-%dpes-%s.jsonl", l.By, l.Size, time.Now().Format("20060102-150405"))
	}
	extra := runPathEnv(o, cfg, &plan)
	boot, err := chooseBootstrap(gpu.plugins(), l)
	if err != nil {
		return nil, err
	}
	for k, v := range boot.Vars {
		extra[k] = v
	}
	// NVSHMEM reads the C environment: set there (no cgo: Go's own is apart).
	for k, v := range extra {
		os.Setenv(k, v)
		if err := gpu.lib.Setenv(k, v); err != nil {
			return nil, err
		}
	}
	envNote, envSay, err := checkPointEnvs(plan, extra, &l, o, out)
	if err != nil {
		return nil, err
	}
	header := buildHeader(gpu, 1, 1, extra)
	header.PEs, header.Nodes, header.Label = l.Size, l.Nodes, o.Label
	if envNote != "" {
		header.Notes = append(header.Notes, envNote+"; under "+l.By+" every PE runs the job's environment, so a point whose variables it lacks is waived")
	}
	header.GPUs = nil                                               // every rank's GPU, from the job's facts once NVSHMEM is up
	header.Links, header.Notes = hostLinks(gpu, ndev, header.Notes) // rank 0's node: the links its GPUs can see
	header.Notes = append(header.Notes, fmt.Sprintf("started by %s: %d PEs on %d node(s); %s; verification totals summed over every PE", l.By, l.Size, l.Nodes, boot.Why))
	header.Run = o.runSetup(cfg)
	lo := launcher.Options{GPUs: 1, PEsPerGPU: 1, Plan: plan, Out: out, Header: header, Timeout: o.Timeout, Startup: o.Startup, Stderr: stderr}
	if l.Rank == 0 {
		lo.Progress = newProgress(stderr)
		for _, n := range envSay {
			fmt.Fprintf(stderr, "nvshbench: %s\n", n)
		}
		fmt.Fprintf(stderr, "nvshbench: rank 0 of %d (%s), %d point(s) → %s\n", l.Size, l.By, len(plan.Items), out)
	}
	device := 0
	if ndev > 0 {
		device = l.LocalRank % ndev
	}
	sum, err := launcher.RunLaunched(ctx, lo, gpu.lib, l, device)
	if ref := (*harness.Refused)(nil); errors.As(err, &ref) {
		return nil, usageError{ref}
	}
	if l.Rank == 0 {
		err = finish(stderr, sum, err)
	}
	return sum, err
}

// checkPair refuses a --pair that names a PE the job does not have.
func checkPair(cfg *harness.Config) error {
	if cfg.Pair == "" {
		return nil
	}
	if p, _ := harness.ParsePair(cfg.Pair); p.From >= cfg.PEs || p.To >= cfg.PEs {
		return usagef("--pair %s: this job has %d PE(s), 0..%d", cfg.Pair, cfg.PEs, cfg.PEs-1)
	}
	return nil
}

// failedPoints is a run that wrote every point, some of which errored or
// failed verification (exit 1), in this run or, kept, in an earlier one
// into the same file: what it wrote is usable, so reproduce goes on to its
// other sweeps and its report.
type failedPoints struct {
	errors, failed, kept int
	path                 string
}

func (e failedPoints) Error() string {
	msg := fmt.Sprintf("%d point(s) failed (%d errors, %d failed verification): see their reasons in %s", e.errors+e.failed+e.kept, e.errors, e.failed+e.kept, e.path)
	if e.kept > 0 {
		msg += fmt.Sprintf("; %d failed verification in an earlier run into this file (kept: a new --out measures them again)", e.kept)
	}
	return msg
}

// add counts another run's failed points (reproduce's sweeps).
func (e *failedPoints) add(o failedPoints) {
	e.errors, e.failed, e.kept, e.path = e.errors+o.errors, e.failed+o.failed, e.kept+o.kept, o.path
}

// finish prints the run's summary and makes failed points, the run's own
// and those of its plan the file kept, the run's error (exit 1), after
// everything is written.
func finish(stderr io.Writer, sum *launcher.Summary, err error) error {
	reportSummary(stderr, sum)
	if err == nil && sum != nil && sum.Errors+sum.Failed+sum.KeptFailed > 0 {
		err = failedPoints{errors: sum.Errors, failed: sum.Failed, kept: sum.KeptFailed, path: sum.Path}
	}
	return err
}

func reportSummary(w io.Writer, s *launcher.Summary) {
	if s == nil {
		return
	}
	kept := ""
	if s.KeptFailed > 0 {
		kept = fmt.Sprintf(", %d of them failed verification", s.KeptFailed)
	}
	fmt.Fprintf(w, "nvshbench: %s: %d point(s) written (%d ok, %d waived, %d failed verification, %d errors); %d already there%s\n",
		s.Path, s.Points, s.OK, s.Waived, s.Failed, s.Errors, s.Skipped, kept)
}

// buildHeader describes the run: GPUs, driver, library versions, topology
// and the NVSHMEM_/NCCL_ environment.
func buildHeader(g *gpuSetup, gpus, pesPerGPU int, extra map[string]string) record.Header {
	host, _ := os.Hostname()
	h := record.Header{Tool: "nvshbench", ToolVersion: Version, Commit: Commit, Created: time.Now().UTC().Format(time.RFC3339),
		Argv: os.Args, Host: host, PEs: gpus * pesPerGPU, Nodes: 1, Env: map[string]string{}}
	nodes := map[string]bool{}
	for i := 0; i < gpus; i++ {
		info, err := g.lib.DeviceInfo(i)
		if err != nil {
			continue
		}
		// Index is the controller's device, as its PEs are spread over them;
		// Host the node the device reports (a fake cluster's differ).
		h.GPUs = append(h.GPUs, record.GPU{Index: i, Host: info.HostString(), Name: info.NameString(), UUID: info.UUIDString(), PCIBusID: info.PCIString(),
			SMs: int(info.SMs), MemoryBytes: info.MemBytes, L2Bytes: info.L2Bytes, ClockKHz: int(info.ClockKHz),
			CC: fmt.Sprintf("%d.%d", info.CCMajor, info.CCMinor)})
		nodes[info.HostString()] = true
		h.Nodes = len(nodes)
		if i == 0 {
			h.CUDA = cuda.CUDAVersion(info.CUDARuntime)
			h.Driver = "CUDA " + cuda.CUDAVersion(info.CUDADriver)
		}
	}
	if out, err := exec.Command("nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader").Output(); err == nil {
		if lines := strings.Fields(string(out)); len(lines) > 0 {
			h.Driver = lines[0]
		}
	}
	if g.tc != nil {
		h.NVSHMEM, h.NCCL = g.tc.NVSHMEMVersion, g.tc.NCCLVersion
	}
	// The libraries as this process loaded them (the workers load the same
	// ones): the versions they report win over the toolchain's, which a
	// folder given by NVSHMEM_HOME leaves empty.
	if info, err := g.lib.DeviceInfo(0); err == nil {
		h.NVSHMEM, h.Notes = launcher.LoadedVersion("NVSHMEM", h.NVSHMEM, info.NVSHMEMVersion(), h.Notes)
		h.NCCL, h.Notes = launcher.LoadedVersion("NCCL", h.NCCL, info.NCCLVersionString(), h.Notes)
	}
	if g.shimPath == "fake" {
		h.Synthetic = true
		h.Notes = append(h.Notes, "measured with the fake GPU layer (--shim fake): invented numbers for testing")
	}
	h.Topology = topology(g, gpus)
	h.Links, h.Notes = hostLinks(g, gpus, h.Notes)
	sms, l2 := 0, int64(0)
	for _, gp := range h.GPUs {
		if sms == 0 || gp.SMs < sms {
			sms = gp.SMs
		}
		if l2 == 0 || gp.L2Bytes < l2 {
			l2 = gp.L2Bytes
		}
	}
	h.Capabilities = harness.HostCapabilities(sms, l2)
	for _, kv := range os.Environ() {
		k, v, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(k, "NVSHMEM_") || strings.HasPrefix(k, "NCCL_") || strings.HasPrefix(k, "TORCH_SYMM_MEM") ||
			k == "CUDA_VISIBLE_DEVICES" || k == "CUDA_DEVICE_MAX_CONNECTIONS" {
			h.Env[k] = v
		}
	}
	for k, v := range extra {
		h.Env[k] = v
	}
	if pesPerGPU > 1 {
		h.Notes = append(h.Notes, fmt.Sprintf("%d PEs share each GPU: transfers stay in one GPU's memory (functional coverage, not a link measurement)", pesPerGPU))
	}
	return h
}

// hostLinks are the physical ceilings of the first n GPUs this process
// sees (the header's links), each host's GPUs among themselves; a GPU NVML
// did not describe is noted.
func hostLinks(g *gpuSetup, n int, notes []string) ([]record.Link, []string) {
	var hosts []string
	devs := map[string][]harness.DeviceLinks{}
	for i := 0; i < n; i++ {
		info, err := g.lib.DeviceInfo(i)
		if err != nil {
			continue
		}
		l, err := g.lib.LinkInfo(i)
		if err != nil {
			notes = append(notes, fmt.Sprintf("GPU %d: no link facts (%v): its paths have no physical ceiling", i, err))
			continue
		}
		if l.NVML == 0 {
			notes = append(notes, fmt.Sprintf("GPU %d: %s: NVLink and PCIe ceilings unknown", i, l.DetailString()))
		}
		host := info.HostString()
		if devs[host] == nil {
			hosts = append(hosts, host)
		}
		devs[host] = append(devs[host], harness.DeviceLinks{PCI: info.PCIString(), Links: l})
	}
	var links []record.Link
	for _, host := range hosts {
		links = append(links, harness.BuildLinks(host, devs[host])...)
	}
	return links, notes
}

var ansi = regexp.MustCompile("\x1b\\[[0-9;]*m")

// topology records nvidia-smi topo -m when available, else the P2P matrix.
func topology(g *gpuSetup, gpus int) string {
	if out, err := exec.Command("nvidia-smi", "topo", "-m").Output(); err == nil {
		return ansi.ReplaceAllString(string(out), "")
	}
	var b strings.Builder
	fmt.Fprintf(&b, "P2P access (cudaDeviceCanAccessPeer):\n")
	for i := 0; i < gpus; i++ {
		var row []string
		for j := 0; j < gpus; j++ {
			if i == j {
				row = append(row, "X")
				continue
			}
			ok, err := g.lib.CanAccessPeer(i, j)
			switch {
			case err != nil:
				row = append(row, "?")
			case ok:
				row = append(row, "P2P")
			default:
				row = append(row, "-")
			}
		}
		fmt.Fprintf(&b, "GPU%d %s\n", i, strings.Join(row, " "))
	}
	return b.String()
}
