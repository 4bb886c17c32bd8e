//go:build gpu

package gputest

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nvshbench/nvshbench/record"
)

// TestFloatAtomics: NVSHMEM 3.7's float adds (rates and round trips, f64,
// f32 and f16 counters) on 1 PE and on 2 PEs of one GPU, with 1000 calls a
// launch and four launches (a warm-up and three samples): every counter
// sees 4000 calls, wrapping its modulo-1024 count three times, and its
// check compares its bits exactly. A shim built against NVSHMEM 3.7 or
// later runs every point verified; one built against an older release
// waives every point with "needs NVSHMEM >= 3.7" (and nothing else).
// TestCorruptedOutputsFail proves their checks can fail; TestOnePE and
// TestTwoPEsOnOneGPU run them beside every other row.
func TestFloatAtomics(t *testing.T) {
	for _, pes := range []string{"1", "2"} {
		t.Run(pes+"pe", func(t *testing.T) {
			p, _ := shim(t)
			f := nvshbench(t, 3*time.Minute, "run", "--shim", p, "--pes-per-gpu", pes, "--iters", "1000", "--samples", "3", "--warmup", "1",
				"--timeout", "30s", "rma/atomic/float_*", "latency/atomic/float_*")
			ok, waived := 0, 0
			for _, pt := range f.Points {
				if !strings.Contains(pt.ID, "/float_") {
					continue
				}
				if want := map[string]int64{"f64": 8, "f32": 4, "f16": 2}[pt.Params.DType]; pt.Params.Size != want {
					t.Errorf("%s: dtype %q at %d bytes", pt.ID, pt.Params.DType, pt.Params.Size)
				}
				switch pt.Status {
				case record.StatusOK:
					ok++
					if !pt.Verify.Checked || !pt.Verify.OK {
						t.Errorf("%s %s: verify %+v", pt.ID, pt.Params.Key(), pt.Verify)
					}
				case record.StatusWaived:
					waived++
					// only by a shim whose headers are older than 3.7
					older := false
					if m := builtAgainst.FindStringSubmatch(pt.Reason); m != nil {
						major, _ := strconv.Atoi(m[1])
						minor, _ := strconv.Atoi(m[2])
						older = major < 3 || major == 3 && minor < 7
					}
					if !strings.Contains(pt.Reason, "needs NVSHMEM >= 3.7") || !older {
						t.Errorf("%s %s: waived: %s", pt.ID, pt.Params.Key(), pt.Reason)
					}
				default:
					t.Errorf("%s %s: %s %s verify=%+v", pt.ID, pt.Params.Key(), pt.Status, pt.Reason, pt.Verify)
				}
			}
			// two operations × (rate + round trip) × three types
			if ok+waived != 12 || ok != 0 && waived != 0 {
				t.Errorf("%d float points ran verified and %d were waived: want 12, all of one kind", ok, waived)
			}
			t.Logf("NVSHMEM %s: %d float points ran verified, %d waived", f.Header.NVSHMEM, ok, waived)
		})
	}
}
