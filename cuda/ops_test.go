package cuda

import (
	"strings"
	"testing"
)

// Args carry the name; one too long for the ABI cannot match an entry.
func TestArgsOpName(t *testing.T) {
	a := NewArgs("rma.put_signal")
	if a.OpString() != "rma.put_signal" {
		t.Errorf("OpString %q", a.OpString())
	}
	a.SetOp("lat.get")
	if a.OpString() != "lat.get" {
		t.Errorf("SetOp again: %q", a.OpString())
	}
	long := strings.Repeat("x", 40)
	a.SetOp(long)
	if got := a.OpString(); len(got) != OpNameLen-1 || got == long {
		t.Errorf("a long name is cut to %d bytes: %q", OpNameLen-1, got)
	}
}

// The fake answers by the shim's table: an unknown name fails as the shim's
// nb_run does, and an operation the fake has no figure for runs with its
// kind's model (signal_add: an atomic rate, from its entry's traits).
func TestFakeKnowsTheShimsOperations(t *testing.T) {
	f := NewFake()
	if err := f.Init(InitUID, 0, 1, FakeUID, 0, 1<<20); err != nil {
		t.Fatal(err)
	}
	defer f.Finalize()
	a := NewArgs("rma.no_such_op")
	a.Size, a.CTAs, a.Threads, a.Samples = 8, 1, 32, 3
	if _, _, err := f.Run(a); err == nil || !strings.Contains(err.Error(), `unknown operation "rma.no_such_op"`) {
		t.Errorf("unknown name: %v", err)
	}
	a.SetOp("rma.signal_add")
	a.CTAs, a.Threads = 2, 64
	tm, r, err := f.Run(a)
	if err != nil || len(tm.Samples) != 3 || r.Bytes != 8 || r.OpsPerIter != 128 {
		t.Fatalf("signal_add: %v, %d samples, %d bytes, %d operations per iteration", err, len(tm.Samples), r.Bytes, r.OpsPerIter)
	}
	if want := 1e-6 / 128; tm.Samples[0] != want {
		t.Errorf("signal_add modelled at %g s per operation, want the atomics' %g", tm.Samples[0], want)
	}
}
