package api_test

import (
	"net/http"
	"strings"
	"testing"

	"svcd/api/apitest"
)

// TestPBEmailChange: request-email-change and confirm-email-change on
// PocketBase's paths and bodies, with the mail caught by maildev: 204s,
// PocketBase's 401 for a guest and its 400s with field codes.
func TestPBEmailChange(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t, apitest.Options{})
	s.CreateCollection(t, members())
	register(t, s, "members", "pat@example.com", userPassword)
	register(t, s, "members", "sam@example.com", userPassword)
	md := startMaildev(t)
	md.configure(t, s)
	tok := signIn(t, s, "members", "pat@example.com", userPassword)["token"].(string)
	request, confirm := pbAuthPath("members", "request-email-change"), pbAuthPath("members", "confirm-email-change")

	if st, body := pbCall(t, s, "POST", request, "", map[string]any{"newEmail": "x@example.com"}); st != http.StatusUnauthorized {
		t.Errorf("a guest: %d %s", st, body)
	}
	st, body := pbCall(t, s, "POST", request, tok, map[string]any{"newEmail": "SAM@example.com"})
	if st != http.StatusBadRequest {
		t.Fatalf("a taken address: %d %s", st, body)
	}
	checkPBShape(t, "error_email_change_400.json", body)
	for in, code := range map[string]string{"pat@example.com": "validation_not_in_invalid", "nope": "validation_is_email", "": "validation_required"} {
		if st, body := pbCall(t, s, "POST", request, tok, map[string]any{"newEmail": in}); st != http.StatusBadRequest ||
			!strings.Contains(string(body), `"newEmail":{"code":"`+code+`"`) {
			t.Errorf("newEmail %q: %d %s, want 400 %s", in, st, body, code)
		}
	}
	if st, body := pbCall(t, s, "POST", pbAuthPath("_superusers", "request-email-change"), s.AdminToken(t), map[string]any{"newEmail": "x@example.com"}); st != http.StatusNotFound {
		t.Errorf("_superusers: %d %s", st, body)
	}

	if st, body := pbCall(t, s, "POST", request, tok, map[string]any{"newEmail": "pat2@example.com"}); st != http.StatusNoContent {
		t.Fatalf("request-email-change: %d %s", st, body)
	}
	ct := tokenIn(t, md.await(t, "pat2@example.com", 1))
	if p := jwtPayload(t, ct); p["collectionId"] == nil || p["id"] == nil || p["newEmail"] != "pat2@example.com" {
		t.Errorf("the mailed token lacks what the SDK reads: %v", p)
	}
	if st, body := pbCall(t, s, "POST", confirm, "", map[string]any{"token": "nope", "password": userPassword}); st != http.StatusBadRequest ||
		!strings.Contains(string(body), `"token":{"code":"validation_invalid_token"`) {
		t.Errorf("a bad token: %d %s", st, body)
	}
	st, body = pbCall(t, s, "POST", confirm, "", map[string]any{"token": ct, "password": "wrong-password-1"})
	if st != http.StatusBadRequest {
		t.Fatalf("a wrong password: %d %s", st, body)
	}
	checkPBShape(t, "error_email_change_password_400.json", body)
	if st, body := pbCall(t, s, "POST", confirm, "", map[string]any{"token": ct, "password": userPassword}); st != http.StatusNoContent {
		t.Fatalf("confirm-email-change: %d %s", st, body)
	}
	if st, body := pbCall(t, s, "POST", confirm, "", map[string]any{"token": ct, "password": userPassword}); st != http.StatusBadRequest {
		t.Errorf("confirming twice: %d %s", st, body)
	}
	if st, body := pbCall(t, s, "POST", pbAuthPath("members", "auth-refresh"), tok, nil); st != http.StatusUnauthorized {
		t.Errorf("the session from before the change refreshes: %d %s", st, body)
	}
	st, body = pbCall(t, s, "POST", pbAuthPath("members", "auth-with-password"), "", map[string]any{"identity": "pat2@example.com", "password": userPassword})
	if st != http.StatusOK || !strings.Contains(string(body), `"verified":true`) || !strings.Contains(string(body), `"email":"pat2@example.com"`) {
		t.Errorf("sign-in with the new email: %d %s", st, body)
	}
	if st, body := pbCall(t, s, "POST", pbAuthPath("members", "auth-with-password"), "", map[string]any{"identity": "pat@example.com", "password": userPassword}); st != http.StatusBadRequest {
		t.Errorf("sign-in with the old email: %d %s", st, body)
	}
}
