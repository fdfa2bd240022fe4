package main

// The binary is thin: every numeric step is in glle/engine and glle/bench; this package parses
// flags, reads and writes files, prints progress and the run summary, and plots. Run
// 'glle-bench help' for the commands.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
	"syscall"
	"time"

	"glle/engine"
)

// Exit statuses.
const (
	exitOK          = 0
	exitFailure     = 1
	exitBadInput    = 2
	exitInterrupted = 130
)

func main() {
	// A closed pipe on standard output or error (glle-bench bench | head) makes the write
	// return EPIPE instead of killing the process, which then still writes -json, removes its
	// scratch files and exits with a status (bench: stdoutWriter).
	signal.Ignore(syscall.SIGPIPE)
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// stdoutWriter remembers the first failed write to standard output; later writes are dropped.
type stdoutWriter struct {
	w   io.Writer
	err error
}

func (s *stdoutWriter) Write(p []byte) (int, error) {
	if s.err != nil {
		return len(p), nil
	}
	n, err := s.w.Write(p)
	s.err = err
	return n, err
}

// closedErr is the error of a run whose standard output was closed.
func (s *stdoutWriter) closedErr(what string) error {
	if s.err == nil {
		return nil
	}
	return fmt.Errorf("standard output was closed (%v) before %s", unwrapPath(s.err), what)
}

// env is what a command needs from its surroundings.
type env struct {
	stdout, stderr io.Writer
	tty            bool // stderr is a terminal: draw the live progress line
}

func run(args []string, stdout, stderr io.Writer) int {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	defer func() {
		signal.Stop(sigs) // no send after Stop returns, so closing is safe
		close(sigs)
	}()
	go watchSignals(sigs, cancel, stderr)
	if len(args) > 0 && args[0] == "bench" { // the scaling sweep parses its own flags (benchcmd.go)
		return runBenchCommand(ctx, args[1:], stdout, stderr)
	}
	if len(args) == 2 && slices.Contains([]string{"help", "-h", "-help", "--help"}, args[0]) && args[1] == "bench" {
		return runBenchCommand(ctx, []string{"-h"}, stdout, stderr)
	}

	cfg, err := parseArgs(args)
	if errors.Is(err, errHelp) {
		writeUsage(stdout, cfg.(helpConfig).topic)
		return exitOK
	}
	if err != nil {
		return fail(stderr, ctx, err)
	}
	e := env{stdout: stdout, stderr: stderr, tty: isTerminal(os.Stderr)}
	switch c := cfg.(type) {
	case helpConfig:
		writeUsage(stdout, c.topic)
		return exitOK
	case datasetConfig:
		err = runDataset(ctx, e, c)
	case embedConfig:
		err = runEmbed(ctx, e, c)
	case generateConfig:
		err = runGenerate(ctx, e, c)
	case figuresConfig:
		err = runFigures(ctx, e, c)
	case transformConfig:
		err = runTransform(ctx, e, c)
	}
	if err != nil {
		return fail(stderr, ctx, err)
	}
	return exitOK
}

// forceAfter is how long after the first signal a second one stops the process at once.
// Signals closer together count as one: timeout(1), for one, signals both the command and its
// process group, so the command receives the same interrupt twice.
const forceAfter = 500 * time.Millisecond

// watchSignals cancels the run at the first interrupt or termination signal (the command then
// stops at its next check, removes what it staged and exits 130; a wait for the other end of
// a named pipe stops too, openFIFO). A second signal at least forceAfter later removes the
// staged files and exits 130 at once, unless the outputs are being committed (a few renames),
// which then completes.
func watchSignals(sigs <-chan os.Signal, cancel context.CancelFunc, stderr io.Writer) {
	if _, ok := <-sigs; !ok {
		return
	}
	first := time.Now()
	cancel()
	for range sigs {
		if time.Since(first) >= forceAfter && abandonStaged() {
			fmt.Fprintln(stderr, "glle-bench: interrupted again: stopped at once; no output was written and existing files are unchanged")
			os.Exit(exitInterrupted)
		}
	}
}

// fail prints err as one line and returns its exit status.
func fail(stderr io.Writer, ctx context.Context, err error) int {
	code := exitCode(ctx, err)
	msg := oneLine(err.Error())
	if code == exitInterrupted {
		msg = "interrupted: no output was written and existing files are unchanged"
		if pw := partialPipe.Load(); pw != nil {
			msg = fmt.Sprintf("interrupted: no file was written and existing files are unchanged, but the named pipe %q had already passed %d bytes of its output to its reader", clip(pw.path), pw.bytes)
		}
	}
	fmt.Fprintf(stderr, "glle-bench: %s\n", msg)
	return code
}

func exitCode(ctx context.Context, err error) int {
	var (
		ie *inputError
		ei *engine.InputError
		de *engine.DegenerateError
	)
	switch {
	case ctx.Err() != nil || errors.Is(err, context.Canceled):
		return exitInterrupted
	case errors.As(err, &ie), errors.As(err, &ei), errors.As(err, &de):
		return exitBadInput
	}
	return exitFailure
}

func isTerminal(f *os.File) bool {
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// unwrapPath drops the paths from *os.PathError and *os.LinkError so messages do not repeat
// them.
func unwrapPath(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	var le *os.LinkError
	if errors.As(err, &le) {
		return le.Err
	}
	return err
}

// writeError turns a failed write of an output into a bad-input error (the usual cause is a
// path that cannot be written).
func writeError(flagName, path string, err error) error {
	if errors.Is(err, context.Canceled) {
		return err
	}
	if noSpace(err) {
		// Not a bad argument: the same command succeeds once there is room (exit 1).
		return fmt.Errorf("-%s %q cannot be written (%v): free space on that device or choose another folder", flagName, clip(path), unwrapPath(err))
	}
	// Nor are these (exit 1; they were exit 2 advising "a writable output path" before
	// session 32): the process's file-size limit, and a pipe whose reader has gone.
	if errors.Is(err, syscall.EFBIG) {
		return fmt.Errorf("-%s %q cannot be written (%v): raise the file-size limit (ulimit -f) or choose another device", flagName, clip(path), unwrapPath(err))
	}
	if errors.Is(err, syscall.EPIPE) {
		return fmt.Errorf("-%s %q cannot be written (%v): the reading end of the pipe was closed; keep the reader running until glle-bench exits", flagName, clip(path), unwrapPath(err))
	}
	return badInput("choose a writable output path", "-%s %q cannot be written (%v)", flagName, clip(path), unwrapPath(err))
}
