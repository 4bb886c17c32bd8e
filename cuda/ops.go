package cuda

import (
	"io/fs"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
)

// Op is one entry of the shim's dispatch table, as its sources (embedded
// in this package, the same ones build-shim compiles) declare it.
type Op struct {
	Name   string // what Args.Op names: "rma.put", "lat.get", "coll.allreduce"
	Code   string // the family's private code (NB_OP_PUT), for messages
	Value  int    // its value
	Family string // the C family it belongs to (kRMA, kLat, ...)
	Lands  string // where its result lands (LANDS_COUNTERS: one counter per thread, an atomic rate)
	File   string // the shim file that holds the entry
}

// Kind is how the operation is measured, the prefix of its name: "rma"
// (PE 0 issues towards the peer), "lat" (one CTA, round trips) or "coll"
// (every PE).
func (o Op) Kind() string { k, _, _ := strings.Cut(o.Name, "."); return k }

var (
	opsOnce sync.Once
	opsAll  map[string]Op
	opsErr  []string
)

var (
	reEntry = regexp.MustCompile(`\{\s*(NB_OP_[A-Z0-9_]+)\s*,\s*"([^"]*)"\s*,\s*&(\w+)\s*,\s*(\w+)\s*,`)
	reCode  = regexp.MustCompile(`\b(NB_OP_[A-Z0-9_]+)\s*=\s*(\d+)`)
)

// readOps parses the dispatch tables and the families' code enums of the
// embedded shim sources. problems lists what the shim would get wrong at
// run time: a name twice, a code twice (the families share helpers that
// branch on codes), an entry whose code is not declared, a malformed or
// too long name.
func readOps() (map[string]Op, []string) {
	files := map[string]string{}
	names, _ := fs.Glob(shimSources, "shim/*")
	for _, n := range names {
		b, _ := shimSources.ReadFile(n)
		files[strings.TrimPrefix(n, "shim/")] = string(b)
	}
	return parseOps(files)
}

// parseOps reads the tables and codes of the shim files (name → text).
func parseOps(files map[string]string) (map[string]Op, []string) {
	ops := map[string]Op{}
	var problems []string
	values := map[string]int{}
	codeOf := map[int]string{}
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		for _, m := range reCode.FindAllStringSubmatch(files[n], -1) {
			v, _ := strconv.Atoi(m[2])
			if prev, dup := codeOf[v]; dup && prev != m[1] {
				problems = append(problems, "code "+m[2]+" is both "+prev+" and "+m[1])
			}
			codeOf[v], values[m[1]] = m[1], v
		}
	}
	for _, n := range names {
		for _, m := range reEntry.FindAllStringSubmatch(files[n], -1) {
			o := Op{Name: m[2], Code: m[1], Family: m[3], Lands: m[4], File: n}
			v, ok := values[o.Code]
			if !ok {
				problems = append(problems, o.Name+": its code "+o.Code+" is not declared")
			}
			o.Value = v
			if _, dup := ops[o.Name]; dup {
				problems = append(problems, "the name "+o.Name+" is in the table twice")
			}
			if k := o.Kind(); (k != "rma" && k != "lat" && k != "coll") || !strings.Contains(o.Name, ".") {
				problems = append(problems, o.Name+": a name is rma.*, lat.* or coll.*")
			}
			if len(o.Name) >= OpNameLen {
				problems = append(problems, o.Name+": longer than the ABI's "+strconv.Itoa(OpNameLen-1)+" bytes")
			}
			ops[o.Name] = o
		}
	}
	return ops, problems
}

// Ops is the shim's dispatch table by name.
func Ops() map[string]Op {
	opsOnce.Do(func() { opsAll, opsErr = readOps() })
	return opsAll
}

// LookupOp finds an operation of the shim's table by name.
func LookupOp(name string) (Op, bool) {
	o, ok := Ops()[name]
	return o, ok
}
