// Package harness owns what every benchmark shares: the registry of
// benchmarks, parameter sweeps, the per-point plan, execution on each PE's
// worker (warm-up, timed samples, verification) and the merge of the PEs'
// outcomes into one results record with derived metrics and the in-run
// limit. A benchmark is a small declarative registration in its suite.
package harness

import (
	"errors"
	"fmt"
	"os"
	"path"
	"sort"
	"strings"

	"github.com/nvshbench/nvshbench/cuda"
	"github.com/nvshbench/nvshbench/results"
)

// Benchmark is one registration.
type Benchmark struct {
	ID      string
	Suite   string
	Desc    string
	Metrics []string // metrics derived from its samples
	// LimitID names the limit benchmark its bandwidth is a fraction of.
	LimitID string
	// Default: part of a plain 'nvshbench run' / reproduce selection.
	Default bool
	// Points lists the parameters to measure under a configuration.
	Points func(c *Config) []results.Params
	// Exec runs one point on one PE (every PE of the job calls it).
	Exec func(e *Env, p results.Params) (Outcome, error)
}

var registry = map[string]*Benchmark{}

// Register adds a benchmark; suites call it from init.
func Register(b Benchmark) {
	if b.ID == "" || b.Exec == nil || b.Points == nil {
		panic("harness.Register: ID, Points and Exec are required")
	}
	if _, dup := registry[b.ID]; dup {
		panic("harness.Register: duplicate " + b.ID)
	}
	registry[b.ID] = &b
}

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
		n := 0
		for _, b := range all {
			if matches(pat, b.ID) {
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

func matches(pat, id string) bool {
	if pat == id {
		return true
	}
	if strings.HasPrefix(id, strings.TrimSuffix(pat, "/")+"/") {
		return true
	}
	ok, _ := path.Match(pat, id)
	return ok
}

// Env is what a benchmark's Exec gets on a worker.
type Env struct {
	Lib    cuda.Lib
	Rank   int
	NPEs   int
	Config *Config
	Index  int // the point's index in the plan (seeds the pattern)
}

// Outcome is one PE's result for one point.
type Outcome struct {
	Samples []float64 `json:"samples,omitempty"` // seconds per operation (the timing PE)
	Iters   int       `json:"iters,omitempty"`
	Bytes   int64     `json:"bytes,omitempty"` // payload this PE moved per operation
	Checked int64     `json:"checked,omitempty"`
	Errors  int64     `json:"errors,omitempty"`
	// JobChecked and JobErrors are the totals over every PE, known to PE 0
	// (used when the PEs cannot report to one controller: srun / mpirun).
	JobChecked int64   `json:"job_checked,omitempty"`
	JobErrors  int64   `json:"job_errors,omitempty"`
	Detail     string  `json:"detail,omitempty"`
	Effective  string  `json:"effective,omitempty"`
	Waived     string  `json:"waived,omitempty"`
	WorkSet    int64   `json:"work_set,omitempty"`   // bytes resident on the busiest GPU
	Timer      string  `json:"timer,omitempty"`      // events (default) or globaltimer
	BusFactor  float64 `json:"bus_factor,omitempty"` // collectives: algbw → busbw (nccl-tests factors)
	L2Bytes    int64   `json:"l2_bytes,omitempty"`
}

// Peer is the PE a point talks to and the path to it, as seen from this PE.
type Peer struct {
	PE        int
	Path      int    // cuda.PathLocal, PathP2P, PathRemote
	Effective string // local, p2p, ibgda, proxy
	Waived    string // why this point cannot run on the requested path
}

// PeerOf returns PE 1 (or PE 0 itself in a one-PE job) and the path to it.
// With --path p2p a peer that has no load/store mapping waives the point.
func PeerOf(e *Env) (Peer, error) {
	p := Peer{}
	if e.NPEs > 1 {
		p.PE = 1
	}
	path, err := e.Lib.PeerPath(p.PE)
	if err != nil {
		return p, err
	}
	p.Path = path
	switch path {
	case cuda.PathLocal:
		p.Effective = "local"
	case cuda.PathP2P:
		p.Effective = "p2p"
	default:
		p.Effective = "proxy"
		if e.Config.Path == "ibgda" || os.Getenv("NVSHMEM_IB_ENABLE_IBGDA") == "1" {
			p.Effective = "ibgda"
		}
	}
	if e.Config.Path == "p2p" && path == cuda.PathRemote {
		p.Waived = fmt.Sprintf("PE %d has no load/store mapping from PE 0 (no NVLink/PCIe P2P): NVSHMEM would use a remote transport; measure it with --path proxy or --path ibgda", p.PE)
	}
	return p, nil
}

var l2Bytes int64 = -1

// L2Bytes is the L2 size of this PE's GPU (0 if unknown), read once.
func L2Bytes(e *Env) int64 {
	if l2Bytes < 0 {
		l2Bytes = 0
		if info, err := e.Lib.Info(); err == nil {
			l2Bytes = info.L2Bytes
		}
	}
	return l2Bytes
}

// Absorb copies a shim call's result into o: its samples and counts, or,
// when the call says this machine cannot run the point (no load/store path,
// no NCCL, not capturable), the reason as a waiver. Other errors are
// returned.
func (o *Outcome) Absorb(samples []float64, r cuda.RMAResult, err error) error {
	if err != nil {
		var ce *cuda.Error
		if errors.As(err, &ce) && (ce.Unreachable() || ce.NotCapturable()) {
			o.Waived = ce.Msg
			return nil
		}
		return err
	}
	o.Samples, o.Iters, o.Bytes = samples, int(r.Iters), r.Bytes
	o.Checked, o.Errors, o.Detail = r.Checked, r.Errors, r.DetailString()
	o.JobChecked, o.JobErrors = r.JobChecked, r.JobErrors
	return nil
}
