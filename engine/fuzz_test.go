package engine

import (
	"math/big"
	"regexp"
	"strings"
	"testing"
)

// sizeUnit matches ParseBytes's optional unit suffix (K, M, G or T, then B or iB, or B alone).
var sizeUnit = regexp.MustCompile(`(?i)([KMGT](I?B)?|B)$`)

// FuzzParseBytes: ParseBytes never panics, never returns a negative size, and returns 0 only
// for text whose number is exactly zero, since callers such as glle-bench's -max-mem read 0 as
// "no limit". The check parses the number independently with big.Float, which has no underflow
// (1e-400 and 0xAp-2000 are positive to it).
func FuzzParseBytes(f *testing.F) {
	for _, s := range []string{"6G", "500MB", "1.5GiB", "0", "0.5", "1e-400", "0x1p-3", "0xAp-2000", " 12 k ", "9e18", "-0", "-1e-700"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		b, err := ParseBytes(s)
		if err != nil {
			if b != 0 {
				t.Fatalf("ParseBytes(%q) = %d with error %v", s, b, err)
			}
			return
		}
		if b < 0 {
			t.Fatalf("ParseBytes(%q) = %d < 0", s, b)
		}
		if b != 0 {
			return
		}
		num := strings.TrimSpace(sizeUnit.ReplaceAllString(strings.TrimSpace(s), ""))
		if x, ok := new(big.Float).SetString(num); ok && x.Sign() != 0 {
			t.Fatalf("ParseBytes(%q) = 0, but its number %q is %v: a nonzero size read as no limit", s, num, x)
		}
	})
}
