package cuda

import (
	"fmt"
	"runtime"
	"sync"

	"github.com/ebitengine/purego"
)

// Sensor reads one GPU's SM clock and power draw at a moment: what the
// harness samples while a point runs (harness.SensorPeriod), so that a
// point measured at a lower clock than the run's others is told apart.
type Sensor interface {
	Read() (Reading, error)
}

// Reading is one sample of a GPU's SM clock and power draw.
type Reading struct {
	SMClockHz float64 // the SM clock, Hz
	PowerW    float64 // the board's power draw, W (0: not known)
}

// NVML's calls the sensor makes (nvml.h): the SM clock of
// nvmlDeviceGetClockInfo's NVML_CLOCK_SM, in MHz; the board's power in mW
// (nvmlDeviceGetPowerUsage: on recent GPUs the driver's average over about
// a second).
const nvmlClockSM = 1

type nvmlLib struct {
	byPCI func(string, *uintptr) int32
	clock func(uintptr, uint32, *uint32) int32
	power func(uintptr, *uint32) int32
}

var openNVMLOnce = sync.OnceValues(openNVML)

// openNVML loads libnvidia-ml.so.1 with purego, as the shim is loaded, and
// initialises it once a process.
func openNVML() (*nvmlLib, error) {
	if runtime.GOOS != "linux" {
		return nil, fmt.Errorf("NVML is read on Linux only")
	}
	h, err := dlopen("libnvidia-ml.so.1", purego.RTLD_NOW|purego.RTLD_LOCAL)
	if err != nil {
		return nil, fmt.Errorf("NVML not available: libnvidia-ml.so.1 cannot be loaded (%v)", err)
	}
	var n nvmlLib
	var initFn func() int32
	for _, s := range []struct {
		f    any
		name string
	}{{&initFn, "nvmlInit_v2"}, {&n.byPCI, "nvmlDeviceGetHandleByPciBusId_v2"}, {&n.clock, "nvmlDeviceGetClockInfo"}, {&n.power, "nvmlDeviceGetPowerUsage"}} {
		sym, err := purego.Dlsym(h, s.name)
		if err != nil || sym == 0 {
			return nil, fmt.Errorf("libnvidia-ml.so.1 lacks %s", s.name)
		}
		purego.RegisterFunc(s.f, sym)
	}
	if rc := initFn(); rc != 0 {
		return nil, fmt.Errorf("nvmlInit_v2 returned %d", rc)
	}
	return &n, nil
}

// nvmlSensor is one GPU's sensor through NVML.
type nvmlSensor struct {
	n   *nvmlLib
	dev uintptr
}

// NVMLSensor is the sensor of the GPU at a PCI bus id ("0000:19:00.0"),
// read through NVML; an error says why there is none (no NVML, no such
// GPU), in one line.
func NVMLSensor(pciBusID string) (Sensor, error) {
	n, err := openNVMLOnce()
	if err != nil {
		return nil, err
	}
	var dev uintptr
	if rc := n.byPCI(pciBusID, &dev); rc != 0 {
		return nil, fmt.Errorf("NVML has no GPU at %s (nvmlDeviceGetHandleByPciBusId_v2 returned %d)", pciBusID, rc)
	}
	s := nvmlSensor{n: n, dev: dev}
	if _, err := s.Read(); err != nil {
		return nil, err
	}
	return s, nil
}

// Read is the GPU's SM clock now and its power draw (0 where NVML gives
// none: a board without a power sensor).
func (s nvmlSensor) Read() (Reading, error) {
	var mhz, mw uint32
	if rc := s.n.clock(s.dev, nvmlClockSM, &mhz); rc != 0 {
		return Reading{}, fmt.Errorf("nvmlDeviceGetClockInfo(NVML_CLOCK_SM) returned %d", rc)
	}
	r := Reading{SMClockHz: float64(mhz) * 1e6}
	if rc := s.n.power(s.dev, &mw); rc == 0 {
		r.PowerW = float64(mw) / 1e3
	}
	return r, nil
}
