package main

import (
	"errors"
	"math"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"glle/engine"
	"glle/parallel"
)

// FuzzParseArgs feeds arbitrary command lines (arguments separated by NUL bytes) to the parser
// (which writes nothing): it must never panic, return either a config or an error, and every error must be one
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
		"transform\x00-model\x00m\x00-in\x00a.npy\x00-out\x00b.npy",
		"transform\x00-model\x00m\x00-in\x00a.npy\x00-out\x00b.csv\x00-generations\x002\x00-seed\x007\x00-cov-scale\x000.5\x00-align\x00-uncertainty\x00-json\x00r.json",
		"transform\x00-model\x00m\x00-in\x00a.npy\x00-out\x00b.npy\x00-generations\x001\x00-base-only\x00-frame\x00eigen",
		"transform\x00-model\x00m\x00-in\x00b.npy\x00-out\x00b.npy",
		"generate\x00-model\x00m\x00-generations\x001\x00-out\x00G.json",
		"embed\x00-dataset\x00swissroll\x00-out\x00.npy\x00-reg\x00Inf",
		"help\x00help",
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
				!(c.covScale >= 0) || !(s.Reg > 0) || (c.generations > 0 && !s.Method.Generative()) ||
				!finite(c.covScale) || !finite(s.Reg) || !finite(s.EMTol) || !finite(s.DirectRidge) {
				t.Fatalf("accepted invalid embed config %+v from %q", c, args)
			}
			for _, p := range []string{c.out, c.jsonPath, c.plot} {
				if p != "" && strings.TrimSuffix(filepath.Base(p), filepath.Ext(p)) == "" {
					t.Fatalf("output %q without a name before its extension accepted from %q", p, args)
				}
			}
			if c.dataset != "" && c.n <= s.K {
				t.Fatalf("accepted n <= k from %q", args)
			}
		case generateConfig:
			if c.model == "" || c.out == "" || c.generations < 1 || !(c.covScale >= 0) || math.IsInf(c.covScale, 0) {
				t.Fatalf("accepted invalid generate config %+v from %q", c, args)
			}
			// The prefix is a file name, not another kind of file's (G.json wrote G.json_gen000.npy).
			if ext := strings.ToLower(filepath.Ext(c.out)); slices.Contains(notDataExts, ext) || filepath.Base(c.out) == "." {
				t.Fatalf("generate -out prefix %q accepted from %q", c.out, args)
			}
		case datasetConfig:
			if c.name == "" || c.out == "" || c.n < 1 {
				t.Fatalf("accepted invalid dataset config %+v from %q", c, args)
			}
		case figuresConfig:
			if c.out == "" || c.n <= c.k || c.k < 1 || len(c.figs) == 0 {
				t.Fatalf("accepted invalid figures config %+v from %q", c, args)
			}
		case transformConfig:
			checkTransformConfig(t, c, args)
		case helpConfig:
		default:
			t.Fatalf("unexpected config type %T", cfg)
		}
	})
}

// checkTransformConfig fails t unless c satisfies what runTransform relies on.
func checkTransformConfig(t *testing.T, c transformConfig, args []string) {
	t.Helper()
	a := c.analysis
	switch {
	case c.model == "" || c.in == "" || c.out == "":
		t.Fatalf("transform without -model, -in or -out accepted from %q", args)
	case c.generations < 0 || !(c.covScale >= 0) || math.IsInf(c.covScale, 0) || c.workers < 0 || c.workers > parallel.MaxWorkers:
		t.Fatalf("transform with an invalid count or scale accepted from %q: %+v", args, c)
	case c.baseOnly && c.generations == 0:
		t.Fatalf("-base-only without generations accepted from %q", args)
	case a.align && c.generations == 0, a.alignScale && !a.align, a.uncertainty && c.generations < 2, a.metrics:
		t.Fatalf("transform analysis options %+v with %d generations accepted from %q", a, c.generations, args)
	case checkMatrixExt("in", c.in) != nil || checkMatrixExt("out", c.out) != nil:
		t.Fatalf("transform -in %q -out %q: unknown extension accepted", c.in, c.out)
	case samePath(c.in, c.out) || (c.jsonPath != "" && samePath(c.jsonPath, c.out)):
		t.Fatalf("transform output %q overwrites -in %q or -json %q", c.out, c.in, c.jsonPath)
	}
	if fr, err := engine.ParseFrame(a.frameName); err != nil || fr != a.frame {
		t.Fatalf("-frame %q parsed as %v (%v)", a.frameName, a.frame, err)
	}
}

// FuzzParseBench feeds arbitrary argument lists (NUL-separated) to the bench command's parser
// (-sizes and -methods are comma lists): it must never panic, fail only with a one-line
// bad-input error (or help), and an accepted config must satisfy what runBench relies on and
// parse back to itself from its own flags.
func FuzzParseBench(f *testing.F) {
	for _, s := range []string{
		"",
		"-h",
		"-sizes\x00400,1000\x00-methods\x00lle,em\x00-generations\x002\x00-json\x00out.json",
		"-sizes\x00 20 , 2147483647\x00-methods\x00DIRECT,em-paper",
		"-sizes\x0019",
		"-sizes\x002147483648",
		"-sizes\x00400,,1000",
		"-methods\x00lle,",
		"-methods\x00pca",
		"-sizes\x00400,400\x00-methods\x00lle,LLE",
		"-peers\x00-peer-repeat\x003\x00-peer-max\x000\x00-python\x00/usr/bin/python3\x00-repeat\x005\x00-keep\x00runs",
		"-peer-repeat\x003",
		"-workers\x001025",
		"-dataset\x00SCurve\x00-seed\x0018446744073709551615",
		"-json\x00-keep",
		"extra",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var args []string
		if s != "" {
			args = strings.Split(s, "\x00")
		}
		c, err := parseBench(args)
		if err != nil {
			if errors.Is(err, errHelp) {
				return
			}
			var ie *inputError
			if !errors.As(err, &ie) {
				t.Fatalf("parse error is not an inputError: %T %v", err, err)
			}
			if msg := oneLine(err.Error()); msg == "" || msg != err.Error() {
				t.Fatalf("error %q for %q is not one non-empty line", err.Error(), args)
			}
			return
		}
		if len(c.sizes) == 0 || len(c.methods) == 0 {
			t.Fatalf("no sizes or methods from %q: %+v", args, c)
		}
		for _, n := range c.sizes {
			if n < 20 || n > math.MaxInt32 {
				t.Fatalf("size %d accepted from %q", n, args)
			}
		}
		for _, m := range c.methods {
			if _, err := engine.ParseMethod(m.String()); err != nil {
				t.Fatalf("method %v accepted from %q", m, args)
			}
		}
		// Every size and method once (a duplicate ran twice and overwrote its -keep files).
		if len(slices.Compact(slices.Sorted(slices.Values(c.sizes)))) != len(c.sizes) ||
			len(slices.Compact(slices.Sorted(slices.Values(c.methods)))) != len(c.methods) {
			t.Fatalf("duplicate sizes or methods accepted from %q: %v %v", args, c.sizes, c.methods)
		}
		if c.generations < 0 || c.workers < 0 || c.workers > parallel.MaxWorkers || c.peerMax < 0 || c.peerRepeat < 1 ||
			c.repeat < 1 || (c.peerRepeat > 1 && !c.peers) || (c.python != "" && !c.peers) || checkDataset(c.dataset) != nil {
			t.Fatalf("invalid bench config accepted from %q: %+v", args, c)
		}
		// The config's own flags give it back.
		sizes := make([]string, len(c.sizes))
		for i, n := range c.sizes {
			sizes[i] = strconv.Itoa(n)
		}
		methods := make([]string, len(c.methods))
		for i, m := range c.methods {
			methods[i] = m.String()
		}
		again := []string{"-sizes=" + strings.Join(sizes, ","), "-methods=" + strings.Join(methods, ","),
			"-generations=" + strconv.Itoa(c.generations), "-json=" + c.jsonPath, "-dataset=" + c.dataset,
			"-seed=" + strconv.FormatUint(c.seed, 10), "-workers=" + strconv.Itoa(c.workers),
			"-repeat=" + strconv.Itoa(c.repeat), "-keep=" + c.keep}
		if c.peers { // the scikit-learn flags are refused without -peers
			again = append(again, "-peers", "-peer-repeat="+strconv.Itoa(c.peerRepeat), "-peer-max="+strconv.Itoa(c.peerMax))
			if c.python != "" {
				again = append(again, "-python="+c.python)
			}
		}
		c2, err := parseBench(again)
		if err != nil || !reflect.DeepEqual(c, c2) {
			t.Fatalf("%q parsed as %+v; its flags %q give %+v (%v)", args, c, again, c2, err)
		}
	})
}
