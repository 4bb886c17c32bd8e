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
const marginHelp = "practical margin of a winner (and of a claimed slowdown in the bytes-per-SM tables): a lead below it is a tie however clear (e.g. 3% or 0.03)"

// defaultMargin is decide.DefaultMargin as the flag writes it.
const defaultMargin = "3%"

// addMarginFlag binds --margin to s.
func addMarginFlag(f *pflag.FlagSet, s *string) {
	f.StringVar(s, "margin", defaultMargin, marginHelp)
}

// parseMargin reads --margin as compare reads --threshold (parsePercent).
func parseMargin(s string) (decide.Rule, error) {
	v, err := parsePercent("margin", s, "3", "0.03", "")
	if err != nil {
		return decide.Rule{}, err
	}
	r := decide.Default()
	r.Margin = v
	return r, nil
}

// parsePercent reads a flag given as a percentage ("5%") or a fraction
// ("0.05"): a bare number of 1 or more is refused ("did you mean 5%?"), as
// are NaN, infinities and negative values. pct and frac are the examples
// its messages give; note follows the last one's example.
func parsePercent(flag, s, pct, frac, note string) (float64, error) {
	t := strings.TrimSpace(s)
	isPct := strings.HasSuffix(t, "%")
	v, err := strconv.ParseFloat(strings.TrimSpace(strings.TrimSuffix(t, "%")), 64)
	if err != nil {
		return 0, usagef("invalid --%s %q: want a percentage like %s%% or a fraction like %s", flag, s, pct, frac)
	}
	if !isPct && v >= 1 {
		return 0, usagef("invalid --%s %q: a bare number is a fraction (%s would mean %s%%); did you mean %s%%?", flag, s, t, strconv.FormatFloat(v*100, 'g', -1, 64), t)
	}
	if isPct {
		v /= 100
	}
	if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
		return 0, usagef("invalid --%s %q: want a finite, non-negative percentage like %s%%%s", flag, s, pct, note)
	}
	return v, nil
}
