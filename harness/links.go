package harness

import (
	"fmt"

	"github.com/nvshbench/nvshbench/cuda"
	"github.com/nvshbench/nvshbench/record"
)

// DeviceLinks is one GPU's links as the shim reported them (nb_link_info).
type DeviceLinks struct {
	PCI   string // its PCI bus id
	Links cuda.Links
}

// BuildLinks derives the physical ceilings of a host's GPUs from their
// links: each GPU's own memory (a copy that stays on it reads and writes
// every byte: half the memory's rate), and each pair's path: the direct
// NVLinks between them, else NVLinks through switches (the fewer of the
// two GPUs' links: every link of a GPU that ends at no GPU of the host),
// else PCIe (the narrower of the two links). A pair without any of these
// gets no ceiling.
func BuildLinks(host string, devs []DeviceLinks) []record.Link {
	var out []record.Link
	isGPU := map[string]bool{}
	for _, d := range devs {
		isGPU[record.NormalPCI(d.PCI)] = true
	}
	// switched: the links of d that end at no GPU of this host (an NVSwitch).
	switched := func(d DeviceLinks) int {
		n := 0
		for l := 0; l < cuda.MaxLinks; l++ {
			if r := d.Links.RemoteOf(l); r != "" && !isGPU[record.NormalPCI(r)] {
				n++
			}
		}
		return n
	}
	for _, d := range devs {
		if d.Links.HBMBps > 0 {
			out = append(out, record.Link{Host: host, From: d.PCI, To: d.PCI, Kind: record.LinkMemory, Bps: d.Links.HBMBps / 2,
				Source: fmt.Sprintf("memory: %.0f GB/s peak (bus width × clock × 2); a copy on one GPU reads and writes each byte", d.Links.HBMBps/1e9)})
		}
	}
	for i, a := range devs {
		for _, b := range devs[i+1:] {
			direct := 0
			for l := 0; l < cuda.MaxLinks; l++ {
				if r := a.Links.RemoteOf(l); r != "" && record.NormalPCI(r) == record.NormalPCI(b.PCI) {
					direct++
				}
			}
			rate := min(a.Links.LinkBps, b.Links.LinkBps)
			if rate <= 0 {
				rate = max(a.Links.LinkBps, b.Links.LinkBps)
			}
			switch sw := min(switched(a), switched(b)); {
			case direct > 0 && rate > 0:
				out = append(out, record.Link{Host: host, From: a.PCI, To: b.PCI, Kind: record.LinkNVLink, Count: direct, PerLinkBps: rate,
					Bps: float64(direct) * rate, Source: fmt.Sprintf("NVML: %d active NVLinks between them × %.3f GB/s per link per direction", direct, rate/1e9)})
			case sw > 0 && rate > 0:
				out = append(out, record.Link{Host: host, From: a.PCI, To: b.PCI, Kind: record.LinkNVSwitch, Count: sw, PerLinkBps: rate,
					Bps: float64(sw) * rate, Source: fmt.Sprintf("NVML: %d active NVLinks to NVSwitches (the fewer of the two GPUs') × %.3f GB/s per link per direction", sw, rate/1e9)})
			case a.Links.PCIeBps > 0 && b.Links.PCIeBps > 0:
				out = append(out, record.Link{Host: host, From: a.PCI, To: b.PCI, Kind: record.LinkPCIe, Bps: min(a.Links.PCIeBps, b.Links.PCIeBps),
					Source: fmt.Sprintf("NVML: PCIe gen %d x%d / gen %d x%d at their maximum, per direction", a.Links.PCIeGen, a.Links.PCIeWidth, b.Links.PCIeGen, b.Links.PCIeWidth)})
			}
		}
	}
	return out
}
