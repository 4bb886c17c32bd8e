package main

import (
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/nvshbench/nvshbench/cuda"
)

// gpuSetup is a loaded GPU layer: the shim (or the fake) and the toolchain
// it was built with.
type gpuSetup struct {
	lib      cuda.Lib
	shimPath string // "fake" for the fake
	tc       *cuda.Toolchain
}

const noGPUHelp = "to see the tool work without a GPU: 'nvshbench reproduce --quick --shim fake --out DIR' runs the whole pipeline on a fake GPU (SYNTHETIC numbers, flagged as such); 'nvshbench report --paper' prints the published numbers and 'nvshbench report --example' / 'plot --example' render a measured H200 run"

// openGPU finds or builds the shim and loads it. shim is --shim: a path, or
// "fake" (a fake GPU: tests, and trying the tool without a GPU); empty means $NVSHBENCH_SHIM, else build into the cache.
func openGPU(shim string, log io.Writer) (*gpuSetup, error) {
	if shim != "" && shim != "fake" {
		if _, err := os.Stat(shim); err != nil {
			return nil, usagef("--shim %v", err)
		}
		if err := cuda.CheckLibrary(shim); err != nil {
			return nil, usagef("--shim %v (want a libnvshbench.so built by 'nvshbench build-shim')", err)
		}
	}
	if shim == "" {
		shim = os.Getenv("NVSHBENCH_SHIM")
	}
	if shim == "fake" {
		// Its node or cluster is read once here, so a topology that does
		// not parse is refused before anything starts.
		if _, err := cuda.FakeClusterFromEnv(); err != nil {
			return nil, usageError{err}
		}
		return &gpuSetup{lib: cuda.NewFake(), shimPath: "fake", tc: &cuda.Toolchain{}}, nil
	}
	// Before compiling anything: is there a driver and a GPU at all?
	if _, err := cuda.ProbeDriver(); err != nil {
		return nil, noGPUError{fmt.Errorf("%v (%s)", err, noGPUHelp)}
	}
	tc, terr := cuda.Discover()
	if shim == "" {
		if terr != nil {
			return nil, noGPUError{fmt.Errorf("%v; run 'nvshbench doctor' for details (%s)", terr, noGPUHelp)}
		}
		p, err := tc.EnsureShim(log)
		if err != nil {
			return nil, noGPUError{fmt.Errorf("building the CUDA shim: %v", err)}
		}
		shim = p
	}
	// What was found of NVSHMEM and NCCL (also without an nvcc, as on a
	// compute node running a shim built elsewhere) is opened first.
	if err := cuda.Preload(tc); err != nil {
		fmt.Fprintf(log, "nvshbench: %v\n", err)
	}
	lib, err := cuda.Load(shim)
	if err != nil {
		return nil, fmt.Errorf("%v (rebuild it with 'nvshbench build-shim', or see 'nvshbench doctor')", err)
	}
	n, err := lib.DeviceCount()
	if err != nil || n == 0 {
		if err == nil {
			err = fmt.Errorf("no CUDA device visible")
		}
		return nil, noGPUError{fmt.Errorf("no usable GPU: %v (%s)", err, noGPUHelp)}
	}
	return &gpuSetup{lib: lib, shimPath: shim, tc: tc}, nil
}

// workerEnv is the full environment of the workers: ours, with the NVSHMEM
// and NCCL library folders prepended to LD_LIBRARY_PATH, plus extra.
func (g *gpuSetup) workerEnv(extra map[string]string) []string {
	env := os.Environ()
	var lp []string
	if g.tc != nil {
		lp = g.tc.LibraryPath()
	}
	if cur := os.Getenv("LD_LIBRARY_PATH"); cur != "" {
		lp = append(lp, cur)
	}
	out := make([]string, 0, len(env)+len(extra)+1)
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		if _, over := extra[k]; over || k == "LD_LIBRARY_PATH" {
			continue
		}
		out = append(out, kv)
	}
	if len(lp) > 0 {
		out = append(out, "LD_LIBRARY_PATH="+strings.Join(lp, ":"))
	}
	for k, v := range extra {
		out = append(out, k+"="+v)
	}
	return out
}
