package shim

import (
	"regexp"
	"sort"
)

// Value is a named value the shim's sources give a point
// (put_value(res, "name", "unit", v), common.cuh): what the runners'
// declarations must have, in that unit.
type Value struct {
	Name, Unit, File string
}

var rePutValue = regexp.MustCompile(`\bput_value\(\s*\w+\s*,\s*"([^"]*)"\s*,\s*"([^"]*)"\s*,`)

// Values lists the values the shim's sources give, by file and name.
func Values() []Value { return parseValues(Files()) }

func parseValues(files map[string]string) []Value {
	var out []Value
	for n, text := range files {
		for _, m := range rePutValue.FindAllStringSubmatch(text, -1) {
			out = append(out, Value{Name: m[1], Unit: m[2], File: n})
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].File != out[j].File {
			return out[i].File < out[j].File
		}
		return out[i].Name < out[j].Name
	})
	return out
}
