// A small renderer of the node's OpenAPI document: no framework, no
// network beyond this node (the page's Content-Security-Policy allows
// only 'self').
"use strict";

function el(tag, attrs, ...kids) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k === "class") e.className = v; else e.setAttribute(k, v);
  }
  for (const k of kids) e.append(k);
  return e;
}

// resolve follows a local $ref.
function resolve(doc, s) {
  if (s && s.$ref) {
    return s.$ref.replace(/^#\//, "").split("/").reduce((o, k) => (o ? o[k] : undefined), doc);
  }
  return s;
}

// describe renders a schema as compact JSON, with $refs expanded one level.
function describe(doc, s, depth) {
  s = resolve(doc, s);
  if (!s || depth > 3) return s;
  const out = Array.isArray(s) ? [] : {};
  for (const [k, v] of Object.entries(s)) {
    out[k] = v && typeof v === "object" ? describe(doc, v, depth + 1) : v;
  }
  return out;
}

function operation(doc, path, method, op) {
  const summary = el("summary", {},
    el("span", { class: "method " + method }, method.toUpperCase()), " ", path);
  if (op.security && op.security.length && !op.security.some((r) => Object.keys(r).length === 0)) {
    summary.append(el("span", { class: "lock" }, "token required"));
  }
  const body = el("div", { class: "body" });
  if (op.summary && op.summary !== method.toUpperCase() + " " + path) body.append(el("p", {}, op.summary));
  if (op.parameters && op.parameters.length) {
    const t = el("table", {}, el("tr", {}, el("th", {}, "parameter"), el("th", {}, "in"), el("th", {}, "description")));
    for (const p of op.parameters) {
      t.append(el("tr", {}, el("td", {}, p.name + (p.required ? " *" : "")), el("td", {}, p.in), el("td", {}, p.description || (p.schema && p.schema.type) || "")));
    }
    body.append(el("h4", {}, "Parameters"), t);
  }
  if (op.requestBody) {
    const c = op.requestBody.content && op.requestBody.content["application/json"];
    body.append(el("h4", {}, "Request body"), el("pre", {}, JSON.stringify(describe(doc, c && c.schema, 0), null, 2)));
  }
  const rs = el("table", {}, el("tr", {}, el("th", {}, "status"), el("th", {}, "answer")));
  for (const [code, r] of Object.entries(op.responses || {})) {
    const c = r.content && r.content["application/json"];
    rs.append(el("tr", {}, el("td", {}, code), el("td", {}, r.description || "",
      c ? el("pre", {}, JSON.stringify(describe(doc, c.schema, 0), null, 2)) : "")));
  }
  body.append(el("h4", {}, "Responses"), rs);
  const d = el("details", { class: "op", "data-text": (method + " " + path + " " + (op.summary || "")).toLowerCase() }, summary, body);
  return d;
}

function render(doc) {
  document.getElementById("title").textContent = doc.info.title;
  document.title = doc.info.title + " reference";
  document.getElementById("version").textContent = "version " + doc.info.version + " · OpenAPI " + doc.openapi;
  const byTag = new Map();
  for (const [path, item] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(item)) {
      const tag = (op.tags && op.tags[0]) || "other";
      if (!byTag.has(tag)) byTag.set(tag, []);
      byTag.get(tag).push(operation(doc, path, method, op));
    }
  }
  const nav = document.getElementById("tags");
  const ops = document.getElementById("ops");
  nav.replaceChildren();
  ops.replaceChildren();
  [...byTag.keys()].sort().forEach((tag, i) => {
    const id = "tag-" + i;
    nav.append(el("a", { href: "#" + id }, tag));
    ops.append(el("section", { class: "tag", id: id }, el("h2", {}, tag), ...byTag.get(tag)));
  });
}

async function load() {
  const status = document.getElementById("status");
  const token = sessionStorage.getItem("svcd-docs-token");
  const headers = token ? { Authorization: "Bearer " + token } : {};
  try {
    const res = await fetch("openapi.json", { headers: headers, credentials: "same-origin" });
    if (!res.ok) throw new Error("openapi.json answered " + res.status);
    render(await res.json());
  } catch (err) {
    const p = el("p", { id: "status" }, "Could not load the document: " + err.message);
    document.getElementById("ops").replaceChildren(p);
    if (status) status.remove();
  }
}

document.addEventListener("DOMContentLoaded", () => {
  document.getElementById("auth").addEventListener("submit", (e) => {
    e.preventDefault();
    const v = document.getElementById("token").value.trim();
    if (v) sessionStorage.setItem("svcd-docs-token", v); else sessionStorage.removeItem("svcd-docs-token");
    load();
  });
  document.getElementById("search").addEventListener("input", (e) => {
    const q = e.target.value.toLowerCase();
    for (const d of document.querySelectorAll("details.op")) {
      d.hidden = q !== "" && !d.dataset.text.includes(q);
    }
  });
  load();
});
