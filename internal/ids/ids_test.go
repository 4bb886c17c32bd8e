package ids_test

import (
	"testing"

	"github.com/nvshbench/nvshbench/internal/ids"
)

// Every rule against the IDs that tell it from its neighbours.
func TestSelectors(t *testing.T) {
	cases := []struct {
		sel  ids.Selector
		take []string
		skip []string
	}{
		{ids.Selector{}, nil, []string{"", "rma/p"}},
		{ids.All(), []string{"", "rma/p", "moe/dispatch/x"}, nil},
		{ids.Exact("rma/p"), []string{"rma/p"}, []string{"rma/put", "rma/p-x", "rma/p/x", "rma"}},
		{ids.Under("rma"), []string{"rma/p", "rma/put/block"}, []string{"rma", "rma-x/p", "latency/rma/p"}},
		{ids.Under("rma/"), []string{"rma/p", "rma/put/block"}, []string{"rma", "rma-x/p"}},
		{ids.Under(""), nil, []string{"rma/p"}},
		{ids.Glob("rma/*/block"), []string{"rma/put/block", "rma/get/block"}, []string{"rma/nccl-lsa/put/block", "rma/put/warp"}},
		{ids.Glob("rma/put/block"), []string{"rma/put/block"}, []string{"rma/put/block-x", "rma/put"}},
		{ids.Glob("rma/["), nil, []string{"rma/[", "rma/p"}}, // malformed: takes nothing
		{ids.Variants("latency/p"), []string{"latency/p", "latency/p-x"}, []string{"latency/put/block", "latency/p/x", "latency/pingpong/p"}},
		{ids.Family("rma/put"), []string{"rma/put", "rma/put-signal/block", "rma/put/block"}, []string{"rma/p", "rma/putx", "rma"}},
		{ids.Any(), nil, []string{"rma/p"}},
		{ids.Any(ids.Exact("a"), ids.Under("b")), []string{"a", "b/c"}, []string{"b", "a/c"}},
		// run's arguments
		{ids.Pattern("rma"), []string{"rma", "rma/p", "rma/put/block"}, []string{"rma-x", "rmap"}},
		{ids.Pattern("rma/put"), []string{"rma/put", "rma/put/block"}, []string{"rma/put-signal/block"}},
		{ids.Pattern("rma/*/block"), []string{"rma/put/block"}, []string{"rma/put/warp"}},
		{ids.Pattern("rma/p"), []string{"rma/p"}, []string{"rma/put/block", "rma/p-x"}},
		// a chart's prefixes
		{ids.Chart(""), []string{"rma/p", "collectives/allreduce/nccl"}, nil},
		{ids.Chart("=collectives/allreduce/nccl"), []string{"collectives/allreduce/nccl"}, []string{"collectives/allreduce/nccl-ring"}},
		{ids.Chart("rma/put/"), []string{"rma/put/block"}, []string{"rma/put", "rma/put-signal/block"}},
		{ids.Chart("rma/p"), []string{"rma/p", "rma/p-x", "rma/p/x"}, []string{"rma/put/block"}},
	}
	for _, c := range cases {
		for _, id := range c.take {
			if !c.sel.Match(id) {
				t.Errorf("%v does not take %q", c.sel, id)
			}
		}
		for _, id := range c.skip {
			if c.sel.Match(id) {
				t.Errorf("%v takes %q", c.sel, id)
			}
		}
	}
}

func TestRest(t *testing.T) {
	cases := []struct {
		sel      ids.Selector
		id, want string
	}{
		{ids.Under("collectives/allreduce/"), "collectives/allreduce/nccl-ring", "nccl-ring"},
		{ids.Under("collectives/allreduce"), "collectives/allreduce/nccl", "nccl"},
		{ids.Under("collectives/allreduce/"), "collectives/allgather/nccl", ""},
		{ids.Exact("rma/p"), "rma/p", ""},
		{ids.Family("moe/dispatch"), "moe/dispatch/x", ""},
	}
	for _, c := range cases {
		if got := c.sel.Rest(c.id); got != c.want {
			t.Errorf("%v.Rest(%q) = %q, want %q", c.sel, c.id, got, c.want)
		}
	}
}

func TestString(t *testing.T) {
	if got := ids.Pattern("rma").String(); got != `Any(Exact("rma"), Under("rma/"), Glob("rma"))` {
		t.Error(got)
	}
}
