//go:build gpu

package gputest

import (
	"strings"
	"testing"
	"time"

	"github.com/nvshbench/nvshbench/harness"
	"github.com/nvshbench/nvshbench/record"
)

// TestMatrixOnOneGPU: check over 8 PEs of one GPU (functional: time-sliced
// PEs cross no link): the pair matrix's NVSHMEM rows and copy references
// run and verify for all 56 ordered pairs and each PE with itself, every
// pair recorded as two PEs of one GPU; NCCL (two ranks on one GPU) and
// NVSHMEM's team collectives are waived, as on one GPU they must be; the
// check passes (exit 0).
func TestMatrixOnOneGPU(t *testing.T) {
	p, _ := shim(t)
	f := nvshbench(t, 9*time.Minute, "check", "--shim", p, "--pes-per-gpu", "8", "--matrix-size", "64M", "--sizes", "1M",
		"--samples", "2", "--warmup", "1", "--timeout", "120s")
	rows := append(harness.MatrixRows(), "limit/chase-peer", "collectives/allreduce/nccl", "collectives/alltoall/nvshmem-block")
	checkRows(t, f, 8, 1, rows...)
	pairs := map[string]map[string]bool{} // row → pairs measured ok
	for _, pt := range f.Points {
		kind := pt.Params.Extra[harness.MatrixKey]
		if kind == "" {
			continue
		}
		nccl := strings.Contains(pt.ID, "nccl")
		switch {
		case nccl && pt.Status != record.StatusWaived:
			t.Errorf("%s %s: %s, want waived (NCCL refuses two ranks on one GPU)", pt.ID, pt.Params.Pair, pt.Status)
		case nccl:
		case pt.Status != record.StatusOK || !pt.Verify.Checked || !pt.Verify.OK:
			t.Errorf("%s %s: %s %s, verify %+v", pt.ID, pt.Params.Pair, pt.Status, pt.Reason, pt.Verify)
		default:
			want := record.PairSameGPU
			if kind == harness.MatrixLocal {
				want = record.PairLoopback
			}
			if pt.Pair == nil || pt.Pair.Kind != want || pt.Pair.String() == "" {
				t.Errorf("%s %s: pair %v, want %s", pt.ID, pt.Params.Pair, pt.Pair, want)
			}
			if pairs[pt.ID] == nil {
				pairs[pt.ID] = map[string]bool{}
			}
			pairs[pt.ID][pt.Params.Pair+" "+pt.Params.Dir] = true
		}
	}
	for _, id := range []string{"rma/put/block", "rma/get/block", "latency/put/block", "latency/get/block", "limit/sm-copy"} {
		want := 56
		if strings.HasPrefix(id, "rma/") {
			want += 28 // bidirectional, once a pair
		}
		if strings.HasPrefix(id, "limit/") {
			want += 8
		}
		if len(pairs[id]) != want {
			t.Errorf("%s: %d pairs measured ok, want %d", id, len(pairs[id]), want)
		}
	}
}
