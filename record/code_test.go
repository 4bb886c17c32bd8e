package record_test

import (
	"testing"

	"github.com/nvshbench/nvshbench/record"
)

// A declaration names the libraries its code calls, or CUDAOnly alone, and
// a collective only of a library it calls.
func TestCodeDeclarations(t *testing.T) {
	for _, c := range []struct {
		code  record.Code
		valid bool
	}{
		{record.Code{}, false},
		{record.Code{Calls: record.CUDAOnly}, true},
		{record.Code{Calls: record.CUDAOnly | record.NVSHMEM}, false},
		{record.Code{Calls: record.NVSHMEM | record.NCCL, Collective: record.NVSHMEM}, true},
		{record.Code{Calls: record.NVSHMEM, Collective: record.NCCL}, false},
		{record.Code{Calls: record.NCCL, Collective: record.NCCL | record.NVSHMEM}, false},
	} {
		if why := c.code.Invalid(); (why == "") != c.valid {
			t.Errorf("%+v: %q, want valid %v", c.code, why, c.valid)
		}
	}
	if got := (record.NVSHMEM | record.NCCL).Names(); len(got) != 2 || got[0] != "NVSHMEM" || got[1] != "NCCL" {
		t.Errorf("names %q", got)
	}
	if got := record.CUDAOnly.Names(); len(got) != 0 {
		t.Errorf("CUDA alone names %q", got)
	}
}
