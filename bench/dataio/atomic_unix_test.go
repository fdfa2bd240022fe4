//go:build unix

package dataio

import (
	"io"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// TestAtomicWriteUmask: a new file gets 0666 less the umask, as os.Create gives it (it was
// chmodded to 0644 whatever the umask, so umask 077 gave a world-readable file; a user trial);
// a replaced file keeps its own mode.
func TestAtomicWriteUmask(t *testing.T) {
	dir := t.TempDir()
	write := func(w io.Writer) error { _, err := io.WriteString(w, "x"); return err }
	old := syscall.Umask(0o022)
	defer syscall.Umask(old)
	for _, c := range []struct {
		umask int
		want  os.FileMode
	}{{0o077, 0o600}, {0o002, 0o664}, {0o022, 0o644}, {0o027, 0o640}} {
		syscall.Umask(c.umask)
		p := filepath.Join(dir, "new.txt")
		os.Remove(p)
		if err := AtomicWrite(p, write); err != nil {
			t.Fatal(err)
		}
		if fi, err := os.Stat(p); err != nil || fi.Mode().Perm() != c.want {
			t.Errorf("umask %03o: new file mode %v, want %v (%v)", c.umask, fi.Mode().Perm(), c.want, err)
		}
	}
	syscall.Umask(0o077)
	p := filepath.Join(dir, "kept.txt")
	if err := os.WriteFile(p, nil, 0o640); err != nil {
		t.Fatal(err)
	}
	os.Chmod(p, 0o664) // beyond the umask: a replaced file keeps it all the same
	if err := AtomicWrite(p, write); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(p); err != nil || fi.Mode().Perm() != 0o664 {
		t.Errorf("replaced file mode %v, want 0664 (%v)", fi.Mode().Perm(), err)
	}
}
