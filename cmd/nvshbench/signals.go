package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

// signalled is a command ended by a signal: exit 128 + the signal's number
// (130 for SIGINT, 143 for SIGTERM, 129 for SIGHUP), whatever error the
// interruption left it with.
type signalled struct {
	sig syscall.Signal
	err error
}

func (e signalled) Error() string {
	if e.err == nil {
		return "interrupted by " + e.sig.String()
	}
	return e.err.Error()
}
func (e signalled) Unwrap() error { return e.err }

// interruptible runs fn with a context that the first SIGINT, SIGTERM or
// SIGHUP cancels (fn stops launching, kills its workers, keeps what it
// wrote); the signal's default action is then back, so a second one ends
// the process at once (the workers die with it: their parent-death
// signal). An error fn returns after a signal is that signal's exit.
func interruptible(parent context.Context, stderr io.Writer, fn func(ctx context.Context) error) error {
	ctx, cancel := context.WithCancelCause(parent)
	defer cancel(nil)
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
	defer signal.Stop(ch)
	go func() {
		select {
		case s := <-ch:
			signal.Stop(ch)
			fmt.Fprintf(stderr, "nvshbench: %v: stopping; the points written are kept (a second signal ends it at once)\n", s)
			cancel(signalled{sig: s.(syscall.Signal)})
		case <-ctx.Done():
		}
	}()
	err := fn(ctx)
	if s, ok := context.Cause(ctx).(signalled); ok && err != nil {
		return signalled{sig: s.sig, err: err}
	}
	return err
}
