package stack_test

import (
	"context"
	"strings"
	"testing"

	"svcd/cmd/svcd/stack"
	"svcd/fsm"
)

// TestAuditLogIndexed: the audit log's reads by actor and by time use an
// index instead of scanning the whole log.
func TestAuditLogIndexed(t *testing.T) {
	n := replOpen(t, stack.Config{DataDir: t.TempDir()})
	defer n.close(t)
	for _, q := range []struct{ sql, index string }{
		{`SELECT id FROM _svc_audit WHERE actor_id = 'a' ORDER BY id DESC LIMIT 30`, "_svc_audit_actor"},
		{`SELECT count(*) FROM _svc_audit WHERE at >= 1 AND at <= 2`, "_svc_audit_at"},
	} {
		var plan []string
		err := n.Store.View(context.Background(), func(r *fsm.Reader) error {
			rows, err := r.Query(`EXPLAIN QUERY PLAN ` + q.sql)
			if err != nil {
				return err
			}
			defer rows.Close()
			for rows.Next() {
				var id, parent, unused int
				var detail string
				if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
					return err
				}
				plan = append(plan, detail)
			}
			return rows.Err()
		})
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Join(plan, "; "); !strings.Contains(got, q.index) {
			t.Errorf("%s: plan %q does not use %s", q.sql, got, q.index)
		}
	}
}
