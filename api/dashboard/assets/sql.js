// sql.js: the SQL console (developers and owners): one statement run
// read only on this node or in the admin's own sandbox, with ? parameters
// and a time budget; the answer's columns and rows as a table, with its
// row count, the truncated flag (1000 rows at most), time and node; a
// failed statement shows its errorCode and SQLite's text. Saved queries
// (each admin's own) are listed, loaded, run, saved and deleted.
import { call, can } from "./api.js";
import { h, mount, field, alertBox, describeError, confirmButton } from "./ui.js";

export async function sqlPage() {
  if (!can("developer")) return { node: h("section", {}, h("h1", {}, "SQL console"), h("p", {}, "Your role cannot use the SQL console.")) };
  const sql = h("textarea", { name: "sql", rows: "5", spellcheck: "false", autocomplete: "off" });
  const mode = h("select", { name: "sql_mode" },
    h("option", { value: "readonly" }, "read only (this node)"), h("option", { value: "sandbox" }, "sandbox (your copy)"));
  const params = h("input", { type: "text", name: "sql_params", autocomplete: "off", spellcheck: "false", placeholder: "[\"hello\", 5]" });
  const timeout = h("input", { type: "number", name: "sql_timeout", min: "100", max: "30000", value: "5000" });
  const err = alertBox();
  err.id = "sql-error";
  const status = h("p", { role: "status", class: "status", id: "sql-status" });
  const result = h("div", { class: "table-wrap" });
  const saved = h("div", {});

  const readParams = () => {
    const t = params.value.trim();
    if (!t) return [];
    const v = JSON.parse(t);
    if (!Array.isArray(v)) throw new Error("Parameters must be a JSON array, e.g. [\"hello\", 5]");
    return v;
  };
  const show = (res) => {
    mount(result); status.textContent = "";
    if (!res.ok) { err.set(describeError(res)); return; }
    const d = res.data;
    if (!d.ok) { err.set(d.errorCode + ": " + d.error); return; }
    err.set("");
    status.textContent = d.rowCount + " rows" + (d.truncated ? " (truncated: the first 1000 only)" : "") +
      " · " + d.mode + " · " + d.durationMs + " ms · node " + d.node;
    if (!d.columns || d.columns.length === 0) return;
    mount(result, h("table", { id: "sql-result" }, h("caption", {}, "Result"),
      h("thead", {}, h("tr", {}, d.columns.map((c) => h("th", { scope: "col" }, c)))),
      h("tbody", {}, (d.rows || []).map((r) => h("tr", {}, r.map((v) => h("td", {},
        v === null ? "NULL" : typeof v === "object" ? JSON.stringify(v) : String(v))))))));
  };
  const run = async () => {
    err.set("");
    let p;
    try { p = readParams(); } catch (e) { err.set(e.message); params.focus(); return; }
    status.textContent = "Running…";
    show(await call("POST", "/api/v1/admin/sql/run", { sql: sql.value, mode: mode.value, params: p, timeoutMs: Number(timeout.value) || 5000 }));
  };

  const loadSaved = async () => {
    const res = await call("GET", "/api/v1/admin/sql/queries");
    if (!res.ok) { mount(saved, h("p", { class: "error", role: "alert" }, describeError(res))); return; }
    const list = res.data || [];
    if (list.length === 0) { mount(saved, h("p", {}, "No saved queries.")); return; }
    mount(saved, h("table", { id: "sql-saved" }, h("caption", {}, list.length + " saved queries"),
      h("thead", {}, h("tr", {}, ["Name", "Mode", "SQL", "Actions"].map((c) => h("th", { scope: "col" }, c)))),
      h("tbody", {}, list.map((q) => h("tr", {}, h("td", {}, q.name), h("td", {}, q.mode), h("td", {}, h("code", {}, q.sql)),
        h("td", {},
          h("button", { type: "button", onclick: () => {
            sql.value = q.sql; mode.value = q.mode || "readonly";
            params.value = q.params && q.params.length ? JSON.stringify(q.params) : ""; sql.focus();
          } }, "Load " + q.name), " ",
          h("button", { type: "button", onclick: async () => {
            status.textContent = "Running…";
            show(await call("POST", "/api/v1/admin/sql/queries/" + encodeURIComponent(q.id) + "/run", {}));
          } }, "Run " + q.name), " ",
          confirmButton("Delete " + q.name, "Confirm delete", async () => {
            const r = await call("DELETE", "/api/v1/admin/sql/queries/" + encodeURIComponent(q.id));
            if (!r.ok) err.set(describeError(r));
            await loadSaved();
          })))))));
  };

  const saveName = h("input", { type: "text", name: "sql_save_name", autocomplete: "off" });
  const save = async () => {
    err.set("");
    let p;
    try { p = readParams(); } catch (e) { err.set(e.message); return; }
    const res = await call("POST", "/api/v1/admin/sql/queries", { name: saveName.value.trim(), sql: sql.value, mode: mode.value, params: p });
    if (!res.ok) { err.set(describeError(res)); return; }
    saveName.value = "";
    status.textContent = "Saved " + res.data.name + ".";
    await loadSaved();
  };
  const reset = confirmButton("Reset sandbox", "Confirm reset", async () => {
    const res = await call("POST", "/api/v1/admin/sql/sandbox/reset");
    if (!res.ok) { err.set(describeError(res)); return; }
    err.set(""); status.textContent = "Sandbox rebuilt on node " + res.data.node + " (" + res.data.size + " bytes).";
  });

  await loadSaved();
  return { node: h("section", {},
    h("h1", {}, "SQL console"),
    h("p", { class: "hint" }, "One statement. Read only runs on this node's replica; the sandbox is your own copy of the database on this node (writes allowed, nothing else changes). Internal tables and secrets are refused."),
    h("form", { class: "card", onsubmit: (e) => { e.preventDefault(); run(); } },
      field("SQL", sql), field("Mode", mode),
      field("Parameters (JSON array for the ? placeholders)", params), field("Time budget (ms)", timeout),
      h("div", { class: "bar" }, h("button", { type: "submit" }, "Run"), reset)),
    err, status, result,
    h("h2", {}, "Saved queries"),
    h("div", { class: "bar" }, field("Save as", saveName), h("button", { type: "button", onclick: save }, "Save query")),
    saved) };
}
