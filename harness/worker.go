package harness

import (
	"encoding/json"
	"fmt"
	"io"
	"sync"

	"github.com/nvshbench/nvshbench/cuda"
	"github.com/nvshbench/nvshbench/results"
)

// Message is one line a worker writes to the controller (JSON on stdout).
type Message struct {
	Type    string       `json:"type"` // uid, info, start, result, fatal, done
	Rank    int          `json:"rank"`
	Index   int          `json:"index,omitempty"`
	UID     []byte       `json:"uid,omitempty"`
	GPU     *results.GPU `json:"gpu,omitempty"`
	NVSHMEM string       `json:"nvshmem,omitempty"`
	CUDA    string       `json:"cuda,omitempty"`
	Driver  string       `json:"driver,omitempty"`
	Outcome *Outcome     `json:"outcome,omitempty"`
	Error   string       `json:"error,omitempty"`
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

// WorkerSpec says how a worker joins the job.
type WorkerSpec struct {
	Rank, NRanks int
	Device       int
	Mode         int    // cuda.InitUID or cuda.InitEnv
	UID          []byte // for InitUID; rank 0 makes it when empty
}

// RunWorker initialises NVSHMEM on this PE and runs every item of the plan,
// reporting each outcome. Errors of one point are reported and the loop goes
// on; only an init failure ends it.
func RunWorker(lib cuda.Lib, spec WorkerSpec, plan Plan, em *Emitter) error {
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
	info, err := lib.Info()
	if err != nil {
		return err
	}
	gpu := results.GPU{Index: int(info.Device), Name: info.NameString(), UUID: info.UUIDString(), PCIBusID: info.PCIString(),
		SMs: int(info.SMs), MemoryBytes: info.MemBytes, L2Bytes: info.L2Bytes, ClockKHz: int(info.ClockKHz),
		CC: fmt.Sprintf("%d.%d", info.CCMajor, info.CCMinor)}
	em.Emit(Message{Type: "info", Rank: spec.Rank, GPU: &gpu, NVSHMEM: info.NVSHMEMVersion(),
		CUDA: cuda.CUDAVersion(info.CUDARuntime), Driver: cuda.CUDAVersion(info.CUDADriver)})
	npes := int(info.NPEs)
	if npes == 0 {
		npes = spec.NRanks
	}
	for _, it := range plan.Items {
		em.Emit(Message{Type: "start", Rank: spec.Rank, Index: it.Index})
		b, ok := Lookup(it.ID)
		if !ok {
			em.Emit(Message{Type: "result", Rank: spec.Rank, Index: it.Index, Error: "unknown benchmark " + it.ID})
			continue
		}
		env := &Env{Lib: lib, Rank: spec.Rank, NPEs: npes, Config: &cfg, Index: it.Index}
		out, err := b.Exec(env, it.Params)
		msg := Message{Type: "result", Rank: spec.Rank, Index: it.Index, Outcome: &out}
		if err != nil {
			msg.Outcome, msg.Error = nil, err.Error()
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
