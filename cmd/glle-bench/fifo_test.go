package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// syncBuffer is a bytes.Buffer safe for a running command's output and the test reading it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

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
func startBin(t *testing.T, dir, tmp string, args ...string) (*exec.Cmd, *syncBuffer) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "TMPDIR="+tmp)
	se := &syncBuffer{}
	cmd.Stderr = se
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return cmd, se
}

// waitFor waits until stderr holds want (the run's note that it waits for the other end of a
// pipe); after 20 s without it the test fails, and goes on (the run is waiting, or not).
func waitFor(t *testing.T, se *syncBuffer, want string) {
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
	time.Sleep(500 * time.Millisecond)
	cmd.Process.Signal(syscall.SIGINT)
	if code := exitWithin(t, cmd, 10*time.Second, "stalled writer"); code != exitInterrupted {
		t.Errorf("stalled writer: exit %d, want %d; stderr %q", code, exitInterrupted, se.String())
	}
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
