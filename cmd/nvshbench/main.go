// Command nvshbench characterizes GPU communication: device-initiated NVSHMEM
// RMA, latency and collectives against NCCL, written to one results format
// and rendered as the tables and charts of "Demystifying NVSHMEM".
//
// Pipeline: run | reproduce write a results file; report, plot, compare
// and model read results files and work on any machine.
package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"syscall"

	"github.com/nvshbench/nvshbench/internal/table"
	"github.com/nvshbench/nvshbench/launcher"
	"github.com/nvshbench/nvshbench/record"
)

// Exit codes, mapped from errors in one place (exitCode).
const (
	exitOK         = 0
	exitError      = 1   // the command failed (bad file, GPU error, ...)
	exitUsage      = 2   // bad flags or arguments
	exitRegression = 3   // compare found a regression beyond the threshold, or failed / missing points
	exitNoGPU      = 4   // a GPU command on a machine without a usable GPU / shim
	exitCheckFail  = 5   // check judged something FAIL
	exitSignal     = 128 // + the signal's number: interrupted (SIGINT 130, SIGTERM 143, SIGHUP 129); the points written are kept
)

// usageError marks errors caused by how the command was called.
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

func usagef(format string, a ...any) error { return usageError{fmt.Errorf(format, a...)} }

// regressionError is returned by compare when a regression is found, or
// points failed or are missing in a candidate.
type regressionError struct{ n, failed int }

func (e regressionError) Error() string {
	msg := fmt.Sprintf("%d regression(s) beyond the threshold", e.n)
	if e.failed > 0 {
		msg += fmt.Sprintf("; %d point(s) failed or missing in a candidate (FAILED / MISSING rows; --allow-failed lets them pass)", e.failed)
	}
	return msg
}

// noGPUError is returned by GPU commands when no GPU or shim is usable.
type noGPUError struct{ err error }

func (e noGPUError) Error() string { return e.err.Error() }
func (e noGPUError) Unwrap() error { return e.err }

func exitCode(err error) int {
	if err == nil {
		return exitOK
	}
	var u usageError
	var r regressionError
	var g noGPUError
	var m *record.SetupMismatch
	var busy *record.InUse
	var bad *record.Unusable
	var sig signalled
	var cf failedCheck
	var in *launcher.Interrupted
	switch {
	case errors.As(err, &sig):
		return exitSignal + int(sig.sig)
	case errors.As(err, &in): // a run whose context ended without a signal
		return exitSignal + int(syscall.SIGINT)
	case errors.As(err, &u), errors.As(err, &m), errors.As(err, &busy), errors.As(err, &bad):
		return exitUsage
	case errors.As(err, &r):
		return exitRegression
	case errors.As(err, &g):
		return exitNoGPU
	case errors.As(err, &cf):
		return exitCheckFail
	}
	return exitError
}

// Version and Commit are set with -ldflags -X.
var (
	Version = "dev"
	Commit  = ""
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// run executes the CLI with args and returns the exit code; nothing below it
// exits the process.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	root := newRootCmd(stdin, stdout, stderr)
	root.SetArgs(args)
	err := root.Execute()
	if err != nil {
		// A file name or a value the user gave may hold control characters:
		// escaped, never sent raw to the terminal.
		fmt.Fprintf(stderr, "nvshbench: %s\n", table.Printable(err.Error()))
	}
	return exitCode(err)
}
