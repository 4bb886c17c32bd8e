// Package nicready checks what NVSHMEM's remote transports need on a node
// with NICs: IBGDA (the GPU drives the NIC) and the CPU proxy (IBRC, a host
// thread drives it). It reads the kernel's /sys and /proc trees under a
// root folder ("/" on a node, a fabricated tree in tests) and says, for
// each requirement, whether it is met and how to meet it.
package nicready

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// Finding is one requirement's state.
type Finding struct {
	Item   string // what is checked
	OK     bool
	Detail string // what was found
	Fix    string // how to meet it ("" when OK)
	Needs  string // which path needs it: ibgda, proxy, both
}

// Port is an RDMA device's port.
type Port struct {
	Device, Port string
	State        string // ACTIVE, DOWN, INIT, ...
	LinkLayer    string // InfiniBand, Ethernet
	PCI          string // the device's PCI address
	NUMA         int    // -1: unknown
}

// Report is what Check found.
type Report struct {
	Ports    []Port
	Findings []Finding
	// Affinity has one line per GPU: its nearest NIC and how they connect.
	Affinity []string
}

// Ready says whether the path ("ibgda" or "proxy") has all it needs.
func (r *Report) Ready(path string) bool {
	for _, f := range r.Findings {
		if !f.OK && (f.Needs == path || f.Needs == "both") {
			return false
		}
	}
	return len(r.Ports) > 0
}

// Check reads root's /sys and /proc; gpus are the GPUs' PCI addresses
// (CUDA's or NVML's spelling).
func Check(root string, gpus []string) *Report {
	r := &Report{}
	r.Ports = ports(root)
	active := 0
	var down []string
	for _, p := range r.Ports {
		if strings.HasSuffix(p.State, "ACTIVE") {
			active++
		} else {
			down = append(down, fmt.Sprintf("%s port %s %s", p.Device, p.Port, p.State))
		}
	}
	switch {
	case len(r.Ports) == 0:
		r.Findings = append(r.Findings, Finding{Item: "RDMA devices", Needs: "both",
			Detail: "none in /sys/class/infiniband",
			Fix:    "install the NIC's driver (MLNX_OFED / DOCA, or the distribution's rdma-core with mlx5_ib) and load it: modprobe mlx5_ib"})
	case active == 0:
		r.Findings = append(r.Findings, Finding{Item: "RDMA ports", Needs: "both",
			Detail: fmt.Sprintf("%d port(s), none ACTIVE (%s)", len(r.Ports), strings.Join(down, ", ")),
			Fix:    "connect the cables and bring the links up (ibstat; a subnet manager must run on an InfiniBand fabric: opensm)"})
	default:
		d := fmt.Sprintf("%d of %d port(s) ACTIVE", active, len(r.Ports))
		if len(down) > 0 {
			d += "; not active: " + strings.Join(down, ", ")
		}
		r.Findings = append(r.Findings, Finding{Item: "RDMA ports", OK: true, Detail: d, Needs: "both"})
	}
	r.Findings = append(r.Findings, gpuMemoryRegistration(root), peerMapping(root), gdrcopy(root))
	r.Affinity = affinity(root, gpus, r.Ports)
	return r
}

// ports lists the RDMA devices' ports.
func ports(root string) []Port {
	ib := filepath.Join(root, "sys/class/infiniband")
	devs, _ := os.ReadDir(ib)
	var out []Port
	for _, d := range devs {
		dir := filepath.Join(ib, d.Name())
		pci := ""
		if real, err := filepath.EvalSymlinks(filepath.Join(dir, "device")); err == nil {
			pci = filepath.Base(real)
		}
		numa := readInt(filepath.Join(dir, "device", "numa_node"))
		ps, _ := os.ReadDir(filepath.Join(dir, "ports"))
		for _, p := range ps {
			pd := filepath.Join(dir, "ports", p.Name())
			out = append(out, Port{Device: d.Name(), Port: p.Name(), PCI: pci, NUMA: numa,
				State: stateName(readText(filepath.Join(pd, "state"))), LinkLayer: readText(filepath.Join(pd, "link_layer"))})
		}
	}
	return out
}

// stateName turns "4: ACTIVE" into "ACTIVE".
func stateName(s string) string {
	if i := strings.Index(s, ":"); i >= 0 {
		return strings.TrimSpace(s[i+1:])
	}
	if s == "" {
		return "unknown"
	}
	return s
}

// gpuMemoryRegistration: the NIC must reach GPU memory, through the
// nvidia_peermem module or DMA-BUF (Linux 5.12 or later and NVIDIA's open
// kernel modules).
func gpuMemoryRegistration(root string) Finding {
	f := Finding{Item: "GPU memory registration (GPUDirect RDMA)", Needs: "both"}
	if exists(filepath.Join(root, "sys/module/nvidia_peermem")) {
		f.OK, f.Detail = true, "nvidia_peermem loaded"
		return f
	}
	kernel := kernelVersion(root)
	open := strings.Contains(readText(filepath.Join(root, "proc/driver/nvidia/version")), "Open Kernel Module")
	if kernel[0] > 5 || kernel[0] == 5 && kernel[1] >= 12 {
		if open {
			f.OK, f.Detail = true, fmt.Sprintf("DMA-BUF: Linux %d.%d and NVIDIA's open kernel modules (nvidia_peermem not loaded, not needed)", kernel[0], kernel[1])
			return f
		}
		f.Detail = fmt.Sprintf("nvidia_peermem not loaded; DMA-BUF needs NVIDIA's open kernel modules, this driver is the proprietary one (Linux %d.%d)", kernel[0], kernel[1])
		f.Fix = "modprobe nvidia_peermem (ships with the driver), or install the driver's open kernel modules for DMA-BUF"
		return f
	}
	f.Detail = "nvidia_peermem not loaded, and DMA-BUF needs Linux 5.12 or later"
	if kernel[0] > 0 {
		f.Detail += fmt.Sprintf(" (this is %d.%d)", kernel[0], kernel[1])
	}
	f.Fix = "modprobe nvidia_peermem (ships with the driver; MLNX_OFED must be installed before the driver)"
	return f
}

// peerMapping: IBGDA maps the NIC's doorbells into the GPU, which the
// driver allows with PeerMappingOverride=1.
func peerMapping(root string) Finding {
	f := Finding{Item: "driver PeerMappingOverride (IBGDA)", Needs: "ibgda"}
	params := readText(filepath.Join(root, "proc/driver/nvidia/params"))
	if params == "" {
		f.Detail = "/proc/driver/nvidia/params not readable (no NVIDIA driver loaded?)"
		f.Fix = "load the NVIDIA driver, then set PeerMappingOverride as below"
		return f
	}
	if regexp.MustCompile(`PeerMappingOverride=1\b`).MatchString(params) {
		f.OK, f.Detail = true, "RegistryDwords has PeerMappingOverride=1"
		return f
	}
	f.Detail = "RegistryDwords lacks PeerMappingOverride=1: NVSHMEM cannot map the NIC for the GPU"
	f.Fix = `echo 'options nvidia NVreg_RegistryDwords="PeerMappingOverride=1;"' > /etc/modprobe.d/nvidia-ibgda.conf, then update-initramfs -u and reboot (or reload the nvidia modules)`
	return f
}

// gdrcopy: the CPU proxy's host thread polls GPU memory through GDRCopy
// (the gdrdrv module and libgdrapi); without it NVSHMEM's proxy falls back
// to slower paths and, on transports without NIC atomics, cannot do
// atomics at all.
func gdrcopy(root string) Finding {
	f := Finding{Item: "GDRCopy (CPU proxy)", Needs: "proxy"}
	mod := exists(filepath.Join(root, "sys/module/gdrdrv")) || exists(filepath.Join(root, "dev/gdrdrv"))
	lib := findLib(root, "libgdrapi.so")
	switch {
	case mod && lib != "":
		f.OK, f.Detail = true, "gdrdrv loaded, "+lib
	case mod:
		f.Detail = "gdrdrv loaded, libgdrapi.so not found"
		f.Fix = "install GDRCopy's library (the gdrcopy package, or build github.com/NVIDIA/gdrcopy) where the loader finds it"
	case lib != "":
		f.Detail = lib + " found, the gdrdrv module not loaded"
		f.Fix = "load the module: modprobe gdrdrv (or GDRCopy's insmod.sh)"
	default:
		f.Detail = "neither the gdrdrv module nor libgdrapi.so"
		f.Fix = "install GDRCopy (github.com/NVIDIA/gdrcopy: the gdrdrv kernel module and libgdrapi) and load gdrdrv"
	}
	return f
}

// findLib looks for a library in the usual folders under root and in
// LD_LIBRARY_PATH's.
func findLib(root, name string) string {
	dirs := []string{"usr/lib/x86_64-linux-gnu", "usr/lib/aarch64-linux-gnu", "usr/lib64", "usr/lib", "usr/local/lib", "usr/local/lib64", "opt/gdrcopy/lib"}
	for _, d := range filepath.SplitList(os.Getenv("LD_LIBRARY_PATH")) {
		if d != "" {
			dirs = append(dirs, strings.TrimPrefix(d, "/"))
		}
	}
	for _, d := range dirs {
		m, _ := filepath.Glob(filepath.Join(root, d, name+"*"))
		if len(m) > 0 {
			return "/" + strings.TrimPrefix(strings.TrimPrefix(m[0], root), "/")
		}
	}
	return ""
}

// affinity names, for each GPU, the NIC nearest to it on the PCIe tree:
// under the same PCIe switch (the best: GPUDirect RDMA stays below it),
// the same NUMA node (through the CPU's root complex), or across sockets.
func affinity(root string, gpus []string, ps []Port) []string {
	if len(ps) == 0 {
		return nil
	}
	nics := map[string]Port{}
	for _, p := range ps {
		if p.PCI != "" {
			nics[p.PCI] = p
		}
	}
	var out []string
	for i, g := range gpus {
		if g == "" {
			continue
		}
		addr := normalPCI(g)
		gdir := filepath.Join(root, "sys/bus/pci/devices", addr)
		gpath, err := filepath.EvalSymlinks(gdir)
		if err != nil {
			out = append(out, fmt.Sprintf("GPU %d (%s): not in %s", i, addr, filepath.Join(root, "sys/bus/pci/devices")))
			continue
		}
		gnuma := readInt(filepath.Join(gdir, "numa_node"))
		best, bestRank, bestDepth := "", -1, -1
		for _, pci := range sortedKeys(nics) {
			npath, err := filepath.EvalSymlinks(filepath.Join(root, "sys/bus/pci/devices", pci))
			if err != nil {
				continue
			}
			depth := sharedBridges(gpath, npath)
			rank := 0 // across the CPU sockets
			switch {
			case depth >= 2:
				rank = 2 // below one PCIe switch
			case nics[pci].NUMA >= 0 && nics[pci].NUMA == gnuma:
				rank = 1
			}
			if rank > bestRank || rank == bestRank && depth > bestDepth {
				best, bestRank, bestDepth = pci, rank, depth
			}
		}
		words := []string{"across CPU sockets (SYS): GPUDirect RDMA crosses the inter-socket link; put the job on GPUs near a NIC",
			"on the same NUMA node, through the CPU's root complex (NODE)",
			"below the same PCIe switch (PIX/PXB): the best placement"}[bestRank]
		out = append(out, fmt.Sprintf("GPU %d (%s): nearest NIC %s (%s), %s", i, addr, nics[best].Device, best, words))
	}
	return out
}

// sharedBridges counts the PCI bridges two devices' sysfs paths share below
// the root complex (pci0000:xx): 0 or 1 means they meet at the CPU.
func sharedBridges(a, b string) int {
	pa, pb := strings.Split(a, "/"), strings.Split(b, "/")
	start := -1
	for i, s := range pa {
		if strings.HasPrefix(s, "pci") && strings.Contains(s, ":") {
			start = i
			break
		}
	}
	if start < 0 {
		return 0
	}
	n := 0
	for i := start + 1; i < len(pa)-1 && i < len(pb)-1; i++ {
		if pa[i] != pb[i] {
			break
		}
		n++
	}
	if start >= len(pb) || pa[start] != pb[start] {
		return 0
	}
	return n
}

// normalPCI spells a PCI address as sysfs does: 4-digit domain, lower case.
func normalPCI(s string) string {
	s = strings.ToLower(strings.TrimSpace(s))
	if i := strings.Index(s, ":"); i > 4 {
		s = s[i-4:]
	} else if i == 2 {
		s = "0000:" + s
	}
	return s
}

func kernelVersion(root string) [2]int {
	m := regexp.MustCompile(`Linux version (\d+)\.(\d+)`).FindStringSubmatch(readText(filepath.Join(root, "proc/version")))
	if m == nil {
		return [2]int{}
	}
	a, _ := strconv.Atoi(m[1])
	b, _ := strconv.Atoi(m[2])
	return [2]int{a, b}
}

func readText(p string) string {
	b, err := os.ReadFile(p)
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

func readInt(p string) int {
	v, err := strconv.Atoi(readText(p))
	if err != nil {
		return -1
	}
	return v
}

func exists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

func sortedKeys(m map[string]Port) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
