package procfs

import (
	"errors"
	"fmt"
	"io"
	"math"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/iotest"
)

// statusSample is the start of a real /proc/self/status (Linux 6.x), VmHWM in kB.
const statusSample = "Name:\tglle-bench\nUmask:\t0022\nState:\tR (running)\nTgid:\t4242\nPid:\t4242\n" +
	"VmPeak:\t 1302584 kB\nVmSize:\t 1302584 kB\nVmLck:\t       0 kB\nVmPin:\t       0 kB\n" +
	"VmHWM:\t   68424 kB\nVmRSS:\t   68424 kB\nRssAnon:\t   63180 kB\nThreads:\t5\n"

// meminfoSample is the start of a real /proc/meminfo.
const meminfoSample = "MemTotal:       24576000 kB\nMemFree:         1024000 kB\nMemAvailable:   20480000 kB\n"

// keys are the lines the project reads (engine.PhysicalMemory, glle-bench's peak RSS and
// the BENCHMARKS.md writer).
var keys = []string{"VmHWM:", "MemTotal:"}

// wantSize is an independent reading of Size's contract (math/big, no strconv): the first
// line of the first MaxBytes bytes that starts with key decides; its first field must be a
// decimal integer in [0, MaxInt64], its unit absent (bytes) or kB (x1024, saturated at
// MaxInt64); anything else is 0.
func wantSize(s, key string) int64 {
	s = s[:min(len(s), MaxBytes)]
	for _, line := range strings.Split(s, "\n") {
		if !strings.HasPrefix(line, key) {
			continue
		}
		fs := strings.Fields(line[len(key):])
		if len(fs) == 0 {
			return 0
		}
		digits := strings.TrimPrefix(strings.TrimPrefix(fs[0], "+"), "-")
		if digits == "" || strings.Trim(digits, "0123456789") != "" {
			return 0
		}
		v, _ := new(big.Int).SetString(fs[0], 10)
		if v.Sign() < 0 || !v.IsInt64() {
			return 0
		}
		switch {
		case len(fs) == 1:
		case strings.EqualFold(fs[1], "kb"):
			v.Mul(v, big.NewInt(1024))
		default:
			return 0
		}
		if !v.IsInt64() {
			return math.MaxInt64
		}
		return v.Int64()
	}
	return 0
}

func TestSize(t *testing.T) {
	for _, c := range []struct {
		in, key string
		want    int64
	}{
		{statusSample, "VmHWM:", 68424 << 10},
		{meminfoSample, "MemTotal:", 24576000 << 10},
		{meminfoSample, "MemAvailable:", 20480000 << 10},
		{statusSample, "MemTotal:", 0},
		{strings.Repeat("x", 100000) + "\nVmHWM:\t 5 kB\n", "VmHWM:", 5 << 10}, // longer than bufio's 64 KiB
		{"VmHWM: 100000000000000000\n", "VmHWM:", 1e17},                        // bytes: no unit
		{"VmHWM: 100000000000000000 kB\n", "VmHWM:", math.MaxInt64},            // saturates
		{"MemTotal: 9007199254740991 kB\n", "MemTotal:", 9007199254740991 * 1024},
		{"VmHWM: -5 kB\n", "VmHWM:", 0},
		{"MemTotal: -0 kB\n", "MemTotal:", 0},
		{"VmHWM: 5 MB\n", "VmHWM:", 0},
		{"MemTotal: 1.5 kB\n", "MemTotal:", 0},
		{"VmHWM: x kB\nVmHWM: 5 kB\n", "VmHWM:", 0},           // the first line decides
		{"MemTotal:\nMemTotal: 1048576 kB\n", "MemTotal:", 0}, // so does an empty one
		{"VmHWM: 7 KB\r\n", "VmHWM:", 7 << 10},
		{strings.Repeat("\n", MaxBytes) + "VmHWM: 5 kB\n", "VmHWM:", 0}, // beyond the read limit
		{"", "MemTotal:", 0},
	} {
		if got := Size(strings.NewReader(c.in), c.key); got != c.want {
			t.Errorf("Size(%.60q, %q) = %d, want %d", c.in, c.key, got, c.want)
		}
	}
	if got := Size(iotest.TimeoutReader(strings.NewReader(statusSample)), "VmHWM:"); got != 0 {
		t.Errorf("Size of a failing reader = %d, want 0", got)
	}
}

func TestFileSize(t *testing.T) {
	dir := t.TempDir()
	name := filepath.Join(dir, "meminfo")
	if err := os.WriteFile(name, []byte(meminfoSample), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := FileSize(name, "MemTotal:"); got != 24576000<<10 {
		t.Errorf("FileSize = %d, want %d", got, 24576000<<10)
	}
	if got := FileSize(filepath.Join(dir, "missing"), "MemTotal:"); got != 0 {
		t.Errorf("FileSize of a missing file = %d, want 0", got)
	}
}

// FuzzSize: Size never panics and never returns a negative size; for both keys it agrees
// with wantSize (big-integer arithmetic, so the saturation of the kB multiplication is checked
// independently), and it gives the same answer read one byte at a time, with "\r\n" line
// ends, after other lines, and 0 when the reader fails.
func FuzzSize(f *testing.F) {
	for _, s := range []string{
		statusSample,
		meminfoSample,
		"VmHWM:\t       0 kB\n",
		"VmHWM: 12\n",
		"MemTotal: 9007199254740991 kB\n", // the largest kB value that fits, times 1024
		"MemTotal: 9007199254740992 kB\n", // saturates
		"VmHWM: 9223372036854775808 kB",   // beyond int64: unknown
		"VmHWM: -5 kB\n",
		"MemTotal: 1.5 kB\n",
		"VmHWM: 0x10 kB\n",
		"MemTotal: +7 KB\n",
		"VmHWM: 7 MB\n",
		"MemTotal:\n",
		"VmHWM:\r\nVmRSS: 5 kB\r\n",
		" MemTotal: 3 kB\nMemTotal: 4 kB\n",
		"vmhwm: 3 kB\n",
		"",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, key := range keys {
			got := Size(strings.NewReader(s), key)
			if got < 0 {
				t.Fatalf("Size(%q, %q) = %d", s, key, got)
			}
			if want := wantSize(s, key); got != want {
				t.Fatalf("Size(%q, %q) = %d, want %d", s, key, got, want)
			}
			if v := Size(iotest.OneByteReader(strings.NewReader(s)), key); v != got {
				t.Fatalf("Size(%q, %q) = %d one byte at a time, %d at once", s, key, v, got)
			}
			if v := Size(io.MultiReader(strings.NewReader(s), iotest.ErrReader(errors.New("EIO"))), key); v != 0 {
				t.Fatalf("Size(%q, %q) = %d from a failing reader, want 0 (unknown)", s, key, v)
			}
			if len(s) > MaxBytes/4 {
				continue // the variants below could cross the read limit
			}
			if v := Size(strings.NewReader(strings.ReplaceAll(s, "\n", "\r\n")), key); v != got {
				t.Fatalf("Size(%q, %q) = %d with CRLF line ends, %d with LF", s, key, v, got)
			}
			if v := Size(strings.NewReader("Name:\tx\nVmPeak:\t 99 kB\nMemFree: 1 kB\n"+s), key); v != got {
				t.Fatalf("Size(%q, %q) = %d after other lines, %d alone", s, key, v, got)
			}
			if strings.HasPrefix(s, key) && !strings.Contains(s, "\n") {
				if v := Size(strings.NewReader(s+"\n"+key+" 1 kB\n"), key); v != got {
					t.Fatalf("Size(%q, %q) = %d, changed to %d by a second line", s, key, got, v)
				}
			}
		}
	})
}

func ExampleSize() {
	meminfo := "MemTotal:       16318028 kB\nMemFree:         9123456 kB\n"
	fmt.Println(Size(strings.NewReader(meminfo), "MemTotal:"))
	fmt.Println(Size(strings.NewReader(meminfo), "SwapTotal:")) // no such line: unknown
	// Output:
	// 16709660672
	// 0
}
