package verdict

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"os"
	"strings"

	"github.com/nvshbench/nvshbench/internal/lists"
	"github.com/nvshbench/nvshbench/record"
)

// Bands are reference bands: what a row reaches on a GPU kind over a link
// class, each with its source (a committed run, a published figure).
type Bands struct {
	Source string `json:"source"` // where the file's bands come from, in words
	Bands  []Band `json:"bands"`
}

// Band is one row's expected figure on one GPU kind and link class: a
// bandwidth's Min (bytes/s) or a round trip's Max (seconds); a figure
// below FailShare of it fails.
type Band struct {
	GPU   string `json:"gpu"`   // the GPU's name, as the header's GPUs say it (NVIDIA H200)
	Class string `json:"class"` // nvlink, pcie, network, memory (Class)
	// Link is the link the band was measured over, where known: nvlink
	// (direct NVLinks) or nvswitch (NVLinks through switches), as the
	// points' ceilings name it. A band that names one holds only pairs over
	// that link; an nvlink band that names none (its run's links not
	// known) holds both, but a figure outside it WARNs at most: a switch
	// hop is not a fault (LinkOf).
	Link   string  `json:"link,omitempty"`
	ID     string  `json:"id"` // the benchmark
	Dir    string  `json:"dir,omitempty"`
	Size   int64   `json:"size"`          // the message size it holds for
	Min    float64 `json:"min,omitempty"` // a bandwidth: bytes/s
	Max    float64 `json:"max,omitempty"` // a round trip: seconds
	Source string  `json:"source"`
}

//go:embed bands.json
var shipped []byte

// Shipped are the bands that ship in the binary (bands.json, derived from
// the committed runs under results/: TestShippedBandsComeFromTheirRuns).
func Shipped() *Bands {
	b, err := ParseBands(shipped, "the shipped bands")
	if err != nil {
		panic(err)
	}
	return b
}

// DefaultBands are the bands a run of this header is judged by when none
// are given: the shipped ones where they are for its GPU kind, else none
// (check, --judge, report --matrix and plot --matrix judge alike).
func DefaultBands(h record.Header) *Bands {
	if b := Shipped(); b.Fits(h) == nil {
		return b
	}
	return nil
}

// ReadBands reads a band file; an error is one line that says what to fix.
func ReadBands(path string) (*Bands, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("--bands %s: %v", path, err)
	}
	return ParseBands(data, "--bands "+path)
}

// ParseBands reads bands from JSON (name says where from in errors).
func ParseBands(data []byte, name string) (*Bands, error) {
	var b Bands
	dec := json.NewDecoder(strings.NewReader(string(data)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&b); err != nil {
		return nil, fmt.Errorf("%s: not a band file (%v); write {\"source\": ..., \"bands\": [{\"gpu\", \"class\", \"id\", \"size\", \"min\" or \"max\", \"source\"}]}", name, err)
	}
	if len(b.Bands) == 0 {
		return nil, fmt.Errorf("%s: holds no band; give at least one, or leave --bands out", name)
	}
	for i, x := range b.Bands {
		switch {
		case x.GPU == "" || x.ID == "" || x.Class == "" || x.Source == "":
			return nil, fmt.Errorf("%s: band %d lacks its gpu, class, id or source (each band names where it comes from)", name, i)
		case x.Link != "" && x.Link != record.LinkNVLink && x.Link != record.LinkNVSwitch && x.Link != record.LinkPCIe:
			return nil, fmt.Errorf("%s: band %d (%s): link %q: want %s, %s or %s (or none: not known)", name, i, x.ID, x.Link, record.LinkNVLink, record.LinkNVSwitch, record.LinkPCIe)
		case (x.Min > 0) == (x.Max > 0) || x.Min < 0 || x.Max < 0:
			return nil, fmt.Errorf("%s: band %d (%s): give a positive min (a bandwidth, bytes/s) or max (a round trip, seconds), one of them", name, i, x.ID)
		}
	}
	return &b, nil
}

// Fits says why the bands cannot judge a run of these GPUs (nil if they
// can): none is for its GPU kind.
func (b *Bands) Fits(h record.Header) error {
	kinds := map[string]bool{}
	for _, g := range h.GPUs {
		kinds[g.Name] = true
	}
	var theirs []string
	for _, x := range b.Bands {
		if kinds[x.GPU] {
			return nil
		}
		theirs = append(theirs, x.GPU)
	}
	var ours []string
	for k := range kinds {
		ours = append(ours, k)
	}
	if len(ours) == 0 {
		return fmt.Errorf("the results file names no GPU: bands per GPU kind cannot judge it; leave --bands out")
	}
	return fmt.Errorf("the bands (%s) are for %s, and this run's GPUs are %s: give a band file for %s, or leave --bands out",
		b.Source, strings.Join(lists.Unique(theirs), ", "), strings.Join(ours, ", "), ours[0])
}

// For is the band of a point of a GPU kind and class (nil: none).
func (b *Bands) For(gpu, class string, p *record.Point) *Band {
	dir := p.Params.Dir
	if dir == "uni" {
		dir = ""
	}
	for i := range b.Bands {
		x := &b.Bands[i]
		if x.GPU == gpu && x.Class == class && x.ID == p.ID && x.Size == p.Params.Size && x.Dir == dir && (x.Link == "" || x.Link == LinkOf(p)) {
			return x
		}
	}
	return nil
}

// LinkOf is the link a point's pair crossed, as its ceiling names it
// (record.LinkNVLink, LinkNVSwitch, ...; "" not known).
func LinkOf(p *record.Point) string {
	if p.Ceiling == nil {
		return ""
	}
	return strings.TrimPrefix(p.Ceiling.ID, "link/")
}

// Unsure: the band's class spans links it does not say which of it was
// measured over (nvlink: direct or through switches), so a figure outside
// it WARNs at most.
func (x *Band) Unsure() bool { return x.Class == "nvlink" && x.Link == "" }

// Share is a figure's share of the band (below 1: worse than it).
func (x *Band) Share(v float64) float64 {
	if x.Min > 0 {
		return v / x.Min
	}
	return x.Max / v
}

// String is the band in words, with its source.
func (x *Band) String(unit string) string {
	over := x.Class
	if x.Link != "" && x.Link != x.Class {
		over += " (" + x.Link + ")"
	}
	what := fmt.Sprintf("at most %s", Show(x.Max, unit))
	if x.Min > 0 {
		what = fmt.Sprintf("at least %s", Show(x.Min, unit))
	}
	s := fmt.Sprintf("reference: %s on %s over %s (%s)", what, x.GPU, over, x.Source)
	if x.Unsure() {
		s += "; its link (direct NVLinks or through NVSwitches) not known: WARN at most"
	}
	return s
}

// DerivedRows are the rows a derived band holds: the matrix's NVSHMEM
// bandwidth at its default size and launch (32 × 256) and its round trips
// at 8 bytes.
var DerivedRows = []struct {
	ID   string
	Size int64
}{{"rma/put/block", 256 << 20}, {"rma/get/block", 256 << 20}, {"latency/put/block", 8}, {"latency/get/block", 8}}

// Derive makes bands from a committed run (name: its path in the
// repository): for each DerivedRows row, its median figure over the run's
// ok points of that row, size and the matrix's launch (32 × 256,
// unidirectional, non-blocking) between two GPUs of a node, as the band
// of its GPU kind over its class.
func Derive(f *record.File, name string) (*Bands, error) {
	out := &Bands{Source: "derived from " + name + " by verdict.Derive (go test ./verdict -update)"}
	gpu := ""
	if len(f.Header.GPUs) > 0 {
		gpu = f.Header.GPUs[0].Name
	}
	for _, r := range DerivedRows {
		var vals []float64
		class, unit := "", ""
		links := map[string]bool{}
		for i := range f.Points {
			p := &f.Points[i]
			if p.ID != r.ID || p.Status != record.StatusOK || p.Params.Size != r.Size || p.Params.Mode == "blocking" || p.Params.Dir == "bidir" {
				continue
			}
			if p.Params.CTAs != 0 && p.ID[:4] == "rma/" && (p.Params.CTAs != 32 || p.Params.Threads != 256) {
				continue
			}
			if p.Pair != nil && p.Pair.Kind != record.PairSameNode {
				continue
			}
			v, u, _, ok := figure(p)
			if !ok {
				continue
			}
			vals, unit = append(vals, v), u
			links[LinkOf(p)] = true
			if c := Class(p); c != "" {
				class = c
			}
		}
		if len(vals) == 0 {
			return nil, fmt.Errorf("%s: no ok point of %s at %d bytes to derive a band from", name, r.ID, r.Size)
		}
		if class == "" {
			class = "nvlink" // two GPUs of a node: NV18 (the run's topology)
		}
		m := median(vals)
		b := Band{GPU: gpu, Class: class, ID: r.ID, Size: r.Size,
			Link:   oneLink(links),
			Source: fmt.Sprintf("%s: the median of %d point(s), %s", name, len(vals), Show(m, unit))}
		if unit == record.UnitBytesPerSec {
			b.Min = m
		} else {
			b.Max = m
		}
		out.Bands = append(out.Bands, b)
	}
	return out, nil
}

// oneLink is the one link every point crossed ("" if they did not say, or
// crossed several).
func oneLink(links map[string]bool) string {
	if len(links) != 1 {
		return ""
	}
	for l := range links {
		return l
	}
	return ""
}
