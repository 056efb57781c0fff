// Package cluster owns consensus: the hashicorp/raft node over a
// raft-boltdb log and a file snapshot store, bootstrap of a one-voter
// cluster in single-node mode, recovery on restart, and Apply, which turns a
// command into a committed, applied log entry and returns the state machine's
// result with its index. Single-node mode and a multi-node cluster run the
// same code; only the transport and the membership differ.
package cluster
