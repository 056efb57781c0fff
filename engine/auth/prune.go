package auth

import (
	"time"

	"svcd/engine"
	"svcd/fsm"
)

// settingAuditRetention is how long audit entries are kept, in days (0:
// forever).
const settingAuditRetention = "audit.retention_days"

// registerPruner lets the core's retention (engine/prune.go) drop audit
// entries older than audit.retention_days.
func (au *Auth) registerPruner() {
	au.core.DefineSettings(engine.SettingDef{Key: settingAuditRetention, Default: "90", Validate: engine.ValidateDays})
	au.core.OnPrune(engine.Pruner{Name: "audit", Setting: settingAuditRetention,
		Cutoff: func(now time.Time) int64 { return au.core.DaysCutoff(settingAuditRetention, now) },
		Prune: func(tx *fsm.Tx, cutoff int64, limit int) (int64, error) {
			res, err := tx.Exec(`DELETE FROM _svc_audit WHERE id IN (SELECT id FROM _svc_audit
				WHERE at < ? ORDER BY id LIMIT ?)`, cutoff, limit)
			if err != nil {
				return 0, err
			}
			return res.RowsAffected()
		}})
}
