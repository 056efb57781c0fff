package api

import (
	"context"
	"net/http"
	"strings"
	"time"

	"svcd/engine/auth"
)

// Auditor records admin actions (engine/auth).
type Auditor interface {
	Audit(ctx context.Context, a auth.AuditEntry) error
}

// audit records every admin write (POST, PUT, PATCH, DELETE under
// /api/v1/admin/), failed ones included, once the handler is done and
// before its answer leaves (heldResponse): a client that saw an action
// succeed can count on its audit entry.
// It runs after authentication (the actor is known; a request without
// valid credentials is no admin's action) and before the role check (a
// refused attempt is recorded). Sign-in, setup and logout are not under
// it. The entry goes through the log like any write; a failure to record
// is logged, never shown to the client, whose action is already done.
func (s *Server) audit(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet || r.Method == http.MethodHead || r.Method == http.MethodOptions ||
			!strings.HasPrefix(r.URL.Path, "/api/v1/admin/") || r.URL.Path == "/api/v1/admin/migrations/diff" ||
			r.URL.Path == "/api/v1/admin/logs/search" {
			// A diff is a preview (SPEC.md: previews are not recorded); a
			// log search is a read sent as a POST (its query is a body).
			next.ServeHTTP(w, r)
			return
		}
		rec := &heldResponse{w: w, status: http.StatusOK}
		defer rec.finish()
		next.ServeHTTP(rec, r)
		p := principal(r)
		action, target := auditAction(r.Method, r.URL.Path)
		entry := auth.AuditEntry{
			ActorID: p.ID, ActorEmail: p.Email, Method: r.Method, Path: r.URL.Path,
			Action: action, Target: target, Status: rec.status,
		}
		if s.proxiesConfigured() {
			entry.IP = s.clientIP(r)
		}
		ctx, cancel := context.WithTimeout(context.WithoutCancel(r.Context()), 10*time.Second)
		defer cancel()
		if err := s.auditor.Audit(ctx, entry); err != nil {
			s.log.Warn("audit: could not record an admin action", "action", action, "err", err)
		}
	})
}

// auditAction names an admin write from its path: "<resource>.<verb>"
// (collections.delete, settings.update, admins.create), or the action the
// path names (cluster.snapshot, security.force_logout_all); the target is
// the resource's id or name when the path has one.
func auditAction(method, path string) (action, target string) {
	segs := strings.Split(strings.Trim(strings.TrimPrefix(path, "/api/v1/admin/"), "/"), "/")
	resource := strings.ReplaceAll(segs[0], "-", "_")
	verb := map[string]string{http.MethodPost: "create", http.MethodPut: "update", http.MethodPatch: "update", http.MethodDelete: "delete"}[method]
	switch {
	case resource == "security" && len(segs) >= 2 && segs[1] == "sessions":
		action = "security.sessions.revoke"
		if len(segs) >= 3 {
			target = segs[2]
		}
		return action, target
	case resource == "cluster" && len(segs) >= 2 && segs[1] == "members":
		if len(segs) >= 3 {
			target = segs[2]
		}
		return "cluster.members." + verb, target
	case (resource == "security" || resource == "cluster") && len(segs) >= 2:
		return resource + "." + strings.ReplaceAll(segs[1], "-", "_"), ""
	case resource == "collections" && len(segs) >= 3 && segs[2] == "indexes":
		return "indexes." + verb, segs[1]
	case resource == "migrations" && len(segs) == 2:
		return "migrations." + segs[1], ""
	case resource == "users" && len(segs) == 4:
		// A user's action (disable-mfa, logout): the target names the
		// collection and the user.
		return "users." + strings.ReplaceAll(segs[3], "-", "_"), segs[1] + "/" + segs[2]
	case resource == "restore":
		return "backup.restore", ""
	case resource == "backups" && method == http.MethodPost:
		return "backup.run", ""
	case resource == "retention" && len(segs) == 2 && segs[1] == "run":
		return "retention.prune", ""
	case resource == "flags" && len(segs) == 3 && segs[2] == "evaluate":
		return "flags.evaluate", segs[1]
	case resource == "jobs" && len(segs) == 3 && segs[2] == "run":
		return "jobs.run", segs[1]
	case resource == "queues" && len(segs) == 5 && segs[4] == "retry":
		return "queues.retry", segs[3]
	case resource == "queues" && len(segs) == 3 && segs[2] == "jobs":
		return "queues.enqueue", segs[1]
	case resource == "webhooks" && len(segs) == 3 && segs[2] == "test":
		return "webhooks.test", segs[1]
	case resource == "workflows" && method == http.MethodPost && len(segs) >= 2:
		return workflowAction(segs)
	case resource == "notifications" && len(segs) == 4 && segs[1] == "providers" && segs[3] == "test-connection":
		return "notifications.providers.test_connection", segs[2]
	case resource == "notifications" && len(segs) == 3 && segs[1] == "providers":
		return "notifications.providers." + verb, segs[2]
	case resource == "notifications" && len(segs) == 2 && segs[1] == "test":
		return "notifications.test", ""
	}
	if len(segs) >= 2 {
		target = segs[1]
	}
	return resource + "." + verb, target
}

// workflowAction names the workflow actions that are POSTs to a path
// below /admin/workflows: workflows.start (target: the workflow),
// workflows.retry (the run), workflows.emit.
func workflowAction(segs []string) (action, target string) {
	switch {
	case len(segs) == 2 && segs[1] == "events":
		return "workflows.emit", ""
	case len(segs) == 3 && segs[2] == "start":
		return "workflows.start", segs[1]
	case len(segs) == 4 && segs[1] == "runs" && segs[3] == "retry":
		return "workflows.retry", segs[2]
	}
	return "workflows.create", segs[1]
}

// proxiesConfigured reports whether trusted proxies are set: only then is
// the client address worth recording (SPEC.md).
func (s *Server) proxiesConfigured() bool {
	return len(s.proxies.list(s.settings.Setting(trustedProxiesSetting)).prefixes) > 0
}
