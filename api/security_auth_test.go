package api_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"svcd/api/apitest"
)

// status sends a request and returns its status, checking the envelope.
func status(t testing.TB, s *apitest.Server, method, path string, body any, headers map[string]string) int {
	t.Helper()
	res, out := s.Do(t, method, path, body, headers)
	apitest.CheckCommon(t, res, out)
	return res.StatusCode
}

// Finding 2 of the security review (issue 13): a guest's promote set custom
// fields that the collection's rules refused everywhere else. A promote is
// an update of the guest's own record by the guest: the update rule
// decides, with the sent fields as @request.body.
func TestPromoteFollowsTheUpdateRule(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t, apitest.Options{})
	s.CreateCollection(t, coll("staff", "auth", []map[string]any{f("name", "text"), f("is_staff", "bool")},
		"create_rule", "", "view_rule", "id = @request.auth.id",
		"update_rule", "id = @request.auth.id && @request.body.is_staff:isset = false",
		"auth_options", map[string]any{"anonymous": true}))
	s.CreateCollection(t, coll("locked", "auth", []map[string]any{f("name", "text")},
		"create_rule", "", "view_rule", "id = @request.auth.id", "auth_options", map[string]any{"anonymous": true}))
	s.MustAdmin(t, http.StatusOK, "PATCH", settingsURL, map[string]any{"auth.anonymous.enabled": "1"})
	guest := func(c string) map[string]string {
		return bearer(data(t, s, http.StatusOK, "POST", "/api/v1/auth/"+c+"/anonymous", nil, nil)["token"].(string))
	}

	g := guest("staff")
	e := data(t, s, http.StatusForbidden, "POST", "/api/v1/auth/staff/promote",
		map[string]any{"email": "mallory@example.com", "password": userPassword, "is_staff": true}, g)
	if strings.Contains(fmt.Sprint(e), "is_staff") {
		t.Errorf("the refusal names a field: %v", e)
	}
	d := data(t, s, http.StatusOK, "POST", "/api/v1/auth/staff/promote",
		map[string]any{"email": "mallory@example.com", "password": userPassword, "name": "M"}, g)
	if rec := apitest.Obj(t, d["record"]); rec["is_staff"] != false || rec["is_anonymous"] != false || rec["name"] != "M" {
		t.Errorf("promoted record %v", rec)
	}
	// Admin-only updates (update_rule null): a guest cannot promote.
	data(t, s, http.StatusForbidden, "POST", "/api/v1/auth/locked/promote",
		map[string]any{"email": "g@example.com", "password": userPassword}, guest("locked"))
}

// Finding 7 of the security review (issue 13): a user changed their own
// password through record PATCH without the old one, and older sessions
// stayed valid; changing the email kept email_verified (anyone could
// "verify" any address).
func TestAccountFieldsThroughRecordPatch(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t, apitest.Options{})
	s.CreateCollection(t, usersCollection())
	tok := signUp(t, s, "ann@example.com")
	other := signUp(t, s, "bob@example.com")
	ids := listIDs(t, s, "/api/v1/users?sort=email")
	ann, bob := "/api/v1/users/"+ids[0], "/api/v1/users/"+ids[1]
	const next = "next-password-456"

	e := data(t, s, http.StatusUnprocessableEntity, "PATCH", ann, map[string]any{"password": next}, bearer(tok))
	if d, _ := e["details"].(map[string]any); d["oldPassword"] == nil {
		t.Errorf("no oldPassword detail: %v", e)
	}
	data(t, s, http.StatusUnprocessableEntity, "PATCH", ann, map[string]any{"password": next, "oldPassword": "wrong-password-000"}, bearer(tok))
	// Another user learns nothing of ann's password: the rules answer
	// first, whatever oldPassword says.
	for _, old := range []string{userPassword, "wrong-password-000"} {
		if c := status(t, s, "PATCH", ann, map[string]any{"password": next, "oldPassword": old}, bearer(other)); c != http.StatusNotFound {
			t.Errorf("bob changing ann's password (old %q): %d, want 404", old, c)
		}
	}
	if c := status(t, s, "GET", "/api/v1/auth/me", nil, bearer(tok)); c != http.StatusOK {
		t.Fatalf("a refused change ended the session: %d", c)
	}
	data(t, s, http.StatusOK, "PATCH", ann, map[string]any{"password": next, "oldPassword": userPassword}, bearer(tok))
	if c := status(t, s, "GET", "/api/v1/auth/me", nil, bearer(tok)); c != http.StatusUnauthorized {
		t.Errorf("a session older than the password change: %d, want 401", c)
	}
	tok = login(t, s, "ann@example.com", next)

	// An admin needs no old password; the change ends the user's sessions.
	s.MustAdmin(t, http.StatusOK, "PATCH", bob, map[string]any{"password": next})
	if c := status(t, s, "GET", "/api/v1/auth/me", nil, bearer(other)); c != http.StatusUnauthorized {
		t.Errorf("bob's session after an admin set his password: %d, want 401", c)
	}

	// Email: verified by an admin, then changed by the user.
	s.MustAdmin(t, http.StatusOK, "PATCH", ann, map[string]any{"email_verified": true})
	d := data(t, s, http.StatusOK, "PATCH", ann, map[string]any{"email": "ANN@example.com"}, bearer(tok))
	if d["email_verified"] != true {
		t.Errorf("a change of case only unverified the email: %v", d)
	}
	d = data(t, s, http.StatusOK, "PATCH", ann, map[string]any{"email": "victim@example.org"}, bearer(tok))
	if d["email"] != "victim@example.org" || d["email_verified"] != false {
		t.Errorf("after an email change: %v", d)
	}
	// An admin may set both at once.
	rec := apitest.Obj(t, s.MustAdmin(t, http.StatusOK, "PATCH", ann, map[string]any{"email": "ann@example.com", "email_verified": true})["data"])
	if rec["email_verified"] != true {
		t.Errorf("admin change with email_verified: %v", rec)
	}
	// A batch update is held to the same rules.
	st, out, _ := runBatch(t, s, bearer(tok), []map[string]any{entry("PATCH", ann, map[string]any{"password": "third-password-789"})})
	expectBatchError(t, st, out, http.StatusUnprocessableEntity, 0, "oldPassword")
}

// Finding 8 of the security review (issue 13): wrong MFA codes were limited
// per ticket, and sign-in issues fresh tickets without limit: 250 wrong
// codes, then the right one, still signed in. An account has a budget of
// ten wrong codes per 15 minutes over all its tickets.
func TestMFAGuessesAreCountedPerAccount(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t, apitest.Options{})
	s.CreateCollection(t, members())
	register(t, s, "members", "eve@example.com", userPassword)
	eve := bearer(signIn(t, s, "members", "eve@example.com", userPassword)["token"].(string))
	secret := data(t, s, http.StatusOK, "POST", "/api/v1/auth/members/totp/setup", nil, eve)["secret"].(string)
	data(t, s, http.StatusOK, "POST", "/api/v1/auth/members/totp/confirm", map[string]any{"code": oathCode(t, secret, time.Now())}, eve)
	// The confirm spent the current step: the next one is the right code.
	right := func() string { return oathCode(t, secret, time.Now().Add(30*time.Second)) }
	wrong := func() string {
		for _, c := range []string{"000000", "111111", "222222"} {
			if c != right() && c != oathCode(t, secret, time.Now().Add(-30*time.Second)) && c != oathCode(t, secret, time.Now()) {
				return c
			}
		}
		t.Fatal("no wrong code")
		return ""
	}
	const mfa = "/api/v1/auth/members/login/mfa"
	w := wrong()
	for i := range 10 {
		// One wrong code per ticket, a fresh ticket each time.
		ticket := mfaTicket(t, s, "eve@example.com")
		want := http.StatusUnauthorized
		if c := status(t, s, "POST", mfa, map[string]any{"mfa_token": ticket, "code": w}, nil); c != want {
			t.Fatalf("wrong code %d: %d, want %d", i+1, c, want)
		}
	}
	ticket := mfaTicket(t, s, "eve@example.com")
	res, body := s.Do(t, "POST", mfa, map[string]any{"mfa_token": ticket, "code": right()}, nil)
	if res.StatusCode != http.StatusTooManyRequests || res.Header.Get("Retry-After") == "" {
		t.Fatalf("the right code after ten wrong ones on fresh tickets: %d %s", res.StatusCode, body)
	}
	if strings.Contains(string(body), `"token"`) {
		t.Fatalf("a session after the budget was spent: %s", body)
	}
	// Recovery codes share the budget.
	if c := status(t, s, "POST", mfa, map[string]any{"mfa_token": mfaTicket(t, s, "eve@example.com"), "recovery_code": "AAAA-AAAA"}, nil); c != http.StatusTooManyRequests {
		t.Errorf("a recovery code after the budget: %d, want 429", c)
	}
}

// Finding 9 of the security review (issue 13): impersonation tokens survived
// their admin (deleted, force-logout-all, auth.impersonation.enabled=0) and
// could be refreshed.
func TestImpersonationEndsWithItsAdmin(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t, apitest.Options{})
	s.CreateCollection(t, members())
	uid := register(t, s, "members", "ivy@example.com", userPassword)
	impersonate := func(admin string) map[string]string {
		return bearer(data(t, s, http.StatusOK, "POST", "/api/v1/admin/impersonate/members/"+uid, nil, bearer(admin))["token"].(string))
	}
	alive := func(what string, h map[string]string, want int) {
		t.Helper()
		if c := status(t, s, "GET", "/api/v1/auth/me", nil, h); c != want {
			t.Errorf("%s: /auth/me %d, want %d", what, c, want)
		}
	}

	edID, ed := newAdmin(t, s, "ed@example.com", "editor")
	imp := impersonate(ed)
	alive("impersonation", imp, http.StatusOK)
	s.MustAdmin(t, http.StatusNoContent, "DELETE", "/api/v1/admin/admins/"+edID, nil)
	alive("after its admin was deleted", imp, http.StatusUnauthorized)
	if c := status(t, s, "POST", "/api/v1/auth/refresh", nil, imp); c != http.StatusUnauthorized {
		t.Errorf("refresh after its admin was deleted: %d, want 401", c)
	}

	dvID, dv := newAdmin(t, s, "dev@example.com", "developer")
	imp = impersonate(dv)
	s.MustAdmin(t, http.StatusOK, "PATCH", "/api/v1/admin/admins/"+dvID, map[string]any{"role": "viewer"})
	alive("after its admin became a viewer", imp, http.StatusUnauthorized)

	imp = impersonate(s.AdminToken(t))
	refreshed := bearer(data(t, s, http.StatusOK, "POST", "/api/v1/auth/refresh", nil, imp)["token"].(string))
	s.MustAdmin(t, http.StatusOK, "PATCH", settingsURL, map[string]any{"auth.impersonation.enabled": "0"})
	alive("with impersonation switched off", refreshed, http.StatusUnauthorized)
	s.MustAdmin(t, http.StatusOK, "PATCH", settingsURL, map[string]any{"auth.impersonation.enabled": "1"})
	alive("switched on again", refreshed, http.StatusOK)

	_, owner2 := newAdmin(t, s, "o2@example.com", "owner")
	imp = impersonate(owner2)
	data(t, s, http.StatusOK, "POST", "/api/v1/admin/security/force-logout-all", nil, bearer(owner2))
	alive("after force-logout-all", imp, http.StatusUnauthorized)
}

// Finding 10 of the security review (issue 13): a deleted user's token came
// back when a record was created again with the same (client-chosen) id.
func TestDeletedAccountTokenStaysDead(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t, apitest.Options{})
	s.CreateCollection(t, usersCollection())
	id := rid("reborn")
	s.MustAdmin(t, http.StatusCreated, "POST", "/api/v1/users", map[string]any{"id": id, "email": "r@example.com", "password": userPassword})
	tok := login(t, s, "r@example.com", userPassword)
	s.MustAdmin(t, http.StatusNoContent, "DELETE", "/api/v1/users/"+id, nil)
	s.MustAdmin(t, http.StatusCreated, "POST", "/api/v1/users", map[string]any{"id": id, "email": "r@example.com", "password": userPassword})
	if c := status(t, s, "GET", "/api/v1/auth/me", nil, bearer(tok)); c != http.StatusUnauthorized {
		t.Fatalf("the deleted account's token on its namesake: %d, want 401", c)
	}
	// The new account signs in at once, in the second it was created.
	fresh := login(t, s, "r@example.com", userPassword)
	if c := status(t, s, "GET", "/api/v1/users/"+id, nil, bearer(fresh)); c != http.StatusOK {
		t.Fatalf("a session of the new account: %d", c)
	}
}
