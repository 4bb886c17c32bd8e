# nvshbench: every Go build and test runs with CGO_ENABLED=0 (the GPU layer
# is loaded at run time with purego).
export CGO_ENABLED := 0
GO      ?= go
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
COMMIT  ?= $(shell git rev-parse --short HEAD 2>/dev/null)
LDFLAGS := -s -w -X main.Version=$(VERSION) -X main.Commit=$(COMMIT)
BIN     := build/nvshbench

.PHONY: all build test unit lint shim-check cuda gpu-test reproduce golden clean

all: build

## build: the static nvshbench binary (build/nvshbench)
build:
	$(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(BIN) ./cmd/nvshbench

## test: what CI runs: lint, a compile of the CUDA shim with the pinned pip toolchain, unit tests
## (the shim first: the unit tests load build/libnvshbench.so where it exists, so it must be this tree's)
test: lint shim-check
	$(MAKE) unit

unit:
	$(GO) test -count=1 ./...

## lint: go vet + gofmt check
lint:
	$(GO) vet ./...
	@out=$$(gofmt -l .); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

## shim-check: install the pinned CUDA 13.0 / NVSHMEM 3.4.5 / NCCL 2.28.9 wheels into a cached
## venv and build libnvshbench.so through the same discovery users get (nothing runs)
shim-check: build
	scripts/ci-toolchain.sh $(BIN)

## cuda: build the shim with the discovered toolchain into build/libnvshbench.so
cuda: build
	$(BIN) build-shim -o build/libnvshbench.so

## gpu-test: 1 PE and 2 PEs on one GPU, every op verified (skips visibly without a GPU)
gpu-test: build
	$(GO) test -c -tags gpu -o build/gpu.test ./cuda/gputest
	NVSHBENCH_BIN=$(CURDIR)/$(BIN) build/gpu.test -test.v

## reproduce: the paper's figures on this node into build/reproduce
reproduce: build
	$(BIN) reproduce --out build/reproduce

## golden: regenerate golden files of the renderers and fixtures
golden:
	$(GO) test ./internal/fixture ./report ./plots ./compare ./cmd/nvshbench -update

clean:
	rm -rf build
