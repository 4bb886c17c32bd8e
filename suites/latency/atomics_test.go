package latency

import (
	"strings"
	"testing"

	"github.com/nvshbench/nvshbench/cuda"
	"github.com/nvshbench/nvshbench/harness"
	"github.com/nvshbench/nvshbench/record"
)

// job is a job of two fake PEs reached over path.
func job(t *testing.T, path int) *harness.Job {
	info, err := cuda.NewFake().DeviceInfo(0)
	if err != nil {
		t.Fatal(err)
	}
	j := &harness.Job{Job: cuda.Job{PEs: []cuda.Info{info, info}, Paths: [][]int{{cuda.PathLocal, path}, {path, cuda.PathLocal}}}}
	j.PEs[1].MyPE = 1
	return j
}

// The atomics' round trips run one counter of each type the shim's line
// takes: the integer ones at 8 and 4 bytes with no dtype (as the results
// they are compared with), the float adds at 8, 4, 2 bytes named f64, f32,
// f16 (4 bytes alone would read as a u32 counter), with Args.Elem the
// counter's bytes; over IBGDA the float ones are waived (IB's atomics add
// no floats), over the CPU proxy and load/store they run.
func TestAtomicRoundTripsByTheirCounters(t *testing.T) {
	cfg := harness.DefaultConfig()
	for id, want := range map[string][]record.Params{
		"latency/atomic/fetch_add":       {{Size: 8}, {Size: 4}},
		"latency/atomic/float_fetch_add": {{Size: 8, DType: "f64"}, {Size: 4, DType: "f32"}, {Size: 2, DType: "f16"}},
		"latency/atomic/float_add":       {{Size: 8, DType: "f64"}, {Size: 4, DType: "f32"}, {Size: 2, DType: "f16"}},
	} {
		b, ok := harness.Lookup(id)
		if !ok {
			t.Errorf("%s is not registered", id)
			continue
		}
		pts := b.Points(&cfg)
		if len(pts) != len(want) {
			t.Errorf("%s: %d points, want %d", id, len(pts), len(want))
			continue
		}
		float := strings.Contains(id, "float_")
		if float != strings.Contains(b.Desc, "NVSHMEM >= 3.7") {
			t.Errorf("%s: %q", id, b.Desc)
		}
		for i, p := range pts {
			if p.Size != want[i].Size || p.DType != want[i].DType || p.Threads != 1 {
				t.Errorf("%s point %d: %s, want size %d dtype %q", id, i, p.Key(), want[i].Size, want[i].DType)
			}
			for _, c := range []struct {
				path, transport string
				route           int
				waived          bool
			}{{"p2p", "", cuda.PathP2P, false}, {"proxy", "proxy", cuda.PathRemote, false}, {"ibgda", "ibgda", cuda.PathRemote, float}} {
				cc := cfg
				cc.Path = c.path
				a, why := b.Args(&harness.Env{Job: job(t, c.route), Config: &cc}, p)
				if a.Elem != int32(p.Size) || a.OpString() != "lat."+strings.TrimPrefix(id, "latency/atomic/") {
					t.Errorf("%s %s: args elem %d op %s", id, p.Key(), a.Elem, a.OpString())
				}
				if waived := strings.Contains(why, "IBGDA"); waived != c.waived || (!c.waived && why != "") {
					t.Errorf("%s %s over %s: waived %q, want waived %v", id, p.Key(), c.path, why, c.waived)
				}
			}
		}
	}
}
