package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nvshbench/nvshbench/harness"
	"github.com/nvshbench/nvshbench/plots"
	"github.com/nvshbench/nvshbench/record"
	"github.com/nvshbench/nvshbench/verdict"
)

// checkFake runs check --json on a fake cluster and reads its verdict.
func checkFake(t *testing.T, gpus, nodes int, topo string, extra ...string) (*verdict.Verdict, string, int, string) {
	t.Helper()
	fakeCluster(t, gpus, nodes, topo)
	out := filepath.Join(t.TempDir(), "check.jsonl")
	args := append([]string{"check", "--shim", "fake", "--json", "--matrix-size", "128M", "--timeout", "30s", "--out", out}, extra...)
	stdout, stderr, code := nvshbench(t, args...)
	var v verdict.Verdict
	if code == exitOK || code == exitCheckFail {
		if err := json.Unmarshal([]byte(stdout), &v); err != nil {
			t.Fatalf("exit %d, verdict: %v\n%s\n%s", code, err, stdout, stderr)
		}
	}
	return &v, out, code, stderr
}

func named(ss []*verdict.Subject, l verdict.Level) []string {
	var out []string
	for _, s := range ss {
		if s.Level == l {
			out = append(out, s.Name)
		}
	}
	return out
}

// A healthy fake node of 8 GPUs passes: every GPU, all 56 pairs, the node.
func TestCheckPassesAHealthyNode(t *testing.T) {
	v, out, code, stderr := checkFake(t, 8, 1, "")
	if code != exitOK || v.Level != verdict.Pass {
		t.Fatalf("exit %d, %s: %s", code, v.Level, stderr)
	}
	if len(v.Pairs) != 56 || len(v.GPUs) != 8 || len(v.Nodes) != 1 {
		t.Errorf("%d pairs, %d GPUs, %d nodes judged", len(v.Pairs), len(v.GPUs), len(v.Nodes))
	}
	for _, s := range append(append(v.Pairs, v.GPUs...), v.Nodes...) {
		if s.Checked == 0 {
			t.Errorf("%s: no figure held to a band", s.Name)
		}
	}
	// The results file is a run's, and --judge gives the same verdict.
	stdout, _, code := nvshbench(t, "check", "--judge", out, "--json")
	var again verdict.Verdict
	if code != exitOK || json.Unmarshal([]byte(stdout), &again) != nil || again.Level != verdict.Pass || len(again.Pairs) != 56 {
		t.Errorf("--judge: exit %d, %s", code, stdout)
	}
	// The matrix's bandwidth points run fixed iterations (a GiB a launch,
	// no calibration: the matrix's time on a real node); its round trips
	// and the collectives stay calibrated.
	f, err := harness.Reader().ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	fixed, calibrated := 0, 0
	for _, p := range f.Points {
		switch {
		case p.Params.Extra[harness.MatrixKey] != "" && !strings.HasPrefix(p.ID, "latency/"):
			fixed++
			if p.Iters != harness.MatrixIters(128<<20) {
				t.Errorf("%s %s: %d iterations a launch, want %d", p.ID, p.Params.Pair, p.Iters, harness.MatrixIters(128<<20))
			}
		case p.Iters == harness.MatrixIters(128<<20):
			t.Errorf("%s %s: %d iterations, the matrix's fixed count", p.ID, p.Params.Pair, p.Iters)
		default:
			calibrated++
		}
	}
	if fixed < 56*7 || calibrated < 56*4 {
		t.Errorf("%d matrix bandwidth points, %d others", fixed, calibrated)
	}
}

// A link degraded to 60 % is the one pair that fails (both directions of
// it); no GPU is blamed.
func TestCheckFailsTheDegradedLink(t *testing.T) {
	v, out, code, _ := checkFake(t, 8, 1, "link:2-5=60%")
	if code != exitCheckFail {
		t.Fatalf("exit %d, want %d", code, exitCheckFail)
	}
	if got := named(v.Pairs, verdict.Fail); len(got) != 2 || !strings.Contains(got[0], "PE 2 ") || !strings.Contains(got[0], "PE 5 ") || !strings.Contains(got[1], "PE 5 ") {
		t.Errorf("failing pairs %q, want 2 → 5 and 5 → 2", got)
	}
	if got := named(v.GPUs, verdict.Fail); len(got) != 0 {
		t.Errorf("GPUs failed: %q", got)
	}
	// The heat map marks the pair, and only it.
	stdout, stderr, code := nvshbench(t, "plot", "--matrix", "--spec", out)
	var hms []plots.HeatMap
	if code != exitOK || json.Unmarshal([]byte(stdout), &hms) != nil {
		t.Fatalf("plot --matrix --spec: exit %d: %s", code, stderr)
	}
	sawCopy := false
	for _, h := range hms {
		for from, row := range h.Marks {
			for to, m := range row {
				if m != "" && !(from == 2 && to == 5 || from == 5 && to == 2) {
					t.Errorf("%s: %d → %d marked %s", h.Name, from, to, m)
				}
			}
		}
		if h.Name == "matrix-limit-sm-copy" {
			sawCopy = h.Marks[2][5] == "FAIL" && h.Marks[5][2] == "FAIL"
		}
	}
	if !sawCopy {
		t.Errorf("the SM copy's heat map does not mark 2 → 5 and 5 → 2 FAIL")
	}
	charts := filepath.Join(t.TempDir(), "charts")
	if _, stderr, code := nvshbench(t, "plot", "--matrix", "--out", charts, "--format", "png", out); code != exitOK {
		t.Errorf("plot --matrix: exit %d: %s", code, stderr)
	} else if st, err := os.Stat(filepath.Join(charts, "matrix-limit-sm-copy.png")); err != nil || st.Size() == 0 {
		t.Errorf("heat map not written: %v", err)
	}
	// The matrix table of report marks the pair.
	stdout, stderr, code = nvshbench(t, "report", "--matrix", out)
	if code != exitOK || !strings.Contains(stdout, "limit/sm-copy") || !strings.Contains(stdout, "*") {
		t.Errorf("report --matrix: exit %d: %s%s", code, stdout, stderr)
	}
}

// A GPU at half its clock is the GPU named.
func TestCheckNamesTheLowClockGPU(t *testing.T) {
	v, _, code, _ := checkFake(t, 8, 1, "clock:3=50%")
	if code != exitCheckFail {
		t.Fatalf("exit %d", code)
	}
	if got := named(v.GPUs, verdict.Fail); len(got) != 1 || !strings.HasPrefix(got[0], "GPU 3 ") {
		t.Errorf("failing GPUs %q, want GPU 3", got)
	}
	for _, s := range v.Pairs {
		if s.Level == verdict.Fail && s.From != 3 && s.To != 3 {
			t.Errorf("pair %s fails without GPU 3", s.Name)
		}
	}
}

// A rank that starts every iteration late is the straggler named.
func TestCheckNamesTheLateRank(t *testing.T) {
	v, _, code, _ := checkFake(t, 8, 1, "late:5=200us")
	if code != exitCheckFail {
		t.Fatalf("exit %d", code)
	}
	if got := named(v.Ranks, verdict.Fail); len(got) != 1 || !strings.HasPrefix(got[0], "PE 5 ") {
		t.Errorf("failing ranks %q, want PE 5", got)
	}
	if got := named(v.Pairs, verdict.Fail); len(got) != 0 {
		t.Errorf("pairs failed: %q", got)
	}
}

// The node on a slower network is the node named: of two nodes, by the
// incasts into its GPUs (its NICs shared by the other node's senders; a
// pair between the nodes crosses both nodes' NICs, so the pairs alone
// cannot tell); of three, by its pairs to the others as well.
func TestCheckNamesTheSlowNode(t *testing.T) {
	for _, c := range []struct {
		gpus, nodes int
		topo, want  string
	}{{4, 2, "node:1=50%", "fake-node1"}, {2, 3, "node:2=50%", "fake-node2"}} {
		v, _, code, _ := checkFake(t, c.gpus, c.nodes, c.topo)
		if code != exitCheckFail || v.SlowestNode != c.want {
			t.Fatalf("%s: exit %d, slowest node %q, want %s", c.topo, code, v.SlowestNode, c.want)
		}
		if got := named(v.Nodes, verdict.Fail); len(got) != 1 || got[0] != c.want {
			t.Errorf("%s: failing nodes %q", c.topo, got)
		}
		for _, g := range v.GPUs {
			if (g.Level == verdict.Fail) != (g.Node == c.want) {
				t.Errorf("%s: %s %s", c.topo, g.Name, g.Level)
			}
		}
	}
}

// Bad input: one line that says what to do, exit 2; the pairs measured
// before a PE died are kept.
func TestCheckRefusesBadInput(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.json")
	os.WriteFile(bad, []byte("{bands"), 0o644)
	other := filepath.Join(dir, "other.json")
	os.WriteFile(other, []byte(`{"source":"a B200 run","bands":[{"gpu":"NVIDIA B200","class":"nvlink","id":"rma/put/block","size":134217728,"min":7e11,"source":"x"}]}`), 0o644)
	_, file, code, stderr := checkFake(t, 4, 1, "")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, c := range []struct {
		args []string
		say  string
	}{
		{[]string{"check", "--judge", file, "--bands", bad}, "not a band file"},
		{[]string{"check", "--judge", file, "--bands", other}, "are for NVIDIA B200"},
		// A run without the matrix: nothing judged is no PASS.
		{[]string{"check", "--judge", "testdata/h200x2-2026-11-29-session3-full.jsonl.gz"}, "no point of the pair matrix"},
	} {
		_, stderr, code := nvshbench(t, c.args...)
		if code != exitUsage || !strings.Contains(stderr, c.say) || strings.Count(strings.TrimSpace(stderr), "\n") != 0 {
			t.Errorf("%v: exit %d: %s", c.args, code, stderr)
		}
	}
	// A node missing from the job: started on two nodes, its PEs on one.
	f := mustRead(t, file)
	f.Header.Nodes = 2
	missing := filepath.Join(dir, "missing.jsonl")
	writeFile(t, missing, f)
	if _, stderr, code := nvshbench(t, "check", "--judge", missing); code != exitUsage || !strings.Contains(stderr, "a node is missing") {
		t.Errorf("a node missing: exit %d: %s", code, stderr)
	}
	// A PE that dies mid-matrix: the pairs before it kept.
	_, out, code, stderr := checkFake(t, 4, 1, "die:3@8")
	if code != exitUsage || !strings.Contains(stderr, "ended mid-matrix") || !strings.Contains(stderr, "kept in") {
		t.Fatalf("a PE that dies: exit %d: %s", code, stderr)
	}
	ok := 0
	for _, p := range mustRead(t, out).Points {
		if p.Params.Extra[harness.MatrixKey] != "" && p.Status == record.StatusOK {
			ok++
		}
	}
	if ok == 0 {
		t.Error("no pair measured before the PE died was kept")
	}
}

// The fake 8-GPU node's pair matrix (the issue asks under 20 s in CI).
func BenchmarkFakeMatrix8(b *testing.B) {
	b.Setenv("NVSHBENCH_FAKE_GPUS", "8")
	for i := 0; i < b.N; i++ {
		out := filepath.Join(b.TempDir(), "m.jsonl")
		args := append([]string{"run", "--shim", "fake", "--matrix", "--samples", "3", "--warmup", "1", "--out", out}, harness.MatrixRows()...)
		if _, stderr, code := nvshbenchB(b, args...); code != 0 {
			b.Fatalf("exit %d: %s", code, stderr)
		}
	}
}

// writeFile writes f as a results file at path.
func writeFile(t *testing.T, path string, f *record.File) {
	t.Helper()
	w, err := record.Create(path, f.Header)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range f.Points {
		if err := w.WritePoint(p); err != nil {
			t.Fatal(err)
		}
	}
	w.Close()
}

func nvshbenchB(b *testing.B, args ...string) (stdout, stderr string, code int) {
	var o, e strings.Builder
	code = run(args, strings.NewReader(""), &o, &e)
	return o.String(), e.String(), code
}

// report --matrix and plot --matrix mark the pairs as check does, by the
// same bands: a node of H200s whose round trips are all alike (so no pair
// stands out from its node's median) but twice the shipped band's is
// marked WARN by the band in the heat map and the table, as check --judge
// warns.
func TestMatrixMarksAreChecks(t *testing.T) {
	_, file, code, stderr := checkFake(t, 4, 1, "")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var band *verdict.Band
	for i, b := range verdict.Shipped().Bands {
		if b.ID == "latency/put/block" {
			band = &verdict.Shipped().Bands[i]
		}
	}
	f := mustRead(t, file)
	for i := range f.Header.GPUs {
		f.Header.GPUs[i].Name = band.GPU
	}
	n := 0
	for i := range f.Points {
		p := &f.Points[i]
		if p.ID == band.ID && p.Params.Extra[harness.MatrixKey] == harness.MatrixPair {
			m := p.Metrics[record.MetricLatency] // derived from the samples when read: scaled with them
			k := 2 * band.Max / m.Median
			for j := range p.Samples {
				p.Samples[j] *= k
			}
			m.Median *= k
			p.Metrics[record.MetricLatency] = m
			n++
		}
	}
	if n != 12 {
		t.Fatalf("%d round trips of %s", n, band.ID)
	}
	h200 := filepath.Join(t.TempDir(), "h200.jsonl")
	writeFile(t, h200, f)
	stdout, stderr, code := nvshbench(t, "check", "--judge", h200, "--json")
	var v verdict.Verdict
	if code != exitOK || json.Unmarshal([]byte(stdout), &v) != nil || v.Level != verdict.Warn || len(named(v.Pairs, verdict.Warn)) != 12 {
		t.Fatalf("check --judge: exit %d, %s: %s", code, v.Level, stderr)
	}
	stdout, stderr, code = nvshbench(t, "plot", "--matrix", "--spec", h200)
	var hms []plots.HeatMap
	if code != exitOK || json.Unmarshal([]byte(stdout), &hms) != nil {
		t.Fatalf("plot --matrix --spec: exit %d: %s", code, stderr)
	}
	marked := 0
	for _, h := range hms {
		for from, row := range h.Marks {
			for to, m := range row {
				switch {
				case h.Name == "matrix-latency-put-block" && from != to && m == "WARN":
					marked++
				case m != "":
					t.Errorf("%s: %d → %d marked %s", h.Name, from, to, m)
				}
			}
		}
	}
	if marked != 12 {
		t.Errorf("the heat map marks %d of the 12 pairs check warns of", marked)
	}
	stdout, stderr, code = nvshbench(t, "report", "--matrix", h200)
	if code != exitOK || strings.Count(stdout, "~") < 12 {
		t.Errorf("report --matrix: exit %d: %s%s", code, stdout, stderr)
	}
}

// --path names the transport between nodes: with it, a node's own pairs
// and GPUs are still measured over their NVLink (NVSHMEM's P2P left on),
// not waived as pairs "across no node" nor sent through the NIC.
func TestCheckPathIsTheTransportBetweenNodes(t *testing.T) {
	v, out, code, stderr := checkFake(t, 2, 2, "", "--path", "proxy")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	f := mustRead(t, out)
	if _, ok := f.Header.Env["NVSHMEM_DISABLE_P2P"]; ok {
		t.Errorf("header env %v: P2P disabled for the node's pairs", f.Header.Env)
	}
	got := map[string]int{}
	for _, p := range f.Points {
		if p.ID != "rma/put/block" && p.ID != "limit/sm-copy" || p.Params.Dir == "bidir" || p.Pair == nil {
			continue
		}
		if p.ID == "limit/sm-copy" && p.Pair.Kind == record.PairAcrossNodes && p.Status == record.StatusWaived {
			continue // load/store reaches no other node
		}
		if p.Status != record.StatusOK {
			t.Errorf("%s %s (%s): %s %s", p.ID, p.Params.Pair, p.Pair.Kind, p.Status, p.Reason)
			continue
		}
		got[p.ID+" "+p.Pair.Kind+" "+p.Effective]++
	}
	want := map[string]int{"rma/put/block same-node p2p": 4, "rma/put/block across-nodes proxy": 8,
		"limit/sm-copy same-node p2p": 4, "limit/sm-copy loopback local": 4}
	for k, n := range want {
		if got[k] != n {
			t.Errorf("%s: %d points, want %d (%v)", k, got[k], n, got)
		}
	}
	if len(v.GPUs) != 4 || len(v.Pairs) != 12 {
		t.Errorf("%d GPUs, %d pairs judged", len(v.GPUs), len(v.Pairs))
	}
}
