package verdict

import (
	"fmt"
	"regexp"
	"sort"
	"strings"

	"github.com/nvshbench/nvshbench/internal/units"
	"github.com/nvshbench/nvshbench/record"
)

// Level is a verdict: PASS, WARN or FAIL.
type Level int

// The levels, in order of severity.
const (
	Pass Level = iota
	Warn
	Fail
)

func (l Level) String() string { return [...]string{"PASS", "WARN", "FAIL"}[l] }

// MarshalText writes the level as its word (JSON).
func (l Level) MarshalText() ([]byte, error) { return []byte(l.String()), nil }

// UnmarshalText reads a level's word.
func (l *Level) UnmarshalText(b []byte) error {
	for _, v := range []Level{Pass, Warn, Fail} {
		if string(b) == v.String() {
			*l = v
			return nil
		}
	}
	return fmt.Errorf("verdict level %q: want PASS, WARN or FAIL", b)
}

// The shares of a band a figure may fall to: below WarnShare of its band
// it is WARN, below FailShare FAIL (a bandwidth's share of the band's
// figure; a round trip's, the band's figure over its own).
const (
	WarnShare = 0.95
	FailShare = 0.85
	// CeilingExcess: a bandwidth above its physical ceiling by more than
	// this share says the link info or the timing is wrong (WARN).
	CeilingExcess = 1.05
	// MinGroup: the fewest points of a row and class a median is taken
	// over (fewer: no median band; the ceiling and reference bands only).
	MinGroup = 3
)

// Finding is one reason for a subject's level: the row, the figure, the
// band it was held to.
type Finding struct {
	Level  Level   `json:"level"`
	Row    string  `json:"row,omitempty"` // the benchmark ID and direction
	Value  float64 `json:"value,omitempty"`
	Unit   string  `json:"unit,omitempty"`
	Band   string  `json:"band,omitempty"` // the expected band, in words
	Reason string  `json:"reason"`
}

// Subject is what a verdict is about: a pair, a GPU, a node, a rank.
type Subject struct {
	Kind     string    `json:"kind"` // pair, gpu, node, rank
	Name     string    `json:"name"`
	Node     string    `json:"node,omitempty"`
	GPU      int       `json:"gpu"`
	From     int       `json:"from_pe"`
	To       int       `json:"to_pe"`             // a pair's PEs (a rank: its PE twice)
	ToNode   string    `json:"to_node,omitempty"` // a pair's second node
	Level    Level     `json:"level"`
	Findings []Finding `json:"findings,omitempty"` // the WARN and FAIL ones
	Checked  int       `json:"checked"`            // figures held to a band
}

func (s *Subject) add(f Finding) {
	s.Checked++
	if f.Level > s.Level {
		s.Level = f.Level
	}
	if f.Level > Pass {
		s.Findings = append(s.Findings, f)
	}
}

// Waiver is a row the run could not measure, with why (once per reason).
type Waiver struct {
	Row    string `json:"row"`
	Reason string `json:"reason"`
	Points int    `json:"points"`
}

// Verdict is the judgement of one results file.
type Verdict struct {
	Level Level `json:"level"`
	// Pairs, GPUs, Nodes and Ranks: every subject judged, in order.
	Pairs []*Subject `json:"pairs"`
	GPUs  []*Subject `json:"gpus"`
	Nodes []*Subject `json:"nodes"`
	Ranks []*Subject `json:"ranks,omitempty"`
	// Job holds what concerns the whole job (collectives, failed points
	// outside the matrix).
	Job *Subject `json:"job"`
	// SlowestNode names the node the cluster's figures are slowest on
	// (several nodes only), and why.
	SlowestNode string   `json:"slowest_node,omitempty"`
	Waived      []Waiver `json:"waived,omitempty"`
	Bands       string   `json:"bands,omitempty"` // the reference bands' source ("" none)
	Notes       []string `json:"notes,omitempty"`
	everyPE     int      // the job's points every PE timed (a straggler's share is of these)
}

// Options: the reference bands (nil: none).
type Options struct {
	Bands *Bands
}

// matrix values of params.extra.matrix (harness.MatrixKey): a pair, or a
// GPU with itself. Kept here as the results say them (verdict reads
// results only).
const (
	matrixKey    = "matrix"
	matrixPair   = "pair"
	matrixLocal  = "local"
	matrixIncast = "incast"
)

// Class is a pair's link class as bands name it: nvlink (NVLink, direct
// or through NVSwitches), pcie, network (two nodes), same-gpu (two PEs of
// one GPU: no link), memory (one GPU with itself), or "" unknown.
func Class(p *record.Point) string {
	if p.Pair != nil {
		switch p.Pair.Kind {
		case record.PairLoopback:
			return "memory"
		case record.PairSameGPU:
			return "same-gpu"
		case record.PairAcrossNodes:
			return "network"
		}
	}
	if p.Ceiling != nil {
		switch strings.TrimPrefix(p.Ceiling.ID, "link/") {
		case record.LinkNVLink, record.LinkNVSwitch:
			return "nvlink"
		case record.LinkPCIe:
			return "pcie"
		}
	}
	if p.Pair != nil && p.Pair.Kind == record.PairSameNode {
		return "nvlink" // a node's GPUs without link info: NVLink, as an H100/H200 node joins them
	}
	return ""
}

// figure is a point's judged figure: its median bandwidth, else its median
// round trip; higher says whether more is better.
func figure(p *record.Point) (v float64, unit string, higher, ok bool) {
	if m, ok := p.Metric(record.MetricBandwidth); ok && m.Median > 0 {
		return m.Median, record.UnitBytesPerSec, true, true
	}
	if m, ok := p.Metric(record.MetricLatency); ok && m.Median > 0 {
		return m.Median, record.UnitSeconds, false, true
	}
	return 0, "", false, false
}

// share is a figure's share of its band's figure (a round trip's: the
// band's over its own): 1 at the band, below it worse.
func share(v, band float64, higher bool) float64 {
	if higher {
		return v / band
	}
	return band / v
}

func levelOf(s float64) Level {
	switch {
	case s < FailShare:
		return Fail
	case s < WarnShare:
		return Warn
	}
	return Pass
}

// Show writes a figure in its unit: GB/s (1e9 bytes) or µs.
func Show(v float64, unit string) string {
	if unit == record.UnitBytesPerSec {
		return fmt.Sprintf("%.1f GB/s", v/1e9)
	}
	return fmt.Sprintf("%.2f µs", v*1e6)
}

func rowOf(p *record.Point) string {
	if p.Params.Dir == "bidir" {
		return p.ID + " bidir"
	}
	return p.ID
}

// upperQuartile is the figure a quarter of the group does better than
// (the 75th percentile of a bandwidth, the 25th of a round trip).
func upperQuartile(v []float64, higher bool) float64 {
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	i := (len(s) - 1) * 3 / 4
	if !higher {
		i = (len(s) - 1) / 4
	}
	return s[i]
}

// median is the group's median.
func median(v []float64) float64 {
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	return record.Quantile(s, 0.5)
}

// Judge judges a results file.
func Judge(f *record.File, o Options) (*Verdict, error) {
	v := &Verdict{Job: &Subject{Kind: "job", Name: "the job"}}
	if o.Bands != nil {
		if err := o.Bands.Fits(f.Header); err != nil {
			return nil, err
		}
		v.Bands = o.Bands.Source
	}
	if why := missingNodes(f); why != "" {
		return nil, fmt.Errorf("%s", why)
	}
	gpuKind := ""
	if len(f.Header.GPUs) > 0 {
		gpuKind = f.Header.GPUs[0].Name
	}
	pairs := map[[2]int]*Subject{}
	gpus := map[string]*Subject{}  // by node and GPU index
	nodes := map[string]*Subject{} // by node
	node := func(name string) *Subject {
		if s, ok := nodes[name]; ok {
			return s
		}
		s := &Subject{Kind: "node", Name: name, Node: name}
		nodes[name] = s
		return s
	}
	gpu := func(e record.PairEnd) *Subject {
		k := fmt.Sprintf("%s\x00%03d", e.Node, e.GPU)
		if s, ok := gpus[k]; ok {
			return s
		}
		s := &Subject{Kind: "gpu", Name: fmt.Sprintf("GPU %d (%s)", e.GPU, e.Node), Node: e.Node, GPU: e.GPU}
		gpus[k] = s
		node(e.Node)
		return s
	}
	waived := map[[2]string]*Waiver{}
	groups := map[groupKey][]float64{}
	multi := len(f.Header.GPUs) > 0 && f.Header.Nodes > 1
	for _, g := range f.Header.GPUs {
		multi = multi || g.Host != f.Header.GPUs[0].Host
	}
	// Several PEs on one GPU (--pes-per-gpu) time-slice it: their figures
	// measure no link or memory of their own, so they are held to no band
	// (their status and verification still are).
	pesOn := map[[2]string]map[int]bool{}
	for i := range f.Points {
		if p := &f.Points[i]; p.Pair != nil {
			for _, e := range []record.PairEnd{p.Pair.From, p.Pair.To} {
				k := [2]string{e.Node, fmt.Sprint(e.GPU)}
				if pesOn[k] == nil {
					pesOn[k] = map[int]bool{}
				}
				pesOn[k][e.PE] = true
			}
		}
	}
	shared := func(e record.PairEnd) bool { return len(pesOn[[2]string{e.Node, fmt.Sprint(e.GPU)}]) > 1 }
	sliced := 0
	var judged []*record.Point
	for i := range f.Points {
		p := &f.Points[i]
		kind := p.Params.Extra[matrixKey]
		switch p.Status {
		case record.StatusWaived:
			k := [2]string{rowOf(p), peNumber.ReplaceAllString(p.Reason, "PE #")} // one line for every PE's alike
			if waived[k] == nil {
				waived[k] = &Waiver{Row: rowOf(p), Reason: p.Reason}
			}
			waived[k].Points++
			continue
		case record.StatusOK:
		default:
			f := Finding{Level: Fail, Row: rowOf(p), Reason: fmt.Sprintf("%s: %s", p.Status, p.Reason)}
			switch {
			case kind == matrixPair && p.Pair != nil:
				pairSubject(pairs, p).add(f)
			case kind == matrixLocal && p.Pair != nil:
				gpu(p.Pair.From).add(f)
			case kind == matrixIncast && p.Pair != nil:
				gpu(p.Pair.To).add(f)
			default:
				v.Job.add(f)
			}
			continue
		}
		if kind != matrixPair && kind != matrixLocal && kind != matrixIncast || p.Pair == nil {
			judgeJob(v, p)
			continue
		}
		val, _, _, ok := figure(p)
		if !ok {
			continue
		}
		if shared(p.Pair.From) || shared(p.Pair.To) {
			sliced++
			gpu(p.Pair.From)
			gpu(p.Pair.To)
			continue
		}
		g := groupOf(p, kind, multi)
		groups[g] = append(groups[g], val)
		judged = append(judged, p)
	}
	clocks := map[*Subject][]float64{}
	nominal := map[*Subject]float64{}
	maxHz := map[int]float64{} // by PE: its GPU's maximum SM clock (the header's)
	for _, g := range f.Header.GPUs {
		if g.ClockKHz > 0 {
			maxHz[g.PE] = float64(g.ClockKHz) * 1e3
		}
	}
	for _, p := range judged {
		val, unit, higher, _ := figure(p)
		kind := p.Params.Extra[matrixKey]
		g := groupOf(p, kind, multi)
		var s *Subject
		if kind == matrixIncast {
			s = gpu(p.Pair.To) // its receiving side
		} else if kind == matrixLocal {
			s = gpu(p.Pair.From)
			if p.Clock != nil && p.Clock.SMMedianHz > 0 {
				clocks[s] = append(clocks[s], p.Clock.SMMedianHz)
				if hz := maxHz[p.Pair.From.PE]; hz > 0 {
					nominal[s] = hz
				}
			}
		} else {
			s = pairSubject(pairs, p)
			gpu(p.Pair.From)
			gpu(p.Pair.To)
		}
		// The run's own band: the median of the row's points of its class
		// on its node (across nodes: of the job).
		where := "its node's"
		if g.node == "" {
			where = "the job's"
		}
		if grp := groups[g]; len(grp) >= MinGroup && g.class != "same-gpu" {
			m, of := median(grp), "median"
			if g.node == "" { // across nodes: a slow node is on most pairs of a small job
				m, of = upperQuartile(grp, higher), "upper quartile"
			}
			sh := share(val, m, higher)
			what := "pairs"
			switch kind {
			case matrixLocal:
				what = "GPUs"
			case matrixIncast:
				what = "points (every other PE into one GPU)"
			}
			s.add(Finding{Level: levelOf(sh), Row: rowOf(p), Value: val, Unit: unit,
				Band:   fmt.Sprintf("%s %s of %d %s %s: %s (WARN below %.0f %%, FAIL below %.0f %%)", where, of, len(grp), g.class, what, Show(m, unit), WarnShare*100, FailShare*100),
				Reason: fmt.Sprintf("%s %s, %.0f %% of the %s", rowOf(p), Show(val, unit), sh*100, of)})
		}
		// The physical ceiling of its path (NVML).
		if higher && p.Ceiling != nil && p.Ceiling.Value > 0 && g.class != "same-gpu" && kind != matrixIncast {
			ceil := p.Ceiling.Value // per direction: both of a bidirectional pair's
			if p.Params.Dir == "bidir" {
				ceil *= 2
			}
			sh := val / ceil
			lvl := Pass
			if sh > CeilingExcess {
				lvl = Warn
			}
			s.add(Finding{Level: lvl, Row: rowOf(p), Value: val, Unit: unit,
				Band:   fmt.Sprintf("at most its path's ceiling %s (%s)", Show(ceil, unit), p.Ceiling.ID),
				Reason: fmt.Sprintf("%s %s, %.0f %% of the physical ceiling: above it, the link info or the timing is wrong", rowOf(p), Show(val, unit), sh*100)})
		}
		// The reference band of its GPU kind and class.
		if o.Bands != nil && kind != matrixIncast {
			if b := o.Bands.For(gpuKind, g.class, p); b != nil {
				sh := b.Share(val)
				lvl := levelOf(sh)
				if b.Unsure() && lvl > Warn {
					lvl = Warn
				}
				s.add(Finding{Level: lvl, Row: rowOf(p), Value: val, Unit: unit, Band: b.String(unit),
					Reason: fmt.Sprintf("%s %s, %.0f %% of the reference band", rowOf(p), Show(val, unit), sh*100)})
			}
		}
	}
	// A GPU's SM clock while its copies ran against its node's other GPUs'
	// (a GPU capped by power or heat), its maximum named beside.
	nodeClocks := map[string][]float64{}
	for s, cs := range clocks {
		nodeClocks[s.Node] = append(nodeClocks[s.Node], median(cs))
	}
	for s, cs := range clocks {
		grp := nodeClocks[s.Node]
		if len(grp) < MinGroup {
			continue
		}
		c, m := median(cs), median(grp)
		sh := c / m
		most := ""
		if hz := nominal[s]; hz > 0 {
			most = fmt.Sprintf(", %.0f %% of its maximum %.0f MHz", c/hz*100, hz/1e6)
		}
		s.add(Finding{Level: levelOf(sh), Row: "SM clock", Value: c, Unit: "Hz",
			Band:   fmt.Sprintf("its node's median of %d GPUs: %.0f MHz (WARN below %.0f %%, FAIL below %.0f %%)", len(grp), m/1e6, WarnShare*100, FailShare*100),
			Reason: fmt.Sprintf("SM clock %.0f MHz while its copies ran, %.0f %% of its node's median%s (power or thermal capping?)", c/1e6, sh*100, most)})
	}
	judgeRanks(v)
	// A pair whose initiator's GPU fails its own check: said on the pair.
	for _, s := range pairs {
		if s.Level == Pass {
			continue
		}
		for _, g := range gpus {
			if g.Level == Fail && g.Node == s.Node && g.GPU == s.GPU {
				s.Findings = append(s.Findings, Finding{Level: s.Level, Reason: fmt.Sprintf("its initiator %s fails its own check (see the GPU)", g.Name)})
			}
		}
	}
	for _, w := range waived {
		v.Waived = append(v.Waived, *w)
	}
	sort.Slice(v.Waived, func(i, j int) bool {
		return v.Waived[i].Row+v.Waived[i].Reason < v.Waived[j].Row+v.Waived[j].Reason
	})
	for _, s := range pairs {
		v.Pairs = append(v.Pairs, s)
	}
	sort.Slice(v.Pairs, func(i, j int) bool {
		a, b := v.Pairs[i], v.Pairs[j]
		return a.From < b.From || a.From == b.From && a.To < b.To
	})
	for _, s := range gpus {
		v.GPUs = append(v.GPUs, s)
	}
	sort.Slice(v.GPUs, func(i, j int) bool {
		a, b := v.GPUs[i], v.GPUs[j]
		return a.Node < b.Node || a.Node == b.Node && a.GPU < b.GPU
	})
	judgeNodes(v, nodes)
	for _, ss := range [][]*Subject{v.Pairs, v.GPUs, v.Nodes, v.Ranks, {v.Job}} {
		for _, s := range ss {
			if s.Level > v.Level {
				v.Level = s.Level
			}
		}
	}
	if sliced > 0 {
		v.Notes = append(v.Notes, fmt.Sprintf("functional only: %d figure(s) held to no band: several PEs share a GPU (--pes-per-gpu), so their figures are time-sliced and measure no link or memory of their own; their status and verification are judged", sliced))
	}
	if f.Header.Synthetic {
		v.Notes = append(v.Notes, "SYNTHETIC: the fake GPU layer's invented numbers, not a measurement")
	}
	return v, nil
}

// groupKey is a group of the matrix's figures a point is held to the
// median of: a row's figures per class and node (a pair within a node: its
// node; across nodes, and incasts of a job of several nodes: the job's).
type groupKey struct{ row, class, node, kind string }

func groupOf(p *record.Point, kind string, multi bool) groupKey {
	g := groupKey{rowOf(p), Class(p), p.Pair.From.Node, kind}
	if kind == matrixIncast {
		g.class, g.node = "incast", p.Pair.To.Node
		if multi {
			g.node = ""
		}
	}
	if g.class == "network" {
		g.node = ""
	}
	return g
}

// peNumber is a PE named in a waiver's reason.
var peNumber = regexp.MustCompile(`PE \d+`)

func pairSubject(pairs map[[2]int]*Subject, p *record.Point) *Subject {
	k := [2]int{p.Pair.From.PE, p.Pair.To.PE}
	if s, ok := pairs[k]; ok {
		return s
	}
	s := &Subject{Kind: "pair", Name: p.Pair.String(), Node: p.Pair.From.Node, GPU: p.Pair.From.GPU, From: k[0], To: k[1], ToNode: p.Pair.To.Node}
	pairs[k] = s
	return s
}

// judgeJob: a point outside the matrix (a collective, a floor): its
// straggler is kept for the ranks' verdict; a bandwidth above its ceiling
// is said.
func judgeJob(v *Verdict, p *record.Point) {
	v.Job.Checked++
	if len(p.PETimes) > 1 { // a floor, timed by one PE, names no straggler
		v.everyPE++
	}
	if st := p.Straggler; st != nil {
		r := rankSubject(v, st)
		r.Checked++
		r.Findings = append(r.Findings, Finding{Level: Warn, Row: p.ID + " " + units.Bytes(p.Params.Size),
			Reason: stragglerReason(st)})
	}
}

func stragglerReason(st *record.Straggler) string {
	if st.Late() {
		return fmt.Sprintf("the straggler: the other PEs waited for it (its time %.2f × theirs)", st.Ratio)
	}
	return fmt.Sprintf("the straggler: slower than the other PEs (%.2f × their time)", st.Ratio)
}

func rankSubject(v *Verdict, st *record.Straggler) *Subject {
	for _, r := range v.Ranks {
		if r.From == st.PE {
			return r
		}
	}
	r := &Subject{Kind: "rank", Name: fmt.Sprintf("PE %d (GPU %d, %s)", st.PE, st.GPU, st.Node), Node: st.Node, GPU: st.GPU, From: st.PE, To: st.PE}
	v.Ranks = append(v.Ranks, r)
	sort.Slice(v.Ranks, func(i, j int) bool { return v.Ranks[i].From < v.Ranks[j].From })
	return r
}

// judgeRanks: a PE that is the straggler of at least half the points
// every PE timed fails (a rank that holds the job back), of fewer warns.
func judgeRanks(v *Verdict) {
	every := v.everyPE
	for _, r := range v.Ranks {
		n := len(r.Findings)
		r.Level = Warn
		if 2*n >= every && n > 0 {
			r.Level = Fail
		}
		for i := range r.Findings {
			r.Findings[i].Level = r.Level
		}
		r.Findings = append([]Finding{{Level: r.Level, Band: "no PE apart from the others (record.StragglerShare)",
			Reason: fmt.Sprintf("the straggler of %d of the job's %d points every PE timed", n, every)}}, r.Findings...)
	}
}

// judgeNodes: a node is as bad as the worst of its GPUs and of the pairs
// within it; the pairs across nodes are held against each node (a node
// whose every pair to the others is slow, while the others' pairs among
// themselves are not, is the one named), and of several nodes the slowest
// is named.
func judgeNodes(v *Verdict, nodes map[string]*Subject) {
	bad := map[string]int{}
	all := map[string]int{}
	for _, s := range v.GPUs {
		n := nodes[s.Node]
		n.Checked++
		if s.Level > Pass {
			n.add(Finding{Level: s.Level, Reason: fmt.Sprintf("%s: %s", s.Name, s.Level)})
		}
	}
	var across []*Subject
	for _, s := range v.Pairs {
		from, to := endsOf(s)
		if from == to {
			n := nodes[from]
			n.Checked++
			if s.Level > Pass {
				n.add(Finding{Level: s.Level, Reason: fmt.Sprintf("pair %s: %s", s.Name, s.Level)})
			}
			continue
		}
		across = append(across, s)
		for _, n := range []string{from, to} {
			all[n]++
			if s.Level == Fail {
				bad[n]++
			}
		}
	}
	names := make([]string, 0, len(nodes))
	for n := range nodes {
		names = append(names, n)
	}
	sort.Strings(names)
	if len(across) > 0 {
		// Of the failing pairs across nodes, the node on every one of them.
		worst, tie := "", false
		for _, n := range names {
			if all[n] == 0 {
				continue
			}
			switch {
			case worst == "" || float64(bad[n])/float64(all[n]) > float64(bad[worst])/float64(all[worst]):
				worst, tie = n, false
			case bad[n]*all[worst] == bad[worst]*all[n]:
				tie = true
			}
		}
		switch {
		case worst == "" || bad[worst] == 0:
		case tie && len(names) == 2:
			v.Notes = append(v.Notes, fmt.Sprintf("every failing pair across nodes joins %s and %s: with two nodes each such pair crosses both nodes' NICs, so which node is slow cannot be told from them (a third node, or a reference band for the network, tells)", names[0], names[1]))
			for _, n := range names {
				nodes[n].add(Finding{Level: Fail, Reason: fmt.Sprintf("%d of its %d pairs to the other node fail", bad[n], all[n])})
			}
		case !tie:
			nodes[worst].add(Finding{Level: Fail, Band: "pairs across nodes: as the other nodes' among themselves",
				Reason: fmt.Sprintf("%d of its %d pairs to other nodes fail, more than any other node's (its network: NICs, cables, switch)", bad[worst], all[worst])})
			for _, n := range names {
				if n != worst && bad[n] > 0 && bad[n] == countWith(across, n, worst) {
					nodes[n].Notes(fmt.Sprintf("its failing pairs across nodes all reach %s", worst))
				}
			}
		}
	}
	for _, n := range names {
		v.Nodes = append(v.Nodes, nodes[n])
	}
	if len(names) > 1 {
		slowest := ""
		for _, n := range names {
			s := nodes[n]
			if slowest == "" || s.Level > nodes[slowest].Level || s.Level == nodes[slowest].Level && len(s.Findings) > len(nodes[slowest].Findings) {
				slowest = n
			}
		}
		if nodes[slowest].Level > Pass {
			v.SlowestNode = slowest
		}
	}
}

// Notes adds a PASS-level remark to a subject (no change of level).
func (s *Subject) Notes(text string) {
	s.Findings = append(s.Findings, Finding{Level: Pass, Reason: text})
}

func countWith(across []*Subject, a, b string) int {
	n := 0
	for _, s := range across {
		from, to := endsOf(s)
		if s.Level == Fail && (from == a && to == b || from == b && to == a) {
			n++
		}
	}
	return n
}

// endsOf are a pair subject's two nodes (from its name's ends).
func endsOf(s *Subject) (string, string) { return s.Node, s.ToNode }

// missingNodes says why a file cannot be judged per node: the job was
// started on more nodes than its PEs ran on ("" if not).
func missingNodes(f *record.File) string {
	hosts := map[string]bool{}
	for _, g := range f.Header.GPUs {
		hosts[g.Host] = true
	}
	for i := range f.Points {
		if p := f.Points[i].Pair; p != nil {
			hosts[p.From.Node], hosts[p.To.Node] = true, true
		}
	}
	delete(hosts, "")
	if n := f.Header.Nodes; n > 1 && len(hosts) > 0 && len(hosts) < n {
		return fmt.Sprintf("the job was started on %d nodes, but its PEs ran on %d: a node is missing from the job, so no pair across it was measured; start tasks on every node (srun --ntasks-per-node, mpirun --map-by ppr:N:node) and run check again", n, len(hosts))
	}
	return ""
}
