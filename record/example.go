package record

import (
	"bytes"
	_ "embed"
)

//go:embed data/example.jsonl.gz
var exampleGz []byte

// ExampleName is how the embedded example is named in messages.
const ExampleName = "example (embedded)"

// Example returns the embedded example results file: a real measured run,
// 'reproduce --quick' on two H200s joined by NVLink, as the run's
// results.jsonl.gz, so report and plot work with nothing else.
func Example() (*File, error) { return Reader{}.Example() }

// Example is the embedded example read with rd.
func (rd Reader) Example() (*File, error) {
	return rd.Read(bytes.NewReader(exampleGz), ExampleName)
}
