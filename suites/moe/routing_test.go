package moe

import (
	"fmt"
	"os/exec"
	"strings"
	"testing"
)

// The Go routing is the shim's: cuda/shim/moe_route.h compiled with cc and
// run for uniform and skewed workloads gives the same experts and weights.
func TestRoutingMatchesTheShim(t *testing.T) {
	prog := `#include <stdio.h>
#include "moe_route.h"
int main(int argc, char **argv) {
  long long seed = atoll(argv[1]); int ranks = atoi(argv[2]), tokens = atoi(argv[3]), topk = atoi(argv[4]), experts = atoi(argv[5]);
  double zipf = atof(argv[6]);
  uint64_t cdf[4096]; int32_t order[4096], out[8]; float w[8];
  if (zipf > 0) { moe_zipf(zipf, experts, cdf); moe_order(seed, experts, order); }
  for (int r = 0; r < ranks; r++) for (int t = 0; t < tokens; t++) {
    moe_route_token(seed, r, t, experts, topk, zipf > 0, cdf, order, out, w);
    for (int k = 0; k < topk; k++) printf("%d %.9g\n", out[k], w[k]);
  }
  return 0;
}
`
	exe := shimProgram(t, prog, "moe_route.h")
	for _, c := range []struct {
		ranks, tokens, topk, experts int
		zipf                         float64
	}{{2, 300, 8, 256, 0}, {8, 200, 8, 256, 1.2}, {4, 100, 6, 64, 0.8}, {2, 50, 2, 4, 2.5}} {
		out, err := exec.Command(exe, fmt.Sprint(Seed), fmt.Sprint(c.ranks), fmt.Sprint(c.tokens), fmt.Sprint(c.topk), fmt.Sprint(c.experts), fmt.Sprint(c.zipf)).Output()
		if err != nil {
			t.Fatal(err)
		}
		rt := Route(Seed, c.ranks, c.tokens, c.topk, c.experts, c.zipf)
		lines := strings.Split(strings.TrimSpace(string(out)), "\n")
		if len(lines) != len(rt.Expert) {
			t.Fatalf("%+v: C gave %d selections, Go %d", c, len(lines), len(rt.Expert))
		}
		for i, l := range lines {
			var e int32
			var w float64
			fmt.Sscanf(l, "%d %g", &e, &w)
			if e != rt.Expert[i] || float32(w) != rt.Weight[i] {
				t.Fatalf("%+v selection %d: C %d %g, Go %d %g", c, i, e, w, rt.Expert[i], rt.Weight[i])
			}
		}
	}
}

// Every token selects k distinct experts, its weights sum to 1, a skewed
// routing loads the busiest expert far above the mean and a uniform one
// near it.
func TestRoutingShape(t *testing.T) {
	u := Route(Seed, 4, 2048, 8, 256, 0)
	z := Route(Seed, 4, 2048, 8, 256, 1.2)
	for _, rt := range []*Routing{u, z} {
		for r := 0; r < rt.Ranks; r++ {
			for tk := 0; tk < rt.Tokens; tk++ {
				seen := map[int32]bool{}
				sum := float32(0)
				for k, e := range rt.Of(r, tk) {
					if seen[e] || e < 0 || int(e) >= rt.Experts {
						t.Fatalf("rank %d token %d: expert %d twice or out of range", r, tk, e)
					}
					seen[e] = true
					sum += rt.Weight[(r*rt.Tokens+tk)*rt.TopK+k]
				}
				if sum < 0.999 || sum > 1.001 {
					t.Fatalf("weights sum to %v", sum)
				}
			}
		}
	}
	su, sz := u.Stats(), z.Stats()
	if su.LoadExp > 1.6 || sz.LoadExp < 5 {
		t.Errorf("busiest expert over the mean: uniform %.2f, skewed %.2f", su.LoadExp, sz.LoadExp)
	}
	if su.MaxSlots <= 0 || su.Selection != 2048*8 {
		t.Errorf("stats %+v", su)
	}
}
