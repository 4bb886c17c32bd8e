package main

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/nvshbench/nvshbench/harness"
	"github.com/nvshbench/nvshbench/internal/decide"
	"github.com/nvshbench/nvshbench/internal/golden"
	"github.com/nvshbench/nvshbench/model"
	"github.com/nvshbench/nvshbench/record"
)

// committed is a committed full reproduce cut to the rows the guide
// compares (testdata/NAME.jsonl.gz at the repository's root: the header and
// the points keep takes, stored metrics dropped: readers derive them from
// the samples): the runs the numbers come from. Tests never read
// results/: src names the file the cut was taken from (a results file is
// never rewritten). The cut must hold nothing keep leaves out (-update
// drops it); a wider keep needs the source cut again.
type committed struct {
	name, src string
	keep      func(id string, p record.Params) bool
}

var (
	// The one-H200 run the README's second summary quotes: MoE, one-PE
	// AllReduce one launch per operation (and the two fused kernels whose
	// fits went above their data), the puts and gets at the paper's launch,
	// the round trips and the copy references.
	oneH200 = committed{"h200-2026-12-01c", "results/h200-2026-12-01c/reproduce/results.jsonl.gz", func(id string, p record.Params) bool {
		switch {
		case id == "collectives/allreduce/multicta-twoshot", id == "collectives/allreduce/nccl-lsa":
			return true
		case strings.HasPrefix(id, "collectives/allreduce/"):
			return p.Launch == record.LaunchPerOp
		case strings.HasPrefix(id, "moe/"), strings.HasPrefix(id, "limit/"), regexp.MustCompile(`^latency/(nccl-lsa/)?(put|get)/`).MatchString(id):
			return true
		}
		return paperPut(id, p)
	}}
	// The two-H200 run of the README's "Which should I use?": the puts and
	// gets at every launch of its sweep, and the copy references.
	twoH200 = committed{"h200x2-2026-11-29-session3", "results/h200x2-2026-11-29/session3/reproduce/results.jsonl.gz", func(id string, p record.Params) bool {
		return blockPutGet(id, p) || strings.HasPrefix(id, "limit/")
	}}
)

// paperPut: the block-scope put and get of both libraries at the paper's
// launch, one way.
func paperPut(id string, p record.Params) bool {
	return blockPutGet(id, p) && p.CTAs == 32 && p.Threads == 256
}

// blockPutGet: the block-scope put and get of both libraries at every
// launch, one way.
func blockPutGet(id string, p record.Params) bool {
	return regexp.MustCompile(`^rma/(nccl-lsa/)?(put|get)/block$`).MatchString(id) && p.Dir == "uni"
}

// cut is the source's header and kept points, one JSON object a line
// (keys sorted, numbers as written), without stored metrics.
func (c committed) cut(t *testing.T, src io.Reader) []byte {
	t.Helper()
	var out bytes.Buffer
	sc := bufio.NewScanner(src)
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		dec := json.NewDecoder(bytes.NewReader(sc.Bytes()))
		dec.UseNumber()
		var m map[string]any
		if err := dec.Decode(&m); err != nil {
			t.Fatal(err)
		}
		if m["type"] == record.TypePoint {
			var p record.Point
			if err := json.Unmarshal(sc.Bytes(), &p); err != nil {
				t.Fatal(err)
			}
			if !c.keep(p.ID, p.Params) {
				continue
			}
			delete(m, "metrics")
		}
		b, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		out.Write(append(b, '\n'))
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}

// path is the cut's file.
func (c committed) path(t *testing.T) string {
	return filepath.Join(repoRoot(t), "testdata", c.name+".jsonl.gz")
}

// gzipBytes is b compressed.
func gzipBytes(t *testing.T, b []byte) []byte {
	t.Helper()
	var out bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&out, gzip.BestCompression)
	zw.Write(b)
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}

// gunzipFile is the content of a gzip-compressed file.
func gunzipFile(t *testing.T, path string) []byte {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// file reads the cut as the command does (the registry's metrics and
// declared code), after checking that it is its own cut.
func (c committed) file(t *testing.T) *record.File {
	t.Helper()
	path := c.path(t)
	if golden.Updating() {
		// -update cuts the committed run afresh, so a new cut needs no file.
		if _, err := os.Stat(path); os.IsNotExist(err) {
			os.WriteFile(path, gzipBytes(t, nil), 0o644)
		}
	}
	got := gunzipFile(t, path)
	want := c.cut(t, bytes.NewReader(got))
	if golden.Updating() {
		want = c.cut(t, bytes.NewReader(gunzipFile(t, filepath.Join(repoRoot(t), c.src))))
	}
	if golden.Updating() && !bytes.Equal(got, want) {
		if err := os.WriteFile(path, gzipBytes(t, want), 0o644); err != nil {
			t.Fatal(err)
		}
	} else if !bytes.Equal(got, want) {
		t.Fatalf("%s holds points its rule leaves out, or stored metrics (a cut of %s): rerun with -update", path, c.src)
	}
	f, err := harness.Reader().ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// compared are the points of a comparison at one size: its
// implementations' benchmarks as the guide's patterns name them, at the
// launch shape its group names (a bandwidth group's "bandwidth scope=block CxT").
func compared(f *record.File, c model.Comparison, size int64) []*record.Point {
	var ctas, threads int
	if m := regexp.MustCompile(`\bbandwidth\b.*?\b(\d+)x(\d+)\b`).FindStringSubmatch(c.Group); m != nil {
		ctas, _ = strconv.Atoi(m[1])
		threads, _ = strconv.Atoi(m[2])
	}
	var ids []string
	for _, names := range append(append([]string(nil), c.Impls...), c.Left...) {
		names, _, _ = strings.Cut(names, ": ")
		for _, n := range strings.Split(names, " = ") {
			switch {
			case c.Pattern == "allreduce":
				ids = append(ids, "collectives/allreduce/"+n)
			case strings.HasPrefix(c.Pattern, "MoE "):
				ids = append(ids, "moe/"+strings.TrimPrefix(c.Pattern, "MoE ")+"/"+n)
			}
		}
	}
	if op, ok := strings.CutPrefix(c.Pattern, "one-sided "); ok {
		scope := regexp.MustCompile(`scope=(\w+)`).FindStringSubmatch(c.Group)[1]
		kind := "rma"
		if strings.Contains(c.Group, "round trip") {
			kind = "latency"
		}
		ids = append(ids, kind+"/"+op+"/"+scope, kind+"/nccl-lsa/"+op+"/"+scope)
	}
	var out []*record.Point
	for i := range f.Points {
		p := &f.Points[i]
		for _, id := range ids {
			shape := ctas == 0 || p.Params.CTAs == ctas && p.Params.Threads == threads
			if p.ID == id && p.Params.Size == size && shape && p.Params.Mode != "blocking" && p.Status == record.StatusOK {
				out = append(out, p)
			}
		}
	}
	return out
}

// The numbers, on the committed full reproduce runs read as a user
// reads them: model --guide names no winner from a flagged or cache-served
// point (the one-H200 MoE at 14–112 MiB, the two-H200 put at 64 KiB: 595
// GB/s above the copy reference and over the 478 GB/s NVLink), draws no
// crossover from a size it did not judge, and compares no one-PE copy with
// a kernel that reduces (NCCL's one-rank AllReduce, once the winner above
// 8 MiB and two crossovers).
func TestGuideOnCommittedRunsNamesNoWinnerFromADoubtfulPoint(t *testing.T) {
	ex, err := harness.Reader().Example()
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]*record.File{oneH200.name: oneH200.file(t), twoH200.name: twoH200.file(t), "example": ex}
	guides := map[string]model.Guide{}
	for name, f := range files {
		guides[name] = model.BuildGuide(model.FitAll(model.Collect([]*record.File{f})), decide.Default())
	}
	for name, g := range guides {
		f := files[name]
		run := committed{name: name}
		if len(g.Comparisons) == 0 {
			t.Fatalf("%s: nothing compared", run.name)
		}
		winners := 0
		for _, c := range g.Comparisons {
			judged := map[int64]bool{}
			for _, r := range c.Rows {
				judged[r.Size] = r.NotJudged == ""
				if r.Tie() {
					continue
				}
				winners++
				if r.Lead < 0.03 || !(r.Lo > 1) {
					t.Errorf("%s, %s, %d B: %s by %.2f %% (interval from %.4f)", run.name, c.Group, r.Size, r.Winner, 100*r.Lead, r.Lo)
				}
				pts := compared(f, c, r.Size)
				if len(pts) < 2 {
					t.Errorf("%s, %s, %d B: a winner from %d points", run.name, c.Group, r.Size, len(pts))
				}
				for _, p := range pts {
					if why := p.Unjudged(); why != "" && p.OneRankCopy(f.Header.PEs) == "" {
						t.Errorf("%s, %s, %d B: %s named from %s, %s", run.name, c.Group, r.Size, r.Winner, p.ID, why)
					}
				}
			}
			for _, x := range c.Crossings {
				if !judged[x.Lo] || !judged[x.Hi] {
					t.Errorf("%s, %s: crossover %s → %s drawn from a size not judged", run.name, c.Group, x.From, x.To)
				}
				if strings.Contains(x.From+x.To, "nccl-ring") {
					t.Errorf("%s, %s: crossover %s → %s with NCCL's one-rank copy", run.name, c.Group, x.From, x.To)
				}
			}
			for _, n := range c.Impls {
				if f.Header.PEs == 1 && c.Pattern == "allreduce" && strings.Contains(n, "nccl-ring") {
					t.Errorf("%s, %s: NCCL's one-rank copy compared (%q)", run.name, c.Group, c.Impls)
				}
			}
		}
		if winners == 0 && name != "example" { // five samples a point: too few for the rule
			t.Errorf("%s: no winner at all", run.name)
		}
	}
	// The cases the issue names, one by one.
	rowAt := func(name, pattern, group string, size int64) model.Row {
		for _, c := range guides[name].Comparisons {
			if c.Pattern == pattern && strings.Contains(c.Group, group) {
				for _, r := range c.Rows {
					if r.Size == size {
						return r
					}
				}
			}
		}
		t.Fatalf("no %s %s row at %d B", pattern, group, size)
		return model.Row{}
	}
	two, one := twoH200.name, oneH200.name
	if r := rowAt(two, "one-sided put", "scope=block 32x256", 64<<10); r.Winner != "" || r.NotJudged != record.FlagCacheServed {
		t.Errorf("two H200s, put at 64 KiB (595 GB/s): %q", r.Label())
	}
	if r := rowAt(two, "one-sided put", "scope=block 32x256", 1<<30); r.Winner != "NCCL device API (LSA)" {
		t.Errorf("two H200s, put at 1 GiB: %q", r.Label())
	}
	for _, tk := range []int64{128, 1024} {
		if r := rowAt(one, "MoE dispatch", "moe_mode=ll routing=skewed", tk*8*14336); r.Winner != "" || !r.Cached {
			t.Errorf("one H200, MoE dispatch at %d tokens: %q", tk, r.Label())
		}
	}
}

// No fit above its data on the committed one-H200 run: the fused two-shot
// AllReduce (819 GB/s fitted over sizes that reach 725–745) and NCCL's LSA
// AllReduce (1,929 over 1,644–1,841) are refused, saying so.
func TestCommittedFitsDoNotExceedTheirData(t *testing.T) {
	f := oneH200.file(t)
	want := map[string]string{"collectives/allreduce/multicta-twoshot": "B 819 GB/s", "collectives/allreduce/nccl-lsa": "B 1929 GB/s"}
	for _, fit := range model.FitAll(model.Collect([]*record.File{f})) {
		if w, ok := want[fit.ID]; ok && fit.Launch == record.LaunchFused {
			if !strings.HasPrefix(fit.NoFit, "above the data: "+w) {
				t.Errorf("%s fused: %q", fit.ID, fit.NoFit)
			}
			delete(want, fit.ID)
		}
	}
	if len(want) > 0 {
		t.Errorf("no fused series of %v", want)
	}
}

// The report's verdicts on the same runs: the one-PE host NCCL AllReduce
// is no longer "faster by 126 %": it is said to be NCCL's one-rank copy.
func TestReportOnCommittedRunsComparesNoOneRankCopy(t *testing.T) {
	path := oneH200.path(t)
	oneH200.file(t) // the cut, checked
	out, stderr, code := nvshbench(t, "report", "--summary", "--format", "csv", path)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, line := range strings.Split(out, "\n") {
		if strings.Contains(line, "AllReduce at 8 B") {
			if strings.Contains(line, "faster: host") || !strings.Contains(line, "one-rank copy") {
				t.Errorf("AllReduce at 8 B: %s", line)
			}
			return
		}
	}
	t.Errorf("no AllReduce at 8 B row:\n%s", out)
}
