// webhooks.js: webhooks (developer and above, reads included, as the
// server decides). /_/webhooks lists them with enable/disable, a test
// delivery and delete, and creates one (its signing secret is shown this
// once, as the create answer is the only one that carries it);
// /_/webhooks/ID shows one webhook and its deliveries with their status.
// The API has no redeliver: a dead delivery stays dead, so there is no
// button for it.
import { call, can } from "./api.js";
import { h, mount, field, alertBox, describeError, when, confirmButton } from "./ui.js";
import { go } from "./nav.js";

const list = (res) => Array.isArray(res.data) ? res.data : ((res.data && res.data.data) || []);
const hookURL = (id) => "/api/v1/admin/webhooks/" + encodeURIComponent(id);

/** deliveryText is a delivery's outcome in a few words. */
function deliveryText(d) {
  return d.status + " · attempt " + d.attempt + (d.response_status ? " · HTTP " + d.response_status : "") + (d.error ? " · " + d.error : "");
}

export async function webhooksPage() {
  const res = await call("GET", "/api/v1/admin/webhooks");
  if (!res.ok) return { node: h("section", {}, h("h1", {}, "Webhooks"), h("p", { class: "error", role: "alert" }, describeError(res))) };
  const hooks = list(res);
  const write = can("developer");
  const err = alertBox();
  const outcome = h("div", { "aria-live": "polite", id: "webhook-outcome" });
  const rows = hooks.map((w) => h("tr", { "data-webhook": w.id },
    h("td", {}, h("a", { href: "/_/webhooks/" + encodeURIComponent(w.id) }, w.url)),
    h("td", {}, (w.events || []).join(", ")),
    h("td", {}, w.enabled ? "enabled" : "disabled"),
    h("td", {}, when(w.created)),
    h("td", {}, write ? [
      h("button", { type: "button", onclick: async () => {
        err.set("");
        const r = await call("PATCH", hookURL(w.id), { enabled: !w.enabled });
        if (!r.ok) { err.set(describeError(r)); return; }
        go("/_/webhooks");
      } }, (w.enabled ? "Disable " : "Enable ") + w.url), " ",
      h("button", { type: "button", onclick: async (e) => {
        err.set("");
        e.target.disabled = true;
        mount(outcome, h("p", { class: "status" }, "Sending a test delivery to " + w.url + "…"));
        const r = await call("POST", hookURL(w.id) + "/test");
        e.target.disabled = false;
        if (!r.ok) { mount(outcome); err.set(describeError(r)); return; }
        mount(outcome, h("p", { class: "status", id: "test-outcome" }, "Test delivery to " + w.url + ": " + deliveryText(r.data)));
      } }, "Send test to " + w.url), " ",
      confirmButton("Delete " + w.url, "Confirm delete", async () => {
        err.set("");
        const r = await call("DELETE", hookURL(w.id));
        if (!r.ok) { err.set(describeError(r)); return; }
        go("/_/webhooks");
      }),
    ] : null)));

  return { node: h("section", {}, h("h1", {}, "Webhooks"), err, outcome,
    hooks.length === 0 ? h("p", {}, "No webhooks.") :
      h("table", { id: "webhooks" }, h("caption", {}, hooks.length + " webhooks"),
        h("thead", {}, h("tr", {}, ["URL", "Events", "State", "Created", "Actions"].map((c) => h("th", { scope: "col" }, c)))),
        h("tbody", {}, rows)),
    write ? createForm() : null) };
}

/** createForm adds a webhook; the answer's secret is shown this once. */
function createForm() {
  const url = h("input", { type: "url", name: "webhook_url", required: true, autocomplete: "off", spellcheck: "false" });
  const events = h("input", { type: "text", name: "webhook_events", autocomplete: "off", spellcheck: "false", placeholder: "orders.*, users.create" });
  const secret = h("input", { type: "password", name: "webhook_secret", autocomplete: "new-password" });
  const retries = h("input", { type: "number", name: "webhook_retry_max", min: "1", max: "25", value: "3" });
  const err = alertBox();
  const made = h("div", { "aria-live": "polite" });
  const form = h("form", { class: "card", onsubmit: async (e) => {
    e.preventDefault();
    err.set("");
    const body = { url: url.value.trim(), events: events.value.split(",").map((s) => s.trim()).filter(Boolean), retry_max: Number(retries.value) };
    if (secret.value) body.secret = secret.value;
    const r = await call("POST", "/api/v1/admin/webhooks", body);
    if (!r.ok) { err.set(describeError(r)); return; }
    const out = h("input", { type: "text", id: "webhook-secret", readonly: true, value: r.data.secret });
    mount(made, h("div", { class: "card notice" },
      h("h2", {}, "Webhook created"),
      field("Signing secret (shown this once: copy it to the receiver)", out),
      h("a", { href: "/_/webhooks" }, "Done")));
    form.replaceWith(made);
    out.focus(); out.select();
  } },
    h("h2", {}, "New webhook"),
    field("URL", url), field("Events (comma-separated)", events, "<collection>.create, .update, .delete, <collection>.* or *"),
    field("Signing secret", secret, "Empty: 32 random bytes, shown once after creating."),
    field("Attempts", retries), err, h("button", { type: "submit" }, "Create webhook"));
  return form;
}

export async function webhookPage(id) {
  const res = await call("GET", hookURL(id));
  if (!res.ok) return { node: h("section", {}, h("h1", {}, "Webhook"), h("p", { class: "error", role: "alert" }, describeError(res))) };
  const w = res.data;
  const table = h("div", { class: "table-wrap" });
  const err = alertBox();
  const load = async () => {
    err.set("");
    const r = await call("GET", hookURL(id) + "/deliveries?limit=100");
    if (!r.ok) { err.set(describeError(r)); return; }
    const ds = list(r);
    mount(table, ds.length === 0 ? h("p", {}, "No deliveries.") :
      h("table", { id: "deliveries" }, h("caption", {}, ds.length + " deliveries, newest first"),
        h("thead", {}, h("tr", {}, ["Queued", "Event", "Status", "Attempts", "HTTP", "Error", "Took", "Next attempt"].map((c) => h("th", { scope: "col" }, c)))),
        h("tbody", {}, ds.map((d) => h("tr", { "data-delivery": d.id, "data-status": d.status },
          h("td", {}, when(d.created)), h("td", {}, d.event), h("td", {}, h("span", { class: "delivery-" + d.status }, d.status)),
          h("td", {}, String(d.attempt)), h("td", {}, d.response_status == null ? "" : String(d.response_status)),
          h("td", {}, d.error || ""), h("td", {}, d.duration_ms == null ? "" : d.duration_ms + " ms"),
          h("td", {}, d.next_attempt_at ? when(d.next_attempt_at) : ""))))));
  };
  await load();
  return { node: h("section", {}, h("h1", {}, "Webhook " + w.url),
    h("p", {}, h("a", { href: "/_/webhooks" }, "All webhooks")),
    h("dl", { class: "facts" },
      h("dt", {}, "Events"), h("dd", {}, (w.events || []).join(", ") || "none"),
      h("dt", {}, "State"), h("dd", {}, w.enabled ? "enabled" : "disabled"),
      h("dt", {}, "Retries"), h("dd", {}, w.retry_max + " attempts, " + w.retry_backoff + " from " + w.retry_delay_ms + " ms"),
      h("dt", {}, "Timeout"), h("dd", {}, w.timeout_ms + " ms")),
    h("div", { class: "bar" }, h("h2", {}, "Deliveries"), h("button", { type: "button", onclick: load }, "Refresh deliveries")),
    h("p", { class: "hint" }, "Kept for webhooks.retention_days once succeeded or dead. A dead delivery is not sent again (the API has no redeliver)."),
    err, table) };
}
