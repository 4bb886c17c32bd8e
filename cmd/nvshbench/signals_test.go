package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/nvshbench/nvshbench/record"
)

// stubborn is the test binary's stand-in for a command whose clean-up
// takes long after the first signal (TestMain runs it): interruptible's
// second signal must end it at once.
func stubborn() int {
	err := interruptible(context.Background(), os.Stderr, func(ctx context.Context) error {
		fmt.Println("started")
		<-ctx.Done()
		fmt.Println("stopping")
		time.Sleep(time.Minute)
		return ctx.Err()
	})
	return exitCode(err)
}

// child is this test binary started as nvshbench (NVSHBENCH_TEST_CLI=1,
// env added), its stderr kept: the runs the signals are sent to.
type child struct {
	cmd    *exec.Cmd
	stderr bytes.Buffer
	done   chan error
}

func startChild(t *testing.T, env []string, args ...string) (*child, error) {
	c := &child{cmd: exec.Command(os.Args[0], args...), done: make(chan error, 1)}
	c.cmd.Env = append(append(os.Environ(), "NVSHBENCH_TEST_CLI=1"), env...)
	c.cmd.Stderr = &c.stderr
	if err := c.cmd.Start(); err != nil {
		return nil, err
	}
	go func() { c.done <- c.cmd.Wait() }()
	return c, nil
}

// waitFor polls ready until it holds; after limit the child is killed and
// the test fails naming what it waited for.
func (c *child) waitFor(t *testing.T, limit time.Duration, what string, ready func() bool) {
	t.Helper()
	for deadline := time.Now().Add(limit); !ready(); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			c.cmd.Process.Kill()
			t.Fatalf("%s: not within %s:\n%s", what, limit, lastLines(c.stderr.String(), 5))
		}
	}
}

// end waits for the child to end, limit at most (then it is killed and ok
// is false), and returns how it ended.
func (c *child) end(limit time.Duration) (err error, ok bool) {
	select {
	case err = <-c.done:
		return err, true
	case <-time.After(limit):
		c.cmd.Process.Kill()
		return <-c.done, false
	}
}

// exitOf is a child's exit status (0 for none: it succeeded; -1 ended by
// a signal) and whether a signal ended it, which.
func exitOf(err error) (code int, sig syscall.Signal) {
	var ee *exec.ExitError
	if !errors.As(err, &ee) {
		return 0, 0
	}
	if st, ok := ee.Sys().(syscall.WaitStatus); ok && st.Signaled() {
		return ee.ExitCode(), st.Signal()
	}
	return ee.ExitCode(), 0
}

// morePoints: the results file at path reads and holds more than n points.
func morePoints(path string, n int) func() bool {
	return func() bool {
		f, err := record.ReadFile(path)
		return err == nil && len(f.Points) > n
	}
}

// Runs interrupted at random moments by SIGINT or SIGTERM, real processes
// on the fake GPU: each ends within a few seconds with 130 (SIGINT) or 143
// (SIGTERM), says so, keeps every point it had written (the file reads),
// and leaves no worker behind.
func TestSignalsEndARunAtOnce(t *testing.T) {
	trials := 24
	if testing.Short() {
		trials = 8
	}
	var wg sync.WaitGroup
	sem := make(chan struct{}, 4)
	for i := 0; i < trials; i++ {
		wg.Add(1)
		sem <- struct{}{}
		go func(i int) {
			defer wg.Done()
			defer func() { <-sem }()
			sig, want := syscall.SIGINT, 130
			if i%2 == 1 {
				sig, want = syscall.SIGTERM, 143
			}
			out := filepath.Join(t.TempDir(), "sig.jsonl")
			tag := fmt.Sprintf("NVSHBENCH_TEST_TAG=sig-%d-%d-%d", os.Getpid(), i, time.Now().UnixNano())
			c, err := startChild(t, []string{tag}, "run", "--shim", "fake", "--samples", "50", "--timeout", "60s", "--out", out)
			if err != nil {
				t.Error(err)
				return
			}
			time.Sleep(100*time.Millisecond + time.Duration(rand.Int64N(int64(1400*time.Millisecond))))
			before := 0
			if f, err := record.ReadFile(out); err == nil {
				before = len(f.Points)
			}
			c.cmd.Process.Signal(sig)
			sent := time.Now()
			err, ok := c.end(10 * time.Second)
			if !ok {
				t.Errorf("trial %d: %v did not end the run within 10 s:\n%s", i, sig, lastLines(c.stderr.String(), 5))
				return
			}
			if d := time.Since(sent); d > 5*time.Second {
				t.Errorf("trial %d: the run took %s to end after %v", i, d.Round(time.Millisecond), sig)
			}
			code, by := exitOf(err)
			// Ended by the signal's default action: only before the command
			// installed its handler, when nothing is written.
			_, serr := os.Lstat(out)
			early := by == sig && os.IsNotExist(serr)
			switch {
			case code == want && strings.Contains(c.stderr.String(), "interrupted"):
			case code == 0 && strings.Contains(c.stderr.String(), "point(s) written"): // it had finished
			case early:
			default:
				t.Errorf("trial %d: after %v: exit %d (%v), want %d:\n%s", i, sig, code, err, want, lastLines(c.stderr.String(), 5))
			}
			if f, err := record.ReadFile(out); err != nil && before > 0 {
				t.Errorf("trial %d: %d point(s) written before %v, the file no longer reads: %v", i, before, sig, err)
			} else if f != nil && len(f.Points) < before {
				t.Errorf("trial %d: %d point(s) before %v, %d after", i, before, sig, len(f.Points))
			}
			deadline := time.Now().Add(5 * time.Second)
			for len(workersOf(t, tag)) > 0 {
				if time.Now().After(deadline) {
					left := workersOf(t, tag)
					for _, pid := range left {
						syscall.Kill(pid, syscall.SIGKILL)
					}
					t.Errorf("trial %d: workers %v outlived the run", i, left)
					break
				}
				time.Sleep(50 * time.Millisecond)
			}
		}(i)
	}
	wg.Wait()
}

// A second signal ends the process at once, whatever the first one's
// clean-up is doing.
func TestSecondSignalEndsAtOnce(t *testing.T) {
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), "NVSHBENCH_TEST_STUBBORN=1")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	lines := make(chan string, 4)
	go func() {
		b := make([]byte, 256)
		var acc []byte
		for {
			n, err := stdout.Read(b)
			acc = append(acc, b[:n]...)
			for {
				i := bytes.IndexByte(acc, '\n')
				if i < 0 {
					break
				}
				lines <- string(acc[:i])
				acc = acc[i+1:]
			}
			if err != nil {
				close(lines)
				io.Copy(io.Discard, stdout)
				return
			}
		}
	}()
	expect := func(want string) {
		select {
		case l := <-lines:
			if l != want {
				t.Fatalf("got %q, want %q", l, want)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("no %q within 10 s", want)
		}
	}
	expect("started")
	cmd.Process.Signal(syscall.SIGTERM)
	expect("stopping")
	cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if _, sig := exitOf(err); sig != syscall.SIGTERM {
			t.Errorf("after the second SIGTERM: %v, want the process ended by the signal", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the second SIGTERM did not end the process within 5 s")
	}
}

// Under a launcher every rank ends at once on the signal the launcher
// passes on (srun and mpirun send SIGTERM to every task): rank 0 with 143,
// its points kept and the advice that works there (resuming does not: a
// new --out), a rank blocked in a point that will never end alike.
func TestSignalEndsEveryLaunchedRank(t *testing.T) {
	for _, rank := range []string{"0", "1"} {
		out := filepath.Join(t.TempDir(), "launched.jsonl")
		c, err := startChild(t, []string{"NVSHBENCH_FAKE_HANG_SIZE=4096", "NVSHMEM_BOOTSTRAP=", "NVSHMEM_BOOTSTRAP_PMI=",
			"SLURM_MPI_TYPE=", "SLURM_PROCID=" + rank, "SLURM_NTASKS=2", "SLURM_LOCALID=" + rank, "SLURM_NNODES=1"},
			"run", "--shim", "fake", "--sizes", "1K,4K", "--samples", "2", "--timeout", "60s", "--out", out, "rma/put/block")
		if err != nil {
			t.Fatal(err)
		}
		if rank == "0" {
			c.waitFor(t, 20*time.Second, "rank 0 writes the 1 KiB point (4 KiB never ends)", morePoints(out, 1))
		}
		time.Sleep(500 * time.Millisecond)
		c.cmd.Process.Signal(syscall.SIGTERM)
		err, ok := c.end(5 * time.Second)
		if code, _ := exitOf(err); !ok || code != 143 {
			t.Errorf("rank %s after SIGTERM: %v (ended within 5 s: %v), want exit 143:\n%s", rank, err, ok, c.stderr.String())
			continue
		}
		if rank != "0" {
			continue
		}
		msg := c.stderr.String()
		if strings.Contains(msg, "run the same command again") || !strings.Contains(msg, "resuming is not supported under slurm") {
			t.Errorf("rank 0's advice after the interrupt:\n%s", msg)
		}
		if f := mustRead(t, out); len(f.Points) < 2 {
			t.Errorf("the points written were lost: %d left", len(f.Points))
		}
	}
}

// scancel and a terminal's hang-up signal every process of the job, the
// workers too: a worker that dies of the signal a moment before the
// controller gets it is part of the interruption, not a failure of the
// point in progress (no error record, exit 143).
func TestWorkerSignalledWithItsController(t *testing.T) {
	out := filepath.Join(t.TempDir(), "both.jsonl")
	tag := fmt.Sprintf("NVSHBENCH_TEST_TAG=both-%d-%d", os.Getpid(), time.Now().UnixNano())
	c, err := startChild(t, []string{"NVSHBENCH_FAKE_HANG_SIZE=4096", tag},
		"run", "--shim", "fake", "--sizes", "1K,4K", "--samples", "2", "--timeout", "60s", "--out", out, "rma/put/block")
	if err != nil {
		t.Fatal(err)
	}
	written := morePoints(out, 1)
	c.waitFor(t, 20*time.Second, "the 1 KiB point written, the worker in the hung 4 KiB one", func() bool {
		return written() && len(workersOf(t, tag)) == 1
	})
	time.Sleep(200 * time.Millisecond)
	for _, pid := range workersOf(t, tag) {
		syscall.Kill(pid, syscall.SIGTERM)
	}
	time.Sleep(100 * time.Millisecond)
	c.cmd.Process.Signal(syscall.SIGTERM)
	err, _ = c.end(20 * time.Second)
	if code, _ := exitOf(err); code != 143 {
		t.Errorf("exit %v, want 143:\n%s", err, lastLines(c.stderr.String(), 4))
	}
	for _, p := range mustRead(t, out).Points {
		if p.Status == record.StatusError {
			t.Errorf("%s %s recorded as an error: %s", p.ID, p.Params.Key(), p.Reason)
		}
	}
}
