// Package cuda is the GPU boundary of nvshbench. All device code and every
// CUDA, NVSHMEM and NCCL call live in the C/CUDA shim under shim/
// (libnvshbench.so, one flat C header); this package finds the toolchain,
// builds the shim when it is missing or stale, loads it at run time with
// purego (no cgo: the binary builds and runs anywhere) and exposes it as the
// Lib interface. Fake implements Lib without a GPU for tests.
package cuda

import "fmt"

// Op codes, mirroring NB_OP_* in shim/nvshbench.h.
const (
	OpPut        = 1
	OpGet        = 2
	OpP          = 3
	OpG          = 4
	OpST         = 5
	OpLD         = 6
	OpFetchAdd   = 7
	OpAdd        = 8
	OpCSwap      = 9
	OpCECopy     = 10
	OpSMCopy     = 11
	OpSMCopyRead = 12
)

// Scopes, mirroring NB_SCOPE_*.
const (
	ScopeThread = 0
	ScopeWarp   = 1
	ScopeBlock  = 2
)

// Peer paths returned by PeerPath.
const (
	PathLocal  = 0 // the peer's memory is on this GPU (several PEs per GPU)
	PathP2P    = 1 // load/store mapping to another GPU (NVLink or PCIe P2P)
	PathRemote = 2 // no mapping: a remote transport (IBGDA or the CPU proxy)
)

// RMAArgs mirrors nb_rma_args: 64-bit fields first, then 32-bit ones.
type RMAArgs struct {
	Size     int64
	Seed     int64
	Op       int32
	Scope    int32
	Blocking int32
	CTAs     int32
	Threads  int32
	Elem     int32
	Iters    int32
	Warmup   int32
	Samples  int32
	Peer     int32
	Bidir    int32
	Verify   int32
}

// RMAResult mirrors nb_rma_result.
type RMAResult struct {
	Bytes   int64
	Errors  int64
	Checked int64
	// JobErrors and JobChecked are the totals over every PE (PE 0 only).
	JobErrors  int64
	JobChecked int64
	NSamples   int64 // samples written (latency runs)
	Aux        int64 // collectives: ncclGetVersion of the NCCL used
	Initiator  int32
	Iters      int32 // operations per timed launch actually used
	Detail     [256]byte
}

// DetailString is the first mismatch, if any.
func (r *RMAResult) DetailString() string { return cstr(r.Detail[:]) }

// Latency ops, mirroring NB_LAT_*.
const (
	LatPut         = 1
	LatGet         = 2
	LatP           = 3
	LatG           = 4
	LatPPPutSignal = 5
	LatPPP         = 6
	LatPPAtomic    = 7
	LatPPSignal    = 8
	LatFence       = 9
	LatQuiet       = 10
	LatFetchAdd    = 11
	LatCSwap       = 12
	LatPutSignal   = 13
	LatLaunch      = 14
	TimerEvents    = 0
	TimerGlobal    = 1
	maxLatSamples  = 100000
)

// LatArgs mirrors nb_lat_args.
type LatArgs struct {
	Size     int64
	Seed     int64
	Op       int32
	Scope    int32
	Blocking int32
	Threads  int32
	Iters    int32
	Warmup   int32
	Samples  int32
	Peer     int32
	Timer    int32
	Verify   int32
}

// Collectives, implementations and data types, mirroring NB_COLL_*,
// NB_IMPL_*, NB_DT_*.
const (
	CollAllReduce = 1
	CollBroadcast = 2
	CollAlltoall  = 3
	CollBarrier   = 4

	ImplNVSHMEMDevice = 1
	ImplNVSHMEMStream = 2
	ImplOurOneShot    = 3
	ImplOurTwoShot    = 4
	ImplNCCL          = 5

	DTFloat = 0
	DTBF16  = 1
	DTHalf  = 2
)

// CollArgs mirrors nb_coll_args.
type CollArgs struct {
	Size      int64
	Seed      int64
	Coll      int32
	Impl      int32
	DType     int32
	Scope     int32
	CTAs      int32
	Threads   int32
	Iters     int32
	Warmup    int32
	Samples   int32
	Graph     int32
	Verify    int32
	pad       int32
	NCCLAlgo  [32]byte
	NCCLProto [32]byte
}

// SetNCCL sets the forced NCCL algorithm and protocol ("" = NCCL's choice).
func (a *CollArgs) SetNCCL(algo, proto string) {
	a.NCCLAlgo, a.NCCLProto = [32]byte{}, [32]byte{}
	copy(a.NCCLAlgo[:31], algo)
	copy(a.NCCLProto[:31], proto)
}

// NCCLProtoString is the forced NCCL protocol ("" = NCCL's choice).
func (a *CollArgs) NCCLProtoString() string { return cstr(a.NCCLProto[:]) }

// Info mirrors nb_info.
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
	Name         [256]byte
	UUID         [64]byte
	PCIBusID     [32]byte
}

// NameString etc. return the C strings.
func (i *Info) NameString() string { return cstr(i.Name[:]) }

// UUIDString returns the GPU UUID.
func (i *Info) UUIDString() string { return cstr(i.UUID[:]) }

// PCIString returns the PCI bus ID.
func (i *Info) PCIString() string { return cstr(i.PCIBusID[:]) }

// NVSHMEMVersion is "major.minor.patch" or "" when unknown.
func (i *Info) NVSHMEMVersion() string {
	if i.NVSHMEMMajor == 0 {
		return ""
	}
	return fmt.Sprintf("%d.%d.%d", i.NVSHMEMMajor, i.NVSHMEMMinor, i.NVSHMEMPatch)
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

// Init modes.
const (
	InitUID = 0 // unique-ID bootstrap: the controller passes the ID
	InitEnv = 1 // nvshmem_init with the launcher's bootstrap (srun / mpirun)
)

// Lib is the shim's interface as Go sees it.
type Lib interface {
	DeviceCount() (int, error)
	DeviceInfo(dev int) (Info, error)
	CanAccessPeer(dev, peer int) (bool, error)
	UniqueID() ([]byte, error)
	Init(mode, rank, nranks int, uid []byte, device int, heap int64) error
	Finalize() error
	Info() (Info, error)
	PeerPath(peer int) (int, error)
	Barrier() error
	// RMA runs one point; samples gets seconds per operation (initiator only).
	RMA(a RMAArgs) (samples []float64, res RMAResult, err error)
	// Latency runs one latency point; samples are seconds per operation.
	Latency(a LatArgs) (samples []float64, res RMAResult, err error)
	// Collective runs one collective point on every PE; samples are seconds
	// per operation of this PE.
	Collective(a CollArgs) (samples []float64, res RMAResult, err error)
}

// Error is a failed shim call: the operation and the shim's message.
type Error struct {
	Op     string
	Status int
	Msg    string
}

func (e *Error) Error() string { return fmt.Sprintf("%s: %s", e.Op, e.Msg) }

// NotCapturable reports a collective that a CUDA graph cannot capture (status -4).
func (e *Error) NotCapturable() bool { return e.Status == -4 }

// Unreachable reports status -2: the point needs what this machine or job
// lacks (a load/store mapping to the peer, NCCL, a divisible size).
func (e *Error) Unreachable() bool { return e.Status == -2 }
