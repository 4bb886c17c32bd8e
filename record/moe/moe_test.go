package moe

import (
	"strings"
	"testing"

	"github.com/nvshbench/nvshbench/record"
)

// Every row reads back from its ID; an ID of no row, or of an operation or
// implementation this tool does not know, does not.
func TestIDsReadBack(t *testing.T) {
	for _, op := range Ops {
		for _, im := range Impls {
			r := Row{op, im.Name}
			if got, ok := ParseID(r.ID()); !ok || got != r {
				t.Errorf("%s read back as %+v, %v", r.ID(), got, ok)
			}
		}
	}
	for _, id := range []string{"moe", "moe/", "moe/dispatch", "moe/dispatch/", "moe/dispatch/mpi", "moe/scatter/nccl", "moe/dispatch/nccl/x", "rma/dispatch/nccl"} {
		if r, ok := ParseID(id); ok {
			t.Errorf("%s read as %+v", id, r)
		}
	}
}

// A MoE point's values are declared to every reader as loading this
// layer: a point with one below its range (a load under 1: no routing's)
// is refused.
func TestValuesBoundEveryReader(t *testing.T) {
	for _, d := range Values {
		got, ok := record.Declared(d.Name)
		if !ok || got != d {
			t.Errorf("%s: registered %+v, %v", d.Name, got, ok)
		}
		p := &record.Point{Type: record.TypePoint, ID: "moe/dispatch/nccl", Status: record.StatusOK, Samples: []float64{1e-6},
			Values: map[string]float64{d.Name: d.Min - 0.5}}
		if err := p.Validate(); err == nil || !strings.Contains(err.Error(), d.Name) {
			t.Errorf("%s below its range: %v", d.Name, err)
		}
	}
}
