package queue

import (
	"time"

	"svcd/engine"
	"svcd/fsm"
)

// settingDeadRetention is how long a dead queue job is kept, in days (0:
// forever); succeeded jobs follow queues.succeeded_retention_sec.
const settingDeadRetention = "queues.dead_retention_days"

// registerPruner lets the core's retention (engine/prune.go) drop
// finished jobs: succeeded ones after queues.succeeded_retention_sec,
// dead ones after queues.dead_retention_days.
func (q *Queue) registerPruner() {
	q.core.DefineSettings(engine.SettingDef{Key: settingDeadRetention, Default: "30", Validate: engine.ValidateDays})
	q.core.OnPrune(engine.Pruner{Name: "queue_jobs_succeeded", Setting: settingRetention,
		Cutoff: func(now time.Time) int64 {
			if r := q.retentionMs() / 1000; r > 0 {
				return now.Unix() - r
			}
			return 0
		},
		Prune: func(tx *fsm.Tx, cutoff int64, limit int) (int64, error) {
			return pruneJobs(tx, "succeeded", cutoff, limit)
		}})
	q.core.OnPrune(engine.Pruner{Name: "queue_jobs_dead", Setting: settingDeadRetention,
		Cutoff: func(now time.Time) int64 { return q.core.DaysCutoff(settingDeadRetention, now) },
		Prune:  func(tx *fsm.Tx, cutoff int64, limit int) (int64, error) { return pruneJobs(tx, "dead", cutoff, limit) }})
}

// pruneJobs deletes at most limit jobs in state that finished before
// cutoff (unix seconds; finished_ms is in milliseconds).
func pruneJobs(tx *fsm.Tx, state string, cutoff int64, limit int) (int64, error) {
	res, err := tx.Exec(`DELETE FROM _svc_queue_jobs WHERE id IN (SELECT id FROM _svc_queue_jobs
		WHERE state = ? AND finished_ms < ? ORDER BY finished_ms, id LIMIT ?)`, state, cutoff*1000, limit)
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}
