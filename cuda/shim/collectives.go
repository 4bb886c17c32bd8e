package shim

import (
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
)

// Collective is one of the shim's collectives: its entry in the dispatch
// table and what its file (cuda/shim/coll_<name>.cuh) says of it. The
// suites and the model list the collectives from here, in the order of
// collectives.cuh's NB_COLLECTIVES: a collective is one file and one line
// there, and nothing in Go to keep in step but its suite's registration.
type Collective struct {
	Op
	Base      string // the name without its kind: "allreduce"
	Struct    string // its struct in the file and in NB_COLLECTIVES: "AllReduce"
	AllDTypes bool   // float, half and bf16 (its struct's all_dtypes); else float only
}

var (
	// reCollList: collectives.cuh's `#define NB_COLLECTIVES(X) X(AllReduce) X(AllGather) ...`.
	reCollList = regexp.MustCompile(`#define\s+NB_COLLECTIVES\(X\)((?:\s*X\(\w+\))+)`)
	reCollItem = regexp.MustCompile(`X\((\w+)\)`)
	// reNamedEntry: an entry written as a variable of its own, `static constexpr OpEntry kAllReduce = {NB_OP_..., "coll.allreduce", ...}`.
	reNamedEntry = regexp.MustCompile(`static\s+constexpr\s+OpEntry\s+(\w+)\s*=\s*\{\s*NB_OP_[A-Z0-9_]+\s*,\s*"([^"]*)"`)
	reStruct     = regexp.MustCompile(`(?s)struct\s+(\w+)\s*\{(.*?)\n\};`)
	reAllDTypes  = regexp.MustCompile(`static\s+constexpr\s+bool\s+all_dtypes\s*=\s*(true|false)\s*;`)
)

var (
	collOnce sync.Once
	collAll  []Collective
)

// Collectives lists the shim's collectives in their registration order.
func Collectives() []Collective {
	collOnce.Do(func() { collAll, _ = parseCollectives(Files(), Ops()) })
	return slices.Clone(collAll)
}

// parseCollectives reads the collectives of the shim files (name → text),
// given their table (ops). problems lists what breaks the rule "one file,
// one line": an entry of kind coll that NB_COLLECTIVES does not name (it
// is in no table the shim dispatches), a name in the list without its
// entry k<Struct>, an entry outside its own file coll_<name>.cuh, a
// collective without its struct or its all_dtypes, and a check that is not
// declared in the collective's file or that two collectives share.
func parseCollectives(files map[string]string, ops map[string]Op) ([]Collective, []string) {
	var problems []string
	m := reCollList.FindStringSubmatch(files["collectives.cuh"])
	if m == nil {
		return nil, []string{"collectives.cuh: no #define NB_COLLECTIVES(X) list"}
	}
	entryVar := map[string]string{} // k<Struct> → op name
	for _, text := range files {
		for _, e := range reNamedEntry.FindAllStringSubmatch(text, -1) {
			entryVar[e[1]] = e[2]
		}
	}
	checks := parseChecks(files)
	var out []Collective
	listed := map[string]bool{}
	checkOf := map[string]string{}
	for _, it := range reCollItem.FindAllStringSubmatch(m[1], -1) {
		st := it[1]
		name, ok := entryVar["k"+st]
		if !ok {
			problems = append(problems, "NB_COLLECTIVES names "+st+", and no file has its entry k"+st)
			continue
		}
		op, ok := ops[name]
		if !ok || op.Kind() != "coll" {
			problems = append(problems, "k"+st+" ("+name+") is not a collective entry of the table")
			continue
		}
		listed[name] = true
		c := Collective{Op: op, Base: strings.TrimPrefix(name, "coll."), Struct: st}
		if want := "coll_" + c.Base + ".cuh"; op.File != want {
			problems = append(problems, name+": its entry is in "+op.File+", not in its own file "+want)
		}
		body := ""
		for _, s := range reStruct.FindAllStringSubmatch(files[op.File], -1) {
			if s[1] == st {
				body = s[2]
			}
		}
		if body == "" {
			problems = append(problems, name+": no struct "+st+" in "+op.File)
		} else if d := reAllDTypes.FindStringSubmatch(body); d == nil {
			problems = append(problems, name+": struct "+st+" does not say all_dtypes")
		} else {
			c.AllDTypes = d[1] == "true"
		}
		if ck, ok := checks[op.Check]; ok && ck.File != op.File {
			problems = append(problems, name+": its check "+op.Check+" is declared in "+ck.File+", not in its own file")
		}
		if other, dup := checkOf[op.Check]; dup {
			problems = append(problems, name+": its check "+op.Check+" is "+other+"'s too")
		} else {
			checkOf[op.Check] = name
		}
		out = append(out, c)
	}
	var unlisted []string
	for name, op := range ops {
		if op.Kind() == "coll" && !listed[name] {
			unlisted = append(unlisted, name+" ("+op.File+") is not in collectives.cuh's NB_COLLECTIVES: no table has it")
		}
	}
	sort.Strings(unlisted)
	return out, append(problems, unlisted...)
}
