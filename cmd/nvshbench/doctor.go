package main

import (
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/nvshbench/nvshbench/cuda"
	"github.com/nvshbench/nvshbench/harness"
	"github.com/nvshbench/nvshbench/internal/nicready"
	"github.com/nvshbench/nvshbench/launcher"
)

type doctorOptions struct {
	Shim  string
	Build bool
}

func newDoctorCmd() *cobra.Command {
	o := &doctorOptions{}
	c := &cobra.Command{
		Use:   "doctor",
		Short: "Show what nvshbench found: toolchain, shim, GPUs, P2P matrix, usable NVSHMEM paths",
		Long: `doctor prints where nvcc, NVSHMEM and NCCL were found (CUDA_HOME, NVSHMEM_HOME, NCCL_HOME, else
the pip wheels in python3's site-packages), their versions, the shim it would use, the GPUs,
their peer-access matrix, which NVSHMEM paths this machine can measure (P2P, CPU proxy,
IBGDA, NVLink multicast), and which of NVSHMEM's bootstrap plugins load, opened by the full path
NVSHMEM will be given (these also without a GPU), with the one a launcher's job would get. It
exits non-zero when nothing can be measured.`,
		Example: `  nvshbench doctor
  nvshbench doctor --build`,
		Args: noArgs,
		RunE: func(c *cobra.Command, args []string) error { return runDoctor(c.OutOrStdout(), c.ErrOrStderr(), o) },
	}
	c.Flags().StringVar(&o.Shim, "shim", "", "use this libnvshbench.so instead of the cached build (fake: the fake GPU that --shim fake gives run and reproduce)")
	c.Flags().BoolVar(&o.Build, "build", false, "build the shim into the cache now if it is missing or stale")
	return c
}

func runDoctor(w, errw io.Writer, o *doctorOptions) error {
	if o.Shim != "" && o.Shim != "fake" {
		if st, err := os.Stat(o.Shim); err != nil || !st.Mode().IsRegular() {
			return usagef("--shim %s: no such shared library (build one with 'nvshbench build-shim -o %s', or leave --shim out to use the cached build)", o.Shim, o.Shim)
		}
	}
	tc, terr := cuda.Discover()
	fmt.Fprintln(w, "toolchain:")
	show := func(what, v, from string) {
		if v == "" {
			v = "not found"
		}
		if from != "" {
			v += "  (" + from + ")"
		}
		fmt.Fprintf(w, "  %-9s %s\n", what, v)
	}
	show("nvcc", strings.TrimSpace(tc.NVCC+" "+tc.NVCCVersion), tc.From["cuda"])
	show("NVSHMEM", strings.TrimSpace(tc.NVSHMEMHome+" "+tc.NVSHMEMVersion), tc.From["nvshmem"])
	show("NCCL", strings.TrimSpace(tc.NCCLHome+" "+tc.NCCLVersion), tc.From["nccl"])
	fmt.Fprintf(w, "  archs     sm_%s\n", strings.Join(tc.Archs, ", sm_"))
	shim := o.Shim
	if shim == "" {
		shim = os.Getenv("NVSHBENCH_SHIM")
	}
	if shim == "" && terr == nil {
		var cerr error
		if shim, cerr = tc.CachedShimPath(); cerr != nil {
			fmt.Fprintf(w, "  shim      %v\n", cerr)
		}
		state := "built"
		if _, err := os.Stat(shim); err != nil {
			state = "not built yet (run 'nvshbench doctor --build', or any run builds it)"
			if o.Build {
				if err := tc.Build(shim, errw); err != nil {
					return err
				}
				state = "built now"
			}
		}
		fmt.Fprintf(w, "shim:\n  %s  (%s)\n", shim, state)
		fmt.Fprintf(w, "  build: nvshbench build-shim -o %s\n", shim)
		fmt.Fprintf(w, "  which runs, in the shim's sources (cuda/shim in the repository): %s\n", strings.Join(tc.BuildCommand("nvshbench.cu", shim), " "))
	} else if terr != nil && shim == "" {
		fmt.Fprintf(w, "shim:\n  cannot be built: %v\n", terr)
	}
	if lp := tc.LibraryPath(); len(lp) > 0 {
		fmt.Fprintf(w, "  libraries loaded from (nvshbench opens them itself; no LD_LIBRARY_PATH needed): %s\n", strings.Join(lp, ":"))
	}
	// The bootstrap plugins need no GPU: a login node or a compute node
	// without a driver learns here what a launcher will get.
	var probeLib cuda.Lib // nil: the loader itself
	if shim == "fake" {
		probeLib = cuda.NewFake()
	}
	doctorBootstraps(w, pluginsOf(probeLib, tc))
	if shim != "fake" {
		n, err := cuda.ProbeDriver()
		if err != nil {
			fmt.Fprintf(w, "GPUs:\n  none usable: %v\n", err)
			return noGPUError{fmt.Errorf("nothing can be measured on this machine (%s)", noGPUHelp)}
		}
		if _, err := os.Stat(shim); shim != "" && err != nil {
			fmt.Fprintf(w, "GPUs: %d (the driver's count; details once the shim is built: 'nvshbench doctor --build')\n", n)
			return nil
		}
	}
	g, err := openGPU(shim, errw)
	if err != nil {
		fmt.Fprintf(w, "GPUs:\n  none usable: %v\n", err)
		return noGPUError{fmt.Errorf("nothing can be measured on this machine (see above)")}
	}
	n, _ := g.lib.DeviceCount()
	fmt.Fprintf(w, "GPUs: %d\n", n)
	for i := 0; i < n; i++ {
		info, err := g.lib.DeviceInfo(i)
		if err != nil {
			fmt.Fprintf(w, "  %d: %v\n", i, err)
			continue
		}
		fmt.Fprintf(w, "  %d: %s, %d SMs, %.0f GiB, L2 %d MiB, cc %d.%d, %s, CUDA runtime %s driver %s\n", i, info.NameString(), info.SMs,
			float64(info.MemBytes)/(1<<30), info.L2Bytes>>20, info.CCMajor, info.CCMinor, info.PCIString(),
			cuda.CUDAVersion(info.CUDARuntime), cuda.CUDAVersion(info.CUDADriver))
	}
	fmt.Fprintf(w, "topology:\n%s", indent(topology(g, n)))
	fmt.Fprintln(w, "NVSHMEM paths:")
	p2p := "2 PEs on one GPU only (--pes-per-gpu 2): functional, not a link figure"
	if n > 1 {
		ok, _ := g.lib.CanAccessPeer(0, 1)
		if ok {
			p2p = fmt.Sprintf("yes: %d GPUs with peer access", n)
		} else {
			p2p = "no peer access between GPU 0 and 1"
		}
	}
	fmt.Fprintf(w, "  p2p       %s\n", p2p)
	var pcis []string
	for i := 0; i < n; i++ {
		if info, err := g.lib.DeviceInfo(i); err == nil {
			pcis = append(pcis, info.PCIString())
		}
	}
	nic := nicready.Check(harness.SysRoot(), pcis)
	for _, path := range []string{"proxy", "ibgda"} {
		state := "ready (every check below passed)"
		switch {
		case len(nic.Ports) == 0:
			state = "no: " + harness.NICReason()
		case !nic.Ready(path):
			state = "not ready: see the checks below"
		}
		fmt.Fprintf(w, "  %-9s %s\n", path, state)
	}
	if len(nic.Ports) > 0 {
		fmt.Fprintln(w, "NIC readiness (what IBGDA and the CPU proxy need):")
		for _, f := range nic.Findings {
			mark := "ok  "
			if !f.OK {
				mark = "MISSING"
			}
			fmt.Fprintf(w, "  %-7s %s: %s\n", mark, f.Item, f.Detail)
			if f.Fix != "" {
				fmt.Fprintf(w, "          fix: %s\n", f.Fix)
			}
		}
		for _, a := range nic.Affinity {
			fmt.Fprintf(w, "  %s\n", a)
		}
	}
	mc := "not used by nvshbench unless NVSHMEM_DISABLE_NVLS / NCCL_NVLS_ENABLE allow it"
	if os.Getenv("NVSHMEM_DISABLE_NVLS") == "1" || os.Getenv("NCCL_NVLS_ENABLE") == "0" {
		mc = "disabled (NVSHMEM_DISABLE_NVLS=1 / NCCL_NVLS_ENABLE=0): NVLS figures are waived"
	}
	fmt.Fprintf(w, "  multicast %s\n", mc)
	return nil
}

// doctorBootstraps lists NVSHMEM's bootstrap plugins, each opened as
// NVSHMEM will open it, and the one a launcher's job would get.
func doctorBootstraps(w io.Writer, p plugins) {
	fmt.Fprintln(w, "NVSHMEM bootstrap plugins, opened as NVSHMEM will be told to (UID: nvshbench run's own workers; the others under srun / mpirun):")
	for _, l := range bootstrapReport(p) {
		fmt.Fprintf(w, "  %s\n", l)
	}
	if l, ok := launcher.DetectLauncher(); ok {
		if c, err := chooseBootstrap(p, l); err != nil {
			fmt.Fprintf(w, "  under this %s job: none works: %v\n", l.By, err)
		} else {
			fmt.Fprintf(w, "  under this %s job: %s\n", l.By, c.Why)
		}
	} else {
		fmt.Fprintln(w, "  under Open MPI nvshbench picks PMIx where its plugin loads, else MPI; under srun PMIx or PMI-2 (by SLURM_MPI_TYPE); NVSHMEM gets the plugin's full path (NVSHMEM_BOOTSTRAP_<mode>_PLUGIN) unless you set it")
	}
}

func indent(s string) string {
	var b strings.Builder
	for _, l := range strings.Split(strings.TrimRight(s, "\n"), "\n") {
		b.WriteString("  " + l + "\n")
	}
	return b.String()
}

func newBuildShimCmd() *cobra.Command {
	var out string
	var rebuild bool
	c := &cobra.Command{
		Use:   "build-shim",
		Short: "Compile the CUDA shim (libnvshbench.so) with the discovered toolchain",
		Long: `build-shim compiles the kernels and C ABI embedded in this binary with the nvcc, NVSHMEM and
NCCL that 'nvshbench doctor' shows, into --out (default: the cache, where run finds it). The cache
is keyed by the sources, the toolchain and the flags: when they are unchanged, the cached library is
copied instead of compiled again (--rebuild compiles anyway).`,
		Example: `  nvshbench build-shim -o build/libnvshbench.so`,
		Args:    noArgs,
		RunE: func(c *cobra.Command, args []string) error {
			if out != "" {
				if err := cuda.ShimTarget(out); err != nil {
					return usagef("-o %v", err)
				}
			}
			tc, err := cuda.Discover()
			if err != nil {
				return fmt.Errorf("no CUDA toolchain to build the shim with: %w", err)
			}
			cached, err := tc.CachedShimPath()
			if err != nil {
				return err
			}
			if out == "" {
				out = cached
			}
			if rebuild {
				os.Remove(cached)
			}
			built, err := tc.CopyShim(out, c.ErrOrStderr())
			if err != nil {
				return err
			}
			if !built {
				fmt.Fprintf(c.ErrOrStderr(), "build-shim: sources and toolchain unchanged: copied %s\n", cached)
			}
			fmt.Fprintln(c.OutOrStdout(), out)
			return nil
		},
	}
	c.Flags().StringVarP(&out, "out", "o", "", "where to write the library (default: the cache)")
	c.Flags().BoolVar(&rebuild, "rebuild", false, "compile even when the cache holds a shim of the same sources and toolchain")
	return c
}
