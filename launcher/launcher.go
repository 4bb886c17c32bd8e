// Package launcher is the controller of a measurement run: it starts one
// worker process per PE (a hidden subcommand of the same binary), shares the
// NVSHMEM unique ID, passes the full environment to every worker, merges the
// workers' outcomes into results records written as each point finishes,
// and owns the watchdog: a worker group that hangs past the point timeout,
// or a worker that dies, is killed, the point is recorded as an error, and
// the run goes on with new workers from the next point. Every finished point
// is kept; a run started again on the same file skips what is done.
package launcher

import (
	"bufio"
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/nvshbench/nvshbench/harness"
	"github.com/nvshbench/nvshbench/internal/units"
	"github.com/nvshbench/nvshbench/record"
)

// Options configure a run.
type Options struct {
	Exe         string   // the nvshbench binary the workers run
	WorkerArgs  []string // extra arguments of the worker subcommand (e.g. --shim)
	Env         []string // full environment of the workers (os.Environ plus additions)
	GPUs        int
	PEsPerGPU   int
	Plan        harness.Plan
	Out         string        // results file
	Header      record.Header // base header; GPU and version fields are filled from the workers
	Timeout     time.Duration // per point
	Startup     time.Duration // on top of Timeout for the first point of a worker group: NVSHMEM's start-up
	MaxRestarts int           // worker groups that may fail at one size, or in a row at their first point
	StopOnError bool
	Progress    Progress
	Stderr      io.Writer
}

// Summary of a finished run: the points it wrote by status, and those of
// its plan the file held already (Skipped; KeptFailed of them failed
// verification, which a resumed run keeps: they are results).
type Summary struct {
	Points, OK, Waived, Failed, Errors, Skipped, KeptFailed int
	Path                                                    string
}

// skip counts a point of the plan that the file holds already.
func (s *Summary) skip(st record.Status) {
	s.Skipped++
	if st == record.StatusFailedVerification {
		s.KeptFailed++
	}
}

// Progress receives the run's progress.
type Progress interface {
	Start(total int)
	Point(p *record.Point, done, total int)
	Finish()
}

// Waive writes a results file whose every point is waived with reason,
// without starting workers (a path the machine lacks).
func Waive(o Options, reason string) (*Summary, error) {
	w, done, _, err := openOut(o)
	if err != nil {
		return nil, err
	}
	defer w.Close()
	s := &Summary{Path: o.Out}
	for _, it := range o.Plan.Items {
		if st, ok := done[harness.ItemKey(it)]; ok {
			s.skip(st)
			continue
		}
		p := record.Point{ID: it.ID, Params: it.Params, Status: record.StatusWaived, Reason: reason, Time: time.Now().UTC().Format(time.RFC3339)}
		if err := w.WritePoint(p); err != nil {
			return s, err
		}
		s.Points++
		s.Waived++
	}
	return s, nil
}

// openOut creates the results file, or opens it to resume: the points it
// already holds (any status but error) are reported as done, with their
// status, and the file as it was read is returned (nil for a new one).
// Either way the file is locked for this run first, so what is compared
// and appended to is what no other run is writing.
func openOut(o Options) (*record.Writer, map[string]record.Status, *record.File, error) {
	done := map[string]record.Status{}
	if err := record.Regular(o.Out); err != nil {
		return nil, nil, nil, err
	}
	if _, err := os.Lstat(o.Out); err == nil {
		w, f, err := harness.Reader().Append(o.Out)
		if err != nil {
			return nil, nil, nil, fmt.Errorf("resuming %s: %w", o.Out, err)
		}
		if o.Header.Tool != "" { // a run (not a bare waiver record) must be the same setup
			if d := record.ResumeDiffs(&f.Header, &o.Header); len(d) > 0 {
				w.Close()
				return nil, nil, nil, &record.SetupMismatch{File: o.Out, Diffs: d}
			}
		}
		for i := range f.Points {
			if f.Points[i].Status != record.StatusError {
				done[f.Points[i].MatchKey()] = f.Points[i].Status
			}
		}
		return w, done, f, nil
	}
	w, err := record.Create(o.Out, o.Header)
	return w, done, nil, err
}

type worker struct {
	rank int
	cmd  *exec.Cmd     // nil for an in-process worker (it cannot be killed)
	done chan struct{} // closed when the worker has ended
}

// event is what a worker's reader goroutines report.
type event struct {
	rank   int
	msg    *harness.Message // a protocol message
	line   string           // any other stdout line
	exited bool             // the process ended (exit then holds how)
	exit   error
}

// Run measures the plan and writes the results file.
func Run(ctx context.Context, o Options) (*Summary, error) { return runWith(ctx, o, spawnProcess) }

// runWith is Run with the workers started by spawn.
func runWith(ctx context.Context, o Options, spawn func(*group, int, []byte, *inbox) (*worker, error)) (*Summary, error) {
	if o.Stderr == nil {
		o.Stderr = io.Discard
	}
	if o.MaxRestarts == 0 {
		o.MaxRestarts = 3
	}
	nranks := o.GPUs * o.PEsPerGPU
	if nranks <= 0 {
		return nil, fmt.Errorf("no PEs to start")
	}
	w, done, old, err := openOut(o)
	if err != nil {
		return nil, err
	}
	defer w.Close()
	sum := &Summary{Path: o.Out}
	var todo []harness.Item
	for _, it := range o.Plan.Items {
		if st, ok := done[harness.ItemKey(it)]; ok {
			sum.skip(st)
		} else {
			todo = append(todo, it)
		}
	}
	if o.Progress != nil {
		o.Progress.Start(len(todo))
		defer o.Progress.Finish()
	}
	limits := map[string]float64{}
	// Limits measured earlier into the same file count too (resume).
	if old != nil {
		for i := range old.Points {
			harness.RecordLimit(limits, &old.Points[i])
		}
	}
	g := &group{o: o, nranks: nranks, w: w, limits: limits, sum: sum, total: len(todo), spawn: spawn}
	b := budget{max: o.MaxRestarts, bySize: map[int64]int{}}
	for len(todo) > 0 {
		if ctx.Err() != nil {
			return sum, interrupted(sum)
		}
		// A worker group per environment: NVSHMEM reads a point's own
		// variables (params.env) once, at nvshmem_init.
		seg := harness.FirstEnvGroup(todo)
		g.env = harness.EnvList(seg[0].Params.Env)
		n, failed, err := g.run(ctx, seg)
		if err != nil {
			if ctx.Err() != nil {
				return sum, interrupted(sum)
			}
			return sum, err
		}
		last := todo[max(n-1, 0)]
		todo = todo[n:]
		if !failed || len(todo) == 0 {
			b.inARow = 0
			continue
		}
		if o.StopOnError {
			return sum, fmt.Errorf("stopped after an error (--stop-on-error); %d point(s) written to %s", sum.Points, o.Out)
		}
		// What is left to run is what the budget still allows.
		var skip []harness.Item
		todo, skip = b.spend(last, n == 1, todo, g.failure)
		for _, it := range skip {
			if err := g.record(&record.Point{ID: it.ID, Params: it.Params, Status: record.StatusError, Reason: b.why,
				Time: time.Now().UTC().Format(time.RFC3339)}); err != nil {
				return sum, err
			}
		}
		if len(skip) > 0 {
			fmt.Fprintf(o.Stderr, "nvshbench: %d point(s) %s\n", len(skip), b.why)
		}
		if len(todo) > 0 {
			fmt.Fprintf(o.Stderr, "nvshbench: restarting the workers at point %d of %d\n", g.finished+1, g.total)
		}
	}
	return sum, nil
}

// budget is how many worker groups a run lets fail before it stops
// starting the points they fail on: max failures at one size (a size
// that hangs or kills its workers costs that size's points, never the
// sweep), and max groups in a row that fail at their first point (the
// GPUs or the library are unusable: no point would finish).
type budget struct {
	max    int
	bySize map[int64]int
	inARow int
	why    string // the reason of the points not started
}

// spend counts the failure of a worker group at point it (first: before
// it finished any point; reason: the failure's) and returns the points of
// todo still to run, and those not to start.
func (b *budget) spend(it harness.Item, first bool, todo []harness.Item, reason string) (run, skip []harness.Item) {
	size := it.Params.Size
	b.bySize[size]++
	b.inARow++
	if !first {
		b.inARow = 0
	}
	if b.inARow >= b.max {
		b.why = fmt.Sprintf("not started: %d worker groups in a row failed before finishing a point (the GPUs or the library look unusable; the last: %s); a resumed run retries it", b.inARow, reason)
		return nil, todo
	}
	if b.bySize[size] < b.max {
		return todo, nil
	}
	at := "at " + units.Bytes(size)
	if size == 0 {
		at = "at points without a size"
	}
	b.why = fmt.Sprintf("not started: the workers failed %s %d times in this run, each time a worker group (the last: %s); a resumed run retries it", at, b.bySize[size], reason)
	for _, t := range todo {
		if t.Params.Size == size {
			skip = append(skip, t)
		} else {
			run = append(run, t)
		}
	}
	return run, skip
}

// Interrupted is a run ended by a signal (Ctrl-C, SIGTERM, SIGHUP): the
// points written so far are kept; Next says how to measure the rest.
type Interrupted struct {
	Summary *Summary
	Next    string
}

func (e *Interrupted) Error() string {
	if e.Summary == nil { // a rank that writes no results
		return "interrupted; " + e.Next
	}
	return fmt.Sprintf("interrupted: %d point(s) written to %s; %s", e.Summary.Points, e.Summary.Path, e.Next)
}

func interrupted(s *Summary) error {
	return &Interrupted{Summary: s, Next: "run the same command again to resume"}
}

// group runs one set of PEs through the plan: the one controller loop of
// both modes. Locally it starts one worker process per PE and every PE's
// result completes a point; under srun / mpirun this process is one PE, its
// worker runs in-process, and rank 0's result (with the job's verification
// totals) completes it.
type group struct {
	o        Options
	nranks   int // PEs whose results complete a point
	w        *record.Writer
	limits   map[string]float64
	sum      *Summary
	finished int
	total    int
	groups   int // worker groups started so far
	// spawn starts PE rank's worker (uid: NVSHMEM's unique ID for the
	// others than rank 0; nil for rank 0) reporting into in: a worker
	// process (spawnProcess), or one in this process under a launcher.
	spawn func(g *group, rank int, uid []byte, in *inbox) (*worker, error)
	// open creates the results file when it is not open yet: from rank 0's
	// info (the job's GPUs and capabilities) under a launcher, or bare.
	open    func(info *harness.Message) error
	killed  string // what a timeout does to the PEs, for its message
	failure string // why the last worker group failed
	// placement is every PE's GPU and node, from rank 0's info: a PE that
	// fails is named with them.
	placement []record.GPU
	planJSON  []byte // the plan of the group being started, a worker's stdin
	// env is what the group's points add to every worker's environment
	// (their params.env; the same on every PE).
	env []string
}

func (g *group) record(p *record.Point) error {
	if g.w == nil && g.open != nil {
		if err := g.open(nil); err != nil {
			return err
		}
	}
	if err := g.w.WritePoint(*p); err != nil {
		return err
	}
	harness.RecordLimit(g.limits, p)
	g.sum.Points++
	switch p.Status {
	case record.StatusOK:
		g.sum.OK++
	case record.StatusWaived:
		g.sum.Waived++
	case record.StatusFailedVerification:
		g.sum.Failed++
	default:
		g.sum.Errors++
	}
	g.finished++
	if g.o.Progress != nil {
		g.o.Progress.Point(p, g.finished, g.total)
	}
	return nil
}

// run starts a worker group for todo and runs until every item is done
// (n = len(todo)) or the group fails: the item in progress is then recorded
// as an error, counted in n, and failed is true. However it ends, its
// workers are killed and gone when it returns.
func (g *group) run(ctx context.Context, todo []harness.Item) (n int, failed bool, err error) {
	g.groups++
	s, err := g.newSession(ctx, todo)
	if err != nil {
		return 0, false, err
	}
	defer s.stop()
	// Rank 0 makes the unique ID; the others start once it is known.
	if err := s.start(0, nil); err != nil {
		return 0, false, err
	}
	defer s.timer.Stop()
	for {
		var e *end
		select {
		case <-ctx.Done():
			return s.pos, false, ctx.Err()
		case <-s.timer.C:
			e = s.timedOut()
		case ev := <-s.in.ch:
			e = s.handle(ev)
		}
		if e != nil {
			return e.n, e.failed, e.err
		}
	}
}

// peName names PE pe with its GPU and node where rank 0 said them.
func (g *group) peName(pe int) string {
	if pe < 0 || pe >= len(g.placement) {
		return fmt.Sprintf("PE %d", pe)
	}
	gpu := g.placement[pe]
	return fmt.Sprintf("PE %d (GPU %d, %s)", pe, gpu.Index, gpu.Host)
}

// end is how a worker group's run ends (group.run's results).
type end struct {
	n      int
	failed bool
	err    error
}

// session is one worker group's run through its items: its workers, what
// they reported, and where the controller stands.
type session struct {
	ctx      context.Context // the run's: cancelled by an interruption
	g        *group
	todo     []harness.Item
	want     map[int]harness.Item // the items by plan index: a result must name one
	in       *inbox
	workers  []*worker
	started  bool                  // every PE's worker is started
	pending  map[int]*pendingPoint // results of points not complete yet
	finished map[int]bool          // ranks that ran the whole plan
	exited   int                   // workers that ended
	pos      int                   // todo[pos] is the point in progress
	timer    *time.Timer
	waiting  string // what the watchdog waits for, in the words of its message
	stopped  bool
}

func (g *group) newSession(ctx context.Context, todo []harness.Item) (*session, error) {
	plan := g.o.Plan
	plan.Items = todo
	var buf bytes.Buffer // worker processes read it on stdin; an in-process worker has it
	if err := harness.WritePlan(&buf, plan); err != nil {
		return nil, err
	}
	g.planJSON = buf.Bytes()
	s := &session{ctx: ctx, g: g, todo: todo, want: make(map[int]harness.Item, len(todo)), in: newInbox(),
		started: g.nranks == 1, pending: map[int]*pendingPoint{}, finished: map[int]bool{}}
	for _, it := range todo {
		s.want[it.Index] = it
	}
	timeout := g.o.Timeout + g.o.Startup
	if timeout <= 0 {
		timeout = 180 * time.Second
	}
	s.timer = time.NewTimer(timeout)
	s.waiting = timeoutWords(g.o, true)
	return s, nil
}

// inbox is where a worker group's reader goroutines report. A send gives
// up once the controller has left the group (close): no reader then blocks
// on events nobody reads, and the workers' ends can be waited for.
type inbox struct {
	ch   chan event
	gone chan struct{}
}

func newInbox() *inbox { return &inbox{ch: make(chan event, 1024), gone: make(chan struct{})} }

// send delivers ev, or reports false once the controller has left.
func (b *inbox) send(ev event) bool {
	select {
	case b.ch <- ev:
		return true
	case <-b.gone:
		return false
	}
}

func (b *inbox) close() { close(b.gone) }

// killWait bounds the wait for a killed worker to end: one stuck in the
// kernel (a GPU driver's teardown) must not keep an interrupted run alive.
const killWait = 5 * time.Second

// start starts PE rank's worker.
func (s *session) start(rank int, uid []byte) error {
	wk, err := s.g.spawn(s.g, rank, uid, s.in)
	if err != nil {
		return err
	}
	s.workers = append(s.workers, wk)
	return nil
}

// stop ends the group: nothing more is read from it, its worker processes
// are killed with everything they started (their process groups), and
// each is waited for, killWait at most. An in-process worker cannot be
// killed: the process exits after the loop.
func (s *session) stop() {
	if s.stopped {
		return
	}
	s.stopped = true
	s.in.close()
	for _, wk := range s.workers {
		if wk.cmd != nil && wk.cmd.Process != nil {
			syscall.Kill(-wk.cmd.Process.Pid, syscall.SIGKILL)
		}
	}
	deadline := time.NewTimer(killWait)
	defer deadline.Stop()
	for _, wk := range s.workers {
		if wk.cmd == nil {
			continue
		}
		select {
		case <-wk.done:
		case <-deadline.C:
			fmt.Fprintf(s.g.o.Stderr, "nvshbench: the worker of PE %d (PID %d) has not ended %s after it was killed; going on without it\n", wk.rank, wk.cmd.Process.Pid, killWait)
			return
		}
	}
}

// fail ends the group on the point in progress: its workers killed, the
// point recorded as an error with reason.
func (s *session) fail(reason string) *end {
	s.stop()
	s.g.failure = reason
	it := s.todo[s.pos]
	p := record.Point{ID: it.ID, Params: it.Params, Status: record.StatusError, Reason: reason, Time: time.Now().UTC().Format(time.RFC3339)}
	if err := s.g.record(&p); err != nil {
		return &end{s.pos, true, err}
	}
	return &end{s.pos + 1, true, nil}
}

// over: every point is written and every worker has ended.
func (s *session) over() bool { return s.pos >= len(s.todo) && s.exited == len(s.workers) }

// timedOut is the watchdog's turn: a point that took too long fails the
// group; after the last point, a worker hung in finalize is let go.
func (s *session) timedOut() *end {
	if s.pos >= len(s.todo) {
		return &end{s.pos, false, nil}
	}
	killed := s.g.killed
	if killed == "" {
		killed = "worker group killed"
	}
	return s.fail(fmt.Sprintf("timed out: %s; %s", s.waiting, killed))
}

// handle takes one event of a worker; non-nil where it ends the group.
func (s *session) handle(ev event) *end {
	switch {
	case ev.exited:
		return s.exit(ev)
	case ev.msg == nil:
		fmt.Fprintf(s.g.o.Stderr, "[pe %d] %s\n", ev.rank, ev.line)
		return nil
	}
	m := ev.msg
	switch m.Type {
	case "uid":
		if !s.started {
			for r := 1; r < s.g.nranks; r++ {
				if err := s.start(r, m.UID); err != nil {
					return &end{s.pos, false, err}
				}
			}
			s.started = true
		}
	case "info":
		if m.Rank == 0 {
			s.g.placement = m.Job
		}
		if m.Rank == 0 && s.g.w == nil && s.g.open != nil {
			if err := s.g.open(m); err != nil {
				return &end{s.pos, false, err}
			}
		}
	case "done":
		s.finished[m.Rank] = true
		if s.over() {
			return &end{s.pos, false, nil}
		}
	case "fatal":
		return s.fail(fmt.Sprintf("PE %d: %s", m.Rank, m.Error))
	case "refused": // the job as started cannot run the plan: nothing to record
		return &end{s.pos, false, &harness.Refused{Why: m.Error}}
	case "result":
		return s.result(m)
	}
	return nil
}

// exit is a worker's end: the group's, once every point is written and
// every worker gone; before, a failure of the point in progress unless
// that worker ran the whole plan (the others are still reporting).
func (s *session) exit(ev event) *end {
	s.exited++
	if s.pos >= len(s.todo) {
		if s.exited == len(s.workers) && s.started {
			return &end{s.pos, false, nil}
		}
		return nil
	}
	if s.finished[ev.rank] {
		return nil
	}
	// scancel or a hang-up signals the workers too: one that died of it a
	// moment before this process got it is the interruption, not a
	// failure of the point.
	var k killedBy
	if errors.As(ev.exit, &k) && k.sig != syscall.SIGKILL {
		select {
		case <-s.ctx.Done():
			return &end{s.pos, false, s.ctx.Err()}
		case <-time.After(signalGrace):
		}
	}
	msg := fmt.Sprintf("the worker of %s exited before finishing the point", s.g.peName(ev.rank))
	if ev.exit != nil {
		msg += " (" + ev.exit.Error() + ")"
	}
	return s.fail(msg + "; see its output above")
}

// result keeps a PE's result until its point is complete, and records
// every point that is, in plan order.
func (s *session) result(m *harness.Message) *end {
	g, o := s.g, s.g.o
	if m.Rank < 0 || m.Rank >= g.nranks {
		return nil
	}
	// A result counts only for the point it names: another plan's worker
	// (or a confused one) cannot fill this one.
	if it, ok := s.want[m.Index]; !ok || m.Key != harness.ItemKey(it) {
		return s.fail(fmt.Sprintf("PE %d reported a result for %q, which is not point %d of this run's plan; its result was not recorded", m.Rank, m.Key, m.Index))
	}
	// Ranks run ahead of each other: keep results until their point is
	// complete.
	pd := s.pending[m.Index]
	if pd == nil {
		pd = &pendingPoint{outs: make([]*harness.Outcome, g.nranks)}
		s.pending[m.Index] = pd
	}
	// results[i] is PE m.Rank+i's: this worker's own, or under a launcher
	// rank 0's report of every PE's.
	results := []harness.RankResult{{Outcome: m.Outcome, Error: m.Error}}
	if len(m.Ranks) > 0 {
		results, pd.outs = m.Ranks, make([]*harness.Outcome, len(m.Ranks))
	}
	for i, rr := range results {
		pe := m.Rank + i
		if rr.Error != "" {
			pd.errs = append(pd.errs, fmt.Sprintf("PE %d: %s", pe, rr.Error))
		}
		pd.outs[pe] = rr.Outcome
	}
	pd.reported++
	for s.pos < len(s.todo) {
		cur := s.pending[s.todo[s.pos].Index]
		if cur == nil || cur.reported < g.nranks {
			break
		}
		delete(s.pending, s.todo[s.pos].Index)
		p := harness.Merge(s.todo[s.pos], cur.outs, cur.errs, &o.Plan.Config, g.limits)
		if err := g.record(&p); err != nil {
			return &end{s.pos, true, err}
		}
		s.pos++
		if p.Status == record.StatusError && o.StopOnError {
			return &end{s.pos, true, nil}
		}
		if s.pos < len(s.todo) {
			resetTimer(s.timer, o.Timeout)
			s.waiting = timeoutWords(o, false)
		} else {
			resetTimer(s.timer, 60*time.Second) // finalize
		}
	}
	if s.over() {
		return &end{s.pos, false, nil}
	}
	return nil
}

// spawnProcess starts PE rank's worker process (the hidden __worker
// subcommand) in its own process group, its stdout read as messages.
func spawnProcess(g *group, rank int, uid []byte, in *inbox) (*worker, error) {
	o := g.o
	args := append([]string{"__worker", "--plan", "-", "--rank", fmt.Sprint(rank), "--nranks", fmt.Sprint(g.nranks),
		"--device", fmt.Sprint(rank / o.PEsPerGPU)}, o.WorkerArgs...)
	cmd := exec.Command(o.Exe, args...)
	env := append([]string{}, o.Env...)
	env = append(env, g.env...) // after the run's: exec keeps the last of a name
	env = append(env, fmt.Sprintf("NVSHBENCH_WORKER_GROUP=%d", g.groups))
	if uid != nil {
		env = append(env, "NVSHBENCH_UID="+hex.EncodeToString(uid))
	}
	cmd.Env = env
	cmd.Stdin = bytes.NewReader(g.planJSON)
	cmd.SysProcAttr = workerAttr()
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting the worker of PE %d: %w", rank, err)
	}
	wk := &worker{rank: rank, cmd: cmd, done: make(chan struct{})}
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		readMessages(stdout, rank, in)
	}()
	go func() {
		defer wg.Done()
		sc := bufio.NewScanner(stderr)
		sc.Buffer(make([]byte, 1<<16), 1<<20)
		for sc.Scan() {
			fmt.Fprintf(o.Stderr, "[pe %d] %s\n", rank, sc.Text())
		}
	}()
	go func() {
		wg.Wait()
		err := cmd.Wait()
		close(wk.done)
		in.send(event{rank: rank, exited: true, exit: exitErr(err)})
	}()
	return wk, nil
}

// readMessages turns a worker's output lines into events until its end;
// once the controller has left the group the rest is read and dropped, so
// the worker never blocks on a full pipe.
func readMessages(r io.Reader, rank int, in *inbox) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		line := sc.Text()
		ev := event{rank: rank, line: line}
		var m harness.Message
		if strings.HasPrefix(line, "{") && json.Unmarshal([]byte(line), &m) == nil && m.Type != "" {
			ev = event{rank: rank, msg: &m}
		}
		if !in.send(ev) {
			io.Copy(io.Discard, r)
			return
		}
	}
}

// timeoutWords says what a timed-out point waited for: the --timeout in
// force, and for the first point of a worker group the start-up allowance
// on top of it.
func timeoutWords(o Options, first bool) string {
	if !first || o.Startup <= 0 {
		return fmt.Sprintf("no result within --timeout %s", o.Timeout)
	}
	return fmt.Sprintf("no result within --timeout %s plus --startup-timeout %s (NVSHMEM's start-up: the first point of a worker group)", o.Timeout, o.Startup)
}

type pendingPoint struct {
	outs     []*harness.Outcome
	errs     []string
	reported int
}

func resetTimer(t *time.Timer, d time.Duration) {
	if d <= 0 {
		d = 300 * time.Second
	}
	if !t.Stop() {
		select {
		case <-t.C:
		default:
		}
	}
	t.Reset(d)
}

// killedBy is a worker process ended by a signal.
type killedBy struct{ sig syscall.Signal }

func (k killedBy) Error() string { return fmt.Sprintf("killed by signal %v", k.sig) }

// signalGrace is how long a worker that died of a termination signal waits
// for this process to get the same signal (an interruption) before it
// counts as a failure of its point.
const signalGrace = time.Second

func exitErr(err error) error {
	if err == nil {
		return nil
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		if st, ok := ee.Sys().(syscall.WaitStatus); ok && st.Signaled() {
			return killedBy{st.Signal()}
		}
		return fmt.Errorf("exit status %d", ee.ExitCode())
	}
	return err
}
