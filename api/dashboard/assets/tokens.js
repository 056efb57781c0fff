// tokens.js: API tokens of the signed-in admin's node: mint (the secret
// is shown once, right after), list (metadata only), revoke.
import { call, can } from "./api.js";
import { h, field, alertBox, describeError, when, confirmButton } from "./ui.js";
import { go } from "./nav.js";

export async function tokensPage() {
  const res = await call("GET", "/api/v1/admin/api-tokens");
  if (!res.ok) return { node: h("section", {}, h("h1", {}, "API tokens"), h("p", { class: "error", role: "alert" }, describeError(res))) };
  const list = Array.isArray(res.data) ? res.data : (res.data.data || []);
  const err = alertBox();
  const minted = h("div", { "aria-live": "polite" });
  const owner = can("owner");
  const rows = list.map((t) => h("tr", {},
    h("td", {}, t.name), h("td", {}, (t.scopes || []).join(", ")), h("td", {}, when(t.created)),
    h("td", {}, when(t.expires_at)),
    h("td", {}, owner ? confirmButton("Revoke " + t.name, "Confirm revoke", async () => {
      const r = await call("DELETE", "/api/v1/admin/api-tokens/" + encodeURIComponent(t.id));
      if (!r.ok) { err.set(describeError(r)); return; }
      go("/_/tokens");
    }) : null)));
  const name = h("input", { type: "text", name: "token_name", required: true, autocomplete: "off" });
  const scopes = h("input", { type: "text", name: "token_scopes", value: "admin", autocomplete: "off" });
  const days = h("input", { type: "number", name: "token_days", min: "1", value: "90" });
  const form = owner ? h("form", { class: "card", onsubmit: async (e) => {
    e.preventDefault();
    err.set("");
    const r = await call("POST", "/api/v1/admin/api-tokens", {
      name: name.value.trim(),
      scopes: scopes.value.split(",").map((s) => s.trim()).filter(Boolean),
      ttl_seconds: Math.round(Number(days.value) * 86400),
    });
    if (!r.ok) { err.set(describeError(r)); return; }
    const out = h("input", { type: "text", id: "minted-token", readonly: true, value: r.data.token });
    minted.replaceChildren(h("div", { class: "card notice" },
      h("h2", {}, "Token “" + name.value.trim() + "” minted"),
      field("Token (shown this once: copy it now)", out),
      h("a", { href: "/_/tokens" }, "Done")));
    out.focus(); out.select();
  } },
    h("h2", {}, "Mint a token"),
    field("Name", name), field("Scopes (comma-separated)", scopes, "admin, read, write, collection:<name>:<read|write|*>"),
    field("Lifetime in days", days), h("button", { type: "submit" }, "Mint token")) : null;
  return { node: h("section", {}, h("h1", {}, "API tokens"), minted, err,
    list.length === 0 ? h("p", {}, "No API tokens.") :
      h("table", { id: "tokens" }, h("caption", {}, list.length + " tokens"),
        h("thead", {}, h("tr", {}, ["Name", "Scopes", "Created", "Expires", "Actions"].map((c) => h("th", { scope: "col" }, c)))),
        h("tbody", {}, rows)),
    form) };
}
