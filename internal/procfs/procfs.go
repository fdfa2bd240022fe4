package procfs

import (
	"io"
	"math"
	"os"
	"strconv"
	"strings"
)

// MaxBytes bounds what Size reads: /proc/meminfo and /proc/<pid>/status are a few KiB; a
// source that never ends (or a huge file) must not exhaust memory.
const MaxBytes = 1 << 20

// Size returns the size in bytes on the first line of r that starts with key (such as
// "MemTotal:" of /proc/meminfo or "VmHWM:" of /proc/self/status), or 0 when it is unknown: r
// fails, no line within its first MaxBytes bytes starts with key, or the first that does has
// a first field that is not a non-negative decimal integer or a unit that is neither "kB"
// (1024 bytes, what the kernel writes; any case) nor absent (bytes). A size that overflows
// int64 saturates at math.MaxInt64. Lines may end in "\n" or "\r\n" and have any length.
func Size(r io.Reader, key string) int64 {
	// The whole text, not a bufio.Scanner: a line longer than the scanner's 64 KiB ended the
	// scan before a later key line (session 32's fuzzing).
	b, err := io.ReadAll(io.LimitReader(r, MaxBytes))
	if err != nil {
		return 0
	}
	for line := range strings.Lines(string(b)) {
		rest, ok := strings.CutPrefix(line, key)
		if !ok {
			continue
		}
		fs := strings.Fields(rest)
		if len(fs) == 0 {
			return 0
		}
		v, err := strconv.ParseInt(fs[0], 10, 64)
		if err != nil || v < 0 {
			return 0
		}
		switch {
		case len(fs) == 1:
			return v
		case strings.EqualFold(fs[1], "kB"):
			if v > math.MaxInt64/1024 {
				return math.MaxInt64
			}
			return v * 1024
		}
		return 0 // an unknown unit
	}
	return 0
}

// FileSize is Size of the named file, 0 when it cannot be opened.
func FileSize(name, key string) int64 {
	f, err := os.Open(name)
	if err != nil {
		return 0
	}
	defer f.Close()
	return Size(f, key)
}
