package model

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"

	comparefiles "github.com/nvshbench/nvshbench/compare"
	"github.com/nvshbench/nvshbench/record"
	"github.com/nvshbench/nvshbench/record/moe"
	"github.com/nvshbench/nvshbench/record/persm"
)

// Series is one curve: a benchmark with its parameters but the size, on
// one file's PEs, launch mode and path. MoE series run over the tokens per
// rank (their parameters but the token count): one fixed cost and one cost
// per token.
type Series struct {
	File   string // the file's label (record.Labels: its own, else the path ending that tells it apart)
	file   int    // the file's position among the inputs
	Axis   Axis   // what it is fitted over: bytes, or (MoE) tokens per rank
	ID     string
	Params string // Params.KeyWithoutSize
	PEs    int
	Launch string // per-op, fused, "" for RMA and latency, "unknown" for an older file's collectives
	Path   string // effective path
	Obs    []Obs
	// Cached are the sizes whose buffers a cache may have answered (in the
	// fit: a round trip or a link's latency is measured there too, but the
	// bandwidth they give is not a link figure).
	Cached map[int64]bool
	// Dropped says which sizes were left out and why (above the link,
	// failed, an older file's second timer).
	Dropped []string
	// Doubted are the sizes left out whose point was measured but is no
	// figure (above the link), and why: no verdict rests on such a size.
	Doubted map[int64]string
	// Ceiling and CopyRef are the path's physical link and the best copy
	// reference of the same run (bytes/s, 0 unknown); Floor the in-run chase
	// of the path (s) and Launch0 the run's empty-kernel launch (s).
	Ceiling, CopyRef, Floor, Launch0 float64
	// OneRank says why the series is no collective but NCCL's one-rank
	// copy (record.Point.OneRankCopy; "": it is what it names).
	OneRank string
	point   *record.Point  // one of its points: parameters for grouping
	header  *record.Header // its file's: the GPUs, the setup
}

// Key names the series (its file by position: two files never share one).
func (s *Series) Key() string {
	return strconv.Itoa(s.file) + "|" + s.ID + "|" + s.Params + "|" + s.Path
}

// X is an observation's coordinate on the series' axis (bytes or tokens).
func (s *Series) X(o Obs) float64 { return s.Axis.Of(o) }

// Coord is the coordinate of a size, or (MoE) of a token count, on the
// series' axis: what At and the crossover solver take.
func (s *Series) Coord(size int64, tokens int) float64 {
	return s.Axis.Of(Obs{Size: size, Tokens: tokens})
}

// Fit is a series and its segments, or why it has none.
type Fit struct {
	*Series
	Segments []Segment
	NoFit    string
}

// Last is the segment of the largest sizes (nil without a fit).
func (f *Fit) Last() *Segment {
	if len(f.Segments) == 0 {
		return nil
	}
	return &f.Segments[len(f.Segments)-1]
}

// First is the segment of the smallest sizes.
func (f *Fit) First() *Segment {
	if len(f.Segments) == 0 {
		return nil
	}
	return &f.Segments[0]
}

// At is the fitted time at x on the series' axis (bytes, or tokens for
// MoE: Coord): the segment covering it, the nearest one outside the fitted
// range; NaN without a fit.
func (f *Fit) At(x float64) float64 {
	if len(f.Segments) == 0 || f.NoFit != "" {
		return math.NaN()
	}
	for _, s := range f.Segments {
		if x <= float64(s.To) {
			return s.At(x)
		}
	}
	return f.Segments[len(f.Segments)-1].At(x)
}

// launchOf is the point's launch mode for grouping: collectives of an older
// file have none recorded ("unknown").
func launchOf(p *record.Point) string {
	if p.Params.Launch != "" {
		return p.Params.Launch
	}
	if strings.HasPrefix(p.ID, "collectives/") || strings.HasPrefix(p.ID, "moe/") {
		return "unknown"
	}
	return ""
}

// Collect builds the series of the files (the limit and floor benchmarks
// apart: they are references, not series to fit; an older file's in-kernel
// timer rows too: a spread, never a figure). A series never spans two
// files.
func Collect(files []*record.File) []*Series {
	byKey := map[string]*Series{}
	var order []string
	labels := record.Labels(files)
	for fi, f := range files {
		launch0 := 0.0
		for i := range f.Points {
			p := &f.Points[i]
			if p.ID == "latency/launch" && p.Status == record.StatusOK {
				if m, ok := p.Metric(record.MetricLatency); ok && (launch0 == 0 || m.Median < launch0) {
					launch0 = m.Median
				}
			}
		}
		for i := range f.Points {
			p := &f.Points[i]
			if strings.HasPrefix(p.ID, "limit/") || p.ID == "latency/launch" || p.Params.Size <= 0 || p.Status == record.StatusWaived || p.Has(record.FlagSecondTimer) {
				continue
			}
			if r, ok := persm.ParseID(p.ID); ok && r.TimesCompute {
				continue // a compute kernel's time: its size is the transfer's beside it, no message of its own
			}
			pes := p.Params.PEs
			if pes == 0 {
				pes = f.Header.PEs
			}
			params, axis := p.Params, Bytes
			tk, _ := strconv.Atoi(p.Params.Extra[moe.ExtraTokens])
			at := fmt.Sprintf("%d B", p.Params.Size)
			if strings.HasPrefix(p.ID, moe.Suite+"/") {
				// One series over the token counts: a fixed cost and a cost
				// per token.
				params.Extra = maps.Clone(params.Extra)
				delete(params.Extra, moe.ExtraTokens)
				axis, at = Tokens, fmt.Sprintf("%d tokens", tk)
			}
			s := &Series{File: labels[fi], file: fi, Axis: axis, ID: p.ID, Params: params.KeyWithoutSize(), PEs: pes, Launch: launchOf(p), Path: p.Effective,
				Cached: map[int64]bool{}, Doubted: map[int64]string{}, Launch0: launch0, OneRank: p.OneRankCopy(pes), point: p, header: &f.Header}
			if old, ok := byKey[s.Key()]; ok {
				s = old
			} else {
				byKey[s.Key()] = s
				order = append(order, s.Key())
			}
			switch {
			case p.Status != record.StatusOK:
				s.Dropped = append(s.Dropped, fmt.Sprintf("%s: %s", at, p.Status))
				continue
			case !p.Drawn():
				s.Dropped = append(s.Dropped, fmt.Sprintf("%s: %s", at, strings.Join(p.Flags, ", ")))
				s.Doubted[p.Params.Size] = p.Unjudged()
				continue
			case len(p.Samples) == 0:
				s.Dropped = append(s.Dropped, fmt.Sprintf("%s: no samples", at))
				continue
			}
			t := record.Summarize(p.Samples, record.UnitSeconds).Median
			s.Obs = append(s.Obs, Obs{Size: p.Params.Size, Time: t, Samples: p.Samples, Tokens: tk, Unjudged: p.Unjudged()})
			if p.Has(record.FlagCacheServed) || p.L2Resident {
				s.Cached[p.Params.Size] = true
			}
			if p.Ceiling != nil && p.Ceiling.Value > 0 {
				s.Ceiling = p.Ceiling.Value
			}
			if p.Limit != nil && p.Limit.Value > 0 {
				s.CopyRef = p.Limit.Value
			}
			if p.Floor != nil && p.Floor.Value > 0 {
				s.Floor = p.Floor.Value
			}
		}
	}
	out := make([]*Series, 0, len(order))
	for _, k := range order {
		s := byKey[k]
		sort.Slice(s.Obs, func(i, j int) bool { return s.X(s.Obs[i]) < s.X(s.Obs[j]) })
		out = append(out, s)
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].file != out[j].file {
			return out[i].file < out[j].file
		}
		return out[i].ID+" "+out[i].Params < out[j].ID+" "+out[j].Params
	})
	return out
}

// FitAll fits every series.
func FitAll(series []*Series) []*Fit {
	out := make([]*Fit, 0, len(series))
	for _, s := range series {
		f := &Fit{Series: s}
		if len(s.Obs) == 0 && len(s.Dropped) > 0 {
			f.NoFit = "every size left out (" + s.Dropped[0] + ")"
		} else {
			f.Segments, f.NoFit = FitSeriesOver(s.Obs, s.Axis)
		}
		if f.NoFit == "" {
			f.NoFit = f.aboveData()
		}
		out = append(out, f)
	}
	return out
}

// aboveData says why the fit exceeds its data ("" where it does not): a
// segment whose line is faster than every memory-served size it covers,
// each beyond its fastest sample. A least-squares line cannot pass below
// every point it is fitted to; it does where the cache-served sizes of the
// segment pull it, and its B is then above anything the link was seen to
// do.
func (f *Fit) aboveData() string {
segments:
	for i := range f.Segments {
		seg := &f.Segments[i]
		var mem []Obs
		for _, o := range f.in(seg) {
			if f.Cached[o.Size] {
				continue
			}
			if len(o.Samples) == 0 || !(slices.Min(o.Samples) > seg.At(f.X(o))) {
				continue segments // a memory-served size on or below the line
			}
			mem = append(mem, o)
		}
		if len(mem) == 0 {
			continue
		}
		lo, hi := mem[0], mem[len(mem)-1]
		if f.Axis == Tokens {
			return fmt.Sprintf("above the data: the line of %s – %s is faster than every memory-served token count there (%s – %s), each beyond its fastest sample: the cache-served ones pull it",
				f.Axis.Format(float64(seg.From)), f.Axis.Format(float64(seg.To)), f.Axis.Format(f.X(lo)), f.Axis.Format(f.X(hi)))
		}
		rate := func(o Obs) float64 { return float64(o.Size) / o.Time / 1e9 }
		r0, r1 := rate(mem[0]), rate(mem[0])
		for _, o := range mem {
			r0, r1 = min(r0, rate(o)), max(r1, rate(o))
		}
		return fmt.Sprintf("above the data: B %.0f GB/s over %s – %s, beyond every memory-served size there and its fastest sample (%s – %s: %.0f – %.0f GB/s): the cache-served sizes pull the line",
			seg.Bandwidth()/1e9, humanBytes(float64(seg.From)), humanBytes(float64(seg.To)), humanBytes(float64(lo.Size)), humanBytes(float64(hi.Size)), r0, r1)
	}
	return ""
}

// in lists the observations a segment covers.
func (f *Fit) in(seg *Segment) []Obs {
	var out []Obs
	for _, o := range f.Obs {
		if x := f.X(o); x >= float64(seg.From) && x <= float64(seg.To) {
			out = append(out, o)
		}
	}
	return out
}

// CachedOnly reports whether every size of the segment was cache-served:
// its bandwidth is then not a link figure.
func (f *Fit) CachedOnly(seg *Segment) bool {
	for _, o := range f.in(seg) {
		if !f.Cached[o.Size] {
			return false
		}
	}
	return true
}

// MemoryB reports whether the segment's B comes from memory-served sizes:
// two or more of its sizes were not cache-served, and at the largest of
// them the size term is at least half of the fitted time (they measure the
// bandwidth, not the latency).
func (f *Fit) MemoryB(seg *Segment) bool {
	n, top := 0, 0.0
	for _, o := range f.in(seg) {
		if !f.Cached[o.Size] {
			n++
			top = max(top, f.X(o))
		}
	}
	return n >= 2 && top*seg.Beta >= 0.5*seg.At(top)
}

// Alpha is the series' α for a prediction: its first segment's, where that
// segment determines it; else why there is none.
func (f *Fit) Alpha() (float64, *Segment, string) {
	if f.NoFit != "" {
		return 0, nil, "no fit: " + f.NoFit
	}
	seg := f.First()
	if seg.NoAlpha != "" {
		return 0, seg, "no α: " + seg.NoAlpha
	}
	return seg.Alpha, seg, ""
}

// LinkB is the series' B for a prediction: its last segment's, where that
// segment determines B from memory-served sizes; else why there is none (a
// B only cache-served sizes give measures the cache: never used).
func (f *Fit) LinkB() (float64, *Segment, string) {
	if f.NoFit != "" {
		return 0, nil, "no fit: " + f.NoFit
	}
	seg := f.Last()
	switch {
	case seg.NoB != "":
		return 0, seg, "no B: " + seg.NoB
	case !f.MemoryB(seg):
		return 0, seg, fmt.Sprintf("B from cache-served sizes (%s – %s): not a link figure", f.Axis.Format(float64(seg.From)), f.Axis.Format(float64(seg.To)))
	}
	return seg.Bandwidth(), seg, ""
}

// SetupDiffs lists how the files' setups differ, by compare's check
// (compare.SetupDiffs: GPU, driver, CUDA, NVSHMEM, NCCL, PE count, the
// NVSHMEM_ / NCCL_ variables), the files named by their labels. Fits never
// span files; a prediction is set beside a measurement only from a file of
// the same setup but for its GPU and PE counts.
func SetupDiffs(files []*record.File) []string {
	if len(files) < 2 {
		return nil
	}
	labels := record.Labels(files)
	named := make([]*record.File, len(files))
	for i, f := range files {
		named[i] = &record.File{Name: f.Name, Header: f.Header}
		named[i].Header.Label = labels[i]
	}
	return comparefiles.SetupDiffs(named)
}

// setupOnly is a copy of the header without its GPU and PE counts: one GPU
// of each kind, no PE or node count.
func setupOnly(h *record.Header) record.Header {
	c := *h
	c.PEs, c.Nodes, c.GPUs = 0, 0, nil
	for _, g := range h.GPUs {
		if !slices.ContainsFunc(c.GPUs, func(x record.GPU) bool { return x.Name == g.Name }) {
			c.GPUs = append(c.GPUs, record.GPU{Name: g.Name})
		}
	}
	return c
}

// sameSetup reports whether two files' setups agree but for their GPU and
// PE counts.
func sameSetup(a, b *record.Header) bool {
	if a == b {
		return true
	}
	return len(comparefiles.SetupDiffs([]*record.File{{Header: setupOnly(a)}, {Header: setupOnly(b)}})) == 0
}
