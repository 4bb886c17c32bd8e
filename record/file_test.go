package record_test

import (
	"bytes"
	"compress/gzip"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/nvshbench/nvshbench/record"
)

func header() record.Header {
	return record.Header{Tool: "nvshbench", ToolVersion: "test", Created: "2026-11-29T00:00:00Z", Synthetic: true,
		GPUs: []record.GPU{{Index: 0, Name: "NVIDIA H200", L2Bytes: 60 << 20}}, NVSHMEM: "3.4.5"}
}

func point(size int64, samples ...float64) record.Point {
	p := record.Point{ID: "rma/put/block", Params: record.Params{Size: size, Op: "put", Scope: "block", CTAs: 32, Threads: 256},
		Status: record.StatusOK, Bytes: size, Samples: samples, Verify: record.Verification{Checked: true, OK: true}}
	if err := record.Derive(&p, record.MetricBandwidth, record.MetricLatency); err != nil {
		panic(err)
	}
	return p
}

// writeAndRead writes pts through w, closes it and reads the file back.
func writeAndRead(t *testing.T, w *record.Writer, path string, pts ...record.Point) *record.File {
	t.Helper()
	for _, p := range pts {
		if err := w.WritePoint(p); err != nil {
			t.Fatal(err)
		}
	}
	w.Close()
	f, err := record.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func TestRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "r.jsonl")
	w, err := record.Create(path, header())
	if err != nil {
		t.Fatal(err)
	}
	pts := []record.Point{point(1024, 1e-6, 2e-6, 3e-6), point(1<<20, 1e-4, 1.1e-4)}
	waived := record.Point{ID: "rma/put/block", Params: record.Params{Size: 8, Path: "ibgda"}, Status: record.StatusWaived, Reason: "no NIC"}
	pts = append(pts, waived)
	f := writeAndRead(t, w, path, pts...)
	if f.Header.Schema != record.SchemaVersion || f.Header.Type != record.TypeHeader || !f.Header.Synthetic {
		t.Errorf("header = %+v", f.Header)
	}
	if len(f.Points) != 3 || len(f.Warnings) != 0 {
		t.Fatalf("points=%d warnings=%v", len(f.Points), f.Warnings)
	}
	bw := f.Points[0].Metrics[record.MetricBandwidth]
	if bw.Unit != record.UnitBytesPerSec || bw.Median != 1024/2e-6 || bw.Min != 1024/3e-6 || bw.Max != 1024/1e-6 {
		t.Errorf("bandwidth summary = %+v", bw)
	}
	if f.Points[2].Status != record.StatusWaived || f.Points[2].Reason != "no NIC" {
		t.Errorf("waived point = %+v", f.Points[2])
	}
}

func TestCreateNeverOverwrites(t *testing.T) {
	path := filepath.Join(t.TempDir(), "r.jsonl")
	w, err := record.Create(path, header())
	if err != nil {
		t.Fatal(err)
	}
	w.Close()
	if _, err := record.Create(path, header()); err == nil || !strings.Contains(err.Error(), "never overwritten") {
		t.Fatalf("second Create: err = %v, want a refusal", err)
	}
}

func TestWriterRefusesInvalidPoints(t *testing.T) {
	w, err := record.Create(filepath.Join(t.TempDir(), "r.jsonl"), header())
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	for name, p := range map[string]record.Point{
		"no id":             {Status: record.StatusOK},
		"bad status":        {ID: "x", Status: "fine"},
		"waived, no reason": {ID: "x", Status: record.StatusWaived},
		"negative size":     {ID: "x", Status: record.StatusOK, Params: record.Params{Size: -1}},
		"zero sample":       {ID: "x", Status: record.StatusOK, Samples: []float64{0}},
	} {
		if err := w.WritePoint(p); err == nil {
			t.Errorf("%s: written without error", name)
		}
	}
}

func TestReadErrors(t *testing.T) {
	good := `{"type":"header","schema":1,"tool":"nvshbench","tool_version":"t","created":"x"}`
	pt := `{"type":"point","id":"rma/p","params":{"size":8},"status":"ok","verify":{"checked":false,"ok":false}}`
	cases := []struct {
		name, data, want string
	}{
		{"empty", "", "empty file"},
		{"blank lines", "\n\n", "empty file"},
		{"not json", "hello\n", "t.jsonl:1: malformed JSON"},
		{"no header", pt + "\n", "first record is \"point\""},
		{"no type", `{"a":1}` + "\n", "no \"type\""},
		{"malformed point line", good + "\n" + pt + "\n{\"type\":\"point\",\n" + pt + "\n", "t.jsonl:3: malformed JSON"},
		{"newer schema", `{"type":"header","schema":99,"tool_version":"9.0"}` + "\n", "schema version 99 (written by nvshbench 9.0) is newer"},
		{"second header", good + "\n" + good + "\n", "second header"},
		{"unknown record", good + "\n" + `{"type":"sample"}` + "\n", "unknown record type \"sample\""},
		{"bad status", good + "\n" + `{"type":"point","id":"x","status":"meh"}` + "\n", "t.jsonl:2: point x: unknown status"},
		{"negative size", good + "\n" + `{"type":"point","id":"x","status":"ok","params":{"size":-8}}` + "\n", "negative size"},
		{"wrong field type", good + "\n" + `{"type":"point","id":"x","status":"ok","params":{"size":"big"}}` + "\n", "t.jsonl:2: malformed point"},
	}
	for _, c := range cases {
		_, err := record.Read(strings.NewReader(c.data), "t.jsonl")
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err = %v, want it to contain %q", c.name, err, c.want)
		}
		if err != nil && strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: error is not one line: %q", c.name, err)
		}
	}
}

func TestTruncatedLastLineIsAWarning(t *testing.T) {
	good := `{"type":"header","schema":1,"tool_version":"t"}` + "\n" +
		`{"type":"point","id":"rma/p","params":{"size":8},"status":"ok","verify":{"checked":false,"ok":false}}` + "\n"
	f, err := record.Read(strings.NewReader(good+`{"type":"point","id":"rma/p","par`), "run.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Points) != 1 || len(f.Warnings) != 1 || !strings.Contains(f.Warnings[0], "run.jsonl:3: last line is incomplete") {
		t.Fatalf("points=%d warnings=%q", len(f.Points), f.Warnings)
	}
	// A malformed line that is not the last one stays an error.
	if _, err := record.Read(strings.NewReader(good+`{"type":"point","id":"rma/p","par`+"\n"+good), "run.jsonl"); err == nil {
		t.Fatal("a malformed middle line was accepted")
	}
}

func TestReadFileErrors(t *testing.T) {
	dir := t.TempDir()
	if _, err := record.ReadFile(filepath.Join(dir, "missing.jsonl")); err == nil || !strings.Contains(err.Error(), "no such file") {
		t.Errorf("missing file: %v", err)
	}
	if _, err := record.ReadFile(dir); err == nil || !strings.Contains(err.Error(), "is a directory") {
		t.Errorf("directory: %v", err)
	}
}

func TestAppendCutsAPartialLineAndResumes(t *testing.T) {
	path := filepath.Join(t.TempDir(), "r.jsonl")
	w, err := record.Create(path, header())
	if err != nil {
		t.Fatal(err)
	}
	w.WritePoint(point(64, 1e-6))
	w.Close()
	f, _ := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString(`{"type":"point","id":"cut`)
	f.Close()
	w2, prev, err := record.Append(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(prev.Points) != 1 || len(prev.Warnings) != 1 {
		t.Fatalf("previous points=%d warnings=%v", len(prev.Points), prev.Warnings)
	}
	if err := w2.WritePoint(point(128, 2e-6)); err != nil {
		t.Fatal(err)
	}
	w2.Close()
	got, err := record.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Points) != 2 || len(got.Warnings) != 0 || got.Points[1].Params.Size != 128 {
		t.Fatalf("after resume: points=%d warnings=%v", len(got.Points), got.Warnings)
	}
}

func TestQuantileAndSummary(t *testing.T) {
	s := record.Summarize([]float64{4, 1, 3, 2}, "s")
	if s.Median != 2.5 || s.Min != 1 || s.Max != 4 || s.N != 4 {
		t.Errorf("summary = %+v", s)
	}
	if q := record.Quantile([]float64{10, 20}, 0.9); q != 19 {
		t.Errorf("p90 of {10,20} = %v, want 19", q)
	}
}

func TestSampleValuesAndPrimaryMetric(t *testing.T) {
	p := record.Point{ID: "collectives/allreduce/x", Params: record.Params{Size: 1000}, Samples: []float64{1e-6}, BusFactor: 1.5}
	if err := record.Derive(&p, record.MetricAlgBW, record.MetricBusBW); err != nil {
		t.Fatal(err)
	}
	if p.Metrics["algbw"].Median != 1e9 || p.Metrics["busbw"].Median != 1.5e9 {
		t.Errorf("metrics = %+v", p.Metrics)
	}
	if m := record.PrimaryMetric(&p); m != record.MetricBusBW {
		t.Errorf("primary = %s", m)
	}
	q := record.Point{ID: "x", Samples: []float64{1}}
	if err := record.Derive(&q, record.MetricBandwidth); err == nil {
		t.Error("bandwidth without bytes was derived")
	}
}

func TestParamsKeyIsCanonical(t *testing.T) {
	a := record.Params{Size: 8, Op: "put", Extra: map[string]string{"b": "2", "a": "1"}}
	b := record.Params{Extra: map[string]string{"a": "1", "b": "2"}, Op: "put", Size: 8}
	if a.Key() != b.Key() || a.Key() != "size=8 op=put a=1 b=2" {
		t.Errorf("keys %q vs %q", a.Key(), b.Key())
	}
	if a.KeyWithoutSize() != "op=put a=1 b=2" {
		t.Errorf("key without size %q", a.KeyWithoutSize())
	}
}

func TestEmbeddedExampleAndReference(t *testing.T) {
	f, err := record.Example()
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Points) == 0 {
		t.Fatal("embedded example has no points")
	}
	ref := record.Paper()
	if len(ref.Rows) == 0 || ref.Source.Arxiv != "2606.05951v1" {
		t.Fatalf("reference: %d rows, arxiv %q", len(ref.Rows), ref.Source.Arxiv)
	}
}

// A hand-edited median is not believed: readers re-derive every metric from
// the raw samples (report and compare then agree) and the file says so.
func TestReadRederivesFromSamples(t *testing.T) {
	path := filepath.Join(t.TempDir(), "edited.jsonl")
	w, err := record.Create(path, header())
	if err != nil {
		t.Fatal(err)
	}
	good := point(1<<20, 1e-4, 1.1e-4, 1.2e-4)
	edited := point(1<<21, 2e-4, 2.2e-4, 2.4e-4)
	m := edited.Metrics[record.MetricBandwidth]
	m.Median *= 10 // "10x faster", typed by hand
	edited.Metrics[record.MetricBandwidth] = m
	f := writeAndRead(t, w, path, good, edited)
	if len(f.Warnings) != 1 || !strings.Contains(f.Warnings[0], "disagree with the raw samples") || !strings.Contains(f.Warnings[0], "size=2097152") {
		t.Fatalf("warnings %q", f.Warnings)
	}
	vals, _, err := record.SampleValues(&f.Points[1], record.MetricBandwidth)
	if err != nil {
		t.Fatal(err)
	}
	want := record.Summarize(vals, record.UnitBytesPerSec).Median
	if got := f.Points[1].Metrics[record.MetricBandwidth].Median; got != want {
		t.Errorf("median after reading %v, from the samples %v", got, want)
	}
	if got := f.Points[0].Metrics[record.MetricBandwidth].Median; got != good.Metrics[record.MetricBandwidth].Median {
		t.Errorf("an untouched point changed: %v", got)
	}
}

// A gzip-compressed results file reads as the plain one, from a path or
// from a stream (the embedded example is the run's compressed file); one
// cut short says so.
func TestGzippedFileReadsTheSame(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "r.jsonl")
	w, err := record.Create(path, header())
	if err != nil {
		t.Fatal(err)
	}
	plain := writeAndRead(t, w, path, point(1024, 1e-6, 2e-6), point(1<<20, 1e-4, 1.1e-4))
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var zb bytes.Buffer
	zw := gzip.NewWriter(&zb)
	zw.Write(raw)
	zw.Close()
	gz := filepath.Join(dir, "r.jsonl.gz")
	if err := os.WriteFile(gz, zb.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := record.ReadFile(gz)
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Points) != len(plain.Points) || f.Points[1].Metrics[record.MetricBandwidth] != plain.Points[1].Metrics[record.MetricBandwidth] ||
		f.Header.NVSHMEM != "3.4.5" || len(f.Warnings) != 0 {
		t.Errorf("gzipped: %d points %+v, warnings %v", len(f.Points), f.Header, f.Warnings)
	}
	streamed, err := record.Read(bytes.NewReader(zb.Bytes()), "stream")
	if err != nil || len(streamed.Points) != len(plain.Points) || streamed.Header.NVSHMEM != "3.4.5" {
		t.Errorf("gzipped stream: %v, %+v", err, streamed)
	}
	if ex, err := record.Example(); err != nil {
		t.Error(err)
	} else if len(ex.Points) == 0 || ex.Header.Synthetic || len(ex.Warnings) != 0 {
		t.Errorf("the embedded example: %d points, synthetic %v, warnings %v", len(ex.Points), ex.Header.Synthetic, ex.Warnings)
	}
	if _, err := record.Create(filepath.Join(dir, "new.jsonl.gz"), header()); err == nil || !strings.Contains(err.Error(), "gzip the file when the run is done") {
		t.Errorf("writing a .gz: %v", err)
	}
	cut := filepath.Join(dir, "cut.jsonl.gz")
	if err := os.WriteFile(cut, zb.Bytes()[:zb.Len()/2], 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := record.ReadFile(cut); err == nil || !strings.Contains(err.Error(), "ends early") {
		t.Errorf("a cut .gz: %v", err)
	}
}

// A point stored without its metrics gets those the Reader's Metrics names
// for its ID; without one (or for an ID it does not know), those the record
// itself can give.
func TestReaderDerivesTheNamedMetrics(t *testing.T) {
	path := filepath.Join(t.TempDir(), "bare.jsonl")
	w, err := record.Create(path, header())
	if err != nil {
		t.Fatal(err)
	}
	bare := point(1<<20, 1e-4, 1.1e-4)
	bare.Metrics = nil
	writeAndRead(t, w, path, bare)
	names := func(f *record.File) string {
		return strings.Join(slices.Sorted(maps.Keys(f.Points[0].Metrics)), " ")
	}
	only := record.Reader{Metrics: func(id string) []string {
		if id == "rma/put/block" {
			return []string{record.MetricLatency}
		}
		return nil
	}}
	for _, c := range []struct {
		rd   record.Reader
		want string
	}{
		{record.Reader{}, "algbw bandwidth latency"},
		{only, "latency"},
		{record.Reader{Metrics: func(string) []string { return nil }}, "algbw bandwidth latency"},
	} {
		f, err := c.rd.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if got := names(f); got != c.want {
			t.Errorf("metrics %q, want %q", got, c.want)
		}
	}
}
