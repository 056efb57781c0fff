package api_test

import (
	"net/http"
	"strings"
	"testing"

	"golang.org/x/crypto/bcrypt"

	"svcd/api/apitest"
	"svcd/fsm"
)

// TestBcryptRehashCluster: an account whose stored hash is bcrypt (what
// PocketBase stores; written here through the log by the agent protocol's
// SQL write) signs in on a follower with its password, and the hash
// becomes argon2id on every node; the password keeps working, a wrong one
// is refused before and after.
func TestBcryptRehashCluster(t *testing.T) {
	t.Parallel()
	c := apitest.StartCluster(t, 3, apitest.Options{})
	c.AdminToken(t)
	leader := c.Leader(t)
	b := c.Followers(t)[0]
	leader.CreateCollection(t, members())
	id := register(t, leader, "members", "pb@example.com", userPassword)

	const pbPassword = "12345678" // PocketBase's minimum length, below svcd's policy
	bh, err := bcrypt.GenerateFromPassword([]byte(pbPassword), bcrypt.DefaultCost)
	if err != nil {
		t.Fatal(err)
	}
	h := bearer(mcpTokenOf(t, leader, leader.AdminToken(t), "mcp:sql"))
	got, code := callTool(t, leader, h, "svc.run_sql", map[string]any{
		"sql": "UPDATE members SET password = ? WHERE id = ?", "params": []any{string(bh), id}, "allow_write": true})
	if code != 0 || got.IsError || !strings.Contains(got.text(), `"changes": 1`) {
		t.Fatalf("storing the bcrypt hash: %d %s", code, got.text())
	}
	c.Sync(t)
	stored := func(s *apitest.Server) string {
		t.Helper()
		var hash string
		if err := s.Stack.Store.View(t.Context(), func(r *fsm.Reader) error {
			return r.QueryRow("SELECT password FROM members WHERE id = ?", id).Scan(&hash)
		}); err != nil {
			t.Fatal(err)
		}
		return hash
	}
	if h := stored(b); h != string(bh) {
		t.Fatalf("the follower has %q, want the bcrypt hash", h)
	}

	login := func(pw string) int {
		t.Helper()
		res, body := b.Do(t, http.MethodPost, "/api/v1/auth/members/login", map[string]any{"email": "pb@example.com", "password": pw}, nil)
		apitest.CheckCommon(t, res, body)
		return res.StatusCode
	}
	if st := login("12345679"); st != http.StatusUnauthorized {
		t.Fatalf("a wrong password against the bcrypt hash: %d", st)
	}
	if st := login(pbPassword); st != http.StatusOK {
		t.Fatalf("sign-in with the bcrypt password: %d", st)
	}
	c.Sync(t)
	for _, n := range []*apitest.Server{leader, b, c.Followers(t)[1]} {
		if h := stored(n); !strings.HasPrefix(h, "$argon2id$") {
			t.Errorf("%s still stores %q after the sign-in", n.Stack.Node.NodeID(), h)
		}
	}
	if st := login(pbPassword); st != http.StatusOK {
		t.Fatalf("sign-in against the argon2id rehash: %d", st)
	}
	if st := login(userPassword); st != http.StatusUnauthorized {
		t.Fatalf("the password before the bcrypt write still signs in: %d", st)
	}
}
