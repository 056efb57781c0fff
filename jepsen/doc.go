// Package jepsen is svcd's fault-injection harness and its history
// checkers. Its tests run real svcd processes (the binary built from this
// checkout by jepsen/harness), drive them with concurrent clients over the
// public HTTP API only, inject faults (SIGKILL, SIGTERM, deleted database
// files; later SIGSTOP, network partitions and clock skew), and check the
// recorded history: no acknowledged write lost, no write applied twice,
// state identical across restarts and snapshot restores, and, for the
// cluster tests, linearizability of single-record operations with
// porcupine. It imports nothing of svcd's own packages; the single-node
// tests here and the multi-node cluster tests share one harness
// (jepsen/harness: a Node per process, a Cluster of Nodes).
//
// Run the tests from the module root (the SQLite build tag is required,
// since the harness builds ./cmd/svcd with it):
//
//	go test -tags sqlite_fts5 -count=1 -v ./jepsen/...
//
// They start and kill processes and take tens of seconds, so -short skips
// them. The crash test draws its kill schedule from a seed it logs; rerun
// a failure with JEPSEN_SEED=<seed>. JEPSEN_SVCD_BIN=<path> tests a
// prebuilt binary instead of building one. On failure each node's log
// (svcd.log in its data directory) is printed.
//
// The cluster tests (cluster_test.go, -run Cluster) run 3- and 5-node
// clusters. JEPSEN_FAILOVER_RUNS=10 makes the failover test kill the leader
// 10 times instead of 3 and log the p50/max time to the first write a
// survivor acknowledges. The failover benchmark (failover_bench_test.go,
// make bench-failover) runs only with JEPSEN_FAILOVER_BENCH=<kills>: one
// client writing one record at a time, the leader SIGKILLed that many
// times, p50/p99/max to the first acknowledged write and the elections no
// kill explains.
//
// TestBenchRegions is a benchmark, not a test (make bench-regions; it is
// skipped unless SVC_BENCH_REGIONS=1): three nodes in network namespaces
// with region-like round trips between them (harness.Regions), and per
// region the latency of one client's writes through, and reads on, its
// own node. docs/cluster.md ("What three regions cost") shows its table.
package jepsen
