package cuda

import (
	"fmt"
	"runtime"

	"github.com/ebitengine/purego"
)

// ABIVersion must match NB_ABI_VERSION of the loaded shim.
const ABIVersion = 1

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
	infoGet       func(*Info) int32
	peerPath      func(int32, *int32) int32
	barrier       func() int32
	rmaRun        func(*RMAArgs, *float64, *RMAResult) int32
	latRun        func(*LatArgs, *float64, int32, *RMAResult) int32
	collRun       func(*CollArgs, *float64, *RMAResult) int32
}

// Load opens the shim at path. The NVSHMEM and NCCL libraries it links must
// be on the loader path (LD_LIBRARY_PATH): the launcher sets it.
func Load(path string) (Lib, error) {
	if runtime.GOOS != "linux" {
		return nil, fmt.Errorf("the CUDA shim runs on Linux only")
	}
	h, err := purego.Dlopen(path, purego.RTLD_NOW|purego.RTLD_GLOBAL)
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
	for _, s := range []struct {
		f    any
		name string
	}{
		{&l.abiVersion, "nb_abi_version"}, {&l.lastError, "nb_last_error"},
		{&l.deviceCount, "nb_device_count"}, {&l.deviceInfo, "nb_device_info"},
		{&l.canAccessPeer, "nb_can_access_peer"}, {&l.getUniqueID, "nb_get_uniqueid"},
		{&l.initFn, "nb_init"}, {&l.finalize, "nb_finalize"}, {&l.infoGet, "nb_info_get"},
		{&l.peerPath, "nb_peer_path"}, {&l.barrier, "nb_barrier"}, {&l.rmaRun, "nb_rma_run"},
		{&l.latRun, "nb_lat_run"}, {&l.collRun, "nb_coll_run"},
	} {
		if err := reg(s.f, s.name); err != nil {
			return nil, err
		}
	}
	if v := l.abiVersion(); v != ABIVersion {
		return nil, fmt.Errorf("%s has ABI version %d, this tool needs %d: rebuild it", path, v, ABIVersion)
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

func (l *shimLib) Info() (Info, error) {
	var i Info
	err := l.check("info", l.infoGet(&i))
	return i, err
}

func (l *shimLib) PeerPath(peer int) (int, error) {
	var p int32
	err := l.check("nvshmem_ptr", l.peerPath(int32(peer), &p))
	return int(p), err
}

func (l *shimLib) Barrier() error { return l.check("nvshmem_barrier_all", l.barrier()) }

func (l *shimLib) RMA(a RMAArgs) ([]float64, RMAResult, error) {
	if a.Samples <= 0 {
		return nil, RMAResult{}, fmt.Errorf("rma: samples must be > 0")
	}
	samples := make([]float64, a.Samples)
	var r RMAResult
	err := l.check("rma", l.rmaRun(&a, &samples[0], &r))
	if r.Initiator == 0 {
		samples = nil
	}
	return samples, r, err
}

func (l *shimLib) Latency(a LatArgs) ([]float64, RMAResult, error) {
	n := int(a.Samples)
	if a.Timer == TimerGlobal {
		n = maxLatSamples
	}
	if n <= 0 {
		return nil, RMAResult{}, fmt.Errorf("latency: samples must be > 0")
	}
	samples := make([]float64, n)
	var r RMAResult
	err := l.check("latency", l.latRun(&a, &samples[0], int32(n), &r))
	return samples[:r.NSamples], r, err
}

func (l *shimLib) Collective(a CollArgs) ([]float64, RMAResult, error) {
	if a.Samples <= 0 {
		return nil, RMAResult{}, fmt.Errorf("collective: samples must be > 0")
	}
	samples := make([]float64, a.Samples)
	var r RMAResult
	err := l.check("collective", l.collRun(&a, &samples[0], &r))
	return samples, r, err
}
