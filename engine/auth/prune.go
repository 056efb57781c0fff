package auth

import (
	"time"

	"svcd/engine"
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
		Prune: engine.PruneStatement(`DELETE FROM _svc_audit WHERE id IN (SELECT id FROM _svc_audit
				WHERE at < ? ORDER BY id LIMIT ?)`)})
}
