package api_test

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"svcd/api/apitest"
)

// claims decodes a JWT's payload without verifying it.
func claims(t testing.TB, tok string) map[string]any {
	t.Helper()
	parts := strings.Split(tok, ".")
	if len(parts) != 3 {
		t.Fatalf("not a JWT: %q", tok)
	}
	b, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// lifetime is exp - iat of a token, in seconds.
func lifetime(t testing.TB, tok string) int64 {
	c := claims(t, tok)
	return int64(c["exp"].(float64) - c["iat"].(float64))
}

func TestAnonymousAndPromote(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t, apitest.Options{})
	s.CreateCollection(t, members())
	s.CreateCollection(t, usersCollection()) // auth_options.anonymous off
	register(t, s, "members", "taken@example.com", userPassword)
	real := signIn(t, s, "members", "taken@example.com", userPassword)["token"].(string)
	const anon, promote = "/api/v1/auth/members/anonymous", "/api/v1/auth/members/promote"

	var guest, guestID, guestEmail string
	apitest.Run(t, s, []apitest.Scenario{
		{Name: "off by default (auth.anonymous.enabled=0): 422", Method: "POST", URL: anon,
			ExpectedStatus: http.StatusUnprocessableEntity, ExpectedContent: []string{"Anonymous sign-in is disabled"}},
		{Name: "the global switch on", Method: "PATCH", URL: settingsURL, Admin: true,
			Body: map[string]any{"auth.anonymous.enabled": "1"}, ExpectedStatus: http.StatusOK},
		{Name: "auth_options.anonymous off: 422", Method: "POST", URL: "/api/v1/auth/users/anonymous",
			ExpectedStatus: http.StatusUnprocessableEntity},
		{Name: "a guest session: synthetic email, is_anonymous, a 30-day token with anonymous: true", Method: "POST", URL: anon,
			ExpectedStatus: http.StatusOK, ExpectedContent: []string{`"is_anonymous":true`, `"email_verified":false`, `@anonymous.invalid"`},
			ExpectedHeaders: map[string]string{"Set-Cookie": "*"},
			AfterFunc: func(t testing.TB, s *apitest.Server, body []byte) {
				d := apitest.Obj(t, apitest.DecodeMap(t, body)["data"])
				guest = d["token"].(string)
				rec := apitest.Obj(t, d["record"])
				guestID, guestEmail = rec["id"].(string), rec["email"].(string)
				if !strings.HasPrefix(guestEmail, "anon_") {
					t.Errorf("guest email %q", guestEmail)
				}
				if c := claims(t, guest); c["anonymous"] != true || fmt.Sprint(c["aud"]) != "[user]" {
					t.Errorf("guest claims %v", c)
				}
				if l := lifetime(t, guest); l != 30*24*3600 {
					t.Errorf("guest token lifetime %d s", l)
				}
			}},
	})
	g := bearer(guest)
	data(t, s, http.StatusOK, "GET", "/api/v1/auth/me", nil, g)
	data(t, s, http.StatusOK, "GET", "/api/v1/members/"+guestID, nil, g)
	data(t, s, http.StatusUnauthorized, "POST", "/api/v1/auth/members/login", map[string]any{"email": guestEmail, "password": userPassword}, nil)

	apitest.Run(t, s, []apitest.Scenario{
		{Name: "a guest has no second factor (422)", Method: "POST", URL: "/api/v1/auth/members/totp/setup", Headers: g,
			ExpectedStatus: http.StatusUnprocessableEntity},
		{Name: "promote needs a token (401)", Method: "POST", URL: promote,
			Body: map[string]any{"email": "new@example.com", "password": userPassword}, ExpectedStatus: http.StatusUnauthorized},
		{Name: "an admin token is not the guest's (403)", Method: "POST", URL: promote, Admin: true,
			Body: map[string]any{"email": "new@example.com", "password": userPassword}, ExpectedStatus: http.StatusForbidden},
		{Name: "a real account is not anonymous (422)", Method: "POST", URL: promote, Headers: bearer(real),
			Body:           map[string]any{"email": "new@example.com", "password": userPassword},
			ExpectedStatus: http.StatusUnprocessableEntity, ExpectedContent: []string{"not anonymous"}},
		{Name: "email and password are required (422)", Method: "POST", URL: promote, Headers: g, Body: map[string]any{},
			ExpectedStatus: http.StatusUnprocessableEntity, AfterFunc: apitest.Details("email", "password")},
		{Name: "the password policy applies (422)", Method: "POST", URL: promote, Headers: g,
			Body:           map[string]any{"email": "new@example.com", "password": "short"},
			ExpectedStatus: http.StatusUnprocessableEntity, AfterFunc: apitest.Details("password")},
		{Name: "a taken email is 409", Method: "POST", URL: promote, Headers: g,
			Body:           map[string]any{"email": "TAKEN@example.com", "password": userPassword},
			ExpectedStatus: http.StatusConflict, ExpectedContent: []string{"already in use"}},
		{Name: "not a JSON object (400)", Method: "POST", URL: promote, Headers: g, Body: "[1]", ExpectedStatus: http.StatusBadRequest},
	})

	var fresh string
	t.Run("promote keeps the id, sets email, password and fields, and mints a fresh session", func(t *testing.T) {
		d := data(t, s, http.StatusOK, "POST", promote, map[string]any{"email": "new@example.com", "password": userPassword, "name": "Nia"}, g)
		rec := apitest.Obj(t, d["record"])
		if rec["id"] != guestID || rec["email"] != "new@example.com" || rec["is_anonymous"] != false || rec["name"] != "Nia" {
			t.Fatalf("promoted record %v", rec)
		}
		fresh = d["token"].(string)
		if c := claims(t, fresh); c["anonymous"] != nil || lifetime(t, fresh) != 7*24*3600 {
			t.Fatalf("fresh token claims %v", c)
		}
		data(t, s, http.StatusUnauthorized, "GET", "/api/v1/auth/me", nil, g)
		data(t, s, http.StatusOK, "GET", "/api/v1/auth/me", nil, bearer(fresh))
		if d := signIn(t, s, "members", "new@example.com", userPassword); apitest.Obj(t, d["record"])["id"] != guestID {
			t.Fatalf("sign-in after promote: %v", d)
		}
	})
	t.Run("a promoted account is not anonymous any more", func(t *testing.T) {
		data(t, s, http.StatusUnprocessableEntity, "POST", promote, map[string]any{"email": "again@example.com", "password": userPassword}, bearer(fresh))
	})
	t.Run("with the feature off, promote is 422 too", func(t *testing.T) {
		g2 := data(t, s, http.StatusOK, "POST", anon, nil, nil)["token"].(string)
		s.MustAdmin(t, http.StatusOK, "PATCH", settingsURL, map[string]any{"auth.anonymous.enabled": "0"})
		e := data(t, s, http.StatusUnprocessableEntity, "POST", promote, map[string]any{"email": "late@example.com", "password": userPassword}, bearer(g2))
		if !strings.Contains(e["error"].(string), "disabled") {
			t.Fatalf("promote with the feature off: %v", e)
		}
		data(t, s, http.StatusOK, "GET", "/api/v1/auth/me", nil, bearer(g2)) // the guest keeps its session
	})
}

func TestImpersonation(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t, apitest.Options{})
	s.CreateCollection(t, members())
	uid := register(t, s, "members", "ivy@example.com", userPassword)
	user := signIn(t, s, "members", "ivy@example.com", userPassword)["token"].(string)
	ownerID := apitest.Obj(t, apitest.DecodeMap(t, must(t, s, "GET", "/api/v1/auth/me", bearer(s.AdminToken(t))))["data"])["id"].(string)
	_, viewer := newAdmin(t, s, "viewer@example.com", "viewer")
	editorID, editor := newAdmin(t, s, "editor@example.com", "editor")
	url := "/api/v1/admin/impersonate/members/" + uid

	apitest.Run(t, s, []apitest.Scenario{
		{Name: "no token: 401", Method: "POST", URL: url, ExpectedStatus: http.StatusUnauthorized},
		{Name: "a user token: 403", Method: "POST", URL: url, Headers: bearer(user), ExpectedStatus: http.StatusForbidden},
		{Name: "a viewer: 403", Method: "POST", URL: url, Headers: bearer(viewer), ExpectedStatus: http.StatusForbidden},
		{Name: "an unknown user: 404", Method: "POST", URL: "/api/v1/admin/impersonate/members/nosuchuser12345", Admin: true, ExpectedStatus: http.StatusNotFound},
		{Name: "an unknown collection: 404", Method: "POST", URL: "/api/v1/admin/impersonate/nosuch/" + uid, Admin: true, ExpectedStatus: http.StatusNotFound},
		{Name: "the owner gets a one-hour user token naming the admin", Method: "POST", URL: url, Admin: true,
			ExpectedStatus: http.StatusOK, ExpectedContent: []string{`"token":"`, `"record":{"id":"` + uid + `"`, `"impersonated_by":"` + ownerID + `"`},
			AfterFunc: func(t testing.TB, s *apitest.Server, body []byte) {
				tok := apitest.Obj(t, apitest.DecodeMap(t, body)["data"])["token"].(string)
				if c := claims(t, tok); c["impersonated_by"] != ownerID || c["id"] != uid || fmt.Sprint(c["aud"]) != "[user]" || lifetime(t, tok) != 3600 {
					t.Errorf("impersonation claims %v", c)
				}
				me := data(t, s, http.StatusOK, "GET", "/api/v1/auth/me", nil, bearer(tok))
				if me["id"] != uid {
					t.Errorf("me: %v", me)
				}
				data(t, s, http.StatusOK, "GET", "/api/v1/members/"+uid, nil, bearer(tok))
			}},
		{Name: "an editor may too", Method: "POST", URL: url, Headers: bearer(editor),
			ExpectedStatus: http.StatusOK, ExpectedContent: []string{`"impersonated_by":"` + editorID + `"`}},
		{Name: "the audit log names the admin", Method: "GET", URL: "/api/v1/admin/audit-log", Admin: true,
			ExpectedStatus: http.StatusOK, ExpectedContent: []string{`"path":"/api/v1/admin/impersonate/members/` + uid + `"`, `"actor_id":"` + editorID + `"`}},
		{Name: "the switch off", Method: "PATCH", URL: settingsURL, Admin: true,
			Body: map[string]any{"auth.impersonation.enabled": "0"}, ExpectedStatus: http.StatusOK},
		{Name: "disabled: 422", Method: "POST", URL: url, Admin: true, ExpectedStatus: http.StatusUnprocessableEntity,
			ExpectedContent: []string{"Impersonation is disabled"}},
	})
}
