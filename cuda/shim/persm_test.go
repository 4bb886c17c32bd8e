package shim

import (
	"slices"
	"strings"
	"testing"
)

// The shim's bytes-per-SM lists, read as the shim compiles them: every
// mechanism with its facts, every compute kernel, in the lists' order; the
// table's rows are theirs, with the traits the facts give (a payload, the
// load/store mapping, no SM of ours: issued from the host).
func TestPerSMListsAreRead(t *testing.T) {
	pm := parsePerSM(Files())
	for _, p := range pm.problems {
		t.Error(p)
	}
	var names []string
	for _, m := range pm.mechs {
		names = append(names, m.Op)
	}
	if want := []string{"rma.pm_st", "rma.pm_tma", "rma.pm_put", "rma.pm_st1", "rma.pm_lsa", "rma.pm_ce"}; !slices.Equal(names, want) {
		t.Errorf("mechanisms %v, want %v", names, want)
	}
	want := map[string]PerSMMechanism{
		"rma.pm_st":  {Struct: "PmSt", Op: "rma.pm_st", Code: 100, Dst: "peer", LoadStore: true, SMs: true, Align: 1, Split: "strided"},
		"rma.pm_tma": {Struct: "PmTma", Op: "rma.pm_tma", Code: 101, Dst: "peer", LoadStore: true, SMs: true, Align: 16, Split: "chunks", Staged: true},
		"rma.pm_put": {Struct: "PmPut", Op: "rma.pm_put", Code: 102, Dst: "symmetric", SMs: true, Align: 1, Split: "chunks"},
		"rma.pm_st1": {Struct: "PmSt1", Op: "rma.pm_st1", Code: 107, Dst: "peer", LoadStore: true, SMs: true, Align: 1, Split: "strided"},
		"rma.pm_lsa": {Struct: "PmLsa", Op: "rma.pm_lsa", Code: 103, Dst: "lsa", LoadStore: true, SMs: true, Align: 1, Split: "strided"},
		"rma.pm_ce":  {Struct: "PmCe", Op: "rma.pm_ce", Code: 104, Dst: "peer", LoadStore: true, Align: 1},
	}
	for _, m := range pm.mechs {
		if m != want[m.Op] {
			t.Errorf("%s read as %+v, want %+v", m.Op, m, want[m.Op])
		}
		o, ok := Ops()[m.Op]
		if !ok || o.Has(TraitLoadStore) != m.LoadStore || o.Has(TraitHost) == m.SMs || !o.Has(TraitPayload) || o.Family != "kPM" ||
			o.Check != "kCheckPm" || o.Launch != "launch_pm<"+m.Struct+">" || o.Value != m.Code || o.File != "persm.cuh" {
			t.Errorf("%s's entry read as %+v", m.Op, o)
		}
	}
	if cs := pm.computes; len(cs) != 2 || cs[0] != (PerSMCompute{"PmFma", "rma.pm_fma", 105}) || cs[1] != (PerSMCompute{"PmMma", "rma.pm_mma", 106}) {
		t.Errorf("compute kernels %+v", cs)
	}
	if o := Ops()["rma.pm_mma"]; len(o.Traits) != 0 || o.Launch != "launch_pm<PmMma>" {
		t.Errorf("rma.pm_mma's entry read as %+v", o)
	}
}

// What breaks "a struct and a word of the list" is found, each named: a
// word without its struct, a struct without a fact, a destination PmDst
// does not have, a table not made of the lists, a code another entry has.
func TestPerSMProblemsAreFound(t *testing.T) {
	mech := func(name, code, op, dst string) string {
		return "struct " + name + " {\n  static constexpr int code = " + code + ";\n  static constexpr const char *op = \"" + op + "\";\n" +
			"  static constexpr PmDst dst = PmDst::" + dst + ";\n  static constexpr bool loadstore = true;\n  static constexpr bool sms = true;\n" +
			"  static constexpr int64_t align = 1;\n  static constexpr PmSplit split = PmSplit::chunks;\n  static constexpr bool staged = false;\n};\n"
	}
	good := "enum class PmDst { peer, symmetric, lsa };\nenum class PmSplit { strided, chunks };\nenum { NB_OP_PUT = 1 };\n" +
		mech("PmA", "100", "rma.pm_a", "peer") +
		"struct PmC {\n  static constexpr int code = 105;\n  static constexpr const char *op = \"rma.pm_c\";\n};\n" +
		"#define NB_PM_MECHANISMS(X) X(PmA)\n#define NB_PM_COMPUTES(X) X(PmC)\n" +
		"#define NB_PM_MECH_ENTRY(M) {M::code, M::op, &kPM, pm_traits<M>(), kCheckPm, launch_pm<M>},\n" +
		"#define NB_PM_COMPUTE_ENTRY(C) {C::code, C::op, &kPM, 0, kCheckPm, launch_pm<C>},\n" +
		"NB_CHECK(kCheckPm, \"x\", at_x, x_holds);\n" +
		"static constexpr OpEntry kPMOps[] = {NB_PM_MECHANISMS(NB_PM_MECH_ENTRY) NB_PM_COMPUTES(NB_PM_COMPUTE_ENTRY)};\n"
	ops, problems := parseOps(map[string]string{"pm.cuh": good})
	wantProblems(t, problems, nil)
	if o := ops["rma.pm_a"]; o.Value != 100 || !o.Has(TraitLoadStore) || o.Has(TraitHost) || o.Code != "PmA" {
		t.Errorf("rma.pm_a read as %+v", o)
	}
	for _, c := range []struct {
		edit func(string) string
		want []string
	}{
		{func(s string) string { return strings.Replace(s, "X(PmA)", "X(PmA) X(PmB)", 1) }, []string{"a bytes-per-SM list names PmB, and no file has its struct"}},
		{func(s string) string { return strings.Replace(s, "  static constexpr bool sms = true;\n", "", 1) }, []string{"PmA: no static constexpr bool sms"}},
		{func(s string) string { return strings.Replace(s, "PmDst::peer;", "PmDst::far;", 1) }, []string{"PmA: its dst PmDst::far is not one of PmDst's peer, symmetric, lsa"}},
		{func(s string) string { return strings.Replace(s, "  static constexpr bool staged = false;\n", "", 1) }, []string{"PmA: no static constexpr bool staged"}},
		{func(s string) string { return strings.Replace(s, "PmSplit::chunks;", "PmSplit::rows;", 1) }, []string{"PmA: its split PmSplit::rows is not one of PmSplit's strided, chunks"}},
		{func(s string) string { return strings.Replace(s, " NB_PM_COMPUTES(NB_PM_COMPUTE_ENTRY)};", "};", 1) }, []string{"the bytes-per-SM table is not"}},
		{func(s string) string { return strings.Replace(s, "code = 105;", "code = 1;", 1) }, []string{"code 1 is both NB_OP_PUT and PmC"}},
		{func(s string) string { return strings.Replace(s, "code = 105;", "code = 100;", 1) }, []string{"code 100 is both PmA and PmC"}},
	} {
		_, problems := parseOps(map[string]string{"pm.cuh": c.edit(good)})
		wantProblems(t, problems, c.want)
	}
}
