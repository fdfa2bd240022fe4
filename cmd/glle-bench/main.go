package main

// The binary is thin: every numeric step is in glle/engine and glle/bench; this package parses
// flags, reads and writes files, prints progress and the run summary, and plots. Run
// 'glle-bench help' for the commands.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"sync"
	"syscall"
	"time"

	"glle/bench/dataio"
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
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
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
// stops at its next check, removes what it staged and exits 130). A second signal at least
// forceAfter later removes the staged files and exits 130 at once.
func watchSignals(sigs <-chan os.Signal, cancel context.CancelFunc, stderr io.Writer) {
	if _, ok := <-sigs; !ok {
		return
	}
	first := time.Now()
	cancel()
	for range sigs {
		if time.Since(first) >= forceAfter {
			removeStaged()
			fmt.Fprintln(stderr, "glle-bench: interrupted again: stopped at once; no output was written and existing files are unchanged")
			os.Exit(exitInterrupted)
		}
	}
}

// staging lists the temporary files staged by the running command (see outputs), so that a
// forced exit can remove them.
var staging struct {
	sync.Mutex
	paths map[string]bool
}

func stage(path string, on bool) {
	staging.Lock()
	defer staging.Unlock()
	if staging.paths == nil {
		staging.paths = map[string]bool{}
	}
	if on {
		staging.paths[path] = true
	} else {
		delete(staging.paths, path)
	}
}

// removeStaged removes every staged file, and a staged file's own temporary (dataio.AtomicWrite
// writes ".<name>.tmp*" beside it) when the exit interrupts its write.
func removeStaged() {
	staging.Lock()
	defer staging.Unlock()
	for p := range staging.paths {
		os.Remove(p)
		dir, base := filepath.Split(p)
		if tmps, err := filepath.Glob(filepath.Join(dir, "."+base+".tmp*")); err == nil {
			for _, t := range tmps {
				os.Remove(t)
			}
		}
	}
	staging.paths = nil
}

// fail prints err as one line and returns its exit status.
func fail(stderr io.Writer, ctx context.Context, err error) int {
	code := exitCode(ctx, err)
	msg := oneLine(err.Error())
	if code == exitInterrupted {
		msg = "interrupted: no output was written and existing files are unchanged"
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

// outputs stages the files of a run. Each output is written under a temporary name beside
// its final path and renamed onto it only when the whole run has succeeded (commit), so a
// failed or interrupted run changes no file that existed before it. write also refuses an
// output that is an input of the run or another output, however the two paths are spelled.
type outputs struct {
	files  []string // final paths, in the order written
	flags  []string // the flag that names each file (for error messages)
	staged []string // temporary paths, parallel to files
	inputs []string // files the run reads: no output may replace one
	retire []string // files removed at commit before the renames (a model folder's old model.json)
	dirs   []string // folders this run created, removed on failure when empty
}

// input records files the run reads; empty paths are ignored.
func (o *outputs) input(paths ...string) {
	for _, p := range paths {
		if p != "" {
			o.inputs = append(o.inputs, p)
		}
	}
}

// write stages the output path (named by -flag): fn writes the file's content to the
// temporary path it is given, which has path's extension (the writers choose the format by
// it).
func (o *outputs) write(flag, path string, fn func(tmp string) error) error {
	for _, in := range o.inputs {
		if samePath(path, in) {
			return badInput("choose another output name", "-%s %q would overwrite the input %q", flag, clip(path), clip(in))
		}
	}
	for _, f := range o.files {
		if samePath(path, f) {
			return badInput("give every output its own file name", "-%s %q is also another output of this run (%q)", flag, clip(path), clip(f))
		}
	}
	tmp := filepath.Join(filepath.Dir(path), fmt.Sprintf(".glle-bench-%d-%d%s", os.Getpid(), len(o.files), filepath.Ext(path)))
	stage(tmp, true)
	if err := fn(tmp); err != nil {
		os.Remove(tmp)
		stage(tmp, false)
		return writeError(flag, path, err)
	}
	if fi, err := os.Stat(path); err == nil && fi.Mode().IsRegular() {
		os.Chmod(tmp, fi.Mode().Perm()) // a replaced file keeps its permissions
	}
	o.files = append(o.files, path)
	o.flags = append(o.flags, flag)
	o.staged = append(o.staged, tmp)
	return nil
}

// retireAtCommit removes path (if present) at commit, before the staged files are renamed.
func (o *outputs) retireAtCommit(path string) { o.retire = append(o.retire, path) }

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

// done ends the run: after an error it removes what the run staged or created (cleanup) and
// returns err; otherwise it commits the staged files.
func (o *outputs) done(err error) error {
	if err == nil {
		err = o.commit()
	}
	if err != nil {
		o.cleanup()
	}
	return err
}

// commit renames every staged file onto its final path, in the order written.
func (o *outputs) commit() error {
	for _, p := range o.retire {
		if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return writeError("model", p, err)
		}
	}
	synced := map[string]bool{}
	for i, tmp := range o.staged {
		if err := os.Rename(tmp, o.files[i]); err != nil {
			o.staged = o.staged[i:]
			return writeError(o.flags[i], o.files[i], err)
		}
		stage(tmp, false)
		if d := filepath.Dir(o.files[i]); !synced[d] {
			synced[d] = true
			defer dataio.SyncDir(d)
		}
	}
	o.staged, o.retire, o.dirs = nil, nil, nil
	return nil
}

// cleanup removes the staged files and the folders this run created (when empty); files that
// existed before the run are never touched.
func (o *outputs) cleanup() {
	for _, tmp := range o.staged {
		os.Remove(tmp)
		stage(tmp, false)
	}
	for _, d := range o.dirs {
		os.Remove(d) // only succeeds when empty
	}
	o.staged, o.dirs = nil, nil
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
	// Probe with the file name itself when it is free (a name the folder cannot hold fails
	// here, not after the computation), else with a temporary name beside it.
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if errors.Is(err, fs.ErrExist) {
		f, err = os.CreateTemp(dir, ".glle-bench-probe*")
	}
	if err != nil {
		return badInput("choose a writable folder and file name", "-%s %q cannot be written (%v)", flagName, clip(path), unwrapPath(err))
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
