package model

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"golang.org/x/perf/benchmath"
)

// A pattern is one thing a user does, with several implementations to
// choose from: the benchmark IDs that implement it and the name of each.
type pattern struct {
	name string
	// impl names a series' implementation ("" if the series is not one).
	impl func(id string) string
}

func exact(names map[string]string) func(string) string {
	return func(id string) string { return names[id] }
}

func under(prefix string) func(string) string {
	return func(id string) string {
		if strings.HasPrefix(id, prefix) {
			return strings.TrimPrefix(id, prefix)
		}
		return ""
	}
}

// patterns are the choices the guide answers, in order.
var patterns = func() []pattern {
	var ps []pattern
	for _, op := range []string{"put", "get"} {
		for _, scope := range []string{"block", "warp", "thread"} {
			ps = append(ps, pattern{name: fmt.Sprintf("one-sided %s, %s scope", op, scope), impl: exact(map[string]string{
				"rma/" + op + "/" + scope:              "NVSHMEM",
				"rma/nccl-lsa/" + op + "/" + scope:     "NCCL device API (LSA)",
				"latency/" + op + "/" + scope:          "NVSHMEM",
				"latency/nccl-lsa/" + op + "/" + scope: "NCCL device API (LSA)",
			})})
		}
	}
	for _, c := range []string{"allreduce", "allgather", "alltoall", "broadcast"} {
		ps = append(ps, pattern{name: c, impl: under("collectives/" + c + "/")})
	}
	for _, op := range []string{"dispatch", "combine"} {
		ps = append(ps, pattern{name: "MoE " + op, impl: under("moe/" + op + "/")})
	}
	return ps
}()

// group is the like-for-like key of a series within a pattern: the same
// file, PE count, launch mode, dtype, graph setting, and for transfers the
// same launch shape; round trips and bandwidth apart.
func group(s *Series) string {
	p := s.point.Params
	parts := []string{s.File, "pes=" + strconv.Itoa(s.PEs)}
	for _, kv := range [][2]string{{"launch", s.Launch}, {"dtype", p.DType}, {"path", p.Path}} {
		if kv[1] != "" {
			parts = append(parts, kv[0]+"="+kv[1])
		}
	}
	if p.Mode == "graph" {
		parts = append(parts, "graph")
	}
	switch {
	case strings.HasPrefix(s.ID, "rma/"):
		parts = append(parts, "bandwidth", fmt.Sprintf("%dx%d", p.CTAs, p.Threads), "dir="+p.Dir)
	case strings.HasPrefix(s.ID, "latency/"):
		parts = append(parts, "round trip", "timer="+p.Extra["timer"])
	case strings.HasPrefix(s.ID, "moe/"):
		for _, k := range []string{"moe_mode", "routing", "topk", "experts", "hidden"} {
			parts = append(parts, k+"="+p.Extra[k])
		}
	}
	return strings.Join(parts, " ")
}

// usable: a series the guide may compare (an NVSHMEM blocking transfer is
// not the nbi one NCCL's stores match; an older file's second-timer rows
// never get here).
func usable(s *Series) bool {
	return s.point.Params.Mode != "blocking"
}

// Row is one size of a pattern's comparison.
type Row struct {
	Size     int64
	Tokens   int // MoE: tokens per rank
	Winner   string
	Time     float64 // the winner's median, seconds
	Second   string
	Margin   float64 // the runner-up's time over the winner's, minus one
	P        float64 // Mann–Whitney U between the two (NaN: too few samples)
	Cached   bool    // the winner's size was cache-served
	Compared int     // implementations measured at this size
}

// Significant: the winner's lead is beyond chance at alpha 0.05.
func (r Row) Significant() bool { return !math.IsNaN(r.P) && r.P < 0.05 }

// Crossover is where the fastest implementation changes, solved from the
// two fits where both cover the sizes between, else the interval.
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
	Impls     []string
	Rows      []Row
	Crossings []Crossover
}

// Guide compares the implementations of every pattern, like with like.
type Guide struct {
	Comparisons []Comparison
	// NotCompared says which groups were left out and why (one
	// implementation only, a launch mode unknown).
	NotCompared []string
}

// BuildGuide builds the guide from the fitted series.
func BuildGuide(fits []*Fit) Guide {
	var g Guide
	for _, pat := range patterns {
		groups := map[string][]*Fit{}
		var order []string
		for _, f := range fits {
			if pat.impl(f.ID) == "" || !usable(f.Series) {
				continue
			}
			k := group(f.Series)
			if _, ok := groups[k]; !ok {
				order = append(order, k)
			}
			groups[k] = append(groups[k], f)
		}
		for _, k := range order {
			fs := groups[k]
			impls := map[string]bool{}
			for _, f := range fs {
				impls[pat.impl(f.ID)] = true
			}
			if len(impls) < 2 {
				continue // nothing to choose between
			}
			if fs[0].Launch == "unknown" {
				g.NotCompared = append(g.NotCompared, fmt.Sprintf("%s (%s): an older file that did not record launch modes; its host-launched and fused implementations are not compared", pat.name, k))
				continue
			}
			g.Comparisons = append(g.Comparisons, compare(pat, k, fs))
		}
	}
	return g
}

// compare ranks the implementations of one group at every size they share.
func compare(pat pattern, key string, fs []*Fit) Comparison {
	c := Comparison{Pattern: pat.name, Group: key}
	type cand struct {
		name string
		fit  *Fit
		obs  map[int64]Obs
	}
	var cands []cand
	for _, f := range fs {
		name := pat.impl(f.ID)
		m := map[int64]Obs{}
		for _, o := range f.Obs {
			m[o.Size] = o
		}
		cands = append(cands, cand{name, f, m})
	}
	sort.Slice(cands, func(i, j int) bool { return cands[i].name < cands[j].name })
	for _, cd := range cands {
		c.Impls = append(c.Impls, cd.name)
	}
	sizes := map[int64]bool{}
	for _, cd := range cands {
		for s := range cd.obs {
			sizes[s] = true
		}
	}
	var ss []int64
	for s := range sizes {
		ss = append(ss, s)
	}
	sort.Slice(ss, func(i, j int) bool { return ss[i] < ss[j] })
	thr := benchmath.DefaultThresholds
	for _, size := range ss {
		type at struct {
			cand
			o Obs
		}
		var here []at
		for _, cd := range cands {
			if o, ok := cd.obs[size]; ok {
				here = append(here, at{cd, o})
			}
		}
		if len(here) < 2 {
			continue
		}
		sort.Slice(here, func(i, j int) bool { return here[i].o.Time < here[j].o.Time })
		r := Row{Size: size, Winner: here[0].name, Time: here[0].o.Time, Second: here[1].name,
			Margin: here[1].o.Time/here[0].o.Time - 1, P: math.NaN(), Cached: here[0].fit.Cached[size], Compared: len(here)}
		r.Tokens = here[0].o.Tokens
		a, b := benchmath.NewSample(here[0].o.Samples, &thr), benchmath.NewSample(here[1].o.Samples, &thr)
		if cmp := benchmath.AssumeNothing.Compare(a, b); len(cmp.Warnings) == 0 {
			r.P = cmp.P
		}
		c.Rows = append(c.Rows, r)
	}
	// Crossovers: where the winner changes between two measured sizes.
	byName := map[string]*Fit{}
	for _, cd := range cands {
		byName[cd.name] = cd.fit
	}
	for i := 1; i < len(c.Rows); i++ {
		a, b := c.Rows[i-1], c.Rows[i]
		if a.Winner == b.Winner {
			continue
		}
		x := Crossover{From: a.Winner, To: b.Winner, Lo: a.Size, Hi: b.Size}
		// Solved on the fits' axis: bytes, or tokens per rank for MoE.
		fa := byName[a.Winner]
		x.Axis = fa.Axis
		if s, ok := solve(fa, byName[b.Winner], fa.Coord(a.Size, a.Tokens), fa.Coord(b.Size, b.Tokens)); ok {
			x.Size, x.FromFits = s, true
		} else if fa, fb := byName[a.Winner], byName[b.Winner]; fa.NoFit != "" || fb.NoFit != "" {
			x.Why = "no fit of both to solve it"
		} else {
			x.Why = "the fits do not cross there"
		}
		c.Crossings = append(c.Crossings, x)
	}
	return c
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

// Ranges folds a comparison's rows into runs of one winner: "4 B – 64 KiB:
// NCCL by 12–40 %".
type Range struct {
	From, To         int64
	Winner           string
	MinLead, MaxLead float64
	Significant      int // rows whose lead is significant
	Rows             int
	Cached           int
}

// Ranges of the comparison.
func (c *Comparison) Ranges() []Range {
	var out []Range
	for _, r := range c.Rows {
		if n := len(out); n > 0 && out[n-1].Winner == r.Winner {
			g := &out[n-1]
			g.To = r.Size
			g.MinLead, g.MaxLead = math.Min(g.MinLead, r.Margin), math.Max(g.MaxLead, r.Margin)
			g.Rows++
			if r.Significant() {
				g.Significant++
			}
			if r.Cached {
				g.Cached++
			}
			continue
		}
		g := Range{From: r.Size, To: r.Size, Winner: r.Winner, MinLead: r.Margin, MaxLead: r.Margin, Rows: 1}
		if r.Significant() {
			g.Significant = 1
		}
		if r.Cached {
			g.Cached = 1
		}
		out = append(out, g)
	}
	return out
}
