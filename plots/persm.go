package plots

import (
	"fmt"
	"slices"

	"github.com/nvshbench/nvshbench/internal/units"
	"github.com/nvshbench/nvshbench/record"
	"github.com/nvshbench/nvshbench/record/persm"
)

// perSMCharts: bytes per SM (issue 32), GB/s to the peer against the SM
// budget, a curve per mechanism (and file), at the largest size beyond L2
// and at 1 MiB and 64 KiB where measured; the copy engine (cudaMemcpyAsync)
// as a dashed line across, and beside each compute kernel on every SM as a
// dotted one, labelled as its rows' ce_sm_free shows its SM use (ceMark).
func perSMCharts(files []*record.File) []Spec {
	names := record.Labels(files)
	var sizes []int64
	curves := make([][]persm.Curve, len(files)) // each file's, once
	ins := make([][]persm.Interference, len(files))
	for fi, f := range files {
		cs := persm.Curves(f)
		curves[fi] = cs
		ins[fi] = persm.Interferences(f)
		for _, c := range cs {
			if (c.Size == 1<<20 || c.Size == 64<<10) && !slices.Contains(sizes, c.Size) {
				sizes = append(sizes, c.Size)
			}
		}
		if g := persm.GuideSize(cs); g > 0 && !slices.Contains(sizes, g) {
			sizes = append(sizes, g)
		}
	}
	slices.Sort(sizes)
	var out []Spec
	for _, size := range sizes {
		s := Spec{Name: fmt.Sprintf("persm-%d", size), XLabel: "SM budget (one CTA of 512 threads an SM)", YLabel: "GB/s (1e9 B/s)", XUnit: "SMs",
			Title: fmt.Sprintf("Bytes per SM: GB/s to the peer vs SMs used, %s", units.Bytes(size)), Band: "min–max over samples"}
		cached := false
		for fi, f := range files {
			if f.Header.Synthetic {
				s.Notes = appendOnce(s.Notes, "SYNTHETIC data ("+names[fi]+"), not a measurement")
			}
			prefix := ""
			if len(files) > 1 {
				prefix = names[fi] + ": "
			}
			for _, c := range curves[fi] {
				if c.Size != size {
					continue
				}
				cached = cached || c.Cached
				if !c.SMs {
					alone, name, note := ceMark(c.SM)
					if v, ok := c.At(0); ok {
						s.Marks = append(s.Marks, Mark{Label: prefix + fmt.Sprintf("%s: %s GB/s", alone, units.Value(v/1e9)), Y: v / 1e9, Series: -1,
							Color: "#000000", Dash: []float64{6, 3}})
					}
					for _, in := range ins[fi] {
						if in.Mechanism == c.Mechanism && in.Size == size && in.Beside > 0 {
							s.Marks = append(s.Marks, Mark{Label: prefix + fmt.Sprintf("%s beside %s on every SM: %s GB/s", name, in.Compute, units.Value(in.Beside/1e9)),
								Y: in.Beside / 1e9, Series: -1, Color: "#555555", Dash: []float64{2, 3}})
						}
					}
					if note != "" {
						s.Notes = appendOnce(s.Notes, prefix+note)
					}
					continue
				}
				ser := Series{ID: persm.Row{Mechanism: c.Mechanism}.ID(), Label: prefix + c.Mechanism}
				for i, b := range c.Budgets {
					ser.Points = append(ser.Points, Point{X: float64(b), Y: c.BW[i] / 1e9, Lo: c.Lo[i] / 1e9, Hi: c.Hi[i] / 1e9})
				}
				s.Series = append(s.Series, ser)
			}
		}
		if len(s.Series) == 0 {
			continue
		}
		for i := range s.Series {
			s.Series[i].Color, s.Series[i].Dash, s.Series[i].Shape = Style(i)
		}
		if cached {
			s.Notes = append(s.Notes, "the working set fits in L2 at this size: the cache's figures, not the link's")
		}
		out = append(out, s)
	}
	return out
}

// ceMark is how the chart names the copy engine's lines, as its rows'
// ce_sm_free shows its SM use (persm.CESM): the line alone's label, the
// name beside a compute kernel, and a note ("" for none).
func ceMark(sm persm.CESM) (alone, name, note string) {
	switch sm {
	case persm.CENoSM:
		return "copy engine, no SM (checked)", "copy engine", ""
	case persm.CEOnSM:
		return "cudaMemcpyAsync, on SMs (the driver's kernel)", "cudaMemcpyAsync",
			"cudaMemcpyAsync (persm/ce) ran on SMs here (the driver's kernel: it waited for a free CTA slot), how many not counted: its lines are reference rates, at no SM budget"
	}
	return "copy engine (not checked for SM use)", "copy engine",
		"the copy engine's lines: not checked for SM use (a same-GPU cudaMemcpyAsync can be the driver's kernel, on SMs), so not shown to need no SM"
}
