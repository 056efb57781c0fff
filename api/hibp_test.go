package api_test

import (
	"crypto/sha1"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"svcd/api/apitest"
)

// TestBreachedPasswordCheck: with password.hibp_check on, a password the
// range API lists is refused at sign-up with 422; others pass; only the
// five-character prefix is sent; the request goes through the SSRF guard
// (the loopback mirror must be allowed); an unreachable service lets the
// password through.
func TestBreachedPasswordCheck(t *testing.T) {
	t.Parallel()
	const breached = "password-breached-123"
	sum := sha1.Sum([]byte(breached))
	h := strings.ToUpper(hex.EncodeToString(sum[:]))
	var calls atomic.Int32
	mirror := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		prefix := strings.TrimPrefix(r.URL.Path, "/range/")
		if len(prefix) != 5 || r.Header.Get("Add-Padding") != "true" {
			t.Errorf("request %s (padding %q): the range API takes a 5-character prefix", r.URL.Path, r.Header.Get("Add-Padding"))
		}
		fmt.Fprintf(w, "0000000000000000000000000000000000A:0\r\n")
		if prefix == h[:5] {
			fmt.Fprintf(w, "%s:42\r\n", h[5:])
		}
	}))
	defer mirror.Close()

	s := apitest.Start(t, apitest.Options{})
	s.CreateCollection(t, usersCollection())
	s.MustAdmin(t, http.StatusOK, "PATCH", "/api/v1/admin/settings", map[string]any{
		"password.hibp_check": "1", "password.hibp_url": mirror.URL + "/range/",
	})
	register := func(email, pw string) (int, string) {
		res, body := s.Do(t, "POST", "/api/v1/auth/users/register", map[string]any{"email": email, "password": pw}, nil)
		return res.StatusCode, string(body)
	}
	// Loopback is denied by the guard: the check cannot run, the password passes.
	if code, body := register("a@example.com", breached); code != http.StatusCreated || calls.Load() != 0 {
		t.Fatalf("guard should have refused the loopback mirror: %d %s (calls %d)", code, body, calls.Load())
	}
	s.MustAdmin(t, http.StatusOK, "PATCH", "/api/v1/admin/settings", map[string]any{"hooks.http.allow": "127.0.0.1/32"})
	if code, body := register("b@example.com", breached); code != http.StatusUnprocessableEntity || !strings.Contains(body, "data breach") {
		t.Fatalf("breached password: %d %s", code, body)
	}
	if code, body := register("c@example.com", "a-fine-unlisted-password"); code != http.StatusCreated {
		t.Fatalf("clean password: %d %s", code, body)
	}
	if calls.Load() != 2 {
		t.Fatalf("mirror called %d times, want 2", calls.Load())
	}
}
