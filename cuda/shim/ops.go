package shim

import (
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
)

// Op is one entry of the shim's dispatch table, as its sources (embedded
// in this package, the same ones build-shim compiles) declare it.
type Op struct {
	Name   string   // what Args.Op names: "rma.put", "lat.get", "coll.allreduce"
	Code   string   // the family's private code (NB_OP_PUT), for messages
	Value  int      // its value
	Family string   // the C family it belongs to (kRMA, kLat, ...)
	Check  string   // its check (what its result must be): a Check object of the shim (kCheckPut, ...)
	Traits []string // its traits (T_PAYLOAD, T_LOADSTORE, ...), as the entry states them
	Launch string   // the entry's launch function, as written (launch_bulk<NB_OP_PUT>)
	File   string   // the shim file that holds the entry
	Desc   string   // what it does, where its source says (an atomic's line): "atomic fetch_and clearing one bit"
	Atomic bool     // a line of NB_ATOMICS (atomics.cuh)
	// An atomic's counter types (its struct's NB_AMO_<TYPES> list), by
	// element size (Args.Elem): u64 and u32, or f64, f32 and f16.
	Counters []Counter
	// NeedsNVSHMEM is the NVSHMEM release whose headers have an atomic's
	// calls ("3.7": a shim built against an older one waives it); "" for
	// every release the shim builds against.
	NeedsNVSHMEM string
	// Calls are an atomic's NVSHMEM calls as the shim's waiver names them
	// (its types' NB_AMO_TYPES line): "nvshmemx_{half,float,double}_atomic_{add,fetch_add}".
	Calls string
}

// Counter is a counter type of an atomic: the dtype label its points carry
// (its digits are the type's bits, as the shim asserts) and its bytes.
type Counter struct {
	DType string
	Bytes int
}

// Floating reports whether an atomic's counters are floating-point (f16,
// f32, f64: NVSHMEM's nvshmemx_<T>_atomic_{add,fetch_add}).
func (o Op) Floating() bool {
	return len(o.Counters) > 0 && strings.HasPrefix(o.Counters[0].DType, "f")
}

// The traits an entry may state (common.cuh): what the Go side derives an
// operation's waivers, byte counts and floors from, stated once in the
// shim's table.
const (
	TraitPayload   = "T_PAYLOAD"   // moves args.size bytes per operation
	TraitLoadStore = "T_LOADSTORE" // only over a load/store mapping to the peer
	TraitCounters  = "T_COUNTERS"  // one counter per thread: a rate of CTAs × threads operations per iteration
	TraitRoundTrip = "T_ROUNDTRIP" // a round trip (compared with the in-run floor)
	TraitFloor     = "T_FLOOR"     // an in-run floor (a dependent-load chase)
	TraitNetwork   = "T_NETWORK"   // needs a network (GIN): an InfiniBand/RoCE NIC
	TraitPingPong  = "T_PINGPONG"  // both PEs run the kernel, each answering the other
	TraitChase     = "T_CHASE"     // walks a pointer chain (each address from the last result)
	TraitBlocks    = "T_BLOCKS"    // a collective whose output is one block per PE
	TraitNoOutput  = "T_NO_OUTPUT" // leaves nothing to check (the empty kernel)
	TraitMessages  = "T_MESSAGES"  // an issue rate: an iteration is one message per scope group
	TraitHost      = "T_HOST"      // issued from the host: no kernel of ours, no in-kernel timer
)

// Has reports whether the entry states the trait.
func (o Op) Has(trait string) bool { return slices.Contains(o.Traits, trait) }

// Kind is how the operation is measured, the prefix of its name: "rma"
// (PE 0 issues towards the peer), "lat" (one CTA, round trips), "coll"
// (every PE), "moe" (every PE: dispatch and combine) or "host" (every PE:
// host calls of NVSHMEM's API).
func (o Op) Kind() string { k, _, _ := strings.Cut(o.Name, "."); return k }

var (
	opsOnce sync.Once
	opsAll  map[string]Op
	opsErr  []string
)

var (
	reEntry = regexp.MustCompile(`\{\s*(NB_OP_[A-Z0-9_]+)\s*,\s*"([^"]*)"\s*,\s*&(\w+)\s*,\s*([A-Z0-9_| ]+?)\s*,\s*([\w<>]+)\s*,\s*([\w<>]+)\s*\}`)
	reCode  = regexp.MustCompile(`\b(NB_OP_[A-Z0-9_]+)\s*=\s*(\d+)`)
	// reAnyEntry: anything written like an entry, to find one reEntry cannot read (a field left out).
	reAnyEntry = regexp.MustCompile(`\{\s*(NB_OP_[A-Z0-9_]+)\s*,\s*"([^"]*)"[^}]*\}`)
	// reCheck: a check declared with NB_CHECK, or a Check object written out (whose corrupt may be nullptr).
	// An atomic is a line of NB_ATOMICS, X(name, Struct, "what"), made into
	// entries by the templates #define NB_AMO_<FORM>(name, F, what) {...}
	// (atomics.cuh): each line is one entry per template.
	reAtomics    = regexp.MustCompile(`(?s)#define NB_ATOMICS\(X\)(.*?)\n\n`)
	reAtomicLine = regexp.MustCompile(`X\(\s*(\w+)\s*,\s*(\w+)\s*,((?:\s*\\?\s*"[^"]*")+)\s*\)`) // what: one literal, or adjacent ones over lines
	reLiteral    = regexp.MustCompile(`"([^"]*)"`)
	// An atomic's struct names its counter types, NB_AMO(Struct, TYPES, ...);
	// the types are a list #define NB_AMO_<TYPES>(T) T(C type, label) ... and
	// the release of their calls, #define NB_AMO_<TYPES>_SINCE 307.
	reAmoStruct  = regexp.MustCompile(`(?m)^NB_AMO\(\s*(\w+)\s*,\s*(\w+)\s*,`)
	reAmoTypes   = regexp.MustCompile(`(?m)^#define NB_AMO_(\w+)\(T\)[ \t]+(.*)$`)
	reAmoType    = regexp.MustCompile(`T\(\s*(\w+)\s*,\s*([a-z]+)(\d+)\s*\)`)
	reAmoSince   = regexp.MustCompile(`(?m)^#define NB_AMO_(\w+)_SINCE[ \t]+(\d+)\b`)
	reAmoCalls   = regexp.MustCompile(`(?m)^NB_AMO_TYPES\((\w+),\s*"([^"]*)"\)`)
	reAtomicForm = regexp.MustCompile(`#define NB_AMO_\w+\(name, F, what\) \{\s*(NB_OP_[A-Z0-9_]+)\s*,\s*"(\w+)\." #name\s*,\s*&(\w+)\s*,\s*([A-Z0-9_| ]+?)\s*,\s*(\w+)<F>::check\s*,\s*(\w+)<F>\s*\}`)
	// A check template: template <typename F> struct Name { ... static constexpr Check check = {...}; }.
	reCheckTemplate = regexp.MustCompile(`(?s)template <typename F>\s*struct (\w+) \{(?:[^}]|\}[^;])*?static constexpr Check check = \{(.*?)\};`)
	// reBranch: a kernel branch on a code, `== NB_OP_X`, or a specialisation `struct Name<NB_OP_X>`.
	reBranch = regexp.MustCompile(`==\s*(NB_OP_[A-Z0-9_]+)\b|struct\s+\w+<(NB_OP_[A-Z0-9_]+)>`)
	reCheck  = regexp.MustCompile(`(?m)(?:^\s*NB_CHECK\(\s*(\w+)\s*,)|(?:static\s+constexpr\s+Check\s+(\w+)\s*=\s*\{([^}]*)\})`)
)

// CheckDecl is a check the shim declares: its name, the file, and whether
// the test can corrupt what it reads (false only for a check written out
// with a nullptr corrupt, which only an entry that leaves no output may name).
type CheckDecl struct {
	Name        string
	File        string
	Corruptible bool
}

// Checks lists the checks the shim's sources declare, by name.
func Checks() map[string]CheckDecl {
	files := Files()
	return parseChecks(files)
}

func parseChecks(files map[string]string) map[string]CheckDecl {
	out := map[string]CheckDecl{}
	for n, text := range files {
		// A check template is a check per atomic line: Name<Struct>.
		for _, m := range reCheckTemplate.FindAllStringSubmatch(text, -1) {
			for _, a := range atomicLines(text) {
				name := m[1] + "<" + a[2] + ">"
				out[name] = CheckDecl{Name: name, File: n, Corruptible: strings.Contains(m[2], "::corrupt")}
			}
		}
		for _, m := range reCheck.FindAllStringSubmatch(text, -1) {
			if m[1] != "" {
				out[m[1]] = CheckDecl{Name: m[1], File: n, Corruptible: true}
			} else if m[2] != "check" && m[2] != "name" { // a check template's member (above), NB_CHECK's own body
				f := topFields(m[3]) // what, verify, corrupt[, reset]
				out[m[2]] = CheckDecl{Name: m[2], File: n, Corruptible: len(f) > 2 && f[2] != "nullptr"}
			}
		}
	}
	return out
}

// readOps parses the dispatch tables and the families' code enums of the
// embedded shim sources. problems lists what the shim would get wrong at
// run time: an entry without its check (the compiler refuses it too), a
// check not declared or one the test cannot corrupt, a name twice, a code twice (the families share helpers that
// branch on codes), an entry whose code is not declared, a malformed or
// too long name, a trait that is not one, and an entry whose launch is a
// template of its code while no branch of the shim compares with that code
// (the kernel would run another operation's branch: the templates also
// refuse to compile an unhandled code).
func readOps() (map[string]Op, []string) { return parseOps(Files()) }

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
	code := func(name string, v int) {
		if prev, dup := codeOf[v]; dup && prev != name {
			problems = append(problems, "code "+strconv.Itoa(v)+" is both "+prev+" and "+name)
		}
		codeOf[v], values[name] = name, v
	}
	for _, n := range names {
		for _, m := range reCode.FindAllStringSubmatch(files[n], -1) {
			v, _ := strconv.Atoi(m[2])
			code(m[1], v)
		}
	}
	// Bytes per SM's entries are its lists expanded (cuda/shim/persm.go):
	// each struct states its code.
	pm := parsePerSM(files)
	problems = append(problems, pm.problems...)
	for _, o := range pm.entries {
		code(o.Code, o.Value)
	}
	checks := parseChecks(files)
	branches := branched(files)
	for _, n := range names {
		read := map[string]bool{}
		for _, m := range reEntry.FindAllStringSubmatch(files[n], -1) {
			read[m[0]] = true
		}
		for _, m := range reAnyEntry.FindAllStringSubmatch(files[n], -1) {
			if strings.HasSuffix(m[2], ".") { // "rma." #name: an atomic's entry template, expanded above
				if !reAtomicForm.MatchString(files[n]) || len(atomicLines(files[n])) == 0 {
					problems = append(problems, m[2]+"<name>: an entry template that no NB_AMO_<FORM>(name, F, what) line with NB_ATOMICS lines expands: "+m[0])
				}
				continue
			}
			if !read[m[0]] {
				problems = append(problems, m[2]+": not an entry {code, name, &family, traits, check, launch}: "+m[0])
			}
		}
		amo, lines := atomicEntries(files[n])
		counters, problem := atomicCounters(files[n])
		problems = append(problems, problem...)
		var found []Op
		for _, m := range reEntry.FindAllStringSubmatch(files[n]+"\n"+strings.Join(amo, "\n"), -1) {
			line, atomic := lines[m[2]]
			o := Op{Name: m[2], Code: m[1], Family: m[3], Check: m[5], Launch: m[6], File: n, Desc: line.desc, Atomic: atomic}
			if atomic {
				if c, ok := counters[line.strct]; ok {
					o.Counters, o.NeedsNVSHMEM, o.Calls = c.counters, c.needs, c.calls
				} else {
					problems = append(problems, o.Name+": its struct "+line.strct+" has no NB_AMO("+line.strct+", TYPES, ...) line with a NB_AMO_<TYPES>(T) list")
				}
			}
			for _, t := range strings.Split(m[4], "|") {
				switch t = strings.TrimSpace(t); {
				case t == "0":
				case strings.HasPrefix(t, "T_"):
					o.Traits = append(o.Traits, t)
				default:
					problems = append(problems, o.Name+": trait "+t+" is not a T_* name")
				}
			}
			v, ok := values[o.Code]
			if !ok {
				problems = append(problems, o.Name+": its code "+o.Code+" is not declared")
			}
			o.Value = v
			found = append(found, o)
		}
		for _, o := range pm.entries {
			if o.File == n {
				found = append(found, o)
			}
		}
		for _, o := range found {
			if _, dup := ops[o.Name]; dup {
				problems = append(problems, "the name "+o.Name+" is in the table twice")
			}
			if k := o.Kind(); (k != "rma" && k != "lat" && k != "coll" && k != "moe" && k != "host") || !strings.Contains(o.Name, ".") {
				problems = append(problems, o.Name+": a name is rma.*, lat.*, coll.*, moe.* or host.*")
			}
			if len(o.Name) >= OpNameLen {
				problems = append(problems, o.Name+": longer than the ABI's "+strconv.Itoa(OpNameLen-1)+" bytes")
			}
			if c, ok := checks[o.Check]; !ok {
				problems = append(problems, o.Name+": its check "+o.Check+" is not a declared Check")
			} else if !c.Corruptible && !o.Has(TraitNoOutput) {
				problems = append(problems, o.Name+": its check "+o.Check+" cannot be corrupted, and the entry is not T_NO_OUTPUT")
			}
			if strings.HasPrefix(o.Code, "NB_OP_") && strings.Contains(o.Launch, "<"+o.Code+">") && !branches[o.Code] { // a code's branch (a struct's launch is its members)
				problems = append(problems, o.Name+": its launch "+o.Launch+" is a template of "+o.Code+", which no kernel branch names (== "+o.Code+")")
			}
			ops[o.Name] = o
		}
	}
	return ops, problems
}

// topFields splits an initializer's body at its top-level commas (not those
// inside <>, () or a string), each field trimmed.
func topFields(body string) []string {
	var out []string
	depth, quoted, start := 0, false, 0
	for i, c := range body {
		switch {
		case c == '"':
			quoted = !quoted
		case quoted:
		case c == '<' || c == '(':
			depth++
		case c == '>' || c == ')':
			depth--
		case c == ',' && depth == 0:
			out = append(out, strings.TrimSpace(body[start:i]))
			start = i + 1
		}
	}
	return append(out, strings.TrimSpace(body[start:]))
}

// atomicLines are the X(name, Struct, "what") lines of a file's NB_ATOMICS
// (what joined from its literals).
func atomicLines(text string) [][]string {
	m := reAtomics.FindStringSubmatch(text)
	if m == nil {
		return nil
	}
	lines := reAtomicLine.FindAllStringSubmatch(m[1], -1)
	for _, l := range lines {
		var what strings.Builder
		for _, lit := range reLiteral.FindAllStringSubmatch(l[3], -1) {
			what.WriteString(lit[1])
		}
		l[3] = what.String()
	}
	return lines
}

// atomicLine is what an atomic's line says beside its name.
type atomicLine struct{ strct, desc string }

// atomicEntries makes the entries of a file's NB_ATOMICS lines, one per
// entry template, written out as entries are (for the checks below).
func atomicEntries(text string) (entries []string, lines map[string]atomicLine) {
	lines = map[string]atomicLine{}
	for _, f := range reAtomicForm.FindAllStringSubmatch(text, -1) {
		for _, a := range atomicLines(text) {
			name := f[2] + "." + a[1]
			entries = append(entries, fmt.Sprintf(`{%s, "%s", &%s, %s, %s<%s>, %s<%s>}`, f[1], name, f[3], f[4], f[5], a[2], f[6], a[2]))
			lines[name] = atomicLine{a[2], a[3]}
		}
	}
	return entries, lines
}

// counterTypes are the counters of an atomic struct's TYPES.
type counterTypes struct {
	counters []Counter
	needs    string // the release of the calls ("3.7"), "" for 0
	calls    string // the calls, as a waiver names them (NB_AMO_TYPES)
}

// atomicCounters reads, by struct, the counter types of a file's atomics:
// NB_AMO(Struct, TYPES, ...), its #define NB_AMO_<TYPES>(T) list and its
// NB_AMO_<TYPES>_SINCE. problems: a struct whose types have no list or no
// release, a label whose bits are no whole bytes.
func atomicCounters(text string) (map[string]counterTypes, []string) {
	lists := map[string][]Counter{}
	var problems []string
	for _, m := range reAmoTypes.FindAllStringSubmatch(text, -1) {
		var cs []Counter
		for _, t := range reAmoType.FindAllStringSubmatch(m[2], -1) {
			bits, _ := strconv.Atoi(t[3])
			if bits <= 0 || bits%8 != 0 {
				problems = append(problems, "NB_AMO_"+m[1]+": the label "+t[2]+t[3]+" is no whole number of bytes")
				continue
			}
			cs = append(cs, Counter{DType: t[2] + t[3], Bytes: bits / 8})
		}
		lists[m[1]] = cs
	}
	since := map[string]string{}
	for _, m := range reAmoSince.FindAllStringSubmatch(text, -1) {
		v, _ := strconv.Atoi(m[2])
		since[m[1]] = ""
		if v > 0 {
			since[m[1]] = fmt.Sprintf("%d.%d", v/100, v%100)
		}
	}
	calls := map[string]string{}
	for _, m := range reAmoCalls.FindAllStringSubmatch(text, -1) {
		calls[m[1]] = m[2]
	}
	out := map[string]counterTypes{}
	for _, m := range reAmoStruct.FindAllStringSubmatch(text, -1) {
		cs, ok := lists[m[2]]
		needs, known := since[m[2]]
		switch {
		case !ok || len(cs) == 0:
			problems = append(problems, m[1]+": its types "+m[2]+" have no #define NB_AMO_"+m[2]+"(T) T(C type, label) ... list")
		case !known:
			problems = append(problems, m[1]+": its types "+m[2]+" have no #define NB_AMO_"+m[2]+"_SINCE (the NVSHMEM release of the calls)")
		case calls[m[2]] == "":
			problems = append(problems, m[1]+": its types "+m[2]+" have no NB_AMO_TYPES("+m[2]+", \"the calls\") line")
		default:
			out[m[1]] = counterTypes{cs, needs, calls[m[2]]}
		}
	}
	return out, problems
}

// branched lists the codes some shim file names as a case: a kernel's
// `OP == NB_OP_X` branch, or a specialisation `struct Coll<NB_OP_X>` (one
// pass over the files: every process reads the table as it starts).
func branched(files map[string]string) map[string]bool {
	out := map[string]bool{}
	for _, text := range files {
		for _, m := range reBranch.FindAllStringSubmatch(text, -1) {
			out[m[1]+m[2]] = true
		}
	}
	return out
}

// Atomics are the operations of NB_ATOMICS of one kind ("rma": rates,
// "lat": round trips), by name.
func Atomics(kind string) []Op {
	var out []Op
	for _, o := range Ops() {
		if o.Atomic && o.Kind() == kind {
			out = append(out, o)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
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
