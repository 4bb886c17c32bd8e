package model

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/nvshbench/nvshbench/internal/decide"
	"github.com/nvshbench/nvshbench/internal/units"
	"github.com/nvshbench/nvshbench/record"
)

// NCCL's tuning model as NCCL itself computes it, restated (not copied)
// from its source at the version the runs were made with: NVIDIA/nccl tag
// v2.28.9-1 (commit dbc86fd06e8b0c4517b95d8958a09ccacf9520c9),
// src/graph/tuning.cc. Times in µs, bandwidths in GB/s, per protocol in
// NCCL's order LL, LL128, Simple.
const ncclSource = "NCCL v2.28.9 src/graph/tuning.cc"

var (
	ncclProtos = []string{"LL", "LL128", "Simple"}
	// tuning.cc:144: baseLatencies of Tree and Ring.
	ncclTreeBase = []float64{6.8, 14.0, 8.4}
	ncclRingBase = []float64{6.6, 14.0, 8.4}
	// tuning.cc:151: hwLatencies over NVLink of Tree and Ring (one step).
	ncclTreeHop = []float64{0.6, 1.25, 4.0}
	ncclRingHop = []float64{0.6, 1.9, 3.4}
)

// ncclGen is what NCCL's model takes from the GPU generation on one node
// (chosen by compute capability at tuning.cc:249-254 when nNodes is 1):
// llMaxBw (:170-173), the ring LL128 per-channel cap (:176-179), the tree's
// (:188-191) and the tree LL128's (:182-185), GB/s, and the line of its
// llMaxBw.
type ncclGen struct {
	name                        string
	llMax, ringLL128, tree, tLL float64
	line                        int
}

func ncclGenOf(cc float64) (ncclGen, bool) {
	switch {
	case cc >= 10:
		return ncclGen{"Blackwell", 2 * 141.0, 2 * 36.7, 70.0, 55.6, 173}, true
	case cc >= 9:
		return ncclGen{"Hopper", 141.0, 36.7, 38.7, 36.7, 172}, true
	case cc >= 8:
		return ncclGen{"Ampere", 87.7, 20.0, 24.0, 20.0, 171}, true
	case cc >= 7:
		return ncclGen{"Volta", 39.0, 20.0, 26.5, 20.0, 170}, true
	}
	return ncclGen{}, false
}

// ncclProto is NCCL's model of one algorithm and protocol at n GPUs of one
// node: its latency (µs) and its algorithm bandwidth (GB/s) from the bus
// bandwidth of the Simple protocol (busBw, GB/s).
func ncclProto(algo string, p, n int, busBw, llMax float64) (lat, algBw float64) {
	steps := 2 * float64(n-1) // AllReduce: tuning.cc:268
	bw := busBw
	switch algo {
	case "ring":
		switch p {
		case 0:
			bw = math.Min(llMax, bw*0.5) // tuning.cc:304
		case 1:
			bw *= 0.92 // tuning.cc:305 (its per-channel cap is not applied: see ncclOmitted)
		}
		lat = ncclRingBase[p] + steps*ncclRingHop[p] // tuning.cc:353, :379 (one node: no inter-node steps)
		algBw = bw * float64(n) / steps              // tuning.cc:348
	case "tree":
		bw *= 0.92 // tuning.cc:306 (AllReduce; its per-channel cap is not applied)
		switch p {
		case 0:
			bw = math.Min(bw/3.8, llMax) // tuning.cc:307
		case 1:
			bw *= 7.0 / 9.0 // tuning.cc:308, one node (its per-channel cap is not applied)
		}
		lat = ncclTreeBase[p] + 2*float64(n-1)*ncclTreeHop[p] // tuning.cc:353, :383-384 (one node)
		algBw = bw * 0.5                                      // tuning.cc:349
	}
	return lat, algBw
}

// ncclRefs are the lines of NCCL's source the model follows and what it
// leaves out, printed under the predictions.
func ncclRefs(busBw float64, g ncclGen) []string {
	return []string{
		fmt.Sprintf("NCCL's tuning model, as %s computes it for AllReduce on one node (time = latency + bytes / algbw, :599), the lowest over ring and tree × LL, LL128, Simple: "+
			"base latencies :144 (ring 6.6 / 14.0 / 8.4 µs, tree 6.8 / 14.0 / 8.4), NVLink step latencies :151 (ring 0.6 / 1.9 / 3.4, tree 0.6 / 1.25 / 4.0), "+
			"ring latency base + 2(n−1) steps :379, tree base + 2(n−1) steps :383-384; "+
			"ring LL busbw × 0.5 capped at llMaxBw :304 (%s, one node: %.1f GB/s, :%d), ring LL128 (on by default over NVLink from Hopper on, :480-493) × 0.92 :305, tree × 0.92 :306, tree LL ÷ 3.8 capped at llMaxBw :307, tree LL128 × 7/9 :308; "+
			"algbw = busbw · n / (2(n−1)) for ring :348, busbw / 2 for tree :349; busbw %.0f GB/s is the 2-PE ring's B (at 2 GPUs algbw = busbw), tree assumed to reach the same",
			ncclSource, g.name, g.llMax, g.line, busBw),
		fmt.Sprintf("NCCL's tuning model leaves out here: the per-channel caps (ring LL128 %.1f GB/s × channels :305, tree %.1f :306, tree LL128 %.1f :308, %s values of :176-191: "+
			"the channel count is not in the results; the ring LL128 cap binds below %.0f channels), "+
			"the tree pattern's × 0.85 (:309, set by NCCL's topology search), the tree's per-size corrections (:578-582, applied at :592), "+
			"NVLS (off in these runs), NVLS tree (two nodes or more, :466), CollNet (a plugin, :468-471), PAT (not for AllReduce, :277)",
			g.ringLL128, g.tree, g.tLL, g.name, math.Ceil(busBw*0.92/g.ringLL128)),
	}
}

// Domain is how many GPUs of a run's kind one NVLink domain joins all to
// all (through NVSwitch): the GPU counts an n-GPU prediction of one node
// may reach. N is 0 where nvshbench does not know the kind.
type Domain struct {
	GPU    string  // the header's GPU name
	N      int     // GPUs in one NVLink domain (0: unknown)
	System string  // what that is, or why it is unknown
	CC     float64 // compute capability (0: unknown)
}

// DomainOf derives the NVLink domain from the GPU name in a header: the
// HGX boards of H100, H200, H800, H20, A100 (SXM) and B200 / B300 join 8
// GPUs through NVSwitch. A PCIe or NVL card (NVLink bridges of 2 or 4), a
// Grace superchip (a rack's domain of 4 to 72) or any other kind is
// unknown: said, never guessed.
func DomainOf(h *record.Header) Domain {
	var names []string
	d := Domain{}
	for _, g := range h.GPUs {
		if !containsString(names, g.Name) {
			names = append(names, g.Name)
		}
		if cc, err := strconv.ParseFloat(g.CC, 64); err == nil && d.CC == 0 {
			d.CC = cc
		}
	}
	switch len(names) {
	case 0:
		d.System = "the file names no GPU"
		return d
	case 1:
		d.GPU = names[0]
	default:
		d.GPU = strings.Join(names, " + ")
		d.System = "GPUs of different kinds in one run"
		return d
	}
	up := strings.ToUpper(d.GPU)
	has := func(s ...string) bool {
		for _, x := range s {
			if strings.Contains(up, x) {
				return true
			}
		}
		return false
	}
	gen := 0.0
	switch {
	case has("GH200", "GB200", "GB300"):
		d.System = d.GPU + ": a Grace superchip, whose NVLink domain (4 to 72 GPUs) is the system's, not the GPU's"
	case has("PCIE", " NVL"):
		d.System = d.GPU + ": a PCIe card, joined by NVLink bridges of 2 or 4 GPUs or none"
	case has("H100", "H200", "H800", "H20"):
		d.N, d.System, gen = 8, "HGX "+hopperName(up)+": 8 GPUs on NVSwitch", 9
	case has("A100-SXM", "A800-SXM"):
		d.N, d.System, gen = 8, "HGX A100: 8 GPUs on NVSwitch", 8
	case has("B200", "B300"):
		d.N, d.System, gen = 8, "HGX B200 / B300: 8 GPUs on NVSwitch", 10
	default:
		d.System = d.GPU + ": not a kind nvshbench knows the NVLink domain of (HGX H100 / H200 / A100 / B200: 8)"
	}
	if d.CC == 0 {
		d.CC = gen
	}
	return d
}

func hopperName(up string) string {
	for _, n := range []string{"H200", "H100", "H800", "H20"} {
		if strings.Contains(up, n) {
			return n
		}
	}
	return "H100"
}

func containsString(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// InterNode is what a prediction across nodes needs instead: the NIC path
// (the inter-node rows and their flags).
const InterNode = "GPUs beyond it talk through NICs: the inter-node rows predict that path (--nic-gbps, --nics-per-node, --gpus-per-node, --nodes, --ring-efficiency, --wire-efficiency, --fabric-rtt); a measurement needs a run across nodes"

// Model is one way of predicting a collective's time at n GPUs of one
// node from the fits of one 2-PE file.
type Model struct {
	Name, Collective string
	Basis            string   // the formula with its numbers
	Inputs           []string // the fits it uses: series, sizes, file
	Notes            []string // what else it assumes or leaves out (NCCL's model)
	File             string   // the 2-PE file's label
	Domain           Domain   // of that file's GPUs
	// Lo and Hi are the sizes its input series measured: a prediction
	// outside them is refused.
	Lo, Hi int64
	// Time is the predicted time (s) of size bytes on n GPUs and how (the
	// algorithm and protocol NCCL's model picks, else "").
	Time func(n int, size float64) (float64, string)
	// Measured names the benchmark a run of n PEs measures it with.
	Measured string
	// Paper are the keys of the paper's rows nearest to it (record.Paper).
	Paper  []string
	header *record.Header
}

// perOp: one launch per operation, recorded so, or NCCL's host API in an
// older file (always launched per operation).
func perOp(f *Fit) bool {
	return f.Launch == record.LaunchPerOp || f.Launch == "unknown" && hostNCCL(f.ID)
}

// Models builds the n-GPU models from the fits of each file of 2 PEs (one
// launch per operation, as the paper measures), and says why a model that
// has a series has none. A model takes α only from a segment that
// determines it and B only from one that determines it from memory-served
// sizes.
func Models(fits []*Fit) ([]Model, []string) {
	var out []Model
	var skipped []string
	byFile := map[int][]*Fit{}
	var files []int
	for _, f := range fits {
		if f.PEs != 2 || !perOp(f) {
			continue
		}
		if _, ok := byFile[f.file]; !ok {
			files = append(files, f.file)
		}
		byFile[f.file] = append(byFile[f.file], f)
	}
	for _, fi := range files {
		m, s := modelsOf(byFile[fi])
		out, skipped = append(out, m...), append(skipped, s...)
	}
	return out, skipped
}

// modelsOf builds the models of one file's 2-PE fits.
func modelsOf(fits []*Fit) ([]Model, []string) {
	var out []Model
	var skipped []string
	fit := func(id string) *Fit {
		for _, f := range fits {
			if f.ID == id {
				return f
			}
		}
		return nil
	}
	// inputs gives a series' α and B for a model, or why not.
	type in struct {
		f     *Fit
		a, b  float64
		names []string
	}
	get := func(name, id string) (in, bool) {
		f := fit(id)
		if f == nil {
			return in{}, false
		}
		a, sa, whyA := f.Alpha()
		b, sb, whyB := f.LinkB()
		if whyA != "" || whyB != "" {
			why := whyA
			switch {
			case why == "" || why == whyB:
				why = whyB
			case whyB != "":
				why += "; " + whyB
			}
			skipped = append(skipped, fmt.Sprintf("%s [%s]: no prediction from %s: %s", name, f.File, id, why))
			return in{}, false
		}
		return in{f: f, a: a, b: b, names: []string{
			fmt.Sprintf("α %s µs: %s, %s – %s", us(a), id, units.Bytes(sa.From), units.Bytes(sa.To)),
			fmt.Sprintf("B %s GB/s: %s, %s – %s (memory-served)", gbps(b), id, units.Bytes(sb.From), units.Bytes(sb.To)),
		}}, true
	}
	model := func(x in, m Model) Model {
		m.File, m.Domain, m.header = x.f.File, DomainOf(x.f.header), x.f.header
		m.Inputs = append(x.names, m.Inputs...)
		m.Lo, m.Hi = x.f.Obs[0].Size, x.f.Obs[len(x.f.Obs)-1].Size
		return m
	}
	const ring = "collectives/allreduce/nccl-ring"
	if x, ok := get("ring", ring); ok {
		// The launch is paid once, the rest of α per step (two at n = 2);
		// at n = 2 the ring moves S over the link: T = L + 2·step + S/B.
		launch, inputs := 0.0, []string(nil)
		if x.f.Launch0 > 0 && x.f.Launch0 < x.a {
			launch = x.f.Launch0
			inputs = append(inputs, fmt.Sprintf("launch %s µs: latency/launch", us(launch)))
		}
		step, beta := (x.a-launch)/2, 1/x.b
		out = append(out, model(x, Model{Name: "ring", Collective: "allreduce", Measured: ring, Inputs: inputs,
			Paper: []string{"allreduce-latency/nccl-ring/intra", "allreduce/nccl-nvls/intra"},
			Basis: fmt.Sprintf("%s µs launch + 2(n−1) · %s µs + 2(n−1)/n · S / %s GB/s", us(launch), us(step), gbps(x.b)),
			Time: func(n int, s float64) (float64, string) {
				return launch + 2*float64(n-1)*step + 2*float64(n-1)/float64(n)*s*beta, ""
			}}))
		busBw := x.b / 1e9 // at n = 2 a ring's algbw is its busbw
		if g, ok := ncclGenOf(DomainOf(x.f.header).CC); ok {
			llMax := g.llMax
			nm := model(x, Model{Name: "NCCL's tuning model", Collective: "allreduce", Measured: "collectives/allreduce/nccl",
				Paper: []string{"allreduce-latency/nccl-ring/intra", "allreduce/nccl-nvls/intra"},
				Basis: fmt.Sprintf("NCCL's own choice by its cost model: min over ring, tree × LL, LL128, Simple of latency + S / algbw, busbw %.0f GB/s", busBw),
				Notes: ncclRefs(busBw, g),
				Time: func(n int, s float64) (float64, string) {
					best, how := math.Inf(1), ""
					for _, algo := range []string{"ring", "tree"} {
						for p := range ncclProtos {
							lat, alg := ncclProto(algo, p, n, busBw, llMax)
							if t := lat + s/(1000*alg); t < best { // µs: tuning.cc:599
								best, how = t, algo+" "+ncclProtos[p]
							}
						}
					}
					return best * 1e-6, how
				}})
			nm.Inputs = nm.Inputs[1:] // its latencies are NCCL's constants: only B is the run's
			out = append(out, nm)
		} else {
			skipped = append(skipped, fmt.Sprintf("NCCL's tuning model [%s]: the GPU's generation (compute capability) is not in the file: NCCL's constants depend on it", x.f.File))
		}
	}
	for _, c := range []struct{ id, name string }{{"collectives/allreduce/multicta-oneshot", "one-shot"}, {"collectives/allreduce/nccl-lsa-oneshot", "one-shot (NCCL LSA)"}} {
		if x, ok := get(c.name, c.id); ok {
			a, b := x.a, 1/x.b
			out = append(out, model(x, Model{Name: c.name, Collective: "allreduce", Measured: c.id,
				Paper: []string{"allreduce-latency/nvshmem-device/intra", "allreduce/nvshmem-onstream-multicta/intra"},
				Basis: fmt.Sprintf("%s µs + (n−1) · S / %s GB/s (every GPU reads n−1 peers)", us(a), gbps(x.b)),
				Time:  func(n int, s float64) (float64, string) { return a + float64(n-1)*s*b, "" }}))
		}
	}
	for _, c := range []struct{ id, name string }{{"collectives/allreduce/multicta-twoshot", "two-shot"}, {"collectives/allreduce/nccl-lsa-twoshot", "two-shot (NCCL LSA)"}} {
		if x, ok := get(c.name, c.id); ok {
			a, b := x.a, 1/x.b
			out = append(out, model(x, Model{Name: c.name, Collective: "allreduce", Measured: c.id,
				Paper: []string{"allreduce-latency/nvshmem-device/intra", "allreduce/nvshmem-onstream-multicta/intra"},
				Basis: fmt.Sprintf("2 · %s µs + 2(n−1)/n · S / %s GB/s (reduce-scatter + all-gather)", us(a/2), gbps(x.b)),
				Time:  func(n int, s float64) (float64, string) { return a + 2*float64(n-1)/float64(n)*s*b, "" }}))
		}
	}
	for _, id := range []string{"collectives/alltoall/nccl", "collectives/alltoall/nvshmem-stream", "collectives/alltoall/nvshmem-block"} {
		name := "pairwise (" + strings.TrimPrefix(id, "collectives/alltoall/") + ")"
		if x, ok := get(name, id); ok {
			a, b := x.a, 1/x.b
			// At n = 2 half of S crosses the link: T = α + S/2 · 2b.
			out = append(out, model(x, Model{Name: name, Collective: "alltoall", Measured: id,
				Basis: fmt.Sprintf("%s µs + (n−1)/n · S / %s GB/s (every GPU sends n−1 blocks at once)", us(a), gbps(x.b/2)),
				Time:  func(n int, s float64) (float64, string) { return a + float64(n-1)/float64(n)*s*2*b, "" }}))
		}
	}
	return out, skipped
}

// hostNCCL: a collective through NCCL's host API (nccl, nccl-ring, ...),
// not its device API (nccl-lsa...).
func hostNCCL(id string) bool {
	i := strings.LastIndexByte(id, '/')
	impl := id[i+1:]
	return strings.HasPrefix(id, "collectives/") && (impl == "nccl" || strings.HasPrefix(impl, "nccl-") && !strings.HasPrefix(impl, "nccl-lsa"))
}

// Prediction is one model's time at one size and GPU count, beside a
// measurement where a run of that many PEs of the same setup exists and
// the paper's figure for the nearest condition where there is one.
type Prediction struct {
	Model      string
	Collective string
	File       string // the 2-PE file the model comes from
	N          int
	Size       int64
	Predicted  float64 // s (NaN: refused)
	How        string  // NCCL's model: the algorithm and protocol it picks
	Refused    string  // why there is no prediction
	Measured   float64 // s (0: none)
	MeasuredIn string  // the file it was measured in
	Paper      *PaperFigure
}

// Error is the prediction's relative error against the measurement.
func (p Prediction) Error() float64 {
	if p.Measured <= 0 || math.IsNaN(p.Predicted) {
		return math.NaN()
	}
	return p.Predicted/p.Measured - 1
}

// PaperFigure is a published figure beside a prediction: a time range
// (Lo..Hi, s) or, from a peak bandwidth, the least time at the size (Hi 0,
// AtLeast set); Condition says how the paper's setup differs.
type PaperFigure struct {
	Lo, Hi    float64
	AtLeast   bool
	Condition string
}

// Text writes the figure in µs: "4.7–8.9", "≥ 973".
func (p *PaperFigure) Text() string {
	switch {
	case p == nil:
		return ""
	case p.AtLeast:
		return "≥ " + us(p.Lo)
	case p.Hi > p.Lo:
		return us(p.Lo) + "–" + us(p.Hi)
	}
	return us(p.Lo)
}

// paperFigure is the nearest of the paper's rows (keys "table/key") to a
// prediction at n GPUs and size: a small-message range where the size is in
// it, else a peak bandwidth as the least time where that is longer than the
// small messages take; only at the paper's GPU count.
func paperFigure(ref *record.Reference, keys []string, n int, size int64) *PaperFigure {
	if ref == nil {
		return nil
	}
	for _, k := range keys {
		table, key, _ := strings.Cut(k, "/")
		for i := range ref.Rows {
			r := &ref.Rows[i]
			if r.Table != table || r.Key != key || r.NoPaper || r.PaperPEs != n {
				continue
			}
			cond := fmt.Sprintf("paper: %s, %d × H200 (%s)", r.Label, r.PaperPEs, ref.Platform)
			if r.Needs != "" {
				cond += "; it needs " + r.Needs + ": on there, off in the runs predicted from"
			} else if r.PaperNeeds != "" {
				cond += "; the paper's setup had " + r.PaperNeeds + ", the runs predicted from did not"
			}
			switch {
			case r.Agg == "range" && size <= r.MaxSize:
				return &PaperFigure{Lo: r.Value, Hi: r.Hi, Condition: cond + fmt.Sprintf("; its medians from 4 B to %s, not at this size alone", units.Bytes(r.MaxSize))}
			case r.Metric == record.MetricAlgBW && float64(size)/r.Value > maxRangeTime(ref, n):
				return &PaperFigure{Lo: float64(size) / r.Value, AtLeast: true, Condition: cond + fmt.Sprintf("; its peak algbw %.0f GB/s at any size, so at least S / %.0f GB/s here", r.Value/1e9, r.Value/1e9)}
			}
		}
	}
	return nil
}

// maxRangeTime is the longest time of the paper's small-message ranges at
// n GPUs: a peak's least time below it says nothing.
func maxRangeTime(ref *record.Reference, n int) float64 {
	m := 0.0
	for _, r := range ref.Rows {
		if r.Agg == "range" && r.PaperPEs == n {
			m = max(m, r.Hi)
		}
	}
	return m
}

// Predict evaluates the models at ns and sizes. A GPU count beyond the
// model's NVLink domain, or on a kind whose domain is unknown, and a size
// outside those its input series measured, are refused with the reason.
// Fits of runs with n PEs of the same setup (one launch per operation)
// give the measured times; ref (nil: none) the paper's figures.
func Predict(models []Model, fits []*Fit, ns []int, sizes []int64, ref *record.Reference) []Prediction {
	measured := func(m Model, n int, size int64) (float64, string) {
		for _, f := range fits {
			if f.ID != m.Measured || f.PEs != n || !perOp(f) || !sameSetup(f.header, m.header) {
				continue
			}
			for _, o := range f.Obs {
				if o.Size == size {
					return o.Time, f.File
				}
			}
		}
		return 0, ""
	}
	var out []Prediction
	for _, m := range models {
		for _, n := range ns {
			for _, s := range sizes {
				p := Prediction{Model: m.Name, Collective: m.Collective, File: m.File, N: n, Size: s, Predicted: math.NaN()}
				switch {
				case m.Domain.N == 0:
					p.Refused = "the NVLink domain is unknown: " + m.Domain.System
				case n > m.Domain.N:
					p.Refused = fmt.Sprintf("%d GPUs: beyond one NVLink domain (%s). %s", n, m.Domain.System, InterNode)
				case s < m.Lo || s > m.Hi:
					p.Refused = fmt.Sprintf("%s is outside the sizes measured (%s – %s)", units.Bytes(s), units.Bytes(m.Lo), units.Bytes(m.Hi))
				default:
					p.Predicted, p.How = m.Time(n, float64(s))
				}
				p.Measured, p.MeasuredIn = measured(m, n, s)
				p.Paper = paperFigure(ref, m.Paper, n, s)
				out = append(out, p)
			}
		}
	}
	return out
}

// CheckN refuses GPU counts no model may reach: beyond the NVLink domain
// of every input's GPU kind that is known (nil where every count is within
// one, or no kind is known: the predictions then say so).
func CheckN(files []*record.File, ns []int) error {
	most, system := 0, ""
	for _, f := range files {
		if d := DomainOf(&f.Header); d.N > most {
			most, system = d.N, d.System
		}
	}
	if most == 0 {
		return nil
	}
	for _, n := range ns {
		if n > most {
			return fmt.Errorf("%d: beyond one NVLink domain (%s), the most a prediction of one node holds for. %s", n, system, InterNode)
		}
	}
	return nil
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

// The ranges a NIC's description may take: line rates of any NIC made or
// announced (1 Gb/s Ethernet to 3.2 Tb/s), up to 72 GPUs and NICs a node
// (an NVL72 rack), a fabric round trip up to a millisecond.
const (
	MinNICGbps, MaxNICGbps = 1, 3200
	MaxPerNode             = 72
	MaxNodes               = 1 << 16
	MaxFabricRTT           = 1e-3
)

// Check refuses a NIC no network has: NaN, infinite, negative or zero, or
// outside the ranges above. It names the flag.
func (n NIC) Check() error {
	in := func(v, lo, hi float64) bool { return v >= lo && v <= hi } // false for NaN
	switch {
	case !in(n.Gbps, MinNICGbps, MaxNICGbps):
		return fmt.Errorf("--nic-gbps %v: want a NIC's line rate, %d to %d Gb/s (ConnectX-7: 400)", n.Gbps, MinNICGbps, MaxNICGbps)
	case !(n.Wire > 0 && n.Wire <= 1):
		return fmt.Errorf("--wire-efficiency %v: want a share above 0 and at most 1", n.Wire)
	case !(n.Ring > 0 && n.Ring <= 1):
		return fmt.Errorf("--ring-efficiency %v: want a share above 0 and at most 1", n.Ring)
	case !(n.FabricRTT > 0 && n.FabricRTT <= MaxFabricRTT):
		return fmt.Errorf("--fabric-rtt %v: want a round trip above 0 and at most 1ms", fmtDuration(n.FabricRTT))
	case n.PerNode < 1 || n.PerNode > MaxPerNode:
		return fmt.Errorf("--nics-per-node %d: want 1 to %d", n.PerNode, MaxPerNode)
	case n.GPUsPerNode < 1 || n.GPUsPerNode > MaxPerNode:
		return fmt.Errorf("--gpus-per-node %d: want 1 to %d", n.GPUsPerNode, MaxPerNode)
	case n.Nodes < 2 || n.Nodes > MaxNodes:
		return fmt.Errorf("--nodes %d: want 2 to %d (one node is the n-GPU predictions' --predict)", n.Nodes, MaxNodes)
	}
	return nil
}

func fmtDuration(s float64) string { return strconv.FormatFloat(s*1e6, 'g', 4, 64) + "µs" }

// NICRow is one of the paper's inter-node rows, predicted.
type NICRow struct {
	Row, Unit        string
	Predicted, Paper float64
	How              string
}

// PredictNIC predicts the paper's inter-node rows from the NIC and the
// on-node 256 B round trips (put and get, NVSHMEM, block scope): the
// lowest of the first file, in input order, that measured one with 2 PEs or
// more; the file is named.
func PredictNIC(nic NIC, fits []*Fit) []NICRow {
	bw := nic.Gbps / 8 * 1e9 * nic.Wire
	rt := func(id string) (float64, string) {
		best, file, fi := math.NaN(), "", -1
		for _, f := range fits {
			if f.ID != id || f.PEs < 2 || fi >= 0 && f.file != fi {
				continue
			}
			for _, o := range f.Obs {
				if o.Size == 256 && (math.IsNaN(best) || o.Time < best) {
					best, file, fi = o.Time, f.File, f.file
				}
			}
		}
		return best, file
	}
	rows := []NICRow{
		{Row: "IBGDA put bandwidth", Unit: "GB/s", Predicted: bw / 1e9, Paper: 48.0, How: fmt.Sprintf("%s Gb/s × %.2f (headers)", plainNum(nic.Gbps), nic.Wire)},
		{Row: "IBGDA get bandwidth", Unit: "GB/s", Predicted: bw / 1e9, Paper: 48.2, How: fmt.Sprintf("%s Gb/s × %.2f (headers)", plainNum(nic.Gbps), nic.Wire)},
	}
	for _, c := range []struct {
		id, row string
		paper   float64
	}{{"latency/put/block", "IBGDA put round trip at 256 B", 9.4}, {"latency/get/block", "IBGDA get round trip at 256 B", 9.5}} {
		on, file := rt(c.id)
		r := NICRow{Row: c.row, Unit: "µs", Paper: c.paper}
		if math.IsNaN(on) {
			r.How = "no on-node 256 B round trip in the files"
			r.Predicted = math.NaN()
		} else {
			r.Predicted = (on + nic.FabricRTT + 256/bw) * 1e6
			r.How = fmt.Sprintf("on-node %s µs (%s, %s) + fabric round trip %s µs (assumed) + 256 B at the NIC", us(on), c.id, file, us(nic.FabricRTT))
		}
		rows = append(rows, r)
	}
	n := nic.Nodes * nic.GPUsPerNode
	busbw := nic.Ring * float64(nic.PerNode) * nic.Gbps / 8 * 1e9
	rows = append(rows, NICRow{Row: fmt.Sprintf("NCCL ring AllReduce, %d nodes × %d GPUs, large messages", nic.Nodes, nic.GPUsPerNode), Unit: "GB/s algbw",
		Predicted: busbw * float64(n) / (2 * float64(n-1)) / 1e9, Paper: 180,
		How: fmt.Sprintf("busbw %.2f × %d NICs × %s Gb/s, algbw = busbw · n / (2(n−1))", nic.Ring, nic.PerNode, plainNum(nic.Gbps))})
	return rows
}

// plainNum writes a flag's number as given: 400, 12.5.
func plainNum(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

// Choice is NCCL's own algorithm against the ones forced, at one size.
type Choice struct {
	Group    string
	File     string
	Size     int64
	Default  float64 // the time NCCL's choice took (median)
	Best     string  // the fastest forced algorithm
	BestTime float64
	// Verdict is the decision rule's over NCCL's choice and the forced
	// algorithms at this size (decide.Rule, the group's judged sizes as its
	// family: decide.Family); Same says why they are one operation here
	// ("": they are not).
	Verdict decide.Verdict
	Same    string
}

// Miss is how much slower NCCL's choice was than the fastest forced one (0
// or less: it chose well).
func (c Choice) Miss() float64 { return c.Default/c.BestTime - 1 }

// Missed reports whether the rule says a forced algorithm beat NCCL's choice.
func (c Choice) Missed() bool { return c.Same == "" && !c.Verdict.Tie() && c.Verdict.Winner != "nccl" }

// NCCLChoices compares collectives/allreduce/nccl with the forced
// nccl-ring, nccl-tree (and NVLS where measured), like with like (one
// file, PE count, launch mode, dtype), by the decision rule: a forced
// algorithm beat NCCL's choice only where the rule names it the winner.
// Where they ran the same code (one PE: NCCL's one-rank copy), Same says so
// and nothing is compared.
func NCCLChoices(fits []*Fit, rule decide.Rule) []Choice {
	def := map[string]*Fit{}
	forced := map[string][]*Fit{}
	for _, f := range fits {
		if !strings.HasPrefix(f.ID, "collectives/allreduce/nccl") || strings.Contains(f.ID, "lsa") {
			continue
		}
		g := group(f.Series, "").String()
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
		var choices []Choice
		var entries [][]decide.Entry
		for _, o := range d.Obs {
			c := Choice{Group: g, File: d.File, Size: o.Size, Default: o.Time, BestTime: math.Inf(1)}
			es := []decide.Entry{{Name: "nccl", Samples: o.Samples, Unjudged: o.Unjudged}}
			op, why := decide.Operation(d.ID, d.Path, d.OneRank, d.PEs, o.Size)
			same := true
			for _, f := range forced[g] {
				for _, fo := range f.Obs {
					if fo.Size != o.Size {
						continue
					}
					name := strings.TrimPrefix(f.ID, "collectives/allreduce/")
					if fo.Time < c.BestTime {
						c.Best, c.BestTime = name, fo.Time
					}
					es = append(es, decide.Entry{Name: name, Samples: fo.Samples, Unjudged: fo.Unjudged})
					if fop, _ := decide.Operation(f.ID, f.Path, f.OneRank, f.PEs, fo.Size); fop != op {
						same = false
					}
				}
			}
			if c.Best == "" {
				continue
			}
			if same && why != "" {
				c.Same = why
			} else {
				entries = append(entries, es)
			}
			choices = append(choices, c)
		}
		// Decided with the family of the sizes judged, as every reader.
		m, k := decide.Family(entries), 0
		for i := range choices {
			if choices[i].Same == "" {
				choices[i].Verdict = rule.Decide(entries[k], m)
				k++
			}
		}
		out = append(out, choices...)
	}
	return out
}
