// upload.js: a record's file fields on its editor page (editors and up):
// the stored files, and an upload of one file (several for a multiple
// field) as multipart/form-data to POST /api/v1/files/:c/:id/:field. A
// single field's upload replaces its file; a multiple field's append.
// The server's refusal (type, size) is shown as it comes.
import { session } from "./api.js";
import { h, field, alertBox, describeError } from "./ui.js";

/** fileUploads returns the upload card for coll's file fields of record rec. */
export function fileUploads(coll, rec, onUploaded) {
  const files = (coll.fields || []).filter((f) => f.type === "file" && !f.system);
  if (files.length === 0) return null;
  return h("section", { class: "card", "aria-labelledby": "files-h" },
    h("h2", { id: "files-h" }, "Files"), files.map((f) => one(coll, rec, f, onUploaded)));
}

function one(coll, rec, f, onUploaded) {
  const list = h("div", { class: "stored" });
  let stored = [];
  const drawStored = (names) => {
    stored = names;
    list.replaceChildren(names.length ? h("ul", {}, names.map((n) => h("li", {}, n))) : h("p", {}, "No file."));
  };
  drawStored(rec[f.name] ? (Array.isArray(rec[f.name]) ? rec[f.name] : [rec[f.name]]) : []);
  const input = h("input", { type: "file", name: "upload_" + f.name, multiple: !!f.multiple });
  const err = alertBox();
  const status = h("p", { role: "status", class: "status" });
  const send = h("button", { type: "button", onclick: async () => {
    err.set(""); status.textContent = "";
    if (!input.files || input.files.length === 0) { err.set("Choose a file first."); input.focus(); return; }
    const form = new FormData();
    for (const file of input.files) form.append("file", file);
    const s = session();
    send.disabled = true;
    status.textContent = "Uploading…";
    let res;
    try {
      res = await fetch("/api/v1/files/" + encodeURIComponent(coll.name) + "/" + encodeURIComponent(rec.id) + "/" + encodeURIComponent(f.name), {
        method: "POST", body: form, credentials: "omit", cache: "no-store",
        headers: s && s.token ? { Authorization: "Bearer " + s.token } : {},
      });
    } catch (e) {
      send.disabled = false; status.textContent = ""; err.set("Network error: " + e.message); return;
    }
    send.disabled = false;
    const json = await res.json().catch(() => ({}));
    if (!res.ok) { status.textContent = ""; err.set(describeError({ status: res.status, error: json.error || res.statusText, details: json.details || {} })); return; }
    const got = Array.isArray(json.data) ? json.data : [json.data];
    status.textContent = "Uploaded " + got.map((x) => x.originalName + " as " + x.filename).join(", ") + ".";
    const names = got.map((x) => x.filename);
    drawStored(f.multiple ? stored.concat(names) : names);
    if (onUploaded) onUploaded();
  } }, "Upload to " + f.name);
  return h("div", { class: "upload", "data-field": f.name },
    h("h3", {}, f.name + (f.multiple ? " (several files)" : "")),
    list,
    field("File for " + f.name, input), send, status, err);
}
