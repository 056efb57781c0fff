package api_test

import (
	"net/http"
	"strings"
	"testing"
)

// The email change's side of the authorization matrix: every caller asks
// to move members records to a new address and to another account's, on
// svcd's path and on PocketBase's, and confirms with a forged token. Only
// an account's own user session may ask (not an impersonation, not an
// anonymous guest, not an admin or API token); what it may learn is
// whether an address is taken, which a record update's uniqueness error
// tells it too. No answer carries a record's values.

// wantEmailChange is what request-email-change answers c for a free
// address: 200 for users a and b, 422 for the anonymous guest (promote
// first), 403 for an impersonation and admin sessions, 401 without a
// session (an API token included).
func (c mcaller) wantEmailChange() int {
	switch {
	case c.kind == kindAnon, c.kind == kindToken:
		return http.StatusUnauthorized
	case c.kind == kindAdmin, strings.HasPrefix(c.name, "impersonation"):
		return http.StatusForbidden
	case c.user == "ug":
		return http.StatusUnprocessableEntity
	}
	return http.StatusOK
}

func pathEmailChange(t *testing.T, x *matrix, c mcaller) {
	const request = "/api/v1/auth/members/request-email-change"
	free := "free-" + strings.ReplaceAll(c.name, " ", "-") + "@example.com"
	st, body, _ := x.get(t, c, "POST", request, map[string]any{"new_email": free}, nil)
	x.leaks(t, c, "request a free address", body)
	if want := c.wantEmailChange(); st != want {
		t.Errorf("%s: request-email-change to a free address: %d, want %d: %s", c.name, st, want, body)
	}
	taken := marker{"members", "ub", "email"}.String() + "@example.com"
	st, body, _ = x.get(t, c, "POST", request, map[string]any{"new_email": taken}, nil)
	x.leaks(t, c, "request user b's address", body)
	if want := c.wantEmailChange(); want == http.StatusOK {
		if st != http.StatusUnprocessableEntity {
			t.Errorf("%s: request-email-change to user b's address: %d, want 422", c.name, st)
		}
	} else if st != want {
		t.Errorf("%s: request-email-change to user b's address: %d, want %d", c.name, st, want)
	}
	st, body, _ = x.get(t, c, "POST", pbAuthPath("members", "request-email-change"), map[string]any{"newEmail": free}, nil)
	x.leaks(t, c, "PocketBase's request", body)
	if want := c.wantEmailChange(); (want == http.StatusOK) != (st == http.StatusNoContent) {
		t.Errorf("%s: PocketBase's request-email-change: %d, want it to succeed only where svcd's answers 200 (%d)", c.name, st, want)
	}
	for _, path := range []string{"/api/v1/auth/members/confirm-email-change", pbAuthPath("members", "confirm-email-change")} {
		st, body, _ = x.get(t, c, "POST", path, map[string]any{"token": "abc.def.ghi", "password": userPassword}, nil)
		x.leaks(t, c, "confirm a forged token", body)
		if st != http.StatusBadRequest {
			t.Errorf("%s: %s with a forged token: %d, want 400", c.name, path, st)
		}
	}
}
