// csv.js: a base collection's CSV export (a download) and import (a file
// sent as the raw body of POST /api/v1/admin/import/:collection, its
// progress the share of the file the server has read). Both go out with
// the bearer token and no cookies, like every other request, so the
// export is fetched and handed to the browser as a blob link rather than
// opened as a plain URL (which would carry no token).
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

// upload sends a file as the raw body of a POST with XMLHttpRequest,
// whose upload events report the bytes sent: the server reads the body as
// it imports, so the bytes it has taken are the import's progress.
function upload(path, file, onProgress) {
  return new Promise((resolve) => {
    const xhr = new XMLHttpRequest();
    xhr.open("POST", path);
    xhr.setRequestHeader("Content-Type", "text/csv");
    const s = session();
    if (s && s.token) xhr.setRequestHeader("Authorization", "Bearer " + s.token);
    xhr.upload.onprogress = (e) => { if (e.lengthComputable && e.total > 0) onProgress(e.loaded / e.total); };
    xhr.onload = () => resolve({ ok: xhr.status >= 200 && xhr.status < 300, status: xhr.status, statusText: xhr.statusText,
      json: async () => JSON.parse(xhr.responseText) });
    xhr.onerror = () => resolve({ ok: false, status: 0, statusText: "Network error", json: async () => ({}) });
    xhr.send(file);
  });
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
    progress.value = 0;
    status.textContent = "Importing " + f.name + " (" + f.size + " bytes)…";
    const res = await upload("/api/v1/admin/import/" + path, f, (part) => {
      progress.value = Math.min(part, 1);
      // All sent: the server is deciding the last rows.
      if (part >= 1) progress.removeAttribute("value");
      status.textContent = "Importing " + f.name + ": " + Math.floor(Math.min(part, 1) * 100) + "% read…";
    });
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
