package verdict

import (
	"fmt"
	"math"

	"github.com/nvshbench/nvshbench/internal/table"
	"github.com/nvshbench/nvshbench/record"
)

// Matrix is one row of the pair matrix as a grid: Cells[from][to] the
// median figure of the pair (NaN where none was measured), Marks the
// verdict of the pair on that row (FAIL, WARN; Pass where it holds).
type Matrix struct {
	Row   string
	Unit  string
	PEs   int
	Cells [][]float64
	Marks [][]Level
}

// Matrices are the rows of the pair matrix a file holds (one direction),
// in the order the file has them, judged by v (nil: no marks).
func Matrices(f *record.File, v *Verdict) []Matrix {
	var order []string
	by := map[string]*Matrix{}
	pes := f.Header.PEs
	for i := range f.Points {
		p := &f.Points[i]
		if p.Params.Extra[matrixKey] != matrixPair || p.Pair == nil {
			continue
		}
		if n := max(p.Pair.From.PE, p.Pair.To.PE) + 1; n > pes {
			pes = n
		}
	}
	for i := range f.Points {
		p := &f.Points[i]
		if p.Params.Extra[matrixKey] != matrixPair || p.Pair == nil || p.Status != record.StatusOK || p.Params.Dir == "bidir" {
			continue
		}
		val, unit, _, ok := figure(p)
		if !ok {
			continue
		}
		m := by[p.ID]
		if m == nil {
			m = &Matrix{Row: p.ID, Unit: unit, PEs: pes}
			for r := 0; r < pes; r++ {
				m.Cells = append(m.Cells, nanRow(pes))
				m.Marks = append(m.Marks, make([]Level, pes))
			}
			by[p.ID] = m
			order = append(order, p.ID)
		}
		from, to := p.Pair.From.PE, p.Pair.To.PE
		m.Cells[from][to] = val
	}
	if v != nil {
		for _, s := range v.Pairs {
			for _, fd := range s.Findings {
				if m := by[fd.Row]; m != nil && fd.Level > m.Marks[s.From][s.To] {
					m.Marks[s.From][s.To] = fd.Level
				}
			}
		}
	}
	out := make([]Matrix, 0, len(order))
	for _, id := range order {
		out = append(out, *by[id])
	}
	return out
}

func nanRow(n int) []float64 {
	r := make([]float64, n)
	for i := range r {
		r[i] = nan
	}
	return r
}

var nan = math.NaN()

// MatrixReport is the pair matrix as tables: one per row, PE by PE, the
// figure of each ordered pair (GB/s or µs), a FAIL marked *, a WARN ~.
func MatrixReport(f *record.File, v *Verdict) *table.Report {
	rep := &table.Report{}
	for _, m := range Matrices(f, v) {
		t := table.Table{Title: fmt.Sprintf("Pair matrix: %s (%s), from (row) to (column); * FAIL, ~ WARN", m.Row, unitName(m.Unit))}
		t.Columns = []string{"from \\ to"}
		t.Right = []bool{false}
		for to := 0; to < m.PEs; to++ {
			t.Columns = append(t.Columns, fmt.Sprintf("PE %d", to))
			t.Right = append(t.Right, true)
		}
		for from := 0; from < m.PEs; from++ {
			row := []table.Cell{table.Str(fmt.Sprintf("PE %d", from))}
			for to := 0; to < m.PEs; to++ {
				c := m.Cells[from][to]
				if c != c { // NaN: not measured
					row = append(row, table.Str("-"))
					continue
				}
				shown := c / 1e9
				if m.Unit == record.UnitSeconds {
					shown = c * 1e6
				}
				cell := table.Sig(shown, 4)
				switch m.Marks[from][to] {
				case Fail:
					cell.Text += " *"
				case Warn:
					cell.Text += " ~"
				}
				row = append(row, cell)
			}
			t.Rows = append(t.Rows, row)
		}
		rep.Tables = append(rep.Tables, t)
	}
	if len(rep.Tables) == 0 {
		rep.Tables = append(rep.Tables, table.Table{Title: "No pair matrix in this file (nvshbench check, or run --matrix, measures one)"})
	}
	return rep
}

func unitName(u string) string {
	if u == record.UnitSeconds {
		return "µs"
	}
	return "GB/s"
}
