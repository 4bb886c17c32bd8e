package model

import (
	"fmt"
	"math"
	"path"
	"sort"
	"strconv"
	"strings"

	"github.com/nvshbench/nvshbench/cuda/shim"
	"github.com/nvshbench/nvshbench/internal/decide"
	"github.com/nvshbench/nvshbench/internal/ids"
	"github.com/nvshbench/nvshbench/record/moe"
)

// A pattern is one thing a user does, with several implementations to
// choose from: the benchmark IDs that implement it and the name of each.
type pattern struct {
	name string
	// impl names a series' implementation ("" if the series is not one).
	impl func(id string) string
	// scoped: the implementations come in scopes (the ID's last element),
	// each compared with its like.
	scoped bool
	// shape, where set, splits the key for this pattern: the key without
	// the launch shape (base) and the series' own shape (nil: a series
	// whose launch is the library's own, which joins every group of its
	// base). Implementations that launch differently are compared at the
	// same sizes, the key saying what differs.
	shape func(s *Series) (base key, shape *part)
}

func exact(names map[string]string) func(string) string {
	return func(id string) string { return names[id] }
}

// under names a series by what follows prefix, a folder, in its ID.
func under(prefix string) func(string) string { return ids.Under(prefix).Rest }

// scopes are the one-sided implementations' scopes, in the guide's order.
var scopes = []string{"block", "warp", "thread"}

// patterns are the choices the guide answers, in order.
var patterns = func() []pattern {
	var ps []pattern
	for _, op := range []string{"put", "get"} {
		names := map[string]string{}
		for _, scope := range scopes {
			names["rma/"+op+"/"+scope] = "NVSHMEM"
			names["rma/nccl-lsa/"+op+"/"+scope] = "NCCL device API (LSA)"
			names["latency/"+op+"/"+scope] = "NVSHMEM"
			names["latency/nccl-lsa/"+op+"/"+scope] = "NCCL device API (LSA)"
		}
		ps = append(ps, pattern{name: "one-sided " + op, impl: exact(names), scoped: true})
	}
	for _, c := range shim.Collectives() { // the shim's, in its order; a barrier moves nothing to choose by
		if c.Has(shim.TraitPayload) {
			ps = append(ps, pattern{name: c.Base, impl: under("collectives/" + c.Base + "/")})
		}
	}
	for _, op := range moe.Ops {
		ps = append(ps, pattern{name: "MoE " + op, impl: under(moe.Suite + "/" + op + "/")})
	}
	// A transfer to another GPU, device-initiated or host-driven: NVSHMEM's
	// device put against NCCL's send/recv and the copy engine, one-way
	// bandwidth at the same sizes. Their launches differ by nature (the put
	// its CTAs × threads, NCCL its own kernel, the copy engine none), so
	// the put's shape names the group and the others join each one.
	ps = append(ps, pattern{name: "a transfer to another GPU, device-initiated or host-driven", impl: exact(map[string]string{
		"rma/put/block":        "NVSHMEM device put (block)",
		"rma/nccl/send":        "NCCL send/recv",
		"rma/host/memcpy":      "cudaMemcpyAsync",
		"rma/host/memcpy-peer": "cudaMemcpyPeerAsync",
	}), shape: transferShape})
	return ps
}()

// transferShape: the transfer pattern's key without a launch shape, and
// the device put's shape (the others: their own).
func transferShape(s *Series) (base key, shape *part) {
	p := s.point.Params
	base = key{word(s.File), kv("pes", strconv.Itoa(s.PEs), false), kv("path", p.Path, false), word("bandwidth")}
	if p.Dir != "" {
		base = append(base, kv("dir", p.Dir, true))
	}
	if s.ID == "rma/put/block" {
		shape = &part{text: fmt.Sprintf("device put %dx%d", p.CTAs, p.Threads), name: "device put", value: fmt.Sprintf("%dx%d", p.CTAs, p.Threads)}
	}
	return base, shape
}

// ownLaunch and differ say what the key of a group whose members launch
// differently does not.
const (
	ownLaunch = "NCCL's kernel and the copy engine launch as they do (launch shapes differ)"
	differ    = "launch shapes differ"
)

// A part is one field of a like-for-like key, as the key says it
// ("pes=2", "bandwidth", "32x256"). A row part (named: the launch mode
// and shape, the scope, the direction, MoE's configuration) may differ
// between the comparisons one table of the guide shows, a row each, under
// a column of its name; the others (the file, PEs, dtype, path, graph,
// what is measured) make the table.
type part struct {
	text        string
	name, value string // a row part's column and cell ("scope", "block"); "" for a table part
}

func word(text string) part { return part{text: text} }

// kv is a part written name=value, a row part where row is set.
func kv(name, value string, row bool) part {
	p := part{text: name + "=" + value}
	if row {
		p.name, p.value = name, value
	}
	return p
}

// key is a like-for-like key, field by field.
type key []part

func (k key) String() string {
	var s []string
	for _, p := range k {
		s = append(s, p.text)
	}
	return strings.Join(s, " ")
}

// tableParts is the key without its row parts: what one table shares.
func (k key) tableParts() key {
	var out key
	for _, p := range k {
		if p.name == "" {
			out = append(out, p)
		}
	}
	return out
}

// group is the like-for-like key of a series within a pattern: the same
// file, PE count, launch mode, dtype, graph setting and scope (where one
// is given), for bandwidth the same launch shape and direction; round
// trips and bandwidth apart.
func group(s *Series, scope string) key {
	p := s.point.Params
	k := key{word(s.File), kv("pes", strconv.Itoa(s.PEs), false)}
	if s.Launch != "" {
		k = append(k, kv("launch", s.Launch, true))
	}
	for _, f := range [][2]string{{"dtype", p.DType}, {"path", p.Path}} {
		if f[1] != "" {
			k = append(k, kv(f[0], f[1], false))
		}
	}
	if p.Mode == "graph" {
		k = append(k, word("graph"))
	}
	scoped := func() {
		if scope != "" {
			k = append(k, kv("scope", scope, true))
		}
	}
	switch {
	case strings.HasPrefix(s.ID, "rma/"):
		k = append(k, word("bandwidth"))
		scoped()
		shape := fmt.Sprintf("%dx%d", p.CTAs, p.Threads)
		k = append(k, part{text: shape, name: "launch", value: shape})
		if p.Dir != "" {
			k = append(k, kv("dir", p.Dir, true))
		}
	case strings.HasPrefix(s.ID, "latency/"):
		k = append(k, word("round trip"))
		scoped()
		if t := p.Extra["timer"]; t != "" { // an older file's second timer
			k = append(k, kv("timer", t, true))
		}
	case strings.HasPrefix(s.ID, moe.Suite+"/"):
		for _, e := range []string{moe.ExtraMode, moe.ExtraRouting, moe.ExtraTopK, moe.ExtraExperts, moe.ExtraHidden} {
			k = append(k, kv(e, p.Extra[e], true))
		}
	}
	return k
}

// keyOf is a series' like-for-like key within a pattern.
func keyOf(pat pattern, s *Series) key {
	scope := ""
	if pat.scoped {
		scope = path.Base(s.ID)
	}
	return group(s, scope)
}

// usable: a series the guide may compare (an NVSHMEM blocking transfer is
// not the nbi one NCCL's stores match; an older file's second-timer rows
// never get here).
func usable(s *Series) bool {
	return s.point.Params.Mode != "blocking"
}

// Row is one size of a pattern's comparison: the rule's verdict among the
// operations measured there, each named by the implementations that ran it
// ("nccl = nccl-ring": the same operation here).
type Row struct {
	Size   int64
	Tokens int // MoE: tokens per rank
	decide.Verdict
	// WinnerOp and TiedOps are the operations behind the verdict's names
	// (decide.Operation): what tells one range or crossover from the next.
	WinnerOp string
	TiedOps  []string
	Time     float64 // the fastest's median, seconds (NaN: not judged)
	// Cached: some implementation's working set may be cache-served here
	// (the size is then not judged).
	Cached bool
}

// Crossover is where the winner changes between two judged sizes (a tie
// between them is skipped over; a size not judged never gives one),
// solved from the two fits where both cover the sizes between, else the
// interval.
type Crossover struct {
	From, To string  // implementations: From is faster below
	Size     float64 // on Axis: bytes, or tokens per rank for MoE (0: not solved, see Lo..Hi)
	Axis     Axis
	Lo, Hi   int64 // the measured sizes it lies between
	FromFits bool
	Why      string // why the fits did not give it
}

// Comparison is one pattern on one like-for-like group.
type Comparison struct {
	Pattern   string
	Group     string
	Impls     []string // the operations compared, by the names that ran each
	Same      []string // which names ran the same operation here, and why
	Left      []string // which names were left out, and why (NCCL's one-rank copy: no collective)
	Rows      []Row
	Crossings []Crossover
	// Family is the number of sizes judged (decide.Family): each interval
	// is made at 1 − Alpha/Family (Bonferroni).
	Family int
	// key is Group field by field, note what Group says beside it (launch
	// shapes that differ by nature), file the file's position and shape
	// the launch (CTAs, threads) of its bandwidth series (zero: none): the
	// guide's tables gather a pattern's comparisons by them.
	key   key
	note  string
	file  int
	shape [2]int
}

// Guide compares the implementations of every pattern, like with like.
type Guide struct {
	Rule        decide.Rule
	Comparisons []Comparison
	// NotCompared says which groups were left out and why (a launch mode
	// unknown, one operation under several names).
	NotCompared []string
}

// groupKey is a like-for-like group of one pattern: never across files
// (by the file's position, not only its label, which two files may share);
// base is group's key, or for a pattern with a shape the key without the
// launch shape, and shape the series' own ("": the group of a base whose
// series all launch as they do).
type groupKey struct {
	file        int
	base, shape string
}

// less orders groups by file position (numerically: file 2 before file
// 10), then by base and shape.
func (k groupKey) less(o groupKey) bool {
	if k.file != o.file {
		return k.file < o.file
	}
	if k.base != o.base {
		return k.base < o.base
	}
	return k.shape < o.shape
}

// BuildGuide builds the guide from the fitted series under the rule.
func BuildGuide(fits []*Fit, rule decide.Rule) Guide {
	g := Guide{Rule: rule.OrDefault()}
	for _, pat := range patterns {
		groups := map[groupKey][]*Fit{}
		keys := map[groupKey]key{}
		notes := map[groupKey]string{}
		var order []groupKey
		joins := map[groupKey][]*Fit{} // base (shape "") → the series of their own launch
		for _, f := range fits {
			if pat.impl(f.ID) == "" || !usable(f.Series) {
				continue
			}
			kk := keyOf(pat, f.Series)
			k := groupKey{file: f.file, base: kk.String()}
			if pat.shape != nil {
				base, shape := pat.shape(f.Series)
				if shape == nil {
					b := groupKey{file: f.file, base: base.String()}
					joins[b] = append(joins[b], f)
					keys[b] = base
					continue
				}
				k = groupKey{file: f.file, base: base.String(), shape: shape.text}
				kk, notes[k] = append(base, *shape), ownLaunch
			}
			if _, ok := groups[k]; !ok {
				order = append(order, k)
				keys[k] = kk
			}
			groups[k] = append(groups[k], f)
		}
		if pat.shape != nil {
			// Each series of its own launch joins every group of its base;
			// where none has a shaped series, they make one of their own.
			for b, fs := range joins {
				joined := false
				for _, k := range order {
					if k.file == b.file && k.base == b.base && k.shape != "" {
						groups[k] = append(groups[k], fs...)
						joined = true
					}
				}
				if !joined {
					order = append(order, b)
					groups[b], notes[b] = fs, differ
				}
			}
			sort.Slice(order, func(i, j int) bool { return order[i].less(order[j]) })
		}
		for _, k := range order {
			name := keys[k].String()
			switch notes[k] {
			case ownLaunch:
				name += "; " + ownLaunch
			case differ:
				name += " (" + differ + ")"
			}
			impls := map[string]bool{}
			for _, f := range groups[k] {
				impls[pat.impl(f.ID)] = true
			}
			if len(impls) < 2 {
				continue // nothing to choose between
			}
			fs, left := collectivesOnly(pat, groups[k])
			if len(left) > 0 && !twoImpls(pat, fs) {
				g.NotCompared = append(g.NotCompared, fmt.Sprintf("%s (%s): %s; nothing else to choose between", pat.name, name, strings.Join(left, "; ")))
				continue
			}
			if fs[0].Launch == "unknown" {
				g.NotCompared = append(g.NotCompared, fmt.Sprintf("%s (%s): an older file that did not record launch modes; its host-launched and fused implementations are not compared", pat.name, name))
				continue
			}
			c := compare(pat, name, fs, g.Rule)
			c.Left = left
			if len(c.Rows) == 0 {
				why := "no size that two implementations both measured"
				if len(c.Same) > 0 {
					why = strings.Join(c.Same, "; ") + ": nothing else to choose between"
				}
				g.NotCompared = append(g.NotCompared, fmt.Sprintf("%s (%s): %s", pat.name, name, why))
				continue
			}
			c.key, c.note, c.file = keys[k], notes[k], k.file
			for _, f := range fs {
				if p := f.point.Params; strings.HasPrefix(f.ID, "rma/") && p.CTAs > 0 {
					c.shape = [2]int{p.CTAs, p.Threads}
					break
				}
			}
			g.Comparisons = append(g.Comparisons, c)
		}
	}
	return g
}

// collectivesOnly leaves out of a group the series that are NCCL's
// one-rank copy, not the collective the others run (Series.OneRank), and
// says which and why.
func collectivesOnly(pat pattern, fs []*Fit) ([]*Fit, []string) {
	var kept []*Fit
	names, whys := map[string]bool{}, map[string]bool{}
	var why []string
	for _, f := range fs {
		if f.OneRank == "" {
			kept = append(kept, f)
			continue
		}
		names[pat.impl(f.ID)] = true
		if !whys[f.OneRank] {
			whys[f.OneRank] = true
			why = append(why, f.OneRank)
		}
	}
	if len(names) == 0 {
		return fs, nil
	}
	return kept, []string{joinNames(names) + ": left out: " + strings.Join(why, "; ")}
}

// twoImpls reports whether the series are of two implementations or more.
func twoImpls(pat pattern, fs []*Fit) bool {
	for _, f := range fs {
		if pat.impl(f.ID) != pat.impl(fs[0].ID) {
			return true
		}
	}
	return false
}

// impl is one implementation of a comparison: its series (MoE has one per
// token count) and their sizes.
type impl struct {
	name    string
	fits    []*Fit
	obs     map[int64]Obs
	fit     map[int64]*Fit
	doubted map[int64]string // sizes measured but no figure (Series.Doubted)
}

// at is one operation at one size: the implementations that ran it.
type at struct {
	op       string
	names    []string
	why      string
	samp     []float64
	cache    bool
	unjudged string // why no verdict may rest on a point of it
	tok      int
}

// name is the operation as the guide shows it: its implementations.
func (a *at) name() string { return strings.Join(a.names, " = ") }

// compare decides the implementations of one group at every size.
func compare(pat pattern, key string, fs []*Fit, rule decide.Rule) Comparison {
	c := Comparison{Pattern: pat.name, Group: key}
	byName := map[string]*impl{}
	var names []string
	for _, f := range fs {
		n := pat.impl(f.ID)
		im := byName[n]
		if im == nil {
			im = &impl{name: n, obs: map[int64]Obs{}, fit: map[int64]*Fit{}, doubted: map[int64]string{}}
			byName[n] = im
			names = append(names, n)
		}
		im.fits = append(im.fits, f)
		for _, o := range f.Obs {
			if _, dup := im.obs[o.Size]; !dup {
				im.obs[o.Size], im.fit[o.Size] = o, f
			}
		}
		for size, why := range f.Doubted {
			im.doubted[size] = why
		}
	}
	sort.Strings(names)
	sizes := map[int64]bool{}
	for _, im := range byName {
		for s := range im.obs {
			sizes[s] = true
		}
		for s := range im.doubted {
			sizes[s] = true
		}
	}
	var ss []int64
	for s := range sizes {
		ss = append(ss, s)
	}
	sort.Slice(ss, func(i, j int) bool { return ss[i] < ss[j] })

	// Each size's operations: the implementations that ran the same code
	// pooled into one.
	perSize := map[int64][]*at{}
	opNames := map[string]map[string]bool{}
	whys := map[string]string{}
	var opOrder []string
	for _, size := range ss {
		var ops []*at
		idx := map[string]*at{}
		for _, n := range names {
			im := byName[n]
			o, ok := im.obs[size]
			if why := im.doubted[size]; !ok && why != "" {
				// Measured, but no figure: the size is not judged.
				ops = append(ops, &at{op: n, names: []string{n}, unjudged: why})
				continue
			}
			if !ok {
				continue
			}
			f := im.fit[size]
			op, why := decide.Operation(f.ID, f.Path, f.OneRank, f.PEs, size)
			a := idx[op]
			if a == nil {
				a = &at{op: op, why: why, tok: o.Tokens}
				idx[op] = a
				ops = append(ops, a)
			}
			a.names = append(a.names, n)
			a.samp = append(a.samp, o.Samples...)
			a.cache = a.cache || f.Cached[size]
			if a.unjudged == "" {
				a.unjudged = o.Unjudged
			}
			if opNames[op] == nil {
				opNames[op] = map[string]bool{}
				opOrder = append(opOrder, op)
			}
			opNames[op][n] = true
			if why != "" {
				whys[op] = why
			}
		}
		if len(ops) >= 2 {
			perSize[size] = ops
		}
	}
	for _, op := range opOrder {
		c.Impls = append(c.Impls, joinNames(opNames[op]))
		if len(opNames[op]) > 1 {
			c.Same = append(c.Same, joinNames(opNames[op])+": the same operation here: "+whys[op])
		}
	}
	// Each size's entries: one per operation, by the name it is shown by.
	var sized []int64
	var entries [][]decide.Entry
	for _, size := range ss {
		ops := perSize[size]
		if ops == nil {
			continue
		}
		var es []decide.Entry
		for _, a := range ops {
			es = append(es, decide.Entry{Name: a.name(), Samples: a.samp, Unjudged: a.unjudged})
		}
		sized, entries = append(sized, size), append(entries, es)
	}
	c.Family = decide.Family(entries)
	for i, size := range sized {
		ops := perSize[size]
		v := rule.Decide(entries[i], c.Family)
		byShown := map[string]*at{}
		r := Row{Size: size, Verdict: v, Time: math.NaN()}
		for _, a := range ops {
			byShown[a.name()] = a
			r.Cached = r.Cached || a.cache
			r.Tokens = max(r.Tokens, a.tok) // a size measured but doubted has none
		}
		if a := byShown[v.Fastest]; a != nil {
			r.Time = medianOf(a.samp)
		}
		if a := byShown[v.Winner]; a != nil {
			r.WinnerOp = a.op
		} else {
			for _, n := range v.Tied {
				r.TiedOps = append(r.TiedOps, byShown[n].op)
			}
		}
		c.Rows = append(c.Rows, r)
	}
	c.Crossings = crossings(c.Rows, byName)
	return c
}

func joinNames(set map[string]bool) string {
	var ns []string
	for n := range set {
		ns = append(ns, n)
	}
	sort.Strings(ns)
	return strings.Join(ns, " = ")
}

func medianOf(xs []float64) float64 {
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	if len(s) == 0 {
		return math.NaN()
	}
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// crossings are where the winner changes between judged sizes: a size
// not judged (cache-served, a point marked for a second look) names no
// winner, and never starts or ends one.
func crossings(rows []Row, byName map[string]*impl) []Crossover {
	var out []Crossover
	var prev *Row
	for i := range rows {
		r := &rows[i]
		if r.Tie() {
			continue
		}
		if prev != nil && prev.WinnerOp != r.WinnerOp {
			x := Crossover{From: prev.Winner, To: r.Winner, Lo: prev.Size, Hi: r.Size}
			fa, fb := spanning(prev.Winner, byName, prev.Size, r.Size), spanning(r.Winner, byName, prev.Size, r.Size)
			if fa != nil {
				// Solved on the fits' axis: bytes, or tokens per rank for MoE.
				x.Axis = fa.Axis
			}
			if fa == nil || fb == nil {
				x.Why = "no fit of both to solve it"
			} else if s, ok := solve(fa, fb, fa.Coord(prev.Size, prev.Tokens), fa.Coord(r.Size, r.Tokens)); ok {
				x.Size, x.FromFits = s, true
			} else {
				x.Why = "the fits do not cross there"
			}
			out = append(out, x)
		}
		prev = r
	}
	return out
}

// spanning is a fit of one of the implementations named (a = b) that
// measured both sizes and has a fit.
func spanning(names string, byName map[string]*impl, lo, hi int64) *Fit {
	for _, n := range strings.Split(names, " = ") {
		im := byName[n]
		if im == nil {
			continue
		}
		for _, f := range im.fits {
			if f.NoFit != "" || len(f.Segments) == 0 {
				continue
			}
			var a, b bool
			for _, o := range f.Obs {
				a, b = a || o.Size == lo, b || o.Size == hi
			}
			if a && b {
				return f
			}
		}
	}
	return nil
}

// solve finds S in [lo, hi] where the two fits give the same time.
func solve(a, b *Fit, lo, hi float64) (float64, bool) {
	if a == nil || b == nil || a.NoFit != "" || b.NoFit != "" {
		return 0, false
	}
	diff := func(s float64) float64 { return a.At(s) - b.At(s) }
	dl, dh := diff(lo), diff(hi)
	if math.IsNaN(dl) || math.IsNaN(dh) || dl*dh > 0 {
		return 0, false
	}
	// Bisection in log size: the fits are piecewise linear.
	l, h := math.Log(lo), math.Log(hi)
	for i := 0; i < 60; i++ {
		m := (l + h) / 2
		if diff(math.Exp(m))*dl > 0 {
			l = m
		} else {
			h = m
		}
	}
	return math.Exp((l + h) / 2), true
}

// Range is a run of sizes with one verdict on one side of the cache
// ("4 B – 64 KiB: NCCL by 12–40 %", "8 B – 64 MiB: not judged:
// cache-served"); a range never holds both cache-served and memory-served
// sizes.
type Range struct {
	From, To         int64
	Label            string // the verdict in words (decide.Verdict.Label)
	Winner           string // "" for a tie
	Cached           bool
	MinLead, MaxLead float64
	// Lo, Hi: the widest ends of the rows' intervals of the runner-up's
	// ratio (NaN where a row had too few samples).
	Lo, Hi float64
	Rows   int
}

// Ranges of the comparison.
func (c *Comparison) Ranges() []Range {
	type acc struct {
		Range
		id        string
		names     map[string]map[string]bool // op → names
		tied      []string
		within    float64
		few       string
		some      bool   // a row where not every operation tied
		notJudged string // the rows' reason where they were not judged
	}
	var out []*acc
	for _, r := range c.Rows {
		id := r.WinnerOp
		switch {
		case r.NotJudged != "":
			id = "not judged\x00" + r.NotJudged
		case r.Tie():
			ops := append([]string(nil), r.TiedOps...)
			sort.Strings(ops) // who is a hair ahead inside a tie does not split it
			id = "tie\x00" + strings.Join(ops, "\x00") + fmt.Sprint("\x00", r.Few != "")
		}
		id += fmt.Sprint("\x00", r.Cached)
		n := len(out)
		if n == 0 || out[n-1].id != id {
			out = append(out, &acc{Range: Range{From: r.Size, MinLead: r.Lead, MaxLead: r.Lead, Lo: r.Lo, Hi: r.Hi, Cached: r.Cached},
				id: id, names: map[string]map[string]bool{}, within: r.Within})
			n++
		}
		g := out[n-1]
		g.To = r.Size
		g.Rows++
		g.MinLead, g.MaxLead = math.Min(g.MinLead, r.Lead), math.Max(g.MaxLead, r.Lead)
		g.Lo, g.Hi = minNaN(g.Lo, r.Lo), maxNaN(g.Hi, r.Hi)
		g.within = maxNaN(g.within, r.Within)
		if r.Few != "" {
			g.few = r.Few
		}
		g.notJudged = r.NotJudged
		g.some = g.some || len(r.Tied) < r.All
		ops := r.TiedOps
		names := r.Tied
		if !r.Tie() {
			ops, names = []string{r.WinnerOp}, []string{r.Winner}
		}
		for i, op := range ops {
			if g.names[op] == nil {
				g.names[op] = map[string]bool{}
				g.tied = append(g.tied, op)
			}
			for _, nm := range strings.Split(names[i], " = ") {
				g.names[op][nm] = true
			}
		}
	}
	var rs []Range
	for _, g := range out {
		v := decide.Verdict{Within: g.within, Few: g.few, NotJudged: g.notJudged, All: len(g.tied)}
		for _, op := range g.tied {
			v.Tied = append(v.Tied, joinNames(g.names[op]))
		}
		switch {
		case g.notJudged != "":
		case !strings.HasPrefix(g.id, "tie\x00"):
			v.Winner = v.Tied[0]
			g.Winner = v.Winner
		case g.some:
			v.All++ // some operation was clearly slower: name the tied
		}
		g.Label = v.Label()
		rs = append(rs, g.Range)
	}
	return rs
}

func minNaN(a, b float64) float64 {
	if math.IsNaN(a) || math.IsNaN(b) {
		return math.NaN()
	}
	return math.Min(a, b)
}

func maxNaN(a, b float64) float64 {
	if math.IsNaN(a) || math.IsNaN(b) {
		return math.NaN()
	}
	return math.Max(a, b)
}
