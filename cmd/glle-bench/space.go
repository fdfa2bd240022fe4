package main

import (
	"fmt"
	"os"
	"strings"
	"syscall"

	"glle/engine"
)

// fileNeed is one output file a run will write and its estimated size.
type fileNeed struct {
	path  string
	bytes int64
}

// matrixNeed estimates the size of a rows x cols matrix file written to path: a .npy file
// exactly (its header is at most 128 bytes), a text file at 20 bytes per value (the shortest
// representation of a float64 that reads back is 17-24 characters with its separator for
// values that are not round).
func matrixNeed(path string, rows, cols int) fileNeed {
	v := satMul(int64(rows), int64(cols))
	if strings.EqualFold(fileExt(path), ".npy") {
		return fileNeed{path, satAdd(128, satMul(8, v))}
	}
	return fileNeed{path, satMul(20, v)}
}

// genNeeds lists the base embedding (unless base is false), the G generation files of out
// and the uncertainty and mean files of -uncertainty, each n x p.
func genNeeds(out string, base bool, gens, n, p int, a analysisOpts) []fileNeed {
	var need []fileNeed
	if base {
		need = append(need, matrixNeed(out, n, p))
	}
	if gens > 0 {
		one := matrixNeed(genPath(out, 0), n, p)
		// One entry for all generations (they share the folder): gens x the size of one.
		need = append(need, fileNeed{genPath(out, 0), satMul(one.bytes, int64(gens))})
	}
	if a.uncertainty {
		s, m := uncertaintyFiles(out)
		need = append(need, matrixNeed(s, n, 1), matrixNeed(m, n, p))
	}
	return need
}

// checkSpace refuses a run whose outputs cannot fit before any of the work: per device, the
// estimated size of the outputs on it against the space statfs says is available to this
// user, and their count against its free inodes. Beyond the device's whole size the run is
// bad input (exit 2); beyond the space available it fails as a full disk does (exit 1). A
// device that reports no size (an unlimited tmpfs) is not checked. Every output is staged beside its final
// name and the files it replaces stay until the commit, so the whole size is needed. A
// device statfs cannot read, and special files (/dev/stdout), are not checked. files is the
// number of files the run writes (generations count one each).
func checkSpace(need []fileNeed, files int64) error {
	type dev struct {
		dir          string
		bytes, files int64
		avail, inode int64
		total        int64
	}
	var devs []*dev
	byID := map[uint64]*dev{}
	for _, f := range need {
		if fi, err := os.Stat(f.path); err == nil && !fi.Mode().IsRegular() {
			continue
		}
		dir := fileDir(f.path)
		var st syscall.Stat_t
		var fs syscall.Statfs_t
		if syscall.Stat(dir, &st) != nil || syscall.Statfs(dir, &fs) != nil {
			continue
		}
		if fs.Blocks == 0 {
			continue // no size reported (an unlimited tmpfs, some FUSE mounts): nothing to check
		}
		d := byID[uint64(st.Dev)]
		if d == nil {
			unit := int64(fs.Frsize) // statfs counts blocks in fragment-size units
			if unit <= 0 {
				unit = int64(fs.Bsize)
			}
			d = &dev{dir: dir, avail: satMul(int64(fs.Bavail), unit), total: satMul(int64(fs.Blocks), unit), inode: int64(fs.Ffree)}
			if fs.Files == 0 { // no inode limit reported (some network and FUSE file systems)
				d.inode = -1
			}
			byID[uint64(st.Dev)] = d
			devs = append(devs, d)
		}
		d.bytes = satAdd(d.bytes, f.bytes)
	}
	if len(devs) == 1 {
		devs[0].files = files
	}
	for _, d := range devs {
		if d.bytes > d.total {
			// More than the whole device: no cleaning up makes the command succeed (exit 2).
			return badInput("write fewer generations or points, or choose another folder",
				"the outputs need about %s in %q, more than its device's whole size (%s)", engine.FormatBytes(d.bytes), clip(d.dir), engine.FormatBytes(d.total))
		}
		if d.bytes > d.avail {
			// A full disk, as when a write fails with ENOSPC: the same command succeeds once
			// there is room (exit 1, docs/robustness.md).
			return fmt.Errorf("the outputs need about %s in %q, whose device has %s available: free space, write fewer generations or points, or choose another folder",
				engine.FormatBytes(d.bytes), clip(d.dir), engine.FormatBytes(d.avail))
		}
		if d.inode >= 0 && d.files > d.inode {
			return badInput("write fewer generations, or choose another folder",
				"the outputs are %d files in %q, whose device has room for %d more (free inodes)", d.files, clip(d.dir), d.inode)
		}
	}
	return nil
}

// satMul is a * b for non-negative sizes, saturating at the largest int64.
func satMul(a, b int64) int64 {
	if a != 0 && b > (1<<63-1)/a {
		return 1<<63 - 1
	}
	return a * b
}

// satAdd is a + b for non-negative sizes, saturating at the largest int64.
func satAdd(a, b int64) int64 {
	if s := a + b; s >= a {
		return s
	}
	return 1<<63 - 1
}
