package queue

import (
	"svcd/engine"
	"svcd/fsm"
)

// A restore (engine/restore.go) rolls the data back to the backup, but the
// work done since was done: a queue job or a scheduled job's run that both
// databases hold keeps its current state (a job the backup has queued and
// that has succeeded since does not run again), and a scheduled job keeps
// the newest scheduled time it fired, so the runs between the backup and
// the restore are not fired again. Jobs enqueued only since the backup go
// with the changes that enqueued them.
func (q *Queue) registerRestoreCarrier() {
	q.core.OnRestore(engine.RestoreCarrier{Name: "queue", Carry: func(tx *fsm.Tx, _ engine.RestoreContext) error {
		if err := engine.CarryShared(tx, "_svc_queue_jobs", "id"); err != nil {
			return err
		}
		if err := engine.CarryShared(tx, "_svc_job_runs", "job_id, key"); err != nil {
			return err
		}
		for _, schema := range []string{"main", "prev"} {
			if ok, err := engine.TableExists(tx, schema, "_svc_jobs"); err != nil || !ok {
				return err
			}
		}
		_, err := tx.ExecDirect(`UPDATE main._svc_jobs SET last_scheduled_at = max(last_scheduled_at,
			(SELECT p.last_scheduled_at FROM prev._svc_jobs p WHERE p.id = main._svc_jobs.id))
			WHERE id IN (SELECT id FROM prev._svc_jobs)`)
		return err
	}})
}
