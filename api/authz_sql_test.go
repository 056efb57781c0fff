package api_test

import (
	"slices"
	"strings"
	"testing"
)

// pathSQL: the SQL console reads every row of every collection, so only
// developers, owners and tokens with the admin scope may run it; what the
// others get back leaks nothing, and nobody reads a password hash.
func pathSQL(t *testing.T, x *matrix, c mcaller) {
	allowed := c.kind == kindAdmin && (c.role == "developer" || c.role == "owner") ||
		c.kind == kindToken && slices.Contains(c.scopes, "admin")
	for _, coll := range matrixCollections() {
		st, body, _ := x.get(t, c, "POST", "/api/v1/admin/sql/run", map[string]any{"sql": "SELECT * FROM " + coll}, nil)
		x.leaks(t, c, "sql "+coll, body)
		if st == 200 && !allowed {
			t.Errorf("%s ran SQL on %s", c.name, coll)
		}
		if allowed && (st != 200 || !strings.Contains(string(body), `"ok":true`)) {
			t.Errorf("%s: SQL on %s: %d %s", c.name, coll, st, body)
		}
		if strings.Contains(string(body), "$argon2id$") {
			t.Errorf("%s read a password hash of %s through SQL", c.name, coll)
		}
	}
}
