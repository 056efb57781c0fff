// users.js: the users of auth collections. /_/users lists the auth
// collections; /_/users/NAME pages through NAME's users (the records API;
// a search by email is the filter email ~ "text"). For an editor or above
// each user's row shows its security state (GET
// /admin/users/NAME/ID/security: TOTP on or off, passkeys, linked OAuth2
// providers, the time before which its tokens are refused) and offers
// "Disable MFA" (clears the user's TOTP and recovery codes), "End all
// sessions" (every token of the user issued until now is refused) and
// "Impersonate" (a one-hour user token, shown this once), each behind a
// confirmation.
import { call, can } from "./api.js";
import { h, mount, field, alertBox, describeError, when, confirmButton } from "./ui.js";

const PER_PAGE = 20;

/** authCollections lists the auth collections, or an error answer. */
async function authCollections() {
  const res = await call("GET", "/api/v1/admin/collections");
  if (!res.ok) return res;
  const list = Array.isArray(res.data) ? res.data : (res.data.data || []);
  return { ok: true, list: list.filter((c) => c.type === "auth") };
}

export async function usersIndexPage() {
  const res = await authCollections();
  if (!res.ok) return { node: h("section", {}, h("h1", {}, "Users"), h("p", { class: "error", role: "alert" }, describeError(res))) };
  return { node: h("section", {}, h("h1", {}, "Users"),
    res.list.length === 0 ? h("p", {}, "No auth collections: create one of type auth to have users.") :
      h("ul", { id: "auth-collections" }, res.list.map((c) =>
        h("li", {}, h("a", { href: "/_/users/" + encodeURIComponent(c.name) }, c.name))))) };
}

export async function usersPage(name) {
  const heading = h("h1", {}, "Users of " + name);
  const status = h("p", { class: "status", role: "status" });
  const table = h("div", { class: "table-wrap" });
  const pager = h("div", { class: "bar" });
  const err = alertBox();
  const outcome = h("div", { "aria-live": "polite" });
  const editor = can("editor");
  const state = { page: 1 };

  const userURL = (u) => "/api/v1/admin/users/" + encodeURIComponent(name) + "/" + encodeURIComponent(u.id);
  const actions = (u) => editor ? [
    confirmButton("Disable MFA for " + u.email, "Confirm disable MFA", async () => {
      err.set("");
      const r = await call("POST", userURL(u) + "/disable-mfa");
      if (!r.ok) { err.set(describeError(r)); return; }
      mount(outcome, h("p", { class: "status", id: "mfa-outcome" },
        "MFA of " + u.email + " is " + (r.data.enabled ? "on" : "off") + ": TOTP and recovery codes cleared."));
      await load();
    }), " ",
    confirmButton("End all sessions of " + u.email, "Confirm end all sessions", async () => {
      err.set("");
      const r = await call("POST", userURL(u) + "/logout");
      if (!r.ok) { err.set(describeError(r)); return; }
      mount(outcome, h("p", { class: "status", id: "logout-outcome" },
        "Every session of " + u.email + " signed in until " + when(r.data.sessions_valid_after) + " is ended; the user signs in again."));
      await load();
    }), " ",
    confirmButton("Impersonate " + u.email, "Confirm impersonate", async () => {
      err.set("");
      const r = await call("POST", "/api/v1/admin/impersonate/" + encodeURIComponent(name) + "/" + encodeURIComponent(u.id));
      if (!r.ok) { err.set(describeError(r)); return; }
      const out = h("input", { type: "text", id: "impersonation-token", readonly: true, value: r.data.token });
      mount(outcome, h("div", { class: "card notice" },
        h("h2", {}, "Signed in as " + u.email),
        h("p", {}, "A user token for one hour; the user's rules apply to it. It is shown this once and ends if your admin account is removed or demoted."),
        field("User token (shown this once: copy it now)", out),
        h("button", { type: "button", onclick: () => mount(outcome) }, "Done")));
      out.focus(); out.select();
    }),
  ] : null;

  const search = h("input", { type: "search", name: "user_search", autocomplete: "off", spellcheck: "false" });
  const load = async () => {
    err.set("");
    const q = new URLSearchParams({ page: String(state.page), perPage: String(PER_PAGE), sort: "email" });
    const term = search.value.trim();
    if (term) q.set("filter", "email ~ " + JSON.stringify(term)); // a JSON string is a valid filter literal
    const res = await call("GET", "/api/v1/" + encodeURIComponent(name) + "?" + q.toString());
    if (!res.ok) { err.set(describeError(res)); mount(table); mount(pager); return; }
    const fe = res.headers.get("X-Svc-Filter-Error");
    if (fe) err.set("Search not applied: " + fe);
    const body = Array.isArray(res.body.data) ? res.body : res.body.data; // the records list shape
    const users = body.data || [];
    // The security state of each user on the page (editors: a viewer may
    // not read it, and the server says so).
    const sec = editor ? await Promise.all(users.map(async (u) => {
      const r = await call("GET", userURL(u) + "/security");
      return r.ok ? r.data : null;
    })) : [];
    const secCells = (i) => {
      if (!editor) return [];
      const st = sec[i];
      if (!st) return [h("td", { colspan: "4" }, "unavailable")];
      return [h("td", { class: "totp" }, st.totp_enabled ? "on (" + st.recovery_codes_left + " recovery codes left)" : "off"),
        h("td", { class: "passkeys" }, String(st.passkeys)),
        h("td", { class: "oauth2" }, st.oauth2.length ? st.oauth2.join(", ") : "none"),
        h("td", { class: "sessions-after" }, st.sessions_valid_after ? when(st.sessions_valid_after) : "any")];
    };
    const cols = ["Email", "Verified", "Guest", "Created", "Id"].concat(editor ? ["TOTP", "Passkeys", "OAuth2", "Sessions valid after"] : [], ["Actions"]);
    status.textContent = "Page " + body.page + " of " + Math.max(1, body.totalPages) + " · " + body.totalItems + " users";
    mount(table, users.length === 0 ? h("p", {}, "No users.") :
      h("table", { id: "users" }, h("caption", {}, users.length + " users on this page"),
        h("thead", {}, h("tr", {}, cols.map((c) => h("th", { scope: "col" }, c)))),
        h("tbody", {}, users.map((u, i) => h("tr", { "data-user": u.id },
          h("td", {}, u.email), h("td", {}, u.email_verified ? "yes" : "no"), h("td", {}, u.is_anonymous ? "yes" : "no"),
          h("td", {}, when(u.created)),
          h("td", {}, h("a", { href: "/_/collections/" + encodeURIComponent(name) + "/records/" + encodeURIComponent(u.id) }, u.id)),
          secCells(i), h("td", {}, actions(u)))))));
    mount(pager,
      h("button", { type: "button", disabled: body.page <= 1, onclick: () => { state.page--; load(); } }, "Previous page"),
      h("span", {}, "Page " + body.page + " of " + Math.max(1, body.totalPages)),
      h("button", { type: "button", disabled: body.page >= body.totalPages, onclick: () => { state.page++; load(); } }, "Next page"));
  };
  await load();
  return { node: h("section", {}, heading,
    h("p", {}, h("a", { href: "/_/users" }, "All auth collections")),
    editor ? h("p", { class: "hint" }, "Disable MFA clears the user's TOTP and recovery codes. End all sessions refuses every token the user was issued until now, on every node, and closes its realtime streams; \"Sessions valid after\" shows that time (\"any\": never ended). Impersonate gives a one-hour token of the user.") : null,
    h("form", { class: "bar", role: "search", onsubmit: (e) => { e.preventDefault(); state.page = 1; load(); } },
      field("Email contains", search), h("button", { type: "submit" }, "Find users")),
    outcome, err, status, table, pager) };
}
