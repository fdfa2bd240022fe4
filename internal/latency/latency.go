// The bound of a cancelled operation's latency is not a fixed wall-clock time (which a slow
// or loaded machine exceeds, and a fast one makes too loose to notice an ignored cancellation)
// but a fraction of a calibration measured in the same test process: how long the same job
// would have kept running had the cancellation been ignored, timed on an uncancelled run of it.

package latency

import (
	"testing"
	"time"
)

// Divisor: a cancelled operation must return within 1/Divisor of the time an ignored
// cancellation would have let it run. An ignored cancellation then fails unless the measured
// run is Divisor times faster than the calibration run (load changing between the two). The
// prompt ones measured on a loaded two-core machine returned 0.03-20 ms after the
// cancellation against bounds of 0.1-0.4 s, except the engine's factorization (40-80 ms
// against 0.2 s: it checks its context between supernodes and panel blocks); a measured run
// slowed against its calibration beyond that margin is measured again (Within).
const Divisor = 3

// Floor is the smallest bound: a scheduling delay or a garbage-collection pause on a loaded
// machine, which no cancellation check can avoid, is below it (such pauses measure in
// milliseconds; 50 ms leaves a factor of ten).
const Floor = 50 * time.Millisecond

// Limit returns the longest a cancelled operation may take to return when an ignored
// cancellation would have let it run for ignored more (measured by an uncancelled run of the
// same job in the same process): ignored/Divisor, at least Floor. When the floor would let an
// ignored cancellation pass (the bound above half of ignored: a job too short on this machine
// to tell the two apart: ignored below 2 Floor = 100 ms) it skips the test rather than pass it
// vacuously; the tests size their jobs so that this takes a machine three to ten times faster
// than the two-core one they were sized on (ignored 0.3-1.5 s there).
func Limit(tb testing.TB, ignored time.Duration) time.Duration {
	tb.Helper()
	limit := max(ignored/Divisor, Floor)
	if 2*limit > ignored {
		tb.Skipf("an ignored cancellation would cost only %v here, too close to the %v floor to be told from a prompt one", ignored, Floor)
	}
	return limit
}

// Attempts is how many times Within measures before it fails. A load spike that slows one
// measured run against its calibration beyond the Divisor's margin is unlikely to recur in
// the next, with its own calibration; an ignored cancellation exceeds the limit every time.
const Attempts = 3

// Within runs measure, which calibrates and then measures a cancellation afresh on each call
// (attempt counts from 1), until the latency it returns is within its limit, at most Attempts
// times; then it fails tb with the last attempt's numbers. desc names what was measured.
func Within(tb testing.TB, measure func(attempt int) (got, limit time.Duration, desc string)) {
	tb.Helper()
	for a := 1; ; a++ {
		got, limit, desc := measure(a)
		if got <= limit {
			tb.Logf("%s: returned %v after the cancellation, within the limit %v (attempt %d)", desc, got, limit, a)
			return
		}
		if a == Attempts {
			tb.Errorf("%s: returned %v after the cancellation, over the limit %v in each of %d attempts", desc, got, limit, Attempts)
			return
		}
		tb.Logf("%s: returned %v after the cancellation, over the limit %v: measuring again (attempt %d of %d)", desc, got, limit, a+1, Attempts)
	}
}
