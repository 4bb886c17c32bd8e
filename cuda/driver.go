package cuda

import (
	"fmt"
	"runtime"

	"github.com/ebitengine/purego"
)

// ProbeDriver asks the NVIDIA driver (libcuda.so.1) how many GPUs it sees,
// without the shim or any toolchain: a machine without a driver or a GPU
// is told so in milliseconds, before anything is compiled.
func ProbeDriver() (int, error) {
	if runtime.GOOS != "linux" {
		return 0, fmt.Errorf("GPU measurements run on Linux only")
	}
	h, err := dlopen("libcuda.so.1", purego.RTLD_NOW|purego.RTLD_LOCAL)
	if err != nil {
		return 0, fmt.Errorf("no NVIDIA driver: libcuda.so.1 cannot be loaded (%v)", err)
	}
	var cuInit func(uint32) int32
	var cuDeviceGetCount func(*int32) int32
	var cuDriverGetVersion func(*int32) int32
	for _, s := range []struct {
		f    any
		name string
	}{{&cuInit, "cuInit"}, {&cuDeviceGetCount, "cuDeviceGetCount"}, {&cuDriverGetVersion, "cuDriverGetVersion"}} {
		sym, err := purego.Dlsym(h, s.name)
		if err != nil || sym == 0 {
			return 0, fmt.Errorf("libcuda.so.1 lacks %s", s.name)
		}
		purego.RegisterFunc(s.f, sym)
	}
	var v int32
	cuDriverGetVersion(&v)
	if rc := cuInit(0); rc != 0 {
		what := map[int32]string{100: "no CUDA-capable device", 35: "the driver is older than the CUDA runtime", 999: "unknown error",
			3: "not initialized", 34: "CUDA driver stub library (no real driver installed)"}[rc]
		return 0, fmt.Errorf("the NVIDIA driver (CUDA %s) found no usable GPU: cuInit returned %d (%s)", CUDAVersion(v), rc, what)
	}
	var n int32
	if rc := cuDeviceGetCount(&n); rc != 0 {
		return 0, fmt.Errorf("cuDeviceGetCount returned %d", rc)
	}
	if n == 0 {
		return 0, fmt.Errorf("the NVIDIA driver (CUDA %s) sees no GPU", CUDAVersion(v))
	}
	return int(n), nil
}
