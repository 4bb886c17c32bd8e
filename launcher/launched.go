package launcher

import (
	"context"
	"fmt"
	"io"
	"os"
	"strconv"

	"github.com/nvshbench/nvshbench/cuda"
	"github.com/nvshbench/nvshbench/harness"
	"github.com/nvshbench/nvshbench/record"
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
// measures in-process (NVSHMEM's launcher bootstrap), every PE's result of
// a point is gathered at rank 0 (WorkerSpec.Gather), and rank 0 writes the
// results file from them through the same controller loop as a local run
// (group.run). There is no
// controller to restart anything: a point past its timeout is recorded as
// an error and the process exits, so the launcher ends the job.
func RunLaunched(ctx context.Context, o Options, lib cuda.Lib, l Launched, device int) (*Summary, error) {
	spec := harness.WorkerSpec{Rank: l.Rank, NRanks: l.Size, Device: device, Mode: cuda.InitEnv, Gather: true, Nodes: l.Nodes, Launcher: l.By}
	sum := &Summary{Path: o.Out}
	stopped := func() error {
		return &Interrupted{Summary: sum, Next: fmt.Sprintf("resuming is not supported under %s (every rank must run the same points): start the job again with a new --out", l.By)}
	}
	// Every rank that sees the file refuses (all of them on a shared
	// filesystem): none would start NVSHMEM and wait for the others.
	if _, err := os.Lstat(o.Out); err == nil {
		return nil, &record.Unusable{Why: fmt.Sprintf("%s exists: under %s every rank must run the same points, so resuming is not supported; start the job again with a new --out", o.Out, l.By)}
	}
	if l.Rank != 0 {
		// This rank's worker may be blocked in a point that will never
		// end (its peer gone): a signal ends the rank without it.
		done := make(chan error, 1)
		go func() { done <- harness.RunWorker(lib, spec, o.Plan, harness.NewEmitter(io.Discard)) }()
		select {
		case err := <-done:
			return nil, err
		case <-ctx.Done():
			return nil, &Interrupted{Next: fmt.Sprintf("rank %d writes no results: rank 0 keeps the points it wrote to %s", l.Rank, o.Out)}
		}
	}
	if o.Stderr == nil {
		o.Stderr = io.Discard
	}
	g := &group{o: o, nranks: 1, limits: map[string]float64{}, sum: sum, total: len(o.Plan.Items),
		killed: "the job must be restarted (" + l.By + ")"}
	defer func() {
		if g.w != nil {
			g.w.Close()
		}
	}()
	// The file is created once NVSHMEM is up and rank 0 knows every rank's
	// GPU, node and capabilities (its info message): the header describes
	// the whole job.
	g.open = func(info *harness.Message) error {
		h := o.Header
		if info != nil {
			if info.Caps != nil {
				h.Capabilities = info.Caps
			}
			// The versions of the libraries as loaded (rank 0's: NVSHMEM's
			// vendor version, NCCL's ncclGetVersion), not as the toolchain
			// found them: a folder given by NVSHMEM_HOME has no version of
			// its own, and a build may load another library than it found.
			h.NVSHMEM, h.Notes = LoadedVersion("NVSHMEM", h.NVSHMEM, info.NVSHMEM, h.Notes)
			h.NCCL, h.Notes = LoadedVersion("NCCL", h.NCCL, info.NCCL, h.Notes)
			h.Pair = info.Pair
			if info.PairWhy != "" {
				h.Notes = append(h.Notes, "point-to-point rows: "+info.PairWhy)
			}
			if info.Sensors != "" {
				h.Notes = append(h.Notes, info.Sensors)
			}
			if len(info.Job) > 0 {
				h.GPUs = info.Job
				hosts := map[string]bool{}
				for _, gpu := range info.Job {
					hosts[gpu.Host] = true
				}
				h.Nodes = len(hosts)
			}
		}
		w, err := record.Create(o.Out, h)
		g.w = w
		return err
	}
	g.spawn = func(g *group, rank int, _ []byte, in *inbox) (*worker, error) {
		pr, pw := io.Pipe()
		wk := &worker{rank: rank, done: make(chan struct{})}
		read := make(chan struct{})
		go func() {
			readMessages(pr, rank, in)
			close(read)
		}()
		go func() {
			err := harness.RunWorker(lib, spec, o.Plan, harness.NewEmitter(pw))
			pw.Close()
			<-read
			close(wk.done)
			in.send(event{rank: rank, exited: true, exit: err})
		}()
		return wk, nil
	}
	if o.Progress != nil {
		o.Progress.Start(len(o.Plan.Items))
		defer o.Progress.Finish()
	}
	n, failed, err := g.run(ctx, o.Plan.Items)
	switch {
	case err != nil && ctx.Err() != nil:
		return sum, stopped()
	case err != nil:
		return sum, err
	case failed || n < len(o.Plan.Items):
		return sum, fmt.Errorf("a point failed the job (see its record); %d point(s) written to %s", sum.Points, o.Out)
	}
	return sum, nil
}

// LoadedVersion is the version a library reported as loaded, where it did,
// else the one found with the toolchain; a difference between the two is
// said in the header's notes.
func LoadedVersion(lib, found, loaded string, notes []string) (string, []string) {
	if loaded == "" {
		return found, notes
	}
	if found != "" && found != loaded {
		notes = append(notes, fmt.Sprintf("%s: the toolchain found %s, the job loaded %s (recorded)", lib, found, loaded))
	}
	return loaded, notes
}
