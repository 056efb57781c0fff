// Package realtime will own WebSocket and SSE delivery: topics,
// per-subscription filters, the replay ring keyed by Raft index, and
// presence. It is not built yet: record changes are already emitted by the
// state machine after each commit (engine.RecordChange events, stamped with
// their Raft index), ready for this package to fan out.
package realtime
