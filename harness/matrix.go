package harness

import (
	"maps"
	"slices"

	"github.com/nvshbench/nvshbench/record"
)

// The pair matrix (Config.Matrix): the point-to-point rows below, each at
// one size, measured for every ordered pair of the job's PEs (params.pair;
// params.extra.matrix marks the point), and the copy references also for
// every PE with itself (its GPU's local copy). Every PE takes part in
// every point (the agreement, the barriers), only the pair moves data; a
// point one PE cannot run is waived on all (RunPoint). Pairs on two nodes
// are measured over the remote transport (the run's --path where it names
// one, else the proxy).
var (
	// MatrixBandwidth: measured at Config.MatrixSize (beyond the L2: served
	// by memory, so a link's figure, never a cache's).
	MatrixBandwidth = []string{"limit/ce-copy", "limit/sm-copy", "limit/sm-copy-read",
		"rma/put/block", "rma/get/block", "rma/nccl-lsa/put/block", "rma/nccl-lsa/get/block"}
	// MatrixRoundTrips: the 8-byte round trip (put + quiet; the get chase),
	// NVSHMEM's and NCCL's device API's.
	MatrixRoundTrips = []string{"latency/put/block", "latency/get/block", "latency/nccl-lsa/put/block", "latency/nccl-lsa/get/block"}
)

// MatrixIncastRow is the matrix's incast: all to one, for every PE as the
// target (params.pair: the first other PE, whose calibration every PE
// takes, to the target).
const MatrixIncastRow = "rma/put-incast/block"

// MatrixKey is the params.extra key that marks a point of the pair matrix.
const MatrixKey = "matrix"

// Matrix values of params.extra.matrix: a pair of PEs, or one PE's own GPU
// (a copy reference within it).
const (
	MatrixPair   = "pair"
	MatrixLocal  = "local"
	MatrixIncast = "incast" // every other PE into the pair's target
)

// DefaultMatrixSize is the matrix's bandwidth size: 256 MiB, beyond twice
// an H200's 60 MB L2.
const DefaultMatrixSize = 256 << 20

// MatrixLaunchBytes is what one timed launch of a matrix bandwidth point
// moves per sender: its iterations are fixed (MatrixIters), not calibrated
// to the ~20 ms launch of a run's points. Calibrating costs a point two or
// three launches of its own (at 256 MiB over NVLink a single put takes
// under 1 ms, so the shim probes with a third launch of ~20 ms), and the
// samples' four launches of ~20 ms made every one of the matrix's ~540
// bandwidth points on an 8-GPU node take ~0.1 s: a minute for the matrix
// alone. A GiB a launch is 2 to 3 ms over NVLink (a launch's own cost of
// microseconds is under 1 %), tens of ms over PCIe or a NIC.
const MatrixLaunchBytes = 1 << 30

// MatrixIters are the iterations of each timed launch of a matrix
// bandwidth point of this size: MatrixLaunchBytes' worth, 1..MaxIters.
func MatrixIters(size int64) int {
	if size <= 0 {
		return 1
	}
	return int(min(max((MatrixLaunchBytes+size-1)/size, 1), MaxIters))
}

// matrixIters are the fixed iterations of point p of benchmark id (0: it
// is calibrated): a bandwidth point of the pair matrix (its copy
// references, put and get, incast), where the run does not fix them itself
// (--iters).
func matrixIters(id string, p record.Params, cfg *Config) int {
	if cfg.Iters > 0 || p.Extra[MatrixKey] == "" || !slices.Contains(MatrixBandwidth, id) && id != MatrixIncastRow {
		return 0
	}
	return MatrixIters(p.Size)
}

// MatrixRows are every row of the pair matrix.
func MatrixRows() []string {
	return append(append(slices.Clone(MatrixBandwidth), MatrixRoundTrips...), MatrixIncastRow)
}

// InMatrix: the benchmark id is a row of the pair matrix.
func InMatrix(id string) bool { return slices.Contains(MatrixRows(), id) }

// matrixPoints are b's points in the pair matrix of a job of cfg.PEs PEs:
// its own points at the matrix's size (round trips at 8 bytes), one launch
// shape (a copy reference's largest grid), non-blocking, then each for
// every ordered pair (a bidirectional one for each pair once), and a copy
// reference also for every PE with itself.
func matrixPoints(b *Benchmark, cfg *Config) []record.Params {
	c := *cfg
	c.LaunchSweep, c.Blocking, c.Quick = false, false, true
	size := cfg.MatrixSize
	if size <= 0 {
		size = DefaultMatrixSize
	}
	c.Sizes, c.LimitSize = []int64{size}, size
	if slices.Contains(MatrixRoundTrips, b.ID) {
		c.Sizes = []int64{8}
	}
	var own []record.Params
	for _, p := range b.Points(&c) {
		if p.Mode == "blocking" {
			continue
		}
		own = append(own, p)
	}
	if len(own) > 1 && len(b.ID) > 6 && b.ID[:6] == "limit/" { // one grid: the largest
		best := own[0]
		for _, p := range own[1:] {
			if p.CTAs*p.Threads > best.CTAs*best.Threads {
				best = p
			}
		}
		own = []record.Params{best}
	}
	var out []record.Params
	add := func(p record.Params, from, to int, kind string) {
		p.Extra = maps.Clone(p.Extra)
		if p.Extra == nil {
			p.Extra = map[string]string{}
		}
		p.Extra[MatrixKey] = kind
		p.Pair = Pair{from, to}.String()
		p.PEs = cfg.PEs
		out = append(out, p)
	}
	for _, p := range own {
		if b.ID == MatrixIncastRow {
			for to := 0; to < cfg.PEs && cfg.PEs > 1; to++ {
				add(p, map[bool]int{true: 1, false: 0}[to == 0], to, MatrixIncast)
			}
			continue
		}
		if b.ID[:6] == "limit/" {
			for pe := 0; pe < cfg.PEs; pe++ {
				add(p, pe, pe, MatrixLocal)
			}
		}
		for from := 0; from < cfg.PEs; from++ {
			for to := 0; to < cfg.PEs; to++ {
				if from == to || p.Dir == "bidir" && from > to {
					continue
				}
				add(p, from, to, MatrixPair)
			}
		}
	}
	return out
}

// matrixPath is the path a point of the pair matrix measures its pair
// over: a pair within a node its NVLink (p2p), whatever --path names; a
// pair on two nodes the remote transport, the run's --path where it names
// one (proxy, ibgda), else the proxy NVSHMEM uses between nodes (ibgda
// where NVSHMEM_IB_ENABLE_IBGDA says so: PathName). A matrix run keeps
// NVSHMEM's P2P on (MatrixEnv), so a node's pairs are not waived, nor sent
// through its NIC, when --path names the transport between nodes.
func matrixPath(gpus []record.GPU, path string, p record.Params) string {
	if p.Extra[MatrixKey] == "" {
		return path
	}
	pr, err := ParsePair(p.Pair)
	if err != nil || pr.From >= len(gpus) || pr.To >= len(gpus) {
		return path
	}
	node, _ := samePlace(gpus[pr.From], gpus[pr.To])
	switch {
	case node && remotePath(path):
		return "p2p"
	case !node && !remotePath(path):
		return "proxy"
	}
	return path
}

// MatrixEnv is what a run of the pair matrix keeps of the environment
// --path sets (env): all but NVSHMEM_DISABLE_P2P, so that the pairs within
// a node cross their NVLink and only those between nodes the transport
// --path names (matrixPath).
func MatrixEnv(env map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range env {
		if k != "NVSHMEM_DISABLE_P2P" {
			out[k] = v
		}
	}
	return out
}

// LimitKey is the key under which an in-run limit point is kept: its ID,
// and for a point of a named pair (the matrix's copy references) its pair
// too, so that a pair's rows are held only to their own pair's reference.
func LimitKey(id, pair string) string {
	if pair == "" {
		return id
	}
	return id + " " + pair
}
