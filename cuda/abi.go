// Package cuda is the GPU boundary of nvshbench. All device code and every
// CUDA, NVSHMEM and NCCL call live in the C/CUDA shim under shim/
// (libnvshbench.so, one flat C header); this package finds the toolchain,
// builds the shim when it is missing or stale, loads it at run time with
// purego (no cgo: the binary builds and runs anywhere) and exposes it as the
// Lib interface. Fake implements Lib without a GPU for tests.
package cuda

import (
	"fmt"

	"github.com/nvshbench/nvshbench/cuda/shim"
)

// Scopes, implementations, data types and paths (NB_SCOPE_*, NB_IMPL_*,
// NB_DT_*, NB_PATH_*).
const (
	ScopeThread = 0
	ScopeWarp   = 1
	ScopeBlock  = 2

	ImplNVSHMEMDevice = 1
	ImplNVSHMEMStream = 2
	ImplOurOneShot    = 3
	ImplOurTwoShot    = 4
	ImplNCCL          = 5
	ImplLSAOneShot    = 6 // NCCL device API AllReduce: LSA pointers + LSA barriers
	ImplLSATwoShot    = 7
	ImplNCCLCE        = 8 // NCCL's copy-engine (zero-SM) path: nccl<Coll>Config with CTA policy ZERO on window buffers

	DTFloat = 0
	DTBF16  = 1
	DTHalf  = 2

	PathLocal  = 0 // the peer's memory is on this GPU (several PEs per GPU)
	PathP2P    = 1 // load/store mapping to another GPU (NVLink or PCIe P2P)
	PathRemote = 2 // no mapping: a remote transport (IBGDA or the CPU proxy)
)

// MoE modes and token types (moe.cuh's MOE_*).
const (
	MoELL     = 0 // a message per (token, expert) selection
	MoENormal = 1 // a message per (token, destination rank), fanned out on arrival
	MoEBF16   = 0
	MoEFP8    = 1
)

// Status codes of the shim (NB_ERR, NB_UNREACHABLE, NB_NOT_CAPTURABLE) and
// its limits.
const (
	StatusErr           = -1
	StatusUnreachable   = -2
	StatusNotCapturable = -4
	MaxPEs              = 64
	MaxLinks            = 36        // NB_MAX_LINKS: NVLinks a GPU may have
	MaxGather           = 512 << 10 // bytes one PE passes to Gather: a point's result with 10000 samples
	MaxValues           = 8         // NB_MAX_VALUES: named values a point's result holds
	ValueNameLen        = 24        // NB_VALUE_NAME: bytes of a value's name, the NUL included
	ValueUnitLen        = 8         // NB_VALUE_UNIT: bytes of a value's unit, the NUL included
	ABIVersion          = 8
	OpNameLen           = shim.OpNameLen // NB_OP_NAME: bytes of nb_args.op, the NUL included
	maxKernelSamples    = 100000         // in-kernel times kept per point
	InitUID             = 0              // unique-ID bootstrap: the controller passes the ID
	InitEnv             = 1              // nvshmem_init with the launcher's bootstrap (srun / mpirun)
)

// ABIConstants names every constant of the header that Go mirrors.
var ABIConstants = map[string]int{
	"NB_ABI_VERSION": ABIVersion, "NB_ERR": StatusErr, "NB_UNREACHABLE": StatusUnreachable, "NB_NOT_CAPTURABLE": StatusNotCapturable,
	"NB_MAX_PES": MaxPEs, "NB_MAX_LINKS": MaxLinks, "NB_OP_NAME": OpNameLen,
	"NB_MAX_VALUES": MaxValues, "NB_VALUE_NAME": ValueNameLen, "NB_VALUE_UNIT": ValueUnitLen,
	"NB_SCOPE_THREAD": ScopeThread, "NB_SCOPE_WARP": ScopeWarp, "NB_SCOPE_BLOCK": ScopeBlock,
	"NB_IMPL_NVSHMEM_DEVICE": ImplNVSHMEMDevice, "NB_IMPL_NVSHMEM_STREAM": ImplNVSHMEMStream, "NB_IMPL_OUR_ONESHOT": ImplOurOneShot,
	"NB_IMPL_OUR_TWOSHOT": ImplOurTwoShot, "NB_IMPL_NCCL": ImplNCCL,
	"NB_IMPL_LSA_ONESHOT": ImplLSAOneShot, "NB_IMPL_LSA_TWOSHOT": ImplLSATwoShot, "NB_IMPL_NCCL_CE": ImplNCCLCE,
	"NB_DT_F32": DTFloat, "NB_DT_BF16": DTBF16, "NB_DT_F16": DTHalf,
	"NB_PATH_LOCAL": PathLocal, "NB_PATH_P2P": PathP2P, "NB_PATH_REMOTE": PathRemote,
}

// Args mirrors nb_args: the arguments of one point, the same on every PE.
type Args struct {
	Size      int64
	Seed      int64
	Extent    int64   // chases: the chain's bytes (0: memory-served, at least 4 × L2)
	Zipf      float64 // MoE: the routing's Zipf exponent (0: uniform)
	Scope     int32
	Blocking  int32
	CTAs      int32
	Threads   int32
	Elem      int32
	Iters     int32
	Warmup    int32
	Samples   int32
	Peer      int32 // the PE the initiator talks to (itself: a loopback)
	Bidir     int32
	Verify    int32
	PerOp     int32 // device collectives: one launch per operation (else fused in one kernel)
	Impl      int32
	DType     int32
	Graph     int32
	Tokens    int32           // MoE: tokens per rank
	Hidden    int32           // MoE: hidden size
	TopK      int32           // MoE: experts per token
	Experts   int32           // MoE: experts over all PEs
	MoEMode   int32           // MoE: MoELL or MoENormal
	Corrupt   int32           // tests: damage one element of what the check reads before it runs (it must then fail)
	Stride    int32           // strided RMA (iput/iget): the element stride of the strided side (1: contiguous)
	Op        [OpNameLen]byte // the operation: a name of the shim's dispatch table (SetOp)
	NCCLAlgo  [32]byte
	NCCLProto [32]byte
	// Initiator is the PE that issues towards Peer and times (rma, lat:
	// every point-to-point operation); 0 where every PE runs.
	Initiator int32
	// StageOffset: bytes per SM, a staged mechanism (TMA): its
	// shared-memory stages this many bytes past a 128-byte line (0: on it).
	StageOffset int32
}

// NewArgs returns arguments for the operation of that name in the shim's
// dispatch table ("rma.put", "lat.get", "coll.allreduce"; see Ops).
func NewArgs(op string) Args {
	var a Args
	a.SetOp(op)
	return a
}

// SetOp names the operation. Names longer than the ABI's field cannot
// match a table entry; the shim (and the fake) refuse them as unknown.
func (a *Args) SetOp(op string) {
	a.Op = [OpNameLen]byte{}
	copy(a.Op[:OpNameLen-1], op)
}

// OpString is the operation's name.
func (a *Args) OpString() string { return cstr(a.Op[:]) }

// SetNCCL sets the forced NCCL algorithm and protocol ("" = NCCL's choice).
func (a *Args) SetNCCL(algo, proto string) {
	a.NCCLAlgo, a.NCCLProto = [32]byte{}, [32]byte{}
	copy(a.NCCLAlgo[:31], algo)
	copy(a.NCCLProto[:31], proto)
}

// NCCLProtoString is the forced NCCL protocol ("" = NCCL's choice).
func (a *Args) NCCLProtoString() string { return cstr(a.NCCLProto[:]) }

// Value mirrors nb_value: a named value of a point, in a unit of the
// readers' ("s", "B/s", "1").
type Value struct {
	Value float64
	Name  [ValueNameLen]byte
	Unit  [ValueUnitLen]byte
}

// NameString is the value's name.
func (v *Value) NameString() string { return cstr(v.Name[:]) }

// UnitString is the value's unit.
func (v *Value) UnitString() string { return cstr(v.Unit[:]) }

// Result mirrors nb_result: one point's outcome on this PE.
type Result struct {
	Bytes      int64 // payload this PE moved per operation
	Errors     int64 // mismatches found in this PE's memory
	Checked    int64
	JobErrors  int64 // summed over every PE of the job
	JobChecked int64
	JobBytes   int64 // payload per operation summed over the job
	NSamples   int64
	NKernel    int64 // in-kernel per-iteration times returned
	WorkSet    int64 // bytes of the largest buffer one GPU serves for the point
	Values     [MaxValues]Value
	Initiator  int32
	Iters      int32 // loop iterations per timed launch, agreed by every PE
	OpsPerIter int32 // operations per iteration (atomics: one per thread)
	FailedPE   int32 // on error: the PE that failed first
	NValues    int32 // values written to Values
	pad        int32
	Detail     [256]byte
}

// NamedValues are the values the point's result carries, or why they
// cannot be read: a count beyond the array (a result the shim did not
// write whole).
func (r *Result) NamedValues() ([]Value, error) {
	if r.NValues < 0 || r.NValues > MaxValues {
		return nil, fmt.Errorf("the shim's result says %d values; it holds %d", r.NValues, MaxValues)
	}
	return r.Values[:r.NValues], nil
}

// PutValue adds a named value as the shim's put_value does (the fake's):
// one that does not fit fails, naming it.
func (r *Result) PutValue(name, unit string, v float64) error {
	if r.NValues < 0 || r.NValues >= MaxValues {
		return fmt.Errorf("the value %s does not fit: a point's result holds %d values", name, MaxValues)
	}
	o := &r.Values[r.NValues]
	if len(name) >= len(o.Name) || len(unit) >= len(o.Unit) {
		return fmt.Errorf("the value %s (%s): a name holds %d bytes, a unit %d", name, unit, len(o.Name)-1, len(o.Unit)-1)
	}
	*o = Value{Value: v}
	copy(o.Name[:], name)
	copy(o.Unit[:], unit)
	r.NValues++
	return nil
}

// OpsPerSample is the operations one sample (one timed launch) covers.
func (r *Result) OpsPerSample() int {
	if r.OpsPerIter <= 0 {
		return int(r.Iters)
	}
	return int(r.Iters) * int(r.OpsPerIter)
}

// DetailString is the first mismatch, if any.
func (r *Result) DetailString() string { return cstr(r.Detail[:]) }

// Info mirrors nb_info: what one PE is and has.
type Info struct {
	MemBytes     int64
	L2Bytes      int64
	MyPE         int32
	NPEs         int32
	Device       int32
	SMs          int32
	ClockKHz     int32
	CCMajor      int32
	CCMinor      int32
	CUDARuntime  int32
	CUDADriver   int32
	NVSHMEMMajor int32
	NVSHMEMMinor int32
	NVSHMEMPatch int32
	NCCLVersion  int32
	pad          int32
	Name         [96]byte
	UUID         [48]byte
	PCIBusID     [32]byte
	Host         [64]byte
}

// NameString returns the GPU name.
func (i *Info) NameString() string { return cstr(i.Name[:]) }

// UUIDString returns the GPU UUID.
func (i *Info) UUIDString() string { return cstr(i.UUID[:]) }

// PCIString returns the PCI bus ID.
func (i *Info) PCIString() string { return cstr(i.PCIBusID[:]) }

// HostString returns the host the PE runs on.
func (i *Info) HostString() string { return cstr(i.Host[:]) }

// NVSHMEMVersion is "major.minor.patch" or "" when unknown.
func (i *Info) NVSHMEMVersion() string {
	if i.NVSHMEMMajor == 0 {
		return ""
	}
	return fmt.Sprintf("%d.%d.%d", i.NVSHMEMMajor, i.NVSHMEMMinor, i.NVSHMEMPatch)
}

// NCCLVersionString formats the NCCL version code (22809 → "2.28.9"), "" if none.
func (i *Info) NCCLVersionString() string { return NCCLVersion(int64(i.NCCLVersion)) }

// NCCLVersion formats an ncclGetVersion code.
func NCCLVersion(v int64) string {
	if v <= 0 {
		return ""
	}
	return fmt.Sprintf("%d.%d.%d", v/10000, (v/100)%100, v%100)
}

// CUDAVersion formats a CUDA version integer (13000 → "13.0").
func CUDAVersion(v int32) string {
	if v <= 0 {
		return ""
	}
	return fmt.Sprintf("%d.%d", v/1000, (v%1000)/10)
}

func cstr(b []byte) string {
	for i, c := range b {
		if c == 0 {
			return string(b[:i])
		}
	}
	return string(b)
}

// Links mirrors nb_links: a GPU's NVLinks, PCIe link and memory, the
// physical ceilings of its paths.
type Links struct {
	LinkBps   float64 // one active NVLink, bytes/s per direction (NVML); 0: no NVLink
	PCIeBps   float64 // PCIe at its maximum generation and width, bytes/s per direction
	HBMBps    float64 // device memory: bus width × clock × 2, bytes/s
	Links     int32   // active NVLinks
	PCIeGen   int32
	PCIeWidth int32
	NVML      int32 // 1: NVML answered
	Remote    [MaxLinks][32]byte
	Detail    [128]byte
}

// RemoteOf is the PCI bus id at the far end of link l ("" when inactive).
func (l *Links) RemoteOf(i int) string { return cstr(l.Remote[i][:]) }

// DetailString says why NVML did not answer, if it did not.
func (l *Links) DetailString() string { return cstr(l.Detail[:]) }

// Job is what every PE of a job knows about all of them, the same on each
// (collected by one collective call): their GPUs and the paths between them.
type Job struct {
	PEs   []Info
	Paths [][]int // Paths[i][j]: how PE i reaches PE j (PathLocal, PathP2P, PathRemote)
}

// Lib is the shim's interface as Go sees it. Init, Job, Agree, Run
// and Finalize are collective: every PE calls them, in the same order.
type Lib interface {
	DeviceCount() (int, error)
	DeviceInfo(dev int) (Info, error)
	CanAccessPeer(dev, peer int) (bool, error)
	// LinkInfo is the device's NVLinks, PCIe link and memory rate.
	LinkInfo(dev int) (Links, error)
	UniqueID() ([]byte, error)
	Init(mode, rank, nranks int, uid []byte, device int, heap int64) error
	Finalize() error
	// Job returns every PE's facts and the path matrix.
	Job() (Job, error)
	// Agree exchanges one value: every PE gets every PE's.
	Agree(v int64) ([]int64, error)
	// Gather exchanges bytes (at most MaxGather): every PE gets every
	// PE's, in PE order.
	Gather(mine []byte) ([][]byte, error)
	// Setenv sets a variable in the C environment NVSHMEM and NCCL read.
	Setenv(name, value string) error
	// ProbeBootstrap loads NVSHMEM's bootstrap plugin file (a full path, or a
	// name the loader searches for) as NVSHMEM would, and closes it.
	ProbeBootstrap(plugin string) error
	// Run runs one point: on the PEs that timed it, seconds per operation
	// (one per timed launch, the events timer) and the in-kernel
	// per-iteration seconds where the kernels keep them.
	Run(a Args) (Timing, Result, error)
	// Sensor reads device dev's SM clock and power draw (NVML), safe to
	// call while a point runs; an error says in a line why there is none.
	Sensor(dev int) (Sensor, error)
}

// Timing is what one PE timed of a point.
type Timing struct {
	Samples []float64 // seconds per operation, one per timed launch (device events): the figure
	Kernel  []float64 // seconds per iteration read in the kernel (%globaltimer), every timed launch: the spread
}

// Error is a failed shim call: the operation and the shim's message.
type Error struct {
	Op     string
	Status int
	Msg    string
}

func (e *Error) Error() string { return fmt.Sprintf("%s: %s", e.Op, e.Msg) }

// NotCapturable reports a point that a CUDA graph cannot capture.
func (e *Error) NotCapturable() bool { return e.Status == StatusNotCapturable }

// Unreachable reports a point that needs what this job lacks (a load/store
// mapping to the peer, NCCL, a divisible size).
func (e *Error) Unreachable() bool { return e.Status == StatusUnreachable }
