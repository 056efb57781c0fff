package api_test

import (
	"net/http"
	"strings"
	"testing"
)

// The passkeys' side of the authorization matrix (issue 21): users a and
// b each register a passkey named with a marker of its own, then every
// caller lists passkeys, renames and deletes the others', begins a
// registration, and asks for sign-in options with a's email. A passkey is
// its account's alone: only a session of that account (its impersonation
// included) lists, renames or deletes it; only the account's own user
// token adds one (an impersonation or a guest may not).

// passkeyMarker is the name of the passkey of members record rec.
func passkeyMarker(rec string) string { return "mmembersx" + rec + "xpasskey" }

// ownsPasskeys reports whether c acts as members record rec on the
// passkey endpoints: a user session of rec, an impersonation included.
func (c mcaller) ownsPasskeys(rec string) bool { return c.kind == kindUser && c.user == rec }

// wantPasskeyList is what GET .../webauthn/credentials answers c: 401
// without a session (anonymous, an API token: as the TOTP endpoints), 403
// for an admin session, else 200.
func (c mcaller) wantPasskeyList() int {
	switch c.kind {
	case kindAnon, kindToken:
		return http.StatusUnauthorized
	case kindAdmin:
		return http.StatusForbidden
	}
	return http.StatusOK
}

// passkeyLeaks reports every passkey name of body c may not see, and the
// records' markers (x.leaks).
func (x *matrix) passkeyLeaks(t *testing.T, c mcaller, what string, body []byte) {
	t.Helper()
	x.leaks(t, c, what, body)
	for _, rec := range []string{"ua", "ub"} {
		if strings.Contains(string(body), passkeyMarker(rec)) && !c.ownsPasskeys(rec) {
			t.Errorf("LEAK %s via %s (%s): the passkey of members/%s", c.name, x.path, what, rec)
		}
	}
}

func pathPasskeys(t *testing.T, x *matrix) {
	x.s.MustAdmin(t, 200, "PATCH", settingsURL, acmeSettings())
	ids := map[string]string{} // members record -> its passkey's id
	for _, c := range x.callers {
		if c.kind == kindUser && (c.user == "ua" || c.user == "ub") && ids[c.user] == "" {
			tok := strings.TrimPrefix(c.headers["Authorization"], "Bearer ")
			ids[c.user] = newPasskeyDevice(acmeRP()).enroll(t, x.s, x.s, "members", tok, passkeyMarker(c.user))["id"].(string)
		}
	}
	if len(ids) != 2 {
		t.Fatalf("the matrix has no sessions of users a and b: %v", ids)
	}
	for _, c := range x.callers {
		st, body, _ := x.get(t, c, "GET", pkURL("members", "credentials"), nil, nil)
		x.passkeyLeaks(t, c, "list", body)
		if want := c.wantPasskeyList(); st != want {
			t.Errorf("%s: list passkeys: %d, want %d", c.name, st, want)
		}
		for _, rec := range []string{"ua", "ub"} {
			if c.ownsPasskeys(rec) && !strings.Contains(string(body), passkeyMarker(rec)) {
				t.Errorf("%s: the list lacks its own passkey: %s", c.name, body)
			}
		}

		// Renaming and deleting another account's passkey: never done.
		for _, rec := range []string{"ua", "ub"} {
			if c.ownsPasskeys(rec) {
				continue
			}
			one := pkURL("members", "credentials/"+ids[rec])
			st, body, _ := x.get(t, c, "PATCH", one, map[string]any{"name": "taken by " + c.name}, nil)
			x.passkeyLeaks(t, c, "rename members/"+rec+"'s", body)
			if st < 400 {
				t.Errorf("%s renamed the passkey of members/%s: %d %s", c.name, rec, st, body)
			}
			st, body, _ = x.get(t, c, "DELETE", one, nil, nil)
			x.passkeyLeaks(t, c, "delete members/"+rec+"'s", body)
			if st < 400 {
				t.Errorf("%s deleted the passkey of members/%s: %d", c.name, rec, st)
			}
		}

		// Adding one: the account's own user token only.
		st, body, _ = x.get(t, c, "POST", pkURL("members", "register/options"), nil, nil)
		x.passkeyLeaks(t, c, "register options", body)
		mayAdd := c.kind == kindUser && (c.user == "ua" || c.user == "ub") && !strings.HasPrefix(c.name, "impersonation")
		if (st == http.StatusOK) != mayAdd {
			t.Errorf("%s: register options: %d (may add a passkey: %v)", c.name, st, mayAdd)
		}

		// Sign-in options are public and reveal nothing but the
		// credential ids of the email's passkeys.
		st, body, _ = x.get(t, c, "POST", pkURL("members", "login/options"), map[string]any{"email": "mmembersxuaxemail@example.com"}, nil)
		x.passkeyLeaks(t, c, "sign-in options", body)
		if st != http.StatusOK {
			t.Errorf("%s: sign-in options: %d %s", c.name, st, body)
		}
	}
	// Nobody else's attempts changed a passkey.
	for _, c := range x.callers {
		if c.name == "user a" || c.name == "user b" {
			l := pkList(t, x.s, "members", c.headers)
			if len(l) != 1 || !strings.Contains(string(mustJSON(t, l)), passkeyMarker(c.user)) {
				t.Errorf("%s's passkeys after every caller's attempts: %v", c.name, l)
			}
		}
	}
}
