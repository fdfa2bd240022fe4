package main

import (
	"bytes"
	"runtime"
	"strings"
	"sync"
	"testing"

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
