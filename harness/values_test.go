package harness_test

import (
	"strings"
	"testing"

	"github.com/nvshbench/nvshbench/cuda"
	"github.com/nvshbench/nvshbench/harness"
	"github.com/nvshbench/nvshbench/internal/units"
	"github.com/nvshbench/nvshbench/record"
)

// A shim result's named values become the outcome's values as numbers,
// each checked against the benchmark's declarations: a name it does not
// declare, a unit that differs, a value outside its declared range (which
// every reader would refuse), a value given twice or a count beyond the
// result's array fails the point with that sentence; nothing is dropped.
func TestAbsorbReadsDeclaredValues(t *testing.T) {
	decl := record.Values{{Name: "busy", Unit: units.One, Min: 0, Max: 1}, {Name: "copy_s", Unit: units.Seconds, Min: 0, Max: record.MaxSample}}
	result := func(vals ...[2]string) cuda.Result {
		var r cuda.Result
		for i, v := range vals {
			if err := r.PutValue(v[0], v[1], 0.25*float64(i+1)); err != nil {
				t.Fatal(err)
			}
		}
		return r
	}
	var o harness.Outcome
	if err := o.Absorb(cuda.Timing{Samples: []float64{1e-6}}, result([2]string{"busy", "1"}, [2]string{"copy_s", "s"}), nil, decl); err != nil ||
		len(o.Values) != 2 || o.Values["busy"] != 0.25 || o.Values["copy_s"] != 0.5 {
		t.Fatalf("values %v, error %v", o.Values, err)
	}
	o = harness.Outcome{}
	if err := o.Absorb(cuda.Timing{}, cuda.Result{}, nil, nil); err != nil || o.Values != nil {
		t.Errorf("no values: %v, error %v", o.Values, err)
	}
	over := result()
	over.NValues = cuda.MaxValues + 1
	var wide cuda.Result
	if err := wide.PutValue("busy", "1", 1.5); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		r    cuda.Result
		decl record.Values
		want string
	}{
		{result([2]string{"idle", "1"}), decl, "the shim gave the value idle (1), which this benchmark does not declare (it declares [busy copy_s])"},
		{result([2]string{"busy", "1"}), nil, "the shim gave the value busy (1), and this benchmark declares none"},
		{result([2]string{"copy_s", "us"}), decl, `the shim gave the value copy_s in "us"; it is declared in "s"`},
		{result([2]string{"busy", "1"}, [2]string{"busy", "1"}), decl, "the shim gave the value busy twice"},
		{over, decl, "the shim's result says 9 values; it holds 8"},
		{wide, decl, "the shim gave the value busy = 1.5 1, outside its declared range 0..1 ()"},
	} {
		o := harness.Outcome{}
		if err := o.Absorb(cuda.Timing{}, c.r, nil, c.decl); err == nil || err.Error() != c.want {
			t.Errorf("error %v, want %q", err, c.want)
		}
	}
}

// PutValue fills the result as the shim's put_value does, and refuses,
// naming it, a value beyond the array or a name or unit longer than the
// ABI's fields.
func TestPutValueRefusesWhatDoesNotFit(t *testing.T) {
	var r cuda.Result
	for i := 0; i < cuda.MaxValues; i++ {
		if err := r.PutValue("v"+strings.Repeat("x", i), "s", float64(i)); err != nil {
			t.Fatal(err)
		}
	}
	if err := r.PutValue("ninth", "s", 9); err == nil || err.Error() != "the value ninth does not fit: a point's result holds 8 values" {
		t.Errorf("a ninth value: %v", err)
	}
	vals, err := r.NamedValues()
	if err != nil || len(vals) != cuda.MaxValues || vals[3].NameString() != "vxxx" || vals[3].Value != 3 || vals[3].UnitString() != "s" {
		t.Errorf("read back %v, %v", vals, err)
	}
	var s cuda.Result
	if err := s.PutValue(strings.Repeat("n", cuda.ValueNameLen), "s", 1); err == nil || !strings.Contains(err.Error(), "a name holds 23 bytes, a unit 7") {
		t.Errorf("a long name: %v", err)
	}
	if err := s.PutValue("n", "furlongs", 1); err == nil || s.NValues != 0 {
		t.Errorf("a long unit: %v (%d values)", err, s.NValues)
	}
}
