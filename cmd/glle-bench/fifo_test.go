package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
	"unsafe"
)

// mkfifo makes a named pipe in dir, or skips the test where there are none.
func mkfifo(t *testing.T, dir, name string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := syscall.Mkfifo(p, 0o644); err != nil {
		t.Skip("no named pipes here:", err)
	}
	return p
}

// startBin starts the binary in dir with its own temporary folder tmp (where a run stages
// the content of a special output file); stderr is collected.
func startBin(t *testing.T, dir, tmp string, args ...string) (*exec.Cmd, *lockedBuffer) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "TMPDIR="+tmp)
	se := &lockedBuffer{}
	cmd.Stderr = se
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return cmd, se
}

// waitFor waits until stderr holds want (the run's note that it waits for the other end of a
// pipe); after 20 s without it the test fails, and goes on (the run is waiting, or not).
func waitFor(t *testing.T, se *lockedBuffer, want string) {
	t.Helper()
	for start := time.Now(); time.Since(start) < 20*time.Second; time.Sleep(10 * time.Millisecond) {
		if strings.Contains(se.String(), want) {
			return
		}
	}
	t.Errorf("stderr never said %q: %q", want, se.String())
}

// exitWithin waits up to d for the command; a run still alive then is killed and the test
// fails (the hang of the user trial).
func exitWithin(t *testing.T, cmd *exec.Cmd, d time.Duration, what string) int {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		var ee *exec.ExitError
		if err != nil && !errors.As(err, &ee) {
			t.Fatalf("%s: %v", what, err)
		}
		return cmd.ProcessState.ExitCode()
	case <-time.After(d):
		cmd.Process.Kill()
		<-done
		t.Fatalf("%s: still running %v after the signal (killed)", what, d)
		return -1
	}
}

// TestFIFOOutputInterrupt: a -json or -out that is a named pipe without a reader made the
// commit wait in open(2) for ever, and neither SIGINT nor SIGTERM (even twice) could stop it;
// SIGKILL left the staged files (a user trial). Now the run says it waits, and the first
// signal ends it: exit 130, nothing committed, no staged file left, the pipe still a pipe. With
// a reader the output goes into the pipe.
func TestFIFOOutputInterrupt(t *testing.T) {
	for _, c := range []struct {
		name, pipe string
		sig        syscall.Signal
		args       []string
	}{
		{"json", "p.json", syscall.SIGINT, []string{"-out", "y.npy", "-json", "p.json"}},
		{"out", "p.npy", syscall.SIGTERM, []string{"-out", "p.npy", "-json", "r.json"}},
	} {
		dir, tmp := t.TempDir(), t.TempDir()
		name := c.pipe
		fifo := mkfifo(t, dir, name)
		args := append([]string{"embed", "-dataset", "swissroll", "-n", "300"}, c.args...)
		cmd, se := startBin(t, dir, tmp, args...)
		waitFor(t, se, "is a named pipe with no reader yet")
		cmd.Process.Signal(c.sig)
		if code := exitWithin(t, cmd, 10*time.Second, c.name); code != exitInterrupted {
			t.Errorf("%s: exit %d, want %d; stderr %q", c.name, code, exitInterrupted, se.String())
		}
		if !strings.Contains(se.String(), "interrupted: no output was written") {
			t.Errorf("%s: stderr %q", c.name, se.String())
		}
		if files := listTree(t, dir); len(files) != 1 || files[0] != name {
			t.Errorf("%s: the interrupted run left %v", c.name, files)
		}
		if files := listTree(t, tmp); len(files) != 0 {
			t.Errorf("%s: the interrupted run left %v in its temporary folder", c.name, files)
		}
		if fi, err := os.Lstat(fifo); err != nil || fi.Mode()&os.ModeNamedPipe == 0 {
			t.Errorf("%s: the pipe is gone or replaced (%v)", c.name, err)
		}

		// A reader that comes late gets the output, and the run commits.
		cmd, se = startBin(t, dir, tmp, args...)
		waitFor(t, se, "is a named pipe with no reader yet")
		got, err := os.ReadFile(fifo)
		if err != nil {
			t.Fatal(err)
		}
		if code := exitWithin(t, cmd, time.Minute, c.name+" with a reader"); code != exitOK {
			t.Fatalf("%s with a reader: exit %d; stderr %q", c.name, code, se.String())
		}
		if want := `"command": "embed"`; c.name == "json" && !strings.Contains(string(got), want) || c.name == "out" && !bytes.HasPrefix(got, []byte("\x93NUMPY")) {
			t.Errorf("%s: the pipe carried %.80q", c.name, got)
		}
		if fi, err := os.Lstat(fifo); err != nil || fi.Mode()&os.ModeNamedPipe == 0 {
			t.Errorf("%s: the pipe is gone or replaced after the commit (%v)", c.name, err)
		}
	}
}

// TestFIFOPartialInterrupt: an -out pipe whose reader holds it open without reading takes the
// first 64 KiB of the output (the pipe's buffer) and then blocks the commit; an interrupt
// then exits 130 and says that the pipe had passed part of its output (it said that no
// output was written before a review of session 33).
func TestFIFOPartialInterrupt(t *testing.T) {
	dir, tmp := t.TempDir(), t.TempDir()
	fifo := mkfifo(t, dir, "p.npy")
	// Our own reader, opened without waiting for a writer, which never reads.
	r, err := os.OpenFile(fifo, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	// 20000 x 2 float64 values: 320 kB, five times the pipe's buffer.
	cmd, se := startBin(t, dir, tmp, "embed", "-dataset", "swissroll", "-n", "20000", "-out", "p.npy", "-json", "r.json")
	buffered := func() int {
		var n int32
		syscall.Syscall(syscall.SYS_IOCTL, r.Fd(), syscall.TIOCINQ, uintptr(unsafe.Pointer(&n)))
		return int(n)
	}
	deadline := time.Now().Add(time.Minute)
	for buffered() == 0 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if buffered() == 0 {
		cmd.Process.Kill()
		t.Fatalf("nothing reached the pipe within a minute; stderr %q", se.String())
	}
	cmd.Process.Signal(syscall.SIGINT)
	if code := exitWithin(t, cmd, 10*time.Second, "partial pipe"); code != exitInterrupted {
		t.Errorf("exit %d, want %d; stderr %q", code, exitInterrupted, se.String())
	}
	if !strings.Contains(se.String(), "had already passed") || strings.Contains(se.String(), "no output was written") {
		t.Errorf("stderr %q", se.String())
	}
	if files := listTree(t, dir); len(files) != 1 || files[0] != "p.npy" {
		t.Errorf("the interrupted run left %v", files)
	}
}

// TestFIFOInputInterrupt: an -in (or -color) named pipe without a writer ignored the first
// SIGINT (the open waited in the kernel; a user trial); now the first signal ends the run with
// exit 130, and so does one while a writer holds the pipe open without writing.
func TestFIFOInputInterrupt(t *testing.T) {
	dir, tmp := t.TempDir(), t.TempDir()
	mkfifo(t, dir, "in.csv")
	mkfifo(t, dir, "c.npy")
	for _, args := range [][]string{
		{"embed", "-in", "in.csv", "-out", "y.npy"},
		{"embed", "-dataset", "swissroll", "-n", "300", "-out", "y.npy", "-plot", "y.png", "-color", "c.npy"},
	} {
		cmd, se := startBin(t, dir, tmp, args...)
		waitFor(t, se, "is a named pipe with no writer yet")
		cmd.Process.Signal(syscall.SIGINT)
		if code := exitWithin(t, cmd, 10*time.Second, args[2]); code != exitInterrupted {
			t.Errorf("%v: exit %d, want %d; stderr %q", args, code, exitInterrupted, se.String())
		}
		if files := listTree(t, dir); len(files) != 2 {
			t.Errorf("%v: left %v", args, files)
		}
	}
	// A writer that opens the pipe and writes nothing: the read is interrupted too.
	w := exec.Command("sh", "-c", "exec sleep 30 > in.csv")
	w.Dir = dir
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { w.Process.Kill(); w.Wait() }()
	cmd, se := startBin(t, dir, tmp, "embed", "-in", "in.csv", "-out", "y.npy")
	// Signal once the run holds the pipe open (it then waits in the read), not after a fixed
	// sleep, which a loaded machine can outlast (a vacuous pass) or undercut.
	waitOpened(t, cmd.Process.Pid, filepath.Join(dir, "in.csv"))
	cmd.Process.Signal(syscall.SIGINT)
	if code := exitWithin(t, cmd, 10*time.Second, "stalled writer"); code != exitInterrupted {
		t.Errorf("stalled writer: exit %d, want %d; stderr %q", code, exitInterrupted, se.String())
	}
}

// waitOpened waits (at most a minute) until process pid has the file path open, from its
// /proc/PID/fd links; it skips the test where /proc does not list them.
func waitOpened(t *testing.T, pid int, path string) {
	t.Helper()
	fdDir := fmt.Sprintf("/proc/%d/fd", pid)
	if _, err := os.ReadDir(fdDir); err != nil {
		t.Skip("no /proc/PID/fd here:", err)
	}
	want, _ := filepath.EvalSymlinks(path)
	for end := time.Now().Add(time.Minute); time.Now().Before(end); time.Sleep(10 * time.Millisecond) {
		es, _ := os.ReadDir(fdDir)
		for _, e := range es {
			if l, err := os.Readlink(filepath.Join(fdDir, e.Name())); err == nil && (l == path || l == want) {
				return
			}
		}
	}
	t.Fatalf("process %d never opened %s", pid, path)
}

// TestOpenFIFOCancel: openFIFO returns the context's error as soon as it is done, for either
// end, and a reader's open left waiting is woken (its goroutine ends).
func TestOpenFIFOCancel(t *testing.T) {
	fifo := mkfifo(t, t.TempDir(), "p")
	for _, write := range []bool{true, false} {
		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(100*time.Millisecond, cancel)
		start := time.Now()
		f, err := openFIFO(ctx, nil, "json", fifo, write)
		if !errors.Is(err, context.Canceled) || f != nil {
			t.Errorf("write %v: %v, %v", write, f, err)
		}
		if d := time.Since(start); d > 5*time.Second {
			t.Errorf("write %v: returned %v after the cancellation", write, d)
		}
	}
	// Both ends once the other comes: the content passes.
	done := make(chan []byte, 1)
	go func() {
		f, err := openFIFO(context.Background(), nil, "in", fifo, false)
		if err != nil {
			done <- nil
			return
		}
		b, _ := readAllClose(f)
		done <- b
	}()
	f, err := openFIFO(context.Background(), nil, "json", fifo, true)
	if err != nil {
		t.Fatal(err)
	}
	f.Write([]byte("hello"))
	f.Close()
	if b := <-done; string(b) != "hello" {
		t.Errorf("read %q", b)
	}
}

func readAllClose(f *os.File) ([]byte, error) {
	defer f.Close()
	var b bytes.Buffer
	_, err := b.ReadFrom(f)
	return b.Bytes(), err
}

// TestBenchJSONFIFO: bench -json into a named pipe writes the report into it (the report was
// renamed over the pipe, replacing it with a regular file), and waits for the reader.
func TestBenchJSONFIFO(t *testing.T) {
	dir, tmp := t.TempDir(), t.TempDir()
	fifo := mkfifo(t, dir, "r.json")
	cmd, se := startBin(t, dir, tmp, "bench", "-sizes", "100", "-methods", "lle", "-generations", "0", "-json", "r.json")
	waitFor(t, se, "is a named pipe with no reader yet")
	got, err := os.ReadFile(fifo)
	if err != nil {
		t.Fatal(err)
	}
	if code := exitWithin(t, cmd, time.Minute, "bench"); code != exitOK {
		t.Fatalf("bench: exit %d; stderr %q", code, se.String())
	}
	if !strings.Contains(string(got), `"command": "bench"`) {
		t.Errorf("the pipe carried %.80q", got)
	}
	if fi, err := os.Lstat(fifo); err != nil || fi.Mode()&os.ModeNamedPipe == 0 {
		t.Errorf("the pipe was replaced (%v)", err)
	}
	if files := listTree(t, tmp); len(files) != 0 {
		t.Errorf("left %v in the temporary folder", files)
	}
}
