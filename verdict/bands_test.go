package verdict_test

import (
	"encoding/json"
	"flag"
	"os"
	"testing"

	"github.com/nvshbench/nvshbench/record"
	"github.com/nvshbench/nvshbench/verdict"
)

var update = flag.Bool("update", false, "rewrite bands.json from the committed run")

// The run the shipped bands are derived from (two H200s joined by NV18).
const bandRun = "results/h200x2-2026-11-29/reproduce/results.jsonl.gz"

// The shipped bands are what Derive makes of the committed run, nothing
// typed by hand.
func TestShippedBandsComeFromTheirRuns(t *testing.T) {
	f, err := record.ReadFile("../" + bandRun)
	if err != nil {
		t.Fatal(err)
	}
	b, err := verdict.Derive(f, bandRun)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := json.MarshalIndent(b, "", "  ")
	got = append(got, '\n')
	if *update {
		if err := os.WriteFile("bands.json", got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, _ := os.ReadFile("bands.json")
	if string(got) != string(want) {
		t.Fatalf("bands.json is not what Derive makes of %s (go test ./verdict -update):\n%s", bandRun, got)
	}
	s := verdict.Shipped()
	if len(s.Bands) != len(verdict.DerivedRows) || s.Bands[0].GPU != "NVIDIA H200" {
		t.Errorf("shipped bands: %+v", s.Bands)
	}
}

func TestBandFilesThatCannotJudge(t *testing.T) {
	for _, c := range []struct{ name, text string }{
		{"not JSON", "{bands"},
		{"no band", `{"source":"x","bands":[]}`},
		{"no source", `{"source":"x","bands":[{"gpu":"NVIDIA H200","class":"nvlink","id":"rma/put/block","size":8,"min":1}]}`},
		{"min and max", `{"source":"x","bands":[{"gpu":"NVIDIA H200","class":"nvlink","id":"rma/put/block","size":8,"min":1,"max":2,"source":"y"}]}`},
		{"unknown field", `{"source":"x","bandz":[]}`},
	} {
		if _, err := verdict.ParseBands([]byte(c.text), "f.json"); err == nil {
			t.Errorf("%s: accepted", c.name)
		}
	}
	b, err := verdict.ParseBands([]byte(`{"source":"x","bands":[{"gpu":"NVIDIA B200","class":"nvlink","id":"rma/put/block","size":8,"min":1,"source":"y"}]}`), "f.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Fits(record.Header{GPUs: []record.GPU{{Name: "NVIDIA H200"}}}); err == nil {
		t.Error("a band file for another GPU kind fits")
	}
	if err := b.Fits(record.Header{GPUs: []record.GPU{{Name: "NVIDIA B200"}}}); err != nil {
		t.Error(err)
	}
}
