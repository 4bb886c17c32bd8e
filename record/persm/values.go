package persm

import (
	"github.com/nvshbench/nvshbench/internal/units"
	"github.com/nvshbench/nvshbench/record"
)

// The values of the copy engine's rows (a mechanism with no SMs of ours:
// persm/ce, alone or beside a compute kernel, and a compute kernel beside
// it), which the shim gives as named values (persm.cuh, pm_end).
const (
	// ValueCESMFree: on every point of those rows, 1 where one of its
	// copies completed while a kernel held every CTA slot of the GPU (the
	// copy needs no SM: a copy engine's), 0 where it waited for a slot
	// (the driver ran it as a kernel, as it may a same-GPU cudaMemcpyAsync:
	// docs/bytes-per-sm.md); absent where not
	// checked (files before it, the check could not hold every slot, or
	// CUDA_DEVICE_MAX_CONNECTIONS=1).
	ValueCESMFree = "ce_sm_free"
	// ValueCEBusy: on a compute kernel's point beside the copy engine,
	// the least share of a timed window the copy engine was busy with the
	// copies a host thread fed it (only where the shim judged it: a judged
	// launch under 90 % fails).
	ValueCEBusy = "ce_busy"
	// ValueCERate: the rate those copies moved in the timed windows.
	ValueCERate = "ce_bytes_per_s"
	// ValueCECopy: a copy's time on the copy engine. With ValueCEFeed
	// alone (no ValueCEBusy), the shim did not judge the point: a copy
	// took under twice the feeder's calls for it.
	ValueCECopy = "ce_copy_s"
	// ValueCEFeed: the feeder thread's CPU time in its CUDA calls a copy
	// (the most of a launch).
	ValueCEFeed = "ce_feed_s"
)

// CEValues are the values of the copy engine's rows, declared: what the
// suite reads from the shim, and the physical range a measured one lies in
// (every reader refuses a point with one outside it: a damaged record).
var CEValues = record.Values{
	{Name: ValueCESMFree, Unit: units.One, Min: 0, Max: 1, Doc: "1: a copy ran while a kernel held every CTA slot (no SM); 0: it waited for one"},
	{Name: ValueCEBusy, Unit: units.One, Min: 0, Max: 1, Doc: "the least share of a timed window the copy engine was busy beside the compute"},
	// Beyond any memory's: a PB/s.
	{Name: ValueCERate, Unit: units.BytesPerSec, Min: 0, Max: 1e15, Doc: "the rate the fed copies moved in the timed windows"},
	{Name: ValueCECopy, Unit: units.Seconds, Min: 0, Max: record.MaxSample, Doc: "a copy's time on the copy engine"},
	{Name: ValueCEFeed, Unit: units.Seconds, Min: 0, Max: record.MaxSample, Doc: "the feeder's CPU time in its CUDA calls a copy, the most of a launch"},
}

func init() { record.DeclareValues(CEValues) }
