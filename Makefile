# GLLE engine: the two set-up commands of the README are `make demo` and `make test`.
# bash with pipefail, so that `go test ... | tee FILE` fails when go test fails.
SHELL := /bin/bash
.SHELLFLAGS := -o pipefail -c
# go (and gofmt) from the PATH, else from the default install location the README names.
export PATH := $(PATH):/usr/local/go/bin
GO ?= go
OUT ?= out
GOFLAGS_TEST ?= -count=1 -timeout 25m

.PHONY: demo test test-openblas test-purego deps build vet bench benchmarks-md peers-deps

# deps installs OpenBLAS and LAPACKE with apt-get when they are missing (Debian).
deps:
	@dpkg -s libopenblas-dev liblapacke-dev >/dev/null 2>&1 || { \
	  echo "installing libopenblas-dev liblapacke-dev"; \
	  apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y libopenblas-dev liblapacke-dev; }

build: deps
	$(GO) build -o bin/glle-bench ./cmd/glle-bench

# demo: fit GLLE-EM on the built-in Swiss roll (4 generations, plot), then draw the paper's
# figures (EM and direct sampling on the four datasets) at n = 2000.
demo: build
	mkdir -p $(OUT)
	./bin/glle-bench embed -dataset swissroll -n 5000 -method em -generations 4 -out $(OUT)/swissroll_em.npy -json $(OUT)/swissroll_em.json -plot $(OUT)/swissroll_em.png
	./bin/glle-bench figures -out $(OUT) -n 2000

vet:
	@unformatted="$$(gofmt -l .)"; if [ -n "$$unformatted" ]; then echo "gofmt -w needed: $$unformatted"; exit 1; fi
	$(GO) vet ./...
	CGO_ENABLED=0 $(GO) vet -tags purego ./...
	CGO_ENABLED=0 $(GO) vet ./... # no cgo and no tag: the pure-Go backend too

test-openblas: deps
	$(GO) test $(GOFLAGS_TEST) ./...

test-purego:
	CGO_ENABLED=0 $(GO) test -tags purego $(GOFLAGS_TEST) ./...

# test: the whole suite, OpenBLAS build then purego build.
test: vet test-openblas test-purego

# ---------------------------------------------------------------------------------------
# bench: every go test benchmark for the OpenBLAS build and the purego build (BENCH_COUNT runs
# each, BENCH_TIME per run), both outputs saved under out/bench/, then the benchstat comparison
# (benchstat is installed from the Go module proxy into GOPATH/bin if missing).
# GLLE_BENCH_SIZES=100000,1000000 enlarges the end-to-end benchmarks in bench/.
BENCH_COUNT ?= 6
BENCH_TIME ?= 300ms
BENCH_PKGS ?= ./...
BENCH_OUT ?= $(OUT)/bench
GOFLAGS_BENCH ?= -run '^$$' -bench . -benchtime $(BENCH_TIME) -count $(BENCH_COUNT) -timeout 60m

bench: deps
	@command -v benchstat >/dev/null 2>&1 || test -x "$$($(GO) env GOPATH)/bin/benchstat" || \
	  { echo "installing benchstat"; GOBIN="$$($(GO) env GOPATH)/bin" $(GO) install golang.org/x/perf/cmd/benchstat@latest; }
	mkdir -p $(BENCH_OUT)
	cat /proc/loadavg > $(BENCH_OUT)/load_openblas.txt
	$(GO) test $(GOFLAGS_BENCH) $(BENCH_PKGS) | tee $(BENCH_OUT)/openblas.txt
	cat /proc/loadavg >> $(BENCH_OUT)/load_openblas.txt; cat /proc/loadavg > $(BENCH_OUT)/load_purego.txt
	CGO_ENABLED=0 $(GO) test -tags purego $(GOFLAGS_BENCH) $(BENCH_PKGS) | tee $(BENCH_OUT)/purego.txt
	cat /proc/loadavg >> $(BENCH_OUT)/load_purego.txt
	PATH="$$PATH:$$($(GO) env GOPATH)/bin" benchstat openblas=$(BENCH_OUT)/openblas.txt purego=$(BENCH_OUT)/purego.txt | tee $(BENCH_OUT)/benchstat.txt

# benchmarks-md: regenerate BENCHMARKS.md (never hand-typed numbers) from out/bench/: the
# outputs of `make bench`, and the end-to-end sweep of glle-bench bench, which
# bench/scripts/sweep.sh runs first when its JSON is missing (or SWEEP=1; ~15-20 minutes on 2
# cores: lle at 10k, 100k, 200k, 1M, 2M, beside five interleaved scikit-learn runs and five of
# ours up to 200k; em and direct with three generations at 200k and 1M, five runs each; a purego
# lle sweep at 100k and 1M; medians reported).
benchmarks-md: build peers-deps
	BENCH_OUT=$(BENCH_OUT) sh bench/scripts/sweep.sh
	$(GO) run ./bench/scripts/benchmd -in $(BENCH_OUT) -notes ../shared/reference-notes.md -out BENCHMARKS.md

# peers-deps: scikit-learn for `glle-bench bench -peers` (Debian's python3-sklearn: scikit-learn
# 1.2.1, the version of the performance targets, in the system python /usr/bin/python3).
peers-deps:
	@python3 -c 'import sklearn' 2>/dev/null || /usr/bin/python3 -c 'import sklearn' 2>/dev/null || { \
	  echo "installing python3-sklearn"; \
	  apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y python3-sklearn; }

# ---------------------------------------------------------------------------------------
# fuzz: every fuzz target for an execution budget (about 8 s each here) on top of its seeds
# (f.Add in the test, and a committed corpus in testdata/fuzz/ where one exists). The budgets are counts, not durations: with a -fuzztime
# duration, Go 1.26's fuzz coordinator can fail a target with "context deadline exceeded" when
# the time runs out while a worker is busy (go.dev/issue/75804, fixed in Go 1.27; seen here in
# CI-like runs); a count has no deadline to race. FUZZTIME=30s (say) replaces every budget.
# race: the race detector on the parallel packages (-short: the slow cases are skipped).
# Both are part of `make test` (about 2 + 3 minutes on 2 cores).
FUZZTIME ?=
FUZZ_TARGETS ?= ./bench/dataio:FuzzReadNPY:500000x ./bench/dataio:FuzzReadCSV:400000x \
  ./cmd/glle-bench:FuzzParseArgs:150000x ./cmd/glle-bench:FuzzLoadModel:2000x \
  ./cmd/glle-bench:FuzzParseBench:50000x ./internal/procfs:FuzzSize:150000x \
  ./cmd/glle-bench:FuzzColorValues:25000x ./cmd/glle-bench:FuzzDecodePeerOutput:80000x \
  ./bench/scripts/benchmd:FuzzReadBench:12000x \
  ./bench/scripts/benchmd:FuzzReadSweep:60000x ./bench/scripts/benchmd:FuzzQuotedSections:50000x \
  ./bench/scripts/benchmd:FuzzLoadFile:15000x \
  ./engine:FuzzParseBytes:150000x ./engine:FuzzReportJSON:100000x
RACE_PKGS ?= ./parallel/ ./engine/knn/ ./sparse/ ./engine/

.PHONY: fuzz race
fuzz:
	@set -e; for t in $(FUZZ_TARGETS); do \
	  pkg=$${t%%:*}; rest=$${t#*:}; fn=$${rest%%:*}; budget=$${rest#*:}; \
	  if [ -n "$(FUZZTIME)" ]; then budget="$(FUZZTIME)"; fi; \
	  echo "fuzz $$pkg $$fn ($$budget)"; \
	  $(GO) test -run '^$$' -fuzz "^$$fn$$" -fuzztime $$budget -parallel 2 $$pkg; \
	done

race:
	$(GO) test -race -short $(GOFLAGS_TEST) $(RACE_PKGS)

# The whole suite also fuzzes and runs the race detector (see above).
test: fuzz race
