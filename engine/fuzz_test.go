package engine

import (
	"bytes"
	"encoding/json"
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

// FuzzReportJSON: Report.UnmarshalJSON (the bench sweep decodes its child runs' reports with
// it) never panics, and whatever it accepts survives MarshalJSON and UnmarshalJSON unchanged.
func FuzzReportJSON(f *testing.F) {
	for _, s := range []string{`{"method":"em","n":5,"em_converged":false}`, `{"method":"lle","stages":[{"name":"knn","seconds":0.1}]}`, `{}`, `null`, `{"eigen":{"solver":"sparse"}}`, `[1]`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var r Report
		if err := json.Unmarshal(b, &r); err != nil {
			return
		}
		out, err := json.Marshal(r)
		if err != nil {
			return // NaN or Inf values decoded from JSON cannot occur; other marshal errors are not the decoder's
		}
		var r2 Report
		if err := json.Unmarshal(out, &r2); err != nil {
			t.Fatalf("re-reading %s: %v", out, err)
		}
		out2, _ := json.Marshal(r2)
		if !bytes.Equal(out, out2) {
			t.Fatalf("round trip changed the report:\n%s\n%s", out, out2)
		}
	})
}
