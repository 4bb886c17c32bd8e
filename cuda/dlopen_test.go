package cuda

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
)

// A plugin that does not load says why, however busy the scheduler is:
// the reason is dlerror's, read on the thread that called dlopen (a name
// the loader searches for and does not find: a file named by its path is
// checked before dlopen sees it).
func TestProbePluginSaysWhyUnderLoad(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("dlopen: Linux only")
	}
	bad := "nvshmem_bootstrap_bad.so.3"
	var wg sync.WaitGroup
	var mu sync.Mutex
	var empty, total int
	for g := 0; g < 4*runtime.GOMAXPROCS(0)+4; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 300; i++ {
				err := ProbePlugin(bad)
				runtime.Gosched()
				mu.Lock()
				total++
				if err == nil || !strings.Contains(err.Error(), "nvshmem_bootstrap_bad.so.3") {
					empty++
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if empty > 0 {
		t.Fatalf("%d of %d failed loads gave no reason naming the file", empty, total)
	}
}

// A library file the loader would crash on or could not run is refused
// before dlopen sees it, with why: cut short (the loader maps segments
// whole: SIGBUS past the end of the file), built for another machine, no
// ELF file; an intact one loads. Every open by path goes through it (the
// shim, NVSHMEM and NCCL preloaded, the bootstrap plugins).
func TestDamagedLibrariesAreRefusedBeforeLoading(t *testing.T) {
	if runtime.GOOS != "linux" || runtime.GOARCH != "amd64" {
		t.Skip("the library below is an x86-64 one")
	}
	lib := "/usr/lib/x86_64-linux-gnu/libstdc++.so.6"
	b, err := os.ReadFile(lib)
	if err != nil {
		t.Skip("SKIPPED: no " + lib + " to damage")
	}
	dir := t.TempDir()
	put := func(name string, data []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, data, 0o755); err != nil {
			t.Fatal(err)
		}
		return p
	}
	foreign := append([]byte{}, b...)
	foreign[18], foreign[19] = 183, 0 // e_machine: EM_AARCH64
	for _, c := range []struct{ path, want string }{
		{put("cut.so", b[:len(b)/5]), "truncated"},
		{put("header.so", b[:40]), "truncated"},
		{put("foreign.so", foreign), "built for AArch64"},
		{put("text.so", []byte("not an ELF file")), "not an ELF shared library"},
	} {
		if err := ProbePlugin(c.path); err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), c.path) {
			t.Errorf("%s: %v, want %q", filepath.Base(c.path), err, c.want)
		}
		if _, err := Load(c.path); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Load %s: %v, want %q", filepath.Base(c.path), err, c.want)
		}
	}
	if err := ProbePlugin(put("intact.so", b)); err != nil {
		t.Errorf("an intact library: %v", err)
	}
}
