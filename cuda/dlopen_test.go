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
// the reason is dlerror's, read on the thread that called dlopen.
func TestProbePluginSaysWhyUnderLoad(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("dlopen: Linux only")
	}
	bad := filepath.Join(t.TempDir(), "nvshmem_bootstrap_bad.so.3")
	if err := os.WriteFile(bad, []byte("not an ELF file"), 0o644); err != nil {
		t.Fatal(err)
	}
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
