// ui.js: a tiny DOM builder. Text always goes in as text nodes, never as
// HTML, so a record's content cannot inject markup; no inline styles or
// handlers in markup, so the page runs under a strict CSP.

/**
 * h builds an element: h("button", {type: "button", onclick: f}, "Save").
 * Attributes starting with "on" are listeners; true/false toggle boolean
 * attributes; children are nodes, strings or (nested) arrays.
 */
export function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith("on") && typeof v === "function") el.addEventListener(k.slice(2), v);
    else if (k === "value") el.value = v;
    else if (k === "checked") el.checked = !!v;
    else el.setAttribute(k, v === true ? "" : String(v));
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const c of children) {
    if (c === undefined || c === null || c === false) continue;
    if (Array.isArray(c)) append(el, c);
    else el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
}

/** mount replaces the children of el. */
export function mount(el, ...children) {
  el.replaceChildren();
  append(el, children);
}

let seq = 0;
/** uid returns a fresh element id with the given prefix. */
export function uid(prefix) { return prefix + "-" + (++seq); }

/** field is a labelled control: a <label> for it and the control itself. */
export function field(label, control, hint) {
  if (!control.id) control.id = uid("f");
  const parts = [h("label", { for: control.id }, label), control];
  if (hint) {
    const hid = uid("hint");
    control.setAttribute("aria-describedby", hid);
    parts.push(h("small", { id: hid, class: "hint" }, hint));
  }
  return h("div", { class: "field" }, parts);
}

/** alert is a live region for errors (empty until set). */
export function alertBox() {
  const el = h("p", { class: "error", role: "alert" });
  el.set = (msg) => { el.textContent = msg || ""; };
  return el;
}

/** when formats Unix seconds or milliseconds as a local date and time. */
export function when(v) {
  if (!v) return "";
  const ms = v > 1e12 ? v : v * 1000;
  return new Date(ms).toLocaleString();
}

/** describeError renders an API failure: its message and its details. */
export function describeError(res) {
  const d = res.details || {};
  const extra = Object.entries(d).map(([k, v]) => k + ": " + (typeof v === "string" ? v : JSON.stringify(v)));
  return res.status + " " + res.error + (extra.length ? " — " + extra.join("; ") : "");
}

/**
 * confirmButton is a button that asks before acting: the first press
 * shows "Confirm …" and "Cancel" buttons; only "Confirm" runs action.
 */
export function confirmButton(label, confirmLabel, action) {
  const box = h("span", { class: "confirm" });
  const start = h("button", { type: "button", onclick: () => {
    const yes = h("button", { type: "button", class: "danger", onclick: async () => {
      yes.disabled = true;
      await action();
      reset();
    } }, confirmLabel);
    const no = h("button", { type: "button", onclick: () => reset() }, "Cancel");
    mount(box, yes, " ", no);
    yes.focus();
  } }, label);
  const reset = () => { mount(box, start); };
  reset();
  return box;
}
