package cuda

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode"
)

// Every NB_* constant of the header has its Go mirror with the same value,
// and every Go mirror is in the header: a drift fails here, not on a GPU.
func TestConstantsMatchTheHeader(t *testing.T) {
	h, err := shimSources.ReadFile("nvshbench.h")
	if err != nil {
		t.Fatal(err)
	}
	re := regexp.MustCompile(`(?m)(?:#define\s+(NB_[A-Z0-9_]+)\s+(-?\d+)|\b(NB_[A-Z0-9_]+)\s*=\s*(-?\d+))`)
	seen := map[string]bool{}
	for _, m := range re.FindAllStringSubmatch(string(h), -1) {
		name, val := m[1], m[2]
		if name == "" {
			name, val = m[3], m[4]
		}
		v, _ := strconv.Atoi(val)
		seen[name] = true
		got, ok := ABIConstants[name]
		if !ok {
			t.Errorf("%s = %d in the header has no Go mirror in ABIConstants", name, v)
			continue
		}
		if got != v {
			t.Errorf("%s: header %d, Go %d", name, v, got)
		}
	}
	if len(seen) < 20 {
		t.Fatalf("read only %d constants from the header: the pattern is wrong", len(seen))
	}
	for name := range ABIConstants {
		if !seen[name] {
			t.Errorf("Go mirrors %s, which the header does not define", name)
		}
	}
}

// cName turns a Go field name into the header's: NCCLAlgo → nccl_algo.
func cName(goName string) string {
	special := map[string]string{"CTAs": "ctas", "NSamples": "n_samples", "FailedPE": "failed_pe", "MyPE": "my_pe", "NPEs": "n_pes",
		"SMs": "sms", "ClockKHz": "clock_khz", "CCMajor": "cc_major", "CCMinor": "cc_minor", "CUDARuntime": "cuda_runtime",
		"CUDADriver": "cuda_driver", "NVSHMEMMajor": "nvshmem_major", "NVSHMEMMinor": "nvshmem_minor", "NVSHMEMPatch": "nvshmem_patch",
		"NCCLVersion": "nccl_version", "UUID": "uuid", "PCIBusID": "pci_bus_id", "NCCLAlgo": "nccl_algo", "NCCLProto": "nccl_proto",
		"DType": "dtype", "MemBytes": "mem_bytes", "L2Bytes": "l2_bytes", "JobErrors": "job_errors", "JobChecked": "job_checked", "JobBytes": "job_bytes",
		"WorkSet": "work_set", "NKernel": "n_kernel", "OpsPerIter": "ops_per_iter", "PerOp": "per_op", "LinkBps": "link_bps",
		"PCIeBps": "pcie_bps", "HBMBps": "hbm_bps", "PCIeGen": "pcie_gen", "PCIeWidth": "pcie_width", "NVML": "nvml", "TopK": "topk", "MoEMode": "moe_mode"}
	if s, ok := special[goName]; ok {
		return s
	}
	var b strings.Builder
	for i, r := range goName {
		if unicode.IsUpper(r) && i > 0 {
			b.WriteByte('_')
		}
		b.WriteRune(unicode.ToLower(r))
	}
	return b.String()
}

// Every field of the Go mirrors sits at the C offset of its namesake, and
// the sizes match.
func TestStructLayoutsMatchTheHeader(t *testing.T) {
	cc, err := exec.LookPath("cc")
	if err != nil {
		t.Skip("no C compiler to read the header's layout")
	}
	structs := []struct {
		c string
		v any
	}{{"nb_args", Args{}}, {"nb_value", Value{}}, {"nb_result", Result{}}, {"nb_info", Info{}}, {"nb_links", Links{}}}
	var prog strings.Builder
	prog.WriteString("#include <stdio.h>\n#include <stddef.h>\n#include \"nvshbench.h\"\nint main(void) {\n")
	var want []string
	for _, s := range structs {
		rt := reflect.TypeOf(s.v)
		fmt.Fprintf(&prog, "  printf(\"%s %%zu\\n\", sizeof(%s));\n", s.c, s.c)
		want = append(want, fmt.Sprintf("%s %d", s.c, rt.Size()))
		for i := 0; i < rt.NumField(); i++ {
			f := rt.Field(i)
			fmt.Fprintf(&prog, "  printf(\"%s.%s %%zu\\n\", offsetof(%s, %s));\n", s.c, cName(f.Name), s.c, cName(f.Name))
			want = append(want, fmt.Sprintf("%s.%s %d", s.c, cName(f.Name), f.Offset))
		}
	}
	prog.WriteString("  return 0;\n}\n")
	dir := t.TempDir()
	h, _ := shimSources.ReadFile("nvshbench.h")
	writeFile(t, filepath.Join(dir, "nvshbench.h"), string(h), 0o644)
	writeFile(t, filepath.Join(dir, "m.c"), prog.String(), 0o644)
	exe := filepath.Join(dir, "m")
	if out, err := exec.Command(cc, "-o", exe, filepath.Join(dir, "m.c")).CombinedOutput(); err != nil {
		t.Fatalf("cc (a Go field without a C namesake?): %v\n%s", err, out)
	}
	out, err := exec.Command(exe).Output()
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Split(strings.TrimSpace(string(out)), "\n")
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		for i := range want {
			if i >= len(got) || got[i] != want[i] {
				g := "missing"
				if i < len(got) {
					g = got[i]
				}
				t.Errorf("C %s, Go %s", g, want[i])
			}
		}
	}
}
