package flags

import (
	"svcd/engine"
	"svcd/fsm"
)

// Command types of the module (engine/DESIGN.md lists every owner's).
// Numbers are never reused; 114 is kept for the module.
const (
	// cmdFlagPut creates or replaces a flag (POST, and PATCH once merged).
	cmdFlagPut fsm.Type = 110
	// cmdFlagDelete deletes a flag no other flag needs.
	cmdFlagDelete fsm.Type = 111
	// cmdSegmentPut creates or replaces a segment.
	cmdSegmentPut fsm.Type = 112
	// cmdSegmentDelete deletes a segment nothing references.
	cmdSegmentDelete fsm.Type = 113
)

// putResult is what a put command answers: whether it created or
// replaced, and the new revision and timestamps.
type putResult struct {
	Op      string `json:"op"` // "create" or "update"
	Rev     int64  `json:"rev"`
	Created int64  `json:"created"`
	Updated int64  `json:"updated"`
}

func (m *Flags) registerCommands() {
	engine.RegisterResult[putResult](m.core, "flags.put")
	m.core.Command(cmdFlagPut, "flags.flag_put", m.applyFlagPut)
	m.core.Command(cmdFlagDelete, "flags.flag_delete", m.applyFlagDelete)
	m.core.Command(cmdSegmentPut, "flags.segment_put", m.applySegmentPut)
	m.core.Command(cmdSegmentDelete, "flags.segment_delete", m.applySegmentDelete)
}

// emit publishes a change of kind (flag or segment) to every node's
// snapshot and realtime hub.
func emit(tx *fsm.Tx, kind, op, key string) {
	tx.Emit(fsm.Event{Kind: engine.EvFlagChange, Subject: key, Data: &engine.FlagChange{Kind: kind, Op: op, Key: key}})
}
