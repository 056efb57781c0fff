// settings.js: the runtime settings (owner only, as the server decides),
// grouped by area (the key's first part: auth, smtp, cors, ...): an Area
// picker shows one group at a time, each with its own Save. A secret (a key the server
// masks) is never shown: the page never asks for ?reveal=1, its box starts
// empty and a value typed in replaces it; left empty it is not sent. Only
// changed keys are sent; the server's 422 details are shown under their
// keys.
import { call } from "./api.js";
import { h, field, alertBox, describeError, uid } from "./ui.js";

const MASK = "********";

// SECRET_SUFFIXES are the key endings the server treats as secrets
// (docs/api.md, Secrets); a value the server masks counts too.
const SECRET_SUFFIXES = [".password", ".pass", ".secret", ".client_secret", ".api_key", ".apikey", ".token",
  ".private_key", ".privatekey", ".access_key", ".accesskey", ".service_account", ".secret_access_key", ".access_key_id"];

/** isSecret reports whether key holds a secret. */
export function isSecret(key, value) {
  return value === MASK || SECRET_SUFFIXES.some((s) => key.endsWith(s));
}

export async function settingsPage() {
  const res = await call("GET", "/api/v1/admin/settings");
  if (!res.ok) return { node: h("section", {}, h("h1", {}, "Settings"), h("p", { class: "error", role: "alert" }, describeError(res))) };
  const groups = new Map();
  for (const key of Object.keys(res.data).sort()) {
    const area = key.split(".")[0];
    if (!groups.has(area)) groups.set(area, []);
    groups.get(area).push(key);
  }
  const parts = [...groups].map(([area, keys]) => group(area, keys, res.data));
  const pick = h("select", { name: "settings_area", onchange: () => show(pick.value) },
    [...groups].map(([area, keys]) => h("option", { value: area }, area + " (" + keys.length + ")")));
  const show = (area) => { for (const g of parts) g.hidden = g.dataset.area !== area; };
  const first = groups.has("app") ? "app" : [...groups.keys()][0];
  pick.value = first;
  show(first);
  return { node: h("section", {}, h("h1", {}, "Settings"),
    h("p", { class: "hint" }, "Values are strings, stored through the cluster's log. Secrets are never shown: type a new value to replace one."),
    field("Area", pick), parts, addForm()) };
}

/** group is one area's keys with its Save button. */
function group(area, keys, values) {
  const err = alertBox();
  const saved = h("p", { class: "status", role: "status" });
  const rows = keys.map((key) => row(key, values[key]));
  const form = h("form", { onsubmit: async (e) => {
    e.preventDefault();
    err.set(""); saved.textContent = "";
    const body = {};
    for (const r of rows) {
      r.clear();
      const v = r.changed();
      if (v !== undefined) body[r.key] = v;
    }
    if (Object.keys(body).length === 0) { saved.textContent = "Nothing changed."; return; }
    const res = await call("PATCH", "/api/v1/admin/settings", body);
    if (!res.ok) {
      err.set(describeError(res));
      for (const r of rows) if (res.details[r.key]) r.fail(res.details[r.key]);
      return;
    }
    for (const r of rows) r.saved(res.data[r.key]);
    saved.textContent = "Saved " + Object.keys(body).join(", ") + ".";
  } }, rows.map((r) => r.node), err, saved, h("button", { type: "submit" }, "Save " + area + " settings"));
  return h("section", { class: "card", id: "settings-" + area, "data-area": area }, h("h2", {}, area), form);
}

/** row is one setting: its labelled box, its error line, what changed. */
function row(key, value) {
  const secret = isSecret(key, value);
  const set = secret && value === MASK;
  const input = h("input", { type: secret ? "password" : "text", name: "setting:" + key, autocomplete: secret ? "new-password" : "off",
    spellcheck: "false", value: secret ? "" : value, placeholder: secret ? (set ? "set (hidden): type to replace" : "not set") : null });
  const errLine = h("small", { class: "error", id: uid("err-setting") });
  const hint = secret ? (set ? "A secret, set. It is never shown; a value typed here replaces it." : "A secret, not set.") : null;
  const f = field(key, input, hint);
  input.setAttribute("aria-describedby", [input.getAttribute("aria-describedby"), errLine.id].filter(Boolean).join(" "));
  f.append(errLine);
  let current = value;
  return {
    key, node: f,
    changed: () => secret ? (input.value === "" ? undefined : input.value) : (input.value === current ? undefined : input.value),
    clear: () => { errLine.textContent = ""; input.removeAttribute("aria-invalid"); },
    fail: (msg) => { errLine.textContent = msg; input.setAttribute("aria-invalid", "true"); },
    saved: (v) => {
      current = v;
      if (secret) { input.value = ""; input.placeholder = v === MASK ? "set (hidden): type to replace" : "not set"; } else input.value = v;
    },
  };
}

/** addForm sets a key the listing does not have yet. */
function addForm() {
  const key = h("input", { type: "text", name: "new_setting_key", autocomplete: "off", spellcheck: "false", required: true });
  const value = h("input", { type: "text", name: "new_setting_value", autocomplete: "off", spellcheck: "false" });
  const err = alertBox();
  return h("form", { class: "card", onsubmit: async (e) => {
    e.preventDefault();
    err.set("");
    const res = await call("PATCH", "/api/v1/admin/settings", { [key.value.trim()]: value.value });
    if (!res.ok) { err.set(describeError(res)); return; }
    window.dispatchEvent(new Event("svcd:navigate")); // redraw with the new key
  } }, h("h2", {}, "Set another key"), field("Key", key), field("Value", value), err,
    h("button", { type: "submit" }, "Set key"));
}
