package cuda

import (
	"fmt"
	"os"
	"strconv"
	"time"
)

// Fake implements Lib without a GPU: an H200-like device whose transfers
// follow a simple bandwidth model. Tests of everything above the shim
// (harness, launcher, commands) run against it. Environment knobs let tests
// reach the failure paths:
//
//	NVSHBENCH_FAKE_HANG_SIZE=N     RMA of size N never returns (watchdog tests)
//	NVSHBENCH_FAKE_CORRUPT_SIZE=N  RMA of size N reports mismatching bytes
//	NVSHBENCH_FAKE_PATH=p2p|local|remote  the path to every peer (default local)
type Fake struct {
	rank, nranks int
	inited       bool
}

// NewFake returns a fake device library.
func NewFake() *Fake { return &Fake{} }

// FakeUID is the unique ID the fake hands out.
var FakeUID = []byte("fake-nvshmem-unique-id")

func (f *Fake) DeviceCount() (int, error) { return 1, nil }

func (f *Fake) DeviceInfo(dev int) (Info, error) {
	if dev != 0 {
		return Info{}, &Error{Op: "device info", Status: -1, Msg: fmt.Sprintf("invalid device ordinal %d", dev)}
	}
	i := Info{MemBytes: 141 << 30, L2Bytes: 60 << 20, MyPE: -1, Device: 0, SMs: 132, ClockKHz: 1980000,
		CCMajor: 9, CCMinor: 0, CUDARuntime: 13000, CUDADriver: 13000, NVSHMEMMajor: 3, NVSHMEMMinor: 4, NVSHMEMPatch: 5}
	copy(i.Name[:], "Fake H200 (no GPU)")
	copy(i.UUID[:], "GPU-fake")
	return i, nil
}

func (f *Fake) CanAccessPeer(dev, peer int) (bool, error) { return true, nil }

func (f *Fake) UniqueID() ([]byte, error) { return append([]byte(nil), FakeUID...), nil }

func (f *Fake) Init(mode, rank, nranks int, uid []byte, device int, heap int64) error {
	if f.inited {
		return &Error{Op: "NVSHMEM init", Status: -1, Msg: "already initialised"}
	}
	if mode == InitUID && string(uid) != string(FakeUID) {
		return &Error{Op: "NVSHMEM init", Status: -1, Msg: "unique id mismatch"}
	}
	f.rank, f.nranks, f.inited = rank, nranks, true
	return nil
}

func (f *Fake) Finalize() error { f.inited = false; return nil }

func (f *Fake) Info() (Info, error) {
	i, _ := f.DeviceInfo(0)
	i.MyPE, i.NPEs = int32(f.rank), int32(f.nranks)
	return i, nil
}

func (f *Fake) PeerPath(peer int) (int, error) {
	switch os.Getenv("NVSHBENCH_FAKE_PATH") {
	case "p2p":
		return PathP2P, nil
	case "remote":
		return PathRemote, nil
	}
	return PathLocal, nil
}

func (f *Fake) Barrier() error { return nil }

// RMA models bandwidth as peak·size/(size+64 KiB) with a per-op peak.
func (f *Fake) RMA(a RMAArgs) ([]float64, RMAResult, error) {
	if !f.inited {
		return nil, RMAResult{}, &Error{Op: "rma", Status: -1, Msg: "not initialised"}
	}
	if a.Samples <= 0 || a.Iters < 0 || a.Size <= 0 {
		return nil, RMAResult{}, &Error{Op: "rma", Status: -1, Msg: "bad arguments"}
	}
	if envInt("NVSHBENCH_FAKE_HANG_SIZE") == a.Size {
		time.Sleep(time.Hour)
	}
	if p, _ := f.PeerPath(int(a.Peer)); p == PathRemote && (a.Op == OpST || a.Op == OpLD || a.Op >= OpCECopy) {
		return nil, RMAResult{}, &Error{Op: "rma", Status: -2, Msg: fmt.Sprintf("PE %d is not reachable by load/store (no P2P mapping)", a.Peer)}
	}
	peak := map[int32]float64{OpPut: 300e9, OpGet: 140e9, OpP: 170e9, OpG: 8e9, OpST: 400e9, OpLD: 300e9,
		OpCECopy: 420e9, OpSMCopy: 450e9, OpSMCopyRead: 430e9}[a.Op]
	var r RMAResult
	initiator := f.rank == 0 || (a.Bidir != 0 && f.rank == int(a.Peer))
	var samples []float64
	if initiator {
		r.Initiator = 1
		r.Bytes = a.Size
		r.Iters = a.Iters
		if r.Iters == 0 {
			r.Iters = 10
		}
		samples = make([]float64, a.Samples)
		for i := range samples {
			var t float64
			if peak == 0 { // atomics: 1 µs per op spread over the grid
				t = 1e-6 / float64(a.CTAs*a.Threads)
				r.Bytes = 8
			} else {
				t = float64(a.Size) / (peak * float64(a.Size) / (float64(a.Size) + 64<<10))
			}
			samples[i] = t * (1 + 0.001*float64(i%5))
		}
	}
	if a.Verify != 0 {
		r.Checked = a.Size
		if envInt("NVSHBENCH_FAKE_CORRUPT_SIZE") == a.Size {
			r.Errors = 3
			copy(r.Detail[:], "byte 0: got 0x00, want 0x5a")
		}
		if f.rank == 0 { // as if every PE checked the same
			r.JobChecked, r.JobErrors = r.Checked*int64(f.nranks), r.Errors*int64(f.nranks)
		}
	}
	return samples, r, nil
}

func envInt(k string) int64 {
	v, err := strconv.ParseInt(os.Getenv(k), 10, 64)
	if err != nil {
		return -1
	}
	return v
}

// Latency models 1.2 µs plus 0.1 ns per byte (round trips twice that).
func (f *Fake) Latency(a LatArgs) ([]float64, RMAResult, error) {
	if !f.inited {
		return nil, RMAResult{}, &Error{Op: "latency", Status: -1, Msg: "not initialised"}
	}
	if a.Samples <= 0 || a.Iters < 0 || a.Size <= 0 || a.Threads <= 0 {
		return nil, RMAResult{}, &Error{Op: "latency", Status: -1, Msg: "bad arguments"}
	}
	pingpong := a.Op >= LatPPPutSignal && a.Op <= LatPPSignal
	var r RMAResult
	var samples []float64
	if f.rank == 0 {
		r.Initiator = 1
		t := 1.2e-6 + float64(a.Size)*1e-10
		if pingpong {
			t *= 2
		}
		n := int(a.Samples)
		r.Iters = a.Iters
		if a.Timer == TimerGlobal {
			n, r.Iters = 100, 1
		}
		if a.Op == LatLaunch && a.Timer == TimerGlobal {
			n = 0
		}
		for i := 0; i < n; i++ {
			samples = append(samples, t*(1+0.01*float64(i%7)))
		}
		r.NSamples = int64(n)
		if a.Op != LatLaunch && a.Op != LatFence && a.Op != LatQuiet && a.Op != LatFetchAdd && a.Op != LatCSwap && a.Op != LatPPAtomic && a.Op != LatPPSignal {
			r.Bytes = a.Size
		}
	}
	if a.Verify != 0 && r.Bytes > 0 {
		r.Checked = a.Size
		r.JobChecked = a.Size * int64(f.nranks)
	}
	return samples, r, nil
}

// Collective models 4 µs plus size at 25 GB/s (NCCL and ours at 200 GB/s).
func (f *Fake) Collective(a CollArgs) ([]float64, RMAResult, error) {
	if !f.inited {
		return nil, RMAResult{}, &Error{Op: "collective", Status: -1, Msg: "not initialised"}
	}
	if a.Samples <= 0 || a.Size <= 0 || a.Threads <= 0 || a.CTAs <= 0 {
		return nil, RMAResult{}, &Error{Op: "collective", Status: -1, Msg: "bad arguments"}
	}
	bw := 25e9
	if a.Impl == ImplNCCL || a.Impl == ImplOurOneShot || a.Impl == ImplOurTwoShot {
		bw = 200e9
	}
	var r RMAResult
	samples := make([]float64, a.Samples)
	for i := range samples {
		samples[i] = (4e-6 + float64(a.Size)/bw) * (1 + 0.002*float64(i%3))
	}
	r.Iters, r.Initiator = 10, 1
	if a.Coll != CollBarrier {
		r.Bytes = a.Size
		if a.Verify != 0 {
			r.Checked = a.Size / 4
			r.JobChecked = r.Checked * int64(f.nranks)
		}
	}
	if a.Impl == ImplNCCL {
		r.Aux = 22809
	}
	return samples, r, nil
}
