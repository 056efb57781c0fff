package backup

import (
	"context"
	"time"

	"svcd/engine"
	"svcd/fsm"
)

// Every backup the module writes to a destination (scheduled, or started
// with POST /admin/backups) is recorded through the log: the schedule of
// a new leader resumes from the last run, and GET /admin/backups lists
// them. Downloads (GET /admin/backup, svcd backup) are reads: they are
// not recorded here (the download is in the audit log).

// Run is one recorded backup.
type Run struct {
	ID int64 `json:"id"`
	// At is when it started (unix seconds); Trigger "schedule" or
	// "manual".
	At      int64  `json:"at"`
	Trigger string `json:"trigger"`
	// Target is backup.to as it was; Key the file written there.
	Target string `json:"target"`
	Key    string `json:"key"`
	Size   int64  `json:"size"`
	// Index is the applied index the backup holds.
	Index  uint64 `json:"index"`
	SHA256 string `json:"sha256"`
	// OK says whether it was written; Error says why not.
	OK    bool   `json:"ok"`
	Error string `json:"error,omitempty"`
	// Node is the node that wrote it; Pruned counts the older backups
	// the retention removed after it.
	Node   string `json:"node"`
	Pruned int    `json:"pruned"`
	// DurationMs is how long it took.
	DurationMs int64 `json:"duration_ms"`
}

func (b *Backups) registerTables() {
	b.core.Migration(engine.Migration{Version: schemaVersion, Owner: "backup", Stmts: []string{
		`CREATE TABLE _svc_backups (id INTEGER PRIMARY KEY, at INTEGER NOT NULL, trigger TEXT NOT NULL,
			target TEXT NOT NULL, key TEXT NOT NULL, size INTEGER NOT NULL, idx INTEGER NOT NULL,
			sha256 TEXT NOT NULL, ok INTEGER NOT NULL, error TEXT NOT NULL, node TEXT NOT NULL,
			pruned INTEGER NOT NULL, duration_ms INTEGER NOT NULL)`,
		`CREATE INDEX _svc_backups_at ON _svc_backups (trigger, at)`,
	}})
}

// keepRuns bounds the recorded runs: the oldest are dropped.
const keepRuns = 1000

func (b *Backups) applyBackupRun(tx *fsm.Tx, cmd fsm.Command) (any, error) {
	r, err := engine.DecodeCmd[Run](cmd)
	if err != nil {
		return nil, err
	}
	if _, err := tx.Exec(`INSERT INTO _svc_backups (at, trigger, target, key, size, idx, sha256, ok, error, node, pruned, duration_ms)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`, r.At, r.Trigger, r.Target, r.Key, r.Size, int64(r.Index), r.SHA256,
		r.OK, r.Error, r.Node, r.Pruned, r.DurationMs); err != nil {
		return nil, err
	}
	_, err = tx.Exec(`DELETE FROM _svc_backups WHERE id <= (SELECT max(id) FROM _svc_backups) - ?`, keepRuns)
	return nil, err
}

// record proposes r.
func (b *Backups) record(ctx context.Context, r Run) error {
	_, _, err := b.core.Propose(ctx, cmdBackupRun, r)
	return err
}

// Runs lists the recorded backups, newest first, at most limit.
func (b *Backups) Runs(ctx context.Context, limit int) ([]Run, error) {
	out := []Run{}
	if b.core.InternalVersion() < schemaVersion {
		return out, nil
	}
	err := b.core.Store().View(ctx, func(r *fsm.Reader) error {
		rows, err := r.Query(`SELECT id, at, trigger, target, key, size, idx, sha256, ok, error, node, pruned, duration_ms
			FROM _svc_backups ORDER BY id DESC LIMIT ?`, limit)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var x Run
			if err := rows.Scan(&x.ID, &x.At, &x.Trigger, &x.Target, &x.Key, &x.Size, &x.Index, &x.SHA256, &x.OK, &x.Error,
				&x.Node, &x.Pruned, &x.DurationMs); err != nil {
				return err
			}
			out = append(out, x)
		}
		return rows.Err()
	})
	return out, err
}

// lastScheduled is when the last scheduled backup started (zero: none).
func (b *Backups) lastScheduled(ctx context.Context) (time.Time, error) {
	if b.core.InternalVersion() < schemaVersion {
		return time.Time{}, nil
	}
	var at int64
	err := b.core.Store().View(ctx, func(r *fsm.Reader) error {
		return r.QueryRow(`SELECT COALESCE(max(at), 0) FROM _svc_backups WHERE trigger = 'schedule'`).Scan(&at)
	})
	if err != nil || at == 0 {
		return time.Time{}, err
	}
	return time.Unix(at, 0), nil
}

// carryRuns keeps the current record of backup runs across a restore: it
// is a log of what was written, and the schedule resumes from it.
func carryRuns(tx *fsm.Tx, _ engine.RestoreContext) error {
	return engine.CarryTable(tx, "_svc_backups", "")
}
