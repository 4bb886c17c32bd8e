package record_test

import (
	"bytes"
	"os"
	"testing"

	"github.com/nvshbench/nvshbench/record"
)

// FuzzRead feeds arbitrary bytes to the reader: it must never panic, and
// whatever it accepts must have a readable schema and valid points.
func FuzzRead(f *testing.F) {
	if b, err := os.ReadFile("testdata/synthetic.jsonl"); err == nil {
		f.Add(b)
	}
	f.Add([]byte(`{"type":"header","schema":1}` + "\n" + `{"type":"point","id":"a","status":"ok","samples_s":[1e-6],"bytes":8}`))
	f.Add([]byte(`{"type":"header","schema":2}`))
	f.Add([]byte("\n\n{"))
	f.Fuzz(func(t *testing.T, data []byte) {
		rf, err := record.Read(bytes.NewReader(data), "fuzz")
		if err != nil {
			return
		}
		if rf.Header.Schema > record.SchemaVersion || rf.Header.Schema <= 0 {
			t.Fatalf("accepted schema %d", rf.Header.Schema)
		}
		for i := range rf.Points {
			if err := rf.Points[i].Validate(); err != nil {
				t.Fatalf("accepted an invalid point: %v", err)
			}
		}
	})
}
