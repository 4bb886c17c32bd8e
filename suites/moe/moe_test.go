package moe

import (
	"reflect"
	"testing"

	"github.com/nvshbench/nvshbench/harness"
)

// A point's workload reads back as it was written, and its Extra keeps
// the record's keys (zipf only for a skewed routing).
func TestWorkloadRoundTrip(t *testing.T) {
	c := harness.DefaultConfig()
	c.MoE = harness.DefaultMoE()
	c.MoE.DTypes = []string{"bf16", "fp8"}
	ps := points("dispatch")(&c)
	if len(ps) != 2*2*2*len(c.MoE.Tokens) {
		t.Fatalf("%d points", len(ps))
	}
	for _, p := range ps {
		w := workloadOf(p)
		if w.Hidden != c.MoE.Hidden || w.TopK != c.MoE.TopK || w.Experts != c.MoE.Experts || w.DType != p.DType || w.Tokens <= 0 {
			t.Fatalf("%+v from %+v", w, p)
		}
		if !reflect.DeepEqual(w.extra(), p.Extra) {
			t.Fatalf("%+v: Extra %v, again %v", w, p.Extra, w.extra())
		}
		keys := 6
		if w.Routing == "skewed" {
			keys++
			if w.Zipf != c.MoE.Zipf {
				t.Fatalf("zipf %v", w.Zipf)
			}
		} else if w.Zipf != 0 {
			t.Fatalf("a uniform routing with zipf %v", w.Zipf)
		}
		if len(p.Extra) != keys {
			t.Fatalf("Extra %v", p.Extra)
		}
	}
}

// remoteBytesOfRouting is RemoteBytes counted message by message on the
// routing itself (how it was first written).
func remoteBytesOfRouting(rt *Routing, op, mode string, tok, out int64) int64 {
	el := rt.Experts / rt.Ranks
	var b int64
	for src := 0; src < rt.Ranks; src++ {
		for t := 0; t < rt.Tokens; t++ {
			var seen uint64
			for _, e := range rt.Of(src, t) {
				d := int(e) / el
				first := seen>>d&1 == 0
				seen |= 1 << d
				if mode == "normal" && !first {
					continue // one message per (token, rank)
				}
				switch {
				case op == "dispatch" && src == 0 && d != 0:
					b += tok + HeaderBytes(mode)
				case op == "combine" && d == 0 && src != 0:
					b += out
				}
			}
		}
	}
	return b
}

// RemoteBytes from the routing's statistics is the count on the routing.
func TestRemoteBytesCountsTheRouting(t *testing.T) {
	for _, ranks := range []int{1, 2, 4, 8} {
		for _, zipf := range []float64{0, 1.2} {
			rt := Route(Seed, ranks, 300, 8, 64, zipf)
			st := rt.Stats()
			for _, op := range []string{"dispatch", "combine"} {
				for _, mode := range []string{"ll", "normal"} {
					got, want := RemoteBytes(st, op, mode, 7168*2, 7168*2), remoteBytesOfRouting(rt, op, mode, 7168*2, 7168*2)
					if got != want || (ranks > 1 && got == 0) {
						t.Errorf("%d ranks, zipf %v, %s %s: %d bytes, the routing says %d", ranks, zipf, op, mode, got, want)
					}
				}
			}
		}
	}
}

// The routing of a point is computed once and serves every point of it.
func TestRouteStatsOnce(t *testing.T) {
	w := Workload{Tokens: 64, Hidden: 128, TopK: 4, Experts: 16, Mode: "ll", Routing: "uniform", DType: "bf16"}
	a := routeStats(4, w)
	w.Mode, w.DType = "normal", "fp8"
	b := routeStats(4, w)
	if &a.Slots[0] != &b.Slots[0] {
		t.Error("the same routing computed twice")
	}
	if !reflect.DeepEqual(a, Route(Seed, 4, 64, 4, 16, 0).Stats()) {
		t.Error("the cached statistics are not the routing's")
	}
}
