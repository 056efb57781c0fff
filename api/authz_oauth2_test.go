package api_test

import (
	"encoding/json"
	"testing"

	"github.com/oauth2-proxy/mockoidc"
)

// The OAuth2 side of the authorization matrix (issue 21). OAuth2 reveals
// an account to whoever holds the provider identity linked to it: the
// identity is the credential, whatever the request carries besides. So
// the checks are what a caller's own credentials add: exchanging user
// a's identity must answer user a's session (never another account's,
// never a hidden field) or refuse; a caller's token links only the
// caller's own account; a merge token is confirmed only with its
// account's session or password; an unlink removes only the caller's own
// link.
func pathOAuth2(t *testing.T, x *matrix) {
	m := startMockOIDC(t, x.s)
	uaIdentity := &mockoidc.MockUser{Subject: "ua-oidc", Email: "ua.elsewhere@example.net", EmailVerified: true}
	uaToken := x.callers[1].headers
	if x.callers[1].user != "ua" || x.callers[1].kind != kindUser {
		t.Fatalf("the matrix's second caller is %s, the test wants user a", x.callers[1].name)
	}
	if d := oidcSignIn(t, x.s, m, "members", uaIdentity, "", uaToken).ok(); x.keys[recordID(t, d)] != "members/ua" {
		t.Fatalf("linking user a: %v", d)
	}
	ubEmail := marker{"members", "ub", "email"}.String() + "@example.com"
	merge := oidcSignIn(t, x.s, m, "members", &mockoidc.MockUser{Subject: "ub-oidc", Email: ubEmail, EmailVerified: true}, "", nil).ok()
	mergeToken, _ := merge["merge_token"].(string)
	if mergeToken == "" {
		t.Fatalf("no merge token for user b's email: %v", merge)
	}
	for _, c := range x.callers {
		// Exchange user a's identity, carrying c's credentials.
		st, body := oidcSignIn(t, x.s, m, "members", uaIdentity, "", c.headers).pair()
		raw, _ := json.Marshal(body)
		for _, mk := range revealed(raw) {
			if mk.coll != "members" || mk.rec != "ua" || mk.field == "nick" {
				t.Errorf("LEAK %s via oauth2 (exchange of user a's identity): %s", c.name, mk.label())
			}
		}
		want := 200
		switch {
		case c.kind == kindUser && c.user == "ua" && c.name != "user a":
			want = 403 // an impersonation links nothing
		case c.kind == kindUser && c.user == "ug":
			want = 422 // a guest links nothing
		case c.kind == kindUser && c.user != "ua":
			want = 409 // linked to another account
		}
		if st != want {
			t.Errorf("%s: exchange of user a's identity: %d, want %d: %s", c.name, st, want, raw)
		}
		if st == 200 && x.keys[recordID(t, body["data"].(map[string]any))] != "members/ua" {
			t.Errorf("%s: exchange of user a's identity signed in to %v", c.name, body)
		}

		// Confirm the merge into user b's account without its password.
		if c.name != "user b" {
			st, out, _ := x.get(t, c, "POST", "/api/v1/auth/members/oauth2/merge-confirm", map[string]any{"merge_token": mergeToken}, nil)
			for _, mk := range revealed(out) {
				t.Errorf("LEAK %s via oauth2 (merge-confirm of user b's account): %s", c.name, mk.label())
			}
			if want := map[bool]int{true: 403, false: 422}[c.kind == kindUser]; st != want {
				t.Errorf("%s: merge-confirm of user b's account: %d, want %d: %s", c.name, st, want, out)
			}
		}

		// Unlink: only the caller's own link goes.
		if c.kind != kindUser || c.user != "ua" {
			st, out, _ := x.get(t, c, "DELETE", "/api/v1/auth/members/oauth2/oidc/unlink", nil, nil)
			want := map[callerKind]int{kindAnon: 401, kindUser: 404, kindAdmin: 403, kindToken: 401}[c.kind]
			if st != want {
				t.Errorf("%s: unlink: %d, want %d: %s", c.name, st, want, out)
			}
		}
	}
	if d := oidcSignIn(t, x.s, m, "members", uaIdentity, "", nil).ok(); x.keys[recordID(t, d)] != "members/ua" {
		t.Errorf("after every caller, user a's identity signs in to %v", d)
	}
	if d := oidcSignIn(t, x.s, m, "members", &mockoidc.MockUser{Subject: "ub-oidc", Email: ubEmail, EmailVerified: true}, "", nil).ok(); d["merge_required"] != true {
		t.Errorf("after every caller, user b's merge is no longer required: %v", d)
	}
}

// recordID is the id of the record of a session answer.
func recordID(t *testing.T, d map[string]any) string {
	t.Helper()
	rec, _ := d["record"].(map[string]any)
	id, _ := rec["id"].(string)
	return id
}
