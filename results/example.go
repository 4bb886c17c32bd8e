package results

import (
	"bytes"
	_ "embed"
)

//go:embed data/example.jsonl
var exampleJSONL []byte

// ExampleName is how the embedded example is named in messages.
const ExampleName = "example (embedded)"

// Example returns the embedded example results file: a real measured run on
// the H200 test machine, so report and plot work with nothing else.
func Example() (*File, error) {
	return Read(bytes.NewReader(exampleJSONL), ExampleName)
}
