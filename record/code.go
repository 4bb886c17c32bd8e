package record

import "strings"

// Libraries is a set of the libraries whose code a benchmark's timed
// operation runs: what a version change of NVSHMEM or NCCL can move.
type Libraries uint8

// The libraries, and CUDAOnly: a declaration that the operation runs
// neither (CUDA and nvshbench's own kernels alone: a copy reference, a
// floor, the empty kernel, cudaMemcpyAsync, a compute kernel, stores through
// a pointer a library mapped before the timed launches).
const (
	CUDAOnly Libraries = 1 << iota
	NVSHMEM
	NCCL
)

// Has reports whether the set holds every library of x.
func (l Libraries) Has(x Libraries) bool { return x != 0 && l&x == x }

// Names are the libraries' names, NVSHMEM first (none for CUDAOnly).
func (l Libraries) Names() []string {
	var out []string
	if l.Has(NVSHMEM) {
		out = append(out, "NVSHMEM")
	}
	if l.Has(NCCL) {
		out = append(out, "NCCL")
	}
	return out
}

// Code is what a benchmark's timed operation runs: facts neither its ID nor
// its numbers say, declared with the benchmark (its registration) and given
// by the reader to each of its points (Reader.Code, Point.Code).
type Code struct {
	// Calls are the libraries whose code the timed operation runs.
	Calls Libraries
	// Collective is the library whose own host collective the operation
	// is, run by that library's algorithm (ncclAllReduce, NVSHMEM's
	// on-stream call; 0 for nvshbench's kernels). NCCL runs none for one
	// rank: it copies the buffer, no collective (Point.OneRankCopy).
	Collective Libraries
}

// EffectiveNCCLViaNVSHMEM is the effective path of NVSHMEM's on-stream
// collective where NVSHMEM handed it to NCCL (it does when NCCL loads and
// NVLS is off): NCCL's own collective ran.
const EffectiveNCCLViaNVSHMEM = "nccl-via-nvshmem"

// OneRankCopy says why a point of a job of pes PEs is no collective but
// NCCL's one-rank copy ("" where it is its collective, or its code is not
// declared): for one rank NCCL runs no algorithm, whichever is forced
// (src/enqueue.cc: ncclLaunchOneRank copies the buffer), whether the
// benchmark calls NCCL's collective or NVSHMEM handed its on-stream call
// to NCCL. Such a point is never compared with implementations that run
// their collective.
func (p *Point) OneRankCopy(pes int) string {
	if pes != 1 || p.Code == nil {
		return ""
	}
	if p.Code.Collective == NCCL || (p.Code.Collective == NVSHMEM && p.Effective == EffectiveNCCLViaNVSHMEM) {
		return "NCCL's one-rank copy (for one rank NCCL runs no collective: ncclLaunchOneRank copies the buffer)"
	}
	return ""
}

// Invalid says what is wrong with a declaration ("" where nothing is):
// Calls declares the libraries, or CUDAOnly alone; a Collective is one of
// the libraries called.
func (c Code) Invalid() string {
	var why []string
	switch {
	case c.Calls == 0:
		why = append(why, "Calls declares no library (CUDAOnly where it runs neither)")
	case c.Calls.Has(CUDAOnly) && c.Calls != CUDAOnly:
		why = append(why, "Calls holds CUDAOnly and a library")
	}
	if c.Collective != 0 && (c.Collective.Has(CUDAOnly) || len(c.Collective.Names()) != 1 || !c.Calls.Has(c.Collective)) {
		why = append(why, "Collective is not one library its Calls hold")
	}
	return strings.Join(why, "; ")
}
