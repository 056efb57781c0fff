package stack

import (
	"context"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"time"

	"svcd/engine"
	"svcd/engine/auth"
)

// retention is the leader's pruner (engine/prune.go) as the scheduler and
// the HTTP layer see it. A scheduled run that deleted anything writes one
// audit entry (actor "system", action retention.prune, the counts as its
// target); a run started through POST /admin/retention/run is audited by
// the HTTP layer like every admin write.
type retention struct {
	eng    *engine.Engine
	admins *auth.Admins
}

// RetentionInterval implements scheduler.RetentionJob.
func (r retention) RetentionInterval() time.Duration { return r.eng.RetentionInterval() }

// RunRetention implements scheduler.RetentionJob.
func (r retention) RunRetention(ctx context.Context) error {
	res, _, err := r.eng.Prune(ctx, 0)
	if res == nil || pruneTotal(res) == 0 {
		return err
	}
	entry := auth.AuditEntry{ActorID: "system", Method: "SCHEDULE", Path: "/api/v1/admin/retention/run",
		Action: "retention.prune", Target: pruneSummary(res), Status: http.StatusOK}
	if err != nil {
		entry.Status = http.StatusInternalServerError
	}
	if aerr := r.admins.Audit(ctx, entry); aerr != nil && err == nil {
		err = fmt.Errorf("retention: audit: %w", aerr)
	}
	return err
}

// Prune runs retention now for an admin.
func (r retention) Prune(ctx context.Context) (*engine.PruneResult, uint64, error) {
	return r.eng.Prune(ctx, 0)
}

// Policies lists the pruners and their settings.
func (r retention) Policies() []engine.RetentionPolicy { return r.eng.RetentionPolicies() }

func pruneTotal(res *engine.PruneResult) int64 {
	var n int64
	for _, v := range res.Pruned {
		n += v
	}
	return n
}

// pruneSummary is "name=count" pairs in name order.
func pruneSummary(res *engine.PruneResult) string {
	parts := make([]string, 0, len(res.Pruned))
	for k, v := range res.Pruned {
		parts = append(parts, fmt.Sprintf("%s=%d", k, v))
	}
	sort.Strings(parts)
	return strings.Join(parts, " ")
}
