package cuda

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
)

// The tests of the tests: a scratch copy of the shim's sources with one
// part of a mechanism, a collective, an atomic or a family left out (or a
// dispatch case deleted), compiled with the build's own flags (every
// warning an error): each must fail, with the message that names what is
// missing. A failing case stops in nvcc's front end (templates, static
// assertions, warnings), so it takes seconds; the unchanged sources are
// the build's own compile (make shim-check). They need
// nvcc and NVSHMEM's headers (Discover: CUDA_HOME, NVSHMEM_HOME, nvcc on
// PATH, the pip wheels of python3 or $NVSHBENCH_PYTHON) and skip, saying
// so, without them; scripts/ci-toolchain.sh runs them against both library
// sets with NVSHBENCH_SCRATCH_REQUIRE=1, where a missing compiler fails.
func TestForgottenPartsDoNotCompile(t *testing.T) {
	tc, err := Discover()
	if err != nil || tc.NVCC == "" || tc.NVSHMEMHome == "" {
		why := fmt.Sprintf("no nvcc and NVSHMEM headers found (%v): the forgotten-part compiles need them (scripts/ci-toolchain.sh runs them)", err)
		if os.Getenv("NVSHBENCH_SCRATCH_REQUIRE") != "" {
			t.Fatal(why)
		}
		t.Skip(why)
	}
	cases := []struct {
		name       string
		file       string
		old, new   string
		wantOutput string // in nvcc's output: what names the missing part
	}{
		{"a mechanism without its move", "pm_mech.cuh",
			"  __device__ static void move(uint8_t *d, const uint8_t *s, int64_t len, PmShare, int peer, uint8_t *, uint32_t &) {\n    nvshmemx_putmem_nbi_block(d, s, len, peer);\n    nvshmem_quiet();\n  }\n", "",
			"PmPut: a mechanism on SMs has its split, staged, device begin and move"},
		{"a mechanism on SMs without its split", "pm_mech.cuh",
			"  static constexpr PmSplit split = PmSplit::chunks;\n  static constexpr bool staged = false;\n  static int validate(Run *) { return 0; }\n  static int setup(Run *) { return 0; }\n  __device__ static void begin(uint8_t *) {}\n  __device__ static void move(uint8_t *d, const uint8_t *s, int64_t len, PmShare, int peer,",
			"  static constexpr bool staged = false;\n  static int validate(Run *) { return 0; }\n  static int setup(Run *) { return 0; }\n  __device__ static void begin(uint8_t *) {}\n  __device__ static void move(uint8_t *d, const uint8_t *s, int64_t len, PmShare, int peer,",
			"PmPut: a mechanism on SMs has its split, staged, device begin and move"},
		{"a mechanism without a fact", "pm_mech.cuh",
			"  static constexpr bool loadstore = false;\n", "",
			"PmPut: a mechanism states code, op, dst, loadstore, sms, align, validate and setup"},
		{"a list word without its struct", "pm_mech.cuh",
			"#define NB_PM_MECHANISMS(X) X(PmSt)", "#define NB_PM_MECHANISMS(X) X(PmWarp) X(PmSt)",
			"PmWarp"},
		{"two mechanisms of one code", "pm_mech.cuh",
			"static constexpr int code = 101;", "static constexpr int code = 100;",
			"two bytes-per-SM mechanisms or compute kernels share a code"},
		{"a destination case deleted from the dispatch", "pm_mech.cuh",
			"  else if constexpr (M::dst == PmDst::lsa) return g_pm_lsa;\n", "",
			"a destination pm_dst does not know"},
		{"a destination case deleted from the check", "persm.cuh",
			"  if constexpr (M::dst == PmDst::peer || M::dst == PmDst::symmetric) return at_put_target(r);",
			"  if constexpr (M::dst == PmDst::peer) return at_put_target(r);",
			"a destination the check does not know"},
		{"a collective without its dtypes", "coll_broadcast.cuh",
			"  static constexpr bool all_dtypes = false;\n", "",
			"Broadcast: a collective has blocks, all_dtypes, device, stream and nccl"},
		{"an entry without its check", "coll_broadcast.cuh",
			"&kColl, T_PAYLOAD, kCheckRoot, coll_launch<Broadcast>}", "&kColl, T_PAYLOAD, coll_launch<Broadcast>}",
			"OpEntry"},
		{"an atomic whose after rule is empty", "atomics.cuh",
			"NB_AMO(AmoAdd, INT, 0, 0, amo_count,", "NB_AMO(AmoAdd, INT, 0, 0, ,",
			"expression has no effect"},
		{"a family without its validate", "rate.cuh",
			".validate = rate_validate,", "",
			"kRate: a family needs its name, validate"},
	}
	dir := t.TempDir()
	var mu sync.Mutex // nvcc's front end on two cores: two at a time
	sem := make(chan struct{}, 2)
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			sem <- struct{}{}
			defer func() { <-sem }()
			src, err := shimSources.ReadFile(c.file)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(string(src), c.old) {
				t.Fatalf("%s no longer holds the text this case removes: %q (update the case)", c.file, c.old)
			}
			work := filepath.Join(dir, fmt.Sprint(i))
			mu.Lock()
			err = writeShim(work, c.file, strings.Replace(string(src), c.old, c.new, 1))
			mu.Unlock()
			if err != nil {
				t.Fatal(err)
			}
			out, err := frontEnd(tc, work)
			if err == nil {
				t.Fatalf("the shim compiled with %s", c.name)
			}
			if !strings.Contains(out, c.wantOutput) {
				t.Errorf("nvcc failed without saying %q:\n%s", c.wantOutput, lastLines(out, 20))
			}
		})
	}
}

// writeShim writes every source of the shim into dir, file's as text.
func writeShim(dir, file, text string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	names, err := filepath.Glob(filepath.Join(".", "shim", "*"))
	if err != nil {
		return err
	}
	for _, n := range names {
		base := filepath.Base(n)
		if !strings.HasSuffix(base, ".cu") && !strings.HasSuffix(base, ".cuh") && !strings.HasSuffix(base, ".h") {
			continue
		}
		b, err := shimSources.ReadFile(base)
		if err != nil {
			return err
		}
		if base == file {
			b = []byte(text)
		}
		if err := os.WriteFile(filepath.Join(dir, base), b, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// frontEnd runs nvcc's front end (-cuda) on dir's nvshbench.cu with the
// build's compile flags.
func frontEnd(tc *Toolchain, dir string) (string, error) {
	src := filepath.Join(dir, "nvshbench.cu")
	args := tc.BuildCommand(src, filepath.Join(dir, "out.so"))
	args = slices.DeleteFunc(args[:slices.Index(args, src)], func(a string) bool { return a == "-shared" || a == "-lineinfo" })
	args = append(args, "-cuda", src, "-o", filepath.Join(dir, "out.ii"))
	out, err := exec.Command(args[0], args[1:]...).CombinedOutput()
	return string(out), err
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}
