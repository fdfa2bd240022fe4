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
