package shim

import (
	"slices"
	"testing"
)

// The shim's collectives, in NB_COLLECTIVES' order, each in its own file
// with its own check; only AllReduce takes every dtype.
func TestCollectivesAreOneFileAndOneLine(t *testing.T) {
	cs, problems := parseCollectives(Files(), Ops())
	for _, p := range problems {
		t.Error(p)
	}
	var names []string
	for _, c := range cs {
		names = append(names, c.Base)
		if c.Kind() != "coll" || c.File != "coll_"+c.Base+".cuh" || c.AllDTypes != (c.Base == "allreduce") {
			t.Errorf("%s read as %+v", c.Base, c)
		}
		if c.Has(TraitPayload) == (c.Base == "barrier" || c.Base == "sync" || c.Base == "teamsync") || c.Has(TraitBlocks) != (c.Base == "alltoall" || c.Base == "allgather" || c.Base == "reducescatter") {
			t.Errorf("%s: traits %v", c.Base, c.Traits)
		}
	}
	if want := []string{"allreduce", "allgather", "alltoall", "broadcast", "barrier", "reducescatter", "sync", "teamsync"}; !slices.Equal(names, want) {
		t.Errorf("collectives %v, want %v", names, want)
	}
	if got := Collectives(); len(got) != len(cs) {
		t.Errorf("Collectives() has %d, the parse %d", len(got), len(cs))
	}
}

// A collective whose file exists but whose line does not (its entry is in
// no table), a line without its file, an entry outside its file, a check
// borrowed from another collective: each is found.
func TestCollectiveProblemsAreFound(t *testing.T) {
	files := map[string]string{
		"collectives.cuh": `#define NB_COLLECTIVES(X) X(AllReduce) X(Broadcast) X(Gone) X(Stray)
static constexpr OpEntry kStray = {NB_OP_STRAY, "coll.stray", &kColl, T_PAYLOAD, kCheckSum, coll_launch<Stray>};`,
		"coll_allreduce.cuh": `enum { NB_OP_ALLREDUCE = 41 };
struct AllReduce {
  static constexpr bool all_dtypes = true;
};
NB_CHECK(kCheckSum, "sum", coll_output, coll_verify<AllReduce>);
static constexpr OpEntry kAllReduce = {NB_OP_ALLREDUCE, "coll.allreduce", &kColl, T_PAYLOAD, kCheckSum, coll_launch<AllReduce>};`,
		"coll_broadcast.cuh": `enum { NB_OP_BROADCAST = 42 };
struct Broadcast {
  static constexpr bool blocks = false;
};
static constexpr OpEntry kBroadcast = {NB_OP_BROADCAST, "coll.broadcast", &kColl, T_PAYLOAD, kCheckSum, coll_launch<Broadcast>};`,
		"coll_reducescatter.cuh": `enum { NB_OP_REDUCESCATTER = 46 };
struct ReduceScatter {
  static constexpr bool all_dtypes = true;
};
NB_CHECK(kCheckScattered, "block", coll_output, coll_verify<ReduceScatter>);
static constexpr OpEntry kReduceScatter = {NB_OP_REDUCESCATTER, "coll.reducescatter", &kColl, T_PAYLOAD | T_BLOCKS, kCheckScattered, coll_launch<ReduceScatter>};`,
	}
	files["collectives.cuh"] = "enum { NB_OP_STRAY = 47 };\n" + files["collectives.cuh"]
	ops, _ := parseOps(files)
	cs, problems := parseCollectives(files, ops)
	want := []string{
		"NB_COLLECTIVES names Gone, and no file has its entry kGone",
		"coll.stray: its entry is in collectives.cuh, not in its own file coll_stray.cuh",
		"coll.stray: no struct Stray in collectives.cuh",
		"coll.stray: its check kCheckSum is declared in coll_allreduce.cuh, not in its own file",
		"coll.stray: its check kCheckSum is coll.allreduce's too",
		"coll.broadcast: struct Broadcast does not say all_dtypes",
		"coll.broadcast: its check kCheckSum is declared in coll_allreduce.cuh, not in its own file",
		"coll.broadcast: its check kCheckSum is coll.allreduce's too",
		"coll.reducescatter (coll_reducescatter.cuh) is not in collectives.cuh's NB_COLLECTIVES: no table has it",
	}
	wantProblems(t, problems, want)
	if len(cs) != 3 || cs[0].Base != "allreduce" || !cs[0].AllDTypes || cs[1].Base != "broadcast" {
		t.Errorf("read %+v", cs)
	}
}
