package record

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"path"

	"github.com/nvshbench/nvshbench/internal/ids"
)

// Reference is a set of published numbers to put beside measured ones.
type Reference struct {
	Source struct {
		Title   string `json:"title"`
		Authors string `json:"authors"`
		Arxiv   string `json:"arxiv"`
		Date    string `json:"date"`
		Note    string `json:"note"`
	} `json:"source"`
	Platform string             `json:"platform"`
	Limits   map[string]float64 `json:"limits"`
	Rows     []RefRow           `json:"rows"`
}

// RefRow is one published number and the rule that selects the measured
// points it is compared with.
type RefRow struct {
	Table  string   `json:"table"` // rma, latency, allreduce, allreduce-latency
	Key    string   `json:"key"`
	Label  string   `json:"label"`
	Op     string   `json:"op,omitempty"`
	Path   string   `json:"path,omitempty"`  // p2p, ibgda, proxy
	Scope  string   `json:"scope,omitempty"` // intra, inter (collectives)
	Metric string   `json:"metric"`
	Value  float64  `json:"value"`           // base units (a range's low end)
	Hi     float64  `json:"hi,omitempty"`    // a range's high end (agg "range")
	Bound  string   `json:"bound,omitempty"` // "lt": the paper gives an upper bound
	Size   int64    `json:"size,omitempty"`  // only points of this size (0: any)
	IDs    []string `json:"ids"`             // path.Match patterns of benchmark IDs
	Agg    string   `json:"agg"`             // max or min of the medians, or their range over sizes up to MaxSize
	Needs  string   `json:"needs,omitempty"` // hardware the row needs
	// NoPaper marks a measured-only row (no published number; Value is 0).
	NoPaper bool `json:"nopaper,omitempty"`
	// Mode restricts the row to points of this mode (e.g. nbi: completion
	// latency as the paper measures it, not a blocking put's local return).
	Mode string `json:"mode,omitempty"`
	// CTAs and Threads restrict the row to the paper's launch shape (0:
	// any); the report shows the best launch of the sweep beside it.
	CTAs    int `json:"ctas,omitempty"`
	Threads int `json:"threads,omitempty"`
	// Launch restricts the row to points of that launch mode (collectives:
	// per-op, as the paper's, one launch per operation in a CUDA graph).
	Launch string `json:"launch,omitempty"`
	// MaxSize bounds a range row's sizes (the small-message regime).
	MaxSize int64 `json:"max_size,omitempty"`
	// PaperPEs is the GPU count behind the published number (0: any), and
	// PaperNeeds what its setup had that a run may lack: a run that differs
	// shows its value, not comparable, never a ratio.
	PaperPEs   int    `json:"paper_pes,omitempty"`
	PaperNeeds string `json:"paper_needs,omitempty"`
	Note       string `json:"note,omitempty"`
}

// MatchesID reports whether a benchmark ID is selected by the row: its IDs
// are globs (ids.Glob).
func (r *RefRow) MatchesID(id string) bool {
	for _, pat := range r.IDs {
		if ids.Glob(pat).Match(id) {
			return true
		}
	}
	return false
}

//go:embed data/paper.json
var paperJSON []byte

// Paper returns the published numbers of "Demystifying NVSHMEM".
func Paper() *Reference {
	r, err := ParseReference(paperJSON)
	if err != nil {
		panic("embedded reference is invalid: " + err.Error()) // caught by tests
	}
	return r
}

// ParseReference parses and checks a reference file.
func ParseReference(b []byte) (*Reference, error) {
	var r Reference
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	for i, row := range r.Rows {
		k := row.Table + "/" + row.Key
		switch {
		case seen[k]:
			return nil, fmt.Errorf("row %d: duplicate %s", i, k)
		case row.Value <= 0 && !row.NoPaper:
			return nil, fmt.Errorf("row %s: value must be positive", k)
		case len(row.IDs) == 0:
			return nil, fmt.Errorf("row %s: no ids", k)
		case row.Agg != "max" && row.Agg != "min" && row.Agg != "range":
			return nil, fmt.Errorf("row %s: agg must be max, min or range", k)
		case row.Agg == "range" && (row.MaxSize <= 0 || (!row.NoPaper && row.Hi < row.Value)):
			return nil, fmt.Errorf("row %s: a range needs max_size and hi ≥ value", k)
		}
		for _, p := range row.IDs {
			if _, err := path.Match(p, ""); err != nil {
				return nil, fmt.Errorf("row %s: bad pattern %q", k, p)
			}
		}
		seen[k] = true
	}
	return &r, nil
}
