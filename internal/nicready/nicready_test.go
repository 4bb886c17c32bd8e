package nicready

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// node builds a fabricated /sys and /proc: two sockets, a PCIe switch on
// socket 0 with GPU 0 and mlx5_0 below it, GPU 1 on socket 1 alone, and
// mlx5_1 on socket 1 behind its own root port.
type node struct {
	t    *testing.T
	root string
}

func newNode(t *testing.T) *node {
	n := &node{t: t, root: t.TempDir()}
	n.device("pci0000:17/0000:17:00.0/0000:18:00.0/0000:19:00.0", 0) // GPU 0
	n.device("pci0000:17/0000:17:00.0/0000:18:00.0/0000:1a:00.0", 0) // mlx5_0
	n.device("pci0000:97/0000:97:00.0/0000:98:00.0", 1)              // GPU 1
	n.device("pci0000:a0/0000:a0:00.0/0000:a1:00.0", 1)              // mlx5_1
	n.nic("mlx5_0", "0000:1a:00.0", "4: ACTIVE")
	n.nic("mlx5_1", "0000:a1:00.0", "1: DOWN")
	n.write("proc/version", "Linux version 5.15.0-100-generic (buildd@lcy02) #110-Ubuntu SMP\n")
	n.write("proc/driver/nvidia/version", "NVRM version: NVIDIA UNIX x86_64 Kernel Module  570.86.15\n")
	n.write("proc/driver/nvidia/params", "ResmanDebugLevel: 4294967295\nRegistryDwords: \"\"\n")
	return n
}

func (n *node) write(p, s string) {
	n.t.Helper()
	p = filepath.Join(n.root, p)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		n.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
		n.t.Fatal(err)
	}
}

func (n *node) link(target, p string) {
	n.t.Helper()
	p = filepath.Join(n.root, p)
	os.MkdirAll(filepath.Dir(p), 0o755)
	if err := os.Symlink(filepath.Join(n.root, target), p); err != nil {
		n.t.Fatal(err)
	}
}

// device makes a PCI device's folder under sys/devices and its
// sys/bus/pci/devices link.
func (n *node) device(path string, numa int) {
	n.write(filepath.Join("sys/devices", path, "numa_node"), fmt.Sprintf("%d\n", numa))
	n.link(filepath.Join("sys/devices", path), filepath.Join("sys/bus/pci/devices", filepath.Base(path)))
}

func (n *node) nic(name, pci, state string) {
	n.link(filepath.Join("sys/bus/pci/devices", pci), filepath.Join("sys/class/infiniband", name, "device"))
	n.write(filepath.Join("sys/class/infiniband", name, "ports/1/state"), state+"\n")
	n.write(filepath.Join("sys/class/infiniband", name, "ports/1/link_layer"), "InfiniBand\n")
}

func finding(t *testing.T, r *Report, item string) Finding {
	t.Helper()
	for _, f := range r.Findings {
		if strings.HasPrefix(f.Item, item) {
			return f
		}
	}
	t.Fatalf("no finding %q in %+v", item, r.Findings)
	return Finding{}
}

func TestBareNodeNeedsEverything(t *testing.T) {
	n := newNode(t)
	r := Check(n.root, []string{"00000000:19:00.0", "0000:98:00.0"})
	if len(r.Ports) != 2 {
		t.Fatalf("ports %+v", r.Ports)
	}
	if f := finding(t, r, "RDMA ports"); !f.OK || !strings.Contains(f.Detail, "1 of 2") || !strings.Contains(f.Detail, "mlx5_1 port 1 DOWN") {
		t.Errorf("ports: %+v", f)
	}
	// Linux 5.15 with the proprietary driver: no DMA-BUF, and no peermem.
	if f := finding(t, r, "GPU memory registration"); f.OK || !strings.Contains(f.Fix, "nvidia_peermem") || !strings.Contains(f.Detail, "proprietary") {
		t.Errorf("registration: %+v", f)
	}
	if f := finding(t, r, "driver PeerMappingOverride"); f.OK || !strings.Contains(f.Fix, "NVreg_RegistryDwords") {
		t.Errorf("peer mapping: %+v", f)
	}
	if f := finding(t, r, "GDRCopy"); f.OK || !strings.Contains(f.Fix, "gdrdrv") {
		t.Errorf("gdrcopy: %+v", f)
	}
	if r.Ready("ibgda") || r.Ready("proxy") {
		t.Error("a node missing every piece is called ready")
	}
	// GPU 0 shares a switch with mlx5_0; GPU 1 only a NUMA node with mlx5_1.
	if len(r.Affinity) != 2 || !strings.Contains(r.Affinity[0], "mlx5_0") || !strings.Contains(r.Affinity[0], "PCIe switch") ||
		!strings.Contains(r.Affinity[1], "mlx5_1") || !strings.Contains(r.Affinity[1], "NUMA") {
		t.Errorf("affinity:\n%s", strings.Join(r.Affinity, "\n"))
	}
}

func TestReadyNode(t *testing.T) {
	n := newNode(t)
	n.write("sys/module/nvidia_peermem/refcnt", "0\n")
	n.write("proc/driver/nvidia/params", "RegistryDwords: \"PeerMappingOverride=1;\"\n")
	n.write("sys/module/gdrdrv/refcnt", "0\n")
	n.write("usr/lib/x86_64-linux-gnu/libgdrapi.so.2", "")
	r := Check(n.root, []string{"0000:19:00.0"})
	for _, f := range r.Findings {
		if !f.OK {
			t.Errorf("%s: %s", f.Item, f.Detail)
		}
	}
	if !r.Ready("ibgda") || !r.Ready("proxy") {
		t.Error("a node with everything is not ready")
	}
	if f := finding(t, r, "GDRCopy"); !strings.Contains(f.Detail, "/usr/lib/x86_64-linux-gnu/libgdrapi.so.2") {
		t.Errorf("gdrcopy detail %q", f.Detail)
	}
}

func TestDMABufWithOpenModules(t *testing.T) {
	n := newNode(t)
	n.write("proc/driver/nvidia/version", "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  570.86.15\n")
	if f := finding(t, Check(n.root, nil), "GPU memory registration"); !f.OK || !strings.Contains(f.Detail, "DMA-BUF") {
		t.Errorf("open modules on 5.15: %+v", f)
	}
	n.write("proc/version", "Linux version 5.4.0-42-generic\n")
	if f := finding(t, Check(n.root, nil), "GPU memory registration"); f.OK || !strings.Contains(f.Detail, "5.12") {
		t.Errorf("open modules on 5.4: %+v", f)
	}
}

func TestNoNIC(t *testing.T) {
	r := Check(t.TempDir(), []string{"0000:19:00.0"})
	if f := finding(t, r, "RDMA devices"); f.OK || f.Fix == "" {
		t.Errorf("no NIC: %+v", f)
	}
	if r.Ready("proxy") || len(r.Affinity) != 0 {
		t.Errorf("no NIC: ready or affinity %v", r.Affinity)
	}
}

func TestNormalPCI(t *testing.T) {
	for in, want := range map[string]string{"00000000:19:00.0": "0000:19:00.0", "0000:1A:00.0": "0000:1a:00.0", "19:00.0": "0000:19:00.0"} {
		if got := normalPCI(in); got != want {
			t.Errorf("normalPCI(%q) = %q, want %q", in, got, want)
		}
	}
}
