package cuda

import "github.com/nvshbench/nvshbench/cuda/shim"

// The shim's dispatch table as its sources declare it (package shim reads
// them; the GPU layer's callers name it through here).
type (
	Op         = shim.Op
	CheckDecl  = shim.CheckDecl
	Collective = shim.Collective
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

// Collectives lists the shim's collectives in their registration order.
func Collectives() []Collective { return shim.Collectives() }

// ShimFile is one of the shim sources, by name ("common.cuh").
func ShimFile(name string) ([]byte, error) { return shim.File(name) }
