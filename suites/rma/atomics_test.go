package rma

import (
	"fmt"
	"strings"
	"testing"

	"github.com/nvshbench/nvshbench/cuda"
	"github.com/nvshbench/nvshbench/harness"
)

// The atomics' rates run every type the shim's line takes, each point
// naming its dtype and counter bytes (u64 u32; f64 f32 f16 for NVSHMEM
// 3.7's float adds; signal_add's u64), with Args.Elem the counter's bytes;
// over IBGDA the float adds are waived, over the CPU proxy they run.
func TestAtomicRatesByTheirCounters(t *testing.T) {
	cfg := harness.DefaultConfig()
	info, err := cuda.NewFake().DeviceInfo(0)
	if err != nil {
		t.Fatal(err)
	}
	remote := &harness.Job{Job: cuda.Job{PEs: []cuda.Info{info, info}, Paths: [][]int{{cuda.PathLocal, cuda.PathRemote}, {cuda.PathRemote, cuda.PathLocal}}}}
	for id, want := range map[string]string{
		"rma/atomic/fetch_xor":       "u64:8 u32:4",
		"rma/atomic/signal_add":      "u64:8",
		"rma/atomic/float_fetch_add": "f64:8 f32:4 f16:2",
		"rma/atomic/float_add":       "f64:8 f32:4 f16:2",
	} {
		b, ok := harness.Lookup(id)
		if !ok {
			t.Errorf("%s is not registered", id)
			continue
		}
		var got []string
		for _, p := range b.Points(&cfg) {
			got = append(got, fmt.Sprintf("%s:%d", p.DType, p.Size))
			for _, path := range []string{"proxy", "ibgda"} {
				cc := cfg
				cc.Path = path
				a, why := b.Args(&harness.Env{Job: remote, Config: &cc}, p)
				if a.Elem != int32(p.Size) {
					t.Errorf("%s %s: elem %d", id, p.Key(), a.Elem)
				}
				if waived := why != ""; waived != (path == "ibgda" && strings.Contains(id, "float_")) {
					t.Errorf("%s %s over %s: %q", id, p.Key(), path, why)
				}
			}
		}
		// Two nodes of two PEs, the peer on the same node (NVLink): NVSHMEM
		// routes float adds by the job's connectivity, so IBGDA waives them.
		twoNodes := &harness.Job{Job: cuda.Job{PEs: []cuda.Info{info, info, info, info}, Paths: [][]int{
			{cuda.PathLocal, cuda.PathP2P, cuda.PathRemote, cuda.PathRemote}, {cuda.PathP2P, cuda.PathLocal, cuda.PathRemote, cuda.PathRemote},
			{cuda.PathRemote, cuda.PathRemote, cuda.PathLocal, cuda.PathP2P}, {cuda.PathRemote, cuda.PathRemote, cuda.PathP2P, cuda.PathLocal}}}}
		for _, p := range b.Points(&cfg) {
			for _, path := range []string{"proxy", "ibgda"} {
				cc := cfg
				cc.Path = path
				if _, why := b.Args(&harness.Env{Job: twoNodes, Config: &cc}, p); (why != "") != (path == "ibgda" && strings.Contains(id, "float_")) {
					t.Errorf("%s %s, two nodes, peer over NVLink, %s: %q", id, p.Key(), path, why)
				}
			}
		}
		if g := strings.Join(got, " "); g != want {
			t.Errorf("%s: points %s, want %s", id, g, want)
		}
	}
}
