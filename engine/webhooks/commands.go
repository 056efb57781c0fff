package webhooks

import (
	"svcd/engine"
	"svcd/fsm"
)

// Command types of the module (engine/DESIGN.md lists every owner's).
// Numbers are never reused.
const (
	// cmdSave creates or replaces a webhook.
	cmdSave fsm.Type = 105
	// cmdDelete deletes a webhook and its deliveries.
	cmdDelete fsm.Type = 106
	// cmdDispatch queues the deliveries of a custom event, or a test
	// delivery to one webhook.
	cmdDispatch fsm.Type = 107
	// cmdClaim claims due deliveries for an attempt by the leader.
	cmdClaim fsm.Type = 108
	// cmdComplete records the outcomes of attempts, and drops finished
	// deliveries past their retention.
	cmdComplete fsm.Type = 109
)

// evQueued is the event kind of a command that queued deliveries (the
// dispatcher's wake-up; nothing else reads it).
const evQueued = "webhooks.queued"

func (m *Webhooks) registerCommands() {
	engine.RegisterResult[dispatchResult](m.core, "webhooks.dispatch")
	engine.RegisterResult[claimResult](m.core, "webhooks.claim")
	m.core.Command(cmdSave, "webhooks.save", m.applySave)
	m.core.Command(cmdDelete, "webhooks.delete", m.applyDelete)
	m.core.Command(cmdDispatch, "webhooks.dispatch", m.applyDispatch)
	m.core.Command(cmdClaim, "webhooks.claim", m.applyClaim)
	m.core.Command(cmdComplete, "webhooks.complete", m.applyComplete)
}
