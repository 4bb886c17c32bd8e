// Package units is how nvshbench writes and reads quantities. Results store
// base units (bytes, seconds, bytes/s, operations/s); these helpers scale them
// for people (GB = 1e9 bytes, µs = 1e-6 s), print sizes in binary units and
// parse the sizes a user types. A leaf: it imports no other nvshbench
// package.
package units

import (
	"fmt"
	"math"
	"math/bits"
	"strconv"
	"strings"
)

// The base units a metric's values are stored in, and those of a point's
// other values: ByteCount, bytes; One, no dimension (a share, a count, a
// 0/1 answer).
const (
	BytesPerSec = "B/s"
	Seconds     = "s"
	OpsPerSec   = "op/s"
	ByteCount   = "B"
	One         = "1"
)

// HigherIsBetter reports whether larger values of the unit are better.
func HigherIsBetter(unit string) bool { return unit != Seconds }

// Scale is how values of a base unit are shown: value/Div in Label, with
// Prec decimals in a table.
type Scale struct {
	Div   float64
	Label string
	Prec  int
}

// Of returns how values of a base unit are shown: GB/s, µs or Mop/s. A unit
// it does not know is shown as a bandwidth (GB/s), and ok is false.
func Of(unit string) (s Scale, ok bool) {
	switch unit {
	case Seconds:
		return Scale{1e-6, "µs", 2}, true
	case OpsPerSec:
		return Scale{1e6, "Mop/s", 1}, true
	}
	return Scale{1e9, "GB/s", 1}, unit == BytesPerSec
}

// Bytes prints a size with binary units: 8 B, 4 KiB, 1 MiB, 1 GiB.
func Bytes(n int64) string {
	units := []string{"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"}
	v, i := n, 0
	for v != 0 && v%1024 == 0 && i < len(units)-1 {
		v /= 1024
		i++
	}
	return fmt.Sprintf("%d %s", v, units[i]) // exact: never 8.4e+06 TiB
}

// Value prints a number with three significant digits and no
// exponent (5000, 250, 2.5, 0.025): the number format of the charts and the model's tables.
func Value(v float64) string {
	if v == 0 {
		return "0"
	}
	mag := math.Floor(math.Log10(math.Abs(v)))
	prec := int(2 - mag)
	if prec < 0 {
		prec = 0
	}
	r := math.Pow(10, float64(prec))
	return strconv.FormatFloat(math.Round(v*r)/r, 'f', -1, 64)
}

// ParseSize parses a byte count with an optional binary suffix: 8, 4K,
// 1M, 1G, 1GiB.
func ParseSize(s string) (int64, error) {
	t := strings.TrimSpace(s)
	u := strings.ToUpper(t)
	mult := int64(1)
	for _, suf := range []struct {
		s string
		m int64
	}{{"KIB", 1 << 10}, {"MIB", 1 << 20}, {"GIB", 1 << 30}, {"KB", 1 << 10}, {"MB", 1 << 20}, {"GB", 1 << 30}, {"K", 1 << 10}, {"M", 1 << 20}, {"G", 1 << 30}, {"B", 1}} {
		if strings.HasSuffix(u, suf.s) {
			u, mult = strings.TrimSuffix(u, suf.s), suf.m
			break
		}
	}
	v, err := strconv.ParseInt(strings.TrimSpace(u), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("invalid size %q: want a byte count such as 256, 4K, 1M or 1G", s)
	}
	if v <= 0 {
		return 0, fmt.Errorf("invalid size %q: must be positive", s)
	}
	if hi, _ := bits.Mul64(uint64(v), uint64(mult)); hi != 0 || v*mult < 0 {
		return 0, fmt.Errorf("invalid size %q: too large", s)
	}
	return v * mult, nil
}

// ParseSizes parses "8:1G" (powers of two from 8 B to 1 GiB), "lo:hi:f"
// (multiply by f), or a comma list "256,4K,1M" (a size listed twice, as in
// "4K,4096", is measured once).
func ParseSizes(s string) ([]int64, error) {
	if strings.Contains(s, ":") {
		parts := strings.Split(s, ":")
		if len(parts) > 3 {
			return nil, fmt.Errorf("invalid size range %q: want LO:HI or LO:HI:FACTOR", s)
		}
		lo, err := ParseSize(parts[0])
		if err != nil {
			return nil, err
		}
		hi, err := ParseSize(parts[1])
		if err != nil {
			return nil, err
		}
		if hi < lo {
			return nil, fmt.Errorf("invalid size range %q: %d > %d", s, lo, hi)
		}
		f := int64(2)
		if len(parts) == 2 && lo&(lo-1) != 0 {
			return nil, fmt.Errorf("invalid size range %q: LO:HI runs over the powers of two from LO, and %d is none; give LO:HI:FACTOR (%s:2 steps by doubling from %d) or a list", s, lo, s, lo)
		}
		if len(parts) == 3 {
			f, err = strconv.ParseInt(parts[2], 10, 64)
			if err != nil || f < 2 {
				return nil, fmt.Errorf("invalid size range %q: the factor must be an integer ≥ 2", s)
			}
		}
		var out []int64
		for v := lo; v <= hi && v > 0; v *= f {
			out = append(out, v)
		}
		return out, nil
	}
	var out []int64
	seen := map[int64]bool{}
	for _, p := range strings.Split(s, ",") {
		v, err := ParseSize(p)
		if err != nil {
			return nil, err
		}
		if !seen[v] {
			seen[v] = true
			out = append(out, v)
		}
	}
	return out, nil
}
