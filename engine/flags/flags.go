// Package flags is the engine's feature flags module (SPEC.md "Feature
// flag", CONTRACT.md's flag shape): flags with a type, named variations,
// a default value and ordered targeting rules; named segments of
// conditions that rules share; and the evaluation of flags for a
// caller's context.
//
// Flags and segments are written through the log (commands 110-113,
// the tables of internal schema version 11). The proposing node checks a
// definition completely; the apply checks what depends on the committed
// state of other flags and segments (prerequisites and segments exist,
// no cycles, no variation that another flag's prerequisite needs goes
// away, nothing still referenced is deleted), so every replica reaches
// the same outcome, and emits engine.EvFlagChange, which the realtime hub
// of every node publishes on the __flags topic.
//
// Evaluation (evaluate.go) never reads the database or goes through the
// log: every node keeps a compiled snapshot of all flags and segments in
// memory (snapshot.go), refreshed from committed events, so it runs on
// any node at the cost of a few map lookups per rule.
package flags

import (
	"context"
	"fmt"
	"sync/atomic"

	"svcd/engine"
)

// Flags keeps, evaluates and changes feature flags and segments (the
// module's face for the HTTP layer and for server-side code).
type Flags struct {
	core *engine.Engine
	snap atomic.Pointer[snapshot]
}

// New wires the flags module to core: its tables, commands and results,
// and the snapshot kept fresh from committed events. Call it before
// core.Seal.
func New(core *engine.Engine) (*Flags, error) {
	m := &Flags{core: core}
	m.snap.Store(emptySnapshot())
	m.registerTables()
	m.registerCommands()
	core.OnEvents(m.onEvents)
	if err := m.refresh(context.Background(), true, nil, nil); err != nil {
		return nil, fmt.Errorf("flags: %w", err)
	}
	return m, nil
}

// Errors of the module.
var (
	errFlagNotFound    = engine.Errorf(engine.KindNotFound, "The flag wasn't found")
	errSegmentNotFound = engine.Errorf(engine.KindNotFound, "The segment wasn't found")
	// errMoved: the flag or segment a PATCH was merged onto changed
	// before the PATCH applied (the method merges again).
	errMoved = engine.Errorf(engine.KindConflict, "The flag or segment changed while the request was in flight; retry")
)
