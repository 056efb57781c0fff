// schema.js: an existing collection's schema, for developers: its fields
// (rename keeps the field's id so values are kept, remove drops the
// column, add makes a new one; the whole list goes in one PATCH and the
// server's 422 details are shown as they come), its managed indexes
// (list, create, drop) and deleting the collection. Every destructive
// step is behind a confirmation that says what is lost.
import { call } from "./api.js";
import { h, mount, field, alertBox, describeError, confirmButton, uid } from "./ui.js";
import { go } from "./nav.js";

const TYPES = ["text", "editor", "number", "bool", "email", "url", "date", "autodate", "select", "json", "relation", "file", "geoPoint", "vector", "password"];

/** fieldsForm edits the field list of coll; onSaved gets the new collection. */
export function fieldsForm(coll, onSaved) {
  const err = alertBox();
  const saved = h("p", { role: "status", class: "status" });
  const rows = h("tbody", {});
  const existing = (coll.fields || []).filter((f) => !f.system);
  for (const f of existing) rows.append(existingRow(f));
  const newName = h("input", { type: "text", name: "new_field_name", autocomplete: "off" });
  const newType = h("select", { name: "new_field_type" }, TYPES.map((t) => h("option", { value: t }, t)));
  const newExtra = h("input", { type: "text", name: "new_field_extra", autocomplete: "off" });
  // The relation target picker: the collections' names as suggestions.
  const targets = h("datalist", { id: uid("targets") });
  newExtra.setAttribute("list", targets.id);
  call("GET", "/api/v1/admin/collections").then((res) => {
    if (!res.ok) return;
    const list = Array.isArray(res.data) ? res.data : (res.data.data || []);
    targets.replaceChildren(...list.filter((c) => c.type !== "view").map((c) => h("option", { value: c.name })));
  });
  const extraField = field("Values, related collection or dimensions", newExtra, "select: values, comma-separated; relation: the collection's name; vector: its dimensions");
  const add = h("button", { type: "button", onclick: () => {
    const name = newName.value.trim();
    if (!name) { err.set("A new field needs a name."); newName.focus(); return; }
    const spec = { name, type: newType.value };
    if (spec.type === "select") spec.values = newExtra.value.split(",").map((v) => v.trim()).filter(Boolean);
    if (spec.type === "relation") spec.collection = newExtra.value.trim();
    if (spec.type === "vector") spec.dimensions = Number(newExtra.value) || 3;
    rows.append(existingRow(spec, true));
    newName.value = ""; newExtra.value = ""; err.set("");
  } }, "Add to list");

  const body = () => ({ fields: [...rows.children].filter((r) => !r.removed()).map((r) => r.spec()) });
  const save = async () => {
    err.set(""); saved.textContent = "";
    const res = await call("PATCH", "/api/v1/admin/collections/" + encodeURIComponent(coll.name), body());
    if (!res.ok) { err.set(describeError(res)); return; }
    saved.textContent = "Fields saved.";
    if (onSaved) onSaved(res.data);
  };
  // Removing a field drops its values: the save asks first and names them.
  const saveBox = h("div", { class: "bar" });
  const drawSave = () => {
    const gone = [...rows.children].filter((r) => r.removed() && r.orig).map((r) => r.orig);
    if (gone.length === 0) mount(saveBox, h("button", { type: "button", onclick: save }, "Save fields"));
    else mount(saveBox, h("span", {}, "Saving drops the values of " + gone.join(", ") + ". "),
      confirmButton("Save fields", "Confirm save", save));
  };
  rows.addEventListener("change", drawSave);
  rows.addEventListener("click", () => setTimeout(drawSave));
  drawSave();
  return h("section", { class: "card", "aria-labelledby": "fields-h" },
    h("h2", { id: "fields-h" }, "Fields of " + coll.name),
    h("p", { class: "hint" }, "Renaming keeps the values; removing a field drops them; a type change converts every value (one the new type refuses becomes null)."),
    h("table", { id: "schema-fields" }, h("caption", {}, "Fields"),
      h("thead", {}, h("tr", {}, h("th", { scope: "col" }, "Name"), h("th", { scope: "col" }, "Type"),
        h("th", { scope: "col" }, "Required"), h("th", { scope: "col" }, "Remove"))),
      rows),
    h("fieldset", {}, h("legend", {}, "New field"), field("New field name", newName), field("New field type", newType), extraField, targets, add),
    err, saved, saveBox);
}

/** existingRow is one field in the list: its name editable, its id kept. */
function existingRow(f, fresh) {
  const name = h("input", { type: "text", name: "schema_field_name", value: f.name, autocomplete: "off", "aria-label": "Name of field " + f.name });
  const type = h("select", { name: "schema_field_type", "aria-label": "Type of field " + f.name },
    TYPES.concat(TYPES.includes(f.type) ? [] : [f.type]).map((t) => h("option", { value: t }, t)));
  type.value = f.type;
  const required = h("input", { type: "checkbox", name: "schema_field_required", checked: !!f.required, "aria-label": "Field " + f.name + " required" });
  const remove = h("input", { type: "checkbox", name: "schema_field_remove", "aria-label": "Remove field " + f.name });
  const row = h("tr", { class: fresh ? "new" : null },
    h("td", {}, name), h("td", {}, type), h("td", {}, required), h("td", {}, remove));
  row.orig = fresh ? null : f.name;
  row.removed = () => remove.checked;
  row.spec = () => {
    const out = { ...f, name: name.value.trim(), type: type.value, required: required.checked };
    if (out.type !== f.type) { delete out.values; delete out.collection; delete out.dimensions; }
    return out;
  };
  return row;
}

/** indexesForm lists coll's managed indexes, creates and drops them. */
export function indexesForm(coll) {
  const base = "/api/v1/admin/collections/" + encodeURIComponent(coll.name) + "/indexes";
  const list = h("div", {});
  const err = alertBox();
  const fieldSel = h("select", { name: "index_field" },
    (coll.fields || []).map((f) => h("option", { value: f.name }, f.name)));
  const unique = h("input", { type: "checkbox", name: "index_unique" });
  const load = async () => {
    const res = await call("GET", base);
    if (!res.ok) { err.set(describeError(res)); return; }
    const idx = res.data || [];
    if (idx.length === 0) { mount(list, h("p", {}, "No managed indexes.")); return; }
    mount(list, h("table", { id: "indexes" }, h("caption", {}, idx.length + " indexes"),
      h("thead", {}, h("tr", {}, h("th", { scope: "col" }, "Name"), h("th", { scope: "col" }, "Field"),
        h("th", { scope: "col" }, "Unique"), h("th", { scope: "col" }, "Drop"))),
      h("tbody", {}, idx.map((i) => h("tr", {}, h("td", {}, i.name), h("td", {}, i.field), h("td", {}, i.unique ? "yes" : "no"),
        h("td", {}, confirmButton("Drop " + i.name, "Confirm drop", async () => {
          const res = await call("DELETE", base + "/" + encodeURIComponent(i.name));
          if (!res.ok) err.set(describeError(res)); else await load();
        })))))));
  };
  load();
  return h("section", { class: "card", "aria-labelledby": "indexes-h" },
    h("h2", { id: "indexes-h" }, "Indexes"), list,
    field("Index field", fieldSel), field("Unique index", unique),
    h("button", { type: "button", onclick: async () => {
      err.set("");
      const res = await call("POST", base, { field: fieldSel.value, unique: unique.checked });
      if (!res.ok) { err.set(describeError(res)); return; }
      await load();
    } }, "Create index"), err);
}

/** deleteForm deletes coll behind a confirmation; a 409 names what holds it. */
export function deleteForm(coll) {
  const err = alertBox();
  return h("section", { class: "card", "aria-labelledby": "delete-h" },
    h("h2", { id: "delete-h" }, "Delete " + coll.name),
    h("p", {}, "Deleting drops the collection, its table and every record in it."),
    confirmButton("Delete collection", "Confirm delete " + coll.name, async () => {
      err.set("");
      const res = await call("DELETE", "/api/v1/admin/collections/" + encodeURIComponent(coll.name));
      if (!res.ok) { err.set(describeError(res)); return; }
      go("/_/");
    }), err);
}

/** viewQueryForm edits a view's query (PATCH); the server's refusal shows under it. */
export function viewQueryForm(coll, onSaved) {
  const query = h("textarea", { name: "edit_view_query", rows: "4", spellcheck: "false", autocomplete: "off", value: coll.view_query || "" });
  const err = alertBox();
  const saved = h("p", { role: "status", class: "status" });
  return h("form", { class: "card", "aria-labelledby": "query-h", onsubmit: async (e) => {
    e.preventDefault();
    err.set(""); saved.textContent = "";
    const res = await call("PATCH", "/api/v1/admin/collections/" + encodeURIComponent(coll.name), { view_query: query.value });
    if (!res.ok) { err.set(describeError(res)); return; }
    saved.textContent = "Query saved; fields: " + (res.data.fields || []).map((f) => f.name + " (" + f.type + ")").join(", ") + ".";
    if (onSaved) onSaved(res.data);
  } },
    h("h2", { id: "query-h" }, "Query of " + coll.name),
    field("View query", query, "One SELECT returning an id column; the fields are inferred from its columns."),
    err, saved, h("button", { type: "submit" }, "Save query"));
}
