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
	Timeout     time.Duration // per point, after the first point's start-up allowance
	InitTimeout time.Duration // NVSHMEM start-up and the first point
	MaxRestarts int
	StopOnError bool
	Progress    Progress
	Stderr      io.Writer
}

// Summary of a finished run.
type Summary struct {
	Points, OK, Waived, Failed, Errors, Skipped int
	Path                                        string
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
		if done[harness.ItemKey(it)] {
			s.Skipped++
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
// already holds (any status but error) are reported as done, and the file
// as it was read is returned (nil for a new one). Either way the file is
// locked for this run first, so what is compared and appended to is what no
// other run is writing.
func openOut(o Options) (*record.Writer, map[string]bool, *record.File, error) {
	done := map[string]bool{}
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
				done[f.Points[i].MatchKey()] = true
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
func Run(ctx context.Context, o Options) (*Summary, error) {
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
		if done[harness.ItemKey(it)] {
			sum.Skipped++
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
	g := &group{o: o, nranks: nranks, w: w, limits: limits, sum: sum, total: len(todo)}
	restarts := 0
	for len(todo) > 0 {
		if ctx.Err() != nil {
			return sum, interrupted(sum)
		}
		// A worker group per environment: NVSHMEM reads a point's own
		// variables (params.env) once, at nvshmem_init.
		seg := harness.FirstEnvGroup(todo)
		g.env = harness.EnvList(seg[0].Params.Env)
		n, failed, err := g.run(ctx, seg)
		todo = todo[n:]
		if err != nil {
			if ctx.Err() != nil {
				return sum, interrupted(sum)
			}
			return sum, err
		}
		if failed && len(todo) > 0 {
			if o.StopOnError {
				return sum, fmt.Errorf("stopped after an error (--stop-on-error); %d point(s) written to %s", sum.Points, o.Out)
			}
			restarts++
			if restarts > o.MaxRestarts {
				return sum, fmt.Errorf("giving up after %d worker restarts; %d point(s) written to %s", o.MaxRestarts, sum.Points, o.Out)
			}
			fmt.Fprintf(o.Stderr, "nvshbench: restarting the workers at point %d of %d\n", g.finished+1, g.total)
		}
	}
	return sum, nil
}

// Interrupted is a run ended by a signal (Ctrl-C, SIGTERM, SIGHUP): the
// points written so far are kept and the same command resumes.
type Interrupted struct{ Summary *Summary }

func (e *Interrupted) Error() string {
	return fmt.Sprintf("interrupted: %d point(s) written to %s; run the same command again to resume", e.Summary.Points, e.Summary.Path)
}

func interrupted(s *Summary) error { return &Interrupted{Summary: s} }

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
	// others than rank 0; nil for rank 0) reporting on events; the default
	// starts a worker process.
	spawn func(g *group, rank int, uid []byte, events chan<- event) (*worker, error)
	// open creates the results file when it is not open yet: from rank 0's
	// info (the job's GPUs and capabilities) under a launcher, or bare.
	open   func(info *harness.Message) error
	killed string // what a timeout does to the PEs, for its message
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
// as an error, counted in n, and failed is true.
func (g *group) run(ctx context.Context, todo []harness.Item) (n int, failed bool, err error) {
	o := g.o
	g.groups++
	plan := o.Plan
	plan.Items = todo
	var buf bytes.Buffer // worker processes read it on stdin; an in-process worker has it
	if err := harness.WritePlan(&buf, plan); err != nil {
		return 0, false, err
	}
	g.planJSON = buf.Bytes()
	want := make(map[int]harness.Item, len(todo))
	for _, it := range todo {
		want[it.Index] = it
	}
	events := make(chan event, 1024)
	var workers []*worker
	killAll := func() {
		for _, wk := range workers {
			if wk.cmd != nil && wk.cmd.Process != nil {
				syscall.Kill(-wk.cmd.Process.Pid, syscall.SIGKILL)
			}
		}
		for _, wk := range workers {
			if wk.cmd != nil {
				<-wk.done
			} // an in-process worker that hangs stays: the process exits after the loop
		}
		workers = nil
	}
	defer killAll()

	start := func(rank int, uid []byte) error {
		spawn := g.spawn
		if spawn == nil {
			spawn = spawnProcess
		}
		wk, err := spawn(g, rank, uid, events)
		if err != nil {
			return err
		}
		workers = append(workers, wk)
		return nil
	}

	// Rank 0 makes the unique ID; the others start once it is known.
	if err := start(0, nil); err != nil {
		return 0, false, err
	}
	started := g.nranks == 1
	timeout := o.InitTimeout
	if timeout <= 0 {
		timeout = 180 * time.Second
	}
	// What the watchdog waits for now, in the words of the timeout message.
	waiting := timeoutWords(o, true)
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	pending := map[int]*pendingPoint{}
	exited := 0
	finishedRank := map[int]bool{}
	pos := 0
	fail := func(reason string) (int, bool, error) {
		killAll()
		it := todo[pos]
		p := record.Point{ID: it.ID, Params: it.Params, Status: record.StatusError, Reason: reason, Time: time.Now().UTC().Format(time.RFC3339)}
		if err := g.record(&p); err != nil {
			return pos, true, err
		}
		return pos + 1, true, nil
	}
	for {
		select {
		case <-ctx.Done():
			return pos, false, ctx.Err()
		case <-timer.C:
			if pos >= len(todo) {
				return pos, false, nil // every point written; a worker hung in finalize
			}
			killed := g.killed
			if killed == "" {
				killed = "worker group killed"
			}
			return fail(fmt.Sprintf("timed out: %s; %s", waiting, killed))
		case ev := <-events:
			switch {
			case ev.exited:
				exited++
				if finishedRank[ev.rank] && pos < len(todo) {
					continue // it ran the whole plan; the others are still reporting
				}
				if pos >= len(todo) {
					if exited == len(workers) && started {
						return pos, false, nil
					}
					continue
				}
				msg := fmt.Sprintf("the worker of %s exited before finishing the point", g.peName(ev.rank))
				if ev.exit != nil {
					msg += " (" + ev.exit.Error() + ")"
				}
				return fail(msg + "; see its output above")
			case ev.msg == nil:
				fmt.Fprintf(o.Stderr, "[pe %d] %s\n", ev.rank, ev.line)
				continue
			}
			m := ev.msg
			switch m.Type {
			case "uid":
				if !started {
					for r := 1; r < g.nranks; r++ {
						if err := start(r, m.UID); err != nil {
							return pos, false, err
						}
					}
					started = true
				}
			case "info":
				if m.Rank == 0 {
					g.placement = m.Job
				}
				if m.Rank == 0 && g.w == nil && g.open != nil {
					if err := g.open(m); err != nil {
						return pos, false, err
					}
				}
			case "done":
				finishedRank[m.Rank] = true
				if pos >= len(todo) && exited == len(workers) {
					return pos, false, nil
				}
			case "fatal":
				return fail(fmt.Sprintf("PE %d: %s", m.Rank, m.Error))
			case "refused": // the job as started cannot run the plan: nothing to record
				return pos, false, &harness.Refused{Why: m.Error}
			case "result":
				if m.Rank < 0 || m.Rank >= g.nranks {
					continue
				}
				// A result counts only for the point it names: another
				// plan's worker (or a confused one) cannot fill this one.
				if it, ok := want[m.Index]; !ok || m.Key != harness.ItemKey(it) {
					return fail(fmt.Sprintf("PE %d reported a result for %q, which is not point %d of this run's plan; its result was not recorded", m.Rank, m.Key, m.Index))
				}
				// Ranks run ahead of each other: keep results until their
				// point is complete.
				pd := pending[m.Index]
				if pd == nil {
					pd = &pendingPoint{outs: make([]*harness.Outcome, g.nranks)}
					pending[m.Index] = pd
				}
				// results[i] is PE m.Rank+i's: this worker's own, or under a
				// launcher rank 0's report of every PE's.
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
				for pos < len(todo) {
					cur := pending[todo[pos].Index]
					if cur == nil || cur.reported < g.nranks {
						break
					}
					delete(pending, todo[pos].Index)
					p := harness.Merge(todo[pos], cur.outs, cur.errs, &o.Plan.Config, g.limits)
					if err := g.record(&p); err != nil {
						return pos, true, err
					}
					pos++
					if p.Status == record.StatusError && o.StopOnError {
						return pos, true, nil
					}
					if pos < len(todo) {
						resetTimer(timer, o.Timeout)
						waiting = timeoutWords(o, false)
					} else {
						resetTimer(timer, 60*time.Second) // finalize
					}
				}
				if pos >= len(todo) && exited == len(workers) {
					return pos, false, nil
				}
			}
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

// spawnProcess starts PE rank's worker process (the hidden __worker
// subcommand) in its own process group, its stdout read as messages.
func spawnProcess(g *group, rank int, uid []byte, events chan<- event) (*worker, error) {
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
		readMessages(stdout, rank, events)
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
		events <- event{rank: rank, exited: true, exit: exitErr(err)}
	}()
	return wk, nil
}

// readMessages turns a worker's output lines into events.
func readMessages(r io.Reader, rank int, events chan<- event) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		line := sc.Text()
		var m harness.Message
		if strings.HasPrefix(line, "{") && json.Unmarshal([]byte(line), &m) == nil && m.Type != "" {
			events <- event{rank: rank, msg: &m}
		} else {
			events <- event{rank: rank, line: line}
		}
	}
}

// timeoutWords says what a timed-out point waited for: the --timeout in
// force, and for the first point of a worker group the start-up allowance
// on top of it.
func timeoutWords(o Options, first bool) string {
	if !first || o.InitTimeout <= o.Timeout {
		return fmt.Sprintf("no result within --timeout %s", o.Timeout)
	}
	return fmt.Sprintf("no result within --timeout %s (plus %s allowed for NVSHMEM start-up before the first point)", o.Timeout, o.InitTimeout-o.Timeout)
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

func exitErr(err error) error {
	if err == nil {
		return nil
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		if st, ok := ee.Sys().(syscall.WaitStatus); ok && st.Signaled() {
			return fmt.Errorf("killed by signal %v", st.Signal())
		}
		return fmt.Errorf("exit status %d", ee.ExitCode())
	}
	return err
}
