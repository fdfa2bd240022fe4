# GLLE engine: the two set-up commands of the README are `make demo` and `make test`.
GO ?= go
OUT ?= out
GOFLAGS_TEST ?= -count=1 -timeout 25m

.PHONY: demo test test-openblas test-purego deps build vet bench

# deps installs OpenBLAS and LAPACKE with apt-get when they are missing (Debian).
deps:
	@dpkg -s libopenblas-dev liblapacke-dev >/dev/null 2>&1 || { \
	  echo "installing libopenblas-dev liblapacke-dev"; \
	  apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y libopenblas-dev liblapacke-dev; }

build: deps
	$(GO) build -o bin/glle-bench ./cmd/glle-bench

# demo: fit GLLE (EM and direct sampling) on the built-in Swiss roll and write the paper's figures.
demo: build
	mkdir -p $(OUT)
	./bin/glle-bench embed -dataset swissroll -n 5000 -method em -generations 4 -out $(OUT)/swissroll_em.npy -json $(OUT)/swissroll_em.json -plot $(OUT)/swissroll_em.png
	./bin/glle-bench figures -out $(OUT) -n 2000

vet:
	$(GO) vet ./...
	CGO_ENABLED=0 $(GO) vet -tags purego ./...

test-openblas: deps
	$(GO) test $(GOFLAGS_TEST) ./...

test-purego:
	CGO_ENABLED=0 $(GO) test -tags purego $(GOFLAGS_TEST) ./...

# test: the whole suite, OpenBLAS build then purego build.
test: vet test-openblas test-purego
