package report

import (
	"fmt"
	"sort"
	"strings"

	"github.com/nvshbench/nvshbench/internal/decide"
	"github.com/nvshbench/nvshbench/internal/table"
	"github.com/nvshbench/nvshbench/internal/units"
	"github.com/nvshbench/nvshbench/record"
)

// tableIIAlgos: per collective, NVSHMEM's algorithms as its device code
// chooses among them (src/include/non_abi/device/coll/*.cuh), which the
// paper's Table II lists with their costs: shown where this file has no
// forced point of the collective. A paraphrase, not the paper's words.
var tableIIAlgos = []struct{ coll, algos string }{
	{"allreduce", "NVLS one-shot (multimem ld_reduce) and two-shot (reduce-scatter + all-gather) where the team has multicast; else fcollect-based for small block-scope sums, recursive exchange where the scratch holds it, segmented reduce otherwise"},
	{"allgather", "LL (8-byte flag + data) all-push up to FCOLLECT_LL_THRESHOLD, LL128, NVLS one-shot and NVLS-LL with multicast, P2P one-shot all-push"},
	{"broadcast", "put-to-all + barrier, hierarchical LL, k-ary LL tree (up to 16 KiB by default), flat non-LL tree"},
	{"reducescatter", "NVLS one-shot with multicast, else P2P one-shot all-push"},
}

// hasForcedAlgos: some point of the file forced one of NVSHMEM's
// collective algorithms (run --nvshmem-algos).
func hasForcedAlgos(f *record.File) bool {
	for i := range f.Points {
		if f.Points[i].Params.Extra["nvshmem_algo"] != "" {
			return true
		}
	}
	return false
}

type algoKey struct {
	coll, launch, dtype, mode string
	size                      int64
}

func (k algoKey) series() algoKey { k.size = 0; return k }

// tableII is the paper's Table II, measured: per collective of NVSHMEM's
// device rows (nvshmem-block) and size, NVSHMEM's own choice beside each
// algorithm forced through its variable, and which is fastest by the
// decision rule (a winner only beyond the margin and the noise, else a
// tie); NVSHMEM's algorithms in words for a collective with no forced
// point.
func tableII(f *record.File, tag string, rule decide.Rule) table.Table {
	t := table.Table{Title: "NVSHMEM's collective algorithms (the paper's Table II), measured: µs per operation" + tag,
		Columns: []string{"collective", "launch", "dtype", "size", "NVSHMEM's choice", "forced", "fastest forced", "fastest", "or why not"}}
	t.Right = columnFlags(t.Columns, "size", "NVSHMEM's choice")
	t.Long = columnFlags(t.Columns, "forced", "or why not")
	rows := map[algoKey]map[string]*record.Point{}
	var keys []algoKey
	seen := map[string]bool{}
	for i := range f.Points {
		p := &f.Points[i]
		parts := strings.Split(p.ID, "/")
		if len(parts) != 3 || parts[0] != "collectives" || parts[2] != "nvshmem-block" {
			continue
		}
		k := algoKey{parts[1], p.Params.Launch, p.Params.DType, p.Params.Mode, p.Params.Size}
		if rows[k] == nil {
			rows[k] = map[string]*record.Point{}
			keys = append(keys, k)
		}
		name := p.Params.Extra["nvshmem_algo"]
		if name == "" {
			name = "default"
		} else {
			seen[k.coll] = true
		}
		rows[k][name] = p
	}
	sort.Slice(keys, func(i, j int) bool {
		a, b := keys[i], keys[j]
		for _, c := range [][2]string{{a.coll, b.coll}, {a.launch, b.launch}, {a.dtype, b.dtype}, {a.mode, b.mode}} {
			if c[0] != c[1] {
				return c[0] < c[1]
			}
		}
		return a.size < b.size
	})
	// The families of each series (all algorithms, the forced ones): the
	// sizes the rule judges (decide.Family).
	all, forcedOnly := map[algoKey][][]decide.Entry{}, map[algoKey][][]decide.Entry{}
	for _, k := range keys {
		var es, fs []decide.Entry
		for n, p := range rows[k] {
			if timed(p) {
				es = append(es, entryOf(n, p))
				if n != "default" {
					fs = append(fs, entryOf(n, p))
				}
			}
		}
		all[k.series()] = append(all[k.series()], es)
		forcedOnly[k.series()] = append(forcedOnly[k.series()], fs)
	}
	lat := func(p *record.Point) float64 { return p.Metrics[record.MetricLatency].Median }
	for _, k := range keys {
		if !seen[k.coll] {
			continue // no forced point: the collective's words below
		}
		r := rows[k]
		var names []string
		for n := range r {
			if n != "default" {
				names = append(names, n)
			}
		}
		sort.Strings(names)
		var forced, why []string
		var entries, forcedEntries []decide.Entry
		def := table.Str("")
		if p := r["default"]; timed(p) {
			def = table.Sig(lat(p)/us, 3)
			entries = append(entries, entryOf("default", p))
		} else if p != nil {
			why = append(why, "default: "+string(p.Status)+": "+p.Reason)
		}
		for _, n := range names {
			p := r[n]
			if !timed(p) {
				why = append(why, n+": "+string(p.Status)+": "+p.Reason)
				continue
			}
			forced = append(forced, fmt.Sprintf("%s %.3g", n, lat(p)/us))
			entries = append(entries, entryOf(n, p))
			forcedEntries = append(forcedEntries, entryOf(n, p))
		}
		fastestForced, fastest := "", ""
		switch len(forcedEntries) {
		case 0:
		case 1:
			fastestForced = forcedEntries[0].Name + " (alone)"
		default:
			fastestForced = rule.Decide(forcedEntries, decide.Family(forcedOnly[k.series()])).Label()
		}
		if len(entries) >= 2 {
			fastest = rule.Decide(entries, decide.Family(all[k.series()])).Label()
		}
		t.Rows = append(t.Rows, []table.Cell{table.Str(k.coll), table.Str(launchMode(k)), table.Str(k.dtype), table.Str(units.Bytes(k.size)),
			def, table.Str(strings.Join(forced, ", ")), table.Str(fastestForced), table.Str(fastest), table.Str(strings.Join(why, "; "))})
	}
	for _, c := range tableIIAlgos {
		if seen[c.coll] {
			continue
		}
		t.Rows = append(t.Rows, []table.Cell{table.Str(c.coll), table.Str("–"), table.Str("–"), table.Str("–"), table.Str("–"), table.Str("–"),
			table.Str("–"), table.Str("–"), table.Str("no forced point in this file; NVSHMEM's algorithms: " + c.algos)})
	}
	t.Notes = append(t.Notes,
		"rows: NVSHMEM's device-side block-scope collectives (collectives/*/nvshmem-block), NVSHMEM's own choice (default) beside each algorithm forced through NVSHMEM's variable at nvshmem_init (run --nvshmem-algos; params.env names it); µs: the median per operation",
		"fastest forced: among the forced algorithms; fastest: among all, NVSHMEM's choice included; "+rule.Describe()+"; m: the sizes of the row's collective, launch and dtype that are judged (not judged: a point cache-served or marked for a second look)",
		"an algorithm NVSHMEM cannot run there (NVLS without multicast, LL above its scratch) is waived or left out; where NVSHMEM's choice ties a forced algorithm, that is likely what it picked",
		"algorithms in words: NVSHMEM's device code (src/include/non_abi/device/coll/), which the paper's Table II lists with their costs; a paraphrase, not the paper's text")
	return t
}

// launchMode names a row's launch: per-op or fused, and graph where its
// iterations were captured.
func launchMode(k algoKey) string {
	if k.mode != "" {
		return k.launch + " " + k.mode
	}
	return k.launch
}
