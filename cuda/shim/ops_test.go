package shim

import (
	"slices"
	"strings"
	"testing"
)

// The shim's sources declare a table the shim can dispatch: unique names of
// the three kinds, each short enough for the ABI, each with a declared code,
// no code twice.
func TestDispatchTableIsConsistent(t *testing.T) {
	ops := Ops()
	if len(ops) < 30 {
		t.Fatalf("read only %d operations from the shim's tables: the pattern is wrong", len(ops))
	}
	for _, p := range opsErr {
		t.Error(p)
	}
	for _, want := range []string{"rma.put", "rma.put_signal", "rma.lsa_get", "lat.get", "lat.pp_signal", "lat.lsa_put", "coll.allreduce"} {
		if _, ok := ops[want]; !ok {
			t.Errorf("%s is not in the table", want)
		}
	}
	if o := ops["rma.put"]; o.Code != "NB_OP_PUT" || o.Value != 1 || o.Family != "kRMA" || o.File != "rma.cuh" || o.Check != "kCheckPut" ||
		!o.Has(TraitPayload) || o.Has(TraitLoadStore) || o.Launch != "launch_bulk<NB_OP_PUT>" {
		t.Errorf("rma.put read as %+v", o)
	}
	if o := ops["rma.compare_swap"]; o.Check != "AmoRate<AmoCompareSwap>" || o.File != "atomics.cuh" || o.Desc == "" || !o.Has(TraitCounters) || o.Has(TraitPayload) {
		t.Errorf("rma.compare_swap read as %+v", o)
	}
	if o := ops["rma.st"]; !o.Has(TraitLoadStore) || !o.Has(TraitPayload) || len(o.Traits) != 2 {
		t.Errorf("rma.st read as %+v", o)
	}
	if o := ops["lat.launch"]; len(o.Traits) != 1 || !o.Has(TraitNoOutput) || o.Check != "kCheckNothing" {
		t.Errorf("lat.launch leaves no output and says so, read as %+v", o)
	}
	if o := ops["lat.lsa_get"]; o.Kind() != "lat" || o.File != "nccldev.cuh" {
		t.Errorf("lat.lsa_get read as %+v", o)
	}
}

// The checks find what they are for.
func TestDispatchTableProblemsAreFound(t *testing.T) {
	src := `enum { NB_OP_A = 1, NB_OP_B = 1, NB_OP_D = 2, NB_OP_E = 3, NB_OP_F = 4 };
template <int OP> __global__ void k(int *x) { if constexpr (OP == NB_OP_E) *x = 1; }
NB_CHECK(kCheckX, "x", at_x, x_holds);
static constexpr Check kCheckNone = {"nothing", nothing, nullptr};
static constexpr Check kCheckReset = {"with a reset", verify_it, nullptr, reset_it};
static constexpr OpEntry k[] = {
    {NB_OP_A, "rma.a", &kRMA, T_PAYLOAD, kCheckX, f},
    {NB_OP_D, "rma.a", &kRMA, 0, kCheckX, f},
    {NB_OP_C, "rma.c", &kRMA, T_PAYLOAD | T_LOADSTORE, kCheckX, f},
    {NB_OP_D, "nope", &kRMA, 0, kCheckX, f},
    {NB_OP_D, "rma.a_name_longer_than_the_abi_allows", &kRMA, 0, kCheckX, f},
    {NB_OP_E, "rma.e", &kRMA, T_COUNTERS, kCheckX, launch<NB_OP_E>},
    {NB_OP_F, "rma.f", &kRMA, T_COUNTERS, kCheckX, launch<NB_OP_F>},
    {NB_OP_D, "rma.g", &kRMA, PAYLOAD, kCheckX, f},
    {NB_OP_D, "rma.h", &kRMA, T_PAYLOAD, f},
    {NB_OP_D, "rma.i", &kRMA, T_PAYLOAD, kCheckY, f},
    {NB_OP_D, "rma.j", &kRMA, T_PAYLOAD, kCheckNone, f},
    {NB_OP_D, "rma.k", &kRMA, T_NO_OUTPUT, kCheckNone, f},
    {NB_OP_D, "rma.l", &kRMA, T_PAYLOAD, kCheckReset, f},
};`
	ops, problems := parseOps(map[string]string{"x.cuh": src})
	want := []string{"code 1 is both NB_OP_A and NB_OP_B", "rma.c: its code NB_OP_C is not declared",
		"the name rma.a is in the table twice", "nope: a name is rma.*, lat.*, coll.*, moe.* or host.*", "longer than the ABI's 31 bytes",
		"rma.f: its launch launch<NB_OP_F> is a template of NB_OP_F, which no kernel branch names", "rma.g: trait PAYLOAD is not a T_* name",
		"rma.h: not an entry {code, name, &family, traits, check, launch}", "rma.i: its check kCheckY is not a declared Check",
		"rma.j: its check kCheckNone cannot be corrupted, and the entry is not T_NO_OUTPUT",
		"rma.l: its check kCheckReset cannot be corrupted, and the entry is not T_NO_OUTPUT"}
	wantProblems(t, problems, want)
	if o := ops["rma.c"]; o.File != "x.cuh" || o.Family != "kRMA" || !o.Has(TraitLoadStore) || !o.Has(TraitPayload) {
		t.Errorf("rma.c read as %+v", o)
	}
}

// Every line of NB_ATOMICS is an entry of each form (a rate, a round trip):
// a line the pattern skipped would be an atomic no benchmark runs.
func TestEveryAtomicLineIsTwoEntries(t *testing.T) {
	text := Files()["atomics.cuh"]
	lines := atomicLines(text)
	if len(lines) < 13 {
		t.Fatalf("read %d lines of NB_ATOMICS", len(lines))
	}
	if n := strings.Count(text, "\n  X("); n != len(lines) { // the block's lines, as atomics.cuh writes them
		t.Errorf("NB_ATOMICS has %d X( lines, the pattern read %d", n, len(lines))
	}
	for _, kind := range []string{"rma", "lat"} {
		if got := Atomics(kind); len(got) != len(lines) {
			t.Errorf("%d %s atomics for %d lines", len(got), kind, len(lines))
		}
	}
}

// Every atomic carries its counter types from its struct's NB_AMO_<TYPES>
// list: the integer ones u64 and u32, NVSHMEM 3.7's float adds f64, f32
// and f16 (a dtype each, never a bare size: 4 bytes are u32 or f32), with
// the release they need; a line's description joins its literals.
func TestAtomicsCarryTheirCounterTypes(t *testing.T) {
	ints := []Counter{{"u64", 8}, {"u32", 4}}
	floats := []Counter{{"f64", 8}, {"f32", 4}, {"f16", 2}}
	nfloat := 0
	for _, kind := range []string{"rma", "lat"} {
		for _, o := range Atomics(kind) {
			want, needs := ints, ""
			if strings.Contains(o.Name, "float_") {
				want, needs = floats, "3.7"
				nfloat++
				if !strings.Contains(o.Desc, "NVSHMEM >= 3.7") || !strings.Contains(o.Desc, "add no floats") {
					t.Errorf("%s: its description does not say what it needs and where it runs: %q", o.Name, o.Desc)
				}
			}
			if !slices.Equal(o.Counters, want) || o.NeedsNVSHMEM != needs || o.Floating() != (needs != "") {
				t.Errorf("%s: counters %v needs %q floating %v, want %v %q", o.Name, o.Counters, o.NeedsNVSHMEM, o.Floating(), want, needs)
			}
		}
	}
	if nfloat != 4 { // float_add and float_fetch_add, each a rate and a round trip
		t.Errorf("%d float atomics, want 4", nfloat)
	}
	if o := Ops()["rma.put"]; o.Floating() || o.Counters != nil {
		t.Errorf("rma.put is no atomic: %+v", o)
	}
}

// The counter types' problems are found: a struct whose types have no list,
// no release or no calls (what a waiver names), a label of no whole bytes;
// a line's literals are joined.
func TestAtomicCounterProblemsAreFound(t *testing.T) {
	src := `enum { NB_OP_AMO = 61 };
#define NB_AMO_INT(T) T(uint64_t, u64) T(uint32_t, u32)
#define NB_AMO_INT_SINCE 0
#define NB_AMO_ODD(T) T(uint8_t, u7)
#define NB_AMO_ODD_SINCE 0
#define NB_AMO_NEW(T) T(double, f64)
#define NB_AMO_NEW_SINCE 309
#define NB_AMO_LOST(T) T(float, f32)
#define NB_AMO_MUTE(T) T(float, f32)
#define NB_AMO_MUTE_SINCE 307
NB_AMO_TYPES(INT, "nvshmem_int_calls")
NB_AMO_TYPES(NEW, "nvshmemx_new_calls")
NB_AMO(AmoA, INT, 1, 0, amo_count, return 0)
NB_AMO(AmoB, ODD, 1, 0, amo_count, return 0)
NB_AMO(AmoC, NONE, 1, 0, amo_count, return 0)
NB_AMO(AmoD, LOST, 1, 0, amo_count, return 0)
NB_AMO(AmoE, NEW, 1, 0, amo_count, return 0)
NB_AMO(AmoG, MUTE, 1, 0, amo_count, return 0)
template <typename F>
struct AmoRate {
  static constexpr Check check = {"x", CheckAt<where, hold>::verify, CheckAt<where, hold>::corrupt, reset};
};
#define NB_ATOMICS(X) \
  X(a, AmoA, "one " \
    "two") \
  X(b, AmoB, "b") \
  X(c, AmoC, "c") \
  X(d, AmoD, "d") \
  X(e, AmoE, "e") \
  X(f, AmoF, "f") \
  X(g, AmoG, "g")

#define NB_AMO_RATE(name, F, what) {NB_OP_AMO, "rma." #name, &kRMA, T_COUNTERS, AmoRate<F>::check, launch_amo<F>},
`
	ops, problems := parseOps(map[string]string{"atomics.cuh": src})
	wantProblems(t, problems, []string{"NB_AMO_ODD: the label u7 is no whole number of bytes", "AmoB: its types ODD have no #define NB_AMO_ODD(T)",
		"AmoC: its types NONE have no #define NB_AMO_NONE(T)", "AmoD: its types LOST have no #define NB_AMO_LOST_SINCE",
		"rma.b: its struct AmoB has no NB_AMO(AmoB, TYPES, ...) line", "rma.c: its struct AmoC has no", "rma.d: its struct AmoD has no",
		"rma.f: its struct AmoF has no", `AmoG: its types MUTE have no NB_AMO_TYPES(MUTE, "the calls") line`, "rma.g: its struct AmoG has no"})
	if o := ops["rma.a"]; o.Desc != "one two" || !slices.Equal(o.Counters, []Counter{{"u64", 8}, {"u32", 4}}) || o.NeedsNVSHMEM != "" {
		t.Errorf("rma.a read as %+v", o)
	}
	if o := ops["rma.e"]; o.NeedsNVSHMEM != "3.9" || !o.Floating() || o.Calls != "nvshmemx_new_calls" {
		t.Errorf("rma.e read as %+v", o)
	}
}

// No switch of the shim has a catch-all branch: a case it does not name
// must not run another's code (an operation, a check, a kind). The
// compiler's -Wswitch cannot see switches over ints; this can.
func TestShimHasNoCatchAll(t *testing.T) {
	for name, text := range Files() {
		for i, line := range strings.Split(text, "\n") {
			if strings.Contains(line, "default:") {
				t.Errorf("%s:%d: a catch-all branch: %s", name, i+1, strings.TrimSpace(line))
			}
		}
	}
}

// Every declared check is some entry's, and only an entry that leaves no
// output names a check the GPU test cannot corrupt (every other check is
// proved able to fail there: cuda/gputest).
func TestEveryCheckIsUsedAndCanFail(t *testing.T) {
	checks := Checks()
	if len(checks) < 10 {
		t.Fatalf("read only %d checks from the shim's sources: the pattern is wrong", len(checks))
	}
	used := map[string]bool{}
	for _, o := range Ops() {
		c, ok := checks[o.Check]
		if !ok {
			t.Errorf("%s: check %q is not declared", o.Name, o.Check)
			continue
		}
		used[o.Check] = true
		if !c.Corruptible != o.Has(TraitNoOutput) {
			t.Errorf("%s: check %s corruptible %v, the entry leaves no output %v", o.Name, o.Check, c.Corruptible, o.Has(TraitNoOutput))
		}
	}
	for name, c := range checks {
		if !used[name] {
			t.Errorf("check %s (%s) is no entry's", name, c.File)
		}
	}
}

// wantProblems: the parse found exactly the problems want names (each a
// substring of one).
func wantProblems(t *testing.T, problems, want []string) {
	t.Helper()
	all := strings.Join(problems, "\n")
	for _, w := range want {
		if !strings.Contains(all, w) {
			t.Errorf("not found: %q in\n%s", w, all)
		}
	}
	if len(problems) != len(want) {
		t.Errorf("%d problems, want %d:\n%s", len(problems), len(want), all)
	}
}

// The values the shim gives are read from its put_value calls, each with
// its unit; put_value's own definition (parameters, no literal) is none.
func TestShimValuesAreRead(t *testing.T) {
	got := parseValues(map[string]string{
		"common.cuh": `static int put_value(nb_result *res, const char *name, const char *unit, double v) {`,
		"x.cuh":      "  if (!st) st = put_value(res, \"ce_copy_s\", \"s\", t);\n  return put_value(r2, \"ce_sm_free\",\"1\", 1);",
	})
	want := []Value{{"ce_copy_s", "s", "x.cuh"}, {"ce_sm_free", "1", "x.cuh"}}
	if !slices.Equal(got, want) {
		t.Errorf("read %v, want %v", got, want)
	}
	if len(Values()) < 5 {
		t.Errorf("the shim's sources give %v: the pattern is wrong", Values())
	}
}
