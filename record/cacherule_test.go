package record_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/nvshbench/nvshbench/record"
)

// One cache rule for every file and family: a bandwidth whose working set
// is within twice the L2 is cache-served, whatever its writer marked — a
// schema-1 file's writer marked only buffers within one L2 (a 64 MiB get on
// a 60 MiB L2), and a schema-2 writer exempted MoE dispatch and combine
// (14–112 MiB of tokens read back from the L2). Larger buffers and round
// trips are not cache-served.
func TestEveryFileTakesTodaysCacheRule(t *testing.T) {
	const l2 = 60 << 20
	file := func(schema int) string {
		var b strings.Builder
		fmt.Fprintf(&b, `{"type":"header","schema":%d,"tool_version":"t","pes":1,"nodes":1,"gpus":[{"index":0,"name":"H200","l2_bytes":%d}]}`+"\n", schema, l2)
		for _, size := range []int64{32 << 20, 64 << 20, 120 << 20, 128 << 20} {
			resident := size <= l2 // the older writer's rule
			fmt.Fprintf(&b, `{"type":"point","id":"rma/get/block","params":{"size":%d,"ctas":32,"threads":256,"pes":1,"path":"p2p"},"status":"ok","effective":"local","timer":"events","iters":1,"bytes":%d,"samples_s":[0.001,0.001],"verify":{"checked":true,"ok":true},"working_set_bytes":%d,"l2_resident":%v}`+"\n", size, size, size, resident)
		}
		// MoE as the exempting writer left it: one PE (no link crossed: no
		// link metric), no l2_resident, a working set of its tokens.
		for _, size := range []int64{14 << 20, 112 << 20, 224 << 20} {
			fmt.Fprintf(&b, `{"type":"point","id":"moe/dispatch/nvshmem","params":{"size":%d,"op":"dispatch","pes":1,"path":"p2p","dtype":"bf16","launch":"per-op","extra":{"tokens":"128"}},"status":"ok","effective":"local","timer":"events","iters":100,"bytes":%d,"samples_s":[1e-4,1e-4],"metrics":{"bandwidth":{"unit":"B/s","median":1e11,"min":1e11,"max":1e11,"p10":1e11,"p90":1e11,"p99":1e11,"n":2},"latency":{"unit":"s","median":1e-4,"min":1e-4,"max":1e-4,"p10":1e-4,"p90":1e-4,"p99":1e-4,"n":2}},"verify":{"checked":true,"ok":true},"working_set_bytes":%d}`+"\n", size, size, size)
		}
		fmt.Fprintf(&b, `{"type":"point","id":"latency/g","params":{"size":256,"ctas":1,"threads":256,"pes":1,"path":"p2p"},"status":"ok","effective":"local","timer":"events","iters":1,"samples_s":[1e-6,1e-6],"metrics":{"latency":{"unit":"s","median":1e-6,"min":1e-6,"max":1e-6,"p10":1e-6,"p90":1e-6,"p99":1e-6,"n":2}},"verify":{"checked":true,"ok":true},"working_set_bytes":%d}`+"\n", 64<<20)
		return b.String()
	}
	cached := map[string]map[int64]bool{
		"rma/get/block":        {32 << 20: true, 64 << 20: true, 120 << 20: true, 128 << 20: false},
		"moe/dispatch/nvshmem": {14 << 20: true, 112 << 20: true, 224 << 20: false},
	}
	for _, schema := range []int{1, 2} {
		f, err := record.Read(strings.NewReader(file(schema)), "x.jsonl")
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range f.Points {
			if p.ID == "latency/g" {
				if p.L2Resident || p.Has(record.FlagCacheServed) || !p.Figure() {
					t.Errorf("schema %d: a round trip is one wherever its data sits: flags %v", schema, p.Flags)
				}
				continue
			}
			want := cached[p.ID][p.Params.Size]
			if p.L2Resident != want || p.Has(record.FlagCacheServed) != want || p.Figure() == want {
				t.Errorf("schema %d, %s at %d MiB: l2_resident %v, flags %v; want cache-served %v", schema, p.ID, p.Params.Size>>20, p.L2Resident, p.Flags, want)
			}
		}
	}
}
