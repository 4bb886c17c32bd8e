package model

import (
	"fmt"
	"math"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/nvshbench/nvshbench/record"
)

// Series is one curve: a benchmark with its parameters but the size, on
// one file's PEs, launch mode and path.
type Series struct {
	File   string // the file's label, else its name
	file   int    // the file's position among the inputs
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
	// Ceiling and CopyRef are the path's physical link and the best copy
	// reference of the same run (bytes/s, 0 unknown); Floor the in-run chase
	// of the path (s) and Launch0 the run's empty-kernel launch (s).
	Ceiling, CopyRef, Floor, Launch0 float64
	point                            *record.Point // one of its points: parameters for grouping
}

// Key names the series.
func (s *Series) Key() string { return s.File + "|" + s.ID + "|" + s.Params + "|" + s.Path }

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

// At is the fitted time at size (NaN without a fit): the segment covering
// it, the nearest one outside the fitted range.
func (f *Fit) At(size float64) float64 {
	if len(f.Segments) == 0 || f.NoFit != "" {
		return math.NaN()
	}
	for _, s := range f.Segments {
		if size <= float64(s.To) {
			return s.At(size)
		}
	}
	return f.Segments[len(f.Segments)-1].At(size)
}

// FileLabel names a file in tables: its label, else its base name (a
// table has no room for the folder).
func FileLabel(f *record.File) string {
	if f.Header.Label != "" {
		return f.Header.Label
	}
	return filepath.Base(f.Name)
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
// apart: they are references, not series to fit).
func Collect(files []*record.File) []*Series {
	byKey := map[string]*Series{}
	var order []string
	for fi, f := range files {
		label := FileLabel(f)
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
			if strings.HasPrefix(p.ID, "limit/") || p.ID == "latency/launch" || p.Params.Size <= 0 || p.Status == record.StatusWaived {
				continue
			}
			pes := p.Params.PEs
			if pes == 0 {
				pes = f.Header.PEs
			}
			s := &Series{File: label, file: fi, ID: p.ID, Params: p.Params.KeyWithoutSize(), PEs: pes, Launch: launchOf(p), Path: p.Effective,
				Cached: map[int64]bool{}, Launch0: launch0, point: p}
			if old, ok := byKey[s.Key()]; ok {
				s = old
			} else {
				byKey[s.Key()] = s
				order = append(order, s.Key())
			}
			switch {
			case p.Status != record.StatusOK:
				s.Dropped = append(s.Dropped, fmt.Sprintf("%d B: %s", p.Params.Size, p.Status))
				continue
			case !p.Drawn():
				s.Dropped = append(s.Dropped, fmt.Sprintf("%d B: %s", p.Params.Size, strings.Join(p.Flags, ", ")))
				continue
			case len(p.Samples) == 0:
				s.Dropped = append(s.Dropped, fmt.Sprintf("%d B: no samples", p.Params.Size))
				continue
			}
			t := record.Summarize(p.Samples, record.UnitSeconds).Median
			tk, _ := strconv.Atoi(p.Params.Extra["tokens"])
			s.Obs = append(s.Obs, Obs{Size: p.Params.Size, Time: t, Samples: p.Samples, Tokens: tk})
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
		sort.Slice(s.Obs, func(i, j int) bool { return s.Obs[i].Size < s.Obs[j].Size })
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
			f.Segments, f.NoFit = FitSeries(s.Obs)
		}
		out = append(out, f)
	}
	return out
}

// CachedOnly reports whether every size of the segment was cache-served:
// its bandwidth is then not a link figure.
func (f *Fit) CachedOnly(seg *Segment) bool {
	for _, o := range f.Obs {
		if o.Size >= seg.From && o.Size <= seg.To && !f.Cached[o.Size] {
			return false
		}
	}
	return true
}
