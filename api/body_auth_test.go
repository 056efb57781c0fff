package api_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"svcd/api/apitest"
)

// TestUnauthenticatedBodyNotRead: a route that needs an admin or a
// signed-in user refuses an unauthenticated caller with 401 before it
// reads the body: a request declaring 16 MiB that sends only its first
// kilobyte is answered at once (the server does not wait for, nor buffer,
// the rest).
func TestUnauthenticatedBodyNotRead(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t, apitest.Options{})
	s.CreateCollection(t, usersCollection())
	s.CreateCollection(t, coll("posts", "base", []map[string]any{f("title", "text")}))
	for _, c := range []struct{ method, path string }{
		{http.MethodPost, collectionsURL},
		{http.MethodPatch, settingsURL},
		{http.MethodPost, "/api/v1/admin/import/posts"},
		{http.MethodPost, "/api/v1/admin/admins"},
		{http.MethodPost, "/api/v1/auth/users/promote"},
		{http.MethodPost, "/api/v1/auth/users/totp/confirm"},
		{http.MethodPost, "/api/v1/auth/users/totp/disable"},
	} {
		t.Run(c.method+" "+c.path, func(t *testing.T) {
			conn := rawBody(t, s, c.method, c.path, 16<<20, nil)
			if _, err := conn.Write([]byte(`{"x":"` + strings.Repeat("a", 1<<10))); err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			status, body, err := rawAnswer(conn, 3*time.Second)
			if err != nil {
				t.Fatalf("no answer within 3 s with 1 KiB of a 16 MiB body sent (the body is being read): %v", err)
			}
			if status != http.StatusUnauthorized || !strings.Contains(body, `"code":401`) {
				t.Errorf("answer %d %s, want 401", status, body)
			}
			t.Logf("401 after %v", time.Since(start))
		})
	}
}
