// api.js: the dashboard's only way to the server. The admin token lives
// in sessionStorage (this tab only, gone when it closes) and is sent as a
// bearer token; requests carry no cookies (credentials "omit"), so
// nothing ambient exists for a cross-site request to use.

const KEY = "svcd.dashboard.session";

/** The signed-in session {token, admin} or null. */
export function session() {
  try { return JSON.parse(sessionStorage.getItem(KEY) || "null"); } catch { return null; }
}

export function setSession(s) {
  if (s) sessionStorage.setItem(KEY, JSON.stringify(s));
  else sessionStorage.removeItem(KEY);
}

/** Roles in order: each includes the ones before it. */
const ROLES = ["viewer", "editor", "developer", "owner"];

/** can reports whether the signed-in admin's role reaches role. */
export function can(role) {
  const s = session();
  if (!s || !s.admin) return false;
  return ROLES.indexOf(s.admin.role) >= ROLES.indexOf(role);
}

/**
 * call sends one request and resolves to {ok, status, data, error,
 * details, headers, body}; it never throws for an HTTP error.
 */
export async function call(method, path, body) {
  const headers = {};
  const s = session();
  if (s && s.token) headers["Authorization"] = "Bearer " + s.token;
  if (body !== undefined) headers["Content-Type"] = "application/json";
  let res;
  try {
    res = await fetch(path, {
      method, headers, credentials: "omit", cache: "no-store",
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  } catch (e) {
    return { ok: false, status: 0, error: "Network error: " + e.message, details: {}, headers: new Headers() };
  }
  let json = null;
  const text = await res.text();
  if (text) { try { json = JSON.parse(text); } catch { json = null; } }
  const out = { ok: res.ok, status: res.status, headers: res.headers, body: json };
  if (res.ok) {
    out.data = json && "data" in json ? json.data : json;
  } else {
    out.error = (json && json.error) || res.statusText || "Request failed";
    out.details = (json && json.details) || {};
    if (res.status === 401 && s) {
      setSession(null);
      window.dispatchEvent(new Event("svcd:signedout"));
    }
  }
  return out;
}
