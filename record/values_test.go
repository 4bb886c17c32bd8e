package record_test

import (
	"strings"
	"testing"

	"github.com/nvshbench/nvshbench/internal/units"
	"github.com/nvshbench/nvshbench/record"
)

// A declared value is checked by name on every point that carries it,
// whichever row: inside its range the point reads, outside (or not finite)
// it is refused naming the point and the value; a name no family declares
// is only checked to be finite. Declaring a name again the same way is
// harmless; declaring it differently panics (two families disagree).
func TestDeclaredValuesBoundPoints(t *testing.T) {
	record.DeclareValues(record.Values{{Name: "test_share", Unit: units.One, Min: 0, Max: 1, Doc: "a share"}})
	record.DeclareValues(record.Values{{Name: "test_share", Unit: units.One, Min: 0, Max: 1, Doc: "a share"}})
	if d, ok := record.Declared("test_share"); !ok || d.Max != 1 {
		t.Fatalf("declared %+v, %v", d, ok)
	}
	point := func(name string, v float64) *record.Point {
		return &record.Point{Type: record.TypePoint, ID: "x/y", Status: record.StatusOK, Samples: []float64{1e-6},
			Params: record.Params{Size: 8}, Values: map[string]float64{name: v}}
	}
	for _, c := range []struct {
		name string
		v    float64
		want string
	}{
		{"test_share", 0.5, ""},
		{"test_share", 1, ""},
		{"test_share", 1.5, "point x/y size=8: value test_share = 1.5 (1) is outside its declared range 0..1 (a share): a damaged record"},
		{"test_share", -0.5, "outside its declared range"},
		{"test_undeclared", 1e300, ""},
	} {
		err := point(c.name, c.v).Validate()
		if (c.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), c.want)) {
			t.Errorf("%s = %g: %v, want %q", c.name, c.v, err, c.want)
		}
	}
	for _, bad := range []record.Values{
		{{Name: "test_share", Unit: units.Seconds, Min: 0, Max: 1}},
		{{Name: "test_share", Unit: units.One, Min: 0, Max: 2}},
		{{Name: "test_nounit", Min: 0, Max: 1}},
		{{Name: "test_inverted", Unit: units.One, Min: 1, Max: 0}},
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%+v declared without a panic", bad)
				}
			}()
			record.DeclareValues(bad)
		}()
	}
}
