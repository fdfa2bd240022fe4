package dataio

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// AtomicWrite creates or replaces the file at path with what fn writes, so that path holds
// either its old content or the complete new content, never a partial file.
//
// fn writes into a buffered temporary file created in the target directory
// (os.CreateTemp(dir, "."+base+".tmp*")). When fn returns nil, the buffer is flushed, the
// file is fsynced, closed and renamed onto path, and the directory is synced (best effort).
// When fn returns an error or panics, or flushing, syncing, closing or renaming fails, the
// temporary file is removed and the error is returned (the panic propagates). Only a process
// killed in the middle of a write can leave a stale hidden ".<base>.tmp*" file behind; path
// itself is never partial.
//
// The new file gets the permission bits of the file it replaces, or 0644 for a new file.
// If path is a symbolic link, the link itself is replaced by a regular file.
func AtomicWrite(path string, fn func(w io.Writer) error) error {
	dir, base := filepath.Split(path)
	if base == "" {
		return fmt.Errorf("%s: not a file name", path)
	}
	if dir == "" {
		dir = "."
	}
	mode := os.FileMode(0o644)
	if fi, statErr := os.Stat(path); statErr == nil {
		if fi.IsDir() {
			return fmt.Errorf("%s: is a directory", path)
		}
		mode = fi.Mode().Perm()
	}
	f, err := os.CreateTemp(dir, "."+base+".tmp*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	committed := false
	defer func() {
		if !committed {
			f.Close() // may already be closed; the error is irrelevant here
			os.Remove(tmp)
		}
	}()

	bw := bufio.NewWriterSize(f, 1<<20)
	if err := fn(bw); err != nil {
		return err
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if err := f.Chmod(mode); err != nil && !errors.Is(err, errors.ErrUnsupported) {
		return fmt.Errorf("%s: %w", path, err)
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return err
	}
	committed = true
	SyncDir(dir)
	return nil
}

// SyncDir makes a rename in dir durable where the platform allows it; errors are ignored
// (directories cannot be synced on every system).
func SyncDir(dir string) {
	d, err := os.Open(dir)
	if err != nil {
		return
	}
	d.Sync()
	d.Close()
}
