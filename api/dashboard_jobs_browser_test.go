package api_test

import (
	"net/http"
	"testing"
	"time"

	"svcd/api/apitest"
)

// TestDashboardJobsBrowser uses the jobs page in headless Chromium: a
// queue's counts by state; its dead job listed and retried from the page
// (after its worker's code is fixed) until it succeeds; a scheduled job
// fired with Run now and its run shown. A viewer gets no Jobs link.
func TestDashboardJobsBrowser(t *testing.T) {
	srv := apitest.Start(t, apitest.Options{})
	srv.AdminToken(t) // creates the first admin
	w := apitest.Obj(t, srv.MustAdmin(t, http.StatusCreated, http.MethodPost, "/api/v1/admin/workers",
		map[string]any{"queue": "invoices", "code": `if (!payload.amount) throw new Error("no amount"); return payload.amount`})["data"])
	dead := apitest.Obj(t, srv.MustAdmin(t, http.StatusCreated, http.MethodPost, "/api/v1/admin/queues/invoices/jobs",
		map[string]any{"payload": map[string]any{}, "retries": 0})["data"])["jobId"].(string)
	jobState := func() string {
		return apitest.Obj(t, srv.MustAdmin(t, http.StatusOK, http.MethodGet, "/api/v1/admin/queues/invoices/jobs/"+dead, nil)["data"])["state"].(string)
	}
	deadline := time.Now().Add(15 * time.Second)
	for jobState() != "dead" {
		if time.Now().After(deadline) {
			t.Fatalf("the failing job is %s, not dead", jobState())
		}
		time.Sleep(100 * time.Millisecond)
	}
	srv.MustAdmin(t, http.StatusCreated, http.MethodPost, "/api/v1/admin/jobs",
		map[string]any{"name": "yearly", "cron": "0 0 1 1 *", "code": "return 'ran'"})

	p := openDashboard(t, srv.URL)
	p.signIn(apitest.AdminEmail, apitest.AdminPassword)
	p.press("Jobs")
	p.waitFor("the queue's counts", `document.querySelector("#queues tr[data-queue=invoices]") && document.querySelector("#queues tr[data-queue=invoices]").children[4].textContent === "1"`, 10*time.Second)
	p.checkNamed("jobs")

	// The dead job, retried once its worker is fixed.
	srv.MustAdmin(t, http.StatusOK, http.MethodPatch, "/api/v1/admin/workers/"+w["id"].(string), map[string]any{"code": "return payload.amount || 0"})
	p.choose("select[name=queue]", "invoices")
	p.choose("select[name=queue_state]", "dead")
	p.press("Show jobs")
	p.waitFor("the dead job", `document.querySelector("#queue-jobs tr[data-job='`+dead+`']") && document.querySelector("#queue-jobs").textContent.includes("no amount")`, 10*time.Second)
	p.press("Retry " + dead)
	p.waitFor("the retry's answer", `document.getElementById("jobs-status").textContent === "Job `+dead+` queued again."`, 10*time.Second)
	deadline = time.Now().Add(15 * time.Second)
	for jobState() != "succeeded" {
		if time.Now().After(deadline) {
			t.Fatalf("the retried job is %s, not succeeded", jobState())
		}
		time.Sleep(100 * time.Millisecond)
	}
	p.press("Refresh")
	p.waitFor("the succeeded count", `document.querySelector("#queues tr[data-queue=invoices]").children[3].textContent === "1" && document.querySelector("#queues tr[data-queue=invoices]").children[4].textContent === "0"`, 10*time.Second)

	// Run now: the scheduled job fires and its run is listed.
	p.press("Run now yearly")
	p.waitFor("the fired job", `document.getElementById("jobs-status").textContent === "Fired yearly."`, 10*time.Second)
	deadline = time.Now().Add(15 * time.Second)
	for {
		p.press("Runs of yearly")
		if v, _ := p.js(`!!document.querySelector("#job-runs") && document.querySelector("#job-runs tbody").textContent.includes("succeeded") && document.querySelector("#job-runs tbody").textContent.includes("\"ran\"")`); v == true {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no succeeded run shown; page:\n%s", p.text("document.body.innerText"))
		}
		time.Sleep(300 * time.Millisecond)
	}
	p.checkNamed("jobs with runs")
	p.shot("dashboard-jobs")

	// A viewer has no jobs page link.
	srv.MustAdmin(t, http.StatusCreated, http.MethodPost, "/api/v1/admin/admins",
		map[string]any{"email": "viewer@example.com", "password": apitest.AdminPassword, "role": "viewer"})
	p.press("Sign out")
	p.signIn("viewer@example.com", apitest.AdminPassword)
	p.waitFor("the collections list", `document.querySelector("h1") && document.querySelector("h1").textContent === "Collections"`, 10*time.Second)
	if p.hasControl("Jobs") {
		t.Error("a viewer sees the Jobs link")
	}
}
