package workflows

import (
	"time"

	"svcd/engine"
	"svcd/fsm"
)

// settingRetention is how long a finished (completed or failed) run is
// kept, in days (0: forever).
const settingRetention = "workflows.retention_days"

// registerPruner lets the core's retention (engine/prune.go) drop
// finished runs with their step memos and delivered events.
func (m *Workflows) registerPruner() {
	m.core.DefineSettings(engine.SettingDef{Key: settingRetention, Default: "30", Validate: engine.ValidateDays})
	m.core.OnPrune(engine.Pruner{Name: "workflow_runs", Setting: settingRetention,
		Cutoff: func(now time.Time) int64 { return m.core.DaysCutoff(settingRetention, now) },
		Prune:  pruneRuns})
}

// pruneRuns deletes at most limit runs finished before cutoff, and what
// hangs off them.
func pruneRuns(tx *fsm.Tx, cutoff int64, limit int) (int64, error) {
	rows, err := tx.Query(`SELECT id FROM _svc_workflow_runs WHERE state IN ('completed', 'failed')
		AND finished IS NOT NULL AND finished < ? ORDER BY finished, id LIMIT ?`, cutoff, limit)
	if err != nil {
		return 0, err
	}
	var ids []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			rows.Close()
			return 0, err
		}
		ids = append(ids, id)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return 0, err
	}
	for _, id := range ids {
		for _, q := range []string{`DELETE FROM _svc_workflow_steps WHERE run_id = ?`,
			`DELETE FROM _svc_workflow_deliveries WHERE run_id = ?`, `DELETE FROM _svc_workflow_runs WHERE id = ?`} {
			if _, err := tx.Exec(q, id); err != nil {
				return 0, err
			}
		}
	}
	return int64(len(ids)), nil
}
