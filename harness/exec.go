package harness

import (
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"unsafe"

	"github.com/nvshbench/nvshbench/cuda"
	"github.com/nvshbench/nvshbench/record"
)

// decision is a point's plan on this PE as the PEs compare it: the point,
// the waiver or the exact shim arguments.
func decision(index int, id, waiver string, a cuda.Args) uint64 {
	h := fnv.New64a()
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], uint64(index))
	h.Write(b[:])
	h.Write([]byte(id))
	h.Write([]byte{0})
	h.Write([]byte(waiver))
	if waiver == "" {
		h.Write(unsafe.Slice((*byte)(unsafe.Pointer(&a)), unsafe.Sizeof(a)))
	}
	return h.Sum64()
}

// RunPoint runs one point on this PE. Every PE of the job calls it for
// every point, in plan order: the PEs first agree on what the point is
// (run with these arguments, or waive it for this reason), so a point that
// one PE would skip is never started by another; a disagreement is
// reported by every PE as an error and nobody starts the point.
func RunPoint(lib cuda.Lib, e *Env, b *Benchmark, p record.Params) (Outcome, error) {
	me := GPUOf(&e.Job.PEs[e.Job.Rank], e.Job.Rank)
	o := Outcome{PE: e.Job.Rank, GPU: me.Index, Node: me.Host, L2Bytes: e.Job.L2Bytes()}
	o.Effective = PathName(e.Job.Widest(), e.Config)
	pairWhy := ""
	if !b.AllPEs {
		var pr Pair
		pr, pairWhy = e.Job.PairFor(matrixPath(e.Job.Placement(), e.Config.Path, p), p.Pair)
		e.pair = &pr
		if pairWhy == "" {
			o.Pair = RecordPair(e.Job.Placement(), pr)
			o.Effective = PathName(e.PairPath(), e.Config)
		}
	}
	a, waiver := b.Args(e, p)
	if n := matrixIters(b.ID, p, e.Config); n > 0 && a.Iters == 0 {
		a.Iters = int32(n)
	}
	if pairWhy != "" { // without its pair nothing of the point means anything
		waiver = pairWhy
	}
	if why := e.envWaiver(b.ID, p.Env); why != "" && waiver == "" {
		waiver = why
	}
	if e.Config.CorruptChecks {
		a.Corrupt = 1
	}
	if op, ok := cuda.LookupOp(a.OpString()); ok && (op.Has(cuda.TraitRoundTrip) || op.Kind() == "moe") {
		o.Floor = ServedCache // a round trip served where its result lands (MoE: one, after its bytes)
		if op.Has(cuda.TraitChase) {
			o.Floor = ServedMemory // a chase's hops come from memory (its chain is flushed from the caches)
		}
	}
	mine := decision(e.Index, b.ID, waiver, a)
	all, err := lib.Agree(int64(mine))
	if err != nil {
		return o, fmt.Errorf("agreeing on the point: %w", err)
	}
	for q, v := range all {
		if uint64(v) != mine {
			what := "run it"
			if waiver != "" {
				what = "waive it (" + waiver + ")"
			}
			return o, fmt.Errorf("the PEs disagree on this point (PE %d decided otherwise than PE %d, which would %s): not started on any PE", q, e.Job.Rank, what)
		}
	}
	if waiver != "" {
		o.Waived = waiver
		return o, nil
	}
	stop := sampling(e.Sensor, e.Job.Rank, SensorPeriod)
	t, r, err := lib.Run(a)
	o.Clock = stop()
	if err := o.Absorb(t, r, err, b.Values); err != nil || o.Waived != "" {
		return o, err
	}
	if b.Describe != nil {
		b.Describe(e, p, a, r, &o)
	}
	return o, nil
}
