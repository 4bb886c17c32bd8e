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

// The same for the fed copies' values the report reads.
func TestReadersSpellTheFeedValuesAsWritten(t *testing.T) {
	for _, c := range [][2]string{
		{report.ValueCEBusy, ValueCEBusy}, {report.ValueCERate, ValueCERate}, {report.ValueCECopy, ValueCECopy}, {report.ValueCEFeed, ValueCEFeed},
	} {
		if c[0] != c[1] {
			t.Errorf("report reads %q, suites/persm writes %q", c[0], c[1])
		}
	}
}
