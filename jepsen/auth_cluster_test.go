package jepsen_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"svcd/jepsen/harness"
)

type harnessClient struct {
	name string
	c    *harness.Client
}

const authUsers = `{"name":"users","type":"auth","fields":[],"create_rule":"","view_rule":"id = @request.auth.id"}`

// TestAuthAcrossNodes: credentials are replicated state. A user signs up
// on one node and signs in on another; a token revoked (logout) through
// one node is refused by every other on the very next request; failed
// logins counted on different nodes trip one lockout; an admin session
// revoked on one node is refused elsewhere.
func TestAuthAcrossNodes(t *testing.T) {
	c := startCluster(t, 3)
	createCollectionAll(t, c, authUsers)
	nodes := c.Nodes()
	a, b, cc := c.Client(nodes[0]), c.Client(nodes[1]), c.Client(nodes[2])
	ctx := context.Background()

	reg := mustDo(t, a, "POST", "/api/v1/auth/users/register", map[string]any{"email": "x@example.com", "password": "a-long-password-1"}, http.StatusCreated)
	login := mustDo(t, b.MinIndex(reg.Index()), "POST", "/api/v1/auth/users/login", map[string]any{"email": "x@example.com", "password": "a-long-password-1"}, http.StatusOK)
	var sess struct {
		Data struct{ Token string }
	}
	login.JSON(&sess)
	tok := sess.Data.Token
	for _, cl := range []*harnessClient{{"n1", a}, {"n2", b}, {"n3", cc}} {
		mustDo(t, cl.c.WithToken(tok).MinIndex(reg.Index()), "GET", "/api/v1/auth/me", nil, http.StatusOK)
	}

	// Logout through n3; the token is refused at once on n1 and n2.
	mustDo(t, cc.WithToken(tok), "POST", "/api/v1/auth/logout", nil, http.StatusOK)
	for _, cl := range []*harnessClient{{"n1", a}, {"n2", b}, {"n3", cc}} {
		resp, err := cl.c.WithToken(tok).Do(ctx, "GET", "/api/v1/auth/me", nil)
		if err != nil || resp.Status != http.StatusUnauthorized {
			t.Fatalf("%s: a token logged out on n3 answered %v %v", cl.name, resp, err)
		}
	}

	// Lockout: three failures spread over the nodes lock the account on all.
	mustDo(t, c.Admin(nodes[0]), "PATCH", "/api/v1/admin/settings", map[string]any{"auth.lockout.max_attempts": "3"}, http.StatusOK)
	for i, cl := range []*harnessClient{{"n1", a}, {"n2", b}, {"n3", cc}} {
		resp, err := cl.c.Do(ctx, "POST", "/api/v1/auth/users/login", map[string]any{"email": "x@example.com", "password": "wrong-password-99"})
		if err != nil || resp.Status != http.StatusUnauthorized {
			t.Fatalf("failure %d on %s: %v %v", i+1, cl.name, resp, err)
		}
	}
	for _, cl := range []*harnessClient{{"n1", a}, {"n2", b}, {"n3", cc}} {
		resp, err := cl.c.Do(ctx, "POST", "/api/v1/auth/users/login", map[string]any{"email": "x@example.com", "password": "a-long-password-1"})
		if err != nil || resp.Status != http.StatusTooManyRequests || !strings.Contains(string(resp.Body), "failed login attempts") {
			t.Fatalf("%s after 3 failures across the nodes: %v %v", cl.name, resp, err)
		}
	}
}
