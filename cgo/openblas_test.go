//go:build cgo && !purego

package cgo

import (
	"os"
	"os/exec"
	"runtime"
	"strings"
	"testing"
)

// TestCoreSwitchRespectsEnv runs this test binary again with OPENBLAS_CORETYPE set: the
// user's choice must be kept (no switch), and the kernel set must be named in Config.
func TestCoreSwitchRespectsEnv(t *testing.T) {
	if os.Getenv("GLLE_CORE_CHILD") == "1" {
		if switchedFrom != "" {
			t.Fatal("switched kernels although OPENBLAS_CORETYPE is set")
		}
		if !strings.Contains(strings.ToLower(Config()), "core haswell") {
			t.Fatalf("OPENBLAS_CORETYPE=Haswell not in effect: %s", Config())
		}
		return
	}
	// Haswell is an x86-64 kernel set, and only a DYNAMIC_ARCH OpenBLAS (Debian's) chooses
	// its kernels at run time; elsewhere the variable has nothing to select.
	if runtime.GOARCH != "amd64" || !strings.Contains(Config(), "DYNAMIC_ARCH") {
		t.Skipf("OPENBLAS_CORETYPE=Haswell needs an x86-64 DYNAMIC_ARCH OpenBLAS (%s, %s)", runtime.GOARCH, Config())
	}
	if !strings.Contains(Config(), "; core ") {
		t.Fatalf("Config does not name the kernel set: %s", Config())
	}
	cmd := exec.Command(os.Args[0], "-test.run", "^TestCoreSwitchRespectsEnv$")
	cmd.Env = append(os.Environ(), "GLLE_CORE_CHILD=1", "OPENBLAS_CORETYPE=Haswell")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
}

// TestCoreMatchesCPU checks that the kernel set in use is one of OpenBLAS's AVX2 or AVX-512
// sets whenever the CPU supports AVX2 with FMA, and never one it does not support: without
// the switch in init, OpenBLAS 0.3.21 runs unknown Intel models on its Prescott kernels, 6x
// slower in DGEMM.
func TestCoreMatchesCPU(t *testing.T) {
	if os.Getenv("OPENBLAS_CORETYPE") != "" {
		t.Skip("OPENBLAS_CORETYPE chooses the kernels")
	}
	core := strings.ToLower(coreName())
	isa := isaLevel()
	t.Logf("ISA level %d (0 none, 1 AVX2+FMA, 2 AVX-512); %s", isa, Config())
	modern := modernCore(core)
	switch {
	case isa >= 1 && !modern:
		t.Errorf("CPU supports AVX2+FMA but OpenBLAS runs its %s kernels", core)
	case isa < 2 && (core == "skylakex" || core == "cooperlake" || core == "sapphirerapids"):
		t.Errorf("CPU lacks AVX-512 but OpenBLAS runs its %s kernels", core)
	}
}

// TestRecordArgs checks the forward solves' record-array check: nil arrays pass through as nil
// pointers, arrays long enough for t1 supernodes and nrhs values per recorded row are accepted,
// and each too-short array panics with the caller's message.
func TestRecordArgs(t *testing.T) {
	if sp, ro, rc := recordArgs(nil, nil, nil, 3, 2, "m"); sp != nil || ro != nil || rc != nil {
		t.Errorf("nil records: got non-nil pointers")
	}
	split := []int32{0, 1, 0}
	recOff := []int64{0, 1, 3, 3} // 3 recorded rows below t1 = 3
	if sp, ro, rc := recordArgs(split, recOff, make([]float64, 6), 3, 2, "m"); sp == nil || ro == nil || rc == nil {
		t.Errorf("valid records: got a nil pointer")
	}
	for _, c := range []struct {
		name   string
		split  []int32
		recOff []int64
		recs   int
	}{
		{"split", split[:2], recOff, 6},
		{"recOff", split, recOff[:3], 6},
		{"recs", split, recOff, 5}, // 3 rows x 2 right-hand sides need 6
	} {
		if r := panicMessage(func() {
			recordArgs(c.split, c.recOff, make([]float64, c.recs), 3, 2, "too short")
		}); r != "too short" {
			t.Errorf("%s too short: panic %q, want the panic message", c.name, r)
		}
	}
}
