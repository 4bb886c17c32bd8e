package collectives

import (
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/nvshbench/nvshbench/cuda"
	"github.com/nvshbench/nvshbench/cuda/shim"
	"github.com/nvshbench/nvshbench/harness"
)

// The shim's collectives (one file and one line each) and this suite's
// registrations are the same set: a collective added to the shim without
// its registration here, or a registration left behind, fails here.
func TestEveryCollectiveOfTheShimIsRegistered(t *testing.T) {
	var shim, suite []string
	for _, c := range cuda.Collectives() {
		shim = append(shim, c.Base)
	}
	for name := range registrations {
		suite = append(suite, name)
	}
	sort.Strings(shim)
	sort.Strings(suite)
	if len(shim) < 5 || !slices.Equal(shim, suite) {
		t.Errorf("the shim's collectives %v, this suite's registrations %v", shim, suite)
	}
	for _, c := range collectives() {
		if len(c.impls) == 0 || c.busFactor == nil || c.paramOp == "" || c.title == "" {
			t.Errorf("%s: registration incomplete: %+v", c.Base, c.registration)
		}
		if _, ok := harness.Lookup("collectives/" + c.Base + "/nccl"); ok == (c.noNCCL != "") {
			t.Errorf("%s: collectives/%s/nccl registered %v, yet its registration says NCCL has none: %q", c.Base, c.Base, ok, c.noNCCL)
		}
	}
}

// The fake runs every collective's benchmarks as the shim's table says
// (payload, blocks): each benchmark's points run or are waived, each
// collective runs somewhere, verified; a corrupted point of a collective
// that moves data reports mismatches.
func TestTheFakeRunsEveryCollective(t *testing.T) {
	f := cuda.NewFake()
	if err := f.Init(cuda.InitUID, 0, 1, cuda.FakeUID, 0, 1<<30); err != nil {
		t.Fatal(err)
	}
	defer f.Finalize()
	cj, err := f.Job()
	if err != nil {
		t.Fatal(err)
	}
	job := &harness.Job{Job: cj, Caps: []int64{harness.CapNIC | harness.CapMulticast}}
	cfg := harness.DefaultConfig()
	cfg.Verify = true
	for _, c := range collectives() {
		ran := 0
		for _, im := range c.impls {
			id := "collectives/" + c.Base + "/" + im.name
			b, ok := harness.Lookup(id)
			if !ok {
				t.Errorf("%s is not registered", id)
				continue
			}
			pts := b.Points(&cfg)
			if len(pts) == 0 {
				t.Errorf("%s: no points", id)
				continue
			}
			a, why := b.Args(&harness.Env{Job: job, Config: &cfg}, pts[len(pts)-1])
			if why != "" {
				continue
			}
			if a.OpString() != c.Name || a.Verify != 1 {
				t.Errorf("%s: asks for %s (verify %d), want %s", id, a.OpString(), a.Verify, c.Name)
			}
			_, r, err := f.Run(a)
			if err != nil {
				if ce, ok := err.(*cuda.Error); ok && ce.Unreachable() {
					continue
				}
				t.Errorf("%s: %v", id, err)
				continue
			}
			ran++
			if moves := r.Bytes == a.Size; moves != c.data() || r.Errors != 0 {
				t.Errorf("%s: %d bytes of %d, %d errors", id, r.Bytes, a.Size, r.Errors)
			}
			a.Corrupt = 1
			if _, r, err = f.Run(a); err != nil || (r.Errors > 0) != c.data() {
				t.Errorf("%s corrupted: %v, %d errors (moves data %v)", id, err, r.Errors, c.data())
			}
		}
		if ran == 0 {
			t.Errorf("%s: no benchmark ran on the fake", c.Base)
		}
	}
}

// A collective of blocks (its entry's T_BLOCKS, its file's counts rule) is
// waived where its elements do not divide by the PEs; the others run.
func TestBlocksComeFromTheShim(t *testing.T) {
	info, _ := cuda.NewFake().DeviceInfo(0)
	job := &harness.Job{Job: cuda.Job{PEs: []cuda.Info{info, info, info}, Paths: [][]int{{0, 1, 1}, {1, 0, 1}, {1, 1, 0}}}}
	for q := range job.PEs {
		job.PEs[q].MyPE, job.PEs[q].Device = int32(q), int32(q)
	}
	cfg := harness.DefaultConfig()
	n := 0
	for _, c := range collectives() {
		if !c.data() {
			continue
		}
		b, _ := harness.Lookup("collectives/" + c.Base + "/nvshmem-stream")
		p := b.Points(&cfg)[0]
		p.Size, p.DType = 4096, "float" // 1024 elements: not a multiple of 3 PEs
		_, why := b.Args(&harness.Env{Job: job, Config: &cfg}, p)
		if waived := strings.Contains(why, "do not divide by 3 PEs"); waived != c.Has(cuda.TraitBlocks) {
			t.Errorf("%s: waived %q, its entry states T_BLOCKS %v", c.Base, why, c.Has(cuda.TraitBlocks))
		}
		if c.Has(cuda.TraitBlocks) {
			n++
		}
	}
	if n < 2 {
		t.Errorf("%d collectives of blocks", n)
	}
}

// A collective has its nccl-ce row exactly where its shim file names the
// entry point of NCCL's copy-engine path (nccl_ce, newer_nccl.cuh), and the
// row's description names that entry point.
func TestCopyEngineRowsFollowTheShim(t *testing.T) {
	re := regexp.MustCompile(`static\s+constexpr\s+const\s+char\s+\*nccl_ce\s*=\s*"(\w+)"`)
	files := shim.Files()
	n := 0
	for _, c := range collectives() {
		m := re.FindStringSubmatch(files["coll_"+c.Base+".cuh"])
		b, ok := harness.Lookup("collectives/" + c.Base + "/nccl-ce")
		if ok != (m != nil) {
			t.Errorf("%s: nccl-ce registered %v, its shim file names an nccl_ce entry point %v", c.Base, ok, m != nil)
			continue
		}
		if ok {
			n++
			if !strings.Contains(b.Desc, m[1]) || !strings.Contains(b.Desc, "NCCL_CTA_POLICY_ZERO") {
				t.Errorf("%s: %q does not name %s and NCCL_CTA_POLICY_ZERO", b.ID, b.Desc, m[1])
			}
		}
	}
	if n < 2 {
		t.Errorf("%d collectives with a copy-engine row, want AllGather and AlltoAll at least", n)
	}
}
