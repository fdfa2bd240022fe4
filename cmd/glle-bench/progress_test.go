package main

import (
	"bytes"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"glle/engine"
)

// lockedBuffer is a bytes.Buffer safe for concurrent writers and readers: the progress redraw
// goroutine, a running command's output read by the test (startBin).
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func TestProgressLine(t *testing.T) {
	var buf lockedBuffer
	p := newProgress(&buf, true)
	f := p.engineFunc()
	f(engine.Progress{Stage: "knn"})
	f(engine.Progress{Stage: "knn", Final: true})
	f(engine.Progress{Stage: "em", Done: 3, Total: 10})
	p.update("generate", 1, 4, false)
	p.close()
	p.close() // idempotent
	out := buf.String()
	for _, want := range []string{"\r\033[Kglle-bench: kNN graph", "EM 3/10", "generation 1/4", "s"} {
		if !strings.Contains(out, want) {
			t.Errorf("progress output %q lacks %q", out, want)
		}
	}
	if strings.Contains(out, "\n") {
		t.Errorf("progress output has a newline: %q", out)
	}
	if !strings.HasSuffix(out, "\r\033[K") {
		t.Errorf("progress line not cleared at the end: %q", out)
	}

	var quiet lockedBuffer
	q := newProgress(&quiet, false)
	if q.engineFunc() != nil {
		t.Error("a disabled progress line returns a callback")
	}
	q.update("knn", 0, 0, false)
	q.close()
	if quiet.String() != "" {
		t.Errorf("disabled progress wrote %q", quiet.String())
	}
}

// TestPeakRSS: on Linux, after touching every page of 64 MiB, the peak resident set size
// (VmHWM, in bytes) is at least that much; elsewhere there is no /proc and it is 0.
func TestPeakRSS(t *testing.T) {
	if runtime.GOOS != "linux" {
		if v := peakRSS(); v != 0 {
			t.Errorf("peakRSS = %d without /proc/self/status, want 0", v)
		}
		return
	}
	const size = 64 << 20
	buf := make([]byte, size)
	for i := 0; i < size; i += 4096 {
		buf[i] = 1 // fault the page in
	}
	v := peakRSS()
	runtime.KeepAlive(buf)
	if v < size {
		t.Errorf("peakRSS = %d bytes after touching %d bytes", v, size)
	}
}

// TestProgressPlain: where stderr is not a terminal, progress is plain lines (no "\r"): one per
// finished stage with the run's elapsed time, and the current stage's whenever the interval
// passes without a line; the lines of a run shorter than the hold-back are dropped, so a short
// run prints only its summary or its one-line error. Before, nothing at all was printed
// there, so a sweep or a long fit logged to a file showed no sign of life until its end.
func TestProgressPlain(t *testing.T) {
	var buf lockedBuffer
	p := newPlainProgress(&buf, 0, time.Hour)
	f := p.engineFunc()
	f(engine.Progress{Stage: "knn"})
	f(engine.Progress{Stage: "knn", Final: true})
	f(engine.Progress{Stage: "em", Done: 3, Total: 10})
	f(engine.Progress{Stage: "em", Done: 7, Total: 10, Final: true})
	p.setPrefix("fig 3: swissroll em")
	p.update("generate", 1, 4, false)
	p.update("generate", 4, 4, true)
	p.close()
	p.close() // idempotent
	out := buf.String()
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	// EM converged before its iteration limit: "EM 7/10 done" read as a stage cut short.
	want := []string{"glle-bench: kNN graph done (", "glle-bench: EM done after 7 of at most 10 (", "glle-bench: fig 3: swissroll em: generation 4/4 done ("}
	if len(lines) != len(want) || strings.ContainsAny(out, "\r\033") {
		t.Fatalf("plain progress %q: want %d lines without carriage returns or escapes", out, len(want))
	}
	for i, w := range want {
		if !strings.HasPrefix(lines[i], w) || !strings.HasSuffix(lines[i], "s elapsed)") {
			t.Errorf("line %d %q, want %q... s elapsed)", i, lines[i], w)
		}
	}

	// A run that ends within the hold-back prints nothing.
	var short lockedBuffer
	p = newPlainProgress(&short, time.Hour, time.Hour)
	p.update("knn", 0, 0, false)
	p.update("knn", 0, 0, true)
	p.close()
	if short.String() != "" {
		t.Errorf("a run shorter than the hold-back wrote %q", short.String())
	}

	// A stage without an end in the interval gets a line of its state.
	var long lockedBuffer
	p = newPlainProgress(&long, 0, 10*time.Millisecond)
	p.update("generate", 2, 5, false)
	for start := time.Now(); !strings.Contains(long.String(), "generation 2/5 running (") && time.Since(start) < 10*time.Second; {
		time.Sleep(10 * time.Millisecond)
	}
	p.close()
	if !strings.Contains(long.String(), "glle-bench: generation 2/5 running (") {
		t.Errorf("a long stage wrote %q, want its state line", long.String())
	}

	// The run's progress: silent with -q, the live line on a terminal, plain lines elsewhere.
	for _, c := range []struct {
		tty, quiet, on, plain bool
	}{{false, true, false, false}, {true, true, false, false}, {true, false, true, false}, {false, false, true, true}} {
		p := newRunProgress(env{stderr: &lockedBuffer{}, tty: c.tty}, c.quiet)
		if p.on != c.on || p.plain != c.plain {
			t.Errorf("tty %v, -q %v: on %v, plain %v; want %v, %v", c.tty, c.quiet, p.on, p.plain, c.on, c.plain)
		}
		p.close()
	}
}
