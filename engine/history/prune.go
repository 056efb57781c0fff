package history

import (
	"time"

	"svcd/engine"
)

// settingRetention is how long record history is kept, in days: 0 (the
// default) keeps it forever.
const settingRetention = "history.retention_days"

// registerPruner lets the core's retention (engine/prune.go) drop history
// entries older than history.retention_days. A record whose entries are
// all pruned has no history to list or restore from (404 on a version
// that was pruned); its current row is untouched.
func (h *History) registerPruner() {
	h.core.DefineSettings(engine.SettingDef{Key: settingRetention, Default: "0", Validate: engine.ValidateDays})
	h.core.OnPrune(engine.Pruner{Name: "history", Setting: settingRetention,
		Cutoff: func(now time.Time) int64 { return h.core.DaysCutoff(settingRetention, now) },
		Prune: engine.PruneStatement(`DELETE FROM _svc_history WHERE id IN (SELECT id FROM _svc_history
				WHERE at < ? ORDER BY id LIMIT ?)`)})
}
