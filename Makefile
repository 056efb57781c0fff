# svcd: one binary, a complete backend, replicated with Raft.
GO        ?= go
TAGS      := sqlite_fts5
GOFLAGS   := -tags $(TAGS)
BIN       := bin/svcd
PKGS      := ./...
# Tests share two cores: keep package parallelism low so timing-sensitive
# cluster and crash tests are not starved.
TESTFLAGS ?= -count=1 -p 2 -timeout 15m

.PHONY: run build test test-short race bench bench-e2e bench-cluster bench-bulk bench-fanout bench-files bench-queue bench-regions bench-failover lint fmt fuzz clean jepsen jepsen-smoke test-upgrade

build:
	$(GO) build $(GOFLAGS) -o $(BIN) ./cmd/svcd
	$(GO) build -o bin/svcbench ./cmd/svcbench

# ARGS go to svcd serve: make run ARGS='--http :9000 --dir /tmp/svc'.
ARGS ?=
run: build
	./$(BIN) serve $(ARGS)

test:
	$(GO) vet $(GOFLAGS) $(PKGS)
	$(GO) test $(GOFLAGS) $(TESTFLAGS) $(PKGS)
	$(MAKE) fuzz FUZZTIME=5s

# Every test outside jepsen/ under the race detector, fuzz seed corpora
# included; jepsen/ (real svcd processes under faults, which the detector
# would not see into) stays out. About two and a half minutes on two cores
# with a warm build cache, five on a cold one; part of .ci/run, after
# `make test`.
race:
	$(GO) test $(GOFLAGS) -race $(TESTFLAGS) $$($(GO) list $(GOFLAGS) $(PKGS) | grep -v '^svcd/jepsen')

# Rolling upgrade (jepsen/upgrade, docs/operations.md "Rolling upgrades"):
# three nodes of the previous release (the commit in jepsen/upgrade/PREVIOUS,
# built once and cached in ~/.cache/svcd/upgrade) upgraded one at a time to
# this work tree's binary, followers first, under writes through every
# node; then equal digests and every acknowledged write on every node.
# The cluster part takes about 16 s; building this tree's binary up to
# 35 s, and the previous release's as long the first time on a machine
# (measured on two shared cores: 51 s in all with a cold cache of the
# previous binary, 20 to 50 s afterwards); part of .ci/run, after `make
# test`. Needs the full history (not a shallow clone).
test-upgrade:
	SVC_UPGRADE_TEST=1 $(GO) test $(GOFLAGS) -count=1 -timeout 15m -v -run '^TestRollingUpgrade$$' ./jepsen/upgrade

test-short:
	$(GO) test $(GOFLAGS) -short -count=1 $(PKGS)

# Every figure of docs/benchmarks.md: package benchmarks, the query
# benchmarks of an in-process node, then the single-node and 3-node runs
# over HTTP. Prints figures; never fails on speed.
bench:
	$(GO) test $(GOFLAGS) -run '^$$' -bench . -benchmem ./fsm ./engine/... ./api
	$(GO) test $(GOFLAGS) -run '^$$' -bench 'ListFilter|Keyset|Expand' -benchtime 2s ./cmd/svcd/stack
	$(MAKE) bench-e2e
	$(MAKE) bench-cluster
	$(MAKE) bench-fanout
	$(MAKE) bench-bulk
	$(MAKE) bench-files
	$(MAKE) bench-queue

# Each fuzz target for FUZZTIME; `make test` replays their seed corpora
# (testdata/fuzz/) and fuzzes each for 5 s.
FUZZTIME ?= 30s
# fuzz1 fuzzes target $(1) of package $(2) for FUZZTIME. Go's fuzzing
# coordinator can end a duration-bound run with a bare "context deadline
# exceeded" at the deadline while a worker is mid-call (golang/go#75804,
# fixed in go1.27): that, with no failing input written, is not a finding
# and is reported as such; any other failure fails the target.
fuzz1 = echo "go test -fuzz $(1) $(2)"; out=$$($(GO) test $(GOFLAGS) -run '^$$' -fuzz '$(1)' -fuzztime $(FUZZTIME) $(2) 2>&1); rc=$$?; \
	echo "$$out"; if [ $$rc -ne 0 ] && echo "$$out" | grep -qx '    context deadline exceeded' && ! echo "$$out" | grep -q 'Failing input written'; then \
	echo "fuzz: $(1): the fuzztime deadline race of Go's coordinator (Go issue 75804), no failing input: not a finding"; \
	else exit $$rc; fi

fuzz:
	@$(call fuzz1,FuzzDecode,./fsm)
	@$(call fuzz1,FuzzNormalize,./engine/schema)
	@$(call fuzz1,^FuzzIsNumericString$$,./engine/schema)
	@$(call fuzz1,^FuzzDefinition$$,./engine/schema)
	@$(call fuzz1,^FuzzSnapshotDecode$$,./engine/migrations)
	@$(call fuzz1,^FuzzCSVCell$$,./engine/csv)
	@$(call fuzz1,^FuzzImportChunkBinary$$,./engine/csv)
	@$(call fuzz1,^FuzzBatchBinary$$,./engine)
	@$(call fuzz1,FuzzParse,./engine/filter)
	@$(call fuzz1,FuzzCompile,./engine/filter)
	@$(call fuzz1,FuzzDifferential,./engine/filter)
	@$(call fuzz1,FuzzVerify,./engine/token)
	@$(call fuzz1,FuzzNormalizeRecoveryCode,./engine/totp)
	@$(call fuzz1,FuzzAuthBodies,./api)
	@$(call fuzz1,^FuzzAuthFlowBodies$$,./api)
	@$(call fuzz1,^FuzzBatchBody$$,./api)
	@$(call fuzz1,^FuzzListQuery$$,./api)
	@$(call fuzz1,^FuzzUpload$$,./api)
	@$(call fuzz1,FuzzPresenceGossip,./realtime)
	@$(call fuzz1,^FuzzSearchTerms$$,./engine/search)
	@$(call fuzz1,^FuzzParseNearVector$$,./engine/search)
	@$(call fuzz1,^FuzzParseSpec$$,./engine/files/thumb)
	@$(call fuzz1,^FuzzGenerate$$,./engine/files/thumb)
	@$(call fuzz1,^FuzzOpenDamagedLog$$,./cluster)
	@$(call fuzz1,^FuzzLogEntryValue$$,./cluster)
	@$(call fuzz1,^FuzzLogQuery$$,./internal/logfile)

lint:
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || (gofmt -l $$(git ls-files '*.go'); exit 1)
	$(GO) vet $(GOFLAGS) $(PKGS)
	$(GO) run honnef.co/go/tools/cmd/staticcheck@v0.8.2 -tags $(TAGS) $(PKGS)

fmt:
	gofmt -w $$(git ls-files '*.go')

clean:
	rm -rf bin

# The shell steps that start a local three-node cluster in $$dir (n1 on 18601
# bootstraps and leads, n2 and n3 join), stopped and removed when the
# recipe's shell exits; SVC_CLUSTER_KEY must be set.
start_cluster = SVC_DATA_DIR=$$dir/n1 ./$(BIN) serve --http 127.0.0.1:18601 --node-id n1 --raft-addr 127.0.0.1:18611 --bootstrap >$$dir/n1.log 2>&1 & p1=$$!; sleep 1.5; SVC_DATA_DIR=$$dir/n2 ./$(BIN) serve --http 127.0.0.1:18602 --node-id n2 --raft-addr 127.0.0.1:18612 --join http://127.0.0.1:18601 >$$dir/n2.log 2>&1 & p2=$$!; SVC_DATA_DIR=$$dir/n3 ./$(BIN) serve --http 127.0.0.1:18603 --node-id n3 --raft-addr 127.0.0.1:18613 --join http://127.0.0.1:18601 >$$dir/n3.log 2>&1 & p3=$$!; trap "kill $$p1 $$p2 $$p3 2>/dev/null; wait 2>/dev/null; rm -rf $$dir" EXIT; for i in $$(seq 100); do curl -sf 127.0.0.1:18603/_/ready >/dev/null && curl -sf 127.0.0.1:18602/_/ready >/dev/null && break; sleep 0.1; done

# End-to-end load figures for docs/benchmarks.md: a fresh single node on a
# temporary data dir, svcbench with CLIENTS concurrent clients (16 and 32 by
# default): create, get and list-30 over 10k rows; then, on a second fresh
# collection of 10k rows, filtered list-30, updates and conditional updates
# (If-Match). Prints figures; never fails on speed.
BENCH_CLIENTS ?= 16 32
BENCH_DURATION ?= 10s
bench-e2e: build
	@dir=$$(mktemp -d); \
	SVC_DATA_DIR=$$dir SVC_LOG_LEVEL=warn SVC_RATE_ENABLED=0 ./$(BIN) serve --http 127.0.0.1:18555 >$$dir/svcd.log 2>&1 & pid=$$!; \
	trap "kill $$pid 2>/dev/null; wait $$pid 2>/dev/null; rm -rf $$dir" EXIT; \
	for i in $$(seq 50); do curl -sf 127.0.0.1:18555/_/ready >/dev/null && break; sleep 0.1; done; \
	for c in $(BENCH_CLIENTS); do \
		./bin/svcbench --url http://127.0.0.1:18555 --clients $$c --duration $(BENCH_DURATION) --warmup 2s --seed-rows 10000 --fresh; \
		./bin/svcbench --url http://127.0.0.1:18555 --clients $$c --duration $(BENCH_DURATION) --warmup 2s --seed-rows 10000 --fresh \
			--collection bench_query --scenario filter,update,cas; \
	done

# Bulk write figures for docs/benchmarks.md: batches of 100 creates (16
# clients) and a CSV import of 200,000 rows in 5,000-row requests (4 at a
# time), on a fresh single node, then through the leader of a fresh local
# three-node cluster. cpu/row is the server CPU (the node hit) per record.
BENCH_BULK_ROWS ?= 200000
bench-bulk: build
	@dir=$$(mktemp -d); export SVC_LOG_LEVEL=warn SVC_RATE_ENABLED=0; \
	SVC_DATA_DIR=$$dir/one ./$(BIN) serve --http 127.0.0.1:18555 >$$dir/one.log 2>&1 & pid=$$!; \
	for i in $$(seq 50); do curl -sf 127.0.0.1:18555/_/ready >/dev/null && break; sleep 0.1; done; \
	echo "== one node"; \
	./bin/svcbench --url http://127.0.0.1:18555 --clients 16 --duration $(BENCH_DURATION) --warmup 2s --fresh --scenario batch; \
	./bin/svcbench --url http://127.0.0.1:18555 --clients 4 --scenario ingest --rows $(BENCH_BULK_ROWS) --rows-per-request 5000; \
	kill $$pid; wait $$pid 2>/dev/null; \
	export SVC_CLUSTER_KEY=bench-$$RANDOM$$RANDOM; \
	$(start_cluster); \
	echo "== three nodes, through the leader"; \
	./bin/svcbench --url http://127.0.0.1:18601 --clients 16 --duration $(BENCH_DURATION) --warmup 2s --fresh --scenario batch; \
	./bin/svcbench --url http://127.0.0.1:18601 --clients 4 --scenario ingest --rows $(BENCH_BULK_ROWS) --rows-per-request 5000

# Queue throughput for docs/benchmarks.md (docs/jobs.md): BENCH_QUEUE_JOBS
# queue jobs enqueued by 16 clients and run by one worker of concurrency
# 16 (its code returns the payload), on a fresh single node, then on a
# fresh local three-node cluster with the enqueues spread over the nodes
# (the leader runs every job). jobs/s counts from the first enqueue to the
# last success.
BENCH_QUEUE_JOBS ?= 20000
bench-queue: build
	@dir=$$(mktemp -d); export SVC_LOG_LEVEL=warn SVC_RATE_ENABLED=0; \
	SVC_DATA_DIR=$$dir/one ./$(BIN) serve --http 127.0.0.1:18555 >$$dir/one.log 2>&1 & pid=$$!; \
	for i in $$(seq 50); do curl -sf 127.0.0.1:18555/_/ready >/dev/null && break; sleep 0.1; done; \
	echo "== one node"; \
	./bin/svcbench --url http://127.0.0.1:18555 --clients 16 --scenario queue --jobs $(BENCH_QUEUE_JOBS) --worker-concurrency 16; \
	kill $$pid; wait $$pid 2>/dev/null; \
	export SVC_CLUSTER_KEY=bench-$$RANDOM$$RANDOM; \
	$(start_cluster); \
	echo "== three nodes, enqueues spread over them"; \
	./bin/svcbench --urls $(BENCH_NODES) --spread --clients 16 --scenario queue --jobs $(BENCH_QUEUE_JOBS) --worker-concurrency 16

# Realtime fan-out figures for docs/benchmarks.md, per transport on a fresh
# single node: the server's memory per idle subscription, delivery p50/p99 of
# 20 writes to BENCH_FANOUT_SUBS subscribers, delivery p50/p99 with 100
# subscribers under 4 writers (issue 16) and events/s with 100 subscribers
# under 16 writers. The 10,000-subscriber figures of the doc use
# the same commands with --subscribers 10000 (svcbench raises its own
# RLIMIT_NOFILE; the server's `ulimit -n` must exceed the count too).
BENCH_FANOUT_SUBS ?= 1000
bench-fanout: build
	@for tr in ws sse; do \
		dir=$$(mktemp -d); \
		SVC_DATA_DIR=$$dir SVC_LOG_LEVEL=warn SVC_RATE_ENABLED=0 ./$(BIN) serve --http 127.0.0.1:18556 >$$dir/svcd.log 2>&1 & pid=$$!; \
		for i in $$(seq 50); do curl -sf 127.0.0.1:18556/_/ready >/dev/null && break; sleep 0.1; done; \
		./bin/svcbench --url http://127.0.0.1:18556 --transport $$tr --scenario fanout-idle --subscribers $(BENCH_FANOUT_SUBS) --pid $$pid; \
		./bin/svcbench --url http://127.0.0.1:18556 --transport $$tr --scenario fanout --subscribers $(BENCH_FANOUT_SUBS) --writes 20; \
		./bin/svcbench --url http://127.0.0.1:18556 --transport $$tr --scenario fanout-rate --subscribers 100 --clients 4 --duration $(BENCH_DURATION); \
		./bin/svcbench --url http://127.0.0.1:18556 --transport $$tr --scenario fanout-rate --subscribers 100 --clients 16 --duration $(BENCH_DURATION); \
		kill $$pid; wait $$pid 2>/dev/null; rm -rf $$dir; \
	done

# File figures for docs/benchmarks.md (issue 18): upload and download MB/s
# of 10KB, 1MB and 50MB files (16 clients; 2 for 50MB), first on a fresh
# single node, then spread over a fresh local three-node cluster (an upload
# through a follower answers once its bytes are on a majority); one 1GB
# upload streamed to the single node while its memory is sampled; then the
# thumbnail benchmark (2 MP sources, every format, 100x100 and 640x480,
# contain and cover). Prints figures; never fails on speed. About five
# minutes on two cores.
BENCH_FILES_DURATION ?= 5s
BENCH_FILES_BIG ?= 1GB
BENCH_THUMB_TIME ?= 5x
bench-files: build
	@dir=$$(mktemp -d); export SVC_LOG_LEVEL=warn SVC_RATE_ENABLED=0; \
	SVC_DATA_DIR=$$dir/one ./$(BIN) serve --http 127.0.0.1:18557 >$$dir/one.log 2>&1 & pid=$$!; \
	trap "kill $$pid 2>/dev/null; wait $$pid 2>/dev/null; rm -rf $$dir" EXIT; \
	for i in $$(seq 50); do curl -sf 127.0.0.1:18557/_/ready >/dev/null && break; sleep 0.1; done; \
	run="./bin/svcbench --scenario upload,download --duration $(BENCH_FILES_DURATION) --warmup 1s"; \
	echo "== one node"; \
	$$run --url http://127.0.0.1:18557 --clients 16 --file-size 10KB --fresh; \
	$$run --url http://127.0.0.1:18557 --clients 16 --file-size 1MB; \
	$$run --url http://127.0.0.1:18557 --clients 2 --file-size 50MB; \
	echo "== one node, one upload of $(BENCH_FILES_BIG)"; \
	./bin/svcbench --url http://127.0.0.1:18557 --scenario upload-big --file-size $(BENCH_FILES_BIG) --pid $$pid; \
	kill $$pid; wait $$pid 2>/dev/null; \
	export SVC_CLUSTER_KEY=bench-$$RANDOM$$RANDOM; \
	$(start_cluster); \
	echo "== three nodes, each client's requests spread over them"; \
	$$run --urls $(BENCH_NODES) --spread --clients 16 --file-size 10KB --fresh; \
	$$run --urls $(BENCH_NODES) --spread --clients 16 --file-size 1MB; \
	$$run --urls $(BENCH_NODES) --spread --clients 2 --file-size 50MB
	$(GO) test $(GOFLAGS) -run '^$$' -bench Generate -benchtime $(BENCH_THUMB_TIME) -benchmem ./engine/files/thumb

# Three-node figures for docs/benchmarks.md: a local 3-node cluster (one
# process per node, loopback; n1 bootstraps and leads), svcbench creates sent
# to the leader and to a follower, gets on a follower; then, on a fresh
# collection of 10k rows, conditional updates via the leader, via a follower
# and spread over all three nodes, and filtered list-30 on a follower and
# spread over all three.
BENCH_CLUSTER_DURATION ?= 8s
BENCH_NODES := http://127.0.0.1:18601,http://127.0.0.1:18602,http://127.0.0.1:18603
bench-cluster: build
	@dir=$$(mktemp -d); export SVC_CLUSTER_KEY=bench-$$RANDOM$$RANDOM SVC_LOG_LEVEL=warn SVC_RATE_ENABLED=0; \
	$(start_cluster); \
	run="./bin/svcbench --duration $(BENCH_CLUSTER_DURATION) --warmup 2s"; \
	echo "== one client writing via the leader"; $$run --url http://127.0.0.1:18601 --clients 1 --scenario create --fresh; \
	echo "== one client writing via a follower"; $$run --url http://127.0.0.1:18602 --clients 1 --scenario create; \
	for c in $(BENCH_CLIENTS); do \
		echo "== leader, $$c clients"; $$run --url http://127.0.0.1:18601 --clients $$c --scenario create --fresh; \
		echo "== follower, $$c clients"; $$run --url http://127.0.0.1:18602 --clients $$c --scenario create; \
		echo "== follower reads, $$c clients"; $$run --url http://127.0.0.1:18602 --clients $$c --scenario get --seed-rows 10000; \
		echo "== cas via the leader, $$c clients"; $$run --url http://127.0.0.1:18601 --clients $$c --scenario cas --collection bench_query --seed-rows 10000 --fresh; \
		echo "== cas via a follower, $$c clients"; $$run --url http://127.0.0.1:18602 --clients $$c --scenario cas --collection bench_query; \
		echo "== cas spread over 3 nodes, $$c clients"; $$run --urls $(BENCH_NODES) --spread --clients $$c --scenario cas --collection bench_query; \
		echo "== filter on a follower, $$c clients"; $$run --url http://127.0.0.1:18602 --clients $$c --scenario filter --collection bench_query; \
		echo "== filter spread over 3 nodes, $$c clients"; $$run --urls $(BENCH_NODES) --spread --clients $$c --scenario filter --collection bench_query; \
	done

# Three regions for docs/cluster.md ("What three regions cost"): three
# nodes in network namespaces, round trips BENCH_REGIONS_RTT (A-B, B-C, A-C)
# through delaying proxies, svcd's default Raft timing; the leader in each
# region of BENCH_REGIONS_LEADER in turn (the first also without delays, as
# a baseline); per region, one client beside its node: sequential creates
# through it and local reads on it. Prints a Markdown table; never fails on
# speed. Needs root, iproute2 and nftables; about five minutes.
BENCH_REGIONS_RTT ?= 30ms,80ms,150ms
BENCH_REGIONS_LEADER ?= B,A,C
BENCH_REGIONS_WRITES ?= 200
bench-regions:
	SVC_BENCH_REGIONS=1 SVC_BENCH_REGIONS_RTT=$(BENCH_REGIONS_RTT) SVC_BENCH_REGIONS_LEADER=$(BENCH_REGIONS_LEADER) \
	SVC_BENCH_REGIONS_WRITES=$(BENCH_REGIONS_WRITES) SVC_BENCH_REGIONS_READS=$(BENCH_REGIONS_WRITES) \
		$(GO) test $(GOFLAGS) -count=1 -timeout 30m -v -run '^TestBenchRegions$$' ./jepsen/

# Failover figures for docs/reliability.md: a 3-node cluster on loopback,
# one client writing one record at a time (500 ms timeout, next node on any
# failure); the leader SIGKILLed FAILOVER_KILLS times, restarted and caught
# up each time. Prints p50/p99/max from the kill to the first acknowledged
# write sent after it, and elections no kill explains. FAILOVER_ENV sets
# node variables, e.g. FAILOVER_ENV='SVC_RAFT_HEARTBEAT_TIMEOUT=1s'. About
# 5 s per kill; not part of `make test`; never fails on speed.
FAILOVER_KILLS ?= 20
FAILOVER_ENV ?=
bench-failover:
	JEPSEN_FAILOVER_BENCH=$(FAILOVER_KILLS) JEPSEN_FAILOVER_ENV='$(FAILOVER_ENV)' $(GO) test $(GOFLAGS) -count=1 -timeout 30m -v -run '^TestFailoverBench$$' ./jepsen/

# Fault suite (jepsen/): real nodes in network namespaces under crashes,
# pauses, partitions, lossy and slow links, clock skew and membership
# changes, with checked histories. Needs root, iproute2 and nftables.
# Reports go to jepsen/reports/ (JEPSEN_REPORT_DIR). JEPSEN_SEED replays a
# run's fault plan. Each of the seven runs gets JEPSEN_TIME/4 of client
# time and lasts at least one round of every fault; then latency and
# follower pauses alone must cause no election (JEPSEN_TIME/5): about 12
# minutes by default.
JEPSEN_TIME ?= 5m
jepsen:
	JEPSEN=full JEPSEN_TIME=$(JEPSEN_TIME) $(GO) test $(GOFLAGS) -count=1 -timeout 90m -v -run 'TestJepsen' ./jepsen/

# Every fault once, split over the workloads, and the check that the
# deliberately broken builds are caught: about 3.5 minutes; part of .ci/run.
jepsen-smoke:
	JEPSEN=smoke $(GO) test $(GOFLAGS) -count=1 -timeout 20m -v -run 'TestJepsen' ./jepsen/
