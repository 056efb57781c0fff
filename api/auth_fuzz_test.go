package api_test

import (
	"encoding/json"
	"net/http"
	"testing"

	"svcd/api/apitest"
)

// FuzzAuthBodies posts arbitrary bodies and Authorization headers to the
// sign-in and refresh endpoints: every answer is a well-formed envelope
// with a 2xx or 4xx status, never a 5xx, and never a session for a wrong
// password.
func FuzzAuthBodies(f *testing.F) {
	s := apitest.Start(f, apitest.Options{})
	s.CreateCollection(f, usersCollection())
	signUp(f, s, "fuzz@example.com")
	f.Add([]byte(`{"email":"fuzz@example.com","password":"wrong"}`), "Bearer x")
	f.Add([]byte(`{"email":1,"password":[]}`), "")
	f.Add([]byte(`{"email":"fuzz@example.com","password":"`+userPassword+`","extra":{}}`), "Bearer eyJ.eyJ.x")
	f.Add([]byte(`[`), "Basic abc")
	f.Add([]byte("\x00\xff"), "Bearer svcat_")
	f.Fuzz(func(t *testing.T, body []byte, auth string) {
		for _, path := range []string{"/api/v1/auth/users/login", "/api/v1/admin/auth/login", "/api/v1/auth/refresh"} {
			h := map[string]string{"Content-Type": "application/json"}
			if auth != "" {
				h["Authorization"] = auth
			}
			res, out, err := s.Send(http.MethodPost, path, body, h)
			if err != nil {
				// Headers net/http refuses to send never reach the server.
				continue
			}
			apitest.CheckCommon(t, res, out)
			if res.StatusCode >= 500 {
				t.Fatalf("%s %q: %d %s", path, body, res.StatusCode, out)
			}
			if res.StatusCode == http.StatusOK && path != "/api/v1/auth/refresh" {
				// Only the right password signs in.
				var in struct{ Password any }
				json.Unmarshal(body, &in)
				want := userPassword
				if path == "/api/v1/admin/auth/login" {
					want = apitest.AdminPassword
				}
				if in.Password != want {
					t.Fatalf("%s signed in with %q", path, body)
				}
			}
		}
	})
}
