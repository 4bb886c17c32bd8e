package persm

import (
	"fmt"
	"slices"
	"sort"
	"strconv"

	"github.com/nvshbench/nvshbench/record"
)

// StageOffsetRow is a staged mechanism's stage-offset row at one size and
// budget: its GB/s with its shared-memory stages at each offset past a
// 128-byte line (persm/<mechanism>/stage-offset).
type StageOffsetRow struct {
	Mechanism string
	Size      int64
	Budget    int
	Offsets   []int     // ascending
	BW        []float64 // median B/s at each offset
}

// Full is the share of the aligned stages' rate (offset 0) that an offset
// must reach to count as full rate in the alignment rule.
const Full = 0.9

// StageOffsetRows are the file's stage-offset rows, by mechanism, size and
// budget.
func StageOffsetRows(f *record.File) []StageOffsetRow {
	idx := map[string]*StageOffsetRow{}
	var out []*StageOffsetRow
	for i := range f.Points {
		p := &f.Points[i]
		r, ok := ParseID(p.ID)
		if !ok || !r.StageOffset || !perSMOK(p) {
			continue
		}
		bw, ok := bwOf(p)
		o, err := strconv.Atoi(p.Params.Extra[ExtraStageOffset])
		if !ok || err != nil {
			continue
		}
		k := fmt.Sprint(r.Mechanism, " ", p.Params.Size, " ", Budget(p))
		s := idx[k]
		if s == nil {
			s = &StageOffsetRow{Mechanism: r.Mechanism, Size: p.Params.Size, Budget: Budget(p)}
			idx[k] = s
			out = append(out, s)
		}
		if j := slices.Index(s.Offsets, o); j >= 0 {
			s.BW[j] = max(s.BW[j], bw) // a point twice (a resumed run): its best
			continue
		}
		s.Offsets, s.BW = append(s.Offsets, o), append(s.BW, bw)
	}
	res := make([]StageOffsetRow, 0, len(out))
	for _, s := range out {
		ord := ascending(s.Offsets)
		r := StageOffsetRow{Mechanism: s.Mechanism, Size: s.Size, Budget: s.Budget}
		for _, i := range ord {
			r.Offsets, r.BW = append(r.Offsets, s.Offsets[i]), append(r.BW, s.BW[i])
		}
		res = append(res, r)
	}
	sort.SliceStable(res, func(a, b int) bool {
		x, y := res[a], res[b]
		if x.Mechanism != y.Mechanism {
			return order(x.Mechanism) < order(y.Mechanism)
		}
		if x.Size != y.Size {
			return x.Size < y.Size
		}
		return x.Budget < y.Budget
	})
	return res
}

// Share is the rate at offset o against the stages on their line (offset
// 0); false where either is not measured.
func (s StageOffsetRow) Share(o int) (float64, bool) {
	i, z := slices.Index(s.Offsets, o), slices.Index(s.Offsets, 0)
	if i < 0 || z < 0 || s.BW[z] <= 0 {
		return 0, false
	}
	return s.BW[i] / s.BW[z], true
}

// Rule is the alignment the row says the stages need: the smallest power
// of two from 16 to 128 bytes such that every measured offset that is a
// multiple of it runs at Full of offset 0's rate or more (128: only the
// line itself does). ok false where offset 0 is not measured or no other
// offset is.
func (s StageOffsetRow) Rule() (align int, ok bool) {
	if slices.Index(s.Offsets, 0) < 0 || len(s.Offsets) < 2 {
		return 0, false
	}
	for a := 16; a < 128; a *= 2 {
		full := true
		for _, o := range s.Offsets {
			if sh, _ := s.Share(o); o%a == 0 && sh < Full {
				full = false
			}
		}
		if full {
			return a, true
		}
	}
	return 128, true
}

// Slowest is the lowest share of offset 0's rate among the offsets off
// the rule's alignment (1 where none is off it).
func (s StageOffsetRow) Slowest(align int) float64 {
	low := 1.0
	for _, o := range s.Offsets {
		if sh, ok := s.Share(o); ok && o%align != 0 {
			low = min(low, sh)
		}
	}
	return low
}
