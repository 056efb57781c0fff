// app.js: the shell. It signs the admin in (or runs the first-run setup),
// draws the navigation and routes /_/... paths to the pages; links are
// plain <a href> intercepted for history navigation, so every page has a
// URL that survives a reload.
import { call, session, setSession, can } from "./api.js";
import { h, mount, field, alertBox } from "./ui.js";
import { go } from "./nav.js";
import { collectionsPage, newCollectionPage } from "./collections.js";
import { recordsPage, recordPage } from "./records.js";
import { tokensPage } from "./tokens.js";
import { clusterPage } from "./cluster.js";
import { usersIndexPage, usersPage } from "./users.js";
import { adminsPage } from "./admins.js";
import { settingsPage } from "./settings.js";
import { logsPage } from "./logs.js";
import { auditPage } from "./audit.js";
import { webhooksPage, webhookPage } from "./webhooks.js";
import { flagsPage, flagPage } from "./flags.js";
import { sqlPage } from "./sql.js";
import { jobsPage } from "./jobs.js";

const main = document.getElementById("main");
const top = document.getElementById("top");

/** Pages: a path pattern and the function that draws it. */
const routes = [
  [/^\/_\/?$/, () => collectionsPage()],
  [/^\/_\/collections\/new$/, () => newCollectionPage()],
  [/^\/_\/collections\/([^/]+)$/, (m) => recordsPage(decodeURIComponent(m[1]))],
  [/^\/_\/collections\/([^/]+)\/records\/([^/]+)$/, (m) => recordPage(decodeURIComponent(m[1]), decodeURIComponent(m[2]))],
  [/^\/_\/tokens$/, () => tokensPage()],
  [/^\/_\/members$/, () => clusterPage()],
  [/^\/_\/users$/, () => usersIndexPage()],
  [/^\/_\/users\/([^/]+)$/, (m) => usersPage(decodeURIComponent(m[1]))],
  [/^\/_\/admins$/, () => adminsPage()],
  [/^\/_\/settings$/, () => settingsPage()],
  [/^\/_\/logs$/, () => logsPage()],
  [/^\/_\/audit$/, () => auditPage()],
  [/^\/_\/webhooks$/, () => webhooksPage()],
  [/^\/_\/webhooks\/([^/]+)$/, (m) => webhookPage(decodeURIComponent(m[1]))],
  [/^\/_\/flags$/, () => flagsPage()],
  [/^\/_\/flags\/([^/]+)$/, (m) => flagPage(decodeURIComponent(m[1]))],
  [/^\/_\/sql$/, () => sqlPage()],
  [/^\/_\/jobs$/, () => jobsPage()],
  // Loaded on demand: the module is fetched the first time the page opens.
  [/^\/_\/files$/, async () => (await import("./files.js")).filesPage()],
];

// A page may leave a cleanup (a polling timer); it runs on the next route.
let cleanup = null;


// renders counts render calls: a page that finishes loading after the
// admin has moved on is dropped (and its cleanup run) instead of drawn.
let renders = 0;

async function render() {
  const seq = ++renders;
  if (cleanup) { cleanup(); cleanup = null; }
  const s = session();
  if (!s) { drawNav(null); return signIn(); }
  drawNav(s);
  const path = location.pathname;
  for (const [re, page] of routes) {
    const m = path.match(re);
    if (!m) continue;
    mount(main, h("p", {}, "Loading…"));
    let out;
    try {
      out = await page(m);
    } catch (e) {
      out = { node: h("section", {}, h("h1", {}, "Something went wrong"), h("p", { class: "error", role: "alert" }, String(e))) };
    }
    if (seq !== renders) { if (out.cleanup) out.cleanup(); return; }
    mount(main, out.node);
    cleanup = out.cleanup || null;
    const heading = main.querySelector("h1");
    document.title = (heading ? heading.textContent + " · " : "") + "svcd dashboard";
    return;
  }
  mount(main, h("h1", {}, "Not found"), h("p", {}, "No dashboard page at " + path + "."),
    h("a", { href: "/_/" }, "Collections"));
}

function drawNav(s) {
  if (!s) { mount(top, h("strong", { class: "brand" }, "svcd")); return; }
  const link = (href, text) => h("a", { href, "aria-current": isCurrent(href) ? "page" : null }, text);
  mount(top,
    h("strong", { class: "brand" }, "svcd"),
    h("nav", { "aria-label": "Main" },
      link("/_/", "Collections"), link("/_/tokens", "API tokens"), link("/_/members", "Cluster"),
      link("/_/users", "Users"), can("owner") ? link("/_/admins", "Admins") : null,
      can("owner") ? link("/_/settings", "Settings") : null, link("/_/logs", "Logs"), link("/_/audit", "Audit log"),
      can("developer") ? [link("/_/webhooks", "Webhooks"), link("/_/flags", "Flags")] : null,
      can("developer") ? link("/_/sql", "SQL") : null,
      can("developer") ? link("/_/jobs", "Jobs") : null,
      can("editor") ? link("/_/files", "Files") : null),
    h("span", { class: "who" },
      h("span", { id: "who" }, s.admin.email), " ",
      h("span", { class: "role", id: "role", title: "your role" }, s.admin.role), " ",
      h("button", { type: "button", onclick: () => { setSession(null); go("/_/"); } }, "Sign out")));
}

function isCurrent(href) {
  const p = location.pathname;
  if (href === "/_/") return p === "/_/" || p.startsWith("/_/collections");
  return p.startsWith(href);
}

/** signIn draws the sign-in form, or the first admin's setup form. */
async function signIn() {
  const st = await call("GET", "/api/v1/admin/setup/status");
  const setup = st.ok && st.data.needs_setup;
  const email = h("input", { type: "email", name: "email", autocomplete: "username", required: true });
  const password = h("input", { type: "password", name: "password", autocomplete: setup ? "new-password" : "current-password", required: true });
  const key = h("input", { type: "password", name: "setup_key", autocomplete: "off" });
  const err = alertBox();
  const form = h("form", { class: "card narrow", onsubmit: async (e) => {
    e.preventDefault();
    err.set("");
    const path = setup ? "/api/v1/admin/setup" : "/api/v1/admin/auth/login";
    const res = await callWithKey(path, { email: email.value, password: password.value }, setup && key.value);
    if (!res.ok) { err.set(res.error + detailsText(res)); return; }
    setSession({ token: res.data.token, admin: res.data.admin });
    render();
  } },
    h("h1", {}, setup ? "Create the first admin" : "Sign in"),
    setup ? h("p", {}, "This node has no admin yet: the account you create here is its owner.") : null,
    field("Email", email),
    field("Password", password, setup ? "At least the length the server requires." : null),
    setup && st.data.setup_key_required ? field("Setup key", key) : null,
    err,
    h("button", { type: "submit" }, setup ? "Create admin" : "Sign in"));
  mount(main, form);
  document.title = (setup ? "Setup" : "Sign in") + " · svcd dashboard";
  email.focus();
}

async function callWithKey(path, body, key) {
  if (!key) return call("POST", path, body);
  const res = await fetch(path, {
    method: "POST", credentials: "omit",
    headers: { "Content-Type": "application/json", "X-Setup-Key": key },
    body: JSON.stringify(body),
  });
  const json = await res.json().catch(() => ({}));
  return res.ok ? { ok: true, data: json.data } : { ok: false, status: res.status, error: json.error, details: json.details || {} };
}

function detailsText(res) {
  const d = Object.entries(res.details || {});
  return d.length ? ": " + d.map(([k, v]) => k + " " + v).join("; ") : "";
}

document.addEventListener("click", (e) => {
  const a = e.target.closest("a[href]");
  if (!a || e.defaultPrevented || e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey) return;
  const url = new URL(a.href, location.href);
  if (url.origin !== location.origin || !url.pathname.startsWith("/_/") || url.pathname.startsWith("/_/assets/")) return;
  e.preventDefault();
  go(url.pathname + url.search);
});
window.addEventListener("popstate", render);
window.addEventListener("svcd:navigate", render);
window.addEventListener("svcd:signedout", render);
window.svcdGo = go; // for tests and the console: navigate without a reload
render();
