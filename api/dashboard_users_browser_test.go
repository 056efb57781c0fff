package api_test

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"svcd/api/apitest"
)

// TestDashboardUsersBrowser walks the users and admins pages in headless
// Chromium against a real node: a user with TOTP on has it cleared by
// "Disable MFA" (the row shows TOTP on, then off; the next sign-in needs
// no second factor); "Impersonate" shows a user token once, and the token
// is the user's; "End all sessions" makes the user's earlier tokens
// answer 401 and the row show when; an admin is
// added, has the role changed and is removed; the last owner's demotion is
// refused with the server's message; a session is ended; a viewer sees no
// write control; "Force logout all" ends every admin session.
func TestDashboardUsersBrowser(t *testing.T) {
	srv := apitest.Start(t, apitest.Options{})
	srv.CreateCollection(t, members())
	eveID := register(t, srv, "members", "eve@example.com", userPassword)
	register(t, srv, "members", "bob@example.com", userPassword)
	eve := bearer(signIn(t, srv, "members", "eve@example.com", userPassword)["token"].(string))
	secret := data(t, srv, http.StatusOK, "POST", "/api/v1/auth/members/totp/setup", nil, eve)["secret"].(string)
	data(t, srv, http.StatusOK, "POST", "/api/v1/auth/members/totp/confirm", map[string]any{"code": oathCode(t, secret, time.Now())}, eve)
	mfaTicket(t, srv, "eve@example.com") // TOTP is on: a password alone gives a ticket

	p := openDashboard(t, srv.URL)
	p.signIn(apitest.AdminEmail, apitest.AdminPassword)

	// Users: the auth collections, then one's users.
	p.press("Users")
	p.waitFor("the auth collections", `document.querySelector("#auth-collections")`, 10*time.Second)
	p.press("members")
	p.waitFor("two users", `document.querySelectorAll("#users tbody tr").length === 2`, 10*time.Second)
	p.checkNamed("users")
	p.fill("input[name=user_search]", `EVE@"`)
	p.press("Find users")
	p.waitFor("no user", `document.body.textContent.includes("No users.")`, 10*time.Second)
	p.fill("input[name=user_search]", "EVE@")
	p.press("Find users")
	p.waitFor("eve alone", `document.querySelectorAll("#users tbody tr").length === 1 && document.querySelector("#users tbody").textContent.includes("eve@example.com")`, 10*time.Second)
	eveRow := fmt.Sprintf(`document.querySelector("#users tr[data-user='%s']")`, eveID)
	if v := p.text(eveRow + `.querySelector("td.totp").textContent`); !strings.HasPrefix(v, "on (10 recovery codes left)") {
		t.Errorf("eve's TOTP shows %q, want on", v)
	}
	for cell, want := range map[string]string{"passkeys": "0", "oauth2": "none", "sessions-after": "any"} {
		if v := p.text(eveRow + `.querySelector("td.` + cell + `").textContent`); v != want {
			t.Errorf("eve's %s shows %q, want %q", cell, v, want)
		}
	}

	p.press("Disable MFA for eve@example.com")
	p.press("Confirm disable MFA")
	p.waitFor("the MFA outcome", `document.getElementById("mfa-outcome") && document.getElementById("mfa-outcome").textContent.includes("is off")`, 10*time.Second)
	if d := signIn(t, srv, "members", "eve@example.com", userPassword); d["token"] == nil || d["mfa_required"] != nil {
		t.Fatalf("after Disable MFA the sign-in answered %v", d)
	}
	p.waitFor("TOTP off in eve's row", eveRow+` && `+eveRow+`.querySelector("td.totp").textContent === "off"`, 10*time.Second)

	p.press("Impersonate eve@example.com")
	p.press("Confirm impersonate")
	p.waitFor("the user token", `document.getElementById("impersonation-token") && document.getElementById("impersonation-token").value.length > 20`, 10*time.Second)
	tok := p.text(`document.getElementById("impersonation-token").value`)
	if me := data(t, srv, http.StatusOK, "GET", "/api/v1/auth/me", nil, bearer(tok)); me["id"] != eveID {
		t.Fatalf("the impersonation token is of %v, want %s", me["id"], eveID)
	}
	p.checkNamed("impersonation")
	p.press("Done")
	p.waitFor("the token gone", `!document.getElementById("impersonation-token")`, 10*time.Second)

	if res, body := srv.Do(t, http.MethodGet, "/api/v1/auth/me", nil, eve); res.StatusCode != http.StatusOK {
		t.Fatalf("eve's token before End all sessions: %d %s", res.StatusCode, body)
	}
	p.press("End all sessions of eve@example.com")
	p.press("Confirm end all sessions")
	p.waitFor("the logout outcome", `document.getElementById("logout-outcome")`, 10*time.Second)
	p.waitFor("the floor in eve's row", eveRow+` && `+eveRow+`.querySelector("td.sessions-after").textContent !== "any"`, 10*time.Second)
	for _, tk := range []map[string]string{eve, bearer(tok)} {
		if res, body := srv.Do(t, http.MethodGet, "/api/v1/auth/me", nil, tk); res.StatusCode != http.StatusUnauthorized {
			t.Fatalf("a token of eve issued before End all sessions answers %d %s", res.StatusCode, body)
		}
	}
	if d := signIn(t, srv, "members", "eve@example.com", userPassword); d["token"] == nil {
		t.Fatalf("a sign-in after End all sessions answered %v", d)
	}
	p.checkNamed("users after End all sessions")
	p.shot("dashboard-users")
	if strings.Contains(p.text(`document.body.innerText`), tok) {
		t.Fatal("the impersonation token is still shown after Done")
	}

	// Admins: add one, change its role, refuse demoting the last owner.
	p.press("Admins")
	p.waitFor("the admins page", `document.querySelector("#admins") && document.querySelector("input[name=admin_email]")`, 10*time.Second)
	p.fill("input[name=admin_email]", "dev@example.com")
	p.fill("input[name=admin_password]", apitest.AdminPassword)
	p.choose("select[name=admin_role]", "developer")
	p.press("Add admin")
	p.waitFor("the new admin's row", `document.querySelector("#admins").textContent.includes("dev@example.com")`, 10*time.Second)
	devID, _ := dashAdmin(t, srv, "dev@example.com", "developer")
	p.choose(`select[name="role_`+devID+`"]`, "viewer")
	p.press("Save role of dev@example.com")
	p.waitFor("the saved role", `document.getElementById("admins-status").textContent.includes("now viewer")`, 10*time.Second)
	dashAdmin(t, srv, "dev@example.com", "viewer")
	ownerID, ownerEmail := dashAdmin(t, srv, apitest.AdminEmail, "owner")
	p.choose(`select[name="role_`+ownerID+`"]`, "editor")
	p.press("Save role of " + ownerEmail)
	p.waitFor("the last owner's refusal", `document.querySelector("p.error[role=alert]").textContent.startsWith("409")`, 10*time.Second)
	dashAdmin(t, srv, apitest.AdminEmail, "owner")
	p.checkNamed("admins")
	p.shot("dashboard-admins")

	// Sessions: dev signs in elsewhere; the owner ends that session.
	res, body := srv.Do(t, http.MethodPost, "/api/v1/admin/auth/login", map[string]any{"email": "dev@example.com", "password": apitest.AdminPassword}, nil)
	if res.StatusCode != http.StatusOK {
		t.Fatalf("dev login: %d %s", res.StatusCode, body)
	}
	devTok := apitest.Obj(t, apitest.DecodeMap(t, body)["data"])["token"].(string)
	jti := jwtID(t, devTok)
	p.goTo("/_/admins")
	p.waitFor("dev's session", fmt.Sprintf(`document.querySelector("#sessions tr[data-jti='%s']")`, jti), 10*time.Second)
	p.press("End session " + jti[:8])
	p.press("Confirm end session")
	p.waitFor("the session gone", fmt.Sprintf(`document.querySelector("#sessions") && !document.querySelector("#sessions tr[data-jti='%s']")`, jti), 10*time.Second)
	if res, _ := srv.Do(t, http.MethodGet, "/api/v1/admin/collections", nil, bearer(devTok)); res.StatusCode != http.StatusUnauthorized {
		t.Fatalf("the ended session still works: %d", res.StatusCode)
	}

	// Remove dev.
	p.press("Remove dev@example.com")
	p.press("Confirm remove")
	p.waitFor("dev's row gone", `document.querySelector("#admins") && !document.querySelector("#admins").textContent.includes("dev@example.com")`, 10*time.Second)
	for _, a := range apitest.List(t, srv.MustAdmin(t, http.StatusOK, http.MethodGet, "/api/v1/admin/admins", nil)["data"]) {
		if apitest.Obj(t, a)["email"] == "dev@example.com" {
			t.Fatal("the removed admin is still listed by the server")
		}
	}

	// A viewer: no Admins link, no user actions, the admins API refused.
	srv.MustAdmin(t, http.StatusCreated, http.MethodPost, "/api/v1/admin/admins",
		map[string]any{"email": "viewer@example.com", "password": apitest.AdminPassword, "role": "viewer"})
	p.press("Sign out")
	p.signIn("viewer@example.com", apitest.AdminPassword)
	if p.hasControl("Admins") {
		t.Error("a viewer sees the Admins link")
	}
	p.goTo("/_/users/members")
	p.waitFor("the users page", `document.querySelector("h1").textContent === "Users of members" &&
		(document.querySelector("[role=status]").textContent || document.querySelector("p.error[role=alert]").textContent)`, 10*time.Second)
	if v := p.text(`[...document.querySelectorAll("button")].filter((b) => /^(Disable MFA|End all sessions|Impersonate)/.test(b.textContent)).length`); v != "0" {
		t.Errorf("a viewer sees %s user actions", v)
	}
	if p.text(`String(!!document.querySelector("#users td.totp"))`) != "false" {
		t.Error("a viewer's page shows users' security state")
	}
	p.goTo("/_/admins")
	p.waitFor("the refusal", `document.querySelector("p.error[role=alert]") && document.querySelector("p.error[role=alert]").textContent.startsWith("403")`, 10*time.Second)
	if p.hasControl("Add admin") {
		t.Error("a viewer sees Add admin")
	}

	// Force logout: every admin token issued before now is refused.
	p.press("Sign out")
	p.signIn(apitest.AdminEmail, apitest.AdminPassword)
	p.goTo("/_/admins")
	p.press("Force logout all admins")
	p.press("Confirm force logout")
	p.waitFor("the sign-in form", `document.querySelector("input[name=email]") && !document.getElementById("role")`, 10*time.Second)
	if res, _ := srv.AdminDo(t, http.MethodGet, "/api/v1/admin/collections", nil); res.StatusCode != http.StatusUnauthorized {
		t.Fatalf("an admin token survived Force logout: %d", res.StatusCode)
	}

	// With a second owner, the owner demotes themselves: the page follows.
	p.signIn(apitest.AdminEmail, apitest.AdminPassword)
	res, body = srv.Do(t, http.MethodPost, "/api/v1/admin/auth/login", map[string]any{"email": apitest.AdminEmail, "password": apitest.AdminPassword}, nil)
	if res.StatusCode != http.StatusOK {
		t.Fatalf("owner login: %d %s", res.StatusCode, body)
	}
	owner := bearer(apitest.Obj(t, apitest.DecodeMap(t, body)["data"])["token"].(string))
	data(t, srv, http.StatusCreated, http.MethodPost, "/api/v1/admin/admins",
		map[string]any{"email": "owner2@example.com", "password": apitest.AdminPassword, "role": "owner"}, owner)
	p.goTo("/_/admins")
	p.waitFor("the second owner", `document.querySelector("#admins") && document.querySelector("#admins").textContent.includes("owner2@example.com")`, 10*time.Second)
	p.choose(`select[name="role_`+ownerID+`"]`, "developer")
	p.press("Save role of " + ownerEmail)
	p.waitFor("the page as a developer", `document.getElementById("role").textContent === "developer" && !`+controlJS("Admins"), 10*time.Second)
	res, body = srv.Do(t, http.MethodPost, "/api/v1/admin/auth/login", map[string]any{"email": "owner2@example.com", "password": apitest.AdminPassword}, nil)
	if res.StatusCode != http.StatusOK {
		t.Fatalf("owner2 login: %d %s", res.StatusCode, body)
	}
	owner2 := bearer(apitest.Obj(t, apitest.DecodeMap(t, body)["data"])["token"].(string))
	res, body = srv.Do(t, http.MethodGet, "/api/v1/admin/admins", nil, owner2)
	if res.StatusCode != http.StatusOK {
		t.Fatalf("admins: %d %s", res.StatusCode, body)
	}
	for _, a := range apitest.List(t, apitest.DecodeMap(t, body)["data"]) {
		if m := apitest.Obj(t, a); m["id"] == ownerID && m["role"] != "developer" {
			t.Fatalf("the self-demoted owner has role %v", m["role"])
		}
	}
}

// dashAdmin finds the admin with email (compared without case) and role on
// the server and returns its id and its email as stored.
func dashAdmin(t *testing.T, srv *apitest.Server, email, role string) (string, string) {
	t.Helper()
	for _, a := range apitest.List(t, srv.MustAdmin(t, http.StatusOK, http.MethodGet, "/api/v1/admin/admins", nil)["data"]) {
		m := apitest.Obj(t, a)
		if strings.EqualFold(m["email"].(string), email) {
			if m["role"] != role {
				t.Fatalf("admin %s has role %v, want %s", email, m["role"], role)
			}
			return m["id"].(string), m["email"].(string)
		}
	}
	t.Fatalf("no admin %s", email)
	return "", ""
}

// jwtID reads the jti claim of a token (its payload is not verified here:
// the server signed it a moment ago).
func jwtID(t *testing.T, tok string) string {
	t.Helper()
	parts := strings.Split(tok, ".")
	if len(parts) != 3 {
		t.Fatalf("not a JWT: %q", tok)
	}
	raw, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		t.Fatal(err)
	}
	var claims struct {
		JTI string `json:"jti"`
	}
	if err := json.Unmarshal(raw, &claims); err != nil || claims.JTI == "" {
		t.Fatalf("no jti in %s: %v", raw, err)
	}
	return claims.JTI
}
