package verdict_test

import (
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/nvshbench/nvshbench/record"
	"github.com/nvshbench/nvshbench/verdict"
)

// point is a matrix point of row id for the pair from → to on node host
// (GPUs numbered as PEs), its figure v (bytes/s, or seconds for latency/).
func point(id string, from, to int, host string, v float64, kind string) record.Point {
	metric, unit := record.MetricBandwidth, record.UnitBytesPerSec
	if strings.HasPrefix(id, "latency/") {
		metric, unit = record.MetricLatency, record.UnitSeconds
	}
	pk := record.PairSameNode
	if from == to {
		pk = record.PairLoopback
	}
	return record.Point{ID: id, Status: record.StatusOK,
		Params:  record.Params{Size: 1 << 28, Dir: "uni", Pair: fmt.Sprintf("%d:%d", from, to), Extra: map[string]string{"matrix": kind}},
		Pair:    &record.Pair{From: record.PairEnd{PE: from, GPU: from, Node: host}, To: record.PairEnd{PE: to, GPU: to, Node: host}, Kind: pk},
		Metrics: map[string]record.Summary{metric: {Median: v, Unit: unit}},
		Ceiling: &record.Limit{ID: "link/nvswitch", Value: 450e9}}
}

// A node of 4: one pair at 60 % of the others fails with its band named,
// the others pass; a round trip twice the others' fails; a waived row is
// listed once with its reason; a failed verification fails its pair.
func TestJudgeHoldsPairsToTheirNodesMedian(t *testing.T) {
	f := &record.File{Header: record.Header{GPUs: []record.GPU{{Name: "NVIDIA H200", Host: "n0"}}}}
	for a := 0; a < 4; a++ {
		for b := 0; b < 4; b++ {
			if a == b {
				continue
			}
			bw, lat := 300e9, 2e-6
			if a == 1 && b == 2 {
				bw = 180e9
			}
			if a == 3 && b == 0 {
				lat = 4e-6
			}
			f.Points = append(f.Points, point("rma/put/block", a, b, "n0", bw, "pair"), point("latency/put/block", a, b, "n0", lat, "pair"))
			w := point("rma/nccl-lsa/put/block", a, b, "n0", 0, "pair")
			w.Status, w.Reason, w.Metrics = record.StatusWaived, "NCCL refuses two ranks on one GPU", nil
			f.Points = append(f.Points, w)
		}
	}
	bad := point("rma/get/block", 2, 3, "n0", 100e9, "pair")
	bad.Status, bad.Reason = record.StatusFailedVerification, "3 of 9 checked elements wrong"
	f.Points = append(f.Points, bad)
	v, err := verdict.Judge(f, verdict.Options{})
	if err != nil {
		t.Fatal(err)
	}
	fails := map[string]string{}
	for _, s := range v.Pairs {
		if s.Level == verdict.Fail {
			fails[fmt.Sprintf("%d:%d", s.From, s.To)] = s.Findings[0].Reason + " | " + s.Findings[0].Band
		}
	}
	if len(fails) != 3 || !strings.Contains(fails["1:2"], "60 % of the median") || !strings.Contains(fails["1:2"], "300.0 GB/s") ||
		!strings.Contains(fails["3:0"], "latency/put/block") || !strings.Contains(fails["2:3"], "failed-verification") {
		t.Errorf("failing pairs %q", fails)
	}
	if v.Level != verdict.Fail || len(v.Waived) != 1 || v.Waived[0].Points != 12 {
		t.Errorf("level %s, waived %+v", v.Level, v.Waived)
	}
	if len(v.Nodes) != 1 || v.Nodes[0].Level != verdict.Fail {
		t.Errorf("nodes %+v", v.Nodes)
	}
}

// A bidirectional figure is held to both directions' ceiling; a
// unidirectional one above its ceiling warns.
func TestJudgeHoldsFiguresToTheCeiling(t *testing.T) {
	f := &record.File{}
	bi := point("rma/put/block", 0, 1, "n0", 600e9, "pair")
	bi.Params.Dir = "bidir"
	f.Points = append(f.Points, bi, point("rma/put/block", 1, 0, "n0", 500e9, "pair"))
	v, err := verdict.Judge(f, verdict.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range v.Pairs {
		want := verdict.Pass
		if s.From == 1 {
			want = verdict.Warn
		}
		if s.Level != want {
			t.Errorf("%s: %s, want %s (%+v)", s.Name, s.Level, want, s.Findings)
		}
	}
}

// A reference band of the run's GPU kind and link fails a figure below it, and
// names its source.
func TestJudgeHoldsFiguresToTheReferenceBand(t *testing.T) {
	f := &record.File{Header: record.Header{GPUs: []record.GPU{{Name: "NVIDIA H200", Host: "n0"}}}}
	f.Points = append(f.Points, point("rma/put/block", 0, 1, "n0", 200e9, "pair"))
	b, err := verdict.ParseBands([]byte(`{"source":"s","bands":[{"gpu":"NVIDIA H200","class":"nvlink","link":"nvswitch","id":"rma/put/block","size":268435456,"min":3e11,"source":"a committed run"}]}`), "b")
	if err != nil {
		t.Fatal(err)
	}
	v, err := verdict.Judge(f, verdict.Options{Bands: b})
	if err != nil {
		t.Fatal(err)
	}
	if s := v.Pairs[0]; s.Level != verdict.Fail || !strings.Contains(s.Findings[0].Band, "a committed run") {
		t.Errorf("%s: %+v", s.Level, s.Findings)
	}
}

// The straggler of at least half the points every PE timed fails; of
// fewer, warns.
func TestJudgeNamesTheStraggler(t *testing.T) {
	f := &record.File{}
	every := []record.PETime{{PE: 0}, {PE: 1}} // every PE's time kept (which, beside the straggler, is not read)
	for i := 0; i < 4; i++ {
		p := record.Point{ID: "collectives/allreduce/nccl", Status: record.StatusOK, Params: record.Params{Size: int64(1024 << i)}, PETimes: every}
		switch i {
		case 0, 1:
			p.Straggler = &record.Straggler{PE: 5, GPU: 5, Node: "n0", Ratio: 0.5}
		case 2:
			p.Straggler = &record.Straggler{PE: 2, GPU: 2, Node: "n0", Ratio: 1.4}
		}
		f.Points = append(f.Points, p)
	}
	// The floors beside them: timed by one PE, no straggler of theirs to
	// count (PE 5, the straggler of half the points every PE timed, fails).
	for _, id := range []string{"limit/chase-peer", "limit/chase-local"} {
		f.Points = append(f.Points, record.Point{ID: id, Status: record.StatusOK, Params: record.Params{Size: 8}})
	}
	v, err := verdict.Judge(f, verdict.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(v.Ranks) != 2 || v.Ranks[0].From != 2 || v.Ranks[0].Level != verdict.Warn || v.Ranks[1].From != 5 || v.Ranks[1].Level != verdict.Fail {
		for _, r := range v.Ranks {
			t.Logf("%s %s %+v", r.Name, r.Level, r.Findings)
		}
		t.Errorf("ranks judged wrong")
	}
}

// Several PEs on one GPU (--pes-per-gpu 4): their local copies and pairs
// are time-sliced, so a copy at 60 % of the others' is held to no band and
// the verdict says so; a failed verification still fails its pair.
func TestJudgeHoldsNoBandOnASharedGPU(t *testing.T) {
	f := &record.File{Header: record.Header{GPUs: []record.GPU{{Name: "NVIDIA H200", Host: "n0"}}}}
	onOneGPU := func(p record.Point) record.Point {
		p.Pair.From.GPU, p.Pair.To.GPU = 0, 0
		if p.Pair.Kind != record.PairLoopback {
			p.Pair.Kind = record.PairSameGPU
		}
		return p
	}
	for a := 0; a < 4; a++ {
		bw := 500e9
		if a == 2 {
			bw = 300e9
		}
		f.Points = append(f.Points, onOneGPU(point("limit/sm-copy", a, a, "n0", bw, "local")))
		for b := 0; b < 4; b++ {
			if a != b {
				f.Points = append(f.Points, onOneGPU(point("rma/put/block", a, b, "n0", bw/2, "pair")))
			}
		}
	}
	bad := onOneGPU(point("rma/get/block", 1, 3, "n0", 100e9, "pair"))
	bad.Status, bad.Reason = record.StatusFailedVerification, "3 of 9 checked elements wrong"
	f.Points = append(f.Points, bad)
	v, err := verdict.Judge(f, verdict.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range v.GPUs {
		if s.Level != verdict.Pass || s.Checked != 0 {
			t.Errorf("%s: %s, %d figure(s) held to a band: %+v", s.Name, s.Level, s.Checked, s.Findings)
		}
	}
	var failing []string
	for _, s := range v.Pairs {
		if s.Level != verdict.Pass {
			failing = append(failing, fmt.Sprintf("%d:%d %s", s.From, s.To, s.Level))
		}
	}
	if len(failing) != 1 || failing[0] != "1:3 FAIL" {
		t.Errorf("pairs not passing: %q, want the one that failed verification", failing)
	}
	if !strings.Contains(strings.Join(v.Notes, "\n"), "functional only: 16 figure(s) held to no band") {
		t.Errorf("notes %q", v.Notes)
	}
}

// The shipped bands come from a run whose link is not known (two H200s
// showing NV18: direct NVLinks, or a slice of an NVSwitch baseboard): on a
// healthy 8-GPU NVSwitch node whose round trips are a switch hop slower
// than that run's, they may warn, never fail. A band that names its link
// holds only pairs over that link: a direct-NVLink band says nothing of
// switched pairs, a switched one fails them.
func TestReferenceBandsHoldOnlyTheirLink(t *testing.T) {
	s := verdict.Shipped()
	var lat *verdict.Band
	for i := range s.Bands {
		if s.Bands[i].ID == "latency/put/block" {
			lat = &s.Bands[i]
		}
	}
	if lat == nil || lat.Link != "" {
		t.Fatalf("the shipped round-trip band: %+v", lat)
	}
	f := &record.File{Header: record.Header{GPUs: []record.GPU{{Name: lat.GPU, Host: "n0"}}}}
	for a := 0; a < 8; a++ {
		for b := 0; b < 8; b++ {
			if a != b { // every pair alike (healthy), each 1.4 × the band's round trip
				f.Points = append(f.Points, point("latency/put/block", a, b, "n0", lat.Max*1.4, "pair"))
			}
		}
	}
	for i := range f.Points {
		f.Points[i].Params.Size = 8
	}
	judge := func(b *verdict.Bands) *verdict.Verdict {
		t.Helper()
		v, err := verdict.Judge(f, verdict.Options{Bands: b})
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	if v := judge(s); v.Level != verdict.Warn || !strings.Contains(v.Pairs[0].Findings[0].Band, "not known") {
		t.Errorf("shipped bands on a switched node: %s, %+v", v.Level, v.Pairs[0].Findings)
	}
	band := func(link string) *verdict.Bands {
		b, err := verdict.ParseBands([]byte(fmt.Sprintf(`{"source":"s","bands":[{"gpu":%q,"class":"nvlink","link":%q,"id":"latency/put/block","size":8,"max":%g,"source":"a committed run"}]}`,
			lat.GPU, link, lat.Max)), "b")
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	if v := judge(band(record.LinkNVLink)); v.Level != verdict.Pass || v.Pairs[0].Checked != 1 {
		t.Errorf("a direct-NVLink band on switched pairs: %s, %d checked, %+v", v.Level, v.Pairs[0].Checked, v.Pairs[0].Findings)
	}
	if v := judge(band(record.LinkNVSwitch)); v.Level != verdict.Fail || !strings.Contains(v.Pairs[0].Findings[0].Band, "a committed run") {
		t.Errorf("a switched band on switched pairs: %s, %+v", v.Level, v.Pairs[0].Findings)
	}
	if _, err := verdict.ParseBands([]byte(`{"source":"s","bands":[{"gpu":"NVIDIA H200","class":"nvlink","link":"nvlinks","id":"latency/put/block","size":8,"max":1e-6,"source":"x"}]}`), "b"); err == nil {
		t.Error("a band over an unknown link parses")
	}
}

// Every key of the verdict's JSON (check --json, for schedulers) is named
// in docs/bring-up.md, and every key named there is one: a renamed or
// added field must be documented.
func TestVerdictJSONIsDocumented(t *testing.T) {
	doc, err := os.ReadFile("../docs/bring-up.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, _ := strings.Cut(string(doc), "## The verdict as JSON")
	section, _, _ = strings.Cut(section, "\n## ")
	f := verdict.Finding{Level: verdict.Warn, Row: "r", Value: 1, Unit: "u", Band: "b", Reason: "why"}
	s := &verdict.Subject{Kind: "pair", Name: "n", Node: "a", ToNode: "b", GPU: 1, From: 1, To: 2, Level: verdict.Warn, Findings: []verdict.Finding{f}, Checked: 1}
	v := verdict.Verdict{Level: verdict.Warn, Pairs: []*verdict.Subject{s}, GPUs: []*verdict.Subject{s}, Nodes: []*verdict.Subject{s},
		Ranks: []*verdict.Subject{s}, Job: s, SlowestNode: "a", Waived: []verdict.Waiver{{Row: "r", Reason: "x", Points: 1}}, Bands: "b", Notes: []string{"n"}}
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	keys := map[string]bool{}
	var walk func(x any)
	walk = func(x any) {
		switch x := x.(type) {
		case map[string]any:
			for k, y := range x {
				keys[k] = true
				walk(y)
			}
		case []any:
			for _, y := range x {
				walk(y)
			}
		}
	}
	var top any
	json.Unmarshal(data, &top)
	walk(top)
	for k := range keys {
		if !strings.Contains(section, "`"+k+"`") {
			t.Errorf("JSON key %q is not in docs/bring-up.md's JSON section", k)
		}
	}
	for _, m := range regexp.MustCompile("`([a-z_]+)`").FindAllStringSubmatch(section, -1) {
		if k := m[1]; !keys[k] && k != "pair" && k != "gpu" && k != "node" && k != "rank" && k != "job" {
			t.Errorf("docs/bring-up.md names %q, no key of the JSON", k)
		}
	}
}
