package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"syscall"
	"time"

	"gonum.org/v1/gonum/mat"

	"glle/bench/dataio"
)

// Named pipes (FIFOs) as inputs and outputs. open(2) of a named pipe waits for the other end,
// and in the kernel, where no signal handler reaches it: a user trial found a -json or -out
// pipe without a reader hung the commit until one came (SIGINT and SIGTERM, even twice, did
// nothing; SIGKILL left the staged files), and an -in pipe without a writer ignored the first
// SIGINT. openFIFO waits for the other end as long as it takes, as open(2) does, but stops
// with the run's context (the first interrupt then exits 130, nothing committed), and says on
// stderr what it waits for. The file it returns is in the runtime's poller, so the reads and
// writes that follow stop with the context too (stopWithContext).

// fifoNoteAfter is how long openFIFO waits for the other end of a pipe before saying so.
const fifoNoteAfter = time.Second

// isFIFO reports whether path (links followed) is a named pipe.
func isFIFO(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.Mode()&fs.ModeNamedPipe != 0
}

// openFIFO opens the named pipe at path (the file of flag -flagName) for writing (write) or
// reading, once the other end is open. It returns ctx's error as soon as ctx is done, and
// after fifoNoteAfter of waiting writes one note to stderr (nil: none).
func openFIFO(ctx context.Context, stderr io.Writer, flagName, path string, write bool) (*os.File, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	note := time.NewTimer(fifoNoteAfter)
	defer note.Stop()
	say := func() {
		if stderr == nil {
			return
		}
		if write {
			fmt.Fprintf(stderr, "glle-bench: -%s %q is a named pipe with no reader yet: waiting for one to commit the outputs (start the reader, or interrupt to stop with nothing written)\n", flagName, clip(path))
		} else {
			fmt.Fprintf(stderr, "glle-bench: -%s %q is a named pipe with no writer yet: waiting for one (start the writer, or interrupt to stop)\n", flagName, clip(path))
		}
	}
	if write {
		// Without a reader a non-blocking open fails with ENXIO instead of waiting: poll.
		delay := 5 * time.Millisecond
		for {
			f, err := os.OpenFile(path, os.O_WRONLY|syscall.O_NONBLOCK, 0)
			if err == nil {
				return f, nil // non-blocking, in the poller: writes wait there for the reader
			}
			if !errors.Is(err, syscall.ENXIO) {
				return nil, err
			}
			wait := time.NewTimer(delay)
			select {
			case <-ctx.Done():
				wait.Stop()
				return nil, ctx.Err()
			case <-note.C:
				wait.Stop()
				say()
			case <-wait.C:
			}
			delay = min(2*delay, 100*time.Millisecond)
		}
	}
	// A non-blocking open for reading succeeds at once and then reads end of file until a
	// writer comes: open blocking, in a goroutine, and wake it when ctx is done.
	type opened struct {
		f   *os.File
		err error
	}
	ch := make(chan opened, 1)
	go func() {
		f, err := os.Open(path) // the pipe gets the runtime's poller (os.OpenFile on Linux)
		ch <- opened{f, err}
	}()
	for {
		select {
		case r := <-ch:
			return r.f, r.err
		case <-note.C:
			say()
			continue
		case <-ctx.Done():
		}
		break
	}
	// Wake the open with a writer that closes at once (non-blocking: it succeeds once the
	// open is waiting, as a reader of the pipe), then drop what it opened. Should that not work
	// (no write permission on the pipe), the goroutine is left to close its file whenever a
	// writer comes; the process exits anyway.
	for range 100 {
		if w, err := os.OpenFile(path, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			w.Close()
		}
		select {
		case r := <-ch:
			if r.f != nil {
				r.f.Close()
			}
			return nil, ctx.Err()
		case <-time.After(10 * time.Millisecond):
		}
	}
	go func() {
		if r := <-ch; r.f != nil {
			r.f.Close()
		}
	}()
	return nil, ctx.Err()
}

// stopWithContext makes the pending and later reads and writes of f (a file in the runtime's
// poller, as openFIFO returns) fail at once when ctx is done; call the returned function when
// the I/O is over.
func stopWithContext(ctx context.Context, f *os.File) (stop func() bool) {
	return context.AfterFunc(ctx, func() { f.SetDeadline(time.Now()) })
}

// readMatrixFile reads the data matrix at path (the file of flag -flagName) with
// dataio.ReadMatrix; a named pipe is opened and read so that ctx stops the wait for its
// writer and the reading (ctx's error is then returned).
func readMatrixFile(ctx context.Context, stderr io.Writer, flagName, path string) (*mat.Dense, error) {
	if !isFIFO(path) {
		return dataio.ReadMatrix(path)
	}
	var X *mat.Dense
	err := readFIFO(ctx, stderr, flagName, path, func(r io.Reader) (err error) {
		X, err = dataio.ReadMatrixFrom(r, path)
		return err
	})
	return X, err
}

// readNPYFile reads the .npy file at path (flag -flagName) as dataio.ReadNPYFile does, a named
// pipe as readMatrixFile does.
func readNPYFile(ctx context.Context, stderr io.Writer, flagName, path string) (*dataio.Array, error) {
	if !isFIFO(path) {
		return dataio.ReadNPYFile(path)
	}
	var a *dataio.Array
	err := readFIFO(ctx, stderr, flagName, path, func(r io.Reader) (err error) {
		if a, err = dataio.ReadNPY(r); err != nil {
			err = fmt.Errorf("%s: %w", path, err)
		}
		return err
	})
	return a, err
}

// readFIFO opens the named pipe at path for reading (openFIFO) and calls read with it; when
// ctx is done, it returns ctx's error.
func readFIFO(ctx context.Context, stderr io.Writer, flagName, path string, read func(io.Reader) error) error {
	f, err := openFIFO(ctx, stderr, flagName, path, false)
	if err != nil {
		return err
	}
	defer f.Close()
	stop := stopWithContext(ctx, f)
	defer stop()
	err = read(f)
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return err
}
