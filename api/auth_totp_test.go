package api_test

import (
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"svcd/api/apitest"
)

// TOTP, recovery codes and MFA tickets over HTTP. Codes come from
// oathtool; the server's clock is the real one, so each code used is of a
// later time step than the one before (a step is accepted once).

var recoveryForm = regexp.MustCompile(`^[0-9A-HJKMNP-TV-Z]{4}-[0-9A-HJKMNP-TV-Z]{4}$`)

// mfaTicket signs in with a password and returns the MFA ticket.
func mfaTicket(t testing.TB, s *apitest.Server, email string) string {
	t.Helper()
	res, body := s.Do(t, http.MethodPost, "/api/v1/auth/members/login", map[string]any{"email": email, "password": userPassword}, nil)
	if res.StatusCode != http.StatusOK {
		t.Fatalf("login: %d %s", res.StatusCode, body)
	}
	d := apitest.Obj(t, apitest.DecodeMap(t, body)["data"])
	if d["mfa_required"] != true || d["mfa_token"] == nil || d["token"] != nil || d["record"] != nil {
		t.Fatalf("login with TOTP on answered %s", body)
	}
	if len(res.Cookies()) != 0 {
		t.Fatalf("an MFA ticket came with cookies: %v", res.Cookies())
	}
	return d["mfa_token"].(string)
}

func TestTOTPAndMFA(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t, apitest.Options{})
	s.CreateCollection(t, members())
	s.CreateCollection(t, usersCollection())
	s.CreateCollection(t, coll("nomfa", "auth", nil, "create_rule", "", "auth_options", map[string]any{"mfa": false}))
	uid := register(t, s, "members", "eve@example.com", userPassword)
	tok := signIn(t, s, "members", "eve@example.com", userPassword)["token"].(string)
	register(t, s, "nomfa", "eve@example.com", userPassword)
	other := signIn(t, s, "nomfa", "eve@example.com", userPassword)["token"].(string)
	userTok := signUp(t, s, "u@example.com")
	eve := bearer(tok)
	const base = "/api/v1/auth/members/totp"

	var secret string
	var codes []string
	apitest.Run(t, s, []apitest.Scenario{
		{Name: "setup needs a token (401)", Method: "POST", URL: base + "/setup", ExpectedStatus: http.StatusUnauthorized},
		{Name: "an admin token is not the user's (403)", Method: "POST", URL: base + "/setup", Admin: true, ExpectedStatus: http.StatusForbidden},
		{Name: "a user of another collection (403)", Method: "POST", URL: base + "/setup", Headers: bearer(userTok), ExpectedStatus: http.StatusForbidden},
		{Name: "auth_options.mfa off: 422", Method: "POST", URL: "/api/v1/auth/nomfa/totp/setup", Headers: bearer(other),
			ExpectedStatus: http.StatusUnprocessableEntity, ExpectedContent: []string{"MFA is disabled"}},
		{Name: "auth.mfa.enabled off", Method: "PATCH", URL: settingsURL, Admin: true, Body: map[string]any{"auth.mfa.enabled": "0"}, ExpectedStatus: http.StatusOK},
		{Name: "the global switch off: 422", Method: "POST", URL: base + "/setup", Headers: eve, ExpectedStatus: http.StatusUnprocessableEntity},
		{Name: "status too: 422", Method: "GET", URL: base + "/recovery/status", Headers: eve, ExpectedStatus: http.StatusUnprocessableEntity},
		{Name: "and login/mfa: 422", Method: "POST", URL: "/api/v1/auth/members/login/mfa", Body: map[string]any{"mfa_token": "x", "code": "123456"},
			ExpectedStatus: http.StatusUnprocessableEntity},
		{Name: "auth.mfa.enabled on", Method: "PATCH", URL: settingsURL, Admin: true, Body: map[string]any{"auth.mfa.enabled": "1", "app.url": "https://app.acme.test"}, ExpectedStatus: http.StatusOK},
		{Name: "confirm before setup: 422", Method: "POST", URL: base + "/confirm", Headers: eve, Body: map[string]any{"code": "123456"},
			ExpectedStatus: http.StatusUnprocessableEntity, ExpectedContent: []string{"setup first"}},
		{Name: "disable while off: 422", Method: "POST", URL: base + "/disable", Headers: eve, Body: map[string]any{"code": "123456"},
			ExpectedStatus: http.StatusUnprocessableEntity, ExpectedContent: []string{"not enabled"}},
		{Name: "regenerate while off: 422", Method: "POST", URL: base + "/recovery/regenerate", Headers: eve,
			ExpectedStatus: http.StatusUnprocessableEntity},
		{Name: "setup answers the secret and the otpauth URL", Method: "POST", URL: base + "/setup", Headers: eve,
			ExpectedStatus: http.StatusOK, ExpectedContent: []string{`"secret":"`, `"otpauth_url":"otpauth://totp/app.acme.test:eve@example.com?`},
			AfterFunc: func(t testing.TB, s *apitest.Server, body []byte) {
				secret = apitest.Obj(t, apitest.DecodeMap(t, body)["data"])["secret"].(string)
			}},
		{Name: "pending: sign-in still gives a session", Method: "POST", URL: "/api/v1/auth/members/login",
			Body: map[string]any{"email": "eve@example.com", "password": userPassword}, ExpectedStatus: http.StatusOK, ExpectedContent: []string{`"token":"`}},
		{Name: "pending: status counts nothing", Method: "GET", URL: base + "/recovery/status", Headers: eve,
			ExpectedStatus: http.StatusOK, ExpectedContent: []string{`{"data":{"total":0,"remaining":0}}`}},
		{Name: "confirm without a code: 422", Method: "POST", URL: base + "/confirm", Headers: eve, Body: map[string]any{},
			ExpectedStatus: http.StatusUnprocessableEntity, AfterFunc: apitest.Details("code")},
	})

	t.Run("confirm with the app's code turns TOTP on and shows ten recovery codes once", func(t *testing.T) {
		wrong := oathCode(t, secret, time.Now().Add(-10*time.Minute))
		data(t, s, http.StatusUnprocessableEntity, "POST", base+"/confirm", map[string]any{"code": wrong}, eve)
		d := data(t, s, http.StatusOK, "POST", base+"/confirm", map[string]any{"code": oathCode(t, secret, time.Now())}, eve)
		if d["enabled"] != true {
			t.Fatalf("confirm: %v", d)
		}
		for _, c := range apitest.List(t, d["recovery_codes"]) {
			if !recoveryForm.MatchString(c.(string)) {
				t.Errorf("recovery code %q is not XXXX-XXXX", c)
			}
			codes = append(codes, c.(string))
		}
		if len(codes) != 10 {
			t.Fatalf("%d recovery codes", len(codes))
		}
		st := data(t, s, http.StatusOK, "GET", base+"/recovery/status", nil, eve)
		if apitest.Int(t, st["total"]) != 10 || apitest.Int(t, st["remaining"]) != 10 {
			t.Fatalf("status %v", st)
		}
		data(t, s, http.StatusConflict, "POST", base+"/setup", nil, eve)
	})

	const mfa = "/api/v1/auth/members/login/mfa"
	t.Run("a ticket and the next code give a session; the code's step is spent", func(t *testing.T) {
		ticket := mfaTicket(t, s, "eve@example.com")
		data(t, s, http.StatusOK, "GET", "/api/v1/auth/me", nil, eve) // the old session stays
		data(t, s, http.StatusUnauthorized, "GET", "/api/v1/auth/me", nil, bearer(ticket))
		data(t, s, http.StatusUnprocessableEntity, "POST", mfa, map[string]any{"code": "123456"}, nil)
		data(t, s, http.StatusUnprocessableEntity, "POST", mfa, map[string]any{"mfa_token": ticket}, nil)
		data(t, s, http.StatusUnprocessableEntity, "POST", mfa, map[string]any{"mfa_token": ticket, "code": "123456", "recovery_code": codes[0]}, nil)
		data(t, s, http.StatusUnauthorized, "POST", mfa, map[string]any{"mfa_token": "x.y.z", "code": "123456"}, nil)
		data(t, s, http.StatusUnauthorized, "POST", "/api/v1/auth/users/login/mfa", map[string]any{"mfa_token": ticket, "code": "123456"}, nil)
		e := data(t, s, http.StatusUnauthorized, "POST", mfa, map[string]any{"mfa_token": ticket, "code": oathCode(t, secret, time.Now().Add(-5*time.Minute))}, nil)
		if e["error"] != "Invalid credentials" {
			t.Fatalf("wrong code: %v", e)
		}
		next := oathCode(t, secret, time.Now().Add(30*time.Second))
		res, body := s.Do(t, "POST", mfa, map[string]any{"mfa_token": ticket, "code": next}, nil)
		if res.StatusCode != http.StatusOK || !strings.Contains(string(body), `"token":"`) || !strings.Contains(string(body), `"id":"`+uid+`"`) {
			t.Fatalf("exchange: %d %s", res.StatusCode, body)
		}
		if len(res.Cookies()) == 0 || res.Cookies()[0].Name != "svc_user_token" {
			t.Fatalf("no session cookie: %v", res.Cookies())
		}
		sess := apitest.Obj(t, apitest.DecodeMap(t, body)["data"])["token"].(string)
		data(t, s, http.StatusOK, "GET", "/api/v1/auth/me", nil, bearer(sess))
		// Single use: the same ticket again, even with a recovery code.
		e = data(t, s, http.StatusUnauthorized, "POST", mfa, map[string]any{"mfa_token": ticket, "recovery_code": codes[0]}, nil)
		if !strings.Contains(e["error"].(string), "MFA token") {
			t.Fatalf("reused ticket: %v", e)
		}
		// The same code (its time step) on a fresh ticket.
		data(t, s, http.StatusUnauthorized, "POST", mfa, map[string]any{"mfa_token": mfaTicket(t, s, "eve@example.com"), "code": next}, nil)
	})

	t.Run("recovery codes sign in once each, in any case and with or without the dash", func(t *testing.T) {
		data(t, s, http.StatusOK, "POST", mfa, map[string]any{"mfa_token": mfaTicket(t, s, "eve@example.com"), "recovery_code": codes[0]}, nil)
		data(t, s, http.StatusUnauthorized, "POST", mfa, map[string]any{"mfa_token": mfaTicket(t, s, "eve@example.com"), "recovery_code": codes[0]}, nil)
		loose := strings.ToLower(strings.ReplaceAll(codes[1], "-", ""))
		data(t, s, http.StatusOK, "POST", mfa, map[string]any{"mfa_token": mfaTicket(t, s, "eve@example.com"), "recovery_code": loose}, nil)
		st := data(t, s, http.StatusOK, "GET", base+"/recovery/status", nil, eve)
		if apitest.Int(t, st["total"]) != 10 || apitest.Int(t, st["remaining"]) != 8 {
			t.Fatalf("status %v", st)
		}
	})

	t.Run("five wrong codes burn the ticket", func(t *testing.T) {
		ticket := mfaTicket(t, s, "eve@example.com")
		wrong := oathCode(t, secret, time.Now().Add(-5*time.Minute))
		for i := range 5 {
			body := map[string]any{"mfa_token": ticket, "code": wrong}
			if i == 2 {
				body = map[string]any{"mfa_token": ticket, "recovery_code": "AAAA-AAAA"}
			}
			if e := data(t, s, http.StatusUnauthorized, "POST", mfa, body, nil); e["error"] != "Invalid credentials" {
				t.Fatalf("wrong code %d: %v", i+1, e)
			}
		}
		e := data(t, s, http.StatusUnauthorized, "POST", mfa, map[string]any{"mfa_token": ticket, "recovery_code": codes[2]}, nil)
		if !strings.Contains(e["error"].(string), "MFA token") {
			t.Fatalf("burned ticket: %v", e)
		}
		if st := data(t, s, http.StatusOK, "GET", base+"/recovery/status", nil, eve); apitest.Int(t, st["remaining"]) != 8 {
			t.Fatalf("a burned ticket spent a recovery code: %v", st)
		}
	})

	t.Run("regenerate replaces the codes", func(t *testing.T) {
		d := data(t, s, http.StatusOK, "POST", base+"/recovery/regenerate", nil, eve)
		fresh := apitest.List(t, d["recovery_codes"])
		if len(fresh) != 10 {
			t.Fatalf("regenerate: %v", d)
		}
		data(t, s, http.StatusUnauthorized, "POST", mfa, map[string]any{"mfa_token": mfaTicket(t, s, "eve@example.com"), "recovery_code": codes[3]}, nil)
		data(t, s, http.StatusOK, "POST", mfa, map[string]any{"mfa_token": mfaTicket(t, s, "eve@example.com"), "recovery_code": fresh[0]}, nil)
		if st := data(t, s, http.StatusOK, "GET", base+"/recovery/status", nil, eve); apitest.Int(t, st["total"]) != 10 || apitest.Int(t, st["remaining"]) != 9 {
			t.Fatalf("status %v", st)
		}
		codes = nil
		for _, c := range fresh {
			codes = append(codes, c.(string))
		}
	})

	t.Run("email OTP with TOTP on answers a ticket too", func(t *testing.T) {
		md := startMaildev(t)
		md.configure(t, s)
		s.MustAdmin(t, http.StatusOK, "PATCH", settingsURL, map[string]any{"auth.otp.enabled": "1"})
		data(t, s, http.StatusOK, "POST", "/api/v1/auth/members/otp/request", map[string]any{"email": "eve@example.com"}, nil)
		code := codeIn(t, md.await(t, "eve@example.com", 1))
		d := data(t, s, http.StatusOK, "POST", "/api/v1/auth/members/otp/auth", map[string]any{"email": "eve@example.com", "code": code}, nil)
		if d["mfa_required"] != true || d["token"] != nil {
			t.Fatalf("otp with TOTP on: %v", d)
		}
		data(t, s, http.StatusOK, "POST", mfa, map[string]any{"mfa_token": d["mfa_token"], "recovery_code": codes[1]}, nil)
	})

	t.Run("disable needs a valid code; a recovery code does", func(t *testing.T) {
		data(t, s, http.StatusUnprocessableEntity, "POST", base+"/disable", map[string]any{}, eve)
		data(t, s, http.StatusUnprocessableEntity, "POST", base+"/disable", map[string]any{"code": oathCode(t, secret, time.Now().Add(-5*time.Minute))}, eve)
		data(t, s, http.StatusUnprocessableEntity, "POST", base+"/disable", map[string]any{"code": codes[0]}, eve) // spent above
		if d := data(t, s, http.StatusOK, "POST", base+"/disable", map[string]any{"code": codes[2]}, eve); d["enabled"] != false {
			t.Fatalf("disable: %v", d)
		}
		if st := data(t, s, http.StatusOK, "GET", base+"/recovery/status", nil, eve); apitest.Int(t, st["total"]) != 0 {
			t.Fatalf("status after disable: %v", st)
		}
		if d := signIn(t, s, "members", "eve@example.com", userPassword); d["token"] == nil {
			t.Fatalf("sign-in after disable: %v", d)
		}
	})

	t.Run("an admin clears a user's MFA (editor and above)", func(t *testing.T) {
		d := data(t, s, http.StatusOK, "POST", base+"/setup", nil, eve)
		fresh := d["secret"].(string)
		data(t, s, http.StatusOK, "POST", base+"/confirm", map[string]any{"code": oathCode(t, fresh, time.Now())}, eve)
		mfaTicket(t, s, "eve@example.com")
		_, viewer := newAdmin(t, s, "viewer@example.com", "viewer")
		_, editor := newAdmin(t, s, "editor@example.com", "editor")
		url := "/api/v1/admin/users/members/" + uid + "/disable-mfa"
		data(t, s, http.StatusUnauthorized, "POST", url, nil, nil)
		data(t, s, http.StatusForbidden, "POST", url, nil, eve)
		data(t, s, http.StatusForbidden, "POST", url, nil, bearer(viewer))
		data(t, s, http.StatusNotFound, "POST", "/api/v1/admin/users/members/nosuchuser12345/disable-mfa", nil, bearer(editor))
		data(t, s, http.StatusNotFound, "POST", "/api/v1/admin/users/nosuch/"+uid+"/disable-mfa", nil, bearer(editor))
		if d := data(t, s, http.StatusOK, "POST", url, nil, bearer(editor)); d["enabled"] != false {
			t.Fatalf("admin disable: %v", d)
		}
		if d := signIn(t, s, "members", "eve@example.com", userPassword); d["token"] == nil {
			t.Fatalf("sign-in after admin disable: %v", d)
		}
		data(t, s, http.StatusOK, "POST", url, nil, bearer(editor)) // idempotent
	})
}
