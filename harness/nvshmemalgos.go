package harness

import (
	"fmt"
	"strings"
)

// NVSHMEMAlgo is one of NVSHMEM's own collective algorithms, forced through
// the variable NVSHMEM reads at nvshmem_init. Read in NVSHMEM's source
// (github.com/NVIDIA/nvshmem, 3.5.1; the numbering is 3.4.5's too, per
// ../shared/docs/moe-models-choices.md §6): the variables in
// src/include/host/env/env_defs.h (REDUCE_ALGO, FCOLLECT_ALGO and
// REDUCESCATTER_ALGO hidden: NVSHMEM_INFO_HIDDEN=1 lists them), copied into
// the device state by src/host/coll/cpu_coll.cpp, and chosen per call by
// the device collectives (src/include/non_abi/device/coll/reduce.cuh,
// fcollect.cuh, broadcast.cuh, reducescatter.cuh), which the device-side
// and on-stream forms share.
type NVSHMEMAlgo struct {
	Name       string // the flag's and params.extra.nvshmem_algo's name
	Collective string // our collective (cuda/shim/coll_<name>.cuh)
	Var, Value string // NVSHMEM's variable and the value that forces it
	// NVLS: needs NVLink multicast (a team with NVLS resources); without it
	// NVSHMEM quietly runs another algorithm, so the point is waived.
	NVLS bool
	// MaxBlock: the largest bytes per PE block where the forced algorithm
	// is what runs or is safe (0: any). Above it NVSHMEM falls back to
	// another algorithm, or would overrun a scratch buffer sized for its
	// default choice.
	MaxBlock int64
	Desc     string
}

// NVSHMEMAlgos are the algorithms --nvshmem-algos can force, by collective.
// Left out: FCOLLECT_ALGO=6 (LL128: its scratch is sized by
// NVSHMEM_FCOLLECT_LL128_THRESHOLD, 0 by default and set to 0 by NVSHMEM on
// platforms it deems unfit, so forcing it overruns the scratch), and
// BCAST_ALGO=2 (hierarchical: needs a block distribution of PEs over nodes,
// else NVSHMEM runs put-to-all).
var NVSHMEMAlgos = []NVSHMEMAlgo{
	// reduce.cuh: 0/1/2 default (NVLS one-shot up to REDUCE_NVLS_THRESHOLD
	// elements where the team has NVLS, else two-shot, else the non-NVLS
	// reduction: fcollect-based, recursive exchange or segmented); 3 and 4
	// are legalised back to the non-NVLS reduction without NVLS.
	{Name: "nvls-twoshot", Collective: "allreduce", Var: "NVSHMEM_REDUCE_ALGO", Value: "3", NVLS: true,
		Desc: "NVLS two-shot (reduce-scatter + all-gather through multicast)"},
	{Name: "nvls-oneshot", Collective: "allreduce", Var: "NVSHMEM_REDUCE_ALGO", Value: "4", NVLS: true,
		Desc: "NVLS one-shot (multimem ld_reduce of the whole buffer)"},
	// fcollect.cuh: 0 default (LL8 up to FCOLLECT_LL_THRESHOLD, 2 KiB a PE;
	// NVLS where the team has it; else P2P one-shot). LL8's scratch is
	// sized by FCOLLECT_LL_THRESHOLD (team_internal.cpp,
	// get_fcollect_psync_len_per_team): forced only up to it.
	{Name: "ll8", Collective: "allgather", Var: "NVSHMEM_FCOLLECT_ALGO", Value: "1", MaxBlock: 2048,
		Desc: "LL (8-byte flag-and-data) all-push, up to the default FCOLLECT_LL_THRESHOLD of 2 KiB a PE (its scratch's size)"},
	{Name: "oneshot", Collective: "allgather", Var: "NVSHMEM_FCOLLECT_ALGO", Value: "2",
		Desc: "P2P one-shot all-push (direct stores where load/store reaches every PE)"},
	{Name: "nvls", Collective: "allgather", Var: "NVSHMEM_FCOLLECT_ALGO", Value: "3", NVLS: true,
		Desc: "NVLS one-shot (multicast stores)"},
	// broadcast.cuh: 0 default (LL tree up to 16 KiB, else the flat non-LL
	// tree); 3 and 4 need 2 × size within NVSHMEMI_BCAST_SYNC_SIZE longs
	// (2 211 840 B: up to 1 MiB of powers of two), else NVSHMEM runs 1.
	{Name: "put2all", Collective: "broadcast", Var: "NVSHMEM_BCAST_ALGO", Value: "1",
		Desc: "the root puts to every PE, then a barrier"},
	{Name: "tree-ll", Collective: "broadcast", Var: "NVSHMEM_BCAST_ALGO", Value: "3", MaxBlock: 1 << 20,
		Desc: "k-ary tree with LL packets (BCAST_TREE_KVAL)"},
	{Name: "flat-tree", Collective: "broadcast", Var: "NVSHMEM_BCAST_ALGO", Value: "4", MaxBlock: 1 << 20,
		Desc: "flat non-LL tree (the root's n−1 children)"},
	// reducescatter.cuh: 0 default (NVLS one-shot where the team has it,
	// else P2P one-shot); 3 falls back to 2 without NVLS.
	{Name: "oneshot", Collective: "reducescatter", Var: "NVSHMEM_REDUCESCATTER_ALGO", Value: "2",
		Desc: "P2P one-shot all-push (the default without NVLS)"},
	{Name: "nvls", Collective: "reducescatter", Var: "NVSHMEM_REDUCESCATTER_ALGO", Value: "3", NVLS: true,
		Desc: "NVLS one-shot"},
}

// AlgoFlag names an algorithm as --nvshmem-algos takes it: collective:name.
func (a NVSHMEMAlgo) AlgoFlag() string { return a.Collective + ":" + a.Name }

// Env is the point environment that forces it.
func (a NVSHMEMAlgo) Env() map[string]string { return map[string]string{a.Var: a.Value} }

// AlgoFlags lists every value --nvshmem-algos takes.
func AlgoFlags() []string {
	out := []string{"all"}
	for _, a := range NVSHMEMAlgos {
		out = append(out, a.AlgoFlag(), a.Collective)
	}
	return unique(out)
}

// ForcedAlgos are the algorithms of collective coll the configuration asks
// to force (--nvshmem-algos: collective:name, a collective's name for all
// of its algorithms, or all).
func (c *Config) ForcedAlgos(coll string) []NVSHMEMAlgo {
	var out []NVSHMEMAlgo
	for _, a := range NVSHMEMAlgos {
		if a.Collective != coll {
			continue
		}
		for _, v := range c.NVSHMEMAlgos {
			if v == "all" || v == a.Collective || v == a.AlgoFlag() {
				out = append(out, a)
				break
			}
		}
	}
	return out
}

// validateAlgos checks --nvshmem-algos.
func (c *Config) validateAlgos() error {
	ok := map[string]bool{}
	for _, v := range AlgoFlags() {
		ok[v] = true
	}
	for _, v := range c.NVSHMEMAlgos {
		if !ok[v] {
			return fmt.Errorf("--nvshmem-algos %q: want all, a collective (allreduce, allgather, broadcast, reducescatter) or one of %s",
				v, strings.Join(AlgoFlags()[1:], ", "))
		}
	}
	return nil
}
