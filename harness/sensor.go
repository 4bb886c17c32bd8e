package harness

import (
	"time"

	"github.com/nvshbench/nvshbench/cuda"
	"github.com/nvshbench/nvshbench/record"
)

// SensorPeriod is how often a worker reads its GPU's SM clock and power
// while a point runs.
const SensorPeriod = 15 * time.Millisecond

// sampling reads s every SensorPeriod on a goroutine of the worker's (the
// point runs on the worker's locked thread) until the returned stop is
// called, which gives the readings' summary for PE pe (nil: no sensor, or
// no reading). The GPU idles at a low clock before a point's first launch,
// so nothing is read before the first period; a point shorter than one is
// read once as it ends.
func sampling(s cuda.Sensor, pe int, every time.Duration) (stop func() *record.Clock) {
	if s == nil {
		return func() *record.Clock { return nil }
	}
	quit, done := make(chan struct{}), make(chan *record.Clock, 1)
	go func() {
		var clocks, power []float64
		read := func() {
			if r, err := s.Read(); err == nil && r.SMClockHz > 0 {
				clocks, power = append(clocks, r.SMClockHz), append(power, r.PowerW)
			}
		}
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-t.C:
				read()
			case <-quit:
				if len(clocks) == 0 {
					read()
				}
				done <- record.ClockOf(pe, clocks, power)
				return
			}
		}
	}()
	return func() *record.Clock {
		close(quit)
		return <-done
	}
}
