package engine

import (
	"strings"
	"syscall"
	"testing"
)

// TestPhysicalMemoryDefault: the documented default memory limit (MaxMemory = 0) is the
// physical memory, which PhysicalMemory reads from /proc/meminfo; it agrees with sysinfo(2)'s
// total RAM, and CheckFit with default settings refuses a fit whose estimate exceeds it (a
// review in session 32: making the default "no limit" passed every test).
func TestPhysicalMemoryDefault(t *testing.T) {
	var si syscall.Sysinfo_t
	if err := syscall.Sysinfo(&si); err != nil {
		t.Fatal(err)
	}
	want := int64(si.Totalram) * int64(si.Unit)
	got := PhysicalMemory()
	// MemTotal is in kB: within 1 KiB of sysinfo's byte count.
	if d := got - want; d < -1024 || d > 1024 {
		t.Fatalf("PhysicalMemory %d, sysinfo %d", got, want)
	}
	if memoryLimit(Settings{}) != got || memoryLimit(Settings{MaxMemory: -1}) != 0 || memoryLimit(Settings{MaxMemory: 5}) != 5 {
		t.Error("memoryLimit does not resolve 0 to the physical memory, < 0 to none, > 0 as given")
	}
	// The smallest n whose estimate exceeds the physical memory is refused by default and
	// accepted without a limit.
	n := 1000
	for EstimateMemory(n, 3, 10, 2, LLE).Peak <= got {
		n *= 2
	}
	err := CheckFit(n, 3, Settings{})
	if err == nil || !strings.Contains(err.Error(), "memory limit") {
		t.Errorf("CheckFit(%d) with the default limit: %v", n, err)
	}
	if err := CheckFit(n, 3, Settings{MaxMemory: -1}); err != nil {
		t.Errorf("CheckFit(%d) without a limit: %v", n, err)
	}
}
