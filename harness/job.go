package harness

import (
	"fmt"
	"os"

	"github.com/nvshbench/nvshbench/cuda"
	"github.com/nvshbench/nvshbench/record"
)

// Job is what every PE knows about the whole job, the same on each: every
// PE's GPU and the paths between them (one collective call at start-up).
// Every decision about a point (its peer, its path, a waiver) is made from
// these facts, never from what one PE sees of itself, so that all PEs make
// the same collective calls.
type Job struct {
	cuda.Job
	Rank int     // this PE
	Caps []int64 // every PE's host capabilities (Cap* bits), exchanged at start-up
}

// NPEs is the number of PEs.
func (j *Job) NPEs() int { return len(j.PEs) }

// Path is how PE from reaches PE to (cuda.PathLocal, PathP2P, PathRemote).
func (j *Job) Path(from, to int) int {
	if from < 0 || from >= len(j.Paths) || to < 0 || to >= len(j.Paths[from]) {
		return cuda.PathRemote
	}
	return j.Paths[from][to]
}

// AnyRemote reports whether some PE of the job reaches another over a
// remote transport (several nodes): NVSHMEM decides some paths for the
// whole job's connectivity, not for one pair's.
func (j *Job) AnyRemote() bool {
	for from := range j.Paths {
		for to := range j.Paths[from] {
			if j.Path(from, to) == cuda.PathRemote {
				return true
			}
		}
	}
	return false
}

// SharedGPU reports whether two PEs of the job run on one GPU.
func (j *Job) SharedGPU() bool {
	for a := range j.Paths {
		for b := range j.Paths[a] {
			if a != b && j.Paths[a][b] == cuda.PathLocal {
				return true
			}
		}
	}
	return false
}

// Unmapped names a pair of PEs without a load/store mapping ("" if every
// PE reaches every other by load/store).
func (j *Job) Unmapped() string {
	for a := range j.Paths {
		for b := range j.Paths[a] {
			if j.Paths[a][b] == cuda.PathRemote {
				return fmt.Sprintf("PE %d has no load/store mapping to PE %d", a, b)
			}
		}
	}
	return ""
}

// NCCLMissing says which PE could not load NCCL ("" if every PE did).
func (j *Job) NCCLMissing() string {
	for i := range j.PEs {
		if j.PEs[i].NCCLVersion <= 0 {
			return fmt.Sprintf("NCCL (libnccl.so.2) is not loadable on PE %d", i)
		}
	}
	return ""
}

// NCCLHostMissing says why NCCL's host API cannot run a point of this job
// ("" if it can): NCCL not loadable on some PE, or two ranks on one GPU,
// which NCCL refuses.
func (j *Job) NCCLHostMissing() string {
	if why := j.NCCLMissing(); why != "" {
		return why
	}
	if j.NPEs() > 1 && j.SharedGPU() {
		return "NCCL refuses two ranks on one GPU"
	}
	return ""
}

// NCCLDeviceAPIMissing says why NCCL's device API (symmetric windows, LSA,
// GIN: NCCL 2.28 and later) cannot run on every PE ("" if it can). Whether
// the loaded library matches the device ABI the shim was compiled against
// is the shim's check.
func (j *Job) NCCLDeviceAPIMissing() string {
	if why := j.NCCLMissing(); why != "" {
		return why
	}
	for i := range j.PEs {
		if v := j.PEs[i].NCCLVersion; v < 22800 {
			return fmt.Sprintf("NCCL's device API needs NCCL 2.28 or later; PE %d loaded %s", i, j.PEs[i].NCCLVersionString())
		}
	}
	if j.NPEs() > 1 && j.SharedGPU() {
		return "NCCL refuses two ranks on one GPU"
	}
	return ""
}

// NCCLVersion is the NCCL version PE 0 loaded ("" if none).
func (j *Job) NCCLVersion() string {
	if len(j.PEs) == 0 {
		return ""
	}
	return j.PEs[0].NCCLVersionString()
}

// L2Bytes is the smallest L2 of the job's GPUs (0 if unknown).
func (j *Job) L2Bytes() int64 {
	var m int64
	for i := range j.PEs {
		if l := j.PEs[i].L2Bytes; l > 0 && (m == 0 || l < m) {
			m = l
		}
	}
	return m
}

// PathName names a path as the results record it: local, p2p, or the
// remote transport in use (ibgda when requested, else proxy).
func PathName(path int, cfg *Config) string {
	switch path {
	case cuda.PathLocal:
		return "local"
	case cuda.PathP2P:
		return "p2p"
	}
	if cfg.Path == "ibgda" || os.Getenv("NVSHMEM_IB_ENABLE_IBGDA") == "1" {
		return "ibgda"
	}
	return "proxy"
}

// Env is what a benchmark's Args and Describe see: job-wide facts, the
// run's configuration, the point's place in the plan and, for a
// point-to-point benchmark, the pair it measures.
type Env struct {
	Job    *Job
	Config *Config
	Index  int      // the point's index in the plan (seeds the pattern)
	Rule   *EnvRule // whether this PE's environment runs the point as recorded (nil: its own variables only)
	// Sensor reads this PE's GPU's SM clock and power while a point runs
	// (nil: none, nothing sampled).
	Sensor cuda.Sensor
	// pair is the pair RunPoint chose for the point (Job.PairFor); nil:
	// the one the run's placement gives (an Env made without RunPoint).
	pair *Pair
}

// Pair is the pair a point-to-point point measures.
func (e *Env) Pair() Pair {
	if e.pair != nil {
		return *e.pair
	}
	p, _ := pairOf(e.Job.Placement(), e.Config.Path, e.Config.Pair)
	return p
}

// PairPath is how the pair's initiator reaches its peer.
func (e *Env) PairPath() int {
	p := e.Pair()
	return e.Job.Path(p.From, p.To)
}

// envWaiver is why this PE's environment cannot run a point of benchmark
// id with environment env ("" where it can).
func (e *Env) envWaiver(id string, env map[string]string) string {
	r := e.Rule
	if r == nil {
		r = &EnvRule{}
	}
	return r.Waiver(id, env, lookupEnv)
}

// Outcome is one PE's result for one point.
type Outcome struct {
	// PE, GPU and Node say who reported it: the PE, its GPU's ordinal on
	// its node, the node.
	PE      int       `json:"pe"`
	GPU     int       `json:"gpu"`
	Node    string    `json:"node,omitempty"`
	Samples []float64 `json:"samples,omitempty"` // seconds per operation (a PE that timed): the events timer
	Kernel  []float64 `json:"kernel,omitempty"`  // seconds per iteration, in-kernel (a PE that timed): the spread
	// KernelTimer is Kernel's summary where the times themselves stayed on
	// their PE (a result gathered at rank 0 under a launcher).
	KernelTimer *record.Summary `json:"kernel_timer,omitempty"`
	Iters       int             `json:"iters,omitempty"` // operations per sample
	Bytes       int64           `json:"bytes,omitempty"` // payload this PE moved per operation
	Checked     int64           `json:"checked,omitempty"`
	Errors      int64           `json:"errors,omitempty"`
	Detail      string          `json:"detail,omitempty"`
	Effective   string          `json:"effective,omitempty"`
	Waived      string          `json:"waived,omitempty"`
	WorkSet     int64           `json:"work_set,omitempty"`   // bytes resident on the busiest GPU
	BusFactor   float64         `json:"bus_factor,omitempty"` // collectives: algbw → busbw (nccl-tests factors)
	L2Bytes     int64           `json:"l2_bytes,omitempty"`
	// Floor names the in-run floor a round trip is compared with: the chase
	// of its path served by memory (a chase) or by the cache (any other
	// round trip); "" for what is not a round trip.
	Floor string `json:"floor,omitempty"`
	// Values are the suite's counts beside the samples (Point.Values).
	Values map[string]float64 `json:"values,omitempty"`
	// Pair is the pair a point-to-point point measured.
	Pair *record.Pair `json:"pair,omitempty"`
	// Clock is this PE's GPU's SM clock and power while the point ran
	// (sampled: nil where nothing was).
	Clock *record.Clock `json:"clock,omitempty"`
}

// The floors (limit/chase-* points, params.extra.served): a chain longer
// than the caches, or one read into the L2 first.
const (
	ServedMemory = "memory"
	ServedCache  = "cache"
)

// Absorb copies a shim call's result into o: its timing, counts and
// named values (each one of decl, in its unit and range), or, when the
// call says this job cannot run the point (no load/store path, no NCCL,
// not capturable), the reason as a waiver. Other errors are returned, and
// a value decl does not have (or has in another unit or out of its
// range), or more values than the result holds: the point fails with that
// sentence.
func (o *Outcome) Absorb(t cuda.Timing, r cuda.Result, err error, decl record.Values) error {
	if err != nil {
		if ce, ok := err.(*cuda.Error); ok && (ce.Unreachable() || ce.NotCapturable()) {
			o.Waived = ce.Msg
			return nil
		}
		return err
	}
	vals, err := r.NamedValues()
	if err != nil {
		return err
	}
	for i := range vals {
		name, unit := vals[i].NameString(), vals[i].UnitString()
		if err := decl.Read(name, unit, vals[i].Value); err != nil {
			return err
		}
		if _, twice := o.Values[name]; twice {
			return fmt.Errorf("the shim gave the value %s twice", name)
		}
		if o.Values == nil {
			o.Values = map[string]float64{}
		}
		o.Values[name] = vals[i].Value
	}
	o.Samples, o.Kernel, o.Iters, o.Bytes = t.Samples, t.Kernel, r.OpsPerSample(), r.Bytes
	o.Checked, o.Errors, o.Detail = r.Checked, r.Errors, r.DetailString()
	o.WorkSet = r.WorkSet
	return nil
}
