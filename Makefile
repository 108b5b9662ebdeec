# `make test` is THE test command (CI runs it through .ci/run). It prepares Docker images and a
# throwaway PostgreSQL with deploy/testenv/setup.sh, runs every test, and tears down what it
# started even when tests fail, keeping go test's exit code.
SHELL := /bin/bash
GO ?= go
BIN ?= bin
TESTFLAGS ?=
PKGS ?= ./...
BENCHTIME ?= 1s
FUZZTIME ?= 10s

# with_testenv runs $(1) with TEST_DATABASE_URL set; the EXIT trap tears down a cluster this run
# started, on success, failure or interrupt, and bash keeps the command's exit status.
# While setup.sh builds images (mostly disk, network and waiting on the engine), the test
# binaries' packages compile in the background into Go's build cache (`-exec true` links each
# test binary and runs nothing), so the tests start on a warm cache; a compile error shows in
# the real run below. So do the static binaries that tests build (internal/buildtest, make
# build, deploy/compose/build-images.sh): CGO_ENABLED=0 and -trimpath compile every package
# anew, which took 25-30 s of a test each time the first test of a package paid it.
# Linking here is not wasted: Go caches linked test binaries, so the run below links nothing
# again (`go list -export`, which compiles without linking, only moved the links out of the
# image builds' shadow into the test run: measured twice, in two sessions).
define with_testenv
	@{ $(GO) test -count=1 -run '^$$' -exec /bin/true $(PKGS); \
	  CGO_ENABLED=0 $(GO) build -trimpath ./cmd/frognano ./cmd/frognano-executor ./testdata/hostile/dumpable-executor; \
	} >/dev/null 2>&1 & precompile=$$!; \
	env_out=$$(deploy/testenv/setup.sh) || { rc=$$?; kill $$precompile 2>/dev/null; exit $$rc; }; eval "$$env_out"; \
	if [ "$$FROGNANO_TESTENV_STARTED" = 1 ]; then trap 'deploy/testenv/teardown.sh' EXIT; fi; \
	wait $$precompile; \
	$(1)
endef

.PHONY: build serve sandbox-image test bench fuzz-short vet testenv-up testenv-down

build:
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags='-s -w' -o $(BIN)/ ./cmd/frognano ./cmd/frognano-executor

# `make serve` is THE command that runs the service (see deploy/serve.sh): binaries, sandbox
# image, a local PostgreSQL when DATABASE_URL is unset, then `frognano serve`.
serve:
	deploy/serve.sh

sandbox-image:
	deploy/sandbox/build-offline.sh --go

test:
	$(call with_testenv,$(GO) test -count=1 -timeout 30m $(TESTFLAGS) $(PKGS))

bench:
	$(call with_testenv,$(GO) test -count=1 -run '^$$' -bench . -benchtime $(BENCHTIME) -timeout 30m $(PKGS))

# Runs each fuzz target for FUZZTIME (go test accepts one -fuzz target per package at a time).
fuzz-short:
	$(call with_testenv,set -e; \
	for f in $$(grep -rl --include='*_test.go' '^func Fuzz' . | sort); do \
	  for t in $$(grep -o '^func Fuzz[A-Za-z0-9_]*' "$$f" | cut -d' ' -f2); do \
	    echo "fuzz $$(dirname "$$f") $$t"; \
	    $(GO) test -run '^$$' -fuzz "^$$t\$$" -fuzztime $(FUZZTIME) "$$(dirname "$$f")"; \
	  done; \
	done)

vet:
	$(GO) vet $(PKGS)

# For working by hand: `eval "$$(make -s testenv-up)"` then go test as usual.
testenv-up:
	@deploy/testenv/setup.sh

testenv-down:
	@deploy/testenv/teardown.sh
