package webhooks

import (
	"svcd/engine"
	"svcd/fsm"
)

// A restore (engine/restore.go) rolls the data back to the backup, but the
// deliveries sent since were sent: a delivery the backup holds as pending
// and the current database as delivered (or failed, or retrying with more
// attempts) keeps its current state, so it is not sent a second time.
// Deliveries recorded only since the backup go with the changes that made
// them; the webhooks themselves are the backup's.
func (m *Webhooks) registerRestoreCarrier() {
	m.core.OnRestore(engine.RestoreCarrier{Name: "webhooks", Carry: func(tx *fsm.Tx, _ engine.RestoreContext) error {
		return engine.CarryShared(tx, "_svc_webhook_deliveries", "id")
	}})
}
