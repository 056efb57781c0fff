// Package fsm owns the replicated state machine: the versioned command
// envelope, the table of command handlers, the deterministic application of
// committed log entries to SQLite (one transaction per batch, the applied
// index stored in the same transaction), change events emitted after commit,
// consistent snapshots taken while applies continue, and atomic restore.
//
// It knows nothing of Raft, HTTP or the domain: the cluster package adapts it
// to hashicorp/raft, and the engine registers the handlers that give commands
// their meaning. A handler must be deterministic: no clock, randomness,
// network, JavaScript or map-order dependence. Everything non-deterministic is
// resolved before a command is proposed.
package fsm
