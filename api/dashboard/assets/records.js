// records.js: a collection's records (a paged table over the list API,
// a filter box in the filter language, sorting by column) and one
// record's editor with its history and restore.
import { call, can } from "./api.js";
import { h, mount, field, alertBox, describeError, when, confirmButton } from "./ui.js";
import { go } from "./nav.js";
import { rulesForm } from "./collections.js";
import { fieldsForm, indexesForm, deleteForm, viewQueryForm } from "./schema.js";
import { csvTools } from "./csv.js";
import { fileUploads } from "./upload.js";

const PER_PAGE = 20;

async function collection(name) {
  const res = await call("GET", "/api/v1/admin/collections/" + encodeURIComponent(name));
  return res;
}

function shown(fields) {
  return (fields || []).filter((f) => f.type !== "password" && !f.system).map((f) => f.name);
}

function cell(v) {
  if (v === null || v === undefined) return "";
  if (typeof v === "object") return JSON.stringify(v);
  return String(v);
}

export async function recordsPage(name) {
  const cres = await collection(name);
  if (!cres.ok) return { node: h("section", {}, h("h1", {}, name), h("p", { class: "error", role: "alert" }, describeError(cres))) };
  const coll = cres.data;
  const cols = ["id", ...shown(coll.fields).filter((n) => n !== "id"), "updated"];
  const params = new URLSearchParams(location.search);
  const state = { page: Number(params.get("page")) || 1, sort: params.get("sort") || "-updated", filter: params.get("filter") || "" };
  const filter = h("input", { type: "search", name: "filter", value: state.filter, spellcheck: "false", autocomplete: "off" });
  const filterErr = alertBox();
  filterErr.id = "filter-error";
  filter.setAttribute("aria-describedby", "filter-error");
  const table = h("div", { class: "table-wrap" });
  const pager = h("nav", { class: "bar", "aria-label": "Pages" });
  const status = h("p", { role: "status", class: "status" });
  // Selected rows (editors): deleted together in one batch request.
  const writable = can("editor") && coll.type !== "view";
  const selected = new Set();
  const bulk = h("div", { class: "bar", id: "bulk" });
  const bulkErr = alertBox();
  const drawBulk = () => {
    if (!writable || selected.size === 0) { mount(bulk); return; }
    mount(bulk, h("span", {}, selected.size + " selected "),
      confirmButton("Delete selected", "Confirm delete " + selected.size + " records", async () => {
        bulkErr.set("");
        const ids = [...selected];
        const res = await call("POST", "/api/v1/batch", { requests: ids.map((id) =>
          ({ method: "DELETE", url: "/api/v1/" + encodeURIComponent(name) + "/" + encodeURIComponent(id) })) });
        if (!res.ok) { bulkErr.set(describeError(res)); return; }
        selected.clear();
        await load();
        status.textContent = ids.length + " records deleted. " + status.textContent;
      }));
  };

  const here = location.pathname;
  const load = async () => {
    if (location.pathname !== here) return; // the admin has moved on
    const q = new URLSearchParams({ page: String(state.page), perPage: String(PER_PAGE), sort: state.sort });
    if (state.filter) q.set("filter", state.filter);
    history.replaceState(null, "", location.pathname + "?" + q.toString());
    const res = await call("GET", "/api/v1/" + encodeURIComponent(name) + "?" + q.toString());
    if (location.pathname !== here) return;
    if (!res.ok) { filterErr.set(describeError(res)); return; }
    const fe = res.headers.get("X-Svc-Filter-Error");
    filterErr.set(fe ? "Filter not applied: " + fe : "");
    filter.setAttribute("aria-invalid", fe ? "true" : "false");
    const body = res.body;
    selected.clear();
    drawBulk();
    const pick = (r) => h("td", {}, h("input", { type: "checkbox", name: "select_record", value: r.id, "aria-label": "Select " + r.id,
      onchange: (e) => { if (e.target.checked) selected.add(r.id); else selected.delete(r.id); drawBulk(); } }));
    const head = cols.map((c) => {
      const dir = state.sort === c ? "ascending" : state.sort === "-" + c ? "descending" : null;
      return h("th", { scope: "col", "aria-sort": dir || "none" },
        h("button", { type: "button", class: "sort", onclick: () => {
          state.sort = state.sort === c ? "-" + c : c;
          state.page = 1;
          load();
        } }, c, dir === "ascending" ? " ▲" : dir === "descending" ? " ▼" : ""));
    });
    if (writable) head.unshift(h("th", { scope: "col" }, "Select"));
    const rows = body.data.map((r) => h("tr", {}, writable ? pick(r) : null, cols.map((c, i) => h("td", {}, i === 0 ?
      h("a", { href: "/_/collections/" + encodeURIComponent(name) + "/records/" + encodeURIComponent(r.id) }, r.id) :
      c === "updated" ? when(r[c]) : cell(r[c])))));
    mount(table, h("table", { id: "records" },
      h("caption", {}, body.totalItems + " records"),
      h("thead", {}, h("tr", {}, head)), h("tbody", {}, rows)));
    status.textContent = "Page " + body.page + " of " + Math.max(1, body.totalPages) + " · " + body.totalItems + " records";
    mount(pager,
      h("button", { type: "button", disabled: body.page <= 1, onclick: () => { state.page--; load(); } }, "Previous page"),
      h("span", {}, "Page " + body.page + " of " + Math.max(1, body.totalPages)),
      h("button", { type: "button", disabled: body.page >= body.totalPages, onclick: () => { state.page++; load(); } }, "Next page"));
  };
  const form = h("form", { class: "bar", role: "search", onsubmit: (e) => { e.preventDefault(); state.filter = filter.value.trim(); state.page = 1; load(); } },
    field("Filter", filter, "The filter language, e.g. title ~ \"raft\" && views > 10"),
    h("button", { type: "submit" }, "Apply filter"));
  await load();
  return { node: h("section", {},
    h("div", { class: "bar" }, h("h1", {}, name),
      can("editor") ? h("a", { class: "button", href: "/_/collections/" + encodeURIComponent(name) + "/records/new" }, "New record") : null),
    h("p", { class: "hint" }, "History: " + (coll.history_enabled ? "on" : "off")),
    form, filterErr, status, bulk, bulkErr, table, pager,
    can("editor") && coll.type === "base" ? csvTools(name, () => load()) : null,
    can("developer") ? h("details", {}, h("summary", {}, "Rules and history"), rulesForm(coll)) : null,
    can("developer") ? h("details", { id: "schema" }, h("summary", {}, "Fields, indexes and delete"),
      coll.type === "view" ? viewQueryForm(coll) : fieldsForm(coll, () => window.dispatchEvent(new Event("svcd:navigate"))),
      coll.type === "view" ? null : indexesForm(coll), deleteForm(coll)) : null) };
}

/** input builds the control of one field for value v. */
function input(f, v) {
  const name = "rec_" + f.name;
  switch (f.type) {
    case "bool": return h("input", { type: "checkbox", name, checked: !!v });
    case "number": return h("input", { type: "number", name, step: "any", value: v ?? "" });
    case "json": return h("textarea", { name, rows: "4", spellcheck: "false", value: v === undefined || v === null ? "" : JSON.stringify(v, null, 2) });
    case "editor": return h("textarea", { name, rows: "4", value: v ?? "" });
    case "date": return h("input", { type: "datetime-local", name, step: "1", value: localTime(v) });
    case "relation": return relationPicker(f, v, name);
    case "select":
      if (f.multiple) return h("select", { name, multiple: true }, (f.values || []).map((o) => h("option", { value: o, selected: Array.isArray(v) && v.includes(o) }, o)));
      return h("select", { name }, h("option", { value: "" }, "(none)"), (f.values || []).map((o) => h("option", { value: o, selected: v === o }, o)));
    default: return h("input", { type: f.type === "email" ? "email" : f.type === "url" ? "url" : "text", name, value: v === null || v === undefined ? "" : typeof v === "object" ? JSON.stringify(v) : String(v), autocomplete: "off" });
  }
}

/** read turns a control back into the field's JSON value. */
function read(f, el) {
  switch (f.type) {
    case "bool": return el.checked;
    case "number": return el.value === "" ? null : Number(el.value);
    case "json": if (el.value.trim() === "") return null; try { return JSON.parse(el.value); } catch { return el.value; }
    case "select": case "relation": return f.multiple ? [...el.selectedOptions].map((o) => o.value) : el.value;
    case "date": return el.value === "" ? null : Math.floor(new Date(el.value).getTime() / 1000);
    case "vector": case "geoPoint": try { return JSON.parse(el.value); } catch { return el.value; }
    default: return el.value;
  }
}

/** localTime shows unix seconds as a datetime-local value (local time). */
function localTime(v) {
  if (v === null || v === undefined || v === "") return "";
  const d = new Date(Number(v) * 1000);
  if (isNaN(d)) return "";
  const p = (n) => String(n).padStart(2, "0");
  return d.getFullYear() + "-" + p(d.getMonth() + 1) + "-" + p(d.getDate()) + "T" + p(d.getHours()) + ":" + p(d.getMinutes()) + ":" + p(d.getSeconds());
}

/**
 * relationPicker is a select of the related collection's latest 100
 * records (by id, with their first text value), filled once they load;
 * the current value is always an option.
 */
function relationPicker(f, v, name) {
  const current = Array.isArray(v) ? v : v ? [v] : [];
  const opt = (id, label) => h("option", { value: id, selected: current.includes(id) }, label);
  const el = f.multiple ? h("select", { name, multiple: true }, current.map((id) => opt(id, id)))
    : h("select", { name }, h("option", { value: "" }, "(none)"), current.map((id) => opt(id, id)));
  (async () => {
    const target = await call("GET", "/api/v1/admin/collections/" + encodeURIComponent(f.collection));
    if (!target.ok) return;
    const res = await call("GET", "/api/v1/" + encodeURIComponent(target.data.name) + "?perPage=100&sort=-updated");
    if (!res.ok) return;
    const text = (target.data.fields || []).find((x) => x.type === "text" && !x.system && x.name !== "id");
    for (const r of res.body.data || []) {
      if (current.includes(r.id)) continue;
      el.append(opt(r.id, r.id + (text && r[text.name] ? " · " + r[text.name] : "")));
    }
    el.dataset.loaded = "true";
  })();
  return el;
}

const EDITABLE = (f) => !f.system && !["autodate", "file", "password"].includes(f.type) && f.name !== "id";

export async function recordPage(name, id) {
  const cres = await collection(name);
  if (!cres.ok) return { node: h("p", { class: "error", role: "alert" }, describeError(cres)) };
  const coll = cres.data;
  const isNew = id === "new";
  let rec = {};
  if (!isNew) {
    const res = await call("GET", "/api/v1/" + encodeURIComponent(name) + "/" + encodeURIComponent(id));
    if (!res.ok) return { node: h("section", {}, h("h1", {}, "Record " + id), h("p", { class: "error", role: "alert" }, describeError(res))) };
    rec = res.data;
  }
  const writable = can("editor");
  const fields = (coll.fields || []).filter(EDITABLE);
  const controls = fields.map((f) => {
    const el = input(f, rec[f.name]);
    el.disabled = !writable;
    const err = h("p", { class: "error", role: "alert" });
    el.setAttribute("aria-describedby", (err.id = "err-" + f.name));
    return { f, el, err };
  });
  const err = alertBox();
  const saved = h("p", { role: "status", class: "status" });
  const form = h("form", { class: "card", onsubmit: async (e) => {
    e.preventDefault();
    err.set(""); saved.textContent = "";
    controls.forEach((c) => { c.err.textContent = ""; });
    const body = {};
    controls.forEach((c) => { body[c.f.name] = read(c.f, c.el); });
    const path = "/api/v1/" + encodeURIComponent(name) + (isNew ? "" : "/" + encodeURIComponent(id));
    const res = await call(isNew ? "POST" : "PATCH", path, body);
    if (!res.ok) {
      const rest = {};
      for (const [k, v] of Object.entries(res.details || {})) {
        const c = controls.find((c) => c.f.name === k);
        if (c) c.err.textContent = typeof v === "string" ? v : JSON.stringify(v);
        else rest[k] = v;
      }
      err.set(describeError({ ...res, details: rest }));
      return;
    }
    if (isNew) { go("/_/collections/" + encodeURIComponent(name) + "/records/" + encodeURIComponent(res.data.id)); return; }
    saved.textContent = "Saved.";
    await loadHistory();
  } },
    controls.map((c) => h("div", {}, field(c.f.name + (c.f.required ? " (required)" : "") + " · " + c.f.type, c.el), c.err)),
    err, saved,
    writable ? h("button", { type: "submit" }, isNew ? "Create record" : "Save record") : null);

  const historyBox = h("section", { "aria-labelledby": "history-h" });
  const loadHistory = async () => {
    if (isNew) return;
    if (!coll.history_enabled) { mount(historyBox, h("h2", { id: "history-h" }, "History"), h("p", {}, "History is off for this collection.")); return; }
    const res = await call("GET", "/api/v1/" + encodeURIComponent(name) + "/" + encodeURIComponent(id) + "/history");
    if (!res.ok) { mount(historyBox, h("h2", { id: "history-h" }, "History"), h("p", { class: "error", role: "alert" }, describeError(res))); return; }
    const entries = res.data.data || [];
    mount(historyBox, h("h2", { id: "history-h" }, "History"),
      h("table", { id: "history" }, h("caption", {}, entries.length + " versions"),
        h("thead", {}, h("tr", {}, h("th", { scope: "col" }, "When"), h("th", { scope: "col" }, "Operation"),
          h("th", { scope: "col" }, "Version"), h("th", { scope: "col" }, "Actions"))),
        h("tbody", {}, entries.map((en) => h("tr", {},
          h("td", {}, when(en.at)), h("td", {}, en.op),
          h("td", {}, h("code", {}, JSON.stringify(versionOf(en.snapshot)))),
          h("td", {}, writable && en.snapshot ? confirmButton("Restore version of " + when(en.at), "Confirm restore", async () => {
            const r = await call("POST", "/api/v1/" + encodeURIComponent(name) + "/" + encodeURIComponent(id) + "/restore?at=" + encodeURIComponent(en.at));
            if (!r.ok) { err.set(describeError(r)); return; }
            go(location.pathname);
          }) : null))))));
  };
  await loadHistory();
  return { node: h("section", {},
    h("p", {}, h("a", { href: "/_/collections/" + encodeURIComponent(name) }, "← " + name)),
    h("h1", {}, isNew ? "New record in " + name : "Record " + id),
    form, !isNew && writable ? fileUploads(coll, rec) : null, historyBox) };
}

function versionOf(snap) {
  if (!snap) return null;
  const out = {};
  for (const [k, v] of Object.entries(snap)) if (!["id", "created", "updated", "collectionName", "collectionId"].includes(k)) out[k] = v;
  return out;
}
