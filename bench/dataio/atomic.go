package dataio

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
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
// The new file gets the permission bits of the file it replaces; a file that did not exist
// gets 0666 less the umask (or the folder's default ACL), as os.Create gives it. If path is a
// symbolic link, the link itself is replaced by a regular file.
func AtomicWrite(path string, fn func(w io.Writer) error) error {
	dir, base := filepath.Split(path)
	if base == "" {
		return fmt.Errorf("%s: not a file name", path)
	}
	if dir == "" {
		dir = "."
	}
	// keep: the permission bits of the file replaced; a new file's are the ones the kernel
	// gave the temporary file (0666 less the umask; it was 0644 whatever the umask before).
	var keep os.FileMode
	replacing := false
	perm := os.FileMode(0o666)
	if fi, statErr := os.Stat(path); statErr == nil {
		if fi.IsDir() {
			return fmt.Errorf("%s: is a directory", path)
		}
		keep, replacing, perm = fi.Mode().Perm(), true, 0o600
	}
	f, err := createTemp(dir, "."+base+".tmp", perm)
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
	if replacing {
		if err := f.Chmod(keep); err != nil && !errors.Is(err, errors.ErrUnsupported) {
			return fmt.Errorf("%s: %w", path, err)
		}
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

// createTemp creates a new file in dir named prefix followed by a random number, as
// os.CreateTemp does, but with permission bits perm (less the umask) instead of 0600.
func createTemp(dir, prefix string, perm os.FileMode) (*os.File, error) {
	for try := 0; ; try++ {
		name := filepath.Join(dir, prefix+strconv.FormatUint(rand.Uint64(), 10))
		f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_EXCL, perm)
		if errors.Is(err, fs.ErrExist) && try < 100 {
			continue
		}
		return f, err
	}
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
