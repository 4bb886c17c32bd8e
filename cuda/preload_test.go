package cuda

import (
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/ebitengine/purego"
)

// A shim linked against NVSHMEM loads in a process whose loader path does
// not hold NVSHMEM once Preload has opened the NVSHMEM that discovery found
// (a shim built on a login node, run on a compute node with NVSHMEM in
// another folder): without Preload the same shim does not load.
func TestPreloadLetsALinkedShimLoad(t *testing.T) {
	cc, err := exec.LookPath("cc")
	if err != nil || runtime.GOOS != "linux" {
		t.Skip("SKIPPED: needs a C compiler on Linux")
	}
	dir := t.TempDir()
	home := filepath.Join(dir, "nvshmem")
	lib := filepath.Join(home, "lib")
	writeFile(t, filepath.Join(dir, "host.c"), "int nvshmem_stub_version(void) { return 345; }\n", 0o644)
	writeFile(t, filepath.Join(dir, "shim.c"), "int nvshmem_stub_version(void);\nint shim_probe(void) { return nvshmem_stub_version(); }\n", 0o644)
	mk := func(args ...string) {
		if out, err := exec.Command(cc, args...).CombinedOutput(); err != nil {
			t.Fatalf("cc %v: %v\n%s", args, err, out)
		}
	}
	if err := exec.Command("mkdir", "-p", lib).Run(); err != nil {
		t.Fatal(err)
	}
	mk("-shared", "-fPIC", "-Wl,-soname,libnvshmem_host.so.3", "-o", filepath.Join(lib, "libnvshmem_host.so.3"), filepath.Join(dir, "host.c"))
	// The shim needs the library by its soname, found through a link folder
	// that is gone when it runs (as a build folder is).
	link := filepath.Join(dir, "link")
	if err := exec.Command("mkdir", "-p", link).Run(); err != nil {
		t.Fatal(err)
	}
	if err := exec.Command("ln", "-s", filepath.Join(lib, "libnvshmem_host.so.3"), filepath.Join(link, "libnvshmem_host.so")).Run(); err != nil {
		t.Fatal(err)
	}
	shim := filepath.Join(dir, "libshim.so")
	mk("-shared", "-fPIC", "-o", shim, filepath.Join(dir, "shim.c"), "-L"+link, "-lnvshmem_host")
	if _, err := purego.Dlopen(shim, purego.RTLD_NOW|purego.RTLD_LOCAL); err == nil {
		t.Skip("SKIPPED: the loader found the stub without Preload (a libnvshmem_host.so.3 on this machine's loader path?)")
	}
	if err := Preload(&Toolchain{NVSHMEMHome: home}); err != nil {
		t.Fatal(err)
	}
	h, err := purego.Dlopen(shim, purego.RTLD_NOW|purego.RTLD_LOCAL)
	if err != nil {
		t.Fatalf("after Preload the shim still does not load: %v", err)
	}
	var probe func() int32
	purego.RegisterLibFunc(&probe, h, "shim_probe")
	if got := probe(); got != 345 {
		t.Errorf("the shim called NVSHMEM's stub and got %d", got)
	}
}
