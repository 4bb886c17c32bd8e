package decide_test

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/nvshbench/nvshbench/internal/decide"
)

// samples: n values around t with a relative spread of ±noise (seeded).
func samples(t, noise float64, n int, seed uint64) []float64 {
	r := rand.New(rand.NewPCG(seed, 1))
	out := make([]float64, n)
	for i := range out {
		out[i] = t * (1 + noise*(2*r.Float64()-1))
	}
	return out
}

func decideTwo(a, b []float64, family int) decide.Verdict {
	return decide.Default().Decide([]decide.Entry{{Name: "A", Samples: a}, {Name: "B", Samples: b}}, family)
}

// A 1 % lead is below the margin however tight the samples: a tie.
func TestOnePercentTightIsATie(t *testing.T) {
	v := decideTwo(samples(1e-6, 0.001, 10, 1), samples(1.01e-6, 0.001, 10, 2), 1)
	if !v.Tie() || v.Fastest != "A" || !(v.Lo > 1) {
		t.Fatalf("1 %% tight: %+v (the interval excludes 1, the lead is below the margin)", v)
	}
	if got := v.Label(); got != "tie (within 3 %)" {
		t.Errorf("label %q", got)
	}
}

// spread: n values evenly from t·(1 − noise) to t·(1 + noise), shuffled.
func spread(t, noise float64, n int, seed uint64) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = t * (1 + noise*(2*float64(i)/float64(n-1)-1))
	}
	rand.New(rand.NewPCG(seed, 2)).Shuffle(n, func(i, j int) { out[i], out[j] = out[j], out[i] })
	return out
}

// A 10 % lead with samples spread ±30 % overlaps: a tie, and the tie says
// how far apart the two may be.
func TestTenPercentNoisyIsATie(t *testing.T) {
	v := decideTwo(spread(1e-6, 0.3, 10, 3), spread(1.1e-6, 0.3, 10, 4), 1)
	if !v.Tie() || v.Lead < 0.03 || v.Lo > 1 {
		t.Fatalf("10 %% noisy: %+v", v)
	}
	if v.Within <= 0.1 || !strings.HasPrefix(v.Label(), "tie (within ") {
		t.Errorf("within %.3f, label %q: a noisy tie is wider than the margin", v.Within, v.Label())
	}
}

// A 10 % lead with tight samples is a winner, with its interval.
func TestTenPercentTightWins(t *testing.T) {
	v := decideTwo(samples(1.1e-6, 0.01, 10, 5), samples(1e-6, 0.01, 10, 6), 1)
	if v.Winner != "B" || v.Next != "A" || math.Abs(v.Lead-0.1) > 0.02 || !(v.Lo > 1.05 && v.Hi < 1.15) {
		t.Fatalf("10 %% tight: %+v", v)
	}
	if v.Label() != "B" {
		t.Errorf("label %q", v.Label())
	}
}

// The same clear lead, where a measurement may carry no verdict (a cache
// served it, its samples are noisy): no one is named, not even the
// fastest, and the size is not one of the family; the label says why,
// naming the contenders only where their reasons differ.
func TestNoVerdictFromAnUnjudgedMeasurement(t *testing.T) {
	a, b := samples(1.1e-6, 0.01, 10, 5), samples(1e-6, 0.01, 10, 6)
	for _, c := range []struct {
		ua, ub, label string
	}{
		{"cache-served", "cache-served", "not judged: cache-served"},
		{"", "noisy", "not judged: B: noisy"},
		{"check", "noisy", "not judged: A: check; B: noisy"},
	} {
		es := []decide.Entry{{Name: "A", Samples: a, Unjudged: c.ua}, {Name: "B", Samples: b, Unjudged: c.ub}}
		v := decide.Default().Decide(es, 1)
		if !v.Tie() || v.Fastest != "" || v.Label() != c.label || !math.IsNaN(v.Lead) {
			t.Errorf("%q / %q: %+v, label %q; want %q", c.ua, c.ub, v, v.Label(), c.label)
		}
		judged := []decide.Entry{{Name: "A", Samples: a}, {Name: "B", Samples: b}}
		if m := decide.Family([][]decide.Entry{judged, es, judged, judged[:1]}); m != 2 {
			t.Errorf("%q / %q: family %d; want 2 (a size of one contender, or not judged, is none of it)", c.ua, c.ub, m)
		}
	}
}

// At the edge: a lead the samples of one size show at 95 % no longer holds
// when the size is one of 30 tested together (Bonferroni).
func TestManySizesCorrectionMakesATie(t *testing.T) {
	// Eight samples each, 6 of 64 pairs ordered against the lead: P(U ≤ 6)
	// ≈ 0.0025 two-sided 0.005, significant alone, not at 0.05/30.
	a := []float64{1.00, 1.01, 1.02, 1.03, 1.04, 1.05, 1.06, 1.13}
	b := []float64{1.065, 1.075, 1.085, 1.095, 1.105, 1.115, 1.125, 1.135}
	alone := decideTwo(a, b, 1)
	if alone.Winner != "A" {
		t.Fatalf("alone: %+v", alone)
	}
	many := decideTwo(a, b, 30)
	if !many.Tie() || !(many.Lo <= 1) || many.Level != 1-0.05/30 {
		t.Fatalf("one of 30 sizes: %+v", many)
	}
}

// A quantized timer: the base has three distinct values, the candidate
// equals the base's slowest at every sample. The closed interval keeps 1
// inside: never a false winner.
func TestTiedSamplesAreNoFalseWinner(t *testing.T) {
	base := []float64{1, 1, 1, 1, 1.5, 1.5, 1.5, 2, 2, 2}
	cand := []float64{2, 2, 2, 2, 2, 2, 2, 2, 2, 2}
	v := decide.Rule{Margin: 0, Alpha: 0.05}.Decide([]decide.Entry{{Name: "base", Samples: base}, {Name: "cand", Samples: cand}}, 1)
	if !v.Tie() {
		t.Fatalf("tied samples: %+v", v)
	}
}

// Every other contender must be beaten: one clearly slower and one tied
// make a tie of the two, the slow one left out.
func TestWinnerMustBeatEveryone(t *testing.T) {
	v := decide.Default().Decide([]decide.Entry{
		{Name: "slow", Samples: samples(2e-6, 0.01, 10, 7)},
		{Name: "fast", Samples: samples(1e-6, 0.01, 10, 8)},
		{Name: "twin", Samples: samples(1.005e-6, 0.01, 10, 9)},
	}, 1)
	if !v.Tie() || strings.Join(v.Tied, ",") != "fast,twin" || v.Label() != "tie (within 3 %): fast, twin" {
		t.Fatalf("%+v: %q", v, v.Label())
	}
	few := decideTwo([]float64{1, 1.1}, []float64{2, 2.1}, 1)
	if !few.Tie() || few.Label() != "too few samples (2 and 2 samples; 4 a side needed)" {
		t.Errorf("two samples a side: %+v %q", few, few.Label())
	}
}

// Hodges–Lehmann: the ratio of a pure scale change is recovered, and its
// interval covers it.
func TestHodgesLehmann(t *testing.T) {
	a := samples(1e-6, 0.05, 20, 10)
	b := make([]float64, len(a))
	for i, x := range samples(1e-6, 0.05, 20, 11) {
		b[i] = 1.2 * x
	}
	r := decide.HodgesLehmann(a, b, 0.95)
	if math.Abs(r.Est/1.2-1) > 0.03 || !(r.Lo < 1.2 && r.Hi > 1.2) || !(r.Lo > 1.1) {
		t.Errorf("ratio %+v, want about 1.2", r)
	}
	if r := decide.HodgesLehmann([]float64{1, 2, 3}, []float64{1, 2, 3}, 0.95); r.OK() || r.Est != 1 {
		t.Errorf("three a side at 95 %%: %+v (P(U = 0) = 0.05 > 0.025: no interval)", r)
	}
}

// The exact critical values of the Mann–Whitney U statistic, two-sided at
// 0.05 (published tables): n = m = 10: 23; n = m = 8: 13; n = m = 5: 2;
// n = 4, m = 6: 2 (the interval is then the (c+1)-th pairwise ratio).
func TestCriticalValues(t *testing.T) {
	for _, c := range []struct{ n, m, want int }{{10, 10, 23}, {8, 8, 13}, {5, 5, 2}, {4, 6, 2}} {
		a, b := make([]float64, c.n), make([]float64, c.m)
		for i := range a {
			a[i] = math.Exp(float64(i))
		}
		for j := range b {
			b[j] = math.Exp(math.Sqrt2 * float64(j)) // every pairwise log ratio distinct
		}
		r := decide.HodgesLehmann(a, b, 0.95)
		var d []float64
		for _, x := range a {
			for _, y := range b {
				d = append(d, math.Log(y/x))
			}
		}
		below := 0
		for _, x := range d {
			if x < math.Log(r.Lo)-1e-12 {
				below++
			}
		}
		if below != c.want {
			t.Errorf("n=%d m=%d: %d pairwise ratios below the interval, want %d", c.n, c.m, below, c.want)
		}
	}
}

// Beyond the exact count, the normal approximation keeps the level: a
// shift of 2 % in 60 samples a side at 0.2 % noise is found, none is not.
func TestLargeSamples(t *testing.T) {
	a, b := samples(1, 0.002, 60, 12), samples(1.02, 0.002, 60, 13)
	if r := decide.HodgesLehmann(a, b, 0.95); !(r.Lo > 1.015 && r.Hi < 1.025) {
		t.Errorf("large samples: %+v", r)
	}
	if r := decide.HodgesLehmann(a, samples(1, 0.002, 60, 14), 0.95); !(r.Lo < 1 && r.Hi > 1) {
		t.Errorf("same distribution: %+v", r)
	}
}

// The fewest samples a side for an interval: 4 at 95 % (1/70 ≤ 0.025),
// 6 for one of 11 sizes, 7 for one of 29.
func TestNeedSamples(t *testing.T) {
	for m, want := range map[int]int{1: 4, 11: 6, 29: 7} {
		if got := decide.NeedSamples(decide.Default().Level(m)); got != want {
			t.Errorf("family %d: %d samples a side, want %d", m, got, want)
		}
	}
}

func TestPercent(t *testing.T) {
	for f, want := range map[float64]string{0.03: "3 %", 0.025: "2.5 %", 0.1201: "13 %", 0.0301: "3.1 %", 1: "100 %"} {
		if got := decide.Percent(f); got != want {
			t.Errorf("Percent(%v) = %q, want %q", f, got, want)
		}
	}
}

// Same operation here: what the records say ran.
func TestOperation(t *testing.T) {
	op := func(id, eff string, pes int, size int64) string {
		o, _ := decide.Operation(id, eff, "", pes, size)
		return o
	}
	// A one-rank copy, as the record says one is: every such point is one
	// operation, whatever its benchmark.
	const copyWhy = "NCCL's one-rank copy: ..."
	one, why := decide.Operation("collectives/allreduce/nccl", "nccl-2.28.9", copyWhy, 1, 1<<20)
	for _, id := range []string{"collectives/allreduce/nccl-ring", "collectives/allreduce/nvshmem-stream"} {
		if o, w := decide.Operation(id, "x", copyWhy, 1, 1<<20); o != one || w != why || why != copyWhy {
			t.Errorf("%s, a one-rank copy: %q (%q), want %q", id, o, w, one)
		}
	}
	if op("collectives/allreduce/nccl-ring", "nccl-2.28.9-ring", 2, 1<<20) == op("collectives/allreduce/nccl", "nccl-2.28.9", 2, 1<<20) {
		t.Error("nccl-ring on two PEs merged with NCCL's choice")
	}
	if op("collectives/allreduce/nvshmem-stream", "nccl-via-nvshmem", 4, 8) != op("collectives/allreduce/nccl", "nccl-2.28.9", 4, 8) {
		t.Error("NVSHMEM on-stream handed to NCCL is NCCL's choice")
	}
	if op("collectives/allreduce/nvshmem-stream", "nvshmem", 1, 8) == one {
		t.Error("NVSHMEM's own on-stream collective merged with NCCL")
	}
	// The kernel the record names.
	if op("collectives/allreduce/nccl-lsa", "nccl-lsa-oneshot-2.28.9", 4, 1<<20) != op("collectives/allreduce/nccl-lsa-oneshot", "nccl-lsa-oneshot-2.28.9", 4, 1<<20) {
		t.Error("nccl-lsa ran the one-shot kernel")
	}
	if op("collectives/allreduce/nccl-lsa", "nccl-lsa-twoshot-2.28.9", 4, 1<<20) != op("collectives/allreduce/nccl-lsa-twoshot", "nccl-lsa-twoshot-2.28.9", 4, 1<<20) {
		t.Error("nccl-lsa ran the two-shot kernel")
	}
	if op("collectives/allreduce/multicta", "oneshot-p2p", 2, 1<<30) == op("collectives/allreduce/nccl-lsa", "nccl-lsa-oneshot-2.28.9", 2, 1<<30) {
		t.Error("our kernel and NCCL's LSA kernel are not the same code")
	}
	// Without the record's word: the rule that picks the kernel, said.
	small, why := decide.Operation("collectives/allreduce/multicta", "", "", 4, 64<<10)
	large, _ := decide.Operation("collectives/allreduce/multicta", "", "", 4, 1<<20)
	two, _ := decide.Operation("collectives/allreduce/multicta", "", "", 2, 1<<20)
	if small != op("collectives/allreduce/multicta-oneshot", "", 4, 64<<10) || large != op("collectives/allreduce/multicta-twoshot", "", 4, 1<<20) ||
		two != small || !strings.Contains(why, "do not say") {
		t.Errorf("by the rule: %q %q %q (%s)", small, large, two, why)
	}
	if op("moe/dispatch/nccl", "local", 1, 8) == op("moe/dispatch/nvshmem", "local", 1, 8) || op("rma/put/block", "p2p", 2, 8) != "rma/put/block" {
		t.Error("distinct kernels merged")
	}
}
