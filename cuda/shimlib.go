package cuda

import (
	"fmt"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/ebitengine/purego"
)

// shimLib calls libnvshbench.so through purego.
type shimLib struct {
	abiVersion    func() int32
	lastError     func() string
	deviceCount   func(*int32) int32
	deviceInfo    func(int32, *Info) int32
	canAccessPeer func(int32, int32, *int32) int32
	getUniqueID   func(*byte, int32) int32
	initFn        func(int32, int32, int32, *byte, int32, int32, int64) int32
	finalize      func() int32
	job           func(*Info, int32, *int32) int32
	agree         func(int64, *int64, int32) int32
	gather        func(*byte, int64, *byte, int64, *int64) int32
	npes          int    // the job's PEs (Job), what Gather's buffer holds
	gatherBuf     []byte // every PE's MaxGather bytes, kept between calls
	run           func(*Args, *float64, int32, *float64, int32, *Result) int32
	linkInfo      func(int32, *Links) int32
	setenv        func(string, string) int32
	probe         func(string) int32
}

// Preload opens the NVSHMEM host library and NCCL that t found, by their
// full paths, so that a shim linked against them loads in this process
// without LD_LIBRARY_PATH: the loader takes an already open library of the
// soname a shim needs (the cluster case: a shim built on a login node,
// NVSHMEM elsewhere on the compute nodes). NVSHMEM's bootstrap plugins, which
// NVSHMEM itself opens later, are handed to it by their full paths in the
// same folder (Toolchain.PluginFile). A library it cannot open is left to
// the loader's search (the error names it).
func Preload(t *Toolchain) error {
	if t == nil || runtime.GOOS != "linux" {
		return nil
	}
	var errs []string
	for _, lib := range []struct{ home, name string }{{t.NVSHMEMHome, "libnvshmem_host.so.3"}, {t.NCCLHome, "libnccl.so.2"}} {
		if lib.home == "" {
			continue
		}
		p := filepath.Join(lib.home, "lib", lib.name)
		if !fileExists(p) {
			continue
		}
		if _, err := dlopen(p, purego.RTLD_NOW|purego.RTLD_GLOBAL); err != nil {
			errs = append(errs, fmt.Sprintf("%s: %v", p, err))
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("preloading: %s", strings.Join(errs, "; "))
	}
	return nil
}

// ProbePlugin opens NVSHMEM's bootstrap plugin file (a full path, or a
// name the loader searches for) the way NVSHMEM does, dlopen with RTLD_NOW
// (bootstrap_loader.cpp:61 in NVSHMEM 3.4.5), and closes it again: nil when
// it and what it needs (libmpi, libpmix) load. No GPU is needed.
func ProbePlugin(file string) error {
	if runtime.GOOS != "linux" {
		return fmt.Errorf("NVSHMEM's plugins load on Linux only")
	}
	h, err := dlopen(file, purego.RTLD_NOW|purego.RTLD_LOCAL)
	if err != nil {
		return err
	}
	return purego.Dlclose(h)
}

// Load opens the shim at path. The NVSHMEM and NCCL libraries it links must
// be open already (Preload) or on the loader path (LD_LIBRARY_PATH: the
// controller sets it for its workers).
func Load(path string) (Lib, error) {
	if runtime.GOOS != "linux" {
		return nil, fmt.Errorf("the CUDA shim runs on Linux only")
	}
	h, err := dlopen(path, purego.RTLD_NOW|purego.RTLD_GLOBAL)
	if err != nil {
		return nil, fmt.Errorf("loading %s: %v", path, err)
	}
	l := &shimLib{}
	reg := func(fptr any, name string) (err error) {
		defer func() {
			if r := recover(); r != nil {
				err = fmt.Errorf("%s: symbol %s missing (stale shim? rebuild with 'make cuda')", path, name)
			}
		}()
		purego.RegisterLibFunc(fptr, h, name)
		return nil
	}
	// The version first: an older shim lacks the newer symbols.
	if err := reg(&l.abiVersion, "nb_abi_version"); err != nil {
		return nil, err
	}
	if v := l.abiVersion(); v != ABIVersion {
		return nil, fmt.Errorf("%s has ABI version %d, this tool needs %d: rebuild it ('nvshbench build-shim')", path, v, ABIVersion)
	}
	for _, s := range []struct {
		f    any
		name string
	}{
		{&l.lastError, "nb_last_error"},
		{&l.deviceCount, "nb_device_count"}, {&l.deviceInfo, "nb_device_info"},
		{&l.canAccessPeer, "nb_can_access_peer"}, {&l.getUniqueID, "nb_get_uniqueid"}, {&l.linkInfo, "nb_link_info"},
		{&l.initFn, "nb_init"}, {&l.finalize, "nb_finalize"}, {&l.job, "nb_job"},
		{&l.agree, "nb_agree"}, {&l.gather, "nb_gather"}, {&l.run, "nb_run"},
		{&l.setenv, "nb_setenv"}, {&l.probe, "nb_bootstrap_probe"},
	} {
		if err := reg(s.f, s.name); err != nil {
			return nil, err
		}
	}
	return l, nil
}

func (l *shimLib) check(op string, rc int32) error {
	if rc >= 0 {
		return nil
	}
	return &Error{Op: op, Status: int(rc), Msg: l.lastError()}
}

func (l *shimLib) DeviceCount() (int, error) {
	var n int32
	err := l.check("cudaGetDeviceCount", l.deviceCount(&n))
	return int(n), err
}

func (l *shimLib) DeviceInfo(dev int) (Info, error) {
	var i Info
	err := l.check("device info", l.deviceInfo(int32(dev), &i))
	return i, err
}

func (l *shimLib) CanAccessPeer(dev, peer int) (bool, error) {
	var c int32
	err := l.check("cudaDeviceCanAccessPeer", l.canAccessPeer(int32(dev), int32(peer), &c))
	return c != 0, err
}

func (l *shimLib) LinkInfo(dev int) (Links, error) {
	var k Links
	err := l.check("link info", l.linkInfo(int32(dev), &k))
	return k, err
}

func (l *shimLib) UniqueID() ([]byte, error) {
	buf := make([]byte, 256)
	rc := l.getUniqueID(&buf[0], int32(len(buf)))
	if err := l.check("nvshmemx_get_uniqueid", rc); err != nil {
		return nil, err
	}
	return buf[:rc], nil
}

func (l *shimLib) Init(mode, rank, nranks int, uid []byte, device int, heap int64) error {
	var p *byte
	if len(uid) > 0 {
		p = &uid[0]
	}
	return l.check("NVSHMEM init", l.initFn(int32(mode), int32(rank), int32(nranks), p, int32(len(uid)), int32(device), heap))
}

func (l *shimLib) Finalize() error { return l.check("NVSHMEM finalize", l.finalize()) }

func (l *shimLib) Job() (Job, error) {
	infos := make([]Info, MaxPEs)
	paths := make([]int32, MaxPEs*MaxPEs)
	rc := l.job(&infos[0], MaxPEs, &paths[0])
	if err := l.check("job facts", rc); err != nil {
		return Job{}, err
	}
	n := int(rc)
	l.npes = n
	j := Job{PEs: infos[:n], Paths: make([][]int, n)}
	for i := 0; i < n; i++ {
		j.Paths[i] = make([]int, n)
		for k := 0; k < n; k++ {
			j.Paths[i][k] = int(paths[i*n+k])
		}
	}
	return j, nil
}

func (l *shimLib) Agree(v int64) ([]int64, error) {
	all := make([]int64, MaxPEs)
	rc := l.agree(v, &all[0], MaxPEs)
	if err := l.check("agreement", rc); err != nil {
		return nil, err
	}
	return all[:rc], nil
}

func (l *shimLib) Gather(mine []byte) ([][]byte, error) {
	if len(mine) > MaxGather {
		return nil, &Error{Op: "gather", Status: StatusErr, Msg: fmt.Sprintf("%d bytes: at most %d", len(mine), MaxGather)}
	}
	n := l.npes
	if n == 0 {
		n = MaxPEs
	}
	if len(l.gatherBuf) < n*MaxGather {
		l.gatherBuf = make([]byte, n*MaxGather)
	}
	lens := make([]int64, MaxPEs)
	var p *byte
	if len(mine) > 0 {
		p = &mine[0]
	}
	rc := l.gather(p, int64(len(mine)), &l.gatherBuf[0], MaxGather, &lens[0])
	if err := l.check("gather", rc); err != nil {
		return nil, err
	}
	out := make([][]byte, rc)
	for pe := range out {
		out[pe] = append([]byte(nil), l.gatherBuf[pe*MaxGather:pe*MaxGather+int(lens[pe])]...)
	}
	return out, nil
}

func (l *shimLib) Setenv(name, value string) error {
	return l.check("setenv", l.setenv(name, value))
}

// ProbeBootstrap opens the plugin from Go (ProbePlugin), not through the
// shim's nb_bootstrap_probe: a name dlopen'ed from the shim is searched for
// in the shim's own RUNPATH, the folder it was built against, which a
// compute node need not have.
func (l *shimLib) ProbeBootstrap(plugin string) error {
	return ProbePlugin(plugin)
}

func (l *shimLib) Run(a Args) (Timing, Result, error) {
	n := int(a.Samples)
	if n <= 0 {
		return Timing{}, Result{}, fmt.Errorf("run: samples must be > 0")
	}
	samples := make([]float64, n)
	kernel := make([]float64, maxKernelSamples)
	var r Result
	err := l.check(a.OpString(), l.run(&a, &samples[0], int32(n), &kernel[0], int32(len(kernel)), &r))
	if r.NSamples < 0 || int(r.NSamples) > n {
		r.NSamples = 0
	}
	if r.NKernel < 0 || int(r.NKernel) > len(kernel) {
		r.NKernel = 0
	}
	t := Timing{Samples: samples[:r.NSamples]}
	if r.NKernel > 0 {
		t.Kernel = kernel[:r.NKernel]
	}
	return t, r, err
}

// Sensor is device dev's SM clock and power through NVML, loaded with
// purego beside the shim (not through it), found by the device's PCI bus
// id.
func (l *shimLib) Sensor(dev int) (Sensor, error) {
	i, err := l.DeviceInfo(dev)
	if err != nil {
		return nil, err
	}
	return NVMLSensor(i.PCIString())
}
