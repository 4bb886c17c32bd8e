package harness

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/nvshbench/nvshbench/record"
)

// Item is one point to measure.
type Item struct {
	Index  int           `json:"index"`
	ID     string        `json:"id"`
	Params record.Params `json:"params"`
}

// ItemKey names an item's point, benchmark and parameters: a worker's
// result carries it and the controller records a result only under the
// point it names.
func ItemKey(it Item) string { return it.ID + " " + it.Params.Key() }

// Plan is what every worker runs, in order.
type Plan struct {
	Config Config `json:"config"`
	Items  []Item `json:"items"`
	// Vars are the NVSHMEM variables each benchmark's points set
	// (params.env), sorted: a worker group given part of the plan still
	// knows which of its points are NVSHMEM's choice beside forced ones.
	Vars map[string][]string `json:"vars,omitempty"`
}

// BuildPlan lists the points of the selected benchmarks. The limit
// benchmarks that the others are compared with are added and run first, so
// every later point can carry its in-run limit.
func BuildPlan(benches []*Benchmark, cfg *Config) Plan {
	need := map[string]bool{}
	var sel []*Benchmark
	for _, b := range benches {
		need[b.ID] = true
		sel = append(sel, b)
	}
	for _, b := range benches {
		for _, id := range append(append([]string{}, b.Limits...), b.Floors...) {
			if !need[id] {
				if lb, ok := Lookup(id); ok {
					need[id] = true
					sel = append(sel, lb)
				}
			}
		}
	}
	var limits, rest []*Benchmark
	for _, b := range sel {
		if strings.HasPrefix(b.ID, "limit/") {
			limits = append(limits, b)
		} else {
			rest = append(rest, b)
		}
	}
	p := Plan{Config: *cfg}
	for _, b := range append(limits, rest...) {
		for _, params := range PointsOf(b, cfg) {
			p.Items = append(p.Items, Item{Index: len(p.Items), ID: b.ID, Params: params})
			if b.Buffer != nil {
				p.Config.NeedBytes = max(p.Config.NeedBytes, b.Buffer(cfg, cfg.PEs, params))
			}
		}
	}
	// The points of one environment together (a worker group each), the
	// run's own first (the limits are there), each group in plan order.
	keys := make(map[int]string, len(p.Items)) // by plan index: each item's key once, not at every comparison
	for _, it := range p.Items {
		keys[it.Index] = EnvKey(it.Params.Env)
	}
	sort.SliceStable(p.Items, func(i, j int) bool { return keys[p.Items[i].Index] < keys[p.Items[j].Index] })
	for i := range p.Items {
		p.Items[i].Index = i
		for k := range p.Items[i].Params.Env {
			if p.Vars == nil {
				p.Vars = map[string][]string{}
			}
			if id := p.Items[i].ID; !slices.Contains(p.Vars[id], k) {
				p.Vars[id] = append(p.Vars[id], k)
				slices.Sort(p.Vars[id])
			}
		}
	}
	return p
}

// PointsOf are the points b measures in a run of cfg, as its plan holds
// them: its own, on the job's PEs, a point-to-point one for the pair the
// run names (--pair); in the pair matrix (cfg.Matrix) a row of it for
// every pair (matrixPoints).
func PointsOf(b *Benchmark, cfg *Config) []record.Params {
	if cfg.Matrix && !b.AllPEs && InMatrix(b.ID) {
		return matrixPoints(b, cfg)
	}
	ps := b.Points(cfg)
	for i := range ps {
		ps[i].PEs = cfg.PEs
		if !b.AllPEs {
			ps[i].Pair = cfg.Pair
		}
	}
	return ps
}

// WritePlan saves a plan for the workers.
func WritePlan(w io.Writer, p Plan) error {
	return json.NewEncoder(w).Encode(p)
}

// ReadPlan loads a plan from a file, or from standard input for "-" (how
// the controller hands its workers the plan: no file beside the user's).
func ReadPlan(path string) (Plan, error) {
	var p Plan
	var b []byte
	var err error
	if path == "-" {
		b, err = io.ReadAll(os.Stdin)
	} else {
		b, err = os.ReadFile(path)
	}
	if err != nil {
		return p, err
	}
	if err := json.Unmarshal(b, &p); err != nil {
		return p, fmt.Errorf("plan %s: %v", path, err)
	}
	return p, nil
}

// Merge combines the PEs' outcomes of one point into a results record.
// outs[r] is rank r's outcome (nil when the rank reported none); errs holds
// failures. limits maps limit IDs to the bandwidth measured in this run.
// Where several PEs timed the point, its figure is the slowest PE's time
// at each launch, the median and fastest PE's beside it, and every PE's
// own samples are kept (record.AcrossPEs, Point.PETimes).
func Merge(it Item, outs []*Outcome, errs []string, cfg *Config, limits map[string]float64) record.Point {
	p := record.Point{Type: record.TypePoint, ID: it.ID, Params: it.Params, Timer: "events", // the one timer
		Time: time.Now().UTC().Format(time.RFC3339)}
	b, _ := Lookup(it.ID)
	for _, o := range outs {
		if o != nil && o.Pair != nil && p.Pair == nil { // every PE chose the same
			p.Pair = o.Pair
		}
	}
	for _, o := range outs {
		if o != nil && o.Waived != "" {
			p.Status, p.Reason = record.StatusWaived, o.Waived
			return p
		}
	}
	if len(errs) > 0 {
		p.Status, p.Reason = record.StatusError, strings.Join(errs, "; ")
		return p
	}
	var checked, bad int64
	detail := ""
	var timers []*Outcome // the PEs that timed the point, in PE order
	for r, o := range outs {
		if o == nil {
			p.Status, p.Reason = record.StatusError, fmt.Sprintf("rank %d reported no outcome", r)
			return p
		}
		if len(o.Samples) > 0 {
			timers = append(timers, o)
		}
		if len(o.Samples) > 0 && len(timers) == 1 {
			p.Iters, p.Effective = o.Iters, o.Effective
			p.BusFactor = o.BusFactor
			p.WorkingSetBytes = o.WorkSet
			// A bandwidth served by a cache measures the cache; a round trip is
			// a round trip wherever its result lands.
			p.L2Resident = record.CacheServed(o.WorkSet, o.L2Bytes) && b != nil && movesBytes(b)
			p.Values = o.Values
			if v, ok := limits[FloorKey(o.Floor)]; ok && o.Floor != "" && v > 0 {
				p.Floor = &record.Limit{ID: FloorKey(o.Floor), Value: v}
			}
		}
		p.Bytes += o.Bytes
		checked += o.Checked
		bad += o.Errors
		if detail == "" && o.Detail != "" {
			detail = fmt.Sprintf("PE %d: %s", r, o.Detail)
		}
	}
	if len(timers) == 0 {
		p.Status, p.Reason = record.StatusError, "no PE returned timing samples"
		return p
	}
	for _, o := range timers { // the slowest GPU's clock of the PEs that timed
		if c := o.Clock; c != nil && (p.Clock == nil || c.SMMedianHz < p.Clock.SMMedianHz) {
			p.Clock = c
		}
	}
	acrossPEs(&p, timers)
	p.Verify = record.Verification{Checked: cfg.Verify && checked > 0, OK: bad == 0, Errors: bad, Detail: detail}
	switch {
	case !cfg.Verify:
		p.Verify = record.Verification{Checked: false, Detail: "verification disabled (--no-verify)"}
	case b != nil && b.Unverifiable != "" && checked == 0:
		p.Verify = record.Verification{Unverifiable: b.Unverifiable}
	}
	p.Status = record.StatusOK
	if bad > 0 {
		p.Status, p.Reason = record.StatusFailedVerification, fmt.Sprintf("%d of %d checked elements wrong; %s", bad, checked, detail)
	}
	var metrics []string
	if b != nil {
		metrics = record.Derivable(&p, b.Metrics)
	}
	if err := record.Derive(&p, metrics...); err != nil {
		p.Status, p.Reason = record.StatusError, err.Error()
		p.Metrics = nil
		return p
	}
	if b != nil {
		for _, id := range b.Limits {
			if v, ok := limits[LimitKey(id, p.Params.Pair)]; ok && v > 0 && (p.Limit == nil || v > p.Limit.Value) {
				p.Limit = &record.Limit{ID: id, Value: v}
			}
		}
	}
	return p
}

// acrossPEs gives p the timing of the PEs that timed it: one PE's samples,
// or the slowest PE's time at each launch with the median and fastest PE's
// beside it and every PE's own samples (each one's summary where they
// would be many); the in-kernel spread of the slowest PE.
func acrossPEs(p *record.Point, timers []*Outcome) {
	slowest := timers[0]
	defer func() { p.KernelTimer = slowest.kernelTimer() }()
	if len(timers) == 1 {
		p.Samples = slowest.Samples
		return
	}
	times := make([][]float64, len(timers))
	n := 0
	for i, o := range timers {
		times[i] = o.Samples
		n += len(o.Samples)
	}
	p.Samples, p.RankMedian, p.RankFastest = record.AcrossPEs(times)
	most := 0.0
	for _, o := range timers {
		s := record.Summarize(o.Samples, record.UnitSeconds)
		t := record.PETime{PE: o.PE, GPU: o.GPU, Node: o.Node, Samples: o.Samples}
		if n > record.MaxPESamples {
			t.Samples, t.Summary = nil, &s
		}
		p.PETimes = append(p.PETimes, t)
		if s.Median > most {
			slowest, most = o, s.Median
		}
	}
}

// kernelTimer summarises the PE's in-kernel times (nil: none).
func (o *Outcome) kernelTimer() *record.Summary {
	if len(o.Kernel) == 0 {
		return o.KernelTimer
	}
	k := record.Summarize(o.Kernel, record.UnitSeconds)
	return &k
}

// movesBytes: the benchmark reports a bandwidth (its figures can be answered
// by a cache).
func movesBytes(b *Benchmark) bool {
	for _, m := range b.Metrics {
		if m == record.MetricBandwidth || m == record.MetricAlgBW || m == record.MetricBusBW {
			return true
		}
	}
	return false
}

// FloorKey names the in-run floor of round trips served by memory or by
// the cache: the chase through the peer's memory (the path every round
// trip of the job takes), limits' key and the floor's ID in a record.
func FloorKey(served string) string { return "limit/chase-peer " + served }

// RecordLimit updates limits with a finished limit point: the highest median
// bandwidth of each copy reference (the best launch shape), the lowest
// median of each chase (the floor).
func RecordLimit(limits map[string]float64, p *record.Point) {
	if !strings.HasPrefix(p.ID, "limit/") || p.Status != record.StatusOK {
		return
	}
	if m, ok := p.Metric(record.MetricBandwidth); ok {
		if k := LimitKey(p.ID, p.Params.Pair); m.Median > limits[k] {
			limits[k] = m.Median
		}
	}
	if p.ID == "limit/chase-peer" {
		if m, ok := p.Metric(record.MetricLatency); ok {
			k := FloorKey(p.Params.Extra["served"])
			if v, seen := limits[k]; !seen || m.Median < v {
				limits[k] = m.Median
			}
		}
	}
}
