package api_test

import (
	"encoding/json"
	"net/http"
	"testing"

	"svcd/api/apitest"
)

// pbAuthAnswer is PocketBase's {token, record} of a sign-in or refresh.
type pbAuthAnswer struct {
	Token  string `json:"token"`
	Record struct {
		ID             string `json:"id"`
		CollectionName string `json:"collectionName"`
		Email          string `json:"email"`
	} `json:"record"`
}

func decodePBAuth(t *testing.T, body []byte) pbAuthAnswer {
	t.Helper()
	var a pbAuthAnswer
	if err := json.Unmarshal(body, &a); err != nil {
		t.Fatalf("auth answer %s: %v", body, err)
	}
	return a
}

// pathPBSignIn: PocketBase's auth-with-password answers the signed-in
// record as its owner may see it (hidden fields left out), for a user
// of members and for an admin of each role on _superusers; a sign-in
// with the wrong password or in the other collection answers nothing.
func pathPBSignIn(t *testing.T, x *matrix) {
	anon := mcaller{name: "anonymous", kind: kindAnon}
	for _, u := range []string{"ua", "ub"} {
		email := marker{"members", u, "email"}.String() + "@example.com"
		st, body, _ := x.get(t, anon, "POST", "/api/collections/members/auth-with-password", map[string]any{"identity": email, "password": userPassword}, nil)
		if st != http.StatusOK {
			t.Errorf("sign-in of %s: %d %s", u, st, body)
			continue
		}
		a := decodePBAuth(t, body)
		if a.Record.ID != x.id("members", u) || a.Record.Email != email || a.Token == "" {
			t.Errorf("sign-in of %s answered %s", u, body)
		}
		x.leaks(t, mcaller{name: "user " + u, kind: kindUser, user: u}, "auth-with-password", body)
		for _, wrong := range []struct{ coll, pw string }{{"members", userPassword + "x"}, {"_superusers", userPassword}} {
			st, body, _ := x.get(t, anon, "POST", "/api/collections/"+wrong.coll+"/auth-with-password", map[string]any{"identity": email, "password": wrong.pw}, nil)
			if st != http.StatusBadRequest {
				t.Errorf("sign-in of %s on %s with a wrong password: %d %s", u, wrong.coll, st, body)
			}
			x.leaks(t, anon, "failed auth-with-password", body)
		}
	}
	admins := map[string]string{"viewer@example.com": adminPassword, "editor@example.com": adminPassword,
		"developer@example.com": adminPassword, apitest.AdminEmail: apitest.AdminPassword}
	for email, pw := range admins {
		st, body, _ := x.get(t, anon, "POST", "/api/collections/_superusers/auth-with-password", map[string]any{"identity": email, "password": pw}, nil)
		if st != http.StatusOK {
			t.Errorf("superuser sign-in of %s: %d %s", email, st, body)
			continue
		}
		a := decodePBAuth(t, body)
		if a.Record.CollectionName != "_superusers" || a.Record.Email != email || a.Token == "" {
			t.Errorf("superuser sign-in of %s answered %s", email, body)
		}
		if m := revealed(body); len(m) > 0 {
			t.Errorf("LEAK superuser sign-in of %s answers app data: %v", email, m)
		}
		st, body, _ = x.get(t, anon, "POST", "/api/collections/members/auth-with-password", map[string]any{"identity": email, "password": pw}, nil)
		if st != http.StatusBadRequest {
			t.Errorf("sign-in of admin %s on members: %d %s", email, st, body)
		}
	}
}

// pathPBRefresh: auth-refresh on members and on _superusers as every
// caller. A user, a guest and an impersonation refresh on members (their
// own record, as they may see it); an admin session on _superusers; an
// API token nowhere (it has no session); an anonymous caller gets 401.
// A refreshed caller goes on with its new token (svcd revokes the old
// one, which from then on is a guest's), so this path runs last.
func pathPBRefresh(t *testing.T, x *matrix) {
	for i, c := range x.callers {
		for _, coll := range []string{"members", "_superusers"} {
			want := http.StatusForbidden
			switch {
			case c.kind == kindAnon:
				want = http.StatusUnauthorized
			case c.kind == kindUser && coll == "members", c.kind == kindAdmin && coll == "_superusers":
				want = http.StatusOK
			}
			st, body, _ := x.get(t, c, "POST", "/api/collections/"+coll+"/auth-refresh", nil, nil)
			x.leaks(t, c, "auth-refresh on "+coll, body)
			if st != want {
				t.Errorf("%s: auth-refresh on %s: %d, want %d: %s", c.name, coll, st, want, body)
			}
			if st != http.StatusOK {
				continue
			}
			a := decodePBAuth(t, body)
			switch {
			case c.kind == kindUser && a.Record.ID != x.id("members", c.user):
				t.Errorf("%s: auth-refresh answered the record %s", c.name, a.Record.ID)
			case c.kind == kindAdmin && a.Record.CollectionName != "_superusers":
				t.Errorf("%s: auth-refresh answered %s", c.name, body)
			}
			old := c
			x.callers[i].headers = bearer(a.Token)
			c = x.callers[i]
			if st, body, _ := x.get(t, old, "POST", "/api/collections/"+coll+"/auth-refresh", nil, nil); st != http.StatusUnauthorized {
				t.Errorf("%s: the token replaced by auth-refresh still refreshes: %d %s", c.name, st, body)
			}
			if c.kind == kindUser {
				st, body, _ := x.get(t, c, "GET", pbRecords("members")+"/"+x.id("members", c.user), nil, nil)
				if st != http.StatusOK {
					t.Errorf("%s: the refreshed token reads its own record: %d %s", c.name, st, body)
				}
				x.leaks(t, c, "own record after auth-refresh", body)
			}
		}
	}
}
