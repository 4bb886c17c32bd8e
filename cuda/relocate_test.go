package cuda

import (
	"bufio"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ebitengine/purego"

	"github.com/nvshbench/nvshbench/internal/relocated"
)

// The login-node case without a GPU: the shim built against the pinned
// NVSHMEM wheel in one folder loads in a process that finds NVSHMEM only as
// a copy in another folder (the build folder is out of reach: the shim's
// RUNPATH names a folder that does not exist), the NVSHMEM mapped is the
// copy, and every bootstrap plugin NVSHMEM will be pointed at is the
// copy's, by its full path, and loads (PMI, PMI-2 and the unique ID's
// always; MPI where Open MPI's library is installed; PMIx is reported).
// It runs in a child process: Preload's libraries stay open for the life of
// a process.
func TestRelocatedNVSHMEM(t *testing.T) {
	if enc := os.Getenv("NVSHBENCH_RELOCATED_CHILD"); enc != "" {
		var s relocated.Setup
		if err := json.Unmarshal([]byte(enc), &s); err != nil {
			t.Fatal(err)
		}
		relocatedChild(t, &s)
		return
	}
	s := relocated.New(t)
	enc, _ := json.Marshal(s)
	cmd := exec.Command(os.Args[0], "-test.run=^TestRelocatedNVSHMEM$", "-test.v", "-test.count=1")
	cmd.Env = s.Env(os.Environ(), "NVSHBENCH_RELOCATED_CHILD="+string(enc))
	out, err := cmd.CombinedOutput()
	t.Logf("shim built against %s, NVSHMEM copied to %s, the shim's RUNPATH now %s; in the child:\n%s", s.Built, s.Home, s.Gone, out)
	if strings.Contains(string(out), "--- SKIP: TestRelocatedNVSHMEM") {
		if os.Getenv(relocated.EnvRequire) == "1" {
			t.Fatalf("%s=1 but the child skipped", relocated.EnvRequire)
		}
		t.Skip("SKIPPED: see the child's reason above")
	}
	if err != nil || !strings.Contains(string(out), "--- PASS: TestRelocatedNVSHMEM") {
		t.Fatalf("the child failed: %v", err)
	}
}

func relocatedChild(t *testing.T, s *relocated.Setup) {
	lib := filepath.Join(s.Home, "lib")
	tc := &Toolchain{NVSHMEMHome: s.Home}
	if got := tc.NVSHMEMLibDir(); got != lib {
		t.Fatalf("NVSHMEMLibDir %q, want %q", got, lib)
	}
	// Nothing finds the shim's NVSHMEM but Preload.
	if _, err := purego.Dlopen(s.Shim, purego.RTLD_NOW|purego.RTLD_LOCAL); err == nil {
		t.Skip("SKIPPED: the relocated shim loads before Preload: the loader finds a libnvshmem_host.so.3 of this machine's own, so the copy cannot be told apart")
	}
	if err := Preload(tc); err != nil {
		t.Fatal(err)
	}
	l, err := Load(s.Shim)
	if err != nil {
		t.Fatalf("the shim does not load against the relocated NVSHMEM: %v", err)
	}
	hosts := mapped(t, "libnvshmem_host.so.3")
	if len(hosts) != 1 || hosts[0] != filepath.Join(lib, "libnvshmem_host.so.3") {
		t.Errorf("libnvshmem_host.so.3 mapped from %q, want only the copy in %s", hosts, lib)
	}
	if built := mapped(t, s.Built+"/"); len(built) > 0 {
		t.Errorf("files of the build folder are mapped: %q", built)
	}
	mpi := purego.RTLD_NOW | purego.RTLD_LOCAL
	_, noMPI := purego.Dlopen("libmpi.so.40", mpi)
	for _, bp := range BootstrapPlugins {
		file, theirs := tc.PluginFile(bp)
		if theirs || file != filepath.Join(lib, bp.File) {
			t.Errorf("%s: NVSHMEM would be pointed at %q (theirs %v), want the copy %s", bp.Mode, file, theirs, filepath.Join(lib, bp.File))
			continue
		}
		err := l.ProbeBootstrap(file)
		switch {
		case bp.Mode == "PMIX":
			t.Logf("PMIX: %v (needs libpmix.so.2 of PMIx 3/4)", err)
		case bp.Mode == "MPI" && noMPI != nil:
			t.Logf("MPI: %v (no libmpi.so.40 here: %v)", err, noMPI)
		case err != nil:
			t.Errorf("%s: %s does not load: %v", bp.Mode, file, err)
		default:
			t.Logf("%s: %s loads", bp.Mode, file)
		}
		// By name, as NVSHMEM would look it up without the variable, the
		// loader's search from here does not reach the copy.
		if err := ProbePlugin(bp.File); err == nil {
			t.Logf("%s: the loader also finds %s by name here", bp.Mode, bp.File)
		}
	}
}

// mapped lists the distinct files mapped into this process whose path
// contains part.
func mapped(t *testing.T, part string) []string {
	f, err := os.Open("/proc/self/maps")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	seen := map[string]bool{}
	var out []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 6 {
			continue
		}
		p := strings.Join(fields[5:], " ")
		if strings.Contains(p, part) && !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	return out
}
