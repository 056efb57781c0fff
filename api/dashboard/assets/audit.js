// audit.js: the audit log browser over GET /api/v1/admin/audit-log (any
// admin): every admin write, refused and failed ones included, newest
// first, 30 a page; filters by admin id, action prefix and a time window
// (local "YYYY-MM-DD HH:MM" here, unix seconds to the server).
import { call } from "./api.js";
import { h, mount, field, alertBox, describeError, when } from "./ui.js";
import { pager, badFields } from "./logs.js";

const PER_PAGE = 30;

/**
 * unix turns a local "YYYY-MM-DD HH:MM[:SS]" (or a day) into unix seconds;
 * what it cannot read goes as typed, for the server to refuse by name.
 */
function unix(v) {
  const m = v.trim().match(/^(\d{4})-(\d{2})-(\d{2})(?:[ T](\d{2}):(\d{2})(?::(\d{2}))?)?$/);
  if (!m) return v.trim();
  const d = new Date(+m[1], +m[2] - 1, +m[3], +(m[4] || 0), +(m[5] || 0), +(m[6] || 0));
  return Number.isNaN(d.getTime()) ? v.trim() : String(Math.floor(d.getTime() / 1000));
}

export async function auditPage() {
  const actorId = h("input", { type: "text", name: "audit_actor", autocomplete: "off", spellcheck: "false", placeholder: "adm_..." });
  const actionPrefix = h("input", { type: "text", name: "audit_action", autocomplete: "off", spellcheck: "false", placeholder: "collections." });
  const from = h("input", { type: "text", name: "audit_from", autocomplete: "off", spellcheck: "false", placeholder: "YYYY-MM-DD HH:MM" });
  const to = h("input", { type: "text", name: "audit_to", autocomplete: "off", spellcheck: "false", placeholder: "YYYY-MM-DD HH:MM" });
  const err = alertBox();
  const table = h("div", { class: "table-wrap" });
  const pages = h("div", { class: "bar" });
  const state = { page: 1 };
  const here = location.pathname;

  const load = async () => {
    err.set("");
    const p = new URLSearchParams({ page: String(state.page), perPage: String(PER_PAGE) });
    if (actorId.value.trim()) p.set("actorId", actorId.value.trim());
    if (actionPrefix.value) p.set("actionPrefix", actionPrefix.value);
    if (from.value.trim()) p.set("from", unix(from.value));
    if (to.value.trim()) p.set("to", unix(to.value));
    const res = await call("GET", "/api/v1/admin/audit-log?" + p.toString());
    if (location.pathname !== here) return;
    badFields({ actorId, actionPrefix, from, to }, res.details);
    if (!res.ok) { err.set(describeError(res)); mount(table); mount(pages); return; }
    const body = res.data;
    const rows = body.data || [];
    mount(table, rows.length === 0 ? h("p", {}, "No entries.") :
      h("table", { id: "audit" }, h("caption", {}, rows.length + " entries on this page, newest first"),
        h("thead", {}, h("tr", {}, ["Time", "Admin", "Action", "Target", "Request", "Status", "Address"].map((c) => h("th", { scope: "col" }, c)))),
        h("tbody", {}, rows.map((a) => h("tr", { "data-entry": a.id },
          h("td", {}, when(a.at)), h("td", {}, a.actor_email || "", a.actor_email ? " " : "", h("code", {}, a.actor_id)),
          h("td", {}, a.action), h("td", {}, a.target || ""), h("td", {}, h("code", {}, a.method + " " + a.path)),
          h("td", {}, String(a.status)), h("td", {}, a.ip || ""))))));
    pager(pages, body, "entries", (n) => { state.page = n; load(); });
  };
  const form = h("form", { class: "card bar", role: "search", onsubmit: (e) => { e.preventDefault(); state.page = 1; load(); } },
    field("Admin id", actorId), field("Action starts with", actionPrefix), field("From (local time)", from), field("To (local time)", to),
    h("button", { type: "submit" }, "Show entries"));
  await load();
  return { node: h("section", {}, h("h1", {}, "Audit log"), form, err, table, pages) };
}
