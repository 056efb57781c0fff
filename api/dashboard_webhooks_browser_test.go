package api_test

import (
	"net/http"
	"testing"
	"time"

	"svcd/api/apitest"
)

// TestDashboardWebhooksBrowser manages webhooks in headless Chromium
// against a real node and a real receiver on loopback: a webhook created
// on the page (its secret shown once, and the one the receiver's requests
// are signed with), a record change delivered and listed as succeeded, a
// failing receiver's test delivery shown dead, disable and delete; an
// editor has no Webhooks page.
func TestDashboardWebhooksBrowser(t *testing.T) {
	srv := startWebhookNode(t, apitest.Options{})
	ok := newReceiver(t, nil)
	bad := newReceiver(t, func(_ int, w http.ResponseWriter, _ *http.Request) {
		http.Error(w, "try later", http.StatusServiceUnavailable)
	})
	srv.CreateCollection(t, map[string]any{"name": "orders", "create_rule": "", "fields": []map[string]any{{"name": "item", "type": "text"}}})
	failing := createWebhook(t, srv, map[string]any{"url": bad.URL + "/fail", "events": []string{"orders.create"}, "retry_max": 1})

	p := openDashboard(t, srv.URL)
	p.signIn(apitest.AdminEmail, apitest.AdminPassword)
	p.press("Webhooks")
	p.waitFor("the new webhook form", `document.querySelector("input[name=webhook_url]")`, 10*time.Second)
	p.fill("input[name=webhook_url]", "ftp://example.com")
	p.fill("input[name=webhook_events]", "orders.*")
	p.press("Create webhook")
	p.waitFor("the server's refusal", `document.querySelector("form p.error[role=alert]").textContent.includes("url: must be an http or https URL")`, 10*time.Second)
	p.fill("input[name=webhook_url]", ok.URL+"/orders")
	p.press("Create webhook")
	p.waitFor("the secret shown once", `document.getElementById("webhook-secret") && document.getElementById("webhook-secret").value.length >= 32`, 10*time.Second)
	secret := p.text(`document.getElementById("webhook-secret").value`)
	p.checkNamed("webhook created")
	p.press("Done")
	p.waitFor("two webhooks", `document.querySelectorAll("#webhooks tbody tr").length === 2 && !document.getElementById("webhook-secret")`, 10*time.Second)

	// A record change reaches the receiver, signed with that secret, and
	// the page lists the delivery as succeeded.
	srv.CreateRecord(t, "orders", map[string]any{"item": "coffee"})
	got := ok.waitRequests(t, 1)
	checkSignature(t, got[0], secret, time.Now())
	var hook string
	for _, w := range apitest.List(t, srv.MustAdmin(t, http.StatusOK, http.MethodGet, webhooksURL, nil)["data"]) {
		if m := apitest.Obj(t, w); m["url"] == ok.URL+"/orders" {
			hook = m["id"].(string)
		}
	}
	waitDelivery(t, srv, hook, "", inState("succeeded"))
	p.press(ok.URL + "/orders")
	p.waitFor("the deliveries", `document.querySelector("#deliveries")`, 10*time.Second)
	p.press("Refresh deliveries")
	p.waitFor("a succeeded delivery", `document.querySelector("#deliveries tr[data-status=succeeded]")`, 10*time.Second)
	p.checkNamed("deliveries")
	p.shot("dashboard-webhook-deliveries")

	// A test delivery to the failing receiver: dead after its one attempt.
	p.press("All webhooks")
	p.press("Send test to " + bad.URL + "/fail")
	p.waitFor("the test's outcome", `document.getElementById("test-outcome") && document.getElementById("test-outcome").textContent.includes("dead · attempt 1 · HTTP 503")`, 20*time.Second)
	p.checkNamed("webhooks")

	// Disable, then delete.
	p.press("Disable " + bad.URL + "/fail")
	p.waitFor("disabled", `document.querySelector("tr[data-webhook='`+failing["id"].(string)+`']").textContent.includes("disabled")`, 10*time.Second)
	if w := apitest.Obj(t, srv.MustAdmin(t, http.StatusOK, http.MethodGet, webhooksURL+"/"+failing["id"].(string), nil)["data"]); w["enabled"] != false {
		t.Fatalf("the disabled webhook is %v", w["enabled"])
	}
	p.press("Delete " + bad.URL + "/fail")
	p.press("Confirm delete")
	p.waitFor("one webhook", `document.querySelectorAll("#webhooks tbody tr").length === 1`, 10*time.Second)
	if res, _ := srv.AdminDo(t, http.MethodGet, webhooksURL+"/"+failing["id"].(string), nil); res.StatusCode != http.StatusNotFound {
		t.Fatalf("the deleted webhook answers %d", res.StatusCode)
	}

	// An editor: no Webhooks link; the server refuses the page's call.
	srv.MustAdmin(t, http.StatusCreated, http.MethodPost, "/api/v1/admin/admins",
		map[string]any{"email": "editor@example.com", "password": apitest.AdminPassword, "role": "editor"})
	p.press("Sign out")
	p.signIn("editor@example.com", apitest.AdminPassword)
	if p.hasControl("Webhooks") {
		t.Error("an editor sees the Webhooks link")
	}
	p.goTo("/_/webhooks")
	p.waitFor("the refusal", `document.querySelector("p.error[role=alert]") && document.querySelector("p.error[role=alert]").textContent.startsWith("403")`, 10*time.Second)
}
