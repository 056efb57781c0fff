package api_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"svcd/api/apitest"
)

// An admin's view of a user's security state and ending a user's sessions
// (GET /admin/users/:c/:id/security, POST /admin/users/:c/:id/logout).

// userSecurity reads a user's security state as the admin h.
func userSecurity(t testing.TB, s *apitest.Server, coll, id string, h map[string]string) map[string]any {
	t.Helper()
	return data(t, s, http.StatusOK, "GET", "/api/v1/admin/users/"+coll+"/"+id+"/security", nil, h)
}

// meStatus is the status of GET /auth/me with a user's token on s.
func meStatus(t testing.TB, s *apitest.Server, tok string) int {
	t.Helper()
	res, body := s.Do(t, "GET", "/api/v1/auth/me", nil, bearer(tok))
	apitest.CheckCommon(t, res, body)
	return res.StatusCode
}

func TestAdminUserSecurity(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t, apitest.Options{})
	s.CreateCollection(t, members())
	s.CreateCollection(t, coll("posts", "base", []map[string]any{f("title", "text")}))
	uid := register(t, s, "members", "sec@example.com", userPassword)
	eve := bearer(signIn(t, s, "members", "sec@example.com", userPassword)["token"].(string))
	_, viewer := newAdmin(t, s, "viewer@example.com", "viewer")
	_, editor := newAdmin(t, s, "editor@example.com", "editor")
	url := "/api/v1/admin/users/members/" + uid + "/security"

	t.Run("who may read it", func(t *testing.T) {
		data(t, s, http.StatusUnauthorized, "GET", url, nil, nil)
		data(t, s, http.StatusForbidden, "GET", url, nil, eve)
		data(t, s, http.StatusForbidden, "GET", url, nil, bearer(viewer))
		data(t, s, http.StatusNotFound, "GET", "/api/v1/admin/users/members/nosuchuser12345/security", nil, bearer(editor))
		data(t, s, http.StatusNotFound, "GET", "/api/v1/admin/users/nosuch/"+uid+"/security", nil, bearer(editor))
		data(t, s, http.StatusNotFound, "GET", "/api/v1/admin/users/posts/"+uid+"/security", nil, bearer(editor))
	})

	t.Run("TOTP off, then on with its recovery codes", func(t *testing.T) {
		d := userSecurity(t, s, "members", uid, bearer(editor))
		if d["totp_enabled"] != false || apitest.Int(t, d["recovery_codes_left"]) != 0 || apitest.Int(t, d["passkeys"]) != 0 ||
			fmt.Sprint(d["oauth2"]) != "[]" || apitest.Int(t, d["sessions_valid_after"]) != 0 {
			t.Fatalf("a fresh account: %v", d)
		}
		secret := data(t, s, http.StatusOK, "POST", "/api/v1/auth/members/totp/setup", nil, eve)["secret"].(string)
		if d := userSecurity(t, s, "members", uid, bearer(editor)); d["totp_enabled"] != false {
			t.Fatalf("a pending setup shows TOTP on: %v", d)
		}
		on := data(t, s, http.StatusOK, "POST", "/api/v1/auth/members/totp/confirm", map[string]any{"code": oathCode(t, secret, time.Now())}, eve)
		codes := apitest.List(t, on["recovery_codes"])
		if d := userSecurity(t, s, "members", uid, bearer(editor)); d["totp_enabled"] != true || apitest.Int(t, d["recovery_codes_left"]) != int64(len(codes)) {
			t.Fatalf("after confirm (%d codes): %v", len(codes), d)
		}
		// A recovery code spent at sign-in leaves one fewer.
		ticket := mfaTicket(t, s, "sec@example.com")
		data(t, s, http.StatusOK, "POST", "/api/v1/auth/members/login/mfa", map[string]any{"mfa_token": ticket, "recovery_code": codes[0]}, nil)
		if d := userSecurity(t, s, "members", uid, bearer(editor)); apitest.Int(t, d["recovery_codes_left"]) != int64(len(codes)-1) {
			t.Fatalf("after spending a recovery code: %v", d)
		}
		data(t, s, http.StatusOK, "POST", "/api/v1/admin/users/members/"+uid+"/disable-mfa", nil, bearer(editor))
		if d := userSecurity(t, s, "members", uid, bearer(editor)); d["totp_enabled"] != false || apitest.Int(t, d["recovery_codes_left"]) != 0 {
			t.Fatalf("after disable-mfa: %v", d)
		}
	})

	t.Run("logout ends the sessions, is audited, and a new sign-in works", func(t *testing.T) {
		logout := "/api/v1/admin/users/members/" + uid + "/logout"
		data(t, s, http.StatusUnauthorized, "POST", logout, nil, nil)
		data(t, s, http.StatusForbidden, "POST", logout, nil, eve)
		data(t, s, http.StatusForbidden, "POST", logout, nil, bearer(viewer))
		data(t, s, http.StatusNotFound, "POST", "/api/v1/admin/users/members/nosuchuser12345/logout", nil, bearer(editor))
		data(t, s, http.StatusNotFound, "POST", "/api/v1/admin/users/posts/"+uid+"/logout", nil, bearer(editor))
		if st := meStatus(t, s, eve["Authorization"][len("Bearer "):]); st != http.StatusOK {
			t.Fatalf("the token before the logout: %d", st)
		}
		d := data(t, s, http.StatusOK, "POST", logout, nil, bearer(editor))
		floor := apitest.Int(t, d["sessions_valid_after"])
		if floor < time.Now().Add(-time.Minute).Unix() {
			t.Fatalf("logout answered %v", d)
		}
		if st := meStatus(t, s, eve["Authorization"][len("Bearer "):]); st != http.StatusUnauthorized {
			t.Fatalf("the token issued before the logout answers %d", st)
		}
		if got := apitest.Int(t, userSecurity(t, s, "members", uid, bearer(editor))["sessions_valid_after"]); got != floor {
			t.Fatalf("sessions_valid_after %d, the logout answered %d", got, floor)
		}
		fresh := signIn(t, s, "members", "sec@example.com", userPassword)["token"].(string)
		if st := meStatus(t, s, fresh); st != http.StatusOK {
			t.Fatalf("a sign-in after the logout: %d", st)
		}
		// A second logout raises the floor above the first.
		if again := apitest.Int(t, data(t, s, http.StatusOK, "POST", logout, nil, bearer(editor))["sessions_valid_after"]); again <= floor {
			t.Fatalf("a second logout's floor %d, the first %d", again, floor)
		}
		if st := meStatus(t, s, fresh); st != http.StatusUnauthorized {
			t.Fatalf("the token before the second logout answers %d", st)
		}
		body := must(t, s, "GET", "/api/v1/admin/audit-log?perPage=50", s.AdminHeaders(t, nil))
		if want := `"action":"users.logout"`; !strings.Contains(string(body), want) || !strings.Contains(string(body), `"target":"members/`+uid+`"`) {
			t.Fatalf("the audit log has no %s for members/%s: %s", want, uid, body)
		}
	})
}

// TestAdminUserLogoutCluster: the logout, asked on a follower, refuses the
// user's earlier token on every node; a new sign-in works on each.
func TestAdminUserLogoutCluster(t *testing.T) {
	t.Parallel()
	c := apitest.StartCluster(t, 3, apitest.Options{})
	admin := bearer(c.AdminToken(t))
	leader := c.Leader(t)
	leader.CreateCollection(t, members())
	uid := register(t, leader, "members", "many@example.com", userPassword)
	c.Sync(t)
	followers := c.Followers(t)
	nodes := []*apitest.Server{leader, followers[0], followers[1]}
	old := signIn(t, followers[1], "members", "many@example.com", userPassword)["token"].(string)
	for _, n := range nodes {
		if st := meStatus(t, n, old); st != http.StatusOK {
			t.Fatalf("%s: the token before the logout answers %d", n.Stack.Node.NodeID(), st)
		}
	}
	d := data(t, followers[0], http.StatusOK, "POST", "/api/v1/admin/users/members/"+uid+"/logout", nil, admin)
	floor := apitest.Int(t, d["sessions_valid_after"])
	c.Sync(t)
	for _, n := range nodes {
		if st := meStatus(t, n, old); st != http.StatusUnauthorized {
			t.Errorf("%s: the token issued before the logout answers %d", n.Stack.Node.NodeID(), st)
		}
		if got := apitest.Int(t, userSecurity(t, n, "members", uid, admin)["sessions_valid_after"]); got != floor {
			t.Errorf("%s: sessions_valid_after %d, the logout answered %d", n.Stack.Node.NodeID(), got, floor)
		}
	}
	fresh := signIn(t, followers[1], "members", "many@example.com", userPassword)["token"].(string)
	for _, n := range nodes {
		if st := meStatus(t, n, fresh); st != http.StatusOK {
			t.Errorf("%s: a sign-in after the logout answers %d", n.Stack.Node.NodeID(), st)
		}
	}
}
