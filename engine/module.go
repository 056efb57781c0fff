package engine

import (
	"fmt"
	"reflect"
	"sync/atomic"

	"svcd/fsm"
)

// A module (engine/auth, engine/search, ...) is wired to the core by the
// composition root before consensus starts: it registers its commands,
// result codecs, migrations, settings and hooks through the methods of this
// file, then the root calls Seal. From then on the registries are read
// only; registering after Seal is a wiring bug and panics.
//
// See DESIGN.md for how a command is added end to end.

// registries holds what the core and its modules registered.
type registries struct {
	sealed     atomic.Bool
	fsm        *fsm.Registry
	results    resultCodecs
	migrations []Migration
	// schemaVersion is the largest migration version registered.
	schemaVersion int64
	settings      map[string]SettingDef
	onRecord      []RecordHook
	onColl        []CollectionHook
	onEvents      []func([]fsm.Event)
	searcher      Searcher // list_extension.go
	// interceptor runs code around record writes (record_intercept.go).
	interceptor RecordInterceptor
	// restoreCarriers carry state across a restore (restore.go).
	restoreCarriers []RestoreCarrier
	// pruners remove old rows of what grows without end (prune.go).
	pruners []Pruner
	// sealedColumns are modules' secrets key rotation re-seals
	// (rotate_sealed.go).
	sealedColumns []SealedColumn
}

func (r *registries) mustOpen(what string) {
	if r.sealed.Load() {
		panic(fmt.Sprintf("engine: %s registered after Seal (modules register at wiring time)", what))
	}
}

// Command registers the apply handler of command type t. Numbers are
// never reused: DESIGN.md lists who owns which.
//
// What h returns must be nil or of a type registered with RegisterResult
// (a follower that forwarded the command receives it through that codec);
// a handler that returns anything else fails its command, on a single node
// too, so the mistake shows in every test rather than only on followers.
func (e *Engine) Command(t fsm.Type, name string, h fsm.Handler) {
	e.reg.mustOpen("command " + name)
	e.reg.fsm.Register(t, name, e.checked(name, h))
}

// checked wraps h: a result of a type with no codec fails the command.
func (e *Engine) checked(name string, h fsm.Handler) fsm.Handler {
	return func(tx *fsm.Tx, cmd fsm.Command) (any, error) {
		v, err := h(tx, cmd)
		if v != nil && e.reg.results.byType[reflect.TypeOf(v)] == nil {
			return nil, fmt.Errorf("engine: command %s returned %T, which is not a registered result (RegisterResult)", name, v)
		}
		return v, err
	}
}

// OnEvents registers h to see every batch of committed events, after the
// core has refreshed its own caches (collections, settings) for them. A
// module keeps its own caches fresh here; an event of kind fsm.KindRestore
// (or the core's migration event) means everything may have changed.
func (e *Engine) OnEvents(h func([]fsm.Event)) {
	e.reg.mustOpen("event observer")
	e.reg.onEvents = append(e.reg.onEvents, h)
}

// Seal ends wiring: the registries are read only from now on, and the
// migrations must form one sequence. The composition root calls it after
// the last module is wired and before the consensus layer applies
// anything.
func (e *Engine) Seal() error {
	if err := checkMigrations(e.reg.migrations); err != nil {
		return err
	}
	e.reg.sealed.Store(true)
	return nil
}
