package fsm

// Event is a change emitted by a handler and delivered after its batch
// commits. Index is the log index of the command that caused it: the same on
// every node, so it serves as a global sequence number for realtime replay.
type Event struct {
	Index uint64
	// Kind names the change, for example "record.create" or "schema".
	Kind string
	// Subject identifies what changed (a collection id, a settings key...).
	Subject string
	// Data carries the handler's payload for subscribers (read-only).
	Data any
}

// Observer receives the events of each committed batch, in log order, on the
// apply goroutine, before waiters on the batch's index are released. It must
// be quick and must not propose commands or wait on the FSM.
type Observer func(events []Event)
