// admins.js: the admins and their roles (owner only, as the server
// decides): list, add one with a role, change a role, remove one; and the
// admin sessions: list, end one, end all (force logout, the caller's own
// session included). Removals and logouts are behind a confirmation.
import { call, can, session, setSession } from "./api.js";
import { h, mount, field, alertBox, describeError, when, confirmButton } from "./ui.js";
import { go } from "./nav.js";

export const ROLES = ["viewer", "editor", "developer", "owner"];

const list = (res) => Array.isArray(res.data) ? res.data : ((res.data && res.data.data) || []);

export async function adminsPage() {
  const [admins, sessions] = await Promise.all([
    call("GET", "/api/v1/admin/admins"),
    call("GET", "/api/v1/admin/security/sessions"),
  ]);
  if (!admins.ok) return { node: h("section", {}, h("h1", {}, "Admins"), h("p", { class: "error", role: "alert" }, describeError(admins))) };
  const owner = can("owner");
  const me = (session() || {}).admin || {};
  const err = alertBox();
  const done = h("p", { class: "status", role: "status", id: "admins-status" });
  const reload = () => go("/_/admins");

  const rows = list(admins).map((a) => {
    const role = h("select", { name: "role_" + a.id, "aria-label": "Role of " + a.email }, ROLES.map((r) => h("option", { value: r }, r)));
    role.value = a.role;
    return h("tr", { "data-admin": a.id },
      h("td", {}, a.email, a.id === me.id ? " (you)" : ""), h("td", {}, owner ? role : a.role), h("td", {}, when(a.created)),
      h("td", {}, owner ? [
        h("button", { type: "button", onclick: async () => {
          err.set(""); done.textContent = "";
          const r = await call("PATCH", "/api/v1/admin/admins/" + encodeURIComponent(a.id), { role: role.value });
          if (!r.ok) { err.set(describeError(r)); role.value = a.role; return; }
          a.role = r.data.role;
          done.textContent = "Role of " + a.email + " is now " + a.role + ".";
          if (a.id === me.id) { // this tab's own role: the page follows it
            setSession({ ...session(), admin: { ...me, role: a.role } });
            window.dispatchEvent(new Event("svcd:navigate"));
          }
        } }, "Save role of " + a.email), " ",
        a.id === me.id ? null : confirmButton("Remove " + a.email, "Confirm remove", async () => {
          err.set("");
          const r = await call("DELETE", "/api/v1/admin/admins/" + encodeURIComponent(a.id));
          if (!r.ok) { err.set(describeError(r)); return; }
          reload();
        }),
      ] : null));
  });

  const email = h("input", { type: "email", name: "admin_email", required: true, autocomplete: "off" });
  const password = h("input", { type: "password", name: "admin_password", required: true, autocomplete: "new-password" });
  const newRole = h("select", { name: "admin_role" }, ROLES.map((r) => h("option", { value: r }, r)));
  newRole.value = "editor";
  const addErr = alertBox();
  const form = owner ? h("form", { class: "card", onsubmit: async (e) => {
    e.preventDefault();
    addErr.set("");
    const r = await call("POST", "/api/v1/admin/admins", { email: email.value.trim(), password: password.value, role: newRole.value });
    if (!r.ok) { addErr.set(describeError(r)); return; }
    reload();
  } },
    h("h2", {}, "Add an admin"),
    field("Email", email), field("Password", password, "Give it to them; they can change it."), field("Role", newRole),
    addErr, h("button", { type: "submit" }, "Add admin")) : null;

  return { node: h("section", {}, h("h1", {}, "Admins"),
    h("p", { class: "hint" }, "Roles: viewer < editor < developer < owner, each including the ones before it. The last owner can be neither demoted nor removed."),
    err, done,
    h("table", { id: "admins" }, h("caption", {}, list(admins).length + " admins"),
      h("thead", {}, h("tr", {}, ["Email", "Role", "Created", "Actions"].map((c) => h("th", { scope: "col" }, c)))),
      h("tbody", {}, rows)),
    form,
    sessionsPart(sessions, owner)) };
}

/** sessionsPart lists the admin sessions with "End session" and "Force logout all". */
function sessionsPart(res, owner) {
  const err = alertBox();
  if (!res.ok) return h("section", {}, h("h2", {}, "Sessions"), h("p", { class: "error", role: "alert" }, describeError(res)));
  const items = list(res);
  const mine = tokenJTI();
  return h("section", {}, h("h2", {}, "Sessions"), err,
    h("table", { id: "sessions" }, h("caption", {}, items.length + " admin sessions"),
      h("thead", {}, h("tr", {}, ["Admin", "Signed in", "Expires", "Address", "Client", "Actions"].map((c) => h("th", { scope: "col" }, c)))),
      h("tbody", {}, items.map((s) => h("tr", { "data-jti": s.jti },
        h("td", {}, s.email || s.admin_id, s.jti === mine ? " (this tab)" : ""), h("td", {}, when(s.issued_at)), h("td", {}, when(s.expires_at)),
        h("td", {}, s.ip || ""), h("td", {}, s.user_agent || ""),
        h("td", {}, owner ? confirmButton("End session " + s.jti.slice(0, 8), "Confirm end session", async () => {
          err.set("");
          const r = await call("DELETE", "/api/v1/admin/security/sessions/" + encodeURIComponent(s.jti));
          if (!r.ok) { err.set(describeError(r)); return; }
          go("/_/admins");
        }) : null))))),
    owner ? h("div", { class: "bar" },
      confirmButton("Force logout all admins", "Confirm force logout", async () => {
        const r = await call("POST", "/api/v1/admin/security/force-logout-all");
        if (!r.ok) { err.set(describeError(r)); return; }
        go("/_/admins"); // this tab's token is refused too: the page signs out
      }),
      h("span", { class: "hint" }, "Every admin token issued before now is refused, this tab's included.")) : null);
}

/** tokenJTI is the jti claim of this tab's token ("" if unreadable). */
function tokenJTI() {
  try {
    const part = (session().token || "").split(".")[1].replace(/-/g, "+").replace(/_/g, "/");
    return JSON.parse(atob(part)).jti || "";
  } catch { return ""; }
}
