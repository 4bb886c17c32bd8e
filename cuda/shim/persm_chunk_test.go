package shim

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// pm_chunk (pm_mech.cuh), compiled for the host from the shim's own text:
// the budget's runs cover the buffer in order, each starts at a multiple
// of its grain (a TMA tile where every CTA gets one), they differ by at
// most a grain, and a power-of-two budget of a power-of-two size gets the
// equal runs it always had.
func TestChunksAreAlignedAndEven(t *testing.T) {
	cxx, err := exec.LookPath("c++")
	if err != nil {
		t.Skip("no C++ compiler to run pm_chunk on the host")
	}
	src := Files()["pm_mech.cuh"]
	var defs []string
	for _, re := range []string{`(?m)^#define PM_TILE .*$`, `(?m)^#define PM_GRAIN .*$`,
		`(?s)__host__ __device__ static inline void pm_chunk\(.*?\n}\n`} {
		m := regexp.MustCompile(re).FindString(src)
		if m == "" {
			t.Fatalf("pm_mech.cuh has no %s", re)
		}
		defs = append(defs, m)
	}
	type tcase struct {
		size int64
		g    int
	}
	var cases []tcase
	for _, size := range []int64{16, 1008, 4 << 10, 64 << 10, 1 << 20, 1<<20 + 48, 256 << 20, 1 << 30, 1<<30 - 16} {
		for _, g := range []int{1, 2, 7, 16, 32, 66, 100, 132} {
			cases = append(cases, tcase{size, g})
		}
	}
	var prog strings.Builder
	prog.WriteString("#include <stdio.h>\n#include <stdint.h>\n#define __host__\n#define __device__\n")
	prog.WriteString(strings.Join(defs, "\n") + "\nint main(void) {\n  int64_t off, len;\n")
	for _, c := range cases {
		fmt.Fprintf(&prog, "  for (int k = 0; k < %d; k++) { pm_chunk(%dll, %d, k, &off, &len); printf(\"%d %d %%d %%lld %%lld\\n\", k, (long long)off, (long long)len); }\n",
			c.g, c.size, c.g, c.size, c.g)
	}
	prog.WriteString("  return 0;\n}\n")
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "c.cc"), []byte(prog.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	exe := filepath.Join(dir, "c")
	if out, err := exec.Command(cxx, "-O1", "-o", exe, filepath.Join(dir, "c.cc")).CombinedOutput(); err != nil {
		t.Fatalf("c++: %v\n%s", err, out)
	}
	out, err := exec.Command(exe).Output()
	if err != nil {
		t.Fatal(err)
	}
	type run struct{ off, len int64 }
	runs := map[tcase][]run{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		var f [5]int64
		for i, w := range strings.Fields(line) {
			f[i], _ = strconv.ParseInt(w, 10, 64)
		}
		c := tcase{f[0], int(f[1])}
		runs[c] = append(runs[c], run{f[3], f[4]})
	}
	for _, c := range cases {
		rs := runs[c]
		if len(rs) != c.g {
			t.Fatalf("%d bytes over %d CTAs: %d runs", c.size, c.g, len(rs))
		}
		grain := int64(16 << 10)
		for grain > 16 && c.size < grain*int64(c.g) {
			grain /= 2
		}
		at, lo, hi := int64(0), rs[0].len, rs[0].len
		for k, r := range rs {
			if r.off != at {
				t.Errorf("%d bytes over %d CTAs: run %d at %d, want %d (the runs in order, none between)", c.size, c.g, k, r.off, at)
			}
			if r.len > 0 && r.off%grain != 0 {
				t.Errorf("%d bytes over %d CTAs: run %d at %d, not a multiple of its %d-byte grain", c.size, c.g, k, r.off, grain)
			}
			at += r.len
			if k < c.g-1 || r.len > 0 { // the last run takes the remainder
				lo, hi = min(lo, r.len), max(hi, r.len)
			}
		}
		if at != c.size {
			t.Errorf("%d bytes over %d CTAs: the runs cover %d", c.size, c.g, at)
		}
		if c.size%grain == 0 && hi-lo > grain {
			t.Errorf("%d bytes over %d CTAs: runs of %d to %d bytes, over a %d-byte grain apart", c.size, c.g, lo, hi, grain)
		}
		if c.size >= 16*int64(c.g) && c.size&(c.size-1) == 0 && c.g&(c.g-1) == 0 && (lo != c.size/int64(c.g) || hi != lo) {
			t.Errorf("%d bytes over %d CTAs: runs of %d to %d bytes, want %d each", c.size, c.g, lo, hi, c.size/int64(c.g))
		}
	}
	// The case that ran slow: 1 GiB over 66 SMs, every run tile-aligned.
	for k, r := range runs[tcase{1 << 30, 66}] {
		if r.off%(16<<10) != 0 {
			t.Errorf("1 GiB over 66 CTAs: run %d at %d, off a 16 KiB tile", k, r.off)
		}
	}
}
