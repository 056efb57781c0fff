package api_test

import (
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"svcd/api/apitest"
	"svcd/engine/totp"
)

// FuzzAuthFlowBodies posts arbitrary bodies to the endpoints that trade a
// secret for a session or a change: login/mfa, otp/auth,
// confirm-password-reset, confirm-verification and confirm-email-change.
// Every answer is a well-formed envelope with a 2xx or 4xx status, never
// a 5xx; login/mfa gives a session only for a real ticket with a valid
// code or an unused recovery code of the account; the others never
// succeed, as the node holds no OTP and no reset, verification or email
// change token was ever issued.
func FuzzAuthFlowBodies(f *testing.F) {
	s := apitest.Start(f, apitest.Options{})
	s.CreateCollection(f, members())
	s.MustAdmin(f, http.StatusOK, http.MethodPatch, settingsURL, map[string]any{"auth.otp.enabled": "1"})
	register(f, s, "members", "fz@example.com", userPassword)
	tok := signIn(f, s, "members", "fz@example.com", userPassword)["token"].(string)
	secret := data(f, s, http.StatusOK, "POST", "/api/v1/auth/members/totp/setup", nil, bearer(tok))["secret"].(string)
	code, _ := totp.Code(secret, time.Now())
	on := data(f, s, http.StatusOK, "POST", "/api/v1/auth/members/totp/confirm", map[string]any{"code": code}, bearer(tok))
	recovery := map[string]bool{}
	var first string
	for _, c := range apitest.List(f, on["recovery_codes"]) {
		recovery[c.(string)] = true
		first = c.(string)
	}
	ticket := mfaTicket(f, s, "fz@example.com")

	paths := []string{"/api/v1/auth/members/login/mfa", "/api/v1/auth/members/otp/auth",
		"/api/v1/auth/members/confirm-password-reset", "/api/v1/auth/members/confirm-verification",
		"/api/v1/auth/members/confirm-email-change"}
	f.Add(uint8(0), []byte(`{"mfa_token":"`+ticket+`","code":"123456"}`))
	f.Add(uint8(0), []byte(`{"mfa_token":"`+ticket+`","recovery_code":"`+first+`"}`))
	f.Add(uint8(0), []byte(`{"mfa_token":"`+ticket+`","code":"12 34 56","recovery_code":""}`))
	f.Add(uint8(1), []byte(`{"code":"123456","email":"fz@example.com"}`))
	f.Add(uint8(1), []byte(`{"token":"`+ticket+`"}`))
	f.Add(uint8(2), []byte(`{"token":"`+tok+`","password":"a-new-password-123"}`))
	f.Add(uint8(3), []byte(`{"token":"`+ticket+`"}`))
	f.Add(uint8(4), []byte(`{"token":"`+tok+`","password":"`+userPassword+`"}`))
	f.Add(uint8(4), []byte(`{"token":["x"],"password":{}}`))
	f.Add(uint8(0), []byte(`[`))
	f.Fuzz(func(t *testing.T, which uint8, body []byte) {
		path := paths[int(which)%len(paths)]
		res, out, err := s.Send(http.MethodPost, path, body, map[string]string{"Content-Type": "application/json"})
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		apitest.CheckCommon(t, res, out)
		if res.StatusCode >= 500 || res.StatusCode < 200 {
			t.Fatalf("%s %q: %d %s", path, body, res.StatusCode, out)
		}
		if res.StatusCode >= 300 {
			return
		}
		if path != paths[0] {
			t.Fatalf("%s %q succeeded: %s", path, body, out)
		}
		var in struct {
			Code         string `json:"code"`
			RecoveryCode string `json:"recovery_code"`
		}
		json.Unmarshal(body, &in)
		norm, _ := totp.NormalizeRecoveryCode(in.RecoveryCode)
		if !recovery[norm] && !totp.Validate(in.Code, secret, time.Now()) {
			t.Fatalf("login/mfa %q gave a session: %s", body, out)
		}
	})
}
