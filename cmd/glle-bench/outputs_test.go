package main

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"
)

// snapshot maps every file under dir (hidden ones included) to a hash of its content.
func snapshot(t *testing.T, dir string) map[string][32]byte {
	t.Helper()
	m := map[string][32]byte{}
	filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err == nil && fi.Mode().IsRegular() {
			b, rerr := os.ReadFile(p)
			if rerr != nil {
				t.Fatal(rerr)
			}
			rel, _ := filepath.Rel(dir, p)
			m[rel] = sha256.Sum256(b)
		}
		return nil
	})
	return m
}

func sameSnapshot(t *testing.T, what string, before, after map[string][32]byte) {
	t.Helper()
	for f, h := range before {
		if h2, ok := after[f]; !ok {
			t.Errorf("%s: %s was removed", what, f)
		} else if h2 != h {
			t.Errorf("%s: %s was changed", what, f)
		}
	}
	for f := range after {
		if _, ok := before[f]; !ok {
			t.Errorf("%s: %s was left behind", what, f)
		}
	}
}

// TestOutputsStaging: staged files replace nothing until commit; a failed run leaves every
// existing file as it was and no temporary behind; commit keeps a replaced file's permissions.
func TestOutputsStaging(t *testing.T) {
	dir := t.TempDir()
	a, b, in := filepath.Join(dir, "a.npy"), filepath.Join(dir, "b.csv"), filepath.Join(dir, "in.npy")
	for _, f := range []string{a, in} {
		if err := os.WriteFile(f, []byte("old"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	put := func(final, content string) func(string) error {
		return func(tmp string) error {
			if filepath.Dir(tmp) != filepath.Dir(final) || filepath.Ext(tmp) != filepath.Ext(final) {
				t.Errorf("temporary %s is not beside %s with its extension", tmp, final)
			}
			return os.WriteFile(tmp, []byte(content), 0o644)
		}
	}
	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(dir, link); err != nil {
		t.Fatal(err)
	}
	before := snapshot(t, dir)

	var o outputs
	o.input(in, "")
	if err := o.write("out", a, put(a, "new")); err != nil {
		t.Fatal(err)
	}
	if err := o.write("json", b, put(b, "new")); err != nil {
		t.Fatal(err)
	}
	a2 := filepath.Join(link, "a.npy") // a.npy through a linked folder
	if err := o.write("out", a2, put(a2, "x")); err == nil || !strings.Contains(err.Error(), "another output") {
		t.Errorf("second write of a.npy: %v", err)
	}
	in2 := filepath.Join(dir, "sub", "..", "in.npy")
	if err := o.write("out", in2, put(in2, "x")); err == nil || !strings.Contains(err.Error(), "overwrite the input") {
		t.Errorf("write onto the input: %v", err)
	}
	sameSnapshot(t, "before commit", before, withoutHidden(snapshot(t, dir)))
	if err := o.done(errors.New("late failure")); err == nil {
		t.Fatal("done dropped the error")
	}
	sameSnapshot(t, "failed run", before, snapshot(t, dir))

	o = outputs{}
	if err := o.write("out", a, put(a, "new")); err != nil {
		t.Fatal(err)
	}
	if err := o.write("json", b, put(b, "new")); err != nil {
		t.Fatal(err)
	}
	if err := o.done(nil); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{a, b} {
		if got, _ := os.ReadFile(f); string(got) != "new" {
			t.Errorf("%s holds %q after commit", f, got)
		}
	}
	if fi, err := os.Stat(a); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("replaced file mode %v (%v), want 0600", fi.Mode().Perm(), err)
	}
	for f := range snapshot(t, dir) {
		if strings.HasPrefix(filepath.Base(f), ".") {
			t.Errorf("commit left %s", f)
		}
	}
}

// TestOutputsCommitUndo: a commit that fails on its third file puts back the two files it
// had replaced and the model.json it had retired, and leaves no hidden file.
func TestOutputsCommitUndo(t *testing.T) {
	dir := t.TempDir()
	a, meta, c := filepath.Join(dir, "a.npy"), filepath.Join(dir, "model.json"), filepath.Join(dir, "c.npy")
	for _, f := range []string{a, meta} {
		if err := os.WriteFile(f, []byte("old "+filepath.Base(f)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	before := snapshot(t, dir)
	put := func(tmp string) error { return os.WriteFile(tmp, []byte("new"), 0o644) }
	var o outputs
	o.retireAtCommit(meta)
	for _, f := range []string{a, filepath.Join(dir, "b.npy"), c} {
		if err := o.write("out", f, put); err != nil {
			t.Fatal(err)
		}
	}
	// c becomes a folder after staging: its step fails after a.npy and b.npy were renamed.
	if err := os.Mkdir(c, 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(c, "keep"), []byte("x"), 0o644)
	before["c.npy/keep"] = snapshot(t, dir)["c.npy/keep"]
	err := o.done(nil)
	if err == nil || !strings.Contains(err.Error(), "c.npy") {
		t.Fatalf("commit error %v, want one naming c.npy", err)
	}
	sameSnapshot(t, "undone commit", before, snapshot(t, dir))
}

// TestOutputsSpecialFile: an output that is a pipe (like -json /dev/stdout) gets the content
// written into it at commit and stays a pipe.
func TestOutputsSpecialFile(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "pipe")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skip("no named pipes here:", err)
	}
	got := make(chan string, 1)
	go func() {
		b, _ := os.ReadFile(fifo) // blocks until the commit opens the pipe
		got <- string(b)
	}()
	var o outputs
	if err := checkWritable("json", fifo); err != nil {
		t.Fatal(err)
	}
	if err := o.write("json", fifo, func(tmp string) error { return os.WriteFile(tmp, []byte("{}\n"), 0o644) }); err != nil {
		t.Fatal(err)
	}
	if err := o.done(nil); err != nil {
		t.Fatal(err)
	}
	select {
	case s := <-got:
		if s != "{}\n" {
			t.Errorf("the pipe carried %q", s)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("nothing was written into the pipe")
	}
	if fi, err := os.Lstat(fifo); err != nil || fi.Mode()&os.ModeNamedPipe == 0 {
		t.Errorf("the pipe was replaced: %v %v", fi.Mode(), err)
	}
}

func withoutHidden(m map[string][32]byte) map[string][32]byte {
	for f := range m {
		if strings.HasPrefix(filepath.Base(f), ".") {
			delete(m, f)
		}
	}
	return m
}

// TestOutputCollisions: an output that is an input or another output, however its path is
// spelled, is refused before any work with exit 2, and no file changes.
func TestOutputCollisions(t *testing.T) {
	dir := t.TempDir()
	mustRun(t, dir, "dataset", "-name", "swissroll", "-n", "300", "-out", "x.npy", "-color-out", "col.npy", "-q")
	mustRun(t, dir, "embed", "-in", "x.npy", "-method", "em", "-out", "y.npy", "-model", "m", "-q")
	if err := os.Symlink("x.npy", filepath.Join(dir, "link.npy")); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "g_gen002.npy"), mustRead(t, dir, "x.npy"), 0o644)
	os.Mkdir(filepath.Join(dir, "sub"), 0o755)
	os.WriteFile(filepath.Join(dir, "ro.npy"), []byte("read-only"), 0o444)
	// deep/.. is real (the kernel follows the link first), not the test folder: deep/../M is
	// real/M.
	os.MkdirAll(filepath.Join(dir, "real", "sub2"), 0o755)
	os.Mkdir(filepath.Join(dir, "M"), 0o755)
	if err := os.Symlink(filepath.Join("real", "sub2"), filepath.Join(dir, "deep")); err != nil {
		t.Fatal(err)
	}
	abs := filepath.Join(dir, "x.npy")
	em := func(more ...string) []string {
		return append([]string{"embed", "-in", "x.npy", "-method", "em"}, more...)
	}
	// A -json name must end in .json (since session 32), so a data file given as -json is
	// refused by that rule before the collision checks.
	for _, c := range []badCase{
		{"out is the input, absolute", []string{"embed", "-in", "x.npy", "-out", abs}, "overwrite the input"},
		{"out is the input, through ..", []string{"embed", "-in", "x.npy", "-out", "sub/../x.npy"}, "overwrite the input"},
		{"out is the input, through a link", []string{"embed", "-in", "link.npy", "-out", "x.npy"}, "overwrite the input"},
		{"json is the input", []string{"embed", "-in", "x.npy", "-out", "z.npy", "-json", abs}, "not a .json file name"},
		{"generation 2 is the input", []string{"embed", "-in", "g_gen002.npy", "-method", "em", "-generations", "3", "-out", "g.npy"}, "overwrite the input"},
		{"json is generation 2", em("-generations", "3", "-out", "e.npy", "-json", "e_gen002.npy"), "not a .json file name"},
		{"json is the colour file", []string{"embed", "-in", "x.npy", "-out", "z.npy", "-plot", "z.png", "-color", "col.npy", "-json", "col.npy"}, "not a .json file name"},
		{"model folder holds the input", []string{"embed", "-in", "m/X.npy", "-model", "m", "-out", "z.npy"}, "overwrite the input"},
		{"out inside the model folder", em("-model", "m3", "-out", "m3/X.npy"), "twice"},
		{"generate json is model.json", []string{"generate", "-model", "m", "-generations", "1", "-out", "g", "-json", "m/model.json"}, "overwrite the input"},
		{"generate json is the model's data", []string{"generate", "-model", "m", "-generations", "1", "-out", "g", "-json", "./m/X.npy"}, "not a .json file name"},
		{"generate json is the mean", []string{"generate", "-model", "m", "-generations", "2", "-uncertainty", "-out", "g", "-json", "g_mean.npy"}, "not a .json file name"},
		{"transform out is the model's data", []string{"transform", "-model", "m", "-in", "x.npy", "-out", "m/X.npy"}, "overwrite the input"},
		{"transform generation 2 is the input", []string{"transform", "-model", "m", "-in", "g_gen002.npy", "-generations", "3", "-out", "g.npy"}, "overwrite the input"},
		{"dataset color-out is out", []string{"dataset", "-name", "swissroll", "-n", "300", "-out", "d.npy", "-color-out", filepath.Join(dir, "d.npy")}, "same file"},
		{"align without generations", em("-out", "z.npy", "-align"), "-align"},
		{"read-only output", []string{"embed", "-in", "x.npy", "-out", "ro.npy"}, "read-only"},
		{"long generation name", em("-generations", "2", "-out", strings.Repeat("y", 250)+".npy"), "cannot be written"},
		{"out through a link and ..", em("-model", "real/M", "-out", "deep/../M/X.npy"), "twice"},
	} {
		before := snapshot(t, dir)
		checkBad(t, dir, c)
		sameSnapshot(t, c.name, before, snapshot(t, dir))
	}
}

// TestInterruptKeepsExistingFiles: an interrupted run over the outputs of an earlier run leaves
// them byte for byte, and leaves no temporary. SIGINT is sent twice back to back, as timeout(1)
// does (to the command and to its process group), which still counts as one; SIGHUP (a closed
// terminal) is handled the same way.
func TestInterruptKeepsExistingFiles(t *testing.T) {
	if testing.Short() {
		t.Skip("slow")
	}
	dir := t.TempDir()
	args := []string{"embed", "-dataset", "swissroll", "-n", "3000", "-method", "em", "-solver", "dense",
		"-out", "y.npy", "-model", "m", "-json", "r.json", "-q"}
	mustRun(t, dir, append(args, "-generations", "2")...)
	before := snapshot(t, dir)
	for _, sigs := range [][]syscall.Signal{{syscall.SIGINT, syscall.SIGINT}, {syscall.SIGHUP}} {
		cmd := exec.Command(bin, append(args, "-generations", "200")...)
		cmd.Dir = dir
		var se strings.Builder
		cmd.Stderr = &se
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		waitStaged(t, cmd, dir) // into the generations: the base embedding is staged
		for _, sg := range sigs {
			cmd.Process.Signal(sg)
		}
		err := cmd.Wait()
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != exitInterrupted {
			t.Fatalf("%v: exit %v, want %d; stderr %q", sigs, err, exitInterrupted, se.String())
		}
		if !strings.Contains(se.String(), "existing files are unchanged") {
			t.Errorf("%v: stderr %q", sigs, se.String())
		}
		sameSnapshot(t, fmt.Sprintf("run interrupted by %v", sigs), before, snapshot(t, dir))
	}
}

// TestFullDevice: an output that fails with "no space left on device" (/dev/full) is a failure
// of the surroundings, not bad input: exit 1, one line naming the fix, nothing else written.
func TestFullDevice(t *testing.T) {
	if _, err := os.Stat("/dev/full"); err != nil {
		t.Skip("no /dev/full")
	}
	dir := t.TempDir()
	r := runBin(t, dir, "embed", "-dataset", "swissroll", "-n", "300", "-out", "y.npy", "-json", "/dev/full", "-q")
	if r.code != exitFailure || !strings.Contains(r.stderr, "free space") || strings.Count(strings.TrimSpace(r.stderr), "\n") != 0 {
		t.Errorf("exit %d, stderr %q", r.code, r.stderr)
	}
	if files := listTree(t, dir); len(files) != 0 {
		t.Errorf("left %v", files)
	}
}

// TestFileSizeLimitAndClosedPipe: a file-size limit (ulimit -f) and a -json pipe whose reader
// has gone are failures (exit 1) with their own fix, not bad input advising "a writable
// output path" (exit 2, before session 32); nothing is left behind.
func TestFileSizeLimitAndClosedPipe(t *testing.T) {
	dir := t.TempDir()
	cmd := exec.Command("sh", "-c", `ulimit -f 100 && exec "$0" "$@"`, bin, "embed", "-dataset", "swissroll", "-n", "5000", "-method", "em", "-out", "y.npy", "-model", "m", "-q")
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != exitFailure || !strings.Contains(string(out), "ulimit -f") {
		t.Errorf("file-size limit: %v, %q", err, out)
	}
	if files := listTree(t, dir); len(files) != 0 {
		t.Errorf("file-size limit left %v", files)
	}
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	r.Close()
	cmd = exec.Command(bin, "embed", "-dataset", "swissroll", "-n", "300", "-out", "y.npy", "-json", "/dev/stdout", "-q")
	cmd.Dir = dir
	var se bytes.Buffer
	cmd.Stdout, cmd.Stderr = w, &se
	err = cmd.Run()
	w.Close()
	if !errors.As(err, &ee) || ee.ExitCode() != exitFailure || !strings.Contains(se.String(), "reading end of the pipe was closed") {
		t.Errorf("closed pipe: %v, %q", err, se.String())
	}
	if files := listTree(t, dir); len(files) != 0 {
		t.Errorf("closed pipe left %v", files)
	}
}

// TestKilledRunSweep: a run killed with SIGKILL cannot remove its staged files; the next run
// into the folder removes them (they carry the dead process's id) and says so, and keeps a
// dead run's .bak file (the previous content of a file it was replacing), naming it. A live
// process's files are left alone. Before session 32 the hidden files stayed, unnoticed.
func TestKilledRunSweep(t *testing.T) {
	dir := t.TempDir()
	cmd := exec.Command(bin, "embed", "-dataset", "swissroll", "-n", "2000", "-method", "em", "-generations", "100000", "-out", "y.npy", "-q")
	cmd.Dir = dir
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) { // wait until some generations are staged
		if ents, _ := os.ReadDir(dir); len(ents) >= 3 {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	cmd.Process.Kill()
	cmd.Wait()
	dead := cmd.Process.Pid
	bak := filepath.Join(dir, fmt.Sprintf(".glle-bench-%s-%d-123.bak", hostToken(), dead))
	os.WriteFile(bak, []byte("old content"), 0o644)
	live := filepath.Join(dir, fmt.Sprintf(".glle-bench-%s-%d-456.npy", hostToken(), os.Getpid())) // this test process is alive
	os.WriteFile(live, []byte("x"), 0o644)
	// The same dead process id on another host or PID namespace (a shared folder): not ours.
	other := filepath.Join(dir, fmt.Sprintf(".glle-bench-0badc0de-%d-789.npy", dead))
	os.WriteFile(other, []byte("x"), 0o644)
	staged, _ := filepath.Glob(filepath.Join(dir, fmt.Sprintf(".glle-bench-%s-%d-*.npy", hostToken(), dead)))
	if len(staged) < 2 {
		t.Fatalf("the killed run staged %d files", len(staged))
	}
	r := mustRun(t, dir, "embed", "-dataset", "swissroll", "-n", "300", "-method", "em", "-generations", "1", "-out", "y.npy")
	if !strings.Contains(r.stderr, fmt.Sprintf("removed %d hidden file(s)", len(staged))) || !strings.Contains(r.stderr, "rename it back") {
		t.Errorf("stderr %q", r.stderr)
	}
	if left, _ := filepath.Glob(filepath.Join(dir, fmt.Sprintf(".glle-bench-%s-%d-*.npy", hostToken(), dead))); len(left) != 0 {
		t.Errorf("%d staged files of the killed run left", len(left))
	}
	for _, p := range []string{bak, live, other} {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("%s was removed: %v", filepath.Base(p), err)
		}
	}
	if !strings.Contains(r.stderr, "1 hidden .glle-bench-* file(s)") {
		t.Errorf("the other host's staged file is not reported: %q", r.stderr)
	}
}

// TestOutputSymlinkReplaced: an output path that is a symbolic link is replaced by the new
// file; the link's target is not written (docs/robustness.md).
func TestOutputSymlinkReplaced(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "target.npy")
	os.WriteFile(target, []byte("target"), 0o600)
	os.Symlink("target.npy", filepath.Join(dir, "latest.npy"))
	mustRun(t, dir, "embed", "-dataset", "swissroll", "-n", "300", "-out", "latest.npy", "-q")
	if fi, err := os.Lstat(filepath.Join(dir, "latest.npy")); err != nil || !fi.Mode().IsRegular() {
		t.Errorf("latest.npy: %v, %v; want a regular file", fi, err)
	}
	if b, _ := os.ReadFile(target); string(b) != "target" {
		t.Errorf("the link's target was written: %q", b)
	}
}

// waitStaged waits until the child cmd has staged a file in dir (its hidden name carries the
// child's process id), so that a signal sent next reaches a run with outputs in flight. It
// fails the test if the child exits first or nothing is staged within a minute: a fixed
// sleep let a fast machine finish first, and the tests then skipped (before session 32).
func waitStaged(t *testing.T, cmd *exec.Cmd, dir string) {
	t.Helper()
	pattern := filepath.Join(dir, fmt.Sprintf(".glle-bench-%s-%d-*", hostToken(), cmd.Process.Pid))
	for start := time.Now(); time.Since(start) < time.Minute; time.Sleep(5 * time.Millisecond) {
		if m, _ := filepath.Glob(pattern); len(m) > 0 {
			return
		}
		if b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", cmd.Process.Pid)); err != nil || strings.Contains(string(b), ") Z ") {
			cmd.Wait()
			t.Fatalf("the run exited before it staged a file (%v)", cmd.ProcessState)
		}
	}
	cmd.Process.Kill()
	cmd.Wait()
	t.Fatal("nothing staged within a minute")
}

// TestJSONToRedirectedStdout: -json /dev/stdout with standard output redirected to a regular
// file (">> log") writes the summary through descriptor 1, appending; it was refused as "not
// a .json file name", and before that check the commit replaced the /dev/stdout link itself
// with a regular file (a review in session 32). /dev/fd/1 is the same stream.
func TestJSONToRedirectedStdout(t *testing.T) {
	dir := t.TempDir()
	before, _ := os.Lstat("/dev/stdout")
	for _, name := range []string{"/dev/stdout", "/dev/fd/1"} {
		log := filepath.Join(dir, "log.txt")
		os.WriteFile(log, []byte("earlier line\n"), 0o644)
		f, err := os.OpenFile(log, os.O_WRONLY|os.O_APPEND, 0)
		if err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(bin, "embed", "-dataset", "swissroll", "-n", "300", "-out", "y.npy", "-json", name, "-q")
		cmd.Dir = dir
		var se bytes.Buffer
		cmd.Stdout, cmd.Stderr = f, &se
		err = cmd.Run()
		f.Close()
		if err != nil {
			t.Fatalf("%s: %v %s", name, err, se.String())
		}
		b, _ := os.ReadFile(log)
		if !strings.HasPrefix(string(b), "earlier line\n{") || !strings.Contains(string(b), `"command": "embed"`) {
			t.Errorf("%s: log holds %.80q", name, b)
		}
	}
	if after, err := os.Lstat("/dev/stdout"); err != nil || before != nil && after.Mode() != before.Mode() {
		t.Errorf("/dev/stdout changed: %v, %v", after, err)
	}
	// A descriptor open for reading only is refused before the run (it failed at the commit).
	in, err := os.Open(filepath.Join(dir, "log.txt"))
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	cmd := exec.Command(bin, "embed", "-dataset", "swissroll", "-n", "300", "-out", "z.npy", "-json", "/dev/fd/0", "-q")
	cmd.Dir, cmd.Stdin = dir, in
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != exitBadInput || !strings.Contains(string(out), "open for reading only") {
		t.Errorf("-json /dev/fd/0 on a read-only stdin: %v %q", err, out)
	}
	if _, err := os.Stat(filepath.Join(dir, "z.npy")); err == nil {
		t.Error("the refused run wrote z.npy")
	}
}

// TestCopyIntoStreamKeepsDescriptor: writing to /dev/fd/N goes through a duplicate, so the
// descriptor N stays open after the garbage collector runs (an *os.File made from N itself
// would close it from its finalizer: the process's stdout, for /dev/stdout).
func TestCopyIntoStreamKeepsDescriptor(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	src := filepath.Join(t.TempDir(), "s.json")
	os.WriteFile(src, []byte("{}\n"), 0o644)
	if err := copyInto(fmt.Sprintf("/dev/fd/%d", w.Fd()), src); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		runtime.GC()
	}
	time.Sleep(10 * time.Millisecond) // finalizers run on their own goroutine
	if _, err := w.Write([]byte("more\n")); err != nil {
		t.Fatalf("the descriptor was closed: %v", err)
	}
	w.Close()
	got, _ := io.ReadAll(r)
	if string(got) != "{}\nmore\n" {
		t.Errorf("pipe carried %q", got)
	}
}
