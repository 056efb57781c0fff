package api_test

import (
	"encoding/base64"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"svcd/api/apitest"
)

// pbAuthPath is a PocketBase auth route of collection c.
func pbAuthPath(c, route string) string { return "/api/collections/" + c + "/" + route }

// pbCall sends a compat request with the token raw in Authorization (the
// SDK's form) and returns the status and the decoded body.
func pbCall(t testing.TB, s *apitest.Server, method, path, tok string, body any) (int, []byte) {
	t.Helper()
	h := map[string]string{}
	if tok != "" {
		h["Authorization"] = tok
	}
	res, out := s.Do(t, method, path, body, h)
	return res.StatusCode, out
}

// jwtPayload decodes a token's payload (what the SDK's authStore reads).
func jwtPayload(t testing.TB, tok string) map[string]any {
	t.Helper()
	parts := strings.Split(tok, ".")
	if len(parts) != 3 {
		t.Fatalf("not a JWT: %q", tok)
	}
	raw, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// TestPBAuthPassword: auth-with-password and auth-refresh on PocketBase's
// paths answer PocketBase's shapes, for a user and for _superusers (svcd's
// admins); the token carries what the SDK reads (type, collectionId); a
// refresh revokes the old token (svcd), which is then a guest's.
func TestPBAuthPassword(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t, apitest.Options{})
	coll := s.CreateCollection(t, members())
	register(t, s, "members", "pat@example.com", userPassword)

	st, body := pbCall(t, s, "POST", pbAuthPath("members", "auth-with-password"), "", map[string]any{"identity": "pat@example.com", "password": userPassword})
	if st != http.StatusOK {
		t.Fatalf("auth-with-password: %d %s", st, body)
	}
	checkPBShape(t, "auth_with_password.json", body)
	var sess struct {
		Token  string         `json:"token"`
		Record map[string]any `json:"record"`
	}
	if err := json.Unmarshal(body, &sess); err != nil {
		t.Fatal(err)
	}
	if p := jwtPayload(t, sess.Token); p["type"] != "auth" || p["collectionId"] != coll["id"] || p["id"] != sess.Record["id"] {
		t.Errorf("the token's payload: %v (collection %v)", p, coll["id"])
	}

	st, body = pbCall(t, s, "POST", pbAuthPath("members", "auth-with-password"), "", map[string]any{"identity": "pat@example.com", "password": "wrong-password-1"})
	if st != http.StatusBadRequest {
		t.Fatalf("a wrong password: %d %s", st, body)
	}
	checkPBShape(t, "error_auth_400.json", body)
	if st, body = pbCall(t, s, "POST", pbAuthPath("members", "auth-with-password"), "", map[string]any{"identity": "pat@example.com"}); st != http.StatusBadRequest ||
		!strings.Contains(string(body), `"password":{"code":"validation_required"`) {
		t.Errorf("no password: %d %s", st, body)
	}

	st, body = pbCall(t, s, "POST", pbAuthPath("members", "auth-refresh"), sess.Token, nil)
	if st != http.StatusOK {
		t.Fatalf("auth-refresh: %d %s", st, body)
	}
	checkPBShape(t, "auth_with_password.json", body)
	var again struct {
		Token string `json:"token"`
	}
	_ = json.Unmarshal(body, &again)
	if st, body = pbCall(t, s, "POST", pbAuthPath("members", "auth-refresh"), sess.Token, nil); st != http.StatusUnauthorized {
		t.Errorf("the refreshed (revoked) token refreshes again: %d %s", st, body)
	}
	if st, body = pbCall(t, s, "POST", pbAuthPath("members", "auth-refresh"), "", nil); st != http.StatusUnauthorized ||
		!strings.Contains(string(body), "requires valid record authorization token") {
		t.Errorf("a guest's refresh: %d %s", st, body)
	}
	if st, body = pbCall(t, s, "POST", pbAuthPath("_superusers", "auth-refresh"), again.Token, nil); st != http.StatusForbidden {
		t.Errorf("a user's token on _superusers: %d %s", st, body)
	}
	if st, body = pbCall(t, s, "POST", pbAuthPath("nope", "auth-with-password"), "", map[string]any{"identity": "x@example.com", "password": "x"}); st != http.StatusNotFound {
		t.Errorf("an unknown collection: %d %s", st, body)
	}

	st, body = pbCall(t, s, "POST", pbAuthPath("_superusers", "auth-with-password"), "", map[string]any{"identity": apitest.AdminEmail, "password": apitest.AdminPassword})
	if st != http.StatusOK {
		t.Fatalf("_superusers auth-with-password: %d %s", st, body)
	}
	checkPBShape(t, "auth_superuser.json", body)
	var admin struct {
		Token  string         `json:"token"`
		Record map[string]any `json:"record"`
	}
	_ = json.Unmarshal(body, &admin)
	if p := jwtPayload(t, admin.Token); p["type"] != "auth" || p["collectionId"] != "pbc_3142635823" {
		t.Errorf("the superuser token's payload: %v", p)
	}
	if admin.Record["collectionName"] != "_superusers" || admin.Record["collectionId"] != "pbc_3142635823" {
		t.Errorf("the superuser record: %v", admin.Record)
	}
	if st, body = pbCall(t, s, "GET", "/api/collections/members/records", "Bearer "+admin.Token, nil); st != http.StatusOK {
		t.Errorf("the superuser's token on a record list: %d %s", st, body)
	}
	st, body = pbCall(t, s, "POST", pbAuthPath("_superusers", "auth-refresh"), admin.Token, nil)
	if st != http.StatusOK {
		t.Fatalf("_superusers auth-refresh: %d %s", st, body)
	}
	checkPBShape(t, "auth_superuser.json", body)
	if st, body = pbCall(t, s, "POST", pbAuthPath("_superusers", "auth-with-password"), "", map[string]any{"identity": apitest.AdminEmail, "password": "not-the-password"}); st != http.StatusBadRequest {
		t.Errorf("_superusers with a wrong password: %d %s", st, body)
	}
}

// TestPBAuthMethods: auth-methods answers PocketBase's shape, following
// the collection's auth_options and the global switches.
func TestPBAuthMethods(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t, apitest.Options{})
	s.CreateCollection(t, members())
	s.MustAdmin(t, http.StatusOK, http.MethodPatch, settingsURL, map[string]any{"auth.otp.enabled": "1"})
	st, body := pbCall(t, s, "GET", pbAuthPath("members", "auth-methods"), "", nil)
	if st != http.StatusOK {
		t.Fatalf("auth-methods: %d %s", st, body)
	}
	checkPBShape(t, "auth_methods.json", body)
	s.MustAdmin(t, http.StatusOK, http.MethodPatch, settingsURL, map[string]any{"auth.otp.enabled": "0"})
	if _, body = pbCall(t, s, "GET", pbAuthPath("members", "auth-methods"), "", nil); !strings.Contains(string(body), `"otp":{"duration":0,"enabled":false}`) {
		t.Errorf("OTP turned off: %s", body)
	}
	if _, body = pbCall(t, s, "GET", pbAuthPath("_superusers", "auth-methods"), "", nil); !strings.Contains(string(body), `"password":{"enabled":true,"identityFields":["email"]}`) {
		t.Errorf("_superusers: %s", body)
	}
}

// TestPBAuthMailedFlows: request-otp/auth-with-otp, the password reset and
// the verification on PocketBase's paths, with the mail caught by maildev.
func TestPBAuthMailedFlows(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t, apitest.Options{})
	s.CreateCollection(t, members())
	register(t, s, "members", "otp@example.com", userPassword)
	s.MustAdmin(t, http.StatusOK, http.MethodPatch, settingsURL, map[string]any{"auth.otp.enabled": "1"})
	md := startMaildev(t)
	md.configure(t, s)

	st, body := pbCall(t, s, "POST", pbAuthPath("members", "request-otp"), "", map[string]any{"email": "otp@example.com"})
	if st != http.StatusOK {
		t.Fatalf("request-otp: %d %s", st, body)
	}
	checkPBShape(t, "request_otp.json", body)
	var otp struct {
		OTPID string `json:"otpId"`
	}
	_ = json.Unmarshal(body, &otp)
	if st, body = pbCall(t, s, "POST", pbAuthPath("members", "request-otp"), "", map[string]any{"email": "nobody@example.com"}); st != http.StatusOK {
		t.Errorf("request-otp for an unknown address: %d %s", st, body)
	}
	code := codeIn(t, md.await(t, "otp@example.com", 1))
	if st, body = pbCall(t, s, "POST", pbAuthPath("members", "auth-with-otp"), "", map[string]any{"otpId": "otp_bm9ib2R5", "password": code}); st != http.StatusBadRequest {
		t.Errorf("the code with another address's otpId: %d %s", st, body)
	}
	st, body = pbCall(t, s, "POST", pbAuthPath("members", "auth-with-otp"), "", map[string]any{"otpId": otp.OTPID, "password": code})
	if st != http.StatusOK {
		t.Fatalf("auth-with-otp: %d %s", st, body)
	}
	checkPBShape(t, "auth_with_password.json", body)

	if st, body = pbCall(t, s, "POST", pbAuthPath("members", "request-password-reset"), "", map[string]any{"email": "otp@example.com"}); st != http.StatusNoContent {
		t.Fatalf("request-password-reset: %d %s", st, body)
	}
	reset := tokenIn(t, md.await(t, "otp@example.com", 2))
	if st, body = pbCall(t, s, "POST", pbAuthPath("members", "confirm-password-reset"), "",
		map[string]any{"token": reset, "password": "a-new-password-22", "passwordConfirm": "a-new-password-23"}); st != http.StatusBadRequest ||
		!strings.Contains(string(body), `"passwordConfirm":{"code":"validation_values_mismatch"`) {
		t.Errorf("confirm-password-reset with a mismatch: %d %s", st, body)
	}
	if st, body = pbCall(t, s, "POST", pbAuthPath("members", "confirm-password-reset"), "",
		map[string]any{"token": reset, "password": "a-new-password-22", "passwordConfirm": "a-new-password-22"}); st != http.StatusNoContent {
		t.Fatalf("confirm-password-reset: %d %s", st, body)
	}
	if st, body = pbCall(t, s, "POST", pbAuthPath("members", "auth-with-password"), "", map[string]any{"identity": "otp@example.com", "password": "a-new-password-22"}); st != http.StatusOK {
		t.Errorf("sign-in with the new password: %d %s", st, body)
	}

	register(t, s, "members", "ver@example.com", userPassword)
	if st, body = pbCall(t, s, "POST", pbAuthPath("members", "request-verification"), "", map[string]any{"email": "ver@example.com"}); st != http.StatusNoContent {
		t.Fatalf("request-verification: %d %s", st, body)
	}
	vt := tokenIn(t, md.await(t, "ver@example.com", 1))
	if p := jwtPayload(t, vt); p["collectionId"] == nil || p["id"] == nil {
		t.Errorf("the mailed token lacks what the SDK reads: %v", p)
	}
	if st, body = pbCall(t, s, "POST", pbAuthPath("members", "confirm-verification"), "", map[string]any{"token": "nope"}); st != http.StatusBadRequest {
		t.Errorf("confirm-verification with a bad token: %d %s", st, body)
	}
	if st, body = pbCall(t, s, "POST", pbAuthPath("members", "confirm-verification"), "", map[string]any{"token": vt}); st != http.StatusNoContent {
		t.Fatalf("confirm-verification: %d %s", st, body)
	}
	st, body = pbCall(t, s, "POST", pbAuthPath("members", "auth-with-password"), "", map[string]any{"identity": "ver@example.com", "password": userPassword})
	if st != http.StatusOK || !strings.Contains(string(body), `"verified":true`) {
		t.Errorf("after the verification: %d %s", st, body)
	}
}
