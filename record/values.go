package record

import (
	"fmt"
	"math"
	"slices"
)

// ValueDecl declares a point value (Point.Values) that a family's points
// carry: its name, its base unit (units.Seconds, units.BytesPerSec,
// units.One) and the range a measured one lies in (Max +Inf: unbounded).
// The shim gives some of them as named values, which the runners read
// against these declarations; the readers find them by these names.
type ValueDecl struct {
	Name     string
	Unit     string
	Min, Max float64
	Doc      string
}

// The values the record itself reads or derives (a MoE point's, whose
// family declares them: record/moe): the bytes that crossed to another GPU
// in one operation (MetricLink's numerator), and the floor Annotate
// derives from them (those bytes at the link's ceiling plus one round
// trip, seconds).
const (
	ValueRemoteBytes = "remote_bytes"
	ValueFloor       = "floor_s"
)

// Unbounded is a declaration's Max where a value has no upper limit.
var Unbounded = math.Inf(1)

// Values is a family's declared values.
type Values []ValueDecl

// Lookup finds a declaration by name.
func (vs Values) Lookup(name string) (ValueDecl, bool) {
	i := slices.IndexFunc(vs, func(d ValueDecl) bool { return d.Name == name })
	if i < 0 {
		return ValueDecl{}, false
	}
	return vs[i], true
}

// Read checks a value the shim gave against the declarations: its name
// declared, in the declared unit. The error is the sentence a point fails
// with.
func (vs Values) Read(name, unit string) error {
	d, ok := vs.Lookup(name)
	if !ok {
		var names []string
		for _, d := range vs {
			names = append(names, d.Name)
		}
		if len(names) == 0 {
			return fmt.Errorf("the shim gave the value %s (%s), and this benchmark declares none", name, unit)
		}
		return fmt.Errorf("the shim gave the value %s (%s), which this benchmark does not declare (it declares %v)", name, unit, names)
	}
	if d.Unit != unit {
		return fmt.Errorf("the shim gave the value %s in %q; it is declared in %q", name, unit, d.Unit)
	}
	return nil
}
