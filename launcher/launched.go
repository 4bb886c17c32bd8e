package launcher

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strconv"
	"time"

	"github.com/nvshbench/nvshbench/cuda"
	"github.com/nvshbench/nvshbench/harness"
	"github.com/nvshbench/nvshbench/results"
)

// Launched describes this process's place in a job started by srun or
// mpirun: one nvshbench per GPU, NVSHMEM bootstrapped by the launcher.
type Launched struct {
	Rank, Size, LocalRank, Nodes int
	By                           string // slurm, openmpi, pmi
}

// DetectLauncher reads rank and size from the launcher's environment
// (Slurm, Open MPI, MPICH/Hydra PMI). ok is false outside a multi-process job
// or when NVSHBENCH_NO_LAUNCHER=1.
func DetectLauncher() (l Launched, ok bool) {
	if os.Getenv("NVSHBENCH_NO_LAUNCHER") == "1" {
		return l, false
	}
	geti := func(k string) int {
		v, err := strconv.Atoi(os.Getenv(k))
		if err != nil {
			return -1
		}
		return v
	}
	for _, c := range []struct{ by, rank, size, local, nodes string }{
		{"openmpi", "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_RANK", ""},
		{"slurm", "SLURM_PROCID", "SLURM_NTASKS", "SLURM_LOCALID", "SLURM_NNODES"},
		{"pmi", "PMI_RANK", "PMI_SIZE", "MPI_LOCALRANKID", ""},
	} {
		r, s := geti(c.rank), geti(c.size)
		if r < 0 || s <= 1 {
			continue
		}
		l = Launched{Rank: r, Size: s, LocalRank: geti(c.local), Nodes: 1, By: c.by}
		if l.LocalRank < 0 {
			l.LocalRank = r
		}
		if c.nodes != "" && geti(c.nodes) > 0 {
			l.Nodes = geti(c.nodes)
		} else if ls := geti("OMPI_COMM_WORLD_LOCAL_SIZE"); ls > 0 {
			l.Nodes = (s + ls - 1) / ls
		}
		return l, true
	}
	return l, false
}

// RunLaunched runs the plan as one PE of a launcher-started job: every rank
// measures in-process (NVSHMEM's launcher bootstrap), rank 0 writes the
// results file from its own timing and the job-wide verification totals.
// There is no controller to restart anything: a point past its timeout is
// recorded as an error and the process exits, so the launcher ends the job.
func RunLaunched(ctx context.Context, o Options, lib cuda.Lib, l Launched, device int) (*Summary, error) {
	spec := harness.WorkerSpec{Rank: l.Rank, NRanks: l.Size, Device: device, Mode: cuda.InitEnv}
	if l.Rank != 0 {
		em := harness.NewEmitter(io.Discard)
		return nil, harness.RunWorker(lib, spec, o.Plan, em)
	}
	if _, err := os.Stat(o.Out); err == nil {
		return nil, fmt.Errorf("%s exists: under a launcher every rank must run the same points, so resuming is not supported; choose a new --out", o.Out)
	}
	// The file is created once NVSHMEM is up and rank 0 knows every rank's
	// GPU and node (its info message): the header describes the whole job.
	var w *results.Writer
	defer func() {
		if w != nil {
			w.Close()
		}
	}()
	sum := &Summary{Path: o.Out}
	g := &group{o: o, nranks: 1, limits: map[string]float64{}, sum: sum, total: len(o.Plan.Items)}
	if o.Progress != nil {
		o.Progress.Start(len(o.Plan.Items))
		defer o.Progress.Finish()
	}
	open := func(job []results.GPU, caps *results.Capabilities) error {
		h := o.Header
		if caps != nil {
			h.Capabilities = caps
		}
		if len(job) > 0 {
			h.GPUs = job
			hosts := map[string]bool{}
			for _, gpu := range job {
				hosts[gpu.Host] = true
			}
			h.Nodes = len(hosts)
		}
		var err error
		w, err = results.Create(o.Out, h)
		g.w = w
		return err
	}
	pr, pw := io.Pipe()
	werr := make(chan error, 1)
	go func() {
		err := harness.RunWorker(lib, spec, o.Plan, harness.NewEmitter(pw))
		pw.CloseWithError(err)
		werr <- err
	}()
	lines := make(chan []byte)
	go func() {
		sc := bufio.NewScanner(pr)
		sc.Buffer(make([]byte, 1<<20), 64<<20)
		for sc.Scan() {
			lines <- append([]byte(nil), sc.Bytes()...)
		}
		close(lines)
	}()
	byIndex := map[int]harness.Item{}
	for _, it := range o.Plan.Items {
		byIndex[it.Index] = it
	}
	timeout := o.InitTimeout
	if timeout <= 0 {
		timeout = 180 * time.Second
	}
	waiting := timeoutWords(o, true)
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	current := -1
	for {
		select {
		case <-ctx.Done():
			return sum, interrupted(sum)
		case <-timer.C:
			if w == nil {
				if err := open(nil, nil); err != nil {
					return sum, err
				}
			}
			if it, ok := byIndex[current]; ok {
				p := results.Point{ID: it.ID, Params: it.Params, Status: results.StatusError,
					Reason: fmt.Sprintf("timed out under %s: %s; the job must be restarted", l.By, waiting), Time: time.Now().UTC().Format(time.RFC3339)}
				g.record(&p)
			}
			return sum, fmt.Errorf("a point timed out (%s); %d point(s) written to %s", waiting, sum.Points, o.Out)
		case line, ok := <-lines:
			if !ok {
				if err := <-werr; err != nil {
					return sum, err
				}
				return sum, nil
			}
			var m harness.Message
			if err := json.Unmarshal(line, &m); err != nil {
				continue
			}
			if w == nil && m.Type != "info" {
				if err := open(nil, nil); err != nil {
					return sum, err
				}
			}
			switch m.Type {
			case "info":
				if w == nil {
					if err := open(m.Job, m.Caps); err != nil {
						return sum, err
					}
				}
			case "start":
				current = m.Index
				resetTimer(timer, timeout)
			case "result":
				it, ok := byIndex[m.Index]
				if !ok {
					continue
				}
				var errs []string
				var out *harness.Outcome
				if m.Error != "" {
					errs = []string{fmt.Sprintf("PE 0: %s", m.Error)}
				} else if m.Outcome != nil {
					job := *m.Outcome
					job.Checked, job.Errors, job.Bytes = m.Outcome.JobChecked, m.Outcome.JobErrors, m.Outcome.JobBytes
					out = &job
				}
				p := harness.Merge(it, []*harness.Outcome{out}, errs, &o.Plan.Config, g.limits)
				if err := g.record(&p); err != nil {
					return sum, err
				}
				timeout, waiting = o.Timeout, timeoutWords(o, false)
			}
		}
	}
}
