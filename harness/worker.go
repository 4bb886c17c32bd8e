package harness

import (
	"encoding/json"
	"fmt"
	"io"
	"runtime"
	"strings"
	"sync"

	"github.com/nvshbench/nvshbench/cuda"
	"github.com/nvshbench/nvshbench/record"
)

// Message is one line a worker writes to the controller (JSON on stdout).
type Message struct {
	Type    string               `json:"type"` // uid, info, start, result, fatal, refused, done
	Rank    int                  `json:"rank"`
	Index   int                  `json:"index,omitempty"`
	Key     string               `json:"key,omitempty"` // a result's point: ID and params (ItemKey)
	UID     []byte               `json:"uid,omitempty"`
	GPU     *record.GPU          `json:"gpu,omitempty"`
	Job     []record.GPU         `json:"job,omitempty"`  // rank 0's info: every PE's GPU
	Caps    *record.Capabilities `json:"caps,omitempty"` // rank 0's info: the job's capabilities
	NVSHMEM string               `json:"nvshmem,omitempty"`
	NCCL    string               `json:"nccl,omitempty"`
	CUDA    string               `json:"cuda,omitempty"`
	Driver  string               `json:"driver,omitempty"`
	Outcome *Outcome             `json:"outcome,omitempty"`
	// Ranks is rank 0's result under a launcher: every PE's outcome or
	// error, gathered (WorkerSpec.Gather), in PE order.
	Ranks []RankResult `json:"ranks,omitempty"`
	// Pair is rank 0's info: the pair the run's point-to-point rows
	// measure (RunPair), or PairWhy why the job has none.
	Pair    *record.Pair `json:"pair,omitempty"`
	PairWhy string       `json:"pair_why,omitempty"`
	// Sensors is rank 0's info: why its GPU's SM clock and power are not
	// sampled ("": they are, every point).
	Sensors string `json:"sensors,omitempty"`
	Error   string `json:"error,omitempty"`
}

// Emitter writes messages as JSON lines; safe for concurrent use.
type Emitter struct {
	mu sync.Mutex
	w  io.Writer
}

// NewEmitter writes to w.
func NewEmitter(w io.Writer) *Emitter { return &Emitter{w: w} }

// Emit writes one message.
func (e *Emitter) Emit(m Message) error {
	b, err := json.Marshal(m)
	if err != nil {
		return err
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	_, err = e.w.Write(append(b, '\n'))
	return err
}

// RankResult is one PE's result of a point: its outcome, or its error.
type RankResult struct {
	Outcome *Outcome `json:"outcome,omitempty"`
	Error   string   `json:"error,omitempty"`
}

// WorkerSpec says how a worker joins the job.
type WorkerSpec struct {
	Rank, NRanks int
	Device       int
	Mode         int    // cuda.InitUID or cuda.InitEnv
	UID          []byte // for InitUID; rank 0 makes it when empty
	// Gather: every PE's result of each point is gathered at rank 0
	// (through the library, a collective call after the point), which
	// reports them all: under a launcher only rank 0 reports.
	Gather bool
	// Nodes is how many nodes the launcher started the job on (Launcher
	// names it); a job whose PEs run on fewer is refused (0: not known).
	Nodes    int
	Launcher string
}

// Refused is a job that cannot run the plan as it was started (a node of
// the launcher's without a PE): every PE refuses it alike, before any
// point, and rank 0 reports it (a "refused" message).
type Refused struct{ Why string }

func (e *Refused) Error() string { return e.Why }

// missingNode says why a job the launcher started on nodes nodes cannot
// run: its PEs run on fewer ("" where they cover them, or nodes is 0).
func missingNode(job *Job, nodes int, by string) string {
	hosts := map[string]bool{}
	var names []string
	for pe := range job.PEs {
		if h := job.PEs[pe].HostString(); !hosts[h] {
			hosts[h] = true
			names = append(names, h)
		}
	}
	if nodes <= len(hosts) {
		return ""
	}
	return fmt.Sprintf("%s started this job on %d nodes, but its %d PE(s) run on %d (%s): a node has no PE, so no pair across it is measured; "+
		"start tasks on every node (srun --ntasks-per-node, mpirun --map-by ppr:N:node) or ask for as many nodes as the tasks use",
		by, nodes, job.NPEs(), len(hosts), strings.Join(names, ", "))
}

// gather exchanges every PE's result of a point (one collective call): its
// in-kernel times as their summary (they may be 100 000 a point).
func gather(lib cuda.Lib, mine RankResult) ([]RankResult, error) {
	if o := mine.Outcome; o != nil && len(o.Kernel) > 0 {
		c := *o
		c.KernelTimer, c.Kernel = o.kernelTimer(), nil
		mine.Outcome = &c
	}
	b, err := json.Marshal(mine)
	if err != nil {
		return nil, err
	}
	all, err := lib.Gather(b)
	if err != nil {
		return nil, err
	}
	out := make([]RankResult, len(all))
	for pe, b := range all {
		if err := json.Unmarshal(b, &out[pe]); err != nil {
			return nil, fmt.Errorf("PE %d's result: %v", pe, err)
		}
	}
	return out, nil
}

// GPUOf describes PE pe's GPU for a results header.
func GPUOf(i *cuda.Info, pe int) record.GPU {
	return record.GPU{Index: int(i.Device), PE: pe, Host: i.HostString(), Name: i.NameString(), UUID: i.UUIDString(),
		PCIBusID: i.PCIString(), SMs: int(i.SMs), MemoryBytes: i.MemBytes, L2Bytes: i.L2Bytes, ClockKHz: int(i.ClockKHz),
		CC: fmt.Sprintf("%d.%d", i.CCMajor, i.CCMinor)}
}

// RunWorker initialises NVSHMEM on this PE, learns the job-wide facts and
// runs every item of the plan, reporting each outcome. Every PE runs every
// item through RunPoint, so the PEs' collective calls stay in step; errors
// of one point are reported and the loop goes on; only a failure of a call
// every PE must make ends it.
func RunWorker(lib cuda.Lib, spec WorkerSpec, plan Plan, em *Emitter) error {
	// CUDA's current device and NVSHMEM's context belong to an OS thread:
	// every call of this PE into the shim comes from this one.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if spec.Mode == cuda.InitUID && len(spec.UID) == 0 {
		if spec.Rank != 0 {
			return fmt.Errorf("rank %d started without the NVSHMEM unique ID", spec.Rank)
		}
		uid, err := lib.UniqueID()
		if err != nil {
			return err
		}
		spec.UID = uid
		if err := em.Emit(Message{Type: "uid", Rank: 0, UID: uid}); err != nil {
			return err
		}
	}
	cfg := plan.Config
	if err := lib.Init(spec.Mode, spec.Rank, spec.NRanks, spec.UID, spec.Device, cfg.MaxSize()); err != nil {
		return err
	}
	cj, err := lib.Job()
	if err != nil {
		return err
	}
	caps, err := lib.Agree(ProbeHost()) // every PE's host capabilities, the same on every PE
	if err != nil {
		return err
	}
	job := &Job{Job: cj, Rank: spec.Rank, Caps: caps}
	if spec.Rank >= job.NPEs() {
		return fmt.Errorf("rank %d of a job of %d PEs", spec.Rank, job.NPEs())
	}
	if why := missingNode(job, spec.Nodes, spec.Launcher); why != "" { // every PE alike: the job's facts
		em.Emit(Message{Type: "refused", Rank: spec.Rank, Error: why})
		return &Refused{Why: why}
	}
	me := &cj.PEs[spec.Rank]
	gpu := GPUOf(me, spec.Rank)
	info := Message{Type: "info", Rank: spec.Rank, GPU: &gpu, NVSHMEM: me.NVSHMEMVersion(), NCCL: me.NCCLVersionString(),
		CUDA: cuda.CUDAVersion(me.CUDARuntime), Driver: cuda.CUDAVersion(me.CUDADriver)}
	if spec.Rank == 0 {
		for r := range cj.PEs {
			info.Job = append(info.Job, GPUOf(&cj.PEs[r], r))
		}
		info.Caps = job.Capabilities()
		info.Pair, info.PairWhy = RunPair(job.Placement(), &cfg)
	}
	sensor, serr := lib.Sensor(spec.Device)
	if serr != nil {
		sensor = nil
		info.Sensors = "SM clock and power not sampled: " + serr.Error()
	}
	if err := em.Emit(info); err != nil {
		return err
	}
	rule := plan.EnvRule(spec.Mode == cuda.InitEnv)
	for _, it := range plan.Items {
		em.Emit(Message{Type: "start", Rank: spec.Rank, Index: it.Index})
		msg := Message{Type: "result", Rank: spec.Rank, Index: it.Index, Key: ItemKey(it)}
		b, ok := Lookup(it.ID)
		if !ok {
			// Every PE runs the same binary and plan: all of them land here.
			msg.Error = "unknown benchmark " + it.ID
		} else {
			env := &Env{Job: job, Config: &cfg, Index: it.Index, Rule: rule, Sensor: sensor}
			out, err := RunPoint(lib, env, b, it.Params)
			msg.Outcome = &out
			if err != nil {
				msg.Outcome, msg.Error = nil, err.Error()
			}
		}
		if spec.Gather {
			if msg.Ranks, err = gather(lib, RankResult{Outcome: msg.Outcome, Error: msg.Error}); err != nil {
				return fmt.Errorf("gathering every PE's result of point %d at rank 0: %w", it.Index, err)
			}
			if spec.Rank != 0 {
				msg.Ranks = nil
			}
		}
		if err := em.Emit(msg); err != nil {
			return err
		}
	}
	if err := lib.Finalize(); err != nil {
		return err
	}
	return em.Emit(Message{Type: "done", Rank: spec.Rank})
}
