package webhooks

import (
	"time"

	"svcd/engine"
)

// registerPruner lets the core's retention (engine/prune.go) drop
// finished deliveries older than webhooks.retention_days (at least an
// hour, as the dispatcher's own pruning).
func (m *Webhooks) registerPruner() {
	m.core.OnPrune(engine.Pruner{Name: "webhook_deliveries", Setting: settingRetention,
		Cutoff: func(now time.Time) int64 { return now.Unix() - m.retentionSeconds() },
		Prune: engine.PruneStatement(`DELETE FROM _svc_webhook_deliveries WHERE seq IN (SELECT seq FROM _svc_webhook_deliveries
				WHERE status IN ('succeeded', 'dead') AND updated < ? ORDER BY seq LIMIT ?)`)})
}
