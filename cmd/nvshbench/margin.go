package main

import (
	"math"
	"strconv"
	"strings"

	"github.com/spf13/pflag"

	"github.com/nvshbench/nvshbench/internal/decide"
)

// marginHelp is the --margin flag's help, the same on every command that
// names a winner.
const marginHelp = "practical margin of a winner: a lead below it is a tie however clear (e.g. 3% or 0.03)"

// defaultMargin is decide.DefaultMargin as the flag writes it.
const defaultMargin = "3%"

// addMarginFlag binds --margin to s.
func addMarginFlag(f *pflag.FlagSet, s *string) {
	f.StringVar(s, "margin", defaultMargin, marginHelp)
}

// parseMargin reads --margin as compare reads --threshold: "3%" or a
// fraction "0.03"; a bare number of 1 or more is refused ("did you mean
// 3%?"), as are NaN, infinities and negative values. It returns the rule.
func parseMargin(s string) (decide.Rule, error) {
	t := strings.TrimSpace(s)
	pct := strings.HasSuffix(t, "%")
	v, err := strconv.ParseFloat(strings.TrimSpace(strings.TrimSuffix(t, "%")), 64)
	if err != nil {
		return decide.Rule{}, usagef("invalid --margin %q: want a percentage like 3%% or a fraction like 0.03", s)
	}
	if !pct && v >= 1 {
		return decide.Rule{}, usagef("invalid --margin %q: a bare number is a fraction (%s would mean %s%%); did you mean %s%%?", s, t, strconv.FormatFloat(v*100, 'g', -1, 64), t)
	}
	if pct {
		v /= 100
	}
	if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
		return decide.Rule{}, usagef("invalid --margin %q: want a finite, non-negative percentage like 3%%", s)
	}
	r := decide.Default()
	r.Margin = v
	return r, nil
}
