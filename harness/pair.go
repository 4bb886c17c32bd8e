package harness

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/nvshbench/nvshbench/cuda"
	"github.com/nvshbench/nvshbench/record"
)

// Pair is the two PEs a point-to-point point measures: From issues towards
// To and times; From == To is one PE talking to itself (a loopback: the
// one-PE job's copies on its GPU).
type Pair struct{ From, To int }

// String is the pair as --pair and params.pair write it: "FROM:TO".
func (p Pair) String() string { return fmt.Sprintf("%d:%d", p.From, p.To) }

// ParsePair reads "FROM:TO" (two PE numbers).
func ParsePair(s string) (Pair, error) {
	a, b, ok := strings.Cut(s, ":")
	from, err1 := strconv.Atoi(a)
	to, err2 := strconv.Atoi(b)
	if !ok || err1 != nil || err2 != nil || from < 0 || to < 0 || from >= cuda.MaxPEs || to >= cuda.MaxPEs {
		return Pair{}, fmt.Errorf("pair %q: want FROM:TO, two PE numbers (0:8: PE 0 towards PE 8)", s)
	}
	return Pair{from, to}, nil
}

// remotePath: the path asks for the remote transport (a pair across nodes).
func remotePath(path string) bool { return path == "ibgda" || path == "proxy" }

// samePlace: two PEs run on one node, and on one GPU of it.
func samePlace(a, b record.GPU) (node, gpu bool) {
	node = a.Host == b.Host
	if a.UUID != "" || b.UUID != "" {
		return node, node && a.UUID == b.UUID
	}
	return node, node && a.Index == b.Index && record.NormalPCI(a.PCIBusID) == record.NormalPCI(b.PCIBusID)
}

// ChoosePair is the pair a point-to-point row of path measures on PEs
// placed as gpus (gpus[pe]: its node and GPU), or why the job has none.
// p2p: two PEs of one node on different GPUs (load/store over NVLink or
// PCIe), else two PEs of one GPU (a functional pair: no link crossed),
// else one PE alone with itself; ibgda and proxy: two PEs on different
// nodes (the remote transport between them). Of several, the first in PE
// order, so every PE and the controller choose the same.
func ChoosePair(gpus []record.GPU, path string) (Pair, string) {
	n := len(gpus)
	first := func(ok func(a, b record.GPU) bool) (Pair, bool) {
		for f := 0; f < n; f++ {
			for t := 0; t < n; t++ {
				if f != t && ok(gpus[f], gpus[t]) {
					return Pair{f, t}, true
				}
			}
		}
		return Pair{}, false
	}
	if remotePath(path) {
		if p, ok := first(func(a, b record.GPU) bool { node, _ := samePlace(a, b); return !node }); ok {
			return p, ""
		}
		why := fmt.Sprintf("--path %s measures a pair of PEs on different nodes (the remote transport between them): ", path)
		if n <= 1 {
			return Pair{}, why + "this job has one PE"
		}
		return Pair{}, why + fmt.Sprintf("all %d PEs of this job run on %s", n, gpus[0].Host)
	}
	if p, ok := first(func(a, b record.GPU) bool { node, gpu := samePlace(a, b); return node && !gpu }); ok {
		return p, ""
	}
	if p, ok := first(func(a, b record.GPU) bool { _, gpu := samePlace(a, b); return gpu }); ok {
		return p, ""
	}
	if n == 1 {
		return Pair{0, 0}, ""
	}
	return Pair{}, fmt.Sprintf("--path p2p measures a pair of PEs on one node (load/store between its GPUs): each of the %d PEs of this job runs on a node of its own; measure across nodes with --path proxy or --path ibgda", n)
}

// CheckPair says why the pair asked for (params.pair, --pair) cannot be
// measured over path on PEs placed as gpus ("" if it can).
func CheckPair(gpus []record.GPU, path string, p Pair) string {
	if n := len(gpus); p.From >= n || p.To >= n {
		return fmt.Sprintf("pair %s: this job has %d PE(s), 0..%d", p, n, n-1)
	}
	node, _ := samePlace(gpus[p.From], gpus[p.To])
	switch {
	case remotePath(path) && node:
		return fmt.Sprintf("pair %s: both PEs run on %s, and --path %s measures a pair across nodes", p, gpus[p.From].Host, path)
	case !remotePath(path) && !node:
		return fmt.Sprintf("pair %s: PE %d runs on %s and PE %d on %s, and --path p2p measures a pair within a node; measure it with --path proxy or --path ibgda",
			p, p.From, gpus[p.From].Host, p.To, gpus[p.To].Host)
	}
	return ""
}

// RecordPair describes pair p of PEs placed as gpus for a results record.
func RecordPair(gpus []record.GPU, p Pair) *record.Pair {
	end := func(pe int) record.PairEnd { return record.PairEnd{PE: pe, GPU: gpus[pe].Index, Node: gpus[pe].Host} }
	node, gpu := samePlace(gpus[p.From], gpus[p.To])
	kind := record.PairAcrossNodes
	switch {
	case p.From == p.To:
		kind = record.PairLoopback
	case gpu:
		kind = record.PairSameGPU
	case node:
		kind = record.PairSameNode
	}
	return &record.Pair{From: end(p.From), To: end(p.To), Kind: kind}
}

// pairOf is the pair named (explicit, "FROM:TO") or else chosen for path
// on PEs placed as gpus, and why it cannot be measured ("" if it can).
func pairOf(gpus []record.GPU, path, explicit string) (Pair, string) {
	if explicit == "" {
		return ChoosePair(gpus, path)
	}
	p, err := ParsePair(explicit)
	if err != nil {
		return Pair{}, err.Error()
	}
	return p, CheckPair(gpus, path, p)
}

// RunPair is the pair a run's point-to-point rows measure on PEs placed as
// gpus, for its header: the one the run names (--pair) or the one its path
// chooses; else why it has none (said in the header's notes).
func RunPair(gpus []record.GPU, cfg *Config) (*record.Pair, string) {
	p, why := pairOf(gpus, cfg.Path, cfg.Pair)
	if why != "" {
		return nil, why
	}
	return RecordPair(gpus, p), ""
}

// Placement is where every PE of the job runs (its node and GPU), in PE
// order.
func (j *Job) Placement() []record.GPU {
	out := make([]record.GPU, len(j.PEs))
	for pe := range j.PEs {
		out[pe] = GPUOf(&j.PEs[pe], pe)
	}
	return out
}

// PairFor is the pair a point-to-point point of path measures, the one it
// names (explicit, "FROM:TO") or else the job's choice (ChoosePair), or why
// this job cannot measure it; over p2p the pair must also be mapped for
// load/store (NVSHMEM's own answer, the job's paths).
func (j *Job) PairFor(path, explicit string) (Pair, string) {
	p, why := pairOf(j.Placement(), path, explicit)
	if why != "" {
		return Pair{}, why
	}
	if !remotePath(path) && j.Path(p.From, p.To) == cuda.PathRemote {
		return Pair{}, fmt.Sprintf("PE %d has no load/store mapping from PE %d (no NVLink/PCIe P2P): NVSHMEM would use a remote transport; measure it with --path proxy or --path ibgda", p.To, p.From)
	}
	return p, ""
}

// Widest is the widest path between two PEs of the job: remote where some
// PE reaches another only through a remote transport (several nodes), else
// p2p where some reach each other across GPUs, else local (one GPU). It is
// the path of what every PE takes part in (collectives, MoE).
func (j *Job) Widest() int {
	w := cuda.PathLocal
	for from := range j.Paths {
		for to := range j.Paths[from] {
			if p := j.Path(from, to); p == cuda.PathRemote || (p == cuda.PathP2P && w == cuda.PathLocal) {
				w = p
			}
		}
	}
	return w
}
