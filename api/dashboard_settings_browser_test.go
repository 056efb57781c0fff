package api_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"svcd/api/apitest"
)

// TestDashboardSettingsBrowser edits the runtime settings in headless
// Chromium against a real node: a stored secret is never on the page; a
// value the server refuses shows its message under its key and changes
// nothing; a fix and a new secret are saved; a save that leaves the secret
// box empty keeps the stored secret; a viewer has no Settings page.
func TestDashboardSettingsBrowser(t *testing.T) {
	srv := apitest.Start(t, apitest.Options{})
	const secret, secret2 = "s3cr3t-on-the-server", "n3w-s3cr3t-typed-in"
	srv.MustAdmin(t, http.StatusOK, http.MethodPatch, "/api/v1/admin/settings", map[string]any{"smtp.pass": secret, "smtp.host": "mail.example.com"})
	reveal := func(key string) any {
		t.Helper()
		return apitest.Obj(t, srv.MustAdmin(t, http.StatusOK, http.MethodGet, "/api/v1/admin/settings?reveal=1", nil)["data"])[key]
	}

	p := openDashboard(t, srv.URL)
	p.signIn(apitest.AdminEmail, apitest.AdminPassword)
	p.press("Settings")
	p.waitFor("the smtp group", `document.querySelector("#settings-smtp")`, 10*time.Second)
	p.choose("select[name=settings_area]", "smtp")
	p.waitFor("the smtp group shown", `!document.querySelector("#settings-smtp").hidden && document.querySelector("#settings-app").hidden`, 5*time.Second)
	const pass, port, host = `input[name="setting:smtp.pass"]`, `input[name="setting:smtp.port"]`, `input[name="setting:smtp.host"]`
	p.mustJS(`document.querySelector('` + pass + `').type === "password" && document.querySelector('` + pass + `').value === ""`)
	p.mustJS(`document.querySelector('` + host + `').value === "mail.example.com"`)
	noSecret := func(s string) {
		t.Helper()
		all := p.text(`document.body.innerText + [...document.querySelectorAll("input")].map((e) => e.value + " " + e.placeholder).join(" ")`)
		if strings.Contains(all, s) {
			t.Fatalf("the secret %q is on the page", s)
		}
	}
	noSecret(secret)

	// Refused: the server's message under the key, nothing stored.
	p.fill(port, "five")
	p.press("Save smtp settings")
	portErr := `document.getElementById(document.querySelector('` + port + `').getAttribute("aria-describedby").split(" ").pop()).textContent`
	p.waitFor("the port's error", portErr+` === "must be a number"`, 10*time.Second)
	p.mustJS(`document.querySelector('` + port + `').getAttribute("aria-invalid") === "true"`)
	if v := reveal("smtp.port"); v != "587" {
		t.Fatalf("a refused save changed smtp.port to %v", v)
	}
	p.checkNamed("settings")
	p.mustJS(`(() => { document.querySelector("#settings-smtp").scrollIntoView(); return true; })()`)
	p.shot("dashboard-settings")

	// Fixed, with a new secret typed in.
	p.fill(port, "2525")
	p.fill(pass, secret2)
	p.press("Save smtp settings")
	p.waitFor("the save", `document.querySelector("#settings-smtp [role=status]").textContent.startsWith("Saved")`, 10*time.Second)
	if reveal("smtp.port") != "2525" || reveal("smtp.pass") != secret2 {
		t.Fatalf("after the save smtp.port=%v smtp.pass=%v", reveal("smtp.port"), reveal("smtp.pass"))
	}
	p.mustJS(`document.querySelector('` + pass + `').value === "" && !document.querySelector('` + port + `').hasAttribute("aria-invalid")`)
	noSecret(secret2)

	// The secret box left empty keeps the stored secret.
	p.fill(host, "smtp.example.org")
	p.press("Save smtp settings")
	p.waitFor("the second save", `document.querySelector("#settings-smtp [role=status]").textContent === "Saved smtp.host."`, 10*time.Second)
	if reveal("smtp.host") != "smtp.example.org" || reveal("smtp.pass") != secret2 {
		t.Fatalf("after the second save smtp.host=%v smtp.pass=%v", reveal("smtp.host"), reveal("smtp.pass"))
	}

	// A viewer: no Settings link, and the server refuses the page's call.
	srv.MustAdmin(t, http.StatusCreated, http.MethodPost, "/api/v1/admin/admins",
		map[string]any{"email": "viewer@example.com", "password": apitest.AdminPassword, "role": "viewer"})
	p.press("Sign out")
	p.signIn("viewer@example.com", apitest.AdminPassword)
	if p.hasControl("Settings") {
		t.Error("a viewer sees the Settings link")
	}
	p.goTo("/_/settings")
	p.waitFor("the refusal", `document.querySelector("p.error[role=alert]") && document.querySelector("p.error[role=alert]").textContent.startsWith("403")`, 10*time.Second)
	if p.hasControl("Save smtp settings") {
		t.Error("a viewer sees a Save button")
	}
}
