// Package compare matches the points of two or more results files on
// benchmark ID + parameters and tests whether each changed, with benchstat's
// semantics (golang.org/x/perf/benchmath): median with a distribution-free
// confidence interval, Mann–Whitney U test, "~" when not significant. On
// top of them: a change within one step of the grid a quantized timer's
// samples sit on is "~" too (resolution.go); the gate's threshold is a
// slowdown in time per operation for every metric (Slowdown); files of
// results schema 1 are matched as schema 2 writes the same measurement, and
// rows whose meaning changed with the schema are said, not gated
// (schema.go). It reads results only.
package compare

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"sort"
	"strings"

	"golang.org/x/perf/benchmath"

	"github.com/nvshbench/nvshbench/internal/lists"
	"github.com/nvshbench/nvshbench/internal/table"
	"github.com/nvshbench/nvshbench/internal/units"
	"github.com/nvshbench/nvshbench/record"
	"github.com/nvshbench/nvshbench/report"
)

// Options for a comparison.
type Options struct {
	Alpha      float64 // significance level (default 0.05)
	Confidence float64 // CI level (default 0.95)
	// Threshold: a significant slowdown beyond this fraction is a
	// regression. It is in time per operation for every metric (see
	// Slowdown): 1 = twice as slow, a latency twice as long or a bandwidth
	// of half the base's alike.
	Threshold float64
	// AllowFailed: a candidate point that errored, failed verification or
	// is missing while the base measured it is shown but does not fail
	// the gate.
	AllowFailed bool
}

// Row is one matched point compared across files.
type Row struct {
	ID     string
	Key    string // params
	Params record.Params
	Metric string
	Unit   string
	Base   benchmath.Summary
	Others []benchmath.Summary
	Cmp    []benchmath.Comparison
	Deltas []string // "+1.03%", "~", "?"
	// Slowdown, per other file: how much longer an operation takes than in
	// the base (Slowdown of the medians; > 0 slower, 1 = twice as slow).
	Slowdown []float64
	// Step, per other file: the step of the timer's grid that both runs'
	// samples sit on (seconds, TimerStep; 0 where they show none).
	// Unresolved: the medians' times differ by no more than that step, so
	// the change is "~" whatever the rank test says.
	Step       []float64
	Unresolved []bool
	Regress    []bool
	// Failed says, per other file, why it has no measurement of a point
	// the base measured ("" when it has one): missing, waived, error,
	// failed-verification.
	Failed []string
	// SchemaChanged says, per other file, why the point means something
	// else in that file's results schema, or has no counterpart there
	// because of the schema ("" when neither): shown, never a regression
	// or a failure.
	SchemaChanged []string
	// Library says, per other file, which version change of the libraries
	// this point's code runs in comes with it ("NVSHMEM 3.4.5 → 3.8.0";
	// "" when neither of its libraries changed): the attribution of a
	// moved row.
	Library []string
}

// unchangedCode marks a moved row whose code runs no library whose version
// changed between the two files; undeclaredCode one whose benchmark this
// binary declares nothing of (an ID it does not know).
const (
	unchangedCode  = "no changed library"
	undeclaredCode = "not attributed: its code undeclared"
)

// libraryChange is one library whose version differs between the base and
// another file.
type libraryChange struct {
	name, from, to string
}

func (c libraryChange) String() string { return c.name + " " + c.from + " → " + c.to }

// libraryChanges: NVSHMEM's and NCCL's version changes from base to h.
func libraryChanges(base, h *record.Header) []libraryChange {
	var out []libraryChange
	if base.NVSHMEM != h.NVSHMEM {
		out = append(out, libraryChange{"NVSHMEM", base.NVSHMEM, h.NVSHMEM})
	}
	if base.NCCL != h.NCCL {
		out = append(out, libraryChange{"NCCL", base.NCCL, h.NCCL})
	}
	return out
}

// attribute fills row.Library for each other file from what the row's
// benchmark declares its timed operation runs (code: record.Code, nil
// where the reader knew no declaration): a version change only of a
// library it calls.
func attribute(row *Row, code *record.Code, changes [][]libraryChange) {
	for _, cs := range changes {
		var parts []string
		for _, c := range cs {
			if code != nil && slices.Contains(code.Calls.Names(), c.name) {
				parts = append(parts, c.String())
			}
		}
		if code == nil && len(cs) > 0 {
			parts = append(parts, undeclaredCode)
		}
		row.Library = append(row.Library, strings.Join(parts, ", "))
	}
}

// Result of a comparison.
type Result struct {
	Files     []string
	Rows      []Row
	Unmatched []string // points present in only some files
	// CandidateOnly counts the points of Unmatched that only a candidate
	// measured (not shown).
	CandidateOnly int
	Warnings      []string // setup differences, sample-size warnings
	// Libraries: per other file, its NVSHMEM and NCCL version changes from
	// the base ("NCCL 2.28.9 → 2.32.3"; none where the same).
	Libraries   [][]string
	Notes       []string // how rows were matched (said under the table)
	Regressions int
	// Failures counts the candidate points that errored or failed
	// verification, and the base's measured points a candidate lacks.
	Failures int
}

// Compare compares files[1:] against files[0].
func Compare(files []*record.File, opt Options) (*Result, error) {
	if len(files) < 2 {
		return nil, fmt.Errorf("compare needs at least two files")
	}
	if opt.Alpha == 0 {
		opt.Alpha = 0.05
	}
	if opt.Confidence == 0 {
		opt.Confidence = 0.95
	}
	for _, f := range files {
		if len(f.Duplicates) > 0 {
			return nil, fmt.Errorf("%s holds %d point(s) measured twice (first: %s): compare will not pick one; split the runs into their own files", f.Name, len(f.Duplicates), f.Duplicates[0])
		}
	}
	c := &comparison{files: files, opt: opt, res: &Result{}, statWarn: map[string][]string{}, schemaRows: make([]int, len(files))}
	c.thr = benchmath.DefaultThresholds
	c.thr.CompareAlpha = opt.Alpha
	for _, f := range files {
		c.res.Files = append(c.res.Files, label(f))
	}
	c.res.Warnings = append(c.res.Warnings, SetupDiffs(files)...)
	c.libraries()
	if err := c.index(); err != nil {
		return nil, err
	}
	keys := slices.Sorted(maps.Keys(c.points[0]))
	for _, k := range keys {
		if err := c.row(k); err != nil {
			return nil, err
		}
	}
	for i := 1; i < len(files); i++ {
		c.candidateOnly(i)
	}
	res := c.res
	sort.Strings(res.Unmatched)
	sort.SliceStable(res.Rows, func(i, j int) bool {
		a, b := &res.Rows[i], &res.Rows[j]
		if a.ID != b.ID {
			return a.ID < b.ID
		}
		if a.Params.KeyWithoutSize() != b.Params.KeyWithoutSize() {
			return a.Params.KeyWithoutSize() < b.Params.KeyWithoutSize()
		}
		return a.Params.Size < b.Params.Size
	})
	matched := 0
	for i := range res.Rows {
		for _, o := range res.Rows[i].Others {
			if !math.IsNaN(res.Rows[i].Base.Center) && !math.IsNaN(o.Center) {
				matched++
				break
			}
		}
	}
	if matched == 0 {
		return nil, fmt.Errorf("no measured point of %s matches a measured point of the others (same benchmark ID and parameters)", res.Files[0])
	}
	c.statWarnings()
	return res, nil
}

// comparison is one Compare in progress: the files, every file's points by
// match key (measured, and not: error, failed verification, waived), and
// what the rows found so far.
type comparison struct {
	files          []*record.File
	opt            Options
	thr            benchmath.Thresholds
	res            *Result
	changes        [][]libraryChange // per other file: its library versions against the base's
	fused          map[string]bool   // collectives of schema-2 files that ran fused
	points, failed []map[string]*record.Point
	schemaRows     []int               // per other file: rows that changed with the schema
	statWarn       map[string][]string // the statistics' warnings, each with its points
}

func (c *comparison) schema(i int) int { return c.files[i].Header.Schema }

// libraries: each other file's NVSHMEM and NCCL version changes.
func (c *comparison) libraries() {
	for _, f := range c.files[1:] {
		cs := libraryChanges(&c.files[0].Header, &f.Header)
		c.changes = append(c.changes, cs)
		var names []string
		for _, ch := range cs {
			names = append(names, ch.String())
		}
		c.res.Libraries = append(c.res.Libraries, names)
	}
}

// index files every file's points by match key, as the newest schema among
// the files writes them (schema.go: an older file's collectives get the
// launch mode it implied).
func (c *comparison) index() error {
	measured, fused := map[string]bool{}, map[string]bool{} // collectives of schema-2 files
	for _, f := range c.files {
		if f.Header.Schema < 2 {
			continue
		}
		for _, p := range f.Points {
			if strings.HasPrefix(p.ID, "collectives/") {
				measured[p.ID] = true
				fused[p.ID] = fused[p.ID] || p.Params.Launch == record.LaunchFused
			}
		}
	}
	c.fused = fused
	c.points, c.failed = make([]map[string]*record.Point, len(c.files)), make([]map[string]*record.Point, len(c.files))
	inferred := false
	for i, f := range c.files {
		c.points[i], c.failed[i] = map[string]*record.Point{}, map[string]*record.Point{}
		for j := range f.Points {
			p := &f.Points[j]
			if f.Header.Schema < 2 {
				q := *p
				inferred = upgrade(&q, measured, fused) || inferred
				p = &q
			}
			k := p.MatchKey()
			if p.Status != record.StatusOK || len(p.Samples) == 0 {
				c.failed[i][k] = p
				continue
			}
			// Two measurements of one point are refused by the reader's
			// check (Duplicates); two that became one here are too.
			if first := c.points[i][k]; first != nil {
				return fmt.Errorf("%s holds two points that are one in schema %d (%s %s and %s %s): compare will not pick one", f.Name, record.SchemaVersion, first.ID, first.Params.Key(), f.Points[j].ID, f.Points[j].Params.Key())
			}
			c.points[i][k] = p
		}
	}
	if inferred {
		c.res.Notes = append(c.res.Notes, inferredLaunch)
	}
	return nil
}

// why says why a file has no measurement of a point (p: its record there).
func why(p *record.Point) string {
	if p == nil {
		return "missing"
	}
	if p.Status == record.StatusOK {
		return "no samples"
	}
	return string(p.Status) + ": " + p.Reason
}

// row compares the base's point k with every other file's (a cell each,
// measured or not) and adds the row.
func (c *comparison) row(k string) error {
	base := c.points[0][k]
	metric := record.PrimaryMetric(base)
	if metric == "" {
		return nil
	}
	bv, unit, err := record.SampleValues(base, metric)
	if err != nil {
		return nil
	}
	row := Row{ID: base.ID, Key: base.Params.Key(), Params: base.Params, Metric: metric, Unit: unit}
	bs := benchmath.NewSample(bv, &c.thr)
	row.Base = benchmath.AssumeNothing.Summary(bs, c.opt.Confidence)
	complete := true
	for i := 1; i < len(c.files); i++ {
		other, ok := c.points[i][k]
		if !ok {
			// Shown: the base measured it, this file did not (a schema's
			// change, or a failure).
			row.addNone()
			if w := gone(base, c.schema(0), c.schema(i), c.fused); w != "" && c.failed[i][k] == nil {
				row.Failed = append(row.Failed, "")
				row.SchemaChanged = append(row.SchemaChanged, w)
				c.schemaRows[i]++
				continue
			}
			complete = false
			row.Failed = append(row.Failed, why(c.failed[i][k]))
			row.SchemaChanged = append(row.SchemaChanged, "")
			if !c.opt.AllowFailed {
				c.res.Failures++
			}
			continue
		}
		row.Failed = append(row.Failed, "")
		if err := c.cell(&row, base, other, bs, i); err != nil {
			return err
		}
	}
	if !complete {
		c.res.Unmatched = append(c.res.Unmatched, k)
	}
	attribute(&row, base.Code, c.changes)
	c.res.Rows = append(c.res.Rows, row)
	return nil
}

// cell compares file i's point with the base's (bs: the base's sample) in
// row: the change, whether it is significant and beyond the timer's grid,
// and whether it is a regression.
func (c *comparison) cell(row *Row, base, other *record.Point, bs *benchmath.Sample, i int) error {
	ov, _, err := record.SampleValues(other, row.Metric)
	if err != nil {
		return err
	}
	os := benchmath.NewSample(ov, &c.thr)
	sum := benchmath.AssumeNothing.Summary(os, c.opt.Confidence)
	cmp := benchmath.AssumeNothing.Compare(bs, os)
	delta := cmp.FormatDelta(row.Base.Center, sum.Center)
	slow := Slowdown(row.Base.Center, sum.Center, row.Unit)
	significant := cmp.P < cmp.Alpha
	// A quantized timer: a difference of one step is below what it
	// resolves; a larger one counts less that step.
	step, unresolved, gate := TimerStep(base.Samples, other.Samples), false, slow
	if step > 0 {
		dt := math.Abs(median(other.Samples) - median(base.Samples))
		if dt <= step*(1+1e-6) {
			unresolved = true
		} else {
			gate = slow * (dt - step) / dt
		}
	}
	if significant && unresolved {
		delta = "~"
	}
	meaning := changed(base, c.schema(0), c.schema(i))
	if meaning != "" {
		c.schemaRows[i]++
	}
	regress := significant && !unresolved && meaning == "" && gate > c.opt.Threshold
	if regress {
		c.res.Regressions++
	}
	row.Others = append(row.Others, sum)
	row.Cmp = append(row.Cmp, cmp)
	row.Deltas = append(row.Deltas, delta)
	row.Slowdown = append(row.Slowdown, slow)
	row.Step = append(row.Step, step)
	row.Unresolved = append(row.Unresolved, unresolved)
	row.Regress = append(row.Regress, regress)
	row.SchemaChanged = append(row.SchemaChanged, meaning)
	for _, w := range append(append([]error{}, cmp.Warnings...), sum.Warnings...) {
		c.statWarn[w.Error()] = append(c.statWarn[w.Error()], row.ID+" "+row.Key)
	}
	if significant && !unresolved && record.ClocksDiffer(base.Clock, other.Clock) != "" {
		c.statWarn[clocksApart] = append(c.statWarn[clocksApart], row.ID+" "+row.Key)
	}
	return nil
}

// clocksApart is said of the changes between points whose GPUs ran at SM
// clocks more than record.ClockMargin apart.
var clocksApart = fmt.Sprintf("changed between points whose GPUs ran at SM clocks more than %.0f %% apart (their clock): the change may be the clock's, not the code's", 100*record.ClockMargin)

// addNone adds a file's cell with no measurement to the row (its Failed
// and SchemaChanged said by the caller).
func (r *Row) addNone() {
	r.Others = append(r.Others, benchmath.Summary{Center: math.NaN()})
	r.Cmp = append(r.Cmp, benchmath.Comparison{})
	r.Deltas = append(r.Deltas, "?")
	r.Slowdown = append(r.Slowdown, math.NaN())
	r.Step = append(r.Step, 0)
	r.Unresolved = append(r.Unresolved, false)
	r.Regress = append(r.Regress, false)
}

// candidateOnly: candidate i's points the base lacks (unmatched), and its
// errors and failed checks, which count even where the base has no
// measurement of the point; and the rows that changed with the schema.
func (c *comparison) candidateOnly(i int) {
	for k := range c.points[i] {
		if _, ok := c.points[0][k]; !ok {
			c.res.Unmatched = append(c.res.Unmatched, k)
			c.res.CandidateOnly++
		}
	}
	for k, p := range c.failed[i] {
		if _, retried := c.points[i][k]; retried {
			continue // an error a resumed run measured again
		}
		if _, ok := c.points[0][k]; ok || p.Status == record.StatusWaived {
			continue
		}
		row := Row{ID: p.ID, Key: p.Params.Key(), Params: p.Params, Base: benchmath.Summary{Center: math.NaN()}}
		for j := 1; j < len(c.files); j++ {
			row.addNone()
			row.SchemaChanged = append(row.SchemaChanged, "")
			f := ""
			if j == i {
				f = why(p)
			}
			row.Failed = append(row.Failed, f)
		}
		attribute(&row, p.Code, c.changes)
		c.res.Rows = append(c.res.Rows, row)
		if !c.opt.AllowFailed {
			c.res.Failures++
		}
	}
	if n := c.schemaRows[i]; n > 0 {
		c.res.addWarning(fmt.Sprintf("%s is results schema %d and %s schema %d: %d row(s) measure something else in one of them or exist in one only (\"schema changed\"): shown, not gated", c.res.Files[0], c.schema(0), c.res.Files[i], c.schema(i), n))
	}
}

// statWarnings adds the statistics' warnings (too few samples, ...) once
// each with a count, not once per point: a quick run would print hundreds.
func (c *comparison) statWarnings() {
	for _, w := range slices.Sorted(maps.Keys(c.statWarn)) {
		pts := c.statWarn[w]
		if len(pts) == 1 {
			c.res.addWarning(fmt.Sprintf("%s: %s", pts[0], w))
		} else {
			c.res.addWarning(fmt.Sprintf("%d points: %s (e.g. %s)", len(pts), w, pts[0]))
		}
	}
}

func (r *Result) addWarning(w string) {
	for _, x := range r.Warnings {
		if x == w {
			return
		}
	}
	r.Warnings = append(r.Warnings, w)
}

func label(f *record.File) string {
	if f.Header.Label != "" {
		return f.Header.Label
	}
	return f.Name
}

// SetupDiffs lists how the runs' setups differ: GPU, driver, CUDA, NVSHMEM,
// NCCL, PE count, nodes, the pair the point-to-point rows measured, and
// NVSHMEM_/NCCL_ environment knobs.
func SetupDiffs(files []*record.File) []string {
	var out []string
	base := &files[0].Header
	gpuName := func(h *record.Header) string {
		var names []string
		for _, g := range h.GPUs {
			names = append(names, g.Name)
		}
		return fmt.Sprintf("%d× %s", len(h.GPUs), strings.Join(lists.Unique(names), "+"))
	}
	for i := 1; i < len(files); i++ {
		h := &files[i].Header
		check := func(what, a, b string) {
			if a != b {
				out = append(out, fmt.Sprintf("setups differ: %s is %q in %s but %q in %s", what, a, label(files[0]), b, label(files[i])))
			}
		}
		check("GPU", gpuName(base), gpuName(h))
		check("driver", base.Driver, h.Driver)
		check("CUDA", base.CUDA, h.CUDA)
		check("NVSHMEM", base.NVSHMEM, h.NVSHMEM)
		check("NCCL", base.NCCL, h.NCCL)
		check("PEs", fmt.Sprint(base.PEs), fmt.Sprint(h.PEs))
		check("nodes", fmt.Sprint(base.Nodes), fmt.Sprint(h.Nodes))
		pa, pb := headerPair(base), headerPair(h)
		if base.Pair != nil && h.Pair != nil {
			pa, pb = pa+" ("+base.Pair.Kind+")", pb+" ("+h.Pair.Kind+")"
		}
		check("the point-to-point rows' pair", pa, pb)
		for _, k := range record.KnobNames(base, h) {
			check(k, base.Env[k], h.Env[k])
		}
		if base.Synthetic != h.Synthetic {
			out = append(out, fmt.Sprintf("setups differ: one of %s and %s is synthetic", label(files[0]), label(files[i])))
		}
	}
	return out
}

// headerPair is the pair a run's point-to-point rows measured: as its
// header records it, or PE 0 towards PE 1 (PE 0 alone on one PE) in a file
// from before pairs were recorded (schema 2 and older).
func headerPair(h *record.Header) string {
	switch {
	case h.Pair != nil:
		return fmt.Sprintf("PE %d → PE %d", h.Pair.From.PE, h.Pair.To.PE)
	case h.Schema >= 3:
		return "none"
	case h.PEs > 1:
		return "PE 0 → PE 1"
	}
	return "PE 0 → PE 0"
}

// Table renders the comparison through the report table model, so every
// report format applies.
func (r *Result) Table() *table.Report {
	cols := []string{"id", "size", "params", "metric"}
	right := []bool{false, true, false, false}
	// A label is the user's text: its control characters are escaped like
	// every other text of the output (column names are not, by the renderer).
	cols = append(cols, table.Printable(r.Files[0]), "±")
	right = append(right, true, true)
	for _, f := range r.Files[1:] {
		cols = append(cols, table.Printable(f), "±", "Δ", "p")
		right = append(right, true, true, true, true)
	}
	t := table.Table{Title: "Comparison against " + r.Files[0], Columns: cols, Right: right}
	t.Wide = make([]bool, len(cols))
	for i, c := range cols {
		t.Wide[i] = c == "±" || c == "p" // the confidence intervals and p-values: --wide
	}
	var failures []string
	schemaWhy := map[string]int{}
	// moved[i]: the rows that moved in file i+1, by the library change they
	// come with; libraryDiffs[i]: that file's changes.
	moved := make([]map[string]int, len(r.Files)-1)
	for i := range moved {
		moved[i] = map[string]int{}
	}
	unresolved, minStep, maxStep := 0, math.Inf(1), 0.0
	shown, common := distinguishing(r.Rows)
	for _, id := range slices.Sorted(maps.Keys(common)) {
		if common[id] != "" {
			t.Notes = append(t.Notes, fmt.Sprintf("%s: every row has %s", id, common[id]))
		}
	}
	for i, row := range r.Rows {
		sc, _ := units.Of(row.Unit)
		div, unit := sc.Div, sc.Label
		size := ""
		if row.Params.Size > 0 {
			size = units.Bytes(row.Params.Size)
		}
		cells := []table.Cell{table.Str(row.ID), table.Str(size), table.Str(shown[i])}
		if math.IsNaN(row.Base.Center) {
			cells = append(cells, table.Str(""), table.Str(""), table.Str(""))
		} else {
			cells = append(cells, table.Str(report.MetricUnit(row.Metric, unit)), table.Sig(row.Base.Center/div, 4), table.Str(row.Base.PctRangeString()))
		}
		for i := range row.Others {
			why := ""
			if i < len(row.SchemaChanged) {
				why = row.SchemaChanged[i]
			}
			if why != "" {
				schemaWhy[why]++
			}
			if math.IsNaN(row.Others[i].Center) {
				text := "?"
				switch {
				case why != "":
					text = "schema changed"
				case i < len(row.Failed) && row.Failed[i] != "":
					text = "FAILED"
					if row.Failed[i] == "missing" || strings.HasPrefix(row.Failed[i], "waived") {
						text = "MISSING"
					}
					failures = append(failures, fmt.Sprintf("%s %s in %s: %s", row.ID, row.Key, r.Files[i+1], row.Failed[i]))
				}
				cells = append(cells, table.Str(""), table.Str(""), table.Str(text), table.Str(""))
				continue
			}
			d := row.Deltas[i]
			switch {
			case why != "":
				d += " schema changed"
			case row.Regress[i]:
				d += " REGRESSION"
			}
			if d != "~" && d != "?" && why == "" && i < len(row.Library) {
				lib := row.Library[i]
				if lib == "" && i < len(r.Libraries) && len(r.Libraries[i]) > 0 {
					lib = unchangedCode
				}
				if lib != "" {
					d += " [" + lib + "]"
					moved[i][lib]++
				}
			}
			if i < len(row.Unresolved) && row.Unresolved[i] && row.Cmp[i].P < row.Cmp[i].Alpha {
				unresolved++
				minStep, maxStep = math.Min(minStep, row.Step[i]), math.Max(maxStep, row.Step[i])
			}
			cells = append(cells, table.Sig(row.Others[i].Center/div, 4), table.Str(row.Others[i].PctRangeString()),
				table.Str(d), pCell(row.Cmp[i].P))
		}
		t.Rows = append(t.Rows, cells)
	}
	t.Notes = append(t.Notes, "each file's column: the median (± its 95% confidence interval with --wide); Δ: its change from the base median where a Mann–Whitney U test finds p < alpha, else ~; REGRESSION: a significant slowdown beyond --threshold, in time per operation for every metric (2× slower = 100 %, a latency twice as long or a bandwidth of half the base's)")
	if unresolved > 0 {
		steps := fmt.Sprintf("%.3g ns", minStep*1e9)
		if maxStep > minStep*(1+1e-6) {
			steps = fmt.Sprintf("%.3g–%.3g ns", minStep*1e9, maxStep*1e9)
		}
		t.Notes = append(t.Notes, fmt.Sprintf("%d row(s) are ~ although p < alpha: their samples sit on a timer's grid (a step of %s) and the medians differ by no more than one step, which the timer does not resolve; elsewhere on such a grid the gate takes the slowdown less one step", unresolved, steps))
	}
	for _, why := range slices.Sorted(maps.Keys(schemaWhy)) {
		t.Notes = append(t.Notes, fmt.Sprintf("schema changed (%d row(s), shown, never a regression or a failure): %s", schemaWhy[why], why))
	}
	for i, m := range moved {
		for _, lib := range slices.Sorted(maps.Keys(m)) {
			what := "with the library version change " + lib
			switch lib {
			case undeclaredCode:
				what = "in code no benchmark this binary knows declares (an ID it does not register): not attributed to a version change"
			case unchangedCode:
				what = "in code that runs no library whose version changed (as its benchmark declares: the copy references, floors, the empty kernel, cudaMemcpyAsync and compute kernels run neither): the machine or the run, not a library"
			}
			t.Notes = append(t.Notes, fmt.Sprintf("%s: %d row(s) moved %s", r.Files[i+1], m[lib], what))
		}
	}
	t.Notes = append(t.Notes, r.Notes...)
	for _, f := range failures {
		t.Notes = append(t.Notes, f)
	}
	if n := len(r.Unmatched) - r.CandidateOnly; n > 0 {
		t.Notes = append(t.Notes, fmt.Sprintf("%d point(s) the base measured are not measured in every file: MISSING or FAILED", n))
	}
	if r.CandidateOnly > 0 {
		t.Notes = append(t.Notes, fmt.Sprintf("%d point(s) only a candidate measured are left out", r.CandidateOnly))
	}
	return &table.Report{Tables: []table.Table{t}, Warnings: r.Warnings}
}

// distinguishing splits each row's parameters (size apart) into what
// tells it from the other rows of its benchmark, shown in the row, and
// what all of them share (by benchmark ID), said once in a note.
func distinguishing(rows []Row) (shown []string, common map[string]string) {
	byID := map[string][][]string{}
	for _, row := range rows {
		byID[row.ID] = append(byID[row.ID], strings.Fields(row.Params.KeyWithoutSize()))
	}
	common = map[string]string{}
	shared := map[string]map[string]bool{}
	for id, sets := range byID {
		count := map[string]int{}
		for _, set := range sets {
			for _, kv := range set {
				count[kv]++
			}
		}
		shared[id] = map[string]bool{}
		var keep []string
		for _, kv := range sets[0] {
			if count[kv] == len(sets) {
				shared[id][kv] = true
				keep = append(keep, kv)
			}
		}
		common[id] = strings.Join(keep, " ")
	}
	for _, row := range rows {
		var own []string
		for _, kv := range strings.Fields(row.Params.KeyWithoutSize()) {
			if !shared[row.ID][kv] {
				own = append(own, kv)
			}
		}
		shown = append(shown, strings.Join(own, " "))
	}
	return shown, common
}

// pCell shows a p-value with two significant digits, "<0.001" below that.
func pCell(p float64) table.Cell {
	if p < 0.001 {
		c := table.Sig(p, 2)
		c.Text = "<0.001"
		return c
	}
	return table.Sig(p, 2)
}
