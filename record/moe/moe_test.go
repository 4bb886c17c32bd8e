package moe

import "testing"

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
