// Package harness owns what every benchmark shares: the registry of
// benchmarks, parameter sweeps, the per-point plan, the job-wide facts every
// decision is made from (every PE's GPU, the paths between them, every
// host's capabilities), the agreement on each point before any PE starts
// it, and the merge of the outcomes into one results record with derived
// metrics and the in-run limit. Measuring itself (calibration, warm-up,
// timed launches, graph capture, verification totals) is the CUDA shim's
// one loop, nb_run, which every benchmark runs through. A benchmark is a
// small declarative registration in its suite.
package harness

import (
	"fmt"
	"path"
	"sort"

	"github.com/nvshbench/nvshbench/cuda"
	"github.com/nvshbench/nvshbench/internal/ids"
	"github.com/nvshbench/nvshbench/record"
)

// Benchmark is one registration.
type Benchmark struct {
	ID      string
	Suite   string
	Desc    string
	Metrics []string // metrics derived from its samples
	// Limits name the limit benchmarks of the same path that its bandwidth
	// is a fraction of; the highest measured in the run is the limit
	// (which of them is faster depends on the machine and the path).
	Limits []string
	// Floors name the in-run chases its round trips are compared with
	// (measured first, like the limits).
	Floors []string
	// Default: part of a plain 'nvshbench run' / reproduce selection.
	Default bool
	// AllPEs: every PE of the job takes part (a collective, a MoE step,
	// host calls, a barrier) or it stays on one GPU. Otherwise the
	// benchmark is point-to-point: the harness chooses the pair its path
	// asks for (Job.PairFor; params.pair where the run names one), waives
	// a point whose job has none, hands the pair to Args (Env.Pair) and
	// records it.
	AllPEs bool
	// IgnoresCTAs / IgnoresThreads: the benchmark fixes that part of its
	// launch itself (OwnLaunch says how), so --ctas / --threads do not
	// apply to it; run refuses them when every selected benchmark ignores
	// them and warns when some do; list shows it.
	IgnoresCTAs    bool
	IgnoresThreads bool
	OwnLaunch      string
	// Points lists the parameters to measure under a configuration.
	Points func(c *Config) []record.Params
	// Args turns a point into the shim's arguments, or says why this job
	// cannot run it (a waiver). It sees only job-wide facts, the
	// configuration and the point, so every PE gets the same answer; the
	// harness checks that they did before any PE starts the point.
	Args func(e *Env, p record.Params) (cuda.Args, string)
	// Describe completes a measured point's outcome (effective path, bus
	// factor); optional.
	Describe func(e *Env, p record.Params, a cuda.Args, r cuda.Result, o *Outcome)
	// Code is what its timed operation runs (the libraries it calls, a
	// library's own collective): readers get it with each point
	// (record.Reader.Code) to attribute a version change to the rows whose
	// code calls that library, and to tell a library's one-rank copy from
	// its collective. Required.
	Code record.Code
	// Values declares the named values the shim may give its points (the
	// family's record layer declares them): a value it does not declare,
	// or declares in another unit, fails the point.
	Values record.Values
	// Unverifiable says why the benchmark's points have nothing to check
	// (an empty kernel moves no data); every other ok point is verified.
	Unverifiable string
	// Buffer is what a point needs of each PE buffer (0: its size), for a
	// job of pes PEs; optional.
	Buffer func(c *Config, pes int, p record.Params) int64
}

var registry = map[string]*Benchmark{}

// Register adds a benchmark; suites call it from init.
func Register(b Benchmark) {
	if b.ID == "" || b.Args == nil || b.Points == nil {
		panic("harness.Register: ID, Points and Args are required")
	}
	if why := b.Code.Invalid(); why != "" {
		panic("harness.Register: " + b.ID + ": Code: " + why)
	}
	if _, dup := registry[b.ID]; dup {
		panic("harness.Register: duplicate " + b.ID)
	}
	registry[b.ID] = &b
}

// Metrics names the metrics the benchmark id's points carry (nil for an ID
// nothing registers): what record.Reader needs to read a point stored
// without them.
func Metrics(id string) []string {
	if b, ok := registry[id]; ok {
		return b.Metrics
	}
	return nil
}

// CodeOf is what the benchmark id declares its code runs (false for an ID
// nothing registers).
func CodeOf(id string) (record.Code, bool) {
	if b, ok := registry[id]; ok {
		return b.Code, true
	}
	return record.Code{}, false
}

// Reader reads results files with the registry's metrics and code.
func Reader() record.Reader { return record.Reader{Metrics: Metrics, Code: CodeOf} }

// All returns every registered benchmark sorted by ID.
func All() []*Benchmark {
	out := make([]*Benchmark, 0, len(registry))
	for _, b := range registry {
		out = append(out, b)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// Lookup finds a benchmark by exact ID.
func Lookup(id string) (*Benchmark, bool) {
	b, ok := registry[id]
	return b, ok
}

// Select returns the benchmarks matching any pattern: an exact ID, a prefix
// ending at a '/' boundary ("rma" or "rma/put"), or a glob ("rma/*/block").
// No pattern selects the default set. A pattern matching nothing is an error.
func Select(patterns []string) ([]*Benchmark, error) {
	all := All()
	if len(patterns) == 0 {
		var out []*Benchmark
		for _, b := range all {
			if b.Default {
				out = append(out, b)
			}
		}
		return out, nil
	}
	seen := map[string]bool{}
	var out []*Benchmark
	for _, pat := range patterns {
		if _, err := path.Match(pat, ""); err != nil {
			return nil, fmt.Errorf("bad benchmark pattern %q: %v", pat, err)
		}
		sel, n := ids.Pattern(pat), 0
		for _, b := range all {
			if sel.Match(b.ID) {
				n++
				if !seen[b.ID] {
					seen[b.ID] = true
					out = append(out, b)
				}
			}
		}
		if n == 0 {
			return nil, fmt.Errorf("unknown benchmark %q (see 'nvshbench list')", pat)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out, nil
}

// LaunchText says how the benchmark launches: "--ctas × --threads" where it
// honours both flags, else its own launch.
func (b *Benchmark) LaunchText() string {
	switch {
	case !b.IgnoresCTAs && !b.IgnoresThreads:
		return "--ctas × --threads"
	case b.OwnLaunch != "":
		return b.OwnLaunch
	}
	return "own launch"
}
