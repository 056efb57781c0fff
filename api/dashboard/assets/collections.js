// collections.js: the list of collections and the form that creates one
// (fields of the common types, the five rules, the history switch). A
// rule the server's parser refuses comes back as a 422 whose details name
// the rule and the offset; the message is shown under that rule.
import { call, can } from "./api.js";
import { h, field, alertBox, describeError, uid } from "./ui.js";
import { go } from "./nav.js";

export const RULES = ["view_rule", "create_rule", "update_rule", "delete_rule"];
const TYPES = ["text", "editor", "number", "bool", "email", "url", "date", "select", "json", "relation"];

export async function collectionsPage() {
  const res = await call("GET", "/api/v1/admin/collections");
  if (!res.ok) return { node: h("section", {}, h("h1", {}, "Collections"), h("p", { class: "error", role: "alert" }, describeError(res))) };
  const list = Array.isArray(res.data) ? res.data : (res.data.data || []);
  const rows = list.map((c) => h("tr", {},
    h("td", {}, h("a", { href: "/_/collections/" + encodeURIComponent(c.name) }, c.name)),
    h("td", {}, c.type || "base"),
    h("td", {}, String((c.fields || []).length)),
    h("td", {}, c.history_enabled ? "on" : "off")));
  return { node: h("section", {},
    h("div", { class: "bar" }, h("h1", {}, "Collections"),
      can("developer") ? h("a", { class: "button", href: "/_/collections/new" }, "New collection") : null),
    list.length === 0 ? h("p", {}, "No collections yet.") :
      h("table", {}, h("caption", {}, list.length + " collections"),
        h("thead", {}, h("tr", {}, h("th", { scope: "col" }, "Name"), h("th", { scope: "col" }, "Type"),
          h("th", { scope: "col" }, "Fields"), h("th", { scope: "col" }, "History"))),
        h("tbody", {}, rows))) };
}

/** ruleEditor is one rule: who may (admins only, anyone, an expression). */
export function ruleEditor(name, value) {
  const mode = h("select", { name: name + "_mode" },
    h("option", { value: "admins" }, "Admins only"),
    h("option", { value: "anyone" }, "Anyone"),
    h("option", { value: "expr" }, "Expression"));
  const expr = h("input", { type: "text", name, class: "rule", spellcheck: "false", autocomplete: "off" });
  const err = h("p", { class: "error rule-error", id: uid("err-" + name), role: "alert" });
  expr.setAttribute("aria-describedby", err.id);
  mode.value = value === null || value === undefined ? "admins" : value === "" ? "anyone" : "expr";
  expr.value = typeof value === "string" ? value : "";
  const sync = () => { expr.disabled = mode.value !== "expr"; };
  mode.addEventListener("change", () => { sync(); if (!expr.disabled) expr.focus(); });
  sync();
  const label = name.replace("_", " ");
  const modeId = uid("mode"), exprId = uid("expr");
  mode.id = modeId; expr.id = exprId;
  const node = h("fieldset", { class: "rule-box" }, h("legend", {}, label),
    h("label", { for: modeId }, label + " access"), mode,
    h("label", { for: exprId }, label + " expression"), expr, err);
  return {
    node, err,
    value: () => mode.value === "admins" ? null : mode.value === "anyone" ? "" : expr.value,
    setError: (msg) => { err.textContent = msg || ""; expr.setAttribute("aria-invalid", msg ? "true" : "false"); },
  };
}

/** fieldRow is one field of a new collection: name, type, required, options. */
function fieldRow(list) {
  const n = list.children.length + 1;
  const name = h("input", { type: "text", name: "field_name", required: true, autocomplete: "off" });
  const type = h("select", { name: "field_type" }, TYPES.map((t) => h("option", { value: t }, t)));
  const required = h("input", { type: "checkbox", name: "field_required" });
  const extra = h("input", { type: "text", name: "field_extra", autocomplete: "off" });
  const extraLabel = h("label", {}, "Options");
  const err = h("p", { class: "error", role: "alert" });
  const syncExtra = () => {
    const t = type.value;
    extra.disabled = !(t === "select" || t === "relation");
    extraLabel.textContent = t === "select" ? "Values (comma-separated)" : t === "relation" ? "Related collection" : "Options (none for this type)";
  };
  type.addEventListener("change", syncExtra);
  syncExtra();
  const row = h("fieldset", { class: "field-row" }, h("legend", {}, "Field " + n));
  const remove = h("button", { type: "button", "aria-label": "Remove field " + n, onclick: () => { row.remove(); } }, "Remove");
  row.append(field("Name", name), field("Type", type), field("Required", required), extraLabel, extra, remove, err);
  extraLabel.htmlFor = extra.id = uid("extra");
  row.spec = () => {
    const f = { name: name.value.trim(), type: type.value, required: required.checked };
    if (type.value === "select") f.values = extra.value.split(",").map((v) => v.trim()).filter(Boolean);
    if (type.value === "relation") f.collection = extra.value.trim();
    return f;
  };
  row.setError = (msg) => { err.textContent = msg || ""; };
  return row;
}

export async function newCollectionPage() {
  if (!can("developer")) return { node: h("section", {}, h("h1", {}, "New collection"), h("p", {}, "Your role cannot create collections.")) };
  const name = h("input", { type: "text", name: "name", required: true, autocomplete: "off" });
  const type = h("select", { name: "type" }, h("option", { value: "base" }, "base"), h("option", { value: "auth" }, "auth"), h("option", { value: "view" }, "view"));
  const query = h("textarea", { name: "view_query", rows: "4", spellcheck: "false", autocomplete: "off" });
  const queryErr = h("p", { class: "error", role: "alert", id: uid("err-view_query") });
  query.setAttribute("aria-describedby", queryErr.id);
  const queryBox = h("div", {}, field("View query (one SELECT returning an id column)", query), queryErr);
  const fieldsBox = h("div", {});
  // A view has no field list: its rows are hidden and disabled (a hidden
  // required name would block the form's submit).
  const syncType = () => {
    const v = type.value === "view";
    queryBox.hidden = !v; fieldsBox.hidden = v;
    fieldsBox.querySelectorAll("input, select, button").forEach((e) => { e.disabled = v; });
    if (!v) fieldsBox.querySelectorAll("select[name=field_type]").forEach((e) => e.dispatchEvent(new Event("change")));
  };
  type.addEventListener("change", syncType);
  const hist = h("input", { type: "checkbox", name: "history_enabled" });
  const fields = h("div", { class: "fields" });
  const addField = () => { const r = fieldRow(fields); fields.append(r); r.querySelector("input").focus(); };
  const rules = RULES.map((r) => ruleEditor(r, null));
  const err = alertBox();
  const form = h("form", { class: "card", onsubmit: async (e) => {
    e.preventDefault();
    err.set("");
    rules.forEach((r) => r.setError(""));
    queryErr.textContent = "";
    const body = { name: name.value.trim(), type: type.value, history_enabled: hist.checked,
      fields: [...fields.children].map((r) => r.spec()) };
    RULES.forEach((r, i) => { body[r] = rules[i].value(); });
    if (type.value === "view") { body.view_query = query.value; delete body.fields; }
    const res = await call("POST", "/api/v1/admin/collections", body);
    if (res.ok) { go("/_/collections/" + encodeURIComponent(body.name)); return; }
    const rest = {};
    for (const [k, v] of Object.entries(res.details || {})) {
      const i = RULES.indexOf(k);
      if (i >= 0) rules[i].setError(String(v));
      else if (k === "view_query") queryErr.textContent = String(v);
      else rest[k] = v;
    }
    err.set(res.status + " " + res.error + (Object.keys(rest).length ? " — " + Object.entries(rest).map(([k, v]) => k + ": " + (typeof v === "string" ? v : JSON.stringify(v))).join("; ") : ""));
  } },
    h("h1", {}, "New collection"),
    field("Name", name), field("Type", type), field("Keep record history", hist),
    queryBox,
    h("div", {}, fieldsBox),
    h("h2", {}, "Rules"),
    h("p", { class: "hint" }, "Rules are filter expressions (the view rule also governs the list), e.g. @request.auth.id != \"\". The server checks them; its message and offset appear under the rule."),
    rules.map((r) => r.node),
    err,
    h("div", { class: "bar" }, h("button", { type: "submit" }, "Create collection"), h("a", { href: "/_/" }, "Cancel")));
  fields.append(fieldRow(fields));
  fieldsBox.append(h("h2", {}, "Fields"), fields, h("button", { type: "button", onclick: addField }, "Add field"));
  syncType();
  return { node: form };
}

/**
 * rulesForm edits an existing collection's rules and history switch
 * (PATCH); a refused rule shows the server's message under it, as on
 * creation.
 */
export function rulesForm(coll, onSaved) {
  const rules = RULES.map((r) => ruleEditor(r, coll[r]));
  const hist = h("input", { type: "checkbox", name: "edit_history_enabled", checked: !!coll.history_enabled });
  const err = alertBox();
  const saved = h("p", { role: "status", class: "status" });
  return h("form", { class: "card", "aria-labelledby": "rules-h", onsubmit: async (e) => {
    e.preventDefault();
    err.set(""); saved.textContent = "";
    rules.forEach((r) => r.setError(""));
    const body = { history_enabled: hist.checked };
    RULES.forEach((r, i) => { body[r] = rules[i].value(); });
    const res = await call("PATCH", "/api/v1/admin/collections/" + encodeURIComponent(coll.name), body);
    if (res.ok) { saved.textContent = "Rules saved."; if (onSaved) onSaved(res.data); return; }
    const rest = {};
    for (const [k, v] of Object.entries(res.details || {})) {
      const i = RULES.indexOf(k);
      if (i >= 0) rules[i].setError(String(v));
      else rest[k] = v;
    }
    err.set(describeError({ ...res, details: rest }));
  } },
    h("h2", { id: "rules-h" }, "Rules of " + coll.name),
    rules.map((r) => r.node), field("Keep record history", hist),
    err, saved, h("button", { type: "submit" }, "Save rules"));
}
