// jobs.js: jobs and queues (developers and owners): every queue's jobs
// counted by state with its worker; one queue's jobs by state, a dead
// job put back in its queue (Retry); the scheduled jobs with their
// schedule and last and next runs, fired now on demand (Run now) and
// their latest runs shown. The code itself is edited through the API
// (docs/jobs.md); this page watches and nudges.
import { call, can } from "./api.js";
import { h, mount, field, alertBox, describeError, when } from "./ui.js";

const STATES = ["queued", "running", "succeeded", "dead"];

export async function jobsPage() {
  if (!can("developer")) return { node: h("section", {}, h("h1", {}, "Jobs and queues"), h("p", {}, "Your role cannot see jobs and queues.")) };
  const err = alertBox();
  const status = h("p", { role: "status", class: "status", id: "jobs-status" });
  const queues = h("div", {});
  const queueSel = h("select", { name: "queue" });
  const stateSel = h("select", { name: "queue_state" }, h("option", { value: "" }, "any state"), STATES.map((s) => h("option", { value: s }, s)));
  const queueJobs = h("div", {});
  const jobs = h("div", {});
  const runs = h("div", {});

  const loadQueues = async () => {
    const res = await call("GET", "/api/v1/admin/queues");
    if (!res.ok) { err.set(describeError(res)); return; }
    const list = res.data || [];
    const chosen = queueSel.value;
    mount(queueSel, list.map((q) => h("option", { value: q.queue }, q.queue)));
    if (chosen && list.some((q) => q.queue === chosen)) queueSel.value = chosen;
    if (list.length === 0) { mount(queues, h("p", {}, "No queues yet.")); return; }
    mount(queues, h("table", { id: "queues" }, h("caption", {}, list.length + " queues"),
      h("thead", {}, h("tr", {}, ["Queue", ...STATES, "Worker"].map((c) => h("th", { scope: "col" }, c)))),
      h("tbody", {}, list.map((q) => h("tr", { "data-queue": q.queue }, h("td", {}, q.queue),
        STATES.map((s) => h("td", {}, String((q.counts || {})[s] || 0))),
        h("td", {}, q.builtin ? "built in" : q.worker || "none"))))));
  };

  const loadQueueJobs = async () => {
    const q = queueSel.value;
    if (!q) { mount(queueJobs); return; }
    const params = new URLSearchParams({ perPage: "30" });
    if (stateSel.value) params.set("state", stateSel.value);
    const res = await call("GET", "/api/v1/admin/queues/" + encodeURIComponent(q) + "/jobs?" + params.toString());
    if (!res.ok) { err.set(describeError(res)); return; }
    const list = (res.data && res.data.data) || [];
    if (list.length === 0) { mount(queueJobs, h("p", {}, "No jobs in " + q + (stateSel.value ? " that are " + stateSel.value : "") + ".")); return; }
    mount(queueJobs, h("table", { id: "queue-jobs" }, h("caption", {}, "Jobs of " + q),
      h("thead", {}, h("tr", {}, ["Job", "State", "Attempt", "Last error", "Updated", "Action"].map((c) => h("th", { scope: "col" }, c)))),
      h("tbody", {}, list.map((j) => h("tr", { "data-job": j.id }, h("td", {}, j.id), h("td", {}, j.state),
        h("td", {}, String(j.attempt)), h("td", {}, j.lastError || ""), h("td", {}, when(j.updated)),
        h("td", {}, j.state === "dead" ? h("button", { type: "button", onclick: async () => {
          const r = await call("POST", "/api/v1/admin/queues/" + encodeURIComponent(q) + "/jobs/" + encodeURIComponent(j.id) + "/retry");
          if (!r.ok) { err.set(describeError(r)); return; }
          err.set(""); status.textContent = "Job " + j.id + " queued again.";
          await refresh();
        } }, "Retry " + j.id) : ""))))));
  };

  const showRuns = async (j) => {
    const res = await call("GET", "/api/v1/admin/jobs/" + encodeURIComponent(j.id) + "/runs?perPage=5");
    if (!res.ok) { err.set(describeError(res)); return; }
    const list = (res.data && res.data.data) || [];
    mount(runs, h("table", { id: "job-runs" }, h("caption", {}, "Latest runs of " + j.name),
      h("thead", {}, h("tr", {}, ["Scheduled", "Manual", "State", "Node", "Result or error"].map((c) => h("th", { scope: "col" }, c)))),
      h("tbody", {}, list.map((r) => h("tr", {}, h("td", {}, when(r.scheduled_at)), h("td", {}, r.manual ? "yes" : "no"),
        h("td", {}, r.state), h("td", {}, r.node || ""),
        h("td", {}, r.error || (r.result === null || r.result === undefined ? "" : JSON.stringify(r.result))))))));
  };

  const loadJobs = async () => {
    const res = await call("GET", "/api/v1/admin/jobs");
    if (!res.ok) { err.set(describeError(res)); return; }
    const list = Array.isArray(res.data) ? res.data : (res.data && res.data.data) || [];
    if (list.length === 0) { mount(jobs, h("p", {}, "No scheduled jobs.")); return; }
    mount(jobs, h("table", { id: "jobs" }, h("caption", {}, list.length + " scheduled jobs"),
      h("thead", {}, h("tr", {}, ["Name", "Schedule", "Mode", "Enabled", "Last run", "Next run", "Actions"].map((c) => h("th", { scope: "col" }, c)))),
      h("tbody", {}, list.map((j) => h("tr", { "data-job": j.id }, h("td", {}, j.name),
        h("td", {}, j.cron || (j.run_at ? "once at " + when(j.run_at) : "")), h("td", {}, j.mode),
        h("td", {}, j.enabled ? "yes" : "no"), h("td", {}, when(j.last_run_at)), h("td", {}, when(j.next_run_at)),
        h("td", {},
          h("button", { type: "button", onclick: async () => {
            const r = await call("POST", "/api/v1/admin/jobs/" + encodeURIComponent(j.id) + "/run");
            if (!r.ok) { err.set(describeError(r)); return; }
            err.set(""); status.textContent = "Fired " + j.name + ".";
            await showRuns(j);
          } }, "Run now " + j.name), " ",
          h("button", { type: "button", onclick: () => showRuns(j) }, "Runs of " + j.name)))))));
  };

  const refresh = async () => { await loadQueues(); await loadQueueJobs(); await loadJobs(); };
  await refresh();
  return { node: h("section", {},
    h("h1", {}, "Jobs and queues"),
    h("p", { class: "hint" }, "Workers and jobs are written through the API (jobs.md); here you watch them, retry dead jobs and fire jobs now."),
    err, status,
    h("div", { class: "bar" }, h("h2", {}, "Queues"), h("button", { type: "button", onclick: () => refresh() }, "Refresh")),
    queues,
    h("form", { class: "bar", onsubmit: (e) => { e.preventDefault(); loadQueueJobs(); } },
      field("Queue", queueSel), field("State", stateSel), h("button", { type: "submit" }, "Show jobs")),
    queueJobs,
    h("h2", {}, "Scheduled jobs"), jobs, runs) };
}
