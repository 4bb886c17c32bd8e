package main

import (
	"encoding/binary"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nvshbench/nvshbench/cuda"
	"github.com/nvshbench/nvshbench/launcher"
)

// systemLibrary is a shared library of this machine that nvshbench does not
// load itself (a stand-in for a plugin's file), "" where none is found.
func systemLibrary() string {
	for _, p := range []string{"/usr/lib/x86_64-linux-gnu/libstdc++.so.6", "/usr/lib64/libstdc++.so.6", "/usr/lib/x86_64-linux-gnu/libgomp.so.1"} {
		if st, err := os.Stat(p); err == nil && st.Size() > 200000 {
			return p
		}
	}
	return ""
}

// damagedNVSHMEM lays out an NVSHMEM folder whose PMI plugin is cut short
// (a copy that stopped) and whose PMI-2 plugin was built for another
// machine (AArch64); the other plugins are missing.
func damagedNVSHMEM(t *testing.T) string {
	t.Helper()
	lib := systemLibrary()
	if lib == "" {
		t.Skip("SKIPPED: no shared library here to damage (libstdc++)")
	}
	dir := t.TempDir()
	libDir := filepath.Join(dir, "lib")
	os.MkdirAll(filepath.Join(dir, "include"), 0o755)
	os.MkdirAll(libDir, 0o755)
	os.WriteFile(filepath.Join(libDir, "libnvshmem_host.so.3"), nil, 0o644)
	b, err := os.ReadFile(lib)
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(libDir, "nvshmem_bootstrap_pmi.so.3"), b[:len(b)/6], 0o755)
	foreign := append([]byte{}, b...)
	binary.LittleEndian.PutUint16(foreign[18:], 183) // e_machine: EM_AARCH64
	os.WriteFile(filepath.Join(libDir, "nvshmem_bootstrap_pmi2.so.3"), foreign, 0o755)
	return dir
}

// A truncated or foreign plugin is "does not load: why" in doctor, never a
// crash of the process that looks at it (dlopen maps a cut file and dies
// with SIGBUS on the missing pages).
func TestDoctorSurvivesDamagedPlugins(t *testing.T) {
	home := damagedNVSHMEM(t)
	cmd := exec.Command(os.Args[0], "doctor")
	cmd.Env = append(os.Environ(), "NVSHBENCH_TEST_CLI=1", "NVSHMEM_HOME="+home, "CUDA_HOME=", "NVSHBENCH_SHIM=", "NVSHBENCH_PYTHON=/nonexistent/python3")
	out, _ := cmd.CombinedOutput()
	text := string(out)
	if strings.Contains(text, "SIGBUS") || strings.Contains(text, "goroutine ") {
		t.Fatalf("doctor crashed on a damaged plugin:\n%s", lastLines(text, 8))
	}
	for _, want := range []string{"PMI    does not load: ", "truncated", "PMI-2  does not load: ", "AArch64"} {
		if !strings.Contains(text, want) {
			t.Errorf("doctor's output lacks %q:\n%s", want, text)
		}
	}
}

// Every rank under a launcher probes the plugins the same way: a damaged
// one is passed over with its reason (the fallback is chosen) or refused,
// never loaded.
func TestLauncherBootstrapPassesOverDamagedPlugins(t *testing.T) {
	home := damagedNVSHMEM(t)
	t.Setenv("NVSHMEM_HOME", home)
	t.Setenv("NVSHMEM_BOOTSTRAP", "")
	t.Setenv("NVSHMEM_BOOTSTRAP_PMI", "")
	t.Setenv("SLURM_MPI_TYPE", "")
	tc, _ := cuda.Discover()
	_, err := chooseBootstrap(pluginsOf(nil, tc), launcher.Launched{By: "slurm"})
	if err == nil || !strings.Contains(err.Error(), "truncated") || !strings.Contains(err.Error(), "AArch64") {
		t.Errorf("srun with a cut PMI and a foreign PMI-2 plugin: %v", err)
	}
}
