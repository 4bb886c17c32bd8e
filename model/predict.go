package model

import (
	"fmt"
	"math"
	"sort"
	"strings"
)

// NCCL's published tuning constants (src/graph/tuning.cc, NCCL 2.28's
// defaults): the base latency of a ring and the latency of one NVLink step,
// in µs, for the LL, LL128 and Simple protocols; each protocol's bus
// bandwidth is a fraction of Simple's (LL half, LL128 0.92).
var (
	ncclProtos   = []string{"LL", "LL128", "Simple"}
	ncclRingBase = []float64{6.6, 14.0, 8.4}
	ncclRingHop  = []float64{0.6, 1.9, 3.4}
	ncclBwShare  = []float64{0.5, 0.92, 1}
)

// Model is one way of predicting a collective's time at n GPUs from the
// fits of a 2-PE run.
type Model struct {
	Name, Collective, Basis string
	// Time is the predicted time (s) of size bytes on n GPUs.
	Time func(n int, size float64) float64
	// Measured names the benchmark a run of n PEs measures it with.
	Measured string
}

// Assumptions are what every prediction takes for granted.
var Assumptions = []string{
	"one node, GPUs all-to-all through NVSwitch at the 2-PE run's per-GPU bandwidth (no incast: a GPU's links serve its peers in parallel)",
	"no protocol, algorithm or channel change beyond those the 2-PE fits saw (segments are extrapolated from the last one)",
	"a step's latency is the 2-PE fit's α over the steps it covers; the launch is in α (one launch per operation)",
}

// Models builds the n-GPU models from the fits of one file of 2 PEs (per
// launch mode: per-op only, as the paper measures).
func Models(fits []*Fit) []Model {
	// One launch per operation: recorded so, or NCCL's host API in an older
	// file (always launched per operation).
	perOp := func(f *Fit) bool { return f.Launch == "per-op" || f.Launch == "unknown" && hostNCCL(f.ID) }
	// fit is the 2-PE, one-launch-per-operation fit of a benchmark.
	fit := func(id string) *Fit {
		for _, f := range fits {
			if f.ID == id && f.PEs == 2 && f.NoFit == "" && perOp(f) {
				return f
			}
		}
		return nil
	}
	pick := func(id string) *Segment {
		if f := fit(id); f != nil {
			return f.Last()
		}
		return nil
	}
	first := func(id string) *Segment {
		if f := fit(id); f != nil {
			return f.First()
		}
		return nil
	}
	var out []Model
	if last, lat := pick("collectives/allreduce/nccl-ring"), first("collectives/allreduce/nccl-ring"); last != nil && lat != nil {
		// The launch is paid once, the rest of α per step (two at n = 2);
		// at n = 2 the ring moves S over the link: T = L + 2·step + S/B.
		launch := 0.0
		for _, f := range fits {
			if f.ID == "collectives/allreduce/nccl-ring" && f.Launch0 > 0 && f.Launch0 < lat.Alpha {
				launch = f.Launch0
			}
		}
		step := (lat.Alpha - launch) / 2
		beta := last.Beta
		out = append(out, Model{Name: "ring", Collective: "allreduce", Measured: "collectives/allreduce/nccl-ring",
			Basis: fmt.Sprintf("%.2f µs launch + 2(n−1)·%.2f µs + 2(n−1)/n · S / %.0f GB/s (NCCL ring at 2 PEs: α of its smallest sizes, B of its largest)", launch*1e6, step*1e6, 1/beta/1e9),
			Time: func(n int, s float64) float64 {
				return launch + 2*float64(n-1)*step + 2*float64(n-1)/float64(n)*s*beta
			}})
		busBw := 1 / beta // busbw at n = 2 equals algbw
		out = append(out, Model{Name: "NCCL's tuning model", Collective: "allreduce", Measured: "collectives/allreduce/nccl",
			Basis: fmt.Sprintf("min over LL/LL128/Simple of base + 2(n−1)·hop + S / (busbw·n/(2(n−1))), NCCL's constants, busbw %.0f GB/s from the 2-PE ring", busBw/1e9),
			Time: func(n int, s float64) float64 {
				best := math.Inf(1)
				for p := range ncclProtos {
					lat := (ncclRingBase[p] + 2*float64(n-1)*ncclRingHop[p]) * 1e-6
					alg := busBw * ncclBwShare[p] * float64(n) / (2 * float64(n-1))
					best = math.Min(best, lat+s/alg)
				}
				return best
			}})
	}
	for _, c := range []struct{ id, name string }{{"collectives/allreduce/multicta-oneshot", "one-shot"}, {"collectives/allreduce/nccl-lsa-oneshot", "one-shot (NCCL LSA)"}} {
		if seg := pick(c.id); seg != nil {
			a, b := first(c.id).Alpha, seg.Beta
			out = append(out, Model{Name: c.name, Collective: "allreduce", Measured: c.id,
				Basis: fmt.Sprintf("%.2f µs + (n−1) · S / %.0f GB/s (every GPU reads n−1 peers)", a*1e6, 1/b/1e9),
				Time:  func(n int, s float64) float64 { return a + float64(n-1)*s*b }})
		}
	}
	for _, c := range []struct{ id, name string }{{"collectives/allreduce/multicta-twoshot", "two-shot"}, {"collectives/allreduce/nccl-lsa-twoshot", "two-shot (NCCL LSA)"}} {
		if seg := pick(c.id); seg != nil {
			a, b := first(c.id).Alpha, seg.Beta
			out = append(out, Model{Name: c.name, Collective: "allreduce", Measured: c.id,
				Basis: fmt.Sprintf("2 · %.2f µs + 2(n−1)/n · S / %.0f GB/s (reduce-scatter + all-gather)", a/2*1e6, 1/b/1e9),
				Time:  func(n int, s float64) float64 { return a + 2*float64(n-1)/float64(n)*s*b }})
		}
	}
	for _, id := range []string{"collectives/alltoall/nccl", "collectives/alltoall/nvshmem-stream", "collectives/alltoall/nvshmem-block"} {
		if seg := pick(id); seg != nil {
			a, b := first(id).Alpha, seg.Beta
			// At n = 2 half of S crosses the link: T = α + S/2 · 2b.
			out = append(out, Model{Name: "pairwise (" + strings.TrimPrefix(id, "collectives/alltoall/") + ")", Collective: "alltoall", Measured: id,
				Basis: fmt.Sprintf("%.2f µs + (n−1)/n · S / %.0f GB/s (every GPU sends n−1 blocks at once)", a*1e6, 1/(2*b)/1e9),
				Time:  func(n int, s float64) float64 { return a + float64(n-1)/float64(n)*s*2*b }})
		}
	}
	return out
}

// hostNCCL: a collective through NCCL's host API (nccl, nccl-ring, ...),
// not its device API (nccl-lsa...).
func hostNCCL(id string) bool {
	i := strings.LastIndexByte(id, '/')
	impl := id[i+1:]
	return strings.HasPrefix(id, "collectives/") && (impl == "nccl" || strings.HasPrefix(impl, "nccl-") && !strings.HasPrefix(impl, "nccl-lsa"))
}

// Prediction is one model's time at one size and GPU count, beside a
// measurement where a run of that many PEs exists.
type Prediction struct {
	Model      string
	Collective string
	N          int
	Size       int64
	Predicted  float64
	Measured   float64 // 0: none
}

// Error is the prediction's relative error against the measurement.
func (p Prediction) Error() float64 {
	if p.Measured <= 0 {
		return math.NaN()
	}
	return p.Predicted/p.Measured - 1
}

// Predict evaluates the models at ns and sizes; fits of runs with n PEs
// (per-op) give the measured times.
func Predict(models []Model, fits []*Fit, ns []int, sizes []int64) []Prediction {
	measured := func(id string, n int, size int64) float64 {
		for _, f := range fits {
			if f.ID != id || f.PEs != n || !(f.Launch == "per-op" || f.Launch == "unknown" && hostNCCL(f.ID)) {
				continue
			}
			for _, o := range f.Obs {
				if o.Size == size {
					return o.Time
				}
			}
		}
		return 0
	}
	var out []Prediction
	for _, m := range models {
		for _, n := range ns {
			for _, s := range sizes {
				out = append(out, Prediction{Model: m.Name, Collective: m.Collective, N: n, Size: s, Predicted: m.Time(n, float64(s)), Measured: measured(m.Measured, n, s)})
			}
		}
	}
	return out
}

// NIC describes the network a prediction of the inter-node rows assumes.
type NIC struct {
	Gbps        float64 // line rate of one NIC, Gb/s (ConnectX-7: 400)
	PerNode     int     // NICs per node
	GPUsPerNode int
	Nodes       int
	Wire        float64 // payload share of the line rate (headers): 0.96
	Ring        float64 // share of the nodes' NIC bandwidth a ring's busbw reaches: 0.85
	FabricRTT   float64 // seconds: a GPU-initiated round trip through the NICs and one switch
}

// DefaultNIC is a ConnectX-7 per GPU, two nodes of eight GPUs (the
// paper's setup).
func DefaultNIC() NIC {
	return NIC{Gbps: 400, PerNode: 8, GPUsPerNode: 8, Nodes: 2, Wire: 0.96, Ring: 0.85, FabricRTT: 5e-6}
}

// NICRow is one of the paper's inter-node rows, predicted.
type NICRow struct {
	Row, Unit        string
	Predicted, Paper float64
	How              string
}

// PredictNIC predicts the paper's inter-node rows from the NIC and the
// on-node 256 B round trips of the fits (put and get, NVSHMEM, block scope,
// the lowest over the files).
func PredictNIC(nic NIC, fits []*Fit) []NICRow {
	bw := nic.Gbps / 8 * 1e9 * nic.Wire
	rt := func(id string) float64 {
		best := math.NaN()
		for _, f := range fits {
			if f.ID != id || f.PEs < 2 {
				continue
			}
			for _, o := range f.Obs {
				if o.Size == 256 && (math.IsNaN(best) || o.Time < best) {
					best = o.Time
				}
			}
		}
		return best
	}
	rows := []NICRow{
		{Row: "IBGDA put bandwidth", Unit: "GB/s", Predicted: bw / 1e9, Paper: 48.0, How: fmt.Sprintf("%.0f Gb/s × %.2f (headers)", nic.Gbps, nic.Wire)},
		{Row: "IBGDA get bandwidth", Unit: "GB/s", Predicted: bw / 1e9, Paper: 48.2, How: fmt.Sprintf("%.0f Gb/s × %.2f (headers)", nic.Gbps, nic.Wire)},
	}
	for _, c := range []struct {
		id, row string
		paper   float64
	}{{"latency/put/block", "IBGDA put round trip at 256 B", 9.4}, {"latency/get/block", "IBGDA get round trip at 256 B", 9.5}} {
		on := rt(c.id)
		r := NICRow{Row: c.row, Unit: "µs", Paper: c.paper}
		if math.IsNaN(on) {
			r.How = "no on-node 256 B round trip in the files"
			r.Predicted = math.NaN()
		} else {
			r.Predicted = (on + nic.FabricRTT + 256/bw) * 1e6
			r.How = fmt.Sprintf("on-node %.2f µs + fabric round trip %.1f µs (assumed) + 256 B at the NIC", on*1e6, nic.FabricRTT*1e6)
		}
		rows = append(rows, r)
	}
	n := nic.Nodes * nic.GPUsPerNode
	busbw := nic.Ring * float64(nic.PerNode) * nic.Gbps / 8 * 1e9
	rows = append(rows, NICRow{Row: fmt.Sprintf("NCCL ring AllReduce, %d nodes × %d GPUs, large messages", nic.Nodes, nic.GPUsPerNode), Unit: "GB/s algbw",
		Predicted: busbw * float64(n) / (2 * float64(n-1)) / 1e9, Paper: 180,
		How: fmt.Sprintf("busbw %.2f × %d NICs × %.0f Gb/s, algbw = busbw · n / (2(n−1))", nic.Ring, nic.PerNode, nic.Gbps)})
	return rows
}

// Choice is NCCL's own algorithm against the ones forced, at one size.
type Choice struct {
	Group    string
	Size     int64
	Default  float64 // the time NCCL's choice took
	Best     string  // the fastest forced algorithm
	BestTime float64
}

// Miss is how much slower NCCL's choice was than the fastest forced one (0
// or less: it chose well).
func (c Choice) Miss() float64 { return c.Default/c.BestTime - 1 }

// NCCLChoices compares collectives/allreduce/nccl with the forced
// nccl-ring, nccl-tree (and NVLS where measured), like with like.
func NCCLChoices(fits []*Fit) []Choice {
	def := map[string]*Fit{}
	forced := map[string][]*Fit{}
	for _, f := range fits {
		if !strings.HasPrefix(f.ID, "collectives/allreduce/nccl") || strings.Contains(f.ID, "lsa") {
			continue
		}
		g := group(f.Series)
		if f.ID == "collectives/allreduce/nccl" {
			def[g] = f
		} else {
			forced[g] = append(forced[g], f)
		}
	}
	var out []Choice
	var groups []string
	for g := range def {
		groups = append(groups, g)
	}
	sort.Strings(groups)
	for _, g := range groups {
		d := def[g]
		for _, o := range d.Obs {
			c := Choice{Group: g, Size: o.Size, Default: o.Time, BestTime: math.Inf(1)}
			for _, f := range forced[g] {
				for _, fo := range f.Obs {
					if fo.Size == o.Size && fo.Time < c.BestTime {
						c.Best, c.BestTime = strings.TrimPrefix(f.ID, "collectives/allreduce/"), fo.Time
					}
				}
			}
			if c.Best != "" {
				out = append(out, c)
			}
		}
	}
	return out
}
