package main

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"glle/bench/dataio"
	"glle/engine"
	"glle/parallel"
)

// Output files. A run stages every output under a hidden temporary name in its final folder
// and commits them only when the whole run has succeeded: a failed or interrupted run changes
// no file that existed before it, and a commit that fails half way restores what it replaced.

// outputs stages the files of one run.
type outputs struct {
	// ctx is the run's context: the commit's wait for the reader of an output that is a
	// named pipe stops with it (openFIFO), and stderr (nil: none) gets the note saying it
	// waits. A zero outputs waits without a context.
	ctx     context.Context
	stderr  io.Writer
	swept   map[string]bool // folders already cleared of dead runs' staged files (sweep)
	orphans []string        // what sweep found: notes for the summary
	files   []string        // final paths, in the order written (the run summary lists them)
	staged  []staged        // parallel to files
	inputs  []string        // files the run reads: no output may replace one
	retire  []string        // files removed at commit (a model folder's old model.json)
	// removing lists the files of retire the run removes rather than replaces (removeAtCommit).
	removing []string
	dirs     []string // folders this run created, removed on failure when empty
	after    []func() // run after a successful commit (the summary that lists the files)
	// writing is the wall time spent in write (staging the outputs), the summary's "write"
	// stage.
	writing time.Duration
}

// staged is one output waiting for the commit.
type staged struct {
	flag string // the flag that names the file (for messages)
	tmp  string // the content, beside the final file (or in os.TempDir for a special file)
	// special: the final path is a device, pipe or socket (-json /dev/stdout): the content is
	// copied into it at commit instead of replacing it.
	special bool
}

// stagePrefix is the start of the hidden names this process stages files under:
// ".glle-bench-HOST-PID-", so that a later run can tell a dead run's files from a live one's.
// HOST (hostToken) tells machines and PID namespaces apart: a process id means nothing to a
// run on another host sharing the folder (NFS) or in another container (a review in session
// 32: a run in its own PID namespace had its staged files removed by another and failed).
func stagePrefix() string { return fmt.Sprintf(".glle-bench-%s-%d-", hostToken(), os.Getpid()) }

var hostTok = sync.OnceValue(func() string {
	h := fnv.New32a()
	name, _ := os.Hostname()
	ns, _ := os.Readlink("/proc/self/ns/pid") // "pid:[4026531836]"; empty where unknown
	boot, _ := os.ReadFile("/proc/sys/kernel/random/boot_id")
	h.Write([]byte(name + "\x00" + ns + "\x00" + string(boot)))
	return fmt.Sprintf("%08x", h.Sum32())
})

// hostToken identifies this machine, boot and PID namespace in staged file names.
func hostToken() string { return hostTok() }

// sweep removes, once per folder, the staged files a killed run left in dir (kill -9, an
// out-of-memory kill: 133 hidden files of 11 MB stayed after a killed 1000-generation run,
// unnoticed, before session 32). Only files named by stagePrefix of a process that no longer
// exists are removed; a dead run's .bak file (the previous content of a file it was
// replacing when it died) is the user's data and is only reported.
func (o *outputs) sweep(dir string) {
	if o.swept == nil {
		o.swept = map[string]bool{}
	}
	if o.swept[dir] {
		return
	}
	o.swept[dir] = true
	ents, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	removed, bytes, pids, foreign := 0, int64(0), map[int]bool{}, 0
	for _, e := range ents {
		pid, ok := stagePID(e.Name())
		if !ok && strings.HasPrefix(e.Name(), ".glle-bench-") && !strings.HasPrefix(e.Name(), ".glle-bench-probe-") {
			foreign++ // another host's or container's, or an older glle-bench's (no process id)
		}
		if !ok || pid == os.Getpid() || processAlive(pid) || !e.Type().IsRegular() {
			continue
		}
		p := filepath.Join(dir, e.Name())
		if strings.HasSuffix(e.Name(), ".bak") {
			o.orphans = append(o.orphans, fmt.Sprintf("%s is the previous content of a file that process %d was replacing when it was killed: rename it back if that file is wrong, or delete it", p, pid))
			continue
		}
		if fi, err := e.Info(); err == nil {
			bytes += fi.Size()
		}
		if os.Remove(p) == nil {
			removed++
			pids[pid] = true
		}
	}
	if removed > 0 {
		o.orphans = append(o.orphans, fmt.Sprintf("removed %d hidden file(s) (%s) staged in %s by %d killed run(s)", removed, engine.FormatBytes(bytes), dir, len(pids)))
	}
	if foreign > 0 {
		o.orphans = append(o.orphans, fmt.Sprintf("%d hidden .glle-bench-* file(s) in %s were staged by a run on another host or container, or by an older glle-bench: left alone; delete them once no such run is writing there", foreign, dir))
	}
}

// stagePID parses the process id of a file staged on this host, boot and PID namespace
// (stagePrefix); other names, and other hosts' files, report false.
func stagePID(name string) (int, bool) {
	rest, ok := strings.CutPrefix(name, ".glle-bench-"+hostToken()+"-")
	if !ok {
		return 0, false
	}
	num, _, ok := strings.Cut(rest, "-")
	if !ok {
		return 0, false
	}
	pid, err := strconv.Atoi(num)
	return pid, err == nil && pid > 0
}

// processAlive reports whether process pid exists (signal 0; EPERM: it exists, another
// user's). When in doubt it says alive, so nothing of a live run is removed.
func processAlive(pid int) bool {
	if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
		return false
	}
	// A killed process whose parent has not reaped it yet still answers signal 0: a zombie
	// (state Z in /proc/PID/stat, after the parenthesised command name) runs nothing.
	if b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid)); err == nil {
		if i := strings.LastIndexByte(string(b), ')'); i >= 0 && i+2 < len(b) && b[i+2] == 'Z' {
			return false
		}
	}
	return true
}

// input records files the run reads; empty paths are ignored.
func (o *outputs) input(paths ...string) {
	for _, p := range paths {
		if p != "" {
			o.inputs = append(o.inputs, p)
		}
	}
}

// writeOwn is write for an output whose time a stage of its own reports (a plot drawn and
// written in one step): it is not added to the "write" stage, so no time is counted twice.
func (o *outputs) writeOwn(flag, path string, fn func(tmp string) error) error {
	w := o.writing
	err := o.write(flag, path, fn)
	o.writing = w
	return err
}

// write stages the output path (named by -flag): fn writes the file's content to the
// temporary path it is given, which has path's extension (the writers choose the format by
// it). write refuses a path that is an input of the run or an earlier output, however the two
// are spelled. Its time is the "write" stage's (writing).
func (o *outputs) write(flag, path string, fn func(tmp string) error) error {
	t0 := time.Now()
	defer func() { o.writing += time.Since(t0) }()
	// A model folder's file names are fixed: the fix is another folder (a user trial: "choose
	// another output name" for embed -in m/X.npy -model m).
	anotherName, ownName := "choose another output name", "give every output its own file name"
	if flag == "model" {
		anotherName, ownName = "use another -model folder", "use a -model folder apart from the other outputs"
	}
	for _, in := range o.inputs {
		if samePath(path, in) {
			return badInput(anotherName, "-%s %q would overwrite the input %q", flag, clip(path), clip(in))
		}
	}
	for _, f := range o.files {
		if samePath(path, f) {
			return badInput(ownName, "-%s %q is also another output of this run (%q)", flag, clip(path), clip(f))
		}
	}
	fi, statErr := os.Stat(path)
	special := streamFD(path) >= 0 || statErr == nil && !fi.Mode().IsRegular() && !fi.IsDir()
	dir := fileDir(path)
	// A new file is created with mode 0666 less the umask (and a folder's default ACL), as
	// any program's new file is: the kernel applies them when the staged file is created (a
	// user trial found every new output chmodded to 0644, umask 077 or not). A replaced file
	// keeps its own permission bits, as editors do. A special file's content is only staged,
	// in the temporary folder: readable by the user alone.
	perm := os.FileMode(0o666)
	if special {
		dir, perm = os.TempDir(), 0o600
	}
	o.sweep(dir)
	f, err := createTemp(dir, stagePrefix(), filepath.Ext(path), perm)
	if err != nil {
		return writeError(flag, path, err)
	}
	tmp := f.Name()
	stage(tmp, true)
	tfi, err := f.Stat()
	f.Close()
	if err != nil {
		os.Remove(tmp)
		stage(tmp, false)
		return writeError(flag, path, err)
	}
	mode := tfi.Mode().Perm() // the writers replace tmp; its mode is restored below
	if !special && statErr == nil {
		mode = fi.Mode().Perm()
	}
	if err := fn(tmp); err != nil {
		os.Remove(tmp)
		stage(tmp, false)
		return writeError(flag, path, err)
	}
	if err := os.Chmod(tmp, mode); err != nil {
		os.Remove(tmp)
		stage(tmp, false)
		return writeError(flag, path, err)
	}
	o.files = append(o.files, path)
	o.staged = append(o.staged, staged{flag: flag, tmp: tmp, special: special})
	return nil
}

// createTemp creates a new file in dir named prefix, a random number and suffix, as
// os.CreateTemp does, but with permission bits perm (less the umask) instead of 0600.
func createTemp(dir, prefix, suffix string, perm os.FileMode) (*os.File, error) {
	for try := 0; ; try++ {
		name := filepath.Join(dir, fmt.Sprintf("%s%016x%s", prefix, rand.Uint64(), suffix))
		f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_EXCL, perm)
		if errors.Is(err, fs.ErrExist) && try < 100 {
			continue
		}
		return f, err
	}
}

// retireAtCommit removes path (if present) at commit, before the staged files are renamed.
func (o *outputs) retireAtCommit(path string) { o.retire = append(o.retire, path) }

// removeAtCommit retires path, a file the run removes (not one it replaces), and records it in
// removing when it exists now, for the summary.
func (o *outputs) removeAtCommit(path string) {
	if _, err := os.Lstat(path); err == nil {
		o.removing = append(o.removing, path)
	}
	o.retireAtCommit(path)
}

// notFolderError: a component of a path to create exists and is not a folder.
type notFolderError struct{ path string }

func (e *notFolderError) Error() string { return e.path + " is not a folder" }

// mkdirTracked creates the folder dir and any missing parents, as os.MkdirAll does, and returns
// the folders it created, outermost first. They are prefixes of dir as spelled (a/../b, a
// symbolic link followed by ..), so the kernel resolves them exactly as it resolved dir. On an
// error the folders created so far are returned with it; a component that exists and is not a
// folder is a *notFolderError.
func mkdirTracked(dir string) ([]string, error) {
	var created []string
	for i := 1; i <= len(dir); i++ {
		if i < len(dir) && dir[i] != filepath.Separator {
			continue
		}
		p := dir[:i]
		if fi, err := os.Stat(p); err == nil {
			if !fi.IsDir() {
				return created, &notFolderError{p}
			}
			continue
		} else if !errors.Is(err, fs.ErrNotExist) {
			return created, err
		}
		// 0777 less the umask, as mkdir(1) gives (0755 whatever the umask before).
		if err := os.Mkdir(p, 0o777); err != nil {
			if fi, serr := os.Stat(p); serr == nil && fi.IsDir() {
				continue // created meanwhile by someone else: not ours to remove
			}
			return created, err
		}
		created = append(created, p)
	}
	return created, nil
}

// mkdir creates dir (and missing parents) and remembers what it created, also when it fails
// half way (cleanup removes those folders).
func (o *outputs) mkdir(flagName, dir string) error {
	created, err := mkdirTracked(dir)
	for i := len(created) - 1; i >= 0; i-- {
		stage(created[i], true)
		o.dirs = append(o.dirs, created[i]) // deepest first
	}
	if err != nil {
		return folderError(flagName, dir, err)
	}
	return nil
}

// folderError is the error of a failed mkdirTracked of the folder of flag -flagName: bad
// input (exit 2), except a full device or quota (exit 1).
func folderError(flagName, dir string, err error) error {
	var nf *notFolderError
	switch {
	case errors.As(err, &nf):
		return badInput("choose a folder path", "-%s %q: %s is not a folder", flagName, clip(dir), clip(nf.path))
	case noSpace(err):
		return fmt.Errorf("-%s %q cannot be created (%v): free space on that device or choose another folder", flagName, clip(dir), unwrapPath(err))
	}
	return badInput("choose a writable folder", "-%s %q cannot be created (%v)", flagName, clip(dir), unwrapPath(err))
}

// removeCreated removes the folders mkdirTracked created, innermost first, while they are
// empty: the folders of a run that wrote nothing into them.
func removeCreated(created []string) {
	for i := len(created) - 1; i >= 0; i-- {
		if os.Remove(created[i]) != nil {
			return
		}
	}
}

// noSpace reports whether err says the device or the quota is full: a failure of the
// surroundings (exit 1), not of the arguments.
func noSpace(err error) bool {
	return errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT)
}

// done ends the run: after an error it removes what the run staged or created (cleanup) and
// returns err; otherwise it commits the staged files.
func (o *outputs) done(err error) error {
	if err == nil {
		err = o.commit()
	}
	if err != nil {
		o.cleanup()
		return err
	}
	for _, f := range o.after {
		f()
	}
	return nil
}

// onCommit runs f after a successful commit, so that a summary saying which files were
// written is printed only once they are.
func (o *outputs) onCommit(f func()) { o.after = append(o.after, f) }

// finish is done for a deferred call, which also runs while the command panics: it takes
// recover()'s value p, and a panic (a bug) commits nothing: the staged files are removed and
// the panic becomes a one-line error.
func (o *outputs) finish(p any, err error) error {
	if p != nil {
		o.cleanup()
		return fmt.Errorf("internal error (a bug: please report it with the command line): %v; no output was written and existing files are unchanged", panicValue(p))
	}
	return o.done(err)
}

// panicValue is what a one-line message shows of a recovered panic: a worker's panic value
// without the stack its *parallel.WorkerPanic carries.
func panicValue(p any) any {
	if wp, ok := p.(*parallel.WorkerPanic); ok {
		return wp.Value
	}
	return p
}

// replaced is one step of a commit: path now holds the new content (or was removed), and the
// file it held before, if any, is at bak.
type replaced struct{ path, bak string }

// commit puts the staged files in place: special files first (their content is copied in),
// then the retired files are removed and the staged files renamed onto their paths, in the
// order written. Every file a step replaces is first kept under a hidden name (a hard link,
// or a rename where links fail); when a step fails, the steps before it are undone, so the
// folder holds what it held before the run, and the error is returned. A forced exit (a
// second signal) waits for the commit.
func (o *outputs) commit() (err error) {
	staging.Lock()
	staging.committing = true
	staging.Unlock()
	defer func() {
		staging.Lock()
		staging.committing = false
		staging.Unlock()
	}()
	for i, s := range o.staged {
		if s.special {
			if err := o.copyInto(s.flag, o.files[i], s.tmp); err != nil {
				return writeError(s.flag, o.files[i], err)
			}
		}
	}
	var done []replaced
	defer func() {
		if err != nil {
			err = undo(done, err)
			return
		}
		for _, r := range done {
			if r.bak != "" {
				os.Remove(r.bak)
			}
		}
	}()
	for _, p := range o.retire {
		bak, err := keep(p)
		if err != nil {
			return writeError("model", p, err)
		}
		if bak == "" {
			continue // nothing to retire
		}
		done = append(done, replaced{p, bak})
		if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return writeError("model", p, err)
		}
	}
	dirs := map[string]bool{}
	for i, s := range o.staged {
		path := o.files[i]
		if s.special {
			continue
		}
		bak, err := keep(path)
		if err != nil {
			return writeError(s.flag, path, err)
		}
		if err := os.Rename(s.tmp, path); err != nil {
			if bak != "" {
				os.Rename(bak, path) // a rename-made backup goes back; a link is simply dropped
				os.Remove(bak)
			}
			return writeError(s.flag, path, err)
		}
		done = append(done, replaced{path, bak})
		dirs[fileDir(path)] = true
	}
	for _, s := range o.staged {
		if s.special {
			os.Remove(s.tmp)
		}
		stage(s.tmp, false)
	}
	for d := range dirs {
		dataio.SyncDir(d)
	}
	for _, d := range o.dirs {
		stage(d, false)
	}
	o.staged, o.retire, o.dirs = nil, nil, nil
	return nil
}

// keep makes a hidden copy of the file at path before a commit replaces it: a hard link
// beside it, or, where the file system refuses links, the file itself renamed. It returns ""
// when path does not exist.
func keep(path string) (string, error) {
	fi, err := os.Lstat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "", nil
	case err == nil && fi.IsDir():
		return "", errors.New("is a folder")
	}
	f, err := os.CreateTemp(fileDir(path), stagePrefix()+"*.bak")
	if err != nil {
		return "", err
	}
	bak := f.Name()
	f.Close()
	os.Remove(bak)
	if err := os.Link(path, bak); err == nil {
		return bak, nil
	}
	if err := os.Rename(path, bak); err != nil {
		return "", err
	}
	return bak, nil
}

// undo reverts the steps of a failed commit, latest first, and returns cause, extended when
// a step cannot be reverted.
func undo(done []replaced, cause error) error {
	var lost []string
	for i := len(done) - 1; i >= 0; i-- {
		r := done[i]
		var err error
		if r.bak != "" {
			err = os.Rename(r.bak, r.path)
		} else {
			err = os.Remove(r.path)
		}
		if err != nil {
			lost = append(lost, fmt.Sprintf("%s (previous content kept at %s)", r.path, r.bak))
		}
	}
	if len(lost) > 0 {
		return fmt.Errorf("%w; restoring %s failed", cause, strings.Join(lost, ", "))
	}
	return cause
}

// streamFD returns the file descriptor a path names by itself: 1 for /dev/stdout, 2 for
// /dev/stderr, N for /dev/fd/N and /proc/self/fd/N; -1 for any other path. Such a path is an
// output stream whatever it is redirected to: with stdout redirected to a regular file,
// -json /dev/stdout was refused as "not a .json file name", and before that check the commit
// replaced the /dev/stdout link itself with a regular file (a review in session 32).
func streamFD(path string) int {
	switch p := filepath.Clean(path); p {
	case "/dev/stdout":
		return 1
	case "/dev/stderr":
		return 2
	default:
		for _, dir := range []string{"/dev/fd/", "/proc/self/fd/"} {
			if num, ok := strings.CutPrefix(p, dir); ok {
				if fd, err := strconv.Atoi(num); err == nil && fd >= 0 && strconv.Itoa(fd) == num {
					return fd
				}
			}
		}
	}
	return -1
}

// copyInto writes the content of the file src into the existing special file path; a stream
// name (streamFD) is written through the process's own descriptor, at its offset (so that
// ">> log" appends). A named pipe is opened once it has a reader (openFIFO): the wait, and
// the writing, stop with o.ctx (a reader that had come may then have part of the content).
func (o *outputs) copyInto(flag, path, src string) error {
	if streamFD(path) < 0 && isFIFO(path) {
		ctx := o.ctx
		if ctx == nil {
			ctx = context.Background()
		}
		in, err := os.Open(src)
		if err != nil {
			return err
		}
		defer in.Close()
		out, err := openFIFO(ctx, o.stderr, flag, path, true)
		if err != nil {
			return err
		}
		stop := stopWithContext(ctx, out)
		defer stop()
		n, err := io.Copy(out, in)
		if cerr := out.Close(); err == nil {
			err = cerr
		}
		if ctx.Err() != nil {
			if n > 0 {
				partialPipe.Store(&pipeWrite{path: path, bytes: n})
			}
			return ctx.Err()
		}
		return err
	}
	return copyInto(path, src)
}

// pipeWrite records a named pipe that received part of its output before an interrupt: data
// a reader has taken cannot be taken back, so the interrupt's message must not say that
// nothing was written (fail).
type pipeWrite struct {
	path  string
	bytes int64
}

// partialPipe is the run's pipeWrite, nil when no pipe was written in part.
var partialPipe atomic.Pointer[pipeWrite]

// copyInto is outputs.copyInto without a context.
func copyInto(path, src string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	if fd := streamFD(path); fd >= 0 {
		// Through a duplicate of the descriptor: an *os.File made from fd itself would close
		// the process's own stdout when garbage-collected. The duplicate shares the offset
		// and the append mode.
		dup, err := syscall.Dup(fd)
		if err != nil {
			return fmt.Errorf("descriptor %d: %w", fd, err)
		}
		out := os.NewFile(uintptr(dup), path)
		if _, err := io.Copy(out, in); err != nil {
			out.Close()
			return err
		}
		return out.Close()
	}
	out, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// cleanup removes the staged files and the folders this run created (when empty); files that
// existed before the run are never touched.
func (o *outputs) cleanup() {
	for _, s := range o.staged {
		os.Remove(s.tmp) // a temporary a failed commit already renamed is gone: harmless
		stage(s.tmp, false)
	}
	for _, d := range o.dirs {
		os.Remove(d) // only succeeds when empty
		stage(d, false)
	}
	o.staged, o.dirs = nil, nil
}

// staging lists the temporary files and new folders of the running command, so that a forced
// exit can remove them.
var staging struct {
	sync.Mutex
	paths      map[string]bool
	trees      map[string]bool // scratch folders removed with their contents (bench's sweep folder)
	committing bool
}

// stageTree registers (on) or drops a scratch folder that a forced exit removes with
// everything in it.
func stageTree(dir string, on bool) { register(&staging.trees, dir, on) }

// stage registers (on) or drops a staged file or a folder the run created.
func stage(path string, on bool) { register(&staging.paths, path, on) }

func register(set *map[string]bool, path string, on bool) {
	staging.Lock()
	defer staging.Unlock()
	if *set == nil {
		*set = map[string]bool{}
	}
	if on {
		(*set)[path] = true
	} else {
		delete(*set, path)
	}
}

// abandonStaged removes every staged file, new (empty) folder and scratch tree for a forced exit, with a
// staged file's own temporary when the exit interrupts its write (dataio.AtomicWrite writes
// ".<name>.tmp*" beside it). It returns false, removing nothing, while a commit runs.
func abandonStaged() bool {
	staging.Lock()
	defer staging.Unlock()
	if staging.committing {
		return false
	}
	inner := func(p string) {
		dir, base := filepath.Split(p)
		if tmps, err := filepath.Glob(filepath.Join(dir, "."+base+".tmp*")); err == nil {
			for _, t := range tmps {
				os.Remove(t)
			}
		}
	}
	var dirs []string
	for p := range staging.paths {
		if fi, err := os.Stat(p); err == nil && fi.IsDir() {
			dirs = append(dirs, p)
			continue
		}
		inner(p)
		os.Remove(p)
		inner(p) // a write that finished in between
	}
	// Deepest first (longest path first), so that parents are empty when their turn comes.
	slices.SortFunc(dirs, func(a, b string) int { return len(b) - len(a) })
	for _, d := range dirs {
		os.Remove(d) // only succeeds when empty
	}
	for d := range staging.trees {
		os.RemoveAll(d)
	}
	staging.paths, staging.trees = nil, nil
	return true
}

// checkWritable fails unless a file can be created or replaced at path (without changing it):
// its folder must exist and accept new files, the name must fit the folder, path must not be
// a folder, and an existing regular file must not be read-only.
func checkWritable(flagName, path string) error {
	if fd := streamFD(path); fd >= 0 {
		flags, _, errno := syscall.Syscall(syscall.SYS_FCNTL, uintptr(fd), syscall.F_GETFL, 0)
		if errno != 0 {
			return badInput("open that descriptor, or choose a file name", "-%s %q: descriptor %d is not open", flagName, clip(path), fd)
		}
		if flags&syscall.O_ACCMODE == syscall.O_RDONLY {
			// It failed only at the commit, after the whole run (a review in session 32).
			return badInput("give a descriptor open for writing (such as /dev/stdout), or a file name", "-%s %q: descriptor %d is open for reading only", flagName, clip(path), fd)
		}
		return nil // written through the descriptor at commit
	}
	fi, err := os.Stat(path)
	switch {
	case err == nil && fi.IsDir():
		return badInput("give a file name", "-%s %q is a folder", flagName, clip(path))
	case err == nil && !fi.Mode().IsRegular():
		return nil // a device or pipe (-json /dev/stdout) is written into at commit
	case err == nil && fi.Mode().Perm()&0o222 == 0:
		return badInput("make it writable (chmod u+w) or choose another name", "-%s %q is read-only", flagName, clip(path))
	}
	dir := fileDir(path)
	if dfi, err := os.Stat(dir); err == nil && !dfi.IsDir() {
		return badInput("choose a path inside a folder", "-%s %q: %s is a file, not a folder", flagName, clip(path), clip(dir))
	} else if err != nil {
		return badInput("create the folder first or choose another path", "-%s %q: folder %s does not exist", flagName, clip(path), clip(dir))
	}
	// Probe with a hidden name of the file name's length (a name the folder cannot hold fails
	// here, not after the computation), never with the name itself: a forced exit between
	// the probe's creation and its removal must not leave an empty output behind.
	f, err := createProbe(dir, len(filepath.Base(path)))
	if err != nil {
		if noSpace(err) {
			return fmt.Errorf("-%s %q cannot be written (%v): free space on that device or choose another folder", flagName, clip(path), unwrapPath(err))
		}
		return badInput("choose a writable folder and file name", "-%s %q cannot be written (%v)", flagName, clip(path), unwrapPath(err))
	}
	name := f.Name()
	stage(name, true) // a forced exit now removes it
	f.Close()
	os.Remove(name)
	stage(name, false)
	return nil
}

// createProbe creates a new empty file in dir whose name is hidden, random and at least
// length bytes long (exactly length when that is longer than the random part).
func createProbe(dir string, length int) (*os.File, error) {
	var err error
	for range 10 {
		name := fmt.Sprintf(".glle-bench-probe-%016x", rand.Uint64())
		if len(name) < length {
			name += strings.Repeat("_", length-len(name))
		}
		var f *os.File
		f, err = os.OpenFile(filepath.Join(dir, name), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if !errors.Is(err, fs.ErrExist) {
			return f, err
		}
	}
	return nil, err
}

// checkAllWritable runs checkWritable on every (flag, path) pair with a non-empty path.
func checkAllWritable(pairs ...[2]string) error {
	for _, p := range pairs {
		if p[1] != "" {
			if err := checkWritable(p[0], p[1]); err != nil {
				return err
			}
		}
	}
	return nil
}

// genWritable lists, for checkAllWritable, the -out file, the last (longest) of gens
// generation files beside it and the analysis files.
func genWritable(out string, gens int, a analysisOpts, plot bool) [][2]string {
	pairs := [][2]string{{"out", out}}
	if gens > 0 {
		pairs = append(pairs, [2]string{"out", genPath(out, gens-1)})
	}
	for _, p := range a.outputs(out, plot) {
		pairs = append(pairs, [2]string{"out", p})
	}
	return pairs
}

// samePath reports whether a and b name the same file: equal after cleaning, equal once made
// absolute with symbolic links resolved (as far as the path exists), or one file reached
// through two names (hard links).
func samePath(a, b string) bool {
	if filepath.Clean(a) == filepath.Clean(b) || resolvedPath(a) == resolvedPath(b) {
		return true
	}
	fa, ea := os.Stat(a)
	fb, eb := os.Stat(b)
	return ea == nil && eb == nil && os.SameFile(fa, fb)
}

// resolvedPath is p made absolute with its symbolic links resolved as the kernel resolves
// them (a ".." after a link goes up from the link's target), as far as p exists.
func resolvedPath(p string) string {
	if !filepath.IsAbs(p) {
		if wd, err := os.Getwd(); err == nil {
			p = wd + string(filepath.Separator) + p // no Clean: ".." must follow the links
		}
	}
	return resolveExisting(p)
}

// resolveExisting resolves the symbolic links of the longest leading part of p that exists
// and appends the rest.
func resolveExisting(p string) string {
	if r, err := filepath.EvalSymlinks(p); err == nil {
		return r
	}
	i := strings.LastIndexByte(p, filepath.Separator)
	switch {
	case i < 0:
		return filepath.Clean(p)
	case i == 0:
		return filepath.Clean(p)
	}
	return filepath.Join(resolveExisting(p[:i]), p[i+1:])
}

// fileDir is the folder a file at path lives in, as the kernel resolves it: unlike
// filepath.Dir, a ".." after a symbolic link goes up from the link's target.
func fileDir(path string) string {
	i := strings.LastIndexByte(path, filepath.Separator)
	switch {
	case i < 0:
		return resolveExisting(".")
	case i == 0:
		return string(filepath.Separator)
	}
	return resolveExisting(path[:i])
}
