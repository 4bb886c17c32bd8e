package persm

import (
	"testing"

	"github.com/nvshbench/nvshbench/report"
)

// The readers (report, which may not import suites) spell the copy-engine
// check's value themselves: it must be the name this suite writes.
func TestReadersSpellTheSMCheckValueAsWritten(t *testing.T) {
	if report.ValueCESMFree != ValueCESMFree {
		t.Fatalf("report reads %q, suites/persm writes %q", report.ValueCESMFree, ValueCESMFree)
	}
}
