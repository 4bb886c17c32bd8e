package harness

import (
	"fmt"
	"os"

	"github.com/nvshbench/nvshbench/cuda"
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

// Peer is the PE that PE 0 talks to in point-to-point benchmarks: PE 1, or
// PE 0 itself in a one-PE job.
func (j *Job) Peer() int {
	if j.NPEs() > 1 {
		return 1
	}
	return 0
}

// Path is how PE from reaches PE to (cuda.PathLocal, PathP2P, PathRemote).
func (j *Job) Path(from, to int) int {
	if from < 0 || from >= len(j.Paths) || to < 0 || to >= len(j.Paths[from]) {
		return cuda.PathRemote
	}
	return j.Paths[from][to]
}

// PeerPath is the path of PE 0 to its peer.
func (j *Job) PeerPath() int { return j.Path(0, j.Peer()) }

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
// run's configuration and the point's place in the plan.
type Env struct {
	Job    *Job
	Config *Config
	Index  int      // the point's index in the plan (seeds the pattern)
	Rule   *EnvRule // whether this PE's environment runs the point as recorded (nil: its own variables only)
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
	Samples []float64 `json:"samples,omitempty"` // seconds per operation (the timing PE): the events timer
	Kernel  []float64 `json:"kernel,omitempty"`  // seconds per iteration, in-kernel (the timing PE): the spread
	Iters   int       `json:"iters,omitempty"`   // operations per sample
	Bytes   int64     `json:"bytes,omitempty"`   // payload this PE moved per operation
	Checked int64     `json:"checked,omitempty"`
	Errors  int64     `json:"errors,omitempty"`
	// JobChecked and JobErrors are the totals over every PE, known to every
	// PE (used when the PEs cannot report to one controller: srun / mpirun).
	JobChecked int64   `json:"job_checked,omitempty"`
	JobErrors  int64   `json:"job_errors,omitempty"`
	JobBytes   int64   `json:"job_bytes,omitempty"` // payload per operation summed over every PE
	Detail     string  `json:"detail,omitempty"`
	Effective  string  `json:"effective,omitempty"`
	Waived     string  `json:"waived,omitempty"`
	WorkSet    int64   `json:"work_set,omitempty"`   // bytes resident on the busiest GPU
	BusFactor  float64 `json:"bus_factor,omitempty"` // collectives: algbw → busbw (nccl-tests factors)
	L2Bytes    int64   `json:"l2_bytes,omitempty"`
	// Floor names the in-run floor a round trip is compared with: the chase
	// of its path served by memory (a chase) or by the cache (any other
	// round trip); "" for what is not a round trip.
	Floor string `json:"floor,omitempty"`
	// Values are the suite's counts beside the samples (Point.Values).
	Values map[string]float64 `json:"values,omitempty"`
}

// The floors (limit/chase-* points, params.extra.served): a chain longer
// than the caches, or one read into the L2 first.
const (
	ServedMemory = "memory"
	ServedCache  = "cache"
)

// Absorb copies a shim call's result into o: its timing and counts, or,
// when the call says this job cannot run the point (no load/store path, no
// NCCL, not capturable), the reason as a waiver. Other errors are returned.
func (o *Outcome) Absorb(t cuda.Timing, r cuda.Result, err error) error {
	if err != nil {
		if ce, ok := err.(*cuda.Error); ok && (ce.Unreachable() || ce.NotCapturable()) {
			o.Waived = ce.Msg
			return nil
		}
		return err
	}
	o.Samples, o.Kernel, o.Iters, o.Bytes = t.Samples, t.Kernel, r.OpsPerSample(), r.Bytes
	o.Checked, o.Errors, o.Detail = r.Checked, r.Errors, r.DetailString()
	o.JobChecked, o.JobErrors, o.JobBytes = r.JobChecked, r.JobErrors, r.JobBytes
	o.WorkSet = r.WorkSet
	return nil
}
