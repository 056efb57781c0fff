# svcd: one binary, a complete backend, replicated with Raft.
GO        ?= go
TAGS      := sqlite_fts5
GOFLAGS   := -tags $(TAGS)
BIN       := bin/svcd
PKGS      := ./...
# Tests share two cores: keep package parallelism low so timing-sensitive
# cluster and crash tests are not starved.
TESTFLAGS ?= -count=1 -p 2 -timeout 15m

.PHONY: run build test test-short bench bench-e2e bench-cluster lint fmt fuzz clean

build:
	$(GO) build $(GOFLAGS) -o $(BIN) ./cmd/svcd
	$(GO) build -o bin/svcbench ./cmd/svcbench

run: build
	./$(BIN) serve

test:
	$(GO) vet $(GOFLAGS) $(PKGS)
	$(GO) test $(GOFLAGS) $(TESTFLAGS) $(PKGS)
	$(MAKE) fuzz FUZZTIME=5s

test-short:
	$(GO) test $(GOFLAGS) -short -count=1 $(PKGS)

bench:
	$(GO) test $(GOFLAGS) -run '^$$' -bench . -benchmem ./fsm ./engine/... ./api
	@echo "End-to-end: make build && ./bin/svcd serve & ./bin/svcbench --clients 16 --duration 10s"

# Each fuzz target for FUZZTIME; `make test` replays their seed corpora
# (testdata/fuzz/) and fuzzes each for 5 s.
FUZZTIME ?= 30s
fuzz:
	$(GO) test $(GOFLAGS) -run '^$$' -fuzz FuzzDecode -fuzztime $(FUZZTIME) ./fsm
	$(GO) test $(GOFLAGS) -run '^$$' -fuzz FuzzNormalize -fuzztime $(FUZZTIME) ./engine/schema
	$(GO) test $(GOFLAGS) -run '^$$' -fuzz FuzzParse -fuzztime $(FUZZTIME) ./engine/filter
	$(GO) test $(GOFLAGS) -run '^$$' -fuzz FuzzCompile -fuzztime $(FUZZTIME) ./engine/filter
	$(GO) test $(GOFLAGS) -run '^$$' -fuzz FuzzDifferential -fuzztime $(FUZZTIME) ./engine/filter

lint:
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || (gofmt -l $$(git ls-files '*.go'); exit 1)
	$(GO) vet $(GOFLAGS) $(PKGS)
	$(GO) run honnef.co/go/tools/cmd/staticcheck@v0.8.2 -tags $(TAGS) $(PKGS)

fmt:
	gofmt -w $$(git ls-files '*.go')

clean:
	rm -rf bin

# End-to-end load figures for docs/benchmarks.md: a fresh single node on a
# temporary data dir, svcbench with CLIENTS concurrent clients (16 and 32 by
# default), create, get and list-30 over 10k rows. Prints figures; never fails
# on speed.
BENCH_CLIENTS ?= 16 32
BENCH_DURATION ?= 10s
bench-e2e: build
	@dir=$$(mktemp -d); \
	SVC_DATA_DIR=$$dir SVC_LOG_LEVEL=warn ./$(BIN) serve --http 127.0.0.1:18555 >$$dir/svcd.log 2>&1 & pid=$$!; \
	trap "kill $$pid 2>/dev/null; wait $$pid 2>/dev/null; rm -rf $$dir" EXIT; \
	for i in $$(seq 50); do curl -sf 127.0.0.1:18555/_/ready >/dev/null && break; sleep 0.1; done; \
	for c in $(BENCH_CLIENTS); do \
		./bin/svcbench --url http://127.0.0.1:18555 --clients $$c --duration $(BENCH_DURATION) --warmup 2s --seed-rows 10000 --fresh; \
	done

# Three-node figures for docs/benchmarks.md: a local 3-node cluster (one
# process per node, loopback), svcbench creates sent to the leader and to a
# follower, and gets on a follower.
bench-cluster: build
	@dir=$$(mktemp -d); export SVC_CLUSTER_KEY=bench-$$RANDOM$$RANDOM SVC_LOG_LEVEL=warn; \
	SVC_DATA_DIR=$$dir/n1 ./$(BIN) serve --http 127.0.0.1:18601 --node-id n1 --raft-addr 127.0.0.1:18611 --bootstrap >$$dir/n1.log 2>&1 & p1=$$!; \
	sleep 1.5; \
	SVC_DATA_DIR=$$dir/n2 ./$(BIN) serve --http 127.0.0.1:18602 --node-id n2 --raft-addr 127.0.0.1:18612 --join http://127.0.0.1:18601 >$$dir/n2.log 2>&1 & p2=$$!; \
	SVC_DATA_DIR=$$dir/n3 ./$(BIN) serve --http 127.0.0.1:18603 --node-id n3 --raft-addr 127.0.0.1:18613 --join http://127.0.0.1:18601 >$$dir/n3.log 2>&1 & p3=$$!; \
	trap "kill $$p1 $$p2 $$p3 2>/dev/null; wait 2>/dev/null; rm -rf $$dir" EXIT; \
	for i in $$(seq 100); do curl -sf 127.0.0.1:18603/_/ready >/dev/null && curl -sf 127.0.0.1:18602/_/ready >/dev/null && break; sleep 0.1; done; \
	for c in $(BENCH_CLIENTS); do \
		echo "== leader, $$c clients"; ./bin/svcbench --url http://127.0.0.1:18601 --clients $$c --duration $(BENCH_DURATION) --warmup 2s --scenario create --fresh; \
		echo "== follower, $$c clients"; ./bin/svcbench --url http://127.0.0.1:18602 --clients $$c --duration $(BENCH_DURATION) --warmup 2s --scenario create; \
		echo "== follower reads, $$c clients"; ./bin/svcbench --url http://127.0.0.1:18602 --clients $$c --duration $(BENCH_DURATION) --warmup 2s --scenario get --seed-rows 10000; \
	done
