package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"glle/parallel"
)

// runStaged mimics a command: it stages a.npy and b.csv in dir, registers a summary for the
// commit, then panics when boom is set, and finishes through outputs.finish as the commands'
// deferred calls do.
func runStaged(dir string, boom bool, printed *bool) (err error) {
	return runStagedWith(dir, boom, false, printed)
}

// runStagedWith is runStaged whose panic, with onWorker, happens on a worker goroutine of the
// engine's pool (where the engine's per-point stages run) instead of the command's own.
func runStagedWith(dir string, boom, onWorker bool, printed *bool) (err error) {
	var out outputs
	defer func() { err = out.finish(recover(), err) }()
	for _, name := range []string{"a.npy", "b.csv"} {
		if err := out.write("out", filepath.Join(dir, name), func(tmp string) error { return os.WriteFile(tmp, []byte("new"), 0o644) }); err != nil {
			return err
		}
	}
	out.onCommit(func() { *printed = true })
	if boom {
		bug := func() {
			var s []int
			_ = s[3] // a bug in the middle of a run
		}
		if !onWorker {
			bug()
		}
		_ = parallel.For(context.Background(), 8, 2, func(_ context.Context, w, _, _ int) error {
			if w == 1 {
				bug()
			}
			return nil
		})
	}
	return nil
}

// TestOutputsPanicCommitsNothing: a panic during a run (a bug) removes the staged files,
// leaves the existing ones as they were, prints no summary and becomes a one-line error;
// without the panic the same run commits and then prints its summary. Before finish, the
// deferred done committed everything staged so far while the panic unwound.
func TestOutputsPanicCommitsNothing(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "a.npy"), []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	before := snapshot(t, dir)
	printed := false
	// A panic on a worker goroutine reaches the command's goroutine through the pool
	// (parallel.WorkerPanic); before, it ended the process with a stack trace.
	for _, onWorker := range []bool{false, true} {
		err := runStagedWith(dir, true, onWorker, &printed)
		if err == nil || !strings.Contains(err.Error(), "internal error") || !strings.Contains(err.Error(), "index out of range") || strings.Contains(err.Error(), "\n") {
			t.Errorf("panic (on a worker: %v): got error %v, want one line naming the internal error", onWorker, err)
		}
		if printed {
			t.Error("panic: the summary was printed")
		}
		sameSnapshot(t, "panic", before, snapshot(t, dir))
	}

	err := runStaged(dir, false, &printed)
	if err != nil {
		t.Fatal(err)
	}
	if !printed {
		t.Error("success: the summary was not printed after the commit")
	}
	for _, name := range []string{"a.npy", "b.csv"} {
		if b, err := os.ReadFile(filepath.Join(dir, name)); err != nil || string(b) != "new" {
			t.Errorf("success: %s holds %q (%v), want the new content", name, b, err)
		}
	}
}

// TestCheckWritableLeavesNoFile: probing an output path creates nothing under the output's
// own name (a forced exit during the probe could leave it empty) and leaves no hidden probe;
// the probe still refuses a name longer than the folder can hold.
func TestCheckWritableLeavesNoFile(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"out.npy", strings.Repeat("n", 200) + ".npy"} {
		p := filepath.Join(dir, name)
		if err := checkWritable("out", p); err != nil {
			t.Fatalf("%s: %v", name[:10], err)
		}
	}
	if left := snapshot(t, dir); len(left) != 0 {
		t.Errorf("checkWritable left files behind: %v", left)
	}
	// Linux's NAME_MAX is 255 bytes: 256 must be refused, 255 accepted.
	if err := checkWritable("out", filepath.Join(dir, strings.Repeat("n", 252)+".npy")); err == nil {
		t.Error("a 256-byte name was accepted")
	}
	if err := checkWritable("out", filepath.Join(dir, strings.Repeat("n", 251)+".npy")); err != nil {
		t.Errorf("a 255-byte name was refused: %v", err)
	}
	if left := snapshot(t, dir); len(left) != 0 {
		t.Errorf("checkWritable left files behind: %v", left)
	}
	// createProbe names are hidden and as long as asked when that exceeds their random part.
	f, err := createProbe(dir, 100)
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	if b := filepath.Base(f.Name()); len(b) != 100 || !strings.HasPrefix(b, ".glle-bench-probe-") {
		t.Errorf("probe name %q: want a hidden name of 100 bytes", b)
	}
	os.Remove(f.Name())
}

// TestAbandonRemovesScratchTree: a forced exit removes a registered scratch folder with its
// contents (bench's sweep folder), and nothing once it is dropped.
func TestAbandonRemovesScratchTree(t *testing.T) {
	root := t.TempDir()
	tree, kept := filepath.Join(root, "sweep"), filepath.Join(root, "kept")
	for _, d := range []string{tree, kept} {
		if err := os.MkdirAll(filepath.Join(d, "run1"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(d, "run1", "x.npy"), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	stageTree(tree, true)
	stageTree(kept, true)
	stageTree(kept, false)
	if !abandonStaged() {
		t.Fatal("abandonStaged refused outside a commit")
	}
	if _, err := os.Stat(tree); !os.IsNotExist(err) {
		t.Errorf("the registered scratch folder is still there (%v)", err)
	}
	if _, err := os.Stat(filepath.Join(kept, "run1", "x.npy")); err != nil {
		t.Errorf("a dropped scratch folder was touched: %v", err)
	}
}
