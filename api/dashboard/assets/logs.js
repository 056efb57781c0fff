// logs.js: the log browser over GET /api/v1/admin/logs (any admin): text,
// day and level filters, every node's lines (node=all, with the members
// that did not answer named), 30 lines a page, newest first; or, with a
// JSONPath query, POST /api/v1/admin/logs/search over the same day. Also the
// pager and filter-form pieces audit.js shares.
import { call } from "./api.js";
import { h, mount, field, alertBox, describeError } from "./ui.js";

const PER_PAGE = 30;

/**
 * pager draws "Previous page", "Page n of m · k items" and "Next page"
 * for a list answer body; go(page) loads another page.
 */
export function pager(el, body, noun, go) {
  const pages = Math.max(1, body.totalPages || 0);
  mount(el,
    h("button", { type: "button", disabled: body.page <= 1, onclick: () => go(body.page - 1) }, "Previous page"),
    h("span", { role: "status" }, "Page " + body.page + " of " + pages + " · " + body.totalItems + " " + noun),
    h("button", { type: "button", disabled: body.page >= pages, onclick: () => go(body.page + 1) }, "Next page"));
}

/**
 * badFields marks the filter controls the server's details name: controls
 * maps a parameter name to its control (one control may serve several).
 */
export function badFields(controls, details) {
  for (const el of Object.values(controls)) el.removeAttribute("aria-invalid");
  for (const [name, el] of Object.entries(controls)) {
    if (details && details[name]) el.setAttribute("aria-invalid", "true");
  }
}

/** summary is a log line in a few words. */
function summary(l) {
  if (l.kind === "request") {
    return l.method + " " + l.path + " → " + l.status + " (" + l.duration_ms + " ms)" +
      (l.principal ? " · " + l.principal.type + " " + l.principal.id : "") + (l.request_id ? " · " + l.request_id : "");
  }
  const extra = Object.entries(l).filter(([k]) => !["time", "level", "msg", "node", "kind"].includes(k))
    .map(([k, v]) => k + "=" + (typeof v === "string" ? v : JSON.stringify(v)));
  return (l.msg || "") + (extra.length ? " · " + extra.join(" ") : "");
}

export async function logsPage() {
  const q = h("input", { type: "search", name: "log_q", autocomplete: "off", spellcheck: "false" });
  const date = h("input", { type: "text", name: "log_date", autocomplete: "off", spellcheck: "false", placeholder: "YYYY-MM-DD", size: "10" });
  const level = h("select", { name: "log_level" },
    h("option", { value: "" }, "any"), ["debug", "info", "warn", "error"].map((l) => h("option", { value: l }, l)));
  const all = h("input", { type: "checkbox", name: "log_all_nodes" });
  const jsonpath = h("input", { type: "text", name: "log_jsonpath", autocomplete: "off", spellcheck: "false", placeholder: "$[?@.status >= 500]" });
  const err = alertBox();
  const nodes = h("p", { class: "status", id: "log-nodes" });
  const table = h("div", { class: "table-wrap" });
  const pages = h("div", { class: "bar" });
  const state = { page: 1 };
  const here = location.pathname;

  const load = async () => {
    err.set("");
    const p = new URLSearchParams({ page: String(state.page), perPage: String(PER_PAGE) });
    if (q.value) p.set("q", q.value);
    if (date.value.trim()) p.set("date", date.value.trim());
    if (level.value) p.set("level", level.value);
    if (all.checked) p.set("node", "all");
    const day = date.value.trim();
    const res = jsonpath.value.trim() ?
      await call("POST", "/api/v1/admin/logs/search" + (all.checked ? "?node=all" : ""),
        { query: jsonpath.value.trim(), page: state.page, limit: PER_PAGE, from: day || undefined, to: day || undefined }) :
      await call("GET", "/api/v1/admin/logs?" + p.toString());
    if (location.pathname !== here) return;
    badFields({ q, date, level, query: jsonpath, from: date }, res.details);
    if (!res.ok) { err.set(describeError(res)); mount(table); mount(pages); nodes.textContent = ""; return; }
    const body = res.data;
    nodes.textContent = body.nodes ? "Nodes: " + body.nodes.join(", ") +
      ((body.failed || []).length ? " · no answer from " + body.failed.map((f) => f.node + " (" + f.error + ")").join(", ") : "") : "";
    const lines = body.data || [];
    mount(table, lines.length === 0 ? h("p", {}, "No lines.") :
      h("table", { id: "logs" }, h("caption", {}, lines.length + " lines on this page, newest first"),
        h("thead", {}, h("tr", {}, ["Time", "Level", "Node", "Kind", "Line"].map((c) => h("th", { scope: "col" }, c)))),
        h("tbody", {}, lines.map((l) => h("tr", { class: "level-" + String(l.level || "").toLowerCase() },
          h("td", {}, l.time ? new Date(l.time).toLocaleString() : ""), h("td", {}, l.level || ""), h("td", {}, l.node || ""),
          h("td", {}, l.kind || ""), h("td", {}, h("code", {}, summary(l))))))));
    pager(pages, body, "lines", (n) => { state.page = n; load(); });
  };
  const form = h("form", { class: "card bar", role: "search", onsubmit: (e) => { e.preventDefault(); state.page = 1; load(); } },
    field("Contains", q), field("Day (UTC)", date, "Empty: today."), field("Level at least", level),
    field("Every node", all),
    field("JSONPath", jsonpath, "Instead of text and level: lines the query selects (POST /admin/logs/search)."),
    h("button", { type: "submit" }, "Show lines"));
  await load();
  return { node: h("section", {}, h("h1", {}, "Logs"), form, err, nodes, table, pages) };
}
