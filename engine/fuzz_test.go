package engine

import (
	"bytes"
	"encoding/json"
	"math"
	"math/big"
	"regexp"
	"strconv"
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

// FuzzParseMemTotal: parseMemTotal (the default memory limit) never panics and never returns
// a negative size; for a first MemTotal line whose value is a plain non-negative integer it
// returns that value, times 1024 with the unit kB, saturated at the largest int64 (the
// multiplication overflowed unchecked before session 32).
func FuzzParseMemTotal(f *testing.F) {
	for _, s := range []string{"MemTotal:       24576000 kB\nMemFree: 1 kB\n", "MemTotal: 9007199254740993 kB\n", "MemTotal:\n", "MemTotal: -5 kB\n", "MemTotal: 12\n", "x\nMemTotal: 7 KB\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := parseMemTotal(strings.NewReader(s))
		if got < 0 {
			t.Fatalf("parseMemTotal(%q) = %d", s, got)
		}
		for _, line := range strings.Split(s, "\n") {
			rest, ok := strings.CutPrefix(line, "MemTotal:")
			if !ok {
				continue
			}
			fs := strings.Fields(rest)
			if len(fs) == 0 {
				return
			}
			v, err := strconv.ParseInt(fs[0], 10, 64)
			if err != nil || v < 0 {
				if got != 0 {
					t.Fatalf("parseMemTotal(%q) = %d for a bad value", s, got)
				}
				return
			}
			want := v
			if len(fs) > 1 && strings.EqualFold(fs[1], "kB") {
				want = math.MaxInt64
				if v <= math.MaxInt64/1024 {
					want = v * 1024
				}
			}
			if got != want {
				t.Fatalf("parseMemTotal(%q) = %d, want %d", s, got, want)
			}
			return
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
