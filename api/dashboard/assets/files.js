// files.js: the stored files (editors and up, as the server decides),
// loaded on demand by app.js. /_/files shows the storage driver, the
// files counted per collection and file field (GET /api/v1/admin/files),
// and one collection's files, 20 a page (GET /api/v1/admin/files/NAME):
// a thumbnail for images, Open (through a fresh file token: the page
// holds no cookie, so a plain link would not be signed in) and Delete
// behind a confirmation. The collection, page and sort live in the URL.
import { call, can } from "./api.js";
import { h, mount, field, alertBox, describeError, when, confirmButton } from "./ui.js";
import { go } from "./nav.js";
import { pager } from "./logs.js";

const PER_PAGE = 20;
const SORTS = [["-created", "Newest first"], ["created", "Oldest first"], ["-size", "Largest first"], ["size", "Smallest first"], ["filename", "Stored name"]];
const THUMBS = ["image/png", "image/jpeg", "image/gif", "image/webp"];

/** size is n bytes in a few characters (1.5 KB). */
export function size(n) {
  if (n < 1024) return n + " B";
  const units = ["KB", "MB", "GB", "TB"];
  let v = n / 1024, i = 0;
  while (v >= 1024 && i < units.length - 1) { v /= 1024; i++; }
  return (v < 10 ? v.toFixed(1) : Math.round(v)) + " " + units[i];
}

const fileURL = (f) => "/api/v1/files/" + encodeURIComponent(f.collection) + "/" + encodeURIComponent(f.recordId) + "/" +
  encodeURIComponent(f.field) + "/" + encodeURIComponent(f.filename);

/** tokenURL asks for a file token for f and answers its download URL (query appended), or throws. */
async function tokenURL(f, query) {
  const r = await call("POST", fileURL(f) + "/token");
  if (!r.ok) throw new Error(describeError(r));
  return "/api/v1/files/" + encodeURIComponent(f.filename) + "?token=" + encodeURIComponent(r.data.token) + (query || "");
}

export async function filesPage() {
  const res = await call("GET", "/api/v1/admin/files");
  if (!res.ok) return { node: h("section", {}, h("h1", {}, "Files"), h("p", { class: "error", role: "alert" }, describeError(res))) };
  const st = res.data;
  const q = new URLSearchParams(location.search);
  const colls = [...new Set(st.fields.map((f) => f.collection))];
  const coll = q.get("collection") || colls[0] || "";
  const sort = q.get("sort") || "-created";
  const page = Math.max(1, Number(q.get("page")) || 1);
  const to = (c, s, p) => go("/_/files?" + new URLSearchParams({ collection: c, sort: s, page: String(p) }));

  const s = st.storage;
  const facts = h("dl", { class: "facts", id: "storage" },
    h("dt", {}, "Storage driver"), h("dd", {}, s.driver + (s.driver === "s3" ? " (new uploads go to bucket " + (s.bucket || "not set") + ")" : " (this node's data directory)")),
    s.endpoint ? [h("dt", {}, "Endpoint"), h("dd", {}, s.endpoint)] : null,
    s.region && s.driver === "s3" ? [h("dt", {}, "Region"), h("dd", {}, s.region)] : null,
    h("dt", {}, "Redirected downloads"), h("dd", {}, s.redirectDownloads ? "on" : "off"),
    h("dt", {}, "Stored"), h("dd", { id: "files-total" }, st.files + " files, " + size(st.bytes) + ", in " + st.records + (st.records === 1 ? " record" : " records")));

  const fields = st.fields.length === 0 ? h("p", {}, "No stored files.") :
    h("table", { id: "file-fields" }, h("caption", {}, "Files per collection and field"),
      h("thead", {}, h("tr", {}, ["Collection", "Field", "Records", "Files", "Size"].map((c) => h("th", { scope: "col" }, c)))),
      h("tbody", {}, st.fields.map((f) => h("tr", { "data-field": f.collection + "/" + f.field },
        h("td", {}, h("a", { href: "/_/files?collection=" + encodeURIComponent(f.collection) }, f.collection)),
        h("td", {}, f.field), h("td", {}, String(f.records)), h("td", {}, String(f.files)),
        h("td", { "data-bytes": f.bytes }, size(f.bytes))))));

  const node = h("section", {}, h("h1", {}, "Files"), facts, h("div", { class: "table-wrap" }, fields));
  if (coll) node.append(await collectionFiles(coll, sort, page, colls, to));
  return { node };
}

/** collectionFiles is the card of coll's files, one page of them. */
async function collectionFiles(coll, sort, page, colls, to) {
  const err = alertBox();
  const which = h("select", { name: "files_collection", onchange: () => to(which.value, order.value, 1) },
    (colls.includes(coll) ? colls : [coll, ...colls]).map((c) => h("option", { value: c, selected: c === coll }, c)));
  which.value = coll;
  const order = h("select", { name: "files_sort", onchange: () => to(which.value, order.value, 1) },
    SORTS.map(([v, label]) => h("option", { value: v }, label)));
  order.value = sort;
  const r = await call("GET", "/api/v1/admin/files/" + encodeURIComponent(coll) + "?" + new URLSearchParams({ page: String(page), perPage: String(PER_PAGE), sort }));
  const card = h("section", { class: "card", "aria-labelledby": "coll-files-h" },
    h("h2", { id: "coll-files-h" }, "Files of " + coll),
    h("div", { class: "bar" }, field("Collection", which), field("Order", order)), err);
  if (!r.ok) { err.set(describeError(r)); return card; }
  const body = r.body;
  const outcome = h("p", { class: "status", role: "status", id: "file-outcome" });
  const rows = body.data.map((f) => fileRow(f, err, outcome, () => to(coll, sort, body.data.length === 1 && page > 1 ? page - 1 : page)));
  const pages = h("div", { class: "bar pager" });
  pager(pages, body, "files", (n) => to(coll, sort, n));
  card.append(outcome, body.data.length === 0 ? h("p", {}, "No files in " + coll + ".") :
    h("div", { class: "table-wrap" }, h("table", { id: "files" }, h("caption", {}, body.totalItems + " files of " + coll),
      h("thead", {}, h("tr", {}, ["Preview", "File", "Record", "Field", "Size", "Type", "Uploaded", "Actions"].map((c) => h("th", { scope: "col" }, c)))),
      h("tbody", {}, rows))), pages);
  return card;
}

/** fileRow is one stored file with its thumbnail, Open and Delete. */
function fileRow(f, err, outcome, reload) {
  const preview = h("td", { class: "thumb" });
  if (THUMBS.includes(f.mimeType)) {
    tokenURL(f, "&thumb=100x100").then((src) => mount(preview, h("img", { src, alt: "Thumbnail of " + f.originalName, width: "50", height: "50" })))
      .catch(() => mount(preview, "—"));
  }
  const open = h("button", { type: "button", onclick: async () => {
    err.set("");
    open.disabled = true;
    try {
      const url = await tokenURL(f, "");
      window.open(url, "_blank", "noopener");
      mount(outcome, "Opened " + f.filename + " through a file token; ", h("a", { href: url, target: "_blank", rel: "noopener", class: "file-link" }, "open it again"), " (the token expires soon).");
    } catch (e) {
      err.set(e.message);
    }
    open.disabled = false;
  } }, "Open " + f.filename);
  return h("tr", { "data-file": f.filename },
    preview,
    h("td", {}, f.originalName, h("br"), h("small", { class: "hint" }, f.filename + (f.protected ? " · protected" : ""))),
    h("td", {}, h("a", { href: "/_/collections/" + encodeURIComponent(f.collection) + "/records/" + encodeURIComponent(f.recordId) }, f.recordId)),
    h("td", {}, f.field), h("td", { "data-bytes": f.size }, size(f.size)), h("td", {}, f.mimeType), h("td", {}, when(f.created)),
    h("td", {}, open, " ", can("editor") ? deleteButton(f, err, outcome, reload) : null));
}

function deleteButton(f, err, outcome, reload) {
  return confirmButton("Delete " + f.filename, "Confirm delete", async () => {
    err.set("");
    const r = await call("DELETE", fileURL(f));
    if (!r.ok) { err.set(describeError(r)); return; }
    mount(outcome, "Deleted " + f.filename + ".");
    reload();
  });
}
