package main

import (
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/vbauerster/mpb/v8"
	"github.com/vbauerster/mpb/v8/decor"
	"golang.org/x/term"

	"github.com/nvshbench/nvshbench/internal/units"
	"github.com/nvshbench/nvshbench/record"
)

// newProgress returns a progress bar with ETA on a terminal, and one log
// line per finished point otherwise.
func newProgress(w io.Writer) interface {
	Start(int)
	Point(*record.Point, int, int)
	Finish()
} {
	if f, ok := w.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		return &barProgress{w: w}
	}
	return &lineProgress{w: w, start: time.Now()}
}

type lineProgress struct {
	w     io.Writer
	start time.Time
}

func (l *lineProgress) Start(total int) {
	fmt.Fprintf(l.w, "nvshbench: %d point(s) to measure\n", total)
}

func (l *lineProgress) Point(p *record.Point, done, total int) {
	fmt.Fprintf(l.w, "[%d/%d %s] %s\n", done, total, time.Since(l.start).Round(time.Second), pointLine(p))
}

func (l *lineProgress) Finish() {}

type barProgress struct {
	w    io.Writer
	p    *mpb.Progress
	bar  *mpb.Bar
	mu   sync.Mutex
	last string
}

func (b *barProgress) Start(total int) {
	b.p = mpb.New(mpb.WithOutput(b.w), mpb.WithWidth(40))
	b.bar = b.p.AddBar(int64(total),
		mpb.PrependDecorators(decor.Name("measuring "), decor.CountersNoUnit("%d/%d")),
		mpb.AppendDecorators(decor.Percentage(decor.WCSyncSpace), decor.Name(" ETA "), decor.AverageETA(decor.ET_STYLE_GO)),
	)
}

func (b *barProgress) Point(p *record.Point, done, total int) {
	if p.Status != record.StatusOK && b.p != nil {
		fmt.Fprintln(b.p, pointLine(p))
	}
	if b.bar != nil {
		b.bar.SetCurrent(int64(done))
	}
}

func (b *barProgress) Finish() {
	if b.bar != nil {
		b.bar.Abort(false)
	}
	if b.p != nil {
		b.p.Wait()
	}
}

// pointLine is a one-line summary of a finished point.
func pointLine(p *record.Point) string {
	size := ""
	if p.Params.Size > 0 {
		size = " " + units.Bytes(p.Params.Size)
	}
	if p.Status != record.StatusOK {
		return fmt.Sprintf("%s%s: %s: %s", p.ID, size, p.Status, p.Reason)
	}
	m := record.PrimaryMetric(p)
	s := p.Metrics[m]
	val := ""
	if sc, ok := units.Of(s.Unit); ok {
		val = fmt.Sprintf("%.*f %s", sc.Prec, s.Median/sc.Div, sc.Label)
	}
	extra := ""
	if p.L2Resident {
		extra = " (L2-resident)"
	}
	verified := "verified"
	switch {
	case !p.Verify.Checked && p.Bytes == 0:
		verified = "no payload to verify"
	case !p.Verify.Checked:
		verified = "NOT verified"
	}
	return fmt.Sprintf("%s%s %s: %s %s%s, %s", p.ID, size, p.Params.KeyWithoutSize(), m, val, extra, verified)
}
