// flags.js: feature flags (developer and above, reads included, as the
// server decides). /_/flags lists them with an on/off switch each and
// creates one; /_/flags/KEY edits one flag's definition as JSON (type,
// default value, variations, rules, enabled), with the server's 422
// details listed by member path, evaluates it for a context with the
// reason, and deletes it.
import { call, can } from "./api.js";
import { h, mount, field, alertBox, describeError, confirmButton } from "./ui.js";
import { go } from "./nav.js";

const list = (res) => Array.isArray(res.data) ? res.data : ((res.data && res.data.data) || []);
const flagURL = (key) => "/api/v1/admin/flags/" + encodeURIComponent(key);
const TYPES = ["bool", "string", "number", "json"];

export async function flagsPage() {
  const res = await call("GET", "/api/v1/admin/flags");
  if (!res.ok) return { node: h("section", {}, h("h1", {}, "Feature flags"), h("p", { class: "error", role: "alert" }, describeError(res))) };
  const flags = list(res);
  const write = can("developer");
  const err = alertBox();
  const rows = flags.map((f) => {
    const toggle = h("input", { type: "checkbox", name: "flag_enabled:" + f.key, checked: f.enabled, disabled: !write,
      "aria-label": "Enabled: " + f.key, onchange: async () => {
        err.set("");
        const r = await call("PATCH", flagURL(f.key), { enabled: toggle.checked });
        if (!r.ok) { err.set(describeError(r)); toggle.checked = !toggle.checked; return; }
        f.enabled = r.data.enabled;
        state.textContent = f.enabled ? "on" : "off";
      } });
    const state = h("span", { class: "status" }, f.enabled ? "on" : "off");
    return h("tr", { "data-flag": f.key },
      h("td", {}, h("a", { href: "/_/flags/" + encodeURIComponent(f.key) }, f.key)), h("td", {}, f.type),
      h("td", {}, toggle, " ", state), h("td", {}, h("code", {}, JSON.stringify(f.default_value))),
      h("td", {}, String((f.rules || []).length)));
  });
  const key = h("input", { type: "text", name: "flag_key", required: true, autocomplete: "off", spellcheck: "false" });
  const type = h("select", { name: "flag_type" }, TYPES.map((t) => h("option", { value: t }, t)));
  const addErr = alertBox();
  const form = write ? h("form", { class: "card", onsubmit: async (e) => {
    e.preventDefault();
    addErr.set("");
    const k = key.value.trim();
    const r = await call("POST", "/api/v1/admin/flags", { key: k, type: type.value, enabled: false });
    if (!r.ok) { addErr.set(describeError(r)); return; }
    go("/_/flags/" + encodeURIComponent(k));
  } }, h("h2", {}, "New flag"), field("Key", key, "Letters, digits, _ . - ; it cannot be changed later."), field("Type", type),
    addErr, h("button", { type: "submit" }, "Create flag")) : null;
  return { node: h("section", {}, h("h1", {}, "Feature flags"), err,
    flags.length === 0 ? h("p", {}, "No flags.") :
      h("table", { id: "flags" }, h("caption", {}, flags.length + " flags"),
        h("thead", {}, h("tr", {}, ["Key", "Type", "Enabled", "Default", "Rules"].map((c) => h("th", { scope: "col" }, c)))),
        h("tbody", {}, rows)),
    form) };
}

/** definition is the editable part of a flag. */
function definition(f) {
  return { type: f.type, enabled: f.enabled, default_value: f.default_value, variations: f.variations, rules: f.rules };
}

export async function flagPage(key) {
  const res = await call("GET", flagURL(key));
  if (!res.ok) return { node: h("section", {}, h("h1", {}, "Flag " + key), h("p", { class: "error", role: "alert" }, describeError(res))) };
  const write = can("developer");
  const text = h("textarea", { name: "flag_definition", rows: "14", cols: "80", spellcheck: "false", disabled: !write,
    value: JSON.stringify(definition(res.data), null, 2) });
  const err = alertBox();
  const problems = h("ul", { class: "error", id: "flag-problems" });
  const saved = h("p", { class: "status", role: "status" });
  const form = h("form", { class: "card", onsubmit: async (e) => {
    e.preventDefault();
    err.set(""); saved.textContent = ""; mount(problems);
    let body;
    try { body = JSON.parse(text.value); } catch (x) { err.set("Not JSON: " + x.message); text.setAttribute("aria-invalid", "true"); return; }
    const r = await call("PATCH", flagURL(key), body);
    if (!r.ok) {
      err.set(r.status + " " + r.error);
      mount(problems, Object.entries(r.details || {}).map(([k, v]) => h("li", {}, h("code", {}, k), ": " + v)));
      text.setAttribute("aria-invalid", "true");
      return;
    }
    text.removeAttribute("aria-invalid");
    text.value = JSON.stringify(definition(r.data), null, 2);
    saved.textContent = "Saved.";
  } }, field("Definition (JSON)", text, "Rules: {id, when, rollout, prerequisites, variation}; see docs/flags.md."),
    err, problems, saved, write ? h("button", { type: "submit" }, "Save flag") : null);
  err.id = "flag-error";
  text.setAttribute("aria-describedby", [text.getAttribute("aria-describedby"), err.id, problems.id].join(" "));

  const ctx = h("textarea", { name: "flag_context", rows: "3", cols: "60", spellcheck: "false", value: "{}" });
  const evalOut = h("p", { class: "status", role: "status", id: "flag-evaluation" });
  const evalErr = alertBox();
  const evalForm = write ? h("form", { class: "card", onsubmit: async (e) => {
    e.preventDefault();
    evalErr.set(""); evalOut.textContent = "";
    let context;
    try { context = JSON.parse(ctx.value); } catch (x) { evalErr.set("Not JSON: " + x.message); return; }
    const r = await call("POST", flagURL(key) + "/evaluate", { context });
    if (!r.ok) { evalErr.set(describeError(r)); return; }
    const d = r.data;
    evalOut.textContent = "Value " + JSON.stringify(d.value) + " · " + d.reason + (d.rule_id ? " (rule " + d.rule_id + ", variation " + d.variation + ")" : "");
  } }, h("h2", {}, "Evaluate"), field("Context (JSON)", ctx, "{\"country\": \"FR\"}"), evalErr, evalOut,
    h("button", { type: "submit" }, "Evaluate flag")) : null;

  const delErr = alertBox();
  return { node: h("section", {}, h("h1", {}, "Flag " + key),
    h("p", {}, h("a", { href: "/_/flags" }, "All flags")),
    form, evalForm,
    write ? h("div", { class: "bar" }, confirmButton("Delete flag " + key, "Confirm delete", async () => {
      delErr.set("");
      const r = await call("DELETE", flagURL(key));
      if (!r.ok) { delErr.set(describeError(r)); return; }
      go("/_/flags");
    }), delErr) : null) };
}
