package record_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/nvshbench/nvshbench/record"
)

// A schema-1 file's writer marked only buffers within one L2; read today,
// its bandwidths within twice the L2 are cache-served as a new file's are
// (a 64 MiB get on a 60 MiB L2 is no peak), its larger buffers and its
// round trips are not. A schema-2 file's marks are its writer's, under
// today's rule: kept as written.
func TestOlderFilesTakeTodaysCacheRule(t *testing.T) {
	const l2 = 60 << 20
	file := func(schema int) string {
		var b strings.Builder
		fmt.Fprintf(&b, `{"type":"header","schema":%d,"tool_version":"t","pes":2,"nodes":1,"gpus":[{"index":0,"name":"H200","l2_bytes":%d},{"index":1,"name":"H200","l2_bytes":%d}]}`+"\n", schema, l2, l2)
		for _, size := range []int64{32 << 20, 64 << 20, 120 << 20, 128 << 20} {
			resident := size <= l2 // the older writer's rule
			fmt.Fprintf(&b, `{"type":"point","id":"rma/get/block","params":{"size":%d,"ctas":32,"threads":256,"pes":2,"path":"p2p"},"status":"ok","effective":"p2p","timer":"events","iters":1,"bytes":%d,"samples_s":[0.001,0.001],"verify":{"checked":true,"ok":true},"working_set_bytes":%d,"l2_resident":%v}`+"\n", size, size, size, resident)
		}
		fmt.Fprintf(&b, `{"type":"point","id":"latency/g","params":{"size":256,"ctas":1,"threads":256,"pes":2,"path":"p2p"},"status":"ok","effective":"p2p","timer":"events","iters":1,"samples_s":[1e-6,1e-6],"metrics":{"latency":{"unit":"s","median":1e-6,"min":1e-6,"max":1e-6,"p10":1e-6,"p90":1e-6,"p99":1e-6,"n":2}},"verify":{"checked":true,"ok":true},"working_set_bytes":%d}`+"\n", 64<<20)
		return b.String()
	}
	for _, c := range []struct {
		schema int
		cached map[int64]bool
	}{
		{1, map[int64]bool{32 << 20: true, 64 << 20: true, 120 << 20: true, 128 << 20: false}},
		{2, map[int64]bool{32 << 20: true, 64 << 20: false, 120 << 20: false, 128 << 20: false}},
	} {
		f, err := record.Read(strings.NewReader(file(c.schema)), "x.jsonl")
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range f.Points {
			if p.ID == "latency/g" {
				if p.L2Resident || p.Has(record.FlagCacheServed) || !p.Figure() {
					t.Errorf("schema %d: a round trip is one wherever its data sits: flags %v", c.schema, p.Flags)
				}
				continue
			}
			want := c.cached[p.Params.Size]
			if p.L2Resident != want || p.Has(record.FlagCacheServed) != want || p.Figure() == want {
				t.Errorf("schema %d, %d MiB: l2_resident %v, flags %v; want cache-served %v", c.schema, p.Params.Size>>20, p.L2Resident, p.Flags, want)
			}
		}
	}
}
