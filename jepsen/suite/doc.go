// Package suite runs the jepsen workloads against a real svcd cluster in
// network namespaces while a nemesis injects faults, and checks the
// recorded history: it owns the run loop (Run), the faults (process crash
// and pause, partitions, one-way and lossy links, latency, clock skew,
// membership changes), the workloads (register, local, set, realtime,
// bank, queue, webhook, files) and the per-run report.
//
// A run is reproducible from its seed: the seed picks the order of the
// faults, their targets and durations, and every client's operations.
// Timing is real (processes, kernels, networks), so the same seed gives
// the same plan, not the same interleaving.
package suite
