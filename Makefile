# svcd: one binary, a complete backend, replicated with Raft.
GO        ?= go
TAGS      := sqlite_fts5
GOFLAGS   := -tags $(TAGS)
BIN       := bin/svcd
PKGS      := ./...
# Tests share two cores: keep package parallelism low so timing-sensitive
# cluster and crash tests are not starved.
TESTFLAGS ?= -count=1 -p 2 -timeout 15m

.PHONY: run build test test-short bench lint fmt fuzz clean svcbench

build:
	$(GO) build $(GOFLAGS) -o $(BIN) ./cmd/svcd
	$(GO) build -o bin/svcbench ./cmd/svcbench

run: build
	./$(BIN) serve

test:
	$(GO) vet $(GOFLAGS) $(PKGS)
	$(GO) test $(GOFLAGS) $(TESTFLAGS) $(PKGS)

test-short:
	$(GO) test $(GOFLAGS) -short -count=1 $(PKGS)

bench:
	$(GO) test $(GOFLAGS) -run '^$$' -bench . -benchmem ./fsm ./engine/... ./api
	@echo "End-to-end: make build && ./bin/svcd serve & ./bin/svcbench --clients 16 --duration 10s"

# Each fuzz target for FUZZTIME; `make test` already replays their seed
# corpora (testdata/fuzz/).
FUZZTIME ?= 30s
fuzz:
	$(GO) test $(GOFLAGS) -run '^$$' -fuzz FuzzDecode -fuzztime $(FUZZTIME) ./fsm
	$(GO) test $(GOFLAGS) -run '^$$' -fuzz FuzzNormalize -fuzztime $(FUZZTIME) ./engine/schema

lint:
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || (gofmt -l $$(git ls-files '*.go'); exit 1)
	$(GO) vet $(GOFLAGS) $(PKGS)
	$(GO) run honnef.co/go/tools/cmd/staticcheck@v0.8.2 -tags $(TAGS) $(PKGS)

fmt:
	gofmt -w $$(git ls-files '*.go')

clean:
	rm -rf bin
