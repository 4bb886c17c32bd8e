package shim

import (
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// PerSMMechanism is a bytes-per-SM transfer mechanism as the shim declares
// it (pm_mech.cuh): a struct and a word of NB_PM_MECHANISMS, whose facts
// the Go side reads here, once, as it reads the collectives.
type PerSMMechanism struct {
	Struct    string // "PmSt"
	Op        string // its entry's name: "rma.pm_st"
	Code      int    // its code: a partner's Args.Impl
	Dst       string // where its bytes land: "peer" (nvshmem_ptr), "symmetric" (NVSHMEM names the PE), "lsa" (NCCL's window)
	LoadStore bool   // it needs a load/store mapping to the peer
	SMs       bool   // it runs on a budget of SMs (false: no SM of ours, the copy engine)
	Align     int64  // the sizes it moves are multiples of it
	// Split is how a budget's CTAs share a launch's bytes (a mechanism on
	// SMs; "" for one without): "strided" (every thread of the budget
	// takes every so many 16-byte words of the whole buffer), "chunks" (a
	// contiguous run a CTA, starting at a multiple of the grain).
	Split string
	// Staged: its bytes pass through stages in a CTA's shared memory (TMA):
	// its stage-offset row places them off a 128-byte line.
	Staged bool
}

// PerSMCompute is a compute kernel run beside a transfer (NB_PM_COMPUTES).
type PerSMCompute struct {
	Struct string // "PmFma"
	Op     string // "rma.pm_fma"
	Code   int
}

var (
	reMechList    = regexp.MustCompile(`#define\s+NB_PM_MECHANISMS\(X\)((?:\s*X\(\w+\))+)`)
	reComputeList = regexp.MustCompile(`#define\s+NB_PM_COMPUTES\(X\)((?:\s*X\(\w+\))+)`)
	rePmCode      = regexp.MustCompile(`static\s+constexpr\s+int\s+code\s*=\s*(\d+)\s*;`)
	rePmOp        = regexp.MustCompile(`static\s+constexpr\s+const\s+char\s*\*\s*op\s*=\s*"([^"]*)"\s*;`)
	rePmDst       = regexp.MustCompile(`static\s+constexpr\s+PmDst\s+dst\s*=\s*PmDst::(\w+)\s*;`)
	rePmLoadStore = regexp.MustCompile(`static\s+constexpr\s+bool\s+loadstore\s*=\s*(true|false)\s*;`)
	rePmSMs       = regexp.MustCompile(`static\s+constexpr\s+bool\s+sms\s*=\s*(true|false)\s*;`)
	rePmAlign     = regexp.MustCompile(`static\s+constexpr\s+int64_t\s+align\s*=\s*(\d+)\s*;`)
	rePmSplit     = regexp.MustCompile(`static\s+constexpr\s+PmSplit\s+split\s*=\s*PmSplit::(\w+)\s*;`)
	rePmStaged    = regexp.MustCompile(`static\s+constexpr\s+bool\s+staged\s*=\s*(true|false)\s*;`)
	rePmSplits    = regexp.MustCompile(`enum\s+class\s+PmSplit\s*\{([^}]*)\}`)
	rePmDstKinds  = regexp.MustCompile(`enum\s+class\s+PmDst\s*\{([^}]*)\}`)
	// The table's rows: one entry template a list, and the table made of
	// the lists expanded over them.
	reMechEntry    = regexp.MustCompile(`#define\s+NB_PM_MECH_ENTRY\(M\)\s*\{\s*M::code\s*,\s*M::op\s*,\s*&(\w+)\s*,\s*pm_traits<M>\(\)\s*,\s*(\w+)\s*,\s*(\w+)<M>\s*\}`)
	reComputeEntry = regexp.MustCompile(`#define\s+NB_PM_COMPUTE_ENTRY\(C\)\s*\{\s*C::code\s*,\s*C::op\s*,\s*&(\w+)\s*,\s*0\s*,\s*(\w+)\s*,\s*(\w+)<C>\s*\}`)
	rePmTable      = regexp.MustCompile(`OpEntry\s+\w+\[\]\s*=\s*\{\s*NB_PM_MECHANISMS\(NB_PM_MECH_ENTRY\)\s*NB_PM_COMPUTES\(NB_PM_COMPUTE_ENTRY\)\s*\}`)
)

// perSM is what the shim's sources declare of bytes per SM: the two lists
// in their order, the entries they make, and what is wrong with them.
type perSM struct {
	mechs    []PerSMMechanism
	computes []PerSMCompute
	entries  []Op
	problems []string
}

var (
	perSMOnce sync.Once
	perSMAll  perSM
)

func readPerSM() perSM {
	perSMOnce.Do(func() { perSMAll = parsePerSM(Files()) })
	return perSMAll
}

// PerSMMechanisms lists the shim's bytes-per-SM mechanisms in
// NB_PM_MECHANISMS' order (the order readers show them).
func PerSMMechanisms() []PerSMMechanism { return slices.Clone(readPerSM().mechs) }

// PerSMComputes lists the shim's compute kernels in NB_PM_COMPUTES' order.
func PerSMComputes() []PerSMCompute { return slices.Clone(readPerSM().computes) }

// parsePerSM reads the lists, their structs and the entry templates of the
// shim files (name → text). problems names what breaks the rule "a struct
// and a word of the list": a word without its struct, a struct without a
// fact the Go side reads (or with a destination PmDst does not have), and
// a table that is not the lists expanded over their entry templates.
func parsePerSM(files map[string]string) perSM {
	var out perSM
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	slices.Sort(names)
	bodies := map[string]string{} // struct → body
	var mechList, compList []string
	var mechEntry, compEntry []string // family, check, launch template
	entryFile, tabled := "", false
	var dsts, splits []string
	for _, n := range names {
		text := files[n]
		for _, s := range reStruct.FindAllStringSubmatch(text, -1) {
			bodies[s[1]] = s[2]
		}
		if m := reMechList.FindStringSubmatch(text); m != nil {
			mechList = listWords(m[1])
		}
		if m := reComputeList.FindStringSubmatch(text); m != nil {
			compList = listWords(m[1])
		}
		if m := reMechEntry.FindStringSubmatch(text); m != nil {
			mechEntry, entryFile = m[1:], n
		}
		if m := reComputeEntry.FindStringSubmatch(text); m != nil {
			compEntry = m[1:]
		}
		tabled = tabled || rePmTable.MatchString(text)
		if m := rePmDstKinds.FindStringSubmatch(text); m != nil {
			for _, k := range strings.Split(m[1], ",") {
				dsts = append(dsts, strings.TrimSpace(k))
			}
		}
		if m := rePmSplits.FindStringSubmatch(text); m != nil {
			for _, k := range strings.Split(m[1], ",") {
				splits = append(splits, strings.TrimSpace(k))
			}
		}
	}
	if mechList == nil && compList == nil {
		return out // no bytes-per-SM family in these sources
	}
	bad := func(s string) { out.problems = append(out.problems, s) }
	if mechEntry == nil || compEntry == nil || !tabled {
		bad("the bytes-per-SM table is not NB_PM_MECHANISMS(NB_PM_MECH_ENTRY) NB_PM_COMPUTES(NB_PM_COMPUTE_ENTRY) over the entry templates {K::code, K::op, &family, traits, check, launch<K>}: its rows are not the lists'")
	}
	fact := func(st, body string, re *regexp.Regexp, what string) string {
		m := re.FindStringSubmatch(body)
		if m == nil {
			bad(st + ": no " + what)
			return ""
		}
		return m[1]
	}
	common := func(st string) (body string, code int, op string, ok bool) {
		body, ok = bodies[st]
		if !ok {
			bad("a bytes-per-SM list names " + st + ", and no file has its struct")
			return "", 0, "", false
		}
		code, _ = strconv.Atoi(fact(st, body, rePmCode, "static constexpr int code"))
		op = fact(st, body, rePmOp, "static constexpr const char *op")
		return body, code, op, true
	}
	for _, st := range mechList {
		body, code, op, ok := common(st)
		if !ok {
			continue
		}
		m := PerSMMechanism{Struct: st, Op: op, Code: code, Dst: fact(st, body, rePmDst, "static constexpr PmDst dst"),
			LoadStore: fact(st, body, rePmLoadStore, "static constexpr bool loadstore") == "true",
			SMs:       fact(st, body, rePmSMs, "static constexpr bool sms") == "true"}
		m.Align, _ = strconv.ParseInt(fact(st, body, rePmAlign, "static constexpr int64_t align"), 10, 64)
		if m.Dst != "" && !slices.Contains(dsts, m.Dst) {
			bad(st + ": its dst PmDst::" + m.Dst + " is not one of PmDst's " + strings.Join(dsts, ", "))
		}
		if m.SMs { // a kernel side: how its CTAs share the bytes, and whether it stages them
			m.Split = fact(st, body, rePmSplit, "static constexpr PmSplit split")
			m.Staged = fact(st, body, rePmStaged, "static constexpr bool staged") == "true"
			if m.Split != "" && !slices.Contains(splits, m.Split) {
				bad(st + ": its split PmSplit::" + m.Split + " is not one of PmSplit's " + strings.Join(splits, ", "))
			}
		}
		out.mechs = append(out.mechs, m)
		if mechEntry != nil {
			traits := []string{TraitPayload}
			if m.LoadStore {
				traits = append(traits, TraitLoadStore)
			}
			if !m.SMs {
				traits = append(traits, TraitHost)
			}
			out.entries = append(out.entries, Op{Name: op, Code: st, Value: code, Family: mechEntry[0], Check: mechEntry[1],
				Launch: mechEntry[2] + "<" + st + ">", Traits: traits, File: entryFile})
		}
	}
	for _, st := range compList {
		_, code, op, ok := common(st)
		if !ok {
			continue
		}
		out.computes = append(out.computes, PerSMCompute{Struct: st, Op: op, Code: code})
		if compEntry != nil {
			out.entries = append(out.entries, Op{Name: op, Code: st, Value: code, Family: compEntry[0], Check: compEntry[1],
				Launch: compEntry[2] + "<" + st + ">", File: entryFile})
		}
	}
	return out
}

// listWords are the X(word) items of a list's body.
func listWords(body string) []string {
	var out []string
	for _, it := range reCollItem.FindAllStringSubmatch(body, -1) {
		out = append(out, it[1])
	}
	return out
}
