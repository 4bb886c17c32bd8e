package main

import (
	"fmt"
	"io"
	"os"
	"path"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/nvshbench/nvshbench/harness"
	"github.com/nvshbench/nvshbench/internal/ids"
	"github.com/nvshbench/nvshbench/internal/table"
	"github.com/nvshbench/nvshbench/record"
)

func newRootCmd(stdin io.Reader, stdout, stderr io.Writer) *cobra.Command {
	root := &cobra.Command{
		Use:   "nvshbench",
		Short: "Characterize GPU communication: NVSHMEM RMA, latency and collectives against NCCL",
		Long: `nvshbench measures device-initiated NVSHMEM communication (bulk put/get, scalar p/g,
latency, AllReduce, MoE dispatch/combine) and NCCL baselines on your GPUs, writes every
run to one results format (JSON Lines), renders the tables and charts of "Demystifying
NVSHMEM" (arXiv 2606.05951) beside the published numbers and the hardware limit measured
in the same run, and turns runs into decisions.

  run, reproduce               measure (need GPUs and the CUDA shim)
  check                        bring-up: every GPU pair, PASS / WARN / FAIL per GPU, pair, node
  doctor, build-shim           what this machine has and lacks; build the CUDA shim
  list                         the benchmarks, with their launch
  report, plot, compare, model read results files (tables, charts, statistics,
                               decisions); work on any machine`,
		SilenceUsage:  true,
		SilenceErrors: true,
		Version:       versionString(),
	}
	root.SetIn(stdin)
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return usageError{fmt.Errorf("%w (see '%s --help')", err, c.CommandPath())}
	})
	root.AddCommand(
		newReportCmd(),
		newModelCmd(),
		newPlotCmd(),
		newCompareCmd(),
		newListCmd(),
		newVersionCmd(),
		newRunCmd(),
		newDoctorCmd(),
		newBuildShimCmd(),
		newReproduceCmd(),
		newCheckCmd(),
		newWorkerCmd(),
	)
	// Unknown subcommands are usage errors.
	root.Args = func(c *cobra.Command, args []string) error {
		if len(args) > 0 {
			return usagef("unknown command %q (see 'nvshbench --help')", args[0])
		}
		return nil
	}
	root.RunE = func(c *cobra.Command, args []string) error { return c.Help() }
	// 'completion tcsh' is bad usage, not a help page with exit 0.
	root.InitDefaultCompletionCmd()
	if comp, _, err := root.Find([]string{"completion"}); err == nil && comp != root {
		comp.Args = func(c *cobra.Command, args []string) error {
			if len(args) > 0 {
				return usagef("no completion for %q: want bash, zsh, fish or powershell", args[0])
			}
			return nil
		}
		comp.RunE = func(c *cobra.Command, args []string) error { return c.Help() }
	}
	return root
}

// loadFiles reads results files named on the command line. An argument of
// the form label=path names the file's column or series.
func loadFiles(args []string, stderr io.Writer) ([]*record.File, error) {
	var files []*record.File
	for _, a := range args {
		label, path := "", a
		if i := strings.IndexByte(a, '='); i > 0 {
			if _, err := os.Stat(a); err != nil {
				label, path = a[:i], a[i+1:]
			}
		}
		f, err := harness.Reader().ReadFile(path)
		if err != nil {
			return nil, err
		}
		if label != "" {
			f.Header.Label = label
		}
		for _, w := range f.Warnings {
			fmt.Fprintf(stderr, "warning: %s\n", table.Printable(w))
		}
		if f.Header.Synthetic {
			fmt.Fprintf(stderr, "note: %s holds SYNTHETIC data (a test fixture), not a measurement\n", path)
		}
		files = append(files, f)
	}
	return files, nil
}

// addIDFlag binds a reader's --id: the benchmarks whose points it keeps.
func addIDFlag(fs *pflag.FlagSet, p *[]string) {
	fs.StringArrayVar(p, "id", nil, "keep only the points of these benchmarks: an ID, a folder (rma/put) or a glob ('rma/*/block'), as run selects them; repeatable")
}

// keepIDs keeps, in every file, the points of the benchmarks a pattern
// takes (run's patterns); no pattern keeps every point. A pattern that
// takes no point of any file is bad usage: a block of the docs that asks
// for a row the file lacks says so instead of printing nothing.
func keepIDs(files []*record.File, patterns []string) error {
	if len(patterns) == 0 {
		return nil
	}
	sels := make([]ids.Selector, len(patterns))
	taken := make([]bool, len(patterns))
	for i, pat := range patterns {
		if _, err := path.Match(pat, ""); err != nil {
			return usagef("bad --id pattern %q: %v", pat, err)
		}
		sels[i] = ids.Pattern(pat)
	}
	for _, f := range files {
		kept := f.Points[:0]
		for _, p := range f.Points {
			keep := false
			for i, sel := range sels {
				if sel.Match(p.ID) {
					keep, taken[i] = true, true
				}
			}
			if keep {
				kept = append(kept, p)
			}
		}
		f.Points = kept
	}
	for i, pat := range patterns {
		if !taken[i] {
			return usagef("--id %s takes no point of the files (report --points lists their benchmarks)", pat)
		}
	}
	return nil
}

func checkChoice(flag, v string, allowed []string) error {
	for _, a := range allowed {
		if v == a {
			return nil
		}
	}
	return usagef("invalid --%s %q: want one of %s", flag, v, strings.Join(allowed, ", "))
}

// noArgs is cobra.NoArgs reported as a usage error.
func noArgs(c *cobra.Command, args []string) error {
	if len(args) > 0 {
		return usagef("unexpected argument %q (see '%s --help')", args[0], c.CommandPath())
	}
	return nil
}
