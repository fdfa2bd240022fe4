//go:build !purego

package cgo

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestCoreSwitchRespectsEnv runs this test binary again with OPENBLAS_CORETYPE set: the
// user's choice must be kept (no switch), and the kernel set must be named in Config.
func TestCoreSwitchRespectsEnv(t *testing.T) {
	if os.Getenv("GLLE_CORE_CHILD") == "1" {
		if switchedToZen {
			t.Fatal("switched kernels although OPENBLAS_CORETYPE is set")
		}
		if !strings.Contains(strings.ToLower(Config()), "core haswell") {
			t.Fatalf("OPENBLAS_CORETYPE=Haswell not in effect: %s", Config())
		}
		return
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
		func() {
			defer func() {
				if r := recover(); r != "too short" {
					t.Errorf("%s too short: recover() = %v, want the panic message", c.name, r)
				}
			}()
			recordArgs(c.split, c.recOff, make([]float64, c.recs), 3, 2, "too short")
		}()
	}
}
