package token

import (
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// TestCompatClaims: the payload of a session token carries what
// PocketBase's JavaScript SDK reads (BaseAuthStore: type "auth", and the
// collectionId that marks a superuser), and mailed tokens carry the
// collectionId the SDK's confirm calls read.
func TestCompatClaims(t *testing.T) {
	s, err := NewSigner([]byte(strings.Repeat("k", 32)))
	if err != nil {
		t.Fatal(err)
	}
	payload := func(tok string) map[string]any {
		t.Helper()
		parts := strings.Split(tok, ".")
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
	now := time.Now()
	cases := []struct {
		name     string
		c        Claims
		aud      string
		wantType any
		wantColl any
	}{
		{"user session", Claims{ID: "u1", Collection: "col_users"}, AudUser, "auth", "col_users"},
		{"admin session", Claims{ID: "adm_1", Collection: AdminsCollection}, AudAdmin, "auth", SuperusersCollectionID},
		{"mailed token", Claims{ID: "u1", Collection: "col_users"}, "verify", nil, "col_users"},
		{"file token", Claims{ID: "u1", File: "x.png"}, AudFile, nil, nil},
	}
	for _, tc := range cases {
		tok, _, err := s.Issue(tc.c, tc.aud, now, time.Hour)
		if err != nil {
			t.Fatal(err)
		}
		p := payload(tok)
		if p["type"] != tc.wantType || p["collectionId"] != tc.wantColl {
			t.Errorf("%s: type %v, collectionId %v; want %v, %v", tc.name, p["type"], p["collectionId"], tc.wantType, tc.wantColl)
		}
		if p["id"] != tc.c.ID || p["exp"] == nil {
			t.Errorf("%s: the existing claims changed: %v", tc.name, p)
		}
		c, err := s.Verify(tok, tc.aud)
		if err != nil || c.Collection != tc.c.Collection {
			t.Errorf("%s: verify: %v %+v", tc.name, err, c)
		}
	}
}
