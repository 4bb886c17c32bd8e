package record

import (
	"fmt"
	"math"
	"slices"
	"sync"
)

// ValueDecl declares a point value (Point.Values) that a family's points
// carry: its name, its base unit (units.Seconds, units.BytesPerSec,
// units.One) and the physical range a measured one lies in. The shim gives
// some of them as named values, which the runners read against these
// declarations; the readers find them by these names, and refuse a point
// whose value lies outside its range (DeclareValues).
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
// declared, in the declared unit, finite and in the declared range. The
// error is the sentence a point fails with (a value out of its range would
// be refused by every reader of the file).
func (vs Values) Read(name, unit string, v float64) error {
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
	if math.IsNaN(v) || v < d.Min || v > d.Max {
		return fmt.Errorf("the shim gave the value %s = %g %s, outside its declared range %g..%g (%s)", name, v, unit, d.Min, d.Max, d.Doc)
	}
	return nil
}

// A family's record layer declares its values here when it loads
// (record/persm, record/moe; every reader imports them, as it does for
// RegisterUpgrade), and Point.Validate checks a point's values against
// them by name, whichever row carries them: a value outside its declared
// range is no measurement (a damaged or invented record). A name no family
// declares is only checked to be finite.
var (
	declaredMu sync.RWMutex
	declared   = map[string]ValueDecl{}
)

// DeclareValues registers a family's values for every reader's check. A
// name two families declare differently is a programming error: it panics
// (at start-up, as the family loads).
func DeclareValues(vs Values) {
	declaredMu.Lock()
	defer declaredMu.Unlock()
	for _, d := range vs {
		if d.Name == "" || d.Unit == "" || !(d.Min <= d.Max) {
			panic(fmt.Sprintf("record: value declaration %+v: a name, a unit and Min <= Max are needed", d))
		}
		if old, ok := declared[d.Name]; ok && (old.Unit != d.Unit || old.Min != d.Min || old.Max != d.Max) {
			panic(fmt.Sprintf("record: value %s declared twice, differently: %+v and %+v", d.Name, old, d))
		}
		declared[d.Name] = d
	}
}

// Declared returns the registered declaration of a value, by name.
func Declared(name string) (ValueDecl, bool) {
	declaredMu.RLock()
	defer declaredMu.RUnlock()
	d, ok := declared[name]
	return d, ok
}
