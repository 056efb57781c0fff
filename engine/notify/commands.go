package notify

import (
	"svcd/engine"
	"svcd/fsm"
)

// Command types of the module (engine/DESIGN.md lists every owner's).
// Numbers are never reused; 133-134 are kept for the module.
const (
	// cmdRegister upserts a device token: created, or rebound to the
	// caller and enabled again.
	cmdRegister fsm.Type = 130
	// cmdUnregister disables the caller's device token (a soft delete).
	cmdUnregister fsm.Type = 131
	// cmdDisableDead disables the tokens a provider reported dead.
	cmdDisableDead fsm.Type = 132
)

// registered is what cmdRegister answers: the device record's id and
// whether the command created it.
type registered struct {
	ID      string `json:"id"`
	Created bool   `json:"created"`
}

func (n *Notifications) registerCommands() {
	engine.RegisterResult[registered](n.core, "notify.registered")
	n.core.Command(cmdRegister, "notify.device_register", n.applyRegister)
	n.core.Command(cmdUnregister, "notify.device_unregister", n.applyUnregister)
	n.core.Command(cmdDisableDead, "notify.disable_dead", n.applyDisableDead)
}
