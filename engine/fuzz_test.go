package engine

import (
	"strings"
	"testing"
)

// FuzzParseBytes: ParseBytes never panics, never returns a negative size, and returns 0 only
// for text whose number is zero (no nonzero digit before an exponent), since callers such as
// glle-bench's -max-mem read 0 as "no limit".
func FuzzParseBytes(f *testing.F) {
	for _, s := range []string{"6G", "500MB", "1.5GiB", "0", "0.5", "1e-400", "0x1p-3", " 12 k ", "9e18", "-0"} {
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
		mant := strings.ToUpper(s)
		if i := strings.IndexAny(mant, "EP"); i >= 0 {
			mant = mant[:i]
		}
		if b == 0 && strings.ContainsAny(mant, "123456789") {
			t.Fatalf("ParseBytes(%q) = 0: a nonzero size read as no limit", s)
		}
	})
}
