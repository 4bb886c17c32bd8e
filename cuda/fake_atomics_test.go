package cuda

import (
	"errors"
	"strings"
	"testing"
)

// The fake takes an atomic's counters as the shim does: a float atomic is
// waived on its default NVSHMEM 3.4.5 ("needs NVSHMEM >= 3.7", unreachable:
// the harness records it waived), runs where NVSHBENCH_FAKE_NVSHMEM says
// 3.7 or later with its counters' bytes, and a size the atomic does not
// take fails (2 bytes are f16, never an integer counter).
func TestFakeAtomicsByTheirCounters(t *testing.T) {
	run := func(op string, elem int32) (Result, error) {
		t.Helper()
		f := NewFake()
		if err := f.Init(InitUID, 0, 1, FakeUID, 0, 1<<20); err != nil {
			t.Fatal(err)
		}
		defer f.Finalize()
		a := NewArgs(op)
		a.Size, a.Elem, a.CTAs, a.Threads, a.Samples, a.Verify = int64(elem), elem, 2, 64, 3, 1
		_, r, err := f.Run(a)
		return r, err
	}
	var e *Error
	for _, op := range []string{"rma.float_fetch_add", "lat.float_add"} {
		_, err := run(op, 4)
		// The shim's words (atomics.cuh: needs_nvshmem_37(has, calls)).
		want := "needs NVSHMEM >= 3.7 (" + Ops()[op].Calls + "): this shim was built against NVSHMEM 3.4"
		if !errors.As(err, &e) || !e.Unreachable() || Ops()[op].Calls == "" || !strings.HasSuffix(e.Msg, want) {
			t.Errorf("%s on the fake's NVSHMEM 3.4.5: %v, want waived for NVSHMEM 3.7", op, err)
		}
	}
	if _, err := run("rma.fetch_add", 2); !errors.As(err, &e) || e.Unreachable() || !strings.Contains(e.Msg, "takes u64 u32") {
		t.Errorf("a 2-byte integer counter: %v", err)
	}
	t.Setenv("NVSHBENCH_FAKE_NVSHMEM", "3.8.0")
	if info, _ := NewFake().DeviceInfo(0); info.NVSHMEMVersion() != "3.8.0" {
		t.Errorf("the fake reports NVSHMEM %s", info.NVSHMEMVersion())
	}
	// A rate counts a counter's bytes an operation (the shim's rma_bytes), a
	// round trip none; both are checked.
	for _, c := range []struct {
		op          string
		elem, bytes int32
	}{{"rma.float_fetch_add", 2, 2}, {"rma.float_add", 8, 8}, {"lat.float_fetch_add", 4, 0}} {
		r, err := run(c.op, c.elem)
		if err != nil || r.Bytes != int64(c.bytes) || r.JobChecked == 0 {
			t.Errorf("%s of %d bytes on NVSHMEM 3.8.0: %v, %d bytes an operation, %d checked", c.op, c.elem, err, r.Bytes, r.JobChecked)
		}
	}
	// --corrupt-checks: one counter of those checked is wrong.
	f := NewFake()
	if err := f.Init(InitUID, 0, 1, FakeUID, 0, 1<<20); err != nil {
		t.Fatal(err)
	}
	defer f.Finalize()
	a := NewArgs("rma.float_fetch_add")
	a.Size, a.Elem, a.CTAs, a.Threads, a.Samples, a.Verify, a.Corrupt = 2, 2, 2, 64, 1, 1, 1
	if _, r, err := f.Run(a); err != nil || r.JobErrors != 1 || r.JobChecked != 128 {
		t.Errorf("a corrupted float rate: %v, %d of %d counters wrong", err, r.JobErrors, r.JobChecked)
	}
	if _, err := run("rma.float_add", 1); err == nil || !strings.Contains(err.Error(), "takes f64 f32 f16") {
		t.Errorf("a 1-byte float counter: %v", err)
	}
}
