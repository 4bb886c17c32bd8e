package launcher

import (
	"bytes"
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/nvshbench/nvshbench/cuda"
	"github.com/nvshbench/nvshbench/harness"
	"github.com/nvshbench/nvshbench/record"

	// Every suite: the default selection, as a plain run measures it.
	_ "github.com/nvshbench/nvshbench/suites/collectives"
	_ "github.com/nvshbench/nvshbench/suites/host"
	_ "github.com/nvshbench/nvshbench/suites/latency"
	_ "github.com/nvshbench/nvshbench/suites/moe"
	_ "github.com/nvshbench/nvshbench/suites/persm"
	_ "github.com/nvshbench/nvshbench/suites/rma"
)

// TestMain lets this test binary serve as the workers the controller
// starts (os.Executable is the test binary): NVSHBENCH_TEST_WORKER says
// which kind.
//
//	fake   harness.RunWorker on the fake GPU, as nvshbench's own worker runs it
//	flood  lines on stdout as fast as the pipe takes them, never a result
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == "__worker" {
		os.Exit(testWorker())
	}
	os.Exit(m.Run())
}

func testWorker() int {
	switch os.Getenv("NVSHBENCH_TEST_WORKER") {
	case "flood":
		line := bytes.Repeat([]byte("x"), 15)
		line = append(line, '\n')
		for {
			if _, err := os.Stdout.Write(line); err != nil {
				return 1
			}
		}
	case "fake":
		var rank, nranks int
		for i, a := range os.Args {
			switch a {
			case "--rank":
				rank, _ = strconv.Atoi(os.Args[i+1])
			case "--nranks":
				nranks, _ = strconv.Atoi(os.Args[i+1])
			}
		}
		plan, err := harness.ReadPlan("-")
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		spec := harness.WorkerSpec{Rank: rank, NRanks: nranks, Mode: cuda.InitUID}
		if v := os.Getenv("NVSHBENCH_UID"); v != "" {
			spec.UID, _ = hex.DecodeString(v)
		}
		if err := harness.RunWorker(cuda.NewFake(), spec, plan, harness.NewEmitter(os.Stdout)); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		return 0
	}
	fmt.Fprintln(os.Stderr, "NVSHBENCH_TEST_WORKER: want fake or flood")
	return 2
}

// testOptions is a run of plan by worker processes of this test binary.
func testOptions(t testing.TB, kind string, plan harness.Plan, pes int) Options {
	return Options{Exe: os.Args[0], Env: append(os.Environ(), "NVSHBENCH_TEST_WORKER="+kind), GPUs: 1, PEsPerGPU: pes,
		Plan: plan, Out: filepath.Join(t.TempDir(), "r.jsonl"), Header: record.Header{Tool: "nvshbench"},
		Timeout: 30 * time.Second, Startup: 30 * time.Second}
}

func testPlan(t testing.TB, samples int, ids ...string) harness.Plan {
	t.Helper()
	benches, err := harness.Select(ids)
	if err != nil {
		t.Fatal(err)
	}
	cfg := harness.DefaultConfig()
	cfg.Samples, cfg.PEs = samples, 1
	return harness.BuildPlan(benches, &cfg)
}

// runBounded is Run that fails the test where it does not return within
// limit (the hang this guards against leaves it waiting for ever): ok is
// false then.
func runBounded(t *testing.T, ctx context.Context, o Options, limit time.Duration) (sum *Summary, err error, ok bool) {
	t.Helper()
	type res struct {
		s   *Summary
		err error
	}
	done := make(chan res, 1)
	go func() {
		s, err := Run(ctx, o)
		done <- res{s, err}
	}()
	select {
	case r := <-done:
		return r.s, r.err, true
	case <-time.After(limit):
		buf := make([]byte, 1<<20)
		t.Errorf("Run did not return within %s:\n%s", limit, buf[:runtime.Stack(buf, true)])
		return nil, nil, false
	}
}

// slowWriter is a terminal that takes its time (a slow ssh link, a
// paused scroll): the controller passes the workers' lines through it.
type slowWriter struct{}

func (slowWriter) Write(b []byte) (int, error) {
	time.Sleep(100 * time.Microsecond)
	return len(b), nil
}

// An interrupt while a worker writes faster than the controller reads:
// the readers must not block on events nobody reads any more, or the
// kill that ends the group waits on them for ever.
func TestInterruptWhileAWorkerFloods(t *testing.T) {
	o := testOptions(t, "flood", testPlan(t, 3, "rma/put/block"), 1)
	o.Stderr = slowWriter{}
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(300*time.Millisecond, cancel)
	start := time.Now()
	_, err, ok := runBounded(t, ctx, o, 10*time.Second)
	if !ok {
		return
	}
	var in *Interrupted
	if !errors.As(err, &in) {
		t.Fatalf("after the interrupt: %v, want Interrupted", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("the interrupted run took %s to end", d)
	}
}

// slowProgress is a progress bar on a terminal that takes its time to
// redraw: the controller falls behind workers that report quickly.
type slowProgress struct{}

func (slowProgress) Start(int)                     {}
func (slowProgress) Point(*record.Point, int, int) { time.Sleep(time.Millisecond) }
func (slowProgress) Finish()                       {}

// Interrupts at random moments of runs of two fake workers, whose
// controller draws a slow progress bar: every run returns within a few
// seconds, interrupted or finished, and the file holds every point the
// summary counts, valid.
func TestInterruptAtRandomMoments(t *testing.T) {
	trials := 200
	if testing.Short() {
		trials = 50
	}
	plan := testPlan(t, 50)
	var wg sync.WaitGroup
	sem := make(chan struct{}, 4)
	var mu sync.Mutex
	interrupted := 0
	for i := 0; i < trials; i++ {
		wg.Add(1)
		sem <- struct{}{}
		go func(i int) {
			defer wg.Done()
			defer func() { <-sem }()
			o := testOptions(t, "fake", plan, 1)
			o.Progress = slowProgress{}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			time.AfterFunc(time.Duration(rand.Int64N(int64(600*time.Millisecond))), cancel)
			sum, err, ok := runBounded(t, ctx, o, 10*time.Second)
			if !ok {
				return
			}
			var in *Interrupted
			switch {
			case errors.As(err, &in):
				mu.Lock()
				interrupted++
				mu.Unlock()
			case err != nil:
				t.Errorf("trial %d: %v", i, err)
				return
			}
			if sum == nil {
				t.Errorf("trial %d: no summary", i)
				return
			}
			f, err := record.ReadFile(o.Out)
			if err != nil {
				if sum.Points > 0 {
					t.Errorf("trial %d: %d point(s) counted, the file does not read: %v", i, sum.Points, err)
				}
				return
			}
			if len(f.Points) != sum.Points {
				t.Errorf("trial %d: %d point(s) counted, %d in the file", i, sum.Points, len(f.Points))
			}
		}(i)
	}
	wg.Wait()
	if interrupted < trials/2 {
		t.Errorf("only %d of %d trials were interrupted: the moments miss the runs", interrupted, trials)
	}
}
