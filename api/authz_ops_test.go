package api_test

import (
	"net/http"
	"strings"
	"testing"
)

// pathOps reads what the operations endpoints answer each caller: the
// request and application logs (which hold every request's path and query
// string, the matrix's own probes included), a JSONPath search over them,
// the schema snapshot, the retention settings and a user's security state
// (its factors and token floor: editors, as disable-mfa). Whoever may read them,
// none may find in them a value the rules hide from that caller; whoever
// may not is refused.
func pathOps(t *testing.T, x *matrix, c mcaller) {
	reads := []struct {
		method, path string
		body         any
		role         string // the least admin role that reads it
	}{
		{"GET", "/api/v1/admin/logs?q=filter%3D&perPage=500", nil, "viewer"},
		{"POST", "/api/v1/admin/logs/search", map[string]any{"query": "$", "limit": 500}, "viewer"},
		{"GET", "/api/v1/admin/migrations/snapshot", nil, "developer"},
		{"GET", "/api/v1/admin/retention", nil, "owner"},
		{"GET", "/api/v1/admin/users/members/" + x.id("members", "ub") + "/security", nil, "editor"},
	}
	for _, rd := range reads {
		st, body, _ := x.get(t, c, rd.method, rd.path, rd.body, nil)
		x.leaks(t, c, rd.path, body)
		may := c.kind == kindAdmin && roleAtLeast(c.role, rd.role) || c.kind == kindToken && hasScope(c.scopes, "admin")
		if may && rd.path == reads[0].path && !strings.Contains(string(body), "filter=") {
			// Not vacuous: the log holds the filter probes of the
			// earlier paths, query strings included.
			t.Errorf("%s: the log answer holds no filtered request: %.300s", c.name, body)
		}
		switch {
		case may && st != http.StatusOK:
			t.Errorf("%s: %s %s: %d %s", c.name, rd.method, rd.path, st, body)
		case !may && st != http.StatusUnauthorized && st != http.StatusForbidden:
			t.Errorf("%s read %s %s: %d", c.name, rd.method, rd.path, st)
		}
	}
}

// roleAtLeast orders the admin roles.
func roleAtLeast(role, least string) bool {
	rank := map[string]int{"viewer": 1, "editor": 2, "developer": 3, "owner": 4}
	return rank[role] >= rank[least]
}

func hasScope(scopes []string, s string) bool {
	for _, x := range scopes {
		if x == s {
			return true
		}
	}
	return false
}
