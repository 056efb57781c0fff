package workflows

import (
	"svcd/engine"
	"svcd/fsm"
)

// A restore (engine/restore.go) rolls the data back to the backup, but the
// steps run since were run: a workflow run both databases hold keeps its
// current state with its step memos and its delivered events, so a run
// the backup holds mid-way resumes where it is now instead of running its
// finished steps again. Runs started only since the backup go with the
// changes that started them.
func (m *Workflows) registerRestoreCarrier() {
	m.core.OnRestore(engine.RestoreCarrier{Name: "workflows", Carry: func(tx *fsm.Tx, _ engine.RestoreContext) error {
		return engine.CarryShared(tx, "_svc_workflow_runs", "id",
			engine.ChildRows{Table: "_svc_workflow_steps", Keys: "run_id"},
			engine.ChildRows{Table: "_svc_workflow_deliveries", Keys: "run_id"})
	}})
}
