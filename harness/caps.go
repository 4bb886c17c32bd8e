package harness

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/nvshbench/nvshbench/record"
)

// What a PE's host can do beyond its GPU, probed once per process and
// exchanged at start-up (one agreement), so every PE decides waivers from
// the whole job's capabilities: a multi-node job where one node lacks a NIC
// waives its remote paths on every PE.
const (
	CapNIC       = 1 << iota // an InfiniBand/RoCE device (NVSHMEM's remote transports, NCCL's GIN)
	CapMulticast             // NVLink multicast allowed (not disabled by NVSHMEM_DISABLE_NVLS / NCCL_NVLS_ENABLE)
)

// SysRoot is where /sys and /proc are read: "/" ($NVSHBENCH_SYS_ROOT names
// a fabricated tree, for tests).
func SysRoot() string {
	if d := os.Getenv("NVSHBENCH_SYS_ROOT"); d != "" {
		return d
	}
	return "/"
}

// InfinibandDir is where NIC devices are listed.
func InfinibandDir() string { return filepath.Join(SysRoot(), "sys/class/infiniband") }

// NICReason says why this host has no remote transport ("" if it has a NIC).
func NICReason() string {
	ents, err := os.ReadDir(InfinibandDir())
	if err != nil || len(ents) == 0 {
		return fmt.Sprintf("no InfiniBand/RoCE device on this machine (%s is empty): NVSHMEM's remote transports (IBGDA, CPU proxy over IBRC) cannot start; "+
			"its UCX transport would, but without a NIC it does atomics on the CPU through GDRCopy, and without GDRCopy the first barrier's atomic aborts the job (reported on one H200 with 2 PEs)", InfinibandDir())
	}
	return ""
}

// MulticastReason says why NVLink multicast may not be used here ("" if it may).
func MulticastReason() string {
	if os.Getenv("NVSHMEM_DISABLE_NVLS") == "1" || os.Getenv("NCCL_NVLS_ENABLE") == "0" {
		return "multicast disabled (NVSHMEM_DISABLE_NVLS=1 / NCCL_NVLS_ENABLE=0 on this machine): NVLS needs NVLink multicast"
	}
	return ""
}

// ProbeHost is this process's capability mask.
func ProbeHost() int64 {
	var m int64
	if NICReason() == "" {
		m |= CapNIC
	}
	if MulticastReason() == "" {
		m |= CapMulticast
	}
	return m
}

// NICMissing names the first PE whose host has no NIC ("" if all have one).
func (j *Job) NICMissing() string {
	for pe, c := range j.Caps {
		if c&CapNIC == 0 {
			return j.capWhy(pe, "no InfiniBand/RoCE device: NVSHMEM's remote transports (IBGDA, CPU proxy over IBRC) cannot start")
		}
	}
	return ""
}

// MulticastOff names the first PE where NVLink multicast is off ("" if on
// for every PE).
func (j *Job) MulticastOff() string {
	for pe, c := range j.Caps {
		if c&CapMulticast == 0 {
			return j.capWhy(pe, "multicast disabled (NVSHMEM_DISABLE_NVLS=1 / NCCL_NVLS_ENABLE=0): NVLS needs NVLink multicast")
		}
	}
	return ""
}

func (j *Job) capWhy(pe int, why string) string {
	if len(j.Caps) == 1 {
		return why
	}
	host := ""
	if pe < len(j.PEs) {
		host = j.PEs[pe].HostString()
	}
	if host != "" {
		return fmt.Sprintf("PE %d (%s): %s", pe, host, why)
	}
	return fmt.Sprintf("PE %d: %s", pe, why)
}

// Capabilities summarises the job's probe for a results header.
func (j *Job) Capabilities() *record.Capabilities {
	c := &record.Capabilities{L2Bytes: j.L2Bytes(), NIC: "present", Multicast: "allowed"}
	for i := range j.PEs {
		if sm := int(j.PEs[i].SMs); sm > 0 && (c.SMs == 0 || sm < c.SMs) {
			c.SMs = sm
		}
	}
	if why := j.NICMissing(); why != "" {
		c.NIC = why
	}
	if why := j.MulticastOff(); why != "" {
		c.Multicast = why
	}
	return c
}

// HostCapabilities is the same summary from this host alone (a controller
// that starts every PE on its own GPUs), before any PE is up.
func HostCapabilities(sms int, l2 int64) *record.Capabilities {
	c := &record.Capabilities{SMs: sms, L2Bytes: l2, NIC: "present", Multicast: "allowed"}
	if why := NICReason(); why != "" {
		c.NIC = why
	}
	if why := MulticastReason(); why != "" {
		c.Multicast = why
	}
	return c
}
