package moe

import (
	"bytes"
	"fmt"
	"math/rand"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/nvshbench/nvshbench/cuda"
)

// layoutProg runs the shim's plan (moe_layout.h: moe_shape, moe_plan_host)
// for each shape on its standard input and prints the busiest rank's slots
// and arrivals and every offset of both buffers, in LayoutBytes' order.
const layoutProg = `#include <stdio.h>
#include "moe_layout.h"
int main(void) {
  long long seed; int n, t, k, e, hidden, dtype, mode, ctas; double zipf;
  while (scanf("%lld %d %d %d %d %d %d %d %lf %d", &seed, &n, &t, &k, &e, &hidden, &dtype, &mode, &zipf, &ctas) == 10) {
    MoeLayout L; MoeHost h;
    memset(&h, 0, sizeof h);
    moe_shape(&L, n, t, k, e, hidden, dtype, mode);
    if (moe_plan_host(&h, &L, seed, zipf, ctas)) return 1;
    int64_t v[] = {L.max_slots, L.max_arr, L.o_ctr, L.o_sig, L.o_csig, L.o_slot, L.o_smeta, L.o_arr, L.o_ameta, L.o_comb, L.remote,
                   L.o_done, L.o_epoch, L.o_route, L.o_w, L.o_cnt, L.o_roff, L.o_aoff, L.o_pairs, L.o_list, L.o_tab, L.o_seen, L.o_outp,
                   L.o_send, L.o_recv, L.local};
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) printf("%lld ", (long long)v[i]);
    printf("\n");
    moe_host_free(&h);
  }
  return 0;
}
`

// The layout is written once in C (the shim's moe_plan) and once in Go
// (Layout, for the plan's buffer sizes): the two agree on every offset,
// and on the busiest rank's slots and arrivals (Stats), over many shapes.
func TestLayoutMatchesTheShim(t *testing.T) {
	common, err := cuda.ShimFile("common.cuh")
	if err != nil {
		t.Fatal(err)
	}
	if m := regexp.MustCompile(`#define NB_MAX_CTAS (\d+)`).FindSubmatch(common); m == nil || string(m[1]) != strconv.Itoa(maxCTAs) {
		t.Fatalf("maxCTAs %d is not the shim's NB_MAX_CTAS (%q)", maxCTAs, m)
	}
	exe := shimProgram(t, layoutProg, "moe_route.h", "moe_layout.h")
	type shape struct {
		pes, tokens, topk, experts, hidden int
		dtype, mode                        string
		zipf                               float64
	}
	var shapes []shape
	for _, pes := range []int{1, 2, 3, 4, 8} {
		for _, tokens := range []int{1, 7, 128, 513} {
			for _, topk := range []int{1, 2, 8} {
				for _, per := range []int{1, 4, 32} {
					experts := pes * per
					if topk > experts {
						continue
					}
					for _, hidden := range []int{100, 128, 7168} {
						for _, dtype := range []string{"bf16", "fp8"} {
							if dtype == "fp8" && hidden%128 != 0 {
								continue // the shim refuses it
							}
							for _, mode := range []string{"ll", "normal"} {
								for _, zipf := range []float64{0, 1.2} {
									shapes = append(shapes, shape{pes, tokens, topk, experts, hidden, dtype, mode, zipf})
								}
							}
						}
					}
				}
			}
		}
	}
	var in bytes.Buffer
	for _, s := range shapes {
		dt, md := cuda.MoEBF16, cuda.MoELL
		if s.dtype == "fp8" {
			dt = cuda.MoEFP8
		}
		if s.mode == "normal" {
			md = cuda.MoENormal
		}
		fmt.Fprintf(&in, "%d %d %d %d %d %d %d %d %g %d\n", Seed, s.pes, s.tokens, s.topk, s.experts, s.hidden, dt, md, s.zipf, maxCTAs)
	}
	lines := outputLines(t, exe, &in, len(shapes))
	for i, s := range shapes {
		st := Route(Seed, s.pes, s.tokens, s.topk, s.experts, s.zipf).Stats()
		L := Layout(s.pes, s.tokens, s.topk, s.experts, s.hidden, s.dtype, s.mode, st.MaxSlots, st.MaxArr)
		g := L
		want := fmt.Sprint(st.MaxSlots, st.MaxArr, g.Ctr, g.Sig, g.CSig, g.Slot, g.SMeta, g.Arr, g.AMeta, g.Comb, g.Remote,
			g.Done, g.Epoch, g.Route, g.W, g.Cnt, g.ROff, g.AOff, g.Pairs, g.List, g.Tab, g.Seen, g.OutP, g.Send, g.Recv, g.Local)
		if got := strings.TrimSpace(lines[i]); got != want {
			t.Fatalf("%+v:\nC  (max slots, max arrivals, offsets) %s\nGo (max slots, max arrivals, offsets) %s", s, got, want)
		}
	}
	t.Logf("%d shapes agree", len(shapes))
}

// ranksProg prints moe_slot_ranks of each routing on its standard input
// (t, k, e, then t x k experts).
const ranksProg = `#include <stdio.h>
#include "moe_layout.h"
int main(void) {
  int t, k, e;
  while (scanf("%d %d %d", &t, &k, &e) == 3) {
    int32_t *route = (int32_t *)malloc(sizeof(int32_t) * t * k);
    int64_t *rank = (int64_t *)malloc(sizeof(int64_t) * t * k), *count = (int64_t *)malloc(sizeof(int64_t) * e);
    for (int i = 0; i < t * k; i++) scanf("%d", &route[i]);
    moe_slot_ranks(route, t, k, e, count, rank);
    for (int i = 0; i < t * k; i++) printf("%lld ", (long long)rank[i]);
    printf("\n");
    free(route), free(rank), free(count);
  }
  return 0;
}
`

// The shim's one-pass slot ranks (moe_slot_ranks: the tokens before a
// selection's with the same expert) are the nested count it replaced, on
// random routings.
func TestSlotRanksMatchTheNestedCount(t *testing.T) {
	exe := shimProgram(t, ranksProg, "moe_route.h", "moe_layout.h")
	rng := rand.New(rand.NewSource(1))
	type routing struct {
		t, k, e int
		ex      []int32
	}
	var rs []routing
	for i := 0; i < 200; i++ {
		r := routing{t: 1 + rng.Intn(300), e: 1 + rng.Intn(40)}
		r.k = 1 + rng.Intn(min(8, r.e))
		for tk := 0; tk < r.t; tk++ {
			r.ex = append(r.ex, shuffled(rng, r.e)[:r.k]...) // k distinct experts
		}
		rs = append(rs, r)
	}
	var in bytes.Buffer
	for _, r := range rs {
		fmt.Fprintln(&in, r.t, r.k, r.e)
		for _, x := range r.ex {
			fmt.Fprint(&in, x, " ")
		}
		fmt.Fprintln(&in)
	}
	lines := outputLines(t, exe, &in, len(rs))
	for i, r := range rs {
		want := make([]string, 0, len(r.ex))
		for tk := 0; tk < r.t; tk++ {
			for k := 0; k < r.k; k++ {
				// The nested count moe_prepare had: tokens of src before tk with this expert.
				rank := 0
				for t2 := 0; t2 < tk; t2++ {
					for k2 := 0; k2 < r.k; k2++ {
						if r.ex[t2*r.k+k2] == r.ex[tk*r.k+k] {
							rank++
						}
					}
				}
				want = append(want, strconv.Itoa(rank))
			}
		}
		if got := strings.Fields(lines[i]); strings.Join(got, " ") != strings.Join(want, " ") {
			t.Fatalf("routing %d (%d tokens, top-%d of %d): C ranks %v, the nested count %v", i, r.t, r.k, r.e, got, want)
		}
	}
}

func shuffled(rng *rand.Rand, n int) []int32 {
	p := make([]int32, n)
	for i, v := range rng.Perm(n) {
		p[i] = int32(v)
	}
	return p
}
