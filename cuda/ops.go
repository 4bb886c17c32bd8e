package cuda

import "github.com/nvshbench/nvshbench/cuda/shim"

// The shim's dispatch table as its sources declare it (package shim reads
// them; the GPU layer's callers name it through here).
type (
	Op         = shim.Op
	CheckDecl  = shim.CheckDecl
	Collective = shim.Collective
	Counter    = shim.Counter
)

// The traits an entry may state (shim.Trait*).
const (
	TraitPayload   = shim.TraitPayload
	TraitLoadStore = shim.TraitLoadStore
	TraitCounters  = shim.TraitCounters
	TraitRoundTrip = shim.TraitRoundTrip
	TraitFloor     = shim.TraitFloor
	TraitNetwork   = shim.TraitNetwork
	TraitPingPong  = shim.TraitPingPong
	TraitChase     = shim.TraitChase
	TraitBlocks    = shim.TraitBlocks
	TraitNoOutput  = shim.TraitNoOutput
	TraitMessages  = shim.TraitMessages
	TraitHost      = shim.TraitHost
)

// Ops is the shim's dispatch table by name.
func Ops() map[string]Op { return shim.Ops() }

// LookupOp finds an operation of the shim's table by name.
func LookupOp(name string) (Op, bool) { return shim.LookupOp(name) }

// Atomics are the NB_ATOMICS operations of one kind ("rma", "lat").
func Atomics(kind string) []Op { return shim.Atomics(kind) }

// FloatAtomicOverIBGDA is why a float atomic (op.Floating) is waived in a
// job where some PE reaches another over a remote transport (jobRemote)
// and that transport is IBGDA (transport "ibgda"), or "": IB's native
// atomics do not add floats, so NVSHMEM adds them over load/store or in its
// CPU proxy (IBRC), and its IBGDA transport asserts that none reaches it
// (NVSHMEM 3.8's ibgda_device.cuh). The whole job's, not the peer's path:
// NVSHMEM takes the load/store path for these atomics only where the job's
// connectivity allows load/store atomics everywhere
// (nvshmemi_use_ldst_atomics_path), so in a job of several nodes even a
// peer over NVLink goes through the remote transport.
func FloatAtomicOverIBGDA(op Op, jobRemote bool, transport string) string {
	if !op.Floating() || !jobRemote || transport != "ibgda" {
		return ""
	}
	return "NVSHMEM's float atomics do not run over IBGDA (IB's native atomics do not add floats; NVSHMEM adds them over load/store or in its CPU proxy, and in a job of several nodes it routes them through the remote transport even towards a peer over NVLink): measure them with --path proxy"
}

// Collectives lists the shim's collectives in their registration order.
func Collectives() []Collective { return shim.Collectives() }

// ShimFile is one of the shim sources, by name ("common.cuh").
func ShimFile(name string) ([]byte, error) { return shim.File(name) }

// ShimValues are the named values the shim's sources give points.
func ShimValues() []shim.Value { return shim.Values() }
