package main

import (
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The tests of the tests, on the Go side: a copy of the module with a
// scratch addition (a bytes-per-SM mechanism, a collective, an atomic) or
// with one of its parts left out, and the module's own tests run in it. A
// whole addition passes them, its rows shown by every reader with no
// reader edited; each part left out fails the test that names it. (The
// shim's own refusals, a member or a dispatch case left out, are compiles:
// cuda/forgotten_test.go.)
func TestForgottenPartsFailTheirTests(t *testing.T) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command to run the module's tests in a copy")
	}
	const (
		mechFile = "cuda/shim/pm_mech.cuh"
		lineFile = "record/persm/persm.go"
		collFile = "cuda/shim/collectives.cuh"
		amoFile  = "cuda/shim/atomics.cuh"
		valFile  = "record/persm/values.go"
	)
	// A warp-scope NVSHMEM put as a mechanism: its struct, its list word,
	// its Go line.
	warpStruct := edit{mechFile, "#define NB_PM_MECHANISMS(X)", `// warp: nvshmemx_putmem_nbi_warp + quiet, a sub-chunk a warp.
struct PmWarp {
  static constexpr int code = 108;
  static constexpr const char *op = "rma.pm_warp";
  static constexpr PmDst dst = PmDst::symmetric;
  static constexpr bool loadstore = false;
  static constexpr bool sms = true;
  static constexpr int64_t align = 1;
  static constexpr PmSplit split = PmSplit::chunks;
  static constexpr bool staged = false;
  static int validate(Run *) { return 0; }
  static int setup(Run *) { return 0; }
  __device__ static void begin(uint8_t *) {}
  __device__ static void move(uint8_t *d, const uint8_t *s, int64_t len, PmShare, int peer, uint8_t *, uint32_t &) {
    int64_t w = threadIdx.x / 32, n = blockDim.x / 32, c = (len + n - 1) / n, o = w * c;
    if (o < len) nvshmemx_putmem_nbi_warp(d + o, s + o, o + c <= len ? c : len - o, peer);
    nvshmem_quiet();
    __syncthreads();
  }
};

#define NB_PM_MECHANISMS(X)`}
	warpWord := edit{mechFile, "X(PmSt) X(PmTma) X(PmPut)", "X(PmSt) X(PmTma) X(PmPut) X(PmWarp)"}
	warpLine := edit{lineFile, `		{"rma.pm_put", "put",`, `		{"rma.pm_warp", "warp", "NVSHMEM: nvshmemx_putmem_nbi_warp + quiet, a sub-chunk a warp"},
		{"rma.pm_put", "put",`}
	// A collective: its file (struct, check, entry), its include, its list
	// word; its Go registration (suites/collectives) left out.
	scanFile := edit{"cuda/shim/coll_scan.cuh", "", `// coll_scan.cuh: an inclusive scan, a scratch collective.
enum { NB_OP_SCAN = 49 };
struct Scan {
  static constexpr bool blocks = false;
  static constexpr bool all_dtypes = false;
};
NB_CHECK(kCheckScanned, "the prefix sums", coll_output, coll_verify<Scan>);
static constexpr OpEntry kScan = {NB_OP_SCAN, "coll.scan", &kColl, T_PAYLOAD, kCheckScanned, coll_launch<Scan>};
`}
	scanInclude := edit{collFile, `#include "coll_teamsync.cuh"`, "#include \"coll_teamsync.cuh\"\n#include \"coll_scan.cuh\""}
	scanWord := edit{collFile, "X(Sync) X(TeamSync)", "X(Sync) X(TeamSync) X(Scan)"}
	persmTests := "^(TestEveryListWordHasItsLine|TestIDsReadBack|TestPerSMTablesShowEveryMechanism|TestShimAgrees|" +
		"TestEveryBenchmarkNamesAnOperationOfTheShim|TestBenchmarksAgreeWithTheirEntriesTraits|TestDispatchTableIsConsistent)$"
	persmPkgs := []string{"./record/persm", "./report", "./suites/persm", "./harness", "./cuda/shim"}
	for _, c := range []struct {
		name  string
		edits []edit
		run   string
		pkgs  []string
		pass  bool
		want  []string // in the tests' output
	}{
		{"a mechanism whole", []edit{warpStruct, warpWord, warpLine}, persmTests, persmPkgs, true,
			[]string{"mechanisms: [st tma put warp st1 nccl-lsa ce]"}},
		{"a mechanism without its Go line", []edit{warpStruct, warpWord}, persmTests, persmPkgs, false,
			[]string{"the shim's mechanism PmWarp (rma.pm_warp) has no line in record/persm's mechanismLines"}},
		{"a mechanism without its list word", []edit{warpStruct, warpLine}, persmTests, persmPkgs, false,
			[]string{"record/persm has a line for rma.pm_warp, which the shim's lists do not have"}},
		{"a mechanism without its struct", []edit{warpWord, warpLine}, persmTests, persmPkgs, false,
			[]string{"a bytes-per-SM list names PmWarp, and no file has its struct"}},
		{"a collective without its Go registration", []edit{scanFile, scanInclude, scanWord},
			"^(TestTableICountsEveryCollective|TestEveryCollectiveOfTheShimIsRegistered)$", []string{"./report", "./suites/collectives"}, false,
			[]string{"collectives moving a payload: [allreduce allgather alltoall broadcast reducescatter scan]", "--- PASS: TestTableICountsEveryCollective",
				"the shim's collectives [allgather allreduce alltoall barrier broadcast reducescatter scan sync teamsync], this suite's registrations"}},
		{"a collective without its list word", []edit{scanFile, scanInclude}, "^TestDispatchTableIsConsistent$|^TestCollectivesAreOneFileAndOneLine$",
			[]string{"./cuda/shim"}, false, []string{"coll.scan (coll_scan.cuh) is not in collectives.cuh's NB_COLLECTIVES"}},
		{"an atomic without its struct", []edit{{amoFile, `  X(add, AmoAdd, "atomic add of 1")`, `  X(add, AmoAdd, "atomic add of 1")                                                             \
  X(nand, AmoNand, "atomic nand")`}}, "^TestDispatchTableIsConsistent$", []string{"./cuda/shim"}, false,
			[]string{"rma.nand: its struct AmoNand has no NB_AMO(AmoNand, TYPES, ...) line"}},
		{"a value without its declaration", []edit{{valFile, `	{Name: ValueCEFeed, Unit: units.Seconds`, `	// {Name: ValueCEFeed, Unit: units.Seconds`}},
			"^(TestEveryShimValueIsDeclared|TestFakeRunsTheCopyEngineBeside)$", []string{"./harness", "./suites/persm"}, false,
			[]string{"pm_feed.cuh gives the value ce_feed_s (s), which no benchmark declares",
				"the shim gave the value ce_feed_s (s), which this benchmark does not declare"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := copyModule(t, "../..")
			for _, e := range c.edits {
				e.apply(t, dir)
			}
			args := append([]string{"test", "-count=1", "-v", "-run", c.run}, c.pkgs...)
			cmd := exec.Command(goBin, args...)
			cmd.Dir = dir
			cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOFLAGS=")
			out, err := cmd.CombinedOutput()
			if (err == nil) != c.pass {
				t.Errorf("go test %s: passed %v, want %v:\n%s", strings.Join(c.pkgs, " "), err == nil, c.pass, outputTail(string(out), 40))
			}
			for _, w := range c.want {
				if !strings.Contains(string(out), w) {
					t.Errorf("the tests' output does not say %q:\n%s", w, outputTail(string(out), 40))
				}
			}
		})
	}
}

// edit replaces old in a module file with new (old "": the file is new).
type edit struct{ file, old, new string }

func (e edit) apply(t *testing.T, dir string) {
	t.Helper()
	p := filepath.Join(dir, e.file)
	if e.old == "" {
		if err := os.WriteFile(p, []byte(e.new), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), e.old) {
		t.Fatalf("%s no longer holds %q: update the scratch edit", e.file, e.old)
	}
	if err := os.WriteFile(p, []byte(strings.Replace(string(b), e.old, e.new, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
}

// copyModule copies the module's sources under root (not its results,
// builds or history) into a temporary folder.
func copyModule(t *testing.T, root string) string {
	t.Helper()
	dir := t.TempDir()
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		if d.IsDir() {
			if n := d.Name(); p != root && (n == "results" || n == "build" || strings.HasPrefix(n, ".")) {
				return filepath.SkipDir
			}
			return os.MkdirAll(filepath.Join(dir, rel), 0o755)
		}
		if !d.Type().IsRegular() {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dir, rel), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// outputTail is the last n lines of a long output.
func outputTail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}
