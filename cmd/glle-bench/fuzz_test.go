package main

import (
	"errors"
	"strings"
	"testing"
)

// FuzzParseArgs feeds arbitrary command lines (arguments separated by NUL bytes) to the pure
// parser: it must never panic, return either a config or an error, and every error must be one
// non-empty line; accepted configs must satisfy the checks the commands rely on.
func FuzzParseArgs(f *testing.F) {
	for _, s := range []string{
		"",
		"help",
		"embed\x00-h",
		"embed\x00-dataset\x00swissroll\x00-n\x00300\x00-method\x00em\x00-generations\x002\x00-out\x00y.npy",
		"embed\x00-in\x00x.csv\x00-k\x000\x00-out\x00y.npy",
		"generate\x00-model\x00m\x00-generations\x003\x00-out\x00g.csv",
		"figures\x00-out\x00figs\x00-figs\x002,4",
		"dataset\x00-name\x00scurve\x00-n\x00-1\x00-out\x00x.npy",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var args []string
		if s != "" {
			args = strings.Split(s, "\x00")
		}
		cfg, err := parseArgs(args)
		if err != nil {
			if errors.Is(err, errHelp) {
				if _, ok := cfg.(helpConfig); !ok {
					t.Fatalf("help without a helpConfig: %T", cfg)
				}
				return
			}
			msg := oneLine(err.Error())
			if msg == "" {
				t.Fatalf("empty error for %q", args)
			}
			var ie *inputError
			if !errors.As(err, &ie) {
				t.Fatalf("parse error is not an inputError: %T %v", err, err)
			}
			return
		}
		switch c := cfg.(type) {
		case embedConfig:
			s := c.settings
			if c.out == "" || s.K < 1 || s.Dim < 1 || (c.in == "") == (c.dataset == "") || c.generations < 0 ||
				!(c.covScale >= 0) || !(s.Reg > 0) || (c.generations > 0 && !s.Method.Generative()) {
				t.Fatalf("accepted invalid embed config %+v from %q", c, args)
			}
			if c.dataset != "" && c.n <= s.K {
				t.Fatalf("accepted n <= k from %q", args)
			}
		case generateConfig:
			if c.model == "" || c.out == "" || c.generations < 1 || !(c.covScale >= 0) {
				t.Fatalf("accepted invalid generate config %+v from %q", c, args)
			}
		case datasetConfig:
			if c.name == "" || c.out == "" || c.n < 1 {
				t.Fatalf("accepted invalid dataset config %+v from %q", c, args)
			}
		case figuresConfig:
			if c.out == "" || c.n <= c.k || c.k < 1 || len(c.figs) == 0 {
				t.Fatalf("accepted invalid figures config %+v from %q", c, args)
			}
		case helpConfig:
		default:
			t.Fatalf("unexpected config type %T", cfg)
		}
	})
}
