package cuda

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/nvshbench/nvshbench/cuda/shim"
)

// runFake runs op once on a one-PE fake standing for NVSHMEM version ("":
// the default).
func runFake(t *testing.T, version, op string) (Info, Result, error) {
	t.Helper()
	t.Setenv("NVSHBENCH_FAKE_NVSHMEM", version)
	f := NewFake()
	if err := f.Init(InitUID, 0, 1, FakeUID, 0, 1<<20); err != nil {
		t.Fatal(err)
	}
	defer f.Finalize()
	info, err := f.DeviceInfo(0)
	if err != nil {
		t.Fatal(err)
	}
	a := NewArgs(op)
	a.Size, a.CTAs, a.Threads, a.Samples, a.Verify = 4096, 4, 256, 3, 1
	a.Scope = ScopeBlock
	_, r, err := f.Run(a)
	return info, r, err
}

// The fake waives the rows of a newer NVSHMEM by the version it stands
// for, as the shim does: under the pinned 3.4.5 the region rows and the
// counted signal; under 3.8.0 the regions run and the counted signal is
// still waived (no NVSHMEM we build against is a CFT build).
func TestFakeWaivesNewerNVSHMEMRows(t *testing.T) {
	for _, c := range []struct {
		version, want string
		waived        map[string]string // op → a part of its waiver ("": runs)
	}{
		{"", "3.4.5", map[string]string{
			"rma.rate_put_region":      "needs NVSHMEM >= 3.8 (nvshmemx_region_start_block): this shim was built against NVSHMEM 3.4",
			"rma.rate_put_region_none": "needs NVSHMEM >= 3.8 (nvshmemx_region_start_block): this shim was built against NVSHMEM 3.4",
			"lat.region":               "needs NVSHMEM >= 3.8 (nvshmemx_region_start_block)",
			"rma.put_signal_counted":   "needs NVSHMEM >= 3.8 built with NVSHMEM_CFT_HANDLES_SUPPORT",
			"rma.rate_put":             "",
		}},
		{"3.8.0", "3.8.0", map[string]string{
			"rma.rate_put_region":      "",
			"rma.rate_put_region_none": "",
			"lat.region":               "",
			"rma.put_signal_counted":   "built against NVSHMEM 3.8 without it",
		}},
		{"4.0.1", "4.0.1", map[string]string{"rma.rate_put_region": "", "lat.region": ""}},
	} {
		for op, want := range c.waived {
			info, r, err := runFake(t, c.version, op)
			if got := info.NVSHMEMVersion(); got != c.want {
				t.Errorf("NVSHBENCH_FAKE_NVSHMEM=%q: the fake says NVSHMEM %s, want %s", c.version, got, c.want)
			}
			ce, _ := err.(*Error)
			switch {
			case want == "" && err != nil:
				t.Errorf("%s under %s: %v, want it run", op, c.want, err)
			case want == "" && r.Initiator != 1:
				t.Errorf("%s under %s: ran without an initiator: %+v", op, c.want, r)
			case want != "" && (ce == nil || !ce.Unreachable() || !strings.Contains(ce.Msg, want)):
				t.Errorf("%s under %s: %v, want a waiver saying %q", op, c.want, err, want)
			}
		}
	}
}

// cLiterals joins the adjacent C string literals of s (a call's arguments)
// up to the first that is not followed by another.
func cLiterals(s string) string {
	lit := regexp.MustCompile(`^\s*"((?:[^"\\]|\\.)*)"`)
	var b strings.Builder
	for m := lit.FindStringSubmatch(s); m != nil; m = lit.FindStringSubmatch(s) {
		b.WriteString(m[1])
		s = s[len(m[0]):]
	}
	return b.String()
}

// The fake's waivers are the shim's words: every operation it waives is
// one of newer.cuh, and each waiver is newer.cuh's format string (its
// needs_nvshmem, the counted signal's waiver where NVSHMEM is no CFT
// build) with the arguments newer.cuh passes.
func TestFakeNewerWaiversAreTheShims(t *testing.T) {
	src := shim.Files()["newer.cuh"]
	if src == "" {
		t.Fatal("no newer.cuh among the shim's sources")
	}
	for op := range fakeNewer {
		if o, ok := LookupOp(op); !ok || o.File != "newer.cuh" {
			t.Errorf("the fake waives %s, which is no entry of newer.cuh (%+v)", op, o)
		}
	}
	needs := regexp.MustCompile(`(?s)static int needs_nvshmem\(int major, int minor, bool has, const char \*what\) \{.*?fail\(NB_UNREACHABLE,(.*?)\n`).FindStringSubmatch(src)
	counted := regexp.MustCompile(`(?s)static int counted_waiver\(void\) \{.*?#else\s*return fail\(NB_UNREACHABLE,(.*?)NVSHMEM_VENDOR_MAJOR_VERSION`).FindStringSubmatch(src)
	what := regexp.MustCompile(`needs_nvshmem_38\(NB_HAS_NVSHMEM_REGION, "([^"]*)"\)`).FindStringSubmatch(src)
	if needs == nil || counted == nil || what == nil {
		t.Fatalf("newer.cuh's waivers not found: needs %v, counted %v, region %v", needs != nil, counted != nil, what != nil)
	}
	needsFmt, countedFmt := cLiterals(needs[1]), cLiterals(counted[1])
	if !strings.HasPrefix(needsFmt, "needs NVSHMEM >= %d.%d (%s)") || !strings.Contains(countedFmt, "NVSHMEM_CFT_HANDLES_SUPPORT") {
		t.Fatalf("read %q and %q", needsFmt, countedFmt)
	}
	v := [3]int{3, 4, 5}
	for op, want := range map[string]string{
		"rma.rate_put_region":      fmt.Sprintf(needsFmt, 3, 8, what[1], 3, 4),
		"rma.rate_put_region_none": fmt.Sprintf(needsFmt, 3, 8, what[1], 3, 4),
		"lat.region":               fmt.Sprintf(needsFmt, 3, 8, what[1], 3, 4),
		"rma.put_signal_counted":   fmt.Sprintf(countedFmt, 3, 4),
	} {
		if got := fakeNewer[op](v); got != want {
			t.Errorf("%s under 3.4.5: the fake says\n  %q\nthe shim\n  %q", op, got, want)
		}
	}
}
