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
	"path/filepath"
	"syscall"

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
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// env is what a command needs from its surroundings.
type env struct {
	stdout, stderr io.Writer
	tty            bool // stderr is a terminal: draw the live progress line
}

func run(args []string, stdout, stderr io.Writer) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	go func() {
		// After the first signal, restore the default behaviour: a second one kills.
		<-ctx.Done()
		stop()
	}()
	if len(args) > 0 && args[0] == "bench" { // the scaling sweep parses its own flags (benchcmd.go)
		return runBenchCommand(ctx, args[1:], stdout, stderr)
	}
	if len(args) == 2 && args[0] == "help" && args[1] == "bench" {
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

// fail prints err as one line and returns its exit status.
func fail(stderr io.Writer, ctx context.Context, err error) int {
	code := exitCode(ctx, err)
	msg := oneLine(err.Error())
	if code == exitInterrupted {
		msg = "interrupted: no output was written (outputs of this run were removed)"
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

// outputs tracks the files and folders a run creates, so that a failed run can remove them.
type outputs struct {
	files []string
	dirs  []string // folders this run created, removed when empty
}

func (o *outputs) add(path string) { o.files = append(o.files, path) }

// mkdir creates dir (and missing parents) and remembers what it created.
func (o *outputs) mkdir(flagName, dir string) error {
	var missing []string
	for d := filepath.Clean(dir); ; d = filepath.Dir(d) {
		fi, err := os.Stat(d)
		if err == nil {
			if !fi.IsDir() {
				return badInput("choose a folder path", "-%s %q: %s is not a folder", flagName, clip(dir), clip(d))
			}
			break
		}
		missing = append(missing, d)
		if p := filepath.Dir(d); p == d {
			break
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return badInput("choose a writable folder", "-%s %q cannot be created (%v)", flagName, clip(dir), unwrapPath(err))
	}
	o.dirs = append(o.dirs, missing...) // deepest first
	return nil
}

// cleanup removes everything the run wrote.
func (o *outputs) cleanup() {
	for i := len(o.files) - 1; i >= 0; i-- {
		os.Remove(o.files[i])
	}
	for _, d := range o.dirs {
		os.Remove(d) // only succeeds when empty
	}
	o.files, o.dirs = nil, nil
}

// checkWritable fails unless a file can be created at path (without creating it): its folder
// must exist and accept new files, and path must not be a folder.
func checkWritable(flagName, path string) error {
	if fi, err := os.Stat(path); err == nil && fi.IsDir() {
		return badInput("give a file name", "-%s %q is a folder", flagName, clip(path))
	}
	dir := filepath.Dir(path)
	fi, err := os.Stat(dir)
	if err != nil || !fi.IsDir() {
		return badInput("create the folder first or choose another path", "-%s %q: folder %s does not exist", flagName, clip(path), clip(dir))
	}
	f, err := os.CreateTemp(dir, ".glle-bench-probe*")
	if err != nil {
		return badInput("choose a writable folder", "-%s %q cannot be written (%v)", flagName, clip(path), unwrapPath(err))
	}
	name := f.Name()
	f.Close()
	os.Remove(name)
	return nil
}

// unwrapPath drops the path from *os.PathError so messages do not repeat it.
func unwrapPath(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// writeError turns a failed write of an output into a bad-input error (the usual cause is a
// path that cannot be written).
func writeError(flagName, path string, err error) error {
	if errors.Is(err, context.Canceled) {
		return err
	}
	return badInput("choose a writable output path", "-%s %q cannot be written (%v)", flagName, clip(path), unwrapPath(err))
}
