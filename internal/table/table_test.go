package table_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/nvshbench/nvshbench/internal/table"
)

func TestBadFormat(t *testing.T) {
	if err := table.Render(&bytes.Buffer{}, &table.Report{}, "yaml"); err == nil || !strings.Contains(err.Error(), "unknown format") {
		t.Errorf("yaml: %v", err)
	}
}

func TestMarkdownEscapesPipes(t *testing.T) {
	r := &table.Report{Tables: []table.Table{{Title: "t", Columns: []string{"a"}, Rows: [][]table.Cell{{table.Str("x|y")}}}}}
	var b bytes.Buffer
	if err := table.Render(&b, r, "markdown"); err != nil || !strings.Contains(b.String(), `x\|y`) {
		t.Errorf("pipe not escaped (%v):\n%s", err, b.String())
	}
}

func TestSignificantDigits(t *testing.T) {
	for v, want := range map[float64]string{0.000123456: "0.0001235", 4.56789: "4.568", 337.4321: "337.4", 12345.6: "12346", 0: "0"} {
		if got := table.Sig(v, 4).Text; got != want {
			t.Errorf("Sig(%v, 4) = %q, want %q", v, got, want)
		}
	}
}
