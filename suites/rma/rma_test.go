package rma_test

import (
	"testing"

	"github.com/nvshbench/nvshbench/cuda"
	"github.com/nvshbench/nvshbench/harness"
	"github.com/nvshbench/nvshbench/suites/rma"
)

// onePE is a job of one H200-like PE (the fake's facts).
func onePE(t *testing.T) *harness.Job {
	info, err := cuda.NewFake().DeviceInfo(0)
	if err != nil {
		t.Fatal(err)
	}
	return &harness.Job{Job: cuda.Job{PEs: []cuda.Info{info}, Paths: [][]int{{cuda.PathLocal}}}, Caps: []int64{0}}
}

// The region row is like for like: a point without a region that is the
// issue-rate row's own operation, and a point in a region whose arguments
// are the same but for the operation; both at block scope, 8-byte messages,
// the run's launch shape.
func TestRegionRowIsTheRateRowInARegion(t *testing.T) {
	b, ok := harness.Lookup("rma/rate/put-nbi-region/block")
	ref, ok2 := harness.Lookup("rma/rate/put-nbi/block")
	if !ok || !ok2 {
		t.Fatal("rma/rate/put-nbi-region/block or rma/rate/put-nbi/block not registered")
	}
	cfg := harness.DefaultConfig()
	cfg.CTAs, cfg.Threads = 8, 128
	env := &harness.Env{Job: onePE(t), Config: &cfg}
	pts := b.Points(&cfg)
	if len(pts) != len(rma.Regions) {
		t.Fatalf("%d points, want one a region setting %v", len(pts), rma.Regions)
	}
	refArgs, why := ref.Args(env, ref.Points(&cfg)[0])
	if why != "" {
		t.Fatalf("the rate row waived: %s", why)
	}
	ops := map[string]string{}
	for _, p := range pts {
		a, why := b.Args(env, p)
		if why != "" {
			t.Fatalf("%s waived by the Go side: %s (the shim decides the version)", p.Key(), why)
		}
		ops[p.Extra["region"]] = a.OpString()
		if a.Scope != cuda.ScopeBlock || a.Size != 8 || a.CTAs != 8 || a.Threads != 128 || p.Scope != "block" {
			t.Errorf("%s: scope %d size %d launch %d x %d", p.Key(), a.Scope, a.Size, a.CTAs, a.Threads)
		}
		same := a
		same.SetOp(refArgs.OpString())
		if same != refArgs {
			t.Errorf("%s: arguments differ from the rate row's beyond the operation:\n  %+v\n  %+v", p.Key(), same, refArgs)
		}
	}
	if ops[rma.RegionNone] != "rma.rate_put_region_none" || ops["batch_rma"] != "rma.rate_put_region" {
		t.Errorf("operations by region: %v", ops)
	}
	for _, name := range []string{"rma.rate_put_region", "rma.rate_put_region_none"} {
		if o, _ := cuda.LookupOp(name); o.File != "newer.cuh" || !o.Has(cuda.TraitMessages) || o.Check != "kCheckMessagesInRegions" {
			t.Errorf("%s: %+v", name, o)
		}
	}
}

// The counted signal's points are the run's sizes that are multiples of
// 16 (nvshmemx_putmem_signal_counted_nbi_block refuses others), at block
// scope, and it is not in the default selection (waived on every library
// we build against).
func TestCountedSignalRow(t *testing.T) {
	b, ok := harness.Lookup("rma/put-signal/counted")
	if !ok {
		t.Fatal("rma/put-signal/counted not registered")
	}
	if b.Default {
		t.Error("rma/put-signal/counted in the default selection")
	}
	cfg := harness.DefaultConfig()
	cfg.Sizes = []int64{8, 16, 24, 4096}
	var sizes []int64
	for _, p := range b.Points(&cfg) {
		sizes = append(sizes, p.Size)
		if p.Scope != "block" {
			t.Errorf("%s: scope %s", p.Key(), p.Scope)
		}
		a, _ := b.Args(&harness.Env{Job: onePE(t), Config: &cfg}, p)
		if a.OpString() != "rma.put_signal_counted" {
			t.Errorf("%s runs %s", p.Key(), a.OpString())
		}
	}
	if len(sizes) != 2 || sizes[0] != 16 || sizes[1] != 4096 {
		t.Errorf("sizes %v, want [16 4096]", sizes)
	}
}
