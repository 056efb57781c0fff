// csv.js: a base collection's CSV export (a download) and import (a file
// sent as the raw body of POST /api/v1/admin/import/:collection). Both go
// out with the bearer token and no cookies, like every other request, so
// the export is fetched and handed to the browser as a blob link rather
// than opened as a plain URL (which would carry no token).
import { session } from "./api.js";
import { h, field, alertBox, describeError } from "./ui.js";

async function send(method, path, body) {
  const s = session();
  const headers = { "Content-Type": "text/csv" };
  if (s && s.token) headers["Authorization"] = "Bearer " + s.token;
  try {
    return await fetch(path, { method, headers, body, credentials: "omit", cache: "no-store" });
  } catch (e) {
    return { ok: false, status: 0, statusText: "Network error: " + e.message, json: async () => ({}), blob: async () => null };
  }
}

async function failure(res) {
  const json = await res.json().catch(() => ({}));
  return describeError({ status: res.status, error: json.error || res.statusText, details: json.details || {} });
}

/** csvTools is the export and import card of collection name; onImported reloads the table. */
export function csvTools(name, onImported) {
  const path = encodeURIComponent(name);
  const err = alertBox();
  const status = h("p", { role: "status", class: "status", id: "csv-status" });
  const link = h("span", {});
  const exportBtn = h("button", { type: "button", onclick: async () => {
    err.set(""); link.replaceChildren();
    status.textContent = "Exporting…";
    exportBtn.disabled = true;
    const res = await send("GET", "/api/v1/admin/export/" + path);
    exportBtn.disabled = false;
    if (!res.ok) { status.textContent = ""; err.set(await failure(res)); return; }
    const blob = await res.blob();
    const a = h("a", { href: URL.createObjectURL(blob), download: name + ".csv", id: "csv-download", "data-bytes": blob.size }, "Save " + name + ".csv");
    link.replaceChildren(a);
    status.textContent = "Exported " + blob.size + " bytes.";
    a.click();
  } }, "Export CSV");

  const file = h("input", { type: "file", name: "csv_file", accept: ".csv,text/csv" });
  const progress = h("progress", { id: "csv-progress", max: "1", value: "0", "aria-label": "Import progress" });
  const results = h("div", {});
  const importBtn = h("button", { type: "button", onclick: async () => {
    err.set(""); results.replaceChildren();
    const f = file.files && file.files[0];
    if (!f) { err.set("Choose a CSV file first."); file.focus(); return; }
    importBtn.disabled = true;
    progress.removeAttribute("value"); // indeterminate while the server works
    status.textContent = "Importing " + f.name + " (" + f.size + " bytes)…";
    const res = await send("POST", "/api/v1/admin/import/" + path, f);
    importBtn.disabled = false;
    progress.value = 1;
    if (!res.ok) { status.textContent = ""; err.set(await failure(res)); return; }
    const d = ((await res.json().catch(() => ({}))).data) || {};
    status.textContent = "Imported " + d.created + " of " + d.total + " rows; " + d.failed + " failed.";
    if ((d.errors || []).length) {
      results.replaceChildren(h("table", { id: "csv-errors" }, h("caption", {}, "Rows that failed (the header is row 1)"),
        h("thead", {}, h("tr", {}, h("th", { scope: "col" }, "Row"), h("th", { scope: "col" }, "Problem"))),
        h("tbody", {}, d.errors.map((e) => h("tr", {}, h("td", {}, String(e.row)),
          h("td", {}, Object.entries(e.details || {}).map(([k, v]) => k + ": " + v).join("; ")))))));
    }
    if (onImported) onImported();
  } }, "Import CSV");

  return h("section", { class: "card", "aria-labelledby": "csv-h" },
    h("h2", { id: "csv-h" }, "CSV"),
    h("p", { class: "hint" }, "Export: every record, by id. Import: one create per row, validated as an admin's create; files are not imported."),
    h("div", { class: "bar" }, exportBtn, link),
    field("CSV file to import", file), importBtn, progress, status, err, results);
}
