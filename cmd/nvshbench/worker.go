package main

import (
	"encoding/hex"
	"fmt"
	"os"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/nvshbench/nvshbench/cuda"
	"github.com/nvshbench/nvshbench/harness"
)

type workerOptions struct {
	Plan         string
	Rank, NRanks int
	Device       int
	Shim         string
}

// newWorkerCmd is the hidden subcommand the controller starts once per PE.
func newWorkerCmd() *cobra.Command {
	o := &workerOptions{}
	c := &cobra.Command{
		Use:    "__worker",
		Short:  "one PE of a run (started by 'nvshbench run')",
		Hidden: true,
		Args:   noArgs,
		RunE: func(c *cobra.Command, args []string) error {
			return runWorker(o)
		},
	}
	c.Flags().StringVar(&o.Plan, "plan", "", "plan file")
	c.Flags().IntVar(&o.Rank, "rank", 0, "this PE")
	c.Flags().IntVar(&o.NRanks, "nranks", 1, "number of PEs")
	c.Flags().IntVar(&o.Device, "device", 0, "CUDA device")
	c.Flags().StringVar(&o.Shim, "shim", "", "shim path or fake")
	return c
}

// watchParent ends this worker when its controller is gone (the worker is
// then re-parented). The kernel's parent-death signal does it first on
// Linux; this covers the rest, and a controller thread that exited.
func watchParent() {
	ppid := os.Getppid()
	go func() {
		for range time.Tick(500 * time.Millisecond) {
			if os.Getppid() != ppid {
				fmt.Fprintln(os.Stderr, "nvshbench worker: the controller is gone; exiting")
				os.Exit(exitError)
			}
		}
	}()
}

func runWorker(o *workerOptions) error {
	watchParent()
	// The protocol gets its own descriptor; fd 1 is pointed at stderr so
	// that anything the C libraries print cannot break a protocol line.
	protoFD, err := syscall.Dup(1)
	if err != nil {
		return err
	}
	if err := syscall.Dup3(2, 1, 0); err != nil {
		return err
	}
	em := harness.NewEmitter(os.NewFile(uintptr(protoFD), "protocol"))
	plan, err := harness.ReadPlan(o.Plan)
	if err != nil {
		return err
	}
	var lib cuda.Lib
	if o.Shim == "fake" {
		lib = cuda.NewFake()
	} else {
		if lib, err = cuda.Load(o.Shim); err != nil {
			em.Emit(harness.Message{Type: "fatal", Rank: o.Rank, Error: err.Error()})
			return err
		}
	}
	spec := harness.WorkerSpec{Rank: o.Rank, NRanks: o.NRanks, Device: o.Device, Mode: cuda.InitUID}
	if v := os.Getenv("NVSHBENCH_UID"); v != "" {
		if spec.UID, err = hex.DecodeString(v); err != nil {
			return fmt.Errorf("NVSHBENCH_UID: %v", err)
		}
	}
	if err := harness.RunWorker(lib, spec, plan, em); err != nil {
		em.Emit(harness.Message{Type: "fatal", Rank: o.Rank, Error: err.Error()})
		return err
	}
	return nil
}
