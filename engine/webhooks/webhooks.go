// Package webhooks is the engine's webhooks module (SPEC.md "Webhook",
// "Webhook delivery", "Events"): webhooks that admins manage, an outbox of
// deliveries, and the attempts that send them.
//
// A change and its deliveries commit together. A record-write hook
// (outbox.go) matches the change's event against the webhooks' patterns
// inside the change's own transaction and writes one delivery per
// matching webhook, so a committed change always has its deliveries and a
// refused or rolled-back one has none. Custom events (Dispatch, the
// JavaScript helper webhooks.dispatch) and test deliveries are commands of
// their own that write the same outbox. A delivery's id is a UUID derived
// from the webhook, the log index and the delivery's position in the
// command: every replica makes the same one, and every retry keeps it.
//
// Sending is the leader's work (scheduler.WebhookDispatcher drives it).
// The dispatcher claims due deliveries through the log (claim.go: the
// claim names the leader's session and leases the delivery), sends them
// through the node's egress guard (send.go; redirects are not followed,
// 2 KB of the answer are kept) and records each outcome through the log
// (complete.go: succeeded, retrying with its backoff, or dead). A new
// leader re-claims what the old one left claimed, at once: the attempt
// that was in flight may reach the receiver twice, with the same delivery
// id, so duplicates happen only across leader changes.
package webhooks

import (
	"log/slog"

	"svcd/engine"
	"svcd/engine/crypt"
	"svcd/fsm"
)

// Options are what the module needs besides the core.
type Options struct {
	// Sender makes the HTTP attempts (the node's egress guard, redirects
	// not followed). Nil: deliveries are queued but never sent from this
	// node.
	Sender Sender
	// Keyring seals webhook secrets at rest (nil: no encryption key,
	// secrets are stored as given).
	Keyring *crypt.Keyring
}

// Webhooks manages webhooks and their deliveries (the module's face for
// the HTTP layer, the JavaScript helpers and the leader's dispatcher).
type Webhooks struct {
	core    *engine.Engine
	sender  Sender
	keyring *crypt.Keyring
	log     *slog.Logger
	// queued is signalled (never blocking) when committed commands queued
	// deliveries: the leader's dispatcher looks at once rather than at
	// its next tick.
	queued chan struct{}
}

// New wires the webhooks module to core: its tables, settings, commands,
// results and the record-write hook that fills the outbox.
func New(core *engine.Engine, opts Options) *Webhooks {
	m := &Webhooks{core: core, sender: opts.Sender, keyring: opts.Keyring, log: core.Logger(), queued: make(chan struct{}, 1)}
	m.registerTables()
	m.registerSettings()
	m.registerCommands()
	m.registerPruner()
	m.registerRestoreCarrier()
	// Signing secrets are sealed under the encryption key (store.go):
	// key rotation re-seals them.
	core.RegisterSealedColumn(engine.SealedColumn{Table: "_svc_webhooks", KeyColumn: "id", Column: "secret"})
	core.OnRecordWrite(engine.RecordHook{Name: "webhooks", Apply: m.onRecordWrite})
	core.OnEvents(m.onEvents)
	return m
}

// Queued is signalled when committed commands queued deliveries.
func (m *Webhooks) Queued() <-chan struct{} { return m.queued }

// onEvents wakes the dispatcher for deliveries just queued.
func (m *Webhooks) onEvents(events []fsm.Event) {
	for _, ev := range events {
		if ev.Kind == evQueued {
			select {
			case m.queued <- struct{}{}:
			default:
			}
			return
		}
	}
}

// ready reports whether this replica has the module's tables.
func (m *Webhooks) ready() bool { return m.core.InternalVersion() >= schemaVersion }

// Errors of the module.
var (
	errNotFound    = engine.Errorf(engine.KindNotFound, "The webhook wasn't found")
	errNotMigrated = engine.Errorf(engine.KindUnavailable, "The node is still migrating its internal tables; retry")
	errMoved       = engine.Errorf(engine.KindConflict, "The webhook changed while the request was in flight; retry")
)
