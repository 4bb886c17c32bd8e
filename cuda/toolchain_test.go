package cuda

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func writeFile(t *testing.T, path, body string, mode os.FileMode) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(body), mode); err != nil {
		t.Fatal(err)
	}
}

// A toolchain laid out like the pip wheels, with a stand-in nvcc.
func fakeToolchain(t *testing.T) (cudaHome, nvshmem, nccl string) {
	dir := t.TempDir()
	cudaHome = filepath.Join(dir, "cu13")
	writeFile(t, filepath.Join(cudaHome, "bin/nvcc"), "#!/bin/sh\necho 'Cuda compilation tools, release 13.0, V13.0.88'\n", 0o755)
	os.MkdirAll(filepath.Join(cudaHome, "include/cccl"), 0o755)
	writeFile(t, filepath.Join(cudaHome, "lib/libcudart.so.13"), "", 0o644)
	nvshmem = filepath.Join(dir, "nvshmem")
	writeFile(t, filepath.Join(nvshmem, "include/nvshmem.h"), "", 0o644)
	writeFile(t, filepath.Join(nvshmem, "include/non_abi/nvshmem_version.h"),
		"#define NVSHMEM_VENDOR_MAJOR_VERSION 3\n#define NVSHMEM_VENDOR_MINOR_VERSION 4\n#define NVSHMEM_VENDOR_PATCH_VERSION 5\n", 0o644)
	writeFile(t, filepath.Join(nvshmem, "lib/libnvshmem_host.so.3"), "", 0o644)
	nccl = filepath.Join(dir, "nccl")
	writeFile(t, filepath.Join(nccl, "include/nccl.h"), "#define NCCL_MAJOR 2\n#define NCCL_MINOR 28\n#define NCCL_PATCH 9\n", 0o644)
	return
}

func TestDiscoverFromEnvironment(t *testing.T) {
	c, s, n := fakeToolchain(t)
	t.Setenv("CUDA_HOME", c)
	t.Setenv("NVSHMEM_HOME", s)
	t.Setenv("NCCL_HOME", n)
	t.Setenv("NVSHBENCH_PYTHON", "/nonexistent/python3")
	tc, err := Discover()
	if err != nil {
		t.Fatal(err)
	}
	if tc.NVCCVersion != "13.0.88" || tc.NVSHMEMVersion != "3.4.5" || tc.NCCLVersion != "2.28.9" {
		t.Errorf("versions: nvcc %q nvshmem %q nccl %q", tc.NVCCVersion, tc.NVSHMEMVersion, tc.NCCLVersion)
	}
	if tc.From["cuda"] != "CUDA_HOME" || tc.From["nvshmem"] != "NVSHMEM_HOME" {
		t.Errorf("from = %v", tc.From)
	}
	cmd := strings.Join(tc.BuildCommand("x.cu", "out.so"), " ")
	for _, want := range []string{"-rdc=true", "-Werror all-warnings", "-gencode arch=compute_90,code=sm_90", "-Xcompiler -fPIC", "-shared",
		filepath.Join(s, "lib/libnvshmem_device.a"), "-I" + filepath.Join(c, "include/cccl"), "-Xlinker " + filepath.Join(s, "lib/libnvshmem_host.so"),
		"-rpath," + filepath.Join(s, "lib")} {
		if !strings.Contains(cmd, want) {
			t.Errorf("build command lacks %q:\n%s", want, cmd)
		}
	}
	// NCCL's include folder only where it has the device API's header.
	if strings.Contains(cmd, "-I"+filepath.Join(n, "include")) {
		t.Errorf("NCCL headers without nccl_device.h are on the include path:\n%s", cmd)
	}
	writeFile(t, filepath.Join(n, "include/nccl_device.h"), "", 0o644)
	cmd = strings.Join(tc.BuildCommand("x.cu", "out.so"), " ")
	if !strings.Contains(cmd, "-I"+filepath.Join(n, "include")) {
		t.Errorf("build command lacks NCCL's include folder (device API):\n%s", cmd)
	}
	lp := strings.Join(tc.LibraryPath(), ":")
	if !strings.Contains(lp, filepath.Join(s, "lib")) || !strings.Contains(lp, filepath.Join(n, "lib")) {
		t.Errorf("library path %q", lp)
	}
	// The cache key moves with the toolchain.
	h1 := tc.SourceHash()
	tc.NVSHMEMVersion = "3.3.9"
	if tc.SourceHash() == h1 {
		t.Error("shim cache key ignores the NVSHMEM version")
	}
}

func TestDiscoverReportsWhatIsMissing(t *testing.T) {
	t.Setenv("CUDA_HOME", "")
	t.Setenv("NVSHMEM_HOME", "")
	t.Setenv("PATH", t.TempDir())
	t.Setenv("NVSHBENCH_PYTHON", "/nonexistent/python3")
	_, err := Discover()
	if err == nil {
		if _, e := os.Stat("/usr/local/cuda/bin/nvcc"); e == nil {
			t.Skip("a system CUDA is installed")
		}
		t.Fatal("no toolchain, no error")
	}
	if !strings.Contains(err.Error(), "NVSHMEM") {
		t.Errorf("error does not name NVSHMEM: %v", err)
	}
}

func TestBuildFailsClearlyWithoutCompiler(t *testing.T) {
	tc := &Toolchain{}
	if err := tc.Build(filepath.Join(t.TempDir(), "x.so"), nil); err == nil || !strings.Contains(err.Error(), "nvcc or NVSHMEM not found") {
		t.Errorf("err = %v", err)
	}
}

func TestBuildReportsCompilerErrors(t *testing.T) {
	c, s, n := fakeToolchain(t)
	writeFile(t, filepath.Join(c, "bin/nvcc"), "#!/bin/sh\necho 'nvshbench.cu(1): error: boom' >&2\nexit 2\n", 0o755)
	tc := &Toolchain{NVCC: filepath.Join(c, "bin/nvcc"), CUDAHome: c, NVSHMEMHome: s, NCCLHome: n, Archs: []string{"90"}}
	out := filepath.Join(t.TempDir(), "lib.so")
	err := tc.Build(out, nil)
	if err == nil || !strings.Contains(err.Error(), "error: boom") {
		t.Fatalf("err = %v", err)
	}
	if _, e := os.Stat(out); e == nil {
		t.Error("a failed build left a library behind")
	}
}

func TestLoadMissingLibrary(t *testing.T) {
	if _, err := Load(filepath.Join(t.TempDir(), "nope.so")); err == nil {
		t.Error("loading a missing library succeeded")
	}
}

// An unchanged source and toolchain reuse the built library: the second
// CopyShim copies instead of compiling; a changed toolchain compiles again.
func TestCopyShimReusesTheCache(t *testing.T) {
	c, s, n := fakeToolchain(t)
	count := filepath.Join(t.TempDir(), "compiles")
	// A stand-in nvcc: writes its -o argument and counts its calls.
	writeFile(t, filepath.Join(c, "bin/nvcc"), `#!/bin/sh
if [ "$1" = "--version" ]; then echo 'Cuda compilation tools, release 13.0, V13.0.88'; exit 0; fi
echo x >> `+count+`
while [ $# -gt 0 ]; do if [ "$1" = "-o" ]; then echo shim > "$2"; fi; shift; done
`, 0o755)
	writeFile(t, filepath.Join(s, "lib/libnvshmem_device.a"), "", 0o644)
	t.Setenv("CUDA_HOME", c)
	t.Setenv("NVSHMEM_HOME", s)
	t.Setenv("NCCL_HOME", n)
	t.Setenv("NVSHBENCH_PYTHON", "/nonexistent/python3")
	t.Setenv("NVSHBENCH_CACHE", t.TempDir())
	tc, err := Discover()
	if err != nil {
		t.Fatal(err)
	}
	compiles := func() int {
		b, _ := os.ReadFile(count)
		return strings.Count(string(b), "x")
	}
	out := filepath.Join(t.TempDir(), "build", "libnvshbench.so")
	for i, want := range []bool{true, false} {
		built, err := tc.CopyShim(out, nil)
		if err != nil {
			t.Fatal(err)
		}
		if b, _ := os.ReadFile(out); built != want || string(b) != "shim\n" {
			t.Fatalf("call %d: built %v, out %q", i+1, built, b)
		}
	}
	if compiles() != 1 {
		t.Errorf("nvcc ran %d times for one source and toolchain", compiles())
	}
	tc.NVSHMEMVersion = "3.5.0" // another toolchain: another key
	if built, err := tc.CopyShim(out, nil); err != nil || !built || compiles() != 2 {
		t.Errorf("a changed toolchain reused the old shim: built %v, %d compiles, %v", built, compiles(), err)
	}
}

// Without a home folder the shim cache is a private folder of this user's
// under the temporary folder; one another user could have planted (open to
// others) is refused, since a shared library is loaded from it.
func TestCacheWithoutHomeIsPrivate(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("NVSHBENCH_CACHE", "")
	t.Setenv("XDG_CACHE_HOME", "")
	t.Setenv("HOME", "")
	t.Setenv("TMPDIR", tmp)
	d, err := CacheDir()
	if err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(d)
	if err != nil || !strings.HasPrefix(d, tmp) || st.Mode().Perm() != 0o700 {
		t.Fatalf("cache %s: %v %v", d, st.Mode(), err)
	}
	if d == filepath.Join(tmp, "nvshbench-cache") {
		t.Error("the shared, predictable name")
	}
	os.Chmod(d, 0o777)
	if _, err := CacheDir(); err == nil || !strings.Contains(err.Error(), "not a private folder") {
		t.Errorf("a world-writable cache accepted: %v", err)
	}
	os.Remove(d)
	os.Symlink(tmp, d)
	if _, err := CacheDir(); err == nil {
		t.Error("a link in the cache's place accepted")
	}
}

// A Python environment under a path with a space (a venv in "My Envs") is
// searched for the wheels like any other: its site-packages is one line of
// the interpreter's answer, not words.
func TestWheelsUnderAPathWithASpace(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "My Envs", "cu 13")
	site := filepath.Join(dir, "lib", "python3.12", "site-packages")
	nvshmem := filepath.Join(site, "nvidia", "nvshmem")
	writeFile(t, filepath.Join(nvshmem, "include/nvshmem.h"), "", 0o644)
	writeFile(t, filepath.Join(nvshmem, "include/non_abi/nvshmem_version.h"),
		"#define NVSHMEM_VENDOR_MAJOR_VERSION 3\n#define NVSHMEM_VENDOR_MINOR_VERSION 4\n#define NVSHMEM_VENDOR_PATCH_VERSION 5\n", 0o644)
	py := filepath.Join(dir, "bin", "python3")
	writeFile(t, py, "#!/bin/sh\nprintf '%s\\n' '"+site+"' '"+filepath.Join(dir, "user site")+"'\n", 0o755)
	t.Setenv("NVSHBENCH_PYTHON", py)
	t.Setenv("NVSHMEM_HOME", "")
	t.Setenv("CUDA_HOME", "")
	t.Setenv("NCCL_HOME", "")
	tc, _ := Discover()
	if tc.NVSHMEMHome != nvshmem || tc.NVSHMEMVersion != "3.4.5" {
		t.Errorf("NVSHMEM under a path with a space: found %q (%q), want %q", tc.NVSHMEMHome, tc.NVSHMEMVersion, nvshmem)
	}
}
